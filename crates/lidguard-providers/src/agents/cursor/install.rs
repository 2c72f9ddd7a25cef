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

use crate::install::duplicates::DuplicateKeys;
use crate::install::engine::{self, Handler, Layout, Spec, Versioned};
use crate::install::{Change, HookCommand, HookStatus, InstallError};

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

/// The subcommand that marks lidguard's entries.
pub const SUBCOMMAND: &str = "cursor-hook";

const ENVELOPE: Versioned = Versioned {
    version: 1,
    refusal: "is not 1, the hooks file version Cursor documents",
};

const SPEC: Spec = Spec {
    what: "Cursor hooks.json",
    subcommand: SUBCOMMAND,
    events: REQUIRED_EVENTS,
    layout: Layout::Flat,
    handler,
    conflicts,
    root_keys: None,
    duplicates: DuplicateKeys::LastWins,
};

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

/// Writes or corrects lidguard's entries (`None`: the file does not exist).
pub fn install(
    existing: Option<&str>,
    cmd: &HookCommand,
    timeout: u32,
) -> Result<Change, InstallError> {
    engine::install_versioned(existing, &SPEC, cmd, timeout, &ENVELOPE)
}

/// Removes lidguard's entries; `Delete` when the file lidguard created is left empty.
pub fn remove(
    existing: &str,
    cmd: &HookCommand,
    before: Option<&str>,
) -> Result<Change, InstallError> {
    engine::remove_versioned(existing, &SPEC, cmd, before)
}

/// Compares the file with what [`install`] writes.
pub fn status(
    existing: Option<&str>,
    cmd: &HookCommand,
    timeout: u32,
) -> Result<HookStatus, InstallError> {
    engine::status_versioned(existing, &SPEC, cmd, timeout, &ENVELOPE)
}

/// The whole file, as [`install`] writes it when it does not exist
/// (`lidguard cursor-hooks hooks-json`).
pub fn snippet(cmd: &HookCommand, timeout: u32) -> String {
    engine::fresh(install(None, cmd, timeout))
}
