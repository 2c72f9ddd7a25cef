//! Cursor: hooks in `~/.cursor/hooks.json`, MCP servers in `~/.cursor/mcp.json`. Built to
//! Cursor's documented contract and not yet run against the real client. The contract lidguard
//! relies on, with its sources: `README.md` here.

mod dialect;
pub mod install;

use crate::agent::{Agent, Env, HookFile, Location, McpFile, Snippet, home_dir};
use crate::install::mcp::JsonEntry;
use lidguard_core::provider::Provider;

pub use dialect::{parse, render, render_continuation};

/// Cursor's entry.
pub static AGENT: Agent = Agent {
    mcp: Some(&MCP),
    snippets: &[Snippet::hook_file("hooks-json", "Cursor's user hooks.json")],
    ..Agent::new(
        Provider::Cursor,
        ["cursor-hook", "cursor-hooks"],
        dialect::DIALECT,
        is_owner,
        &HOOKS,
    )
};

static HOOKS: HookFile = HookFile::json(|var| located(var, "hooks.json"), &install::SPEC);

static MCP: McpFile = McpFile::json(|var| located(var, "mcp.json"), mcp_entry);

/// `name` in `~/.cursor` (hooks docs: user hooks; MCP docs: global servers).
fn located(var: Env<'_>, name: &str) -> Option<Location> {
    Some(Location::inside(home_dir(var)?.join(".cursor"), name))
}

/// lidguard's server entry: a stdio server with `command` and `args`, as Cursor's MCP docs
/// show them (<https://cursor.com/docs/context/mcp>).
pub fn mcp_entry(exe: &str) -> JsonEntry {
    JsonEntry::command_server("Cursor mcp.json", exe)
}

/// The Cursor app (`cursor`, `Cursor`, its helpers) or its agent CLI (`cursor-agent`, also
/// installed as `agent`).
pub(crate) fn is_owner(name: &str, cmdline: &str) -> bool {
    let (name, cmd, wrapper) = crate::evidence::parts(name, cmdline);
    name.contains("cursor")
        || (name == "agent" && cmd.contains("cursor"))
        || (wrapper && cmd.contains("cursor-agent"))
}
