//! Cursor: hooks in `~/.cursor/hooks.json`, MCP servers in `~/.cursor/mcp.json`. Built to
//! Cursor's documented contract and not yet run against the real client. The contract lidguard
//! relies on, with its sources: `README.md` here.

mod dialect;
pub mod install;

use serde_json::Value;

use crate::agent::{Agent, Env, HookFile, Location, McpEntry, McpFile, Snippet, home_dir};
use crate::install::mcp::JsonEntry;
use lidguard_core::provider::Provider;

pub use dialect::{parse, render, render_continuation};

/// Cursor's entry.
pub static AGENT: Agent = Agent {
    provider: Provider::Cursor,
    hook_command: "cursor-hook",
    hook_help: "Cursor hook: reads the hook payload on stdin (installed by `hook-install`)",
    event_on_command_line: false,
    parse: dialect::parse,
    render: dialect::render,
    render_continuation: dialect::render_continuation,
    is_owner,
    hooks: &HOOKS,
    mcp: Some(&MCP),
    transcript: None,
    snippet_command: "cursor-hooks",
    snippets: &[Snippet {
        format: "hooks-json",
        help: "Cursor's user hooks.json",
        print: install::snippet,
    }],
    keep_awake: None,
    permission_mode: None,
};

static HOOKS: HookFile = HookFile {
    locate: |var| located(var, "hooks.json"),
    install: install::install,
    remove: install::remove,
    status: install::status,
    timeouts: true,
    evidence: install::REQUIRED_EVENTS,
    related: None,
    trust: None,
};

static MCP: McpFile = McpFile {
    locate: |var| located(var, "mcp.json"),
    entry: McpEntry::Json(mcp_entry),
};

/// `name` in `~/.cursor` (hooks docs: user hooks; MCP docs: global servers).
fn located(var: Env<'_>, name: &str) -> Option<Location> {
    let root = home_dir(var)?.join(".cursor");
    Some(Location {
        file: root.join(name),
        root,
    })
}

/// lidguard's server entry: a stdio server with `command` and `args`, as Cursor's MCP docs
/// show them (<https://cursor.com/docs/context/mcp>).
pub fn mcp_entry(exe: &str) -> JsonEntry {
    JsonEntry::server(
        "Cursor mcp.json",
        "mcpServers",
        vec![
            ("command", Value::from(exe)),
            ("args", Value::from(vec!["mcp-server"])),
        ],
    )
}

/// The Cursor app (`cursor`, `Cursor`, its helpers) or its agent CLI (`cursor-agent`, also
/// installed as `agent`).
fn is_owner(name: &str, cmdline: &str) -> bool {
    let (name, cmd, wrapper) = crate::owner::parts(name, cmdline);
    name.contains("cursor")
        || (name == "agent" && cmd.contains("cursor"))
        || (wrapper && cmd.contains("cursor-agent"))
}
