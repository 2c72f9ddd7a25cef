//! GitHub Copilot CLI: hooks in a file of lidguard's own under `hooks/`, MCP servers in
//! `mcp-config.json`, transcripts under `session-state/`. The contract lidguard relies on,
//! with its sources: `README.md` here.

mod dialect;
pub mod install;
mod transcript;

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::agent::{
    Agent, AgentSetting, Env, HookFile, Location, McpFile, RelatedHooks, Snippet, config_dir,
};
use crate::install::mcp::JsonEntry;
use lidguard_core::provider::Provider;

pub use dialect::{parse, render, render_continuation};

/// GitHub Copilot CLI's entry.
pub static AGENT: Agent = Agent {
    event_on_command_line: true,
    mcp: Some(&MCP),
    transcript: Some(&transcript::RULES),
    snippets: &[Snippet::hook_file(
        "config-json",
        "lidguard's hook file in Copilot's hooks folder",
    )],
    keep_awake: Some(AgentSetting {
        file: |location| location.root.join("settings.json"),
        read: install::copilot_keep_awake,
    }),
    ..Agent::new(
        Provider::Copilot,
        ["copilot-hook", "copilot-hooks"],
        dialect::DIALECT,
        is_owner,
        &HOOKS,
    )
};

static HOOKS: HookFile = HookFile {
    related: Some(RelatedHooks {
        files: related_files,
        scan: install::scan_other_file,
    }),
    ..HookFile::json(hooks_location, &install::SPEC)
};

static MCP: McpFile = McpFile::json(mcp_location, mcp_entry);

/// `hooks/lidguard-copilot-cli.json` in `$COPILOT_HOME`, else `~/.copilot`
/// (`copilot help environment`, 1.0.102).
fn hooks_location(var: Env<'_>) -> Option<Location> {
    config_dir(var, "COPILOT_HOME", ".copilot")
        .map(|root| Location::inside(root, Path::new("hooks").join(install::FILE_NAME)))
}

/// `mcp-config.json` in the same directory (`copilot mcp --help`, 1.0.102).
fn mcp_location(var: Env<'_>) -> Option<Location> {
    config_dir(var, "COPILOT_HOME", ".copilot")
        .map(|root| Location::inside(root, "mcp-config.json"))
}

/// lidguard's server entry as `copilot mcp add lidguard -- <exe> mcp-server` writes it
/// (Copilot CLI 1.0.102).
pub fn mcp_entry(exe: &str) -> JsonEntry {
    JsonEntry::server(
        "Copilot CLI mcp-config.json",
        "mcpServers",
        vec![
            ("type", Value::from("local")),
            ("command", Value::from(exe)),
            ("args", Value::from(vec!["mcp-server"])),
            ("tools", Value::from(vec!["*"])),
        ],
    )
}

/// The other files whose hooks Copilot runs next to lidguard's (the hooks page of
/// <https://docs.github.com/en/copilot> for Copilot CLI; seen with 1.0.102): the rest of its
/// `hooks/` folder, its `settings.json` (inline hooks), and the current repository's
/// `.github/hooks/*.json` and `.github/copilot/settings{,.local}.json`.
fn related_files(location: &Location, cwd: Option<&Path>) -> Vec<PathBuf> {
    let json_files = |dir: &Path| -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        files
    };
    let mut files: Vec<PathBuf> = json_files(&location.root.join("hooks"))
        .into_iter()
        .filter(|f| *f != location.file)
        .collect();
    let settings = location.root.join("settings.json");
    if settings.is_file() {
        files.push(settings);
    }
    if let Some(repo) = cwd.and_then(|dir| dir.ancestors().find(|d| d.join(".git").exists())) {
        files.extend(json_files(&repo.join(".github/hooks")));
        for name in ["settings.json", "settings.local.json"] {
            let f = repo.join(".github/copilot").join(name);
            if f.is_file() {
                files.push(f);
            }
        }
    }
    files
}

/// `copilot`, `gh copilot`, or a node wrapper running the npm package.
fn is_owner(name: &str, cmdline: &str) -> bool {
    let (name, cmd, wrapper) = crate::evidence::parts(name, cmdline);
    name.contains("copilot")
        || (name == "gh" && cmd.contains("copilot"))
        || (wrapper && cmd.contains("copilot"))
}
