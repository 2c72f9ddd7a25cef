//! Cursor: `~/.cursor/hooks.json`, the user hooks file, which the user and other tools share.
//!
//! Shape, from Cursor's hooks documentation (<https://cursor.com/docs/agent/hooks>):
//! `{"version": 1, "hooks": {"<event>": [{"command": "<cmd>", "timeout": N}]}}` — handlers
//! directly per camelCase event, the timeout in seconds. lidguard's `stop` entry also sets
//! `"loop_limit": null`: Cursor otherwise stops following up after 5 continuations, and each
//! ask-before-sleep reply is one.
//!
//! Not yet run against the real client (its CLI is not on the npm registry): built to the
//! documented contract.

use jsonc_parser::cst::CstInputValue;

use crate::install::HookCommand;
use crate::install::engine::{Handler, Layout, Spec};

/// The subcommand that marks lidguard's entries.
pub const SUBCOMMAND: &str = "cursor-hook";

/// Cursor's `hooks.json` for the JSON engine.
pub(crate) static SPEC: Spec = Spec::named("Cursor hooks.json", SUBCOMMAND, REQUIRED_EVENTS)
    .handlers(Layout::Flat, handler, conflicts)
    .envelope(1, "is not 1, the hooks file version Cursor documents");

/// The events lidguard needs.
pub const REQUIRED_EVENTS: &[&str] = &[
    "sessionStart",
    "sessionEnd",
    "beforeSubmitPrompt",
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "beforeShellExecution",
    "afterShellExecution",
    "beforeMCPExecution",
    "afterMCPExecution",
    "afterFileEdit",
    "subagentStart",
    "subagentStop",
    "stop",
];

fn handler(cmd: &HookCommand, event: &str, timeout: u32) -> Handler {
    let mut h = vec![
        ("command".to_owned(), cmd.render(SUBCOMMAND).into()),
        ("timeout".to_owned(), CstInputValue::from(timeout)),
    ];
    if event == "stop" {
        h.push(("loop_limit".to_owned(), CstInputValue::Null));
    }
    h
}

/// Stop hooks can send Cursor on (`followup_message`), and the before-execution hooks answer
/// the permission lidguard answers.
fn conflicts(event: &str, _handler_type: &str) -> bool {
    matches!(
        event,
        "stop" | "subagentStop" | "beforeShellExecution" | "beforeMCPExecution" | "preToolUse"
    )
}
