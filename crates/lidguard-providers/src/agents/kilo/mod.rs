//! Kilo CLI: OpenCode's fork, with the same plugin API. lidguard's plugin (OpenCode's
//! `lidguard.js`, running `kilo-hook`) goes to Kilo's own config directory; MCP servers in
//! `kilo.json`. The contract lidguard relies on, with its sources: `README.md` here.

use std::path::PathBuf;

use crate::agent::{
    Agent, Dialect, Env, HookEdit, HookFile, Location, McpFile, OwnEdit, Snippet, SnippetText,
};
use crate::agents::opencode;
use crate::agents::opencode::install::Plugin;
use crate::{HookInput, ParseError};
use lidguard_core::event::AgentEvent;
use lidguard_core::provider::Provider;

/// Kilo CLI's entry.
pub static AGENT: Agent = Agent {
    event_on_command_line: true,
    mcp: Some(&MCP),
    snippets: &[Snippet {
        format: "plugin-js",
        help: "lidguard's Kilo CLI plugin",
        text: SnippetText::Own(|cmd, _| PLUGIN.text(cmd)),
    }],
    ..Agent::new(
        Provider::Kilo,
        ["kilo-hook", "kilo-hooks"],
        Dialect::new(parse, opencode::render, opencode::render_continuation),
        is_owner,
        &HOOKS,
    )
};

/// lidguard's plugin, as for OpenCode, running `kilo-hook`.
static PLUGIN: Plugin = Plugin {
    provider: "kilo",
    subcommand: "kilo-hook",
};

/// Parses one forwarded plugin call (OpenCode's plugin dialect).
pub fn parse(input: &HookInput<'_>) -> Result<Vec<AgentEvent>, ParseError> {
    opencode::dialect::parse_as(Provider::Kilo, input)
}

static HOOKS: HookFile = HookFile {
    timeouts: false,
    ..HookFile::new(
        hooks_location,
        HookEdit::own(OwnEdit {
            install: |text, cmd, _| PLUGIN.install(text, cmd),
            remove: |text, _, _| PLUGIN.remove(text),
            status: |text, cmd, _| Ok(PLUGIN.status(text, cmd)),
        }),
        &[
            "chat.message",
            "tool.execute.before",
            "tool.execute.after",
            "session.idle",
        ],
    )
};

static MCP: McpFile = McpFile::json(mcp_location, |exe| {
    opencode::local_server("Kilo CLI config", exe)
});

/// Kilo's global config directory: `KILO_CONFIG_DIR`, else `kilo` in the XDG config directory
/// (the `kilo-config` guide built into 7.7.7: plugins load from `{plugin,plugins}/*.{ts,js}` in
/// every config directory, `~/.config/kilo/` always; `KILO_CONFIG_DIR` adds one).
fn config_root(var: Env<'_>) -> Option<PathBuf> {
    opencode::family_root(var, "KILO_CONFIG_DIR", "kilo")
}

/// The plugin file `plugins/lidguard.js`.
fn hooks_location(var: Env<'_>) -> Option<Location> {
    Some(opencode::plugin_location(config_root(var)?))
}

/// `KILO_CONFIG`, else `kilo.json` (or an existing `kilo.jsonc`) in the config directory.
fn mcp_location(var: Env<'_>) -> Option<Location> {
    opencode::config_file(var, config_root(var)?, "KILO_CONFIG", "kilo")
}

/// The `kilo` executable (the native binary, or the npm launcher running it).
fn is_owner(name: &str, cmdline: &str) -> bool {
    let (name, cmd, wrapper) = crate::evidence::parts(name, cmdline);
    name.contains("kilo") || (wrapper && cmd.contains("kilocode"))
}
