//! Gemini CLI: hooks and MCP servers in `settings.json` (`$GEMINI_CLI_HOME/.gemini`, else
//! `~/.gemini`), transcripts under `tmp/<project>/chats/`. The contract lidguard relies on,
//! with its sources: `README.md` here.

mod dialect;
pub mod install;

use crate::agent::{Agent, Env, HookFile, Location, McpFile, Snippet, home_dir, set_dir};
use crate::install::mcp::JsonEntry;
use lidguard_core::provider::Provider;

pub use dialect::{parse, render, render_continuation};

/// Gemini CLI's entry.
pub static AGENT: Agent = Agent {
    mcp: Some(&MCP),
    snippets: &[Snippet::hook_file(
        "settings-json",
        "The hooks in Gemini CLI's settings.json",
    )],
    ..Agent::new(
        Provider::Gemini,
        ["gemini-hook", "gemini-hooks"],
        dialect::DIALECT,
        is_owner,
        &HOOKS,
    )
};

static HOOKS: HookFile = HookFile::json(settings_location, &install::SPEC);

static MCP: McpFile = McpFile::json(settings_location, mcp_entry);

/// `.gemini/settings.json` under `$GEMINI_CLI_HOME`, else under the home directory (the
/// configuration reference's `GEMINI_CLI_HOME`; the user settings file, which holds both
/// `hooks` and `mcpServers`).
fn settings_location(var: Env<'_>) -> Option<Location> {
    let root = set_dir(var, "GEMINI_CLI_HOME").or_else(|| home_dir(var))?;
    Some(Location::inside(root.join(".gemini"), "settings.json"))
}

/// lidguard's server entry as `gemini mcp add -s user lidguard <exe> mcp-server` writes it
/// (Gemini CLI 0.61.0): `command` and `args`.
pub fn mcp_entry(exe: &str) -> JsonEntry {
    JsonEntry::command_server("Gemini CLI settings.json", exe)
}

/// `gemini` (the npm shim), or node running its bundle (`…/gemini-cli/bundle/gemini.js`,
/// which relaunches itself once as a child).
fn is_owner(name: &str, cmdline: &str) -> bool {
    let (name, cmd, wrapper) = crate::evidence::parts(name, cmdline);
    name.contains("gemini") || (wrapper && cmd.contains("gemini"))
}
