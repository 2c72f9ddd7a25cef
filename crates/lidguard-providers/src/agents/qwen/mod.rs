//! Qwen Code: Claude Code's hook dialect (events, payload fields, `hookSpecificOutput`
//! answers) in Qwen's own `settings.json` (`$QWEN_HOME`, else `~/.qwen`), which also holds its
//! MCP servers. The contract lidguard relies on, with its sources: `README.md` here.

pub mod install;

use crate::agent::{
    Agent, AgentSetting, Dialect, Env, HookEdit, HookFile, Location, McpFile, Snippet, config_dir,
};
use crate::agents::claude;
use crate::agents::claude::dialect::Family;
use crate::install::mcp::JsonEntry;
use crate::{HookInput, ParseError};
use lidguard_core::event::AgentEvent;
use lidguard_core::provider::Provider;

/// Qwen Code's entry.
pub static AGENT: Agent = Agent {
    mcp: Some(&MCP),
    keep_awake: Some(AgentSetting {
        file: |location| location.file.clone(),
        read: install::qwen_keep_awake,
    }),
    snippets: &[Snippet::hook_file(
        "settings-json",
        "The hooks in Qwen Code's settings.json",
    )],
    ..Agent::new(
        Provider::Qwen,
        ["qwen-hook", "qwen-hooks"],
        // Qwen answers PermissionRequest and continues after a blocked Stop as Claude does.
        Dialect::new(parse, claude::render, claude::render_continuation),
        is_owner,
        &HOOKS,
    )
};

/// What Qwen names differently from Claude (its tool names are Gemini CLI's).
static QWEN: Family = Family {
    provider: Provider::Qwen,
    ask_user_tool: "ask_user_question",
    // Qwen's background shells are not followed yet: no capture shows their ids.
    background_tools: &[],
    idle_ends_turn: false,
};

/// Parses one Qwen Code hook payload.
pub fn parse(input: &HookInput<'_>) -> Result<Vec<AgentEvent>, ParseError> {
    claude::dialect::parse_as(&QWEN, input)
}

static HOOKS: HookFile = HookFile::new(
    settings_location,
    HookEdit::json(&install::SPEC),
    install::CAPTURED_EVENTS,
);

static MCP: McpFile = McpFile::json(settings_location, mcp_entry);

/// `settings.json` in `$QWEN_HOME`, else `~/.qwen` (Qwen Code 0.24.4: "Config files remain at
/// ~/.qwen (or QWEN_HOME if set)"; the user settings file holds `hooks` and `mcpServers`).
fn settings_location(var: Env<'_>) -> Option<Location> {
    config_dir(var, "QWEN_HOME", ".qwen").map(|root| Location::inside(root, "settings.json"))
}

/// lidguard's server entry in `mcpServers` (Qwen's MCP configuration, Gemini CLI's shape):
/// `command` and `args`.
pub fn mcp_entry(exe: &str) -> JsonEntry {
    JsonEntry::command_server("Qwen Code settings.json", exe)
}

/// `qwen` (the npm shim), or node running its package (`…/qwen-code/cli-entry.js`).
fn is_owner(name: &str, cmdline: &str) -> bool {
    let (name, cmd, wrapper) = crate::evidence::parts(name, cmdline);
    name.contains("qwen") || (wrapper && cmd.contains("qwen-code"))
}
