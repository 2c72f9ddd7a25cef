//! OpenCode: no shell hooks; lidguard's own plugin (`lidguard.js` here) forwards OpenCode's
//! plugin events to `opencode-hook --event <name>`. MCP servers in `opencode.json`. The
//! contract lidguard relies on, with its sources: `README.md` here.

pub(crate) mod dialect;
pub mod install;

use std::path::PathBuf;

use serde_json::Value;

use crate::agent::{
    Agent, Env, HookEdit, HookFile, Location, McpFile, OwnEdit, Snippet, SnippetText, home_dir,
    set_dir,
};
use crate::install::mcp::JsonEntry;
use lidguard_core::provider::Provider;

pub use dialect::{parse, plugin_js, render, render_continuation};

/// OpenCode's entry.
pub static AGENT: Agent = Agent {
    event_on_command_line: true,
    mcp: Some(&MCP),
    snippets: &[Snippet {
        format: "plugin-js",
        help: "lidguard's OpenCode plugin",
        text: SnippetText::Own(|cmd, _| install::plugin_text(cmd)),
    }],
    ..Agent::new(
        Provider::OpenCode,
        ["opencode-hook", "opencode-hooks"],
        dialect::DIALECT,
        is_owner,
        &HOOKS,
    )
};

static HOOKS: HookFile = HookFile {
    timeouts: false,
    ..HookFile::new(
        hooks_location,
        HookEdit::own(OwnEdit {
            install: |text, cmd, _| install::install(text, cmd),
            remove: |text, _, _| install::remove(text),
            status: |text, cmd, _| Ok(install::status(text, cmd)),
        }),
        &[
            "chat.message",
            "tool.execute.before",
            "tool.execute.after",
            "session.idle",
        ],
    )
};

static MCP: McpFile = McpFile::json(mcp_location, mcp_entry);

/// OpenCode's config directory: `OPENCODE_CONFIG_DIR`, else `opencode` in the XDG config
/// directory (<https://opencode.ai/docs/config/>; it loads `plugins/` from both).
fn config_root(var: Env<'_>) -> Option<PathBuf> {
    family_root(var, "OPENCODE_CONFIG_DIR", "opencode")
}

/// A config directory of OpenCode's plugin family: `$<dir_var>`, else `<name>` in the XDG
/// config directory.
pub(crate) fn family_root(var: Env<'_>, dir_var: &str, name: &str) -> Option<PathBuf> {
    match set_dir(var, dir_var) {
        Some(dir) => Some(dir),
        None => Some(
            set_dir(var, "XDG_CONFIG_HOME")
                .map_or_else(|| home_dir(var).map(|h| h.join(".config")), Some)?
                .join(name),
        ),
    }
}

/// The plugin file `plugins/lidguard.js`.
fn hooks_location(var: Env<'_>) -> Option<Location> {
    Some(plugin_location(config_root(var)?))
}

/// lidguard's plugin file `plugins/lidguard.js` in a config directory of OpenCode's family.
pub(crate) fn plugin_location(root: PathBuf) -> Location {
    Location {
        file: root.join("plugins").join(install::FILE_NAME),
        root,
    }
}

/// `OPENCODE_CONFIG`, else `opencode.json` (or an existing `opencode.jsonc`) in the config
/// directory (<https://opencode.ai/docs/config/>).
fn mcp_location(var: Env<'_>) -> Option<Location> {
    config_file(var, config_root(var)?, "OPENCODE_CONFIG", "opencode")
}

/// The config file of OpenCode's plugin family: `$<file_var>`, else `<stem>.json` (or an
/// existing `<stem>.jsonc`) in `root`.
pub(crate) fn config_file(
    var: Env<'_>,
    root: PathBuf,
    file_var: &str,
    stem: &str,
) -> Option<Location> {
    let file = set_dir(var, file_var).unwrap_or_else(|| {
        let json = root.join(format!("{stem}.json"));
        let jsonc = root.join(format!("{stem}.jsonc"));
        if !json.exists() && jsonc.exists() {
            jsonc
        } else {
            json
        }
    });
    Some(Location { root, file })
}

/// lidguard's server entry in the `mcp` object, as OpenCode documents local servers
/// (<https://opencode.ai/docs/mcp-servers/>): `type` `local`, a `command` array, `enabled`.
pub fn mcp_entry(exe: &str) -> JsonEntry {
    local_server("OpenCode config", exe)
}

/// lidguard's local server entry in the `mcp` object of `what` (OpenCode's plugin family).
pub(crate) fn local_server(what: &'static str, exe: &str) -> JsonEntry {
    JsonEntry::server(
        what,
        "mcp",
        vec![
            ("type", Value::from("local")),
            ("command", Value::from(vec![exe, "mcp-server"])),
            ("enabled", Value::Bool(true)),
        ],
    )
}

/// The `opencode` executable, or a node/bun wrapper running it.
fn is_owner(name: &str, cmdline: &str) -> bool {
    let (name, cmd, wrapper) = crate::evidence::parts(name, cmdline);
    name.contains("opencode") || (wrapper && cmd.contains("opencode"))
}
