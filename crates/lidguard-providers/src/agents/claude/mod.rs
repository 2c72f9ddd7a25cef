//! Claude Code: hooks in `settings.json`, MCP servers in `.claude.json`, transcripts under
//! `projects/`. The contract lidguard relies on, with its sources: `README.md` here.

mod cron;
pub(crate) mod dialect;
pub mod install;
mod transcript;

use serde_json::Value;

use crate::agent::{
    Agent, AgentSetting, Env, HookFile, Location, McpFile, OtherRunner, Snippet, config_dir,
    home_dir, set_dir,
};
use crate::install::mcp::JsonEntry;
use lidguard_core::provider::Provider;

pub use dialect::{parse, render, render_continuation};

/// Claude Code's entry.
pub static AGENT: Agent = Agent {
    mcp: Some(&MCP),
    transcript: Some(&transcript::RULES),
    snippets: &[Snippet::hook_file(
        "settings-json",
        "The hooks in Claude Code's settings.json",
    )],
    keep_awake: Some(AgentSetting {
        file: |location| location.file.clone(),
        read: |_| macos_caffeinate(),
    }),
    permission_mode: Some(AgentSetting {
        file: |location| location.file.clone(),
        read: install::permission_mode,
    }),
    needs: Some(
        "Claude Code 2.1.139 or newer: lidguard's entries are in exec form (`command` + `args`, \
         no shell), which an older Claude runs without their arguments, so lidguard would hear \
         nothing; `claude --version` shows yours",
    ),
    runs_elsewhere: Some(cloud_session),
    also_run_by: &[
        // <https://cursor.com/docs/reference/third-party-hooks>: Cursor runs the hooks in
        // `~/.claude/settings.json` when third-party configs are on.
        OtherRunner {
            name: "cursor",
            is: super::cursor::is_owner,
        },
        // <https://docs.devin.ai/cli/extensibility/hooks/overview>: Devin CLI (`devin`) runs
        // Claude Code's hooks "automatically".
        OtherRunner {
            name: "devin",
            is: |name, cmdline| {
                let (name, cmd, wrapper) = crate::evidence::parts(name, cmdline);
                name == "devin" || (wrapper && cmd.contains("devin"))
            },
        },
    ],
    ..Agent::new(
        Provider::Claude,
        ["claude-hook", "claude-hooks"],
        dialect::DIALECT,
        is_owner,
        &HOOKS,
    )
};

static HOOKS: HookFile = HookFile::json(hooks_location, &install::SPEC);

/// Claude Code keeps a Mac from idle sleep by itself while it works, always: it runs
/// `caffeinate -i -t <seconds>` and restarts it while it holds (2.1.332's bundle: its sleep
/// inhibitor spawns nothing on other platforms and has no setting).
fn macos_caffeinate() -> Option<String> {
    cfg!(target_os = "macos").then(|| "caffeinate -i while it works, on macOS".to_owned())
}

static MCP: McpFile = McpFile::json(mcp_location, mcp_entry);

/// A cloud session (Claude Code on the web, `claude --cloud`, the apps' cloud sessions) runs
/// in an environment Anthropic hosts, which Claude marks with `CLAUDE_CODE_REMOTE` set and no
/// `CLAUDE_CODE_ENVIRONMENT_KIND`; a self-hosted runner (`byoc`) is a machine of the user's, and
/// its work runs where its hooks run. (Claude Code 2.1.332: its hosted test is `REMOTE` true and
/// `ENVIRONMENT_KIND` unset; `README.md` here.)
fn cloud_session(var: Env<'_>) -> Option<&'static str> {
    let truthy = |name| {
        var(name).is_some_and(|v| {
            let v = v.to_string_lossy().trim().to_ascii_lowercase();
            matches!(v.as_str(), "1" | "true" | "yes" | "on")
        })
    };
    let kind = var("CLAUDE_CODE_ENVIRONMENT_KIND").filter(|v| !v.is_empty());
    (truthy("CLAUDE_CODE_REMOTE") && kind.is_none()).then_some(
        "a Claude cloud session (CLAUDE_CODE_REMOTE): its work runs in Anthropic's environment, \
         not on this machine, so lidguard keeps nothing awake for it",
    )
}

/// `settings.json` in `$CLAUDE_CONFIG_DIR`, else `~/.claude`
/// (<https://docs.anthropic.com/en/docs/claude-code/settings>).
fn hooks_location(var: Env<'_>) -> Option<Location> {
    config_dir(var, "CLAUDE_CONFIG_DIR", ".claude")
        .map(|root| Location::inside(root, "settings.json"))
}

/// User-scope MCP servers: `.claude.json` in the home directory, or in `CLAUDE_CONFIG_DIR`
/// when set (observed: `claude mcp add --scope user` 2.1.332 writes there).
fn mcp_location(var: Env<'_>) -> Option<Location> {
    if let Some(dir) = set_dir(var, "CLAUDE_CONFIG_DIR") {
        return Some(Location {
            file: dir.join(".claude.json"),
            root: dir,
        });
    }
    let home = home_dir(var)?;
    Some(Location {
        root: home.join(".claude"),
        file: home.join(".claude.json"),
    })
}

/// lidguard's server entry as `claude mcp add --scope user lidguard -- <exe> mcp-server`
/// writes it (Claude Code 2.1.332).
pub fn mcp_entry(exe: &str) -> JsonEntry {
    JsonEntry::server(
        "Claude Code user config (.claude.json)",
        "mcpServers",
        vec![
            ("type", Value::from("stdio")),
            ("command", Value::from(exe)),
            ("args", Value::from(vec!["mcp-server"])),
        ],
    )
}

/// The `claude` executable, or the node/bun wrapper running the npm package.
fn is_owner(name: &str, cmdline: &str) -> bool {
    let (name, cmd, wrapper) = crate::evidence::parts(name, cmdline);
    name.contains("claude") || (wrapper && cmd.contains("claude"))
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::cloud_session;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.into())
    }

    #[test]
    fn only_a_session_in_anthropics_environment_runs_elsewhere() {
        let hosted = env(&[("CLAUDE_CODE_REMOTE", "true")]);
        assert!(cloud_session(&hosted).is_some());
        assert!(cloud_session(&env(&[("CLAUDE_CODE_REMOTE", "1")])).is_some());
        // A self-hosted runner is the user's machine: its work runs where the hook runs.
        let byoc = env(&[
            ("CLAUDE_CODE_REMOTE", "true"),
            ("CLAUDE_CODE_ENVIRONMENT_KIND", "byoc"),
        ]);
        assert!(cloud_session(&byoc).is_none());
        assert!(cloud_session(&env(&[])).is_none());
        assert!(cloud_session(&env(&[("CLAUDE_CODE_REMOTE", "")])).is_none());
        assert!(cloud_session(&env(&[("CLAUDE_CODE_REMOTE", "false")])).is_none());
        // Remote Control drives a session on this machine from the web: not marked remote.
        assert!(cloud_session(&env(&[("CLAUDE_CODE_ENTRYPOINT", "cli")])).is_none());
    }
}
