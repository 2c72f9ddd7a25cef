//! Factory Droid: Claude Code's hook dialect (events, payload fields, answers) in Droid's own
//! `~/.factory/hooks.json`. The contract lidguard relies on, with its sources: `README.md` here.

pub mod install;

use std::path::PathBuf;

use serde_json::Value;

use crate::agent::{
    Agent, Dialect, Env, HookEdit, HookFile, Location, McpFile, Shadows, Snippet, home_dir, set_dir,
};
use crate::agents::claude;
use crate::agents::claude::dialect::Family;
use crate::install::mcp::JsonEntry;
use crate::{HookInput, ParseError};
use lidguard_core::event::AgentEvent;
use lidguard_core::provider::Provider;

/// Factory Droid's entry.
pub static AGENT: Agent = Agent {
    mcp: Some(&MCP),
    snippets: &[Snippet::hook_file(
        "hooks-json",
        "Factory Droid's hooks.json with lidguard's entries",
    )],
    works_from_launch: Some(works_from_launch),
    ..Agent::new(
        Provider::Droid,
        ["droid-hook", "droid-hooks"],
        // Droid has no PermissionRequest: a permission dialog is a Notification
        // (`permission_prompt`), which nothing answers; Stop continues as Claude's does.
        Dialect::new(parse, claude::render, claude::render_continuation),
        is_owner,
        &HOOKS,
    )
};

/// What Droid names differently from Claude.
static DROID: Family = Family {
    provider: Provider::Droid,
    ask_user_tool: "AskUser",
    // Droid's background processes are not followed yet: no capture shows their ids.
    background_tools: &[],
    idle_ends_turn: true,
};

/// Parses one Droid hook payload.
pub fn parse(input: &HookInput<'_>) -> Result<Vec<AgentEvent>, ParseError> {
    claude::dialect::parse_as(&DROID, input)
}

static HOOKS: HookFile = HookFile {
    shadows: Some(Shadows {
        files: install::shadowed_files,
        check: install::shadowed,
    }),
    ..HookFile::new(
        hooks_location,
        HookEdit::json(&install::SPEC),
        install::CAPTURED_EVENTS,
    )
};

/// Droid's folder: `.factory` in `$FACTORY_HOME_OVERRIDE`, else in the home directory (Droid
/// 0.225.2: `FACTORY_HOME_OVERRIDE ?? HOME ?? USERPROFILE`).
fn config_root(var: Env<'_>) -> Option<PathBuf> {
    let home = set_dir(var, "FACTORY_HOME_OVERRIDE").or_else(|| home_dir(var))?;
    Some(home.join(".factory"))
}

/// `hooks.json` in Droid's folder (the hooks reference: "`~/.factory/hooks.json` – User").
fn hooks_location(var: Env<'_>) -> Option<Location> {
    config_root(var).map(|root| Location::inside(root, "hooks.json"))
}

static MCP: McpFile = McpFile::json(mcp_location, mcp_entry);

/// `mcp.json` in Droid's folder (the MCP docs: "User: `~/.factory/mcp.json`").
fn mcp_location(var: Env<'_>) -> Option<Location> {
    config_root(var).map(|root| Location::inside(root, "mcp.json"))
}

/// lidguard's server entry as `droid mcp add` writes a stdio server: `type`, `command`, `args`
/// in `mcpServers` (the MCP docs' configuration table).
pub fn mcp_entry(exe: &str) -> JsonEntry {
    JsonEntry::server(
        "Factory Droid mcp.json",
        "mcpServers",
        vec![
            ("type", Value::from("stdio")),
            ("command", Value::from(exe)),
            ("args", Value::from(vec!["mcp-server"])),
        ],
    )
}

/// `droid` (the native binary, or the npm package's launcher run by node).
fn is_owner(name: &str, cmdline: &str) -> bool {
    let (name, cmd, wrapper) = crate::evidence::parts(name, cmdline);
    name == "droid" || (wrapper && cmd.contains("@factory/cli"))
}

/// `droid exec "<prompt>"` works on its prompt from launch and fires no UserPromptSubmit
/// (captured, `tests/fixtures/droid/exec-*`); the TUI's worker (`droid exec --input-format
/// stream-jsonrpc`) and `droid exec` fed prompts on stdin fire one per prompt.
fn works_from_launch(cmdline: &str) -> bool {
    let mut words = cmdline.split_whitespace().skip(1);
    words.any(|w| w == "exec") && !cmdline.contains("--input-format")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_one_shot_exec_works_from_launch_and_the_tuis_worker_does_not() {
        let droid = "/usr/local/bin/droid";
        assert!(works_from_launch(&format!(
            "{droid} exec -m custom:fake --auto low fix it"
        )));
        assert!(!works_from_launch(&format!(
            "{droid} exec --input-format stream-jsonrpc --output-format stream-jsonrpc"
        )));
        assert!(!works_from_launch(&format!("{droid} --auto low")));
        assert!(!works_from_launch("/opt/exec/droid"));
    }
}
