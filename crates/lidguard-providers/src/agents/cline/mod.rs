//! Cline CLI: hook files named after their events (`TaskStart`, `PreToolUse`, …) in Cline's
//! hooks directory, each run with the program its first line names; MCP servers in
//! `cline_mcp_settings.json`. The contract lidguard relies on, with its sources: `README.md`
//! here.

pub mod dialect;
pub mod install;

use std::path::PathBuf;

use crate::agent::{
    Agent, Dialect, Env, HookEdit, HookFile, Location, McpFile, Snippet, SnippetText, config_dir,
    set_dir,
};
use crate::install::mcp::JsonEntry;
use lidguard_core::provider::Provider;

/// Cline CLI's entry.
pub static AGENT: Agent = Agent {
    // Cline passes the hook file's path, which names the event.
    event_on_command_line: true,
    mcp: Some(&MCP),
    snippets: &[Snippet {
        format: "hook-file",
        help: "lidguard's hook file, the same for every event (named after the event)",
        text: SnippetText::Own(|cmd, _| {
            (install::FILES.text)(cmd, "TaskStart").unwrap_or_default()
        }),
    }],
    ..Agent::new(
        Provider::Cline,
        ["cline-hook", "cline-hooks"],
        Dialect::new(
            dialect::parse,
            dialect::render,
            dialect::render_continuation,
        ),
        is_owner,
        &HOOKS,
    )
};

static HOOKS: HookFile = HookFile {
    // Cline gives every hook file it waits for the same 120 s; lidguard's files carry none.
    timeouts: false,
    ..HookFile::new(
        hooks_location,
        HookEdit::files(&install::FILES),
        &[
            "TaskStart",
            "PreToolUse",
            "PostToolUse",
            "TaskComplete",
            "TaskError",
            "SessionShutdown",
        ],
    )
};

static MCP: McpFile = McpFile::json(mcp_location, mcp_entry);

/// Cline's config directory: `CLINE_DIR`, else `~/.cline` (3.0.65 `@cline/shared` storage).
fn config_root(var: Env<'_>) -> Option<PathBuf> {
    config_dir(var, "CLINE_DIR", ".cline")
}

/// The hooks directory `hooks` in the config directory (the global one Cline searches besides
/// `~/Documents/Cline/Hooks` and a workspace's `.clinerules/hooks` and `.cline/hooks`).
fn hooks_location(var: Env<'_>) -> Option<Location> {
    config_root(var).map(|root| Location::inside(root, "hooks"))
}

/// `CLINE_MCP_SETTINGS_PATH`, else `settings/cline_mcp_settings.json` in the data directory
/// (`CLINE_DATA_DIR`, else `data` in the config directory).
fn mcp_location(var: Env<'_>) -> Option<Location> {
    let root = config_root(var)?;
    let file = match set_dir(var, "CLINE_MCP_SETTINGS_PATH") {
        Some(file) => file,
        None => set_dir(var, "CLINE_DATA_DIR")
            .unwrap_or_else(|| root.join("data"))
            .join("settings")
            .join("cline_mcp_settings.json"),
    };
    Some(Location { file, root })
}

/// lidguard's server entry in `mcpServers`: `command` and `args`.
pub fn mcp_entry(exe: &str) -> JsonEntry {
    JsonEntry::command_server("Cline MCP settings", exe)
}

/// `cline` (the npm launcher or its native binary, which also runs the background hub that
/// runs later tasks: `cline --cline-hub-daemon`).
fn is_owner(name: &str, cmdline: &str) -> bool {
    let (name, cmd, wrapper) = crate::evidence::parts(name, cmdline);
    name == "cline" || (wrapper && cmd.contains("cline"))
}
