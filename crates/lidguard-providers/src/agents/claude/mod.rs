//! Claude Code: hooks in `settings.json`, MCP servers in `.claude.json`, transcripts under
//! `projects/`. The contract lidguard relies on, with its sources: `README.md` here.

pub(crate) mod dialect;
pub mod install;
mod transcript;

use serde_json::Value;

use crate::agent::{
    Agent, AgentSetting, Env, HookEdit, HookFile, Location, McpEntry, McpFile, Snippet, config_dir,
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
    permission_mode: Some(AgentSetting {
        file: |location| location.file.clone(),
        read: install::permission_mode,
    }),
    needs: Some(
        "Claude Code 2.1.139 or newer: lidguard's entries are in exec form (`command` + `args`, \
         no shell), which an older Claude runs without their arguments, so lidguard would hear \
         nothing; `claude --version` shows yours",
    ),
    ..Agent::new(
        Provider::Claude,
        ["claude-hook", "claude-hooks"],
        dialect::DIALECT,
        is_owner,
        &HOOKS,
    )
};

static HOOKS: HookFile = HookFile::new(
    hooks_location,
    HookEdit::json(&install::SPEC),
    install::REQUIRED_EVENTS,
);

static MCP: McpFile = McpFile {
    locate: mcp_location,
    entry: McpEntry::Json(mcp_entry),
};

/// `settings.json` in `$CLAUDE_CONFIG_DIR`, else `~/.claude`
/// (<https://docs.anthropic.com/en/docs/claude-code/settings>).
fn hooks_location(var: Env<'_>) -> Option<Location> {
    let root = config_dir(var, "CLAUDE_CONFIG_DIR", ".claude")?;
    Some(Location {
        file: root.join("settings.json"),
        root,
    })
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
    let (name, cmd, wrapper) = crate::owner::parts(name, cmdline);
    name.contains("claude") || (wrapper && cmd.contains("claude"))
}
