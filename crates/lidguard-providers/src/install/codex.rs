//! Codex CLI: `$CODEX_HOME/hooks.json` (else `~/.codex/hooks.json`).
//!
//! Same three levels as Claude, as Codex 0.171.0 accepted it in `tests/e2e/capture/codex/`:
//! `{"hooks": {"<Event>": [{"hooks": [{"type": "command", "command": "<cmd>", "timeout": N}]}]}}`.
//! Hooks are on by default since 0.124 (`[features] hooks = false` in `config.toml` turns them
//! off). The top level may hold only `description` and `hooks`: Codex refuses the whole file
//! otherwise, so install refuses such a file and status reports it. Codex also asks the user to
//! trust every new or changed hook in `/hooks` before it runs it.

use jsonc_parser::cst::CstInputValue;

use super::engine::{self, Handler, Layout, Spec};
use super::{Change, HookCommand, HookStatus, InstallError};

/// The events lidguard needs.
pub const REQUIRED_EVENTS: &[&str] = &[
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PermissionRequest",
    "Stop",
    "SessionEnd",
    "Interrupt",
    "SubagentStart",
    "SubagentStop",
];

/// The subcommand that marks lidguard's entries.
pub const SUBCOMMAND: &str = "codex-hook";

const SPEC: Spec = Spec {
    what: "Codex hooks.json",
    subcommand: SUBCOMMAND,
    events: REQUIRED_EVENTS,
    layout: Layout::Nested,
    handler,
    conflicts,
    root_keys: Some(&["description", "hooks"]),
};

/// The longest timeout Codex accepts for `SessionEnd` and `Interrupt` hooks: it clamps larger
/// ones to this and warns on every start (seen with codex-cli 0.171.0; the docs give "default 1,
/// clamped to ≤ 3").
pub const END_EVENT_TIMEOUT_LIMIT: u32 = 3;

/// Codex runs commands through the session shell (PowerShell on Windows), which is what
/// `HookCommand::shell` quotes for.
fn handler(cmd: &HookCommand, event: &str, timeout: u32) -> Handler {
    let timeout = if matches!(event, "SessionEnd" | "Interrupt") {
        timeout.min(END_EVENT_TIMEOUT_LIMIT)
    } else {
        timeout
    };
    vec![
        ("type".to_owned(), "command".into()),
        ("command".to_owned(), cmd.render(SUBCOMMAND).into()),
        ("timeout".to_owned(), CstInputValue::from(timeout)),
    ]
}

/// Stop hooks can keep Codex going; permission hooks answer what lidguard answers. (Codex
/// skips prompt and agent handlers, so PreToolUse ones cannot conflict.)
fn conflicts(event: &str, _handler_type: &str) -> bool {
    matches!(event, "Stop" | "SubagentStop" | "PermissionRequest")
}

/// Adds or corrects lidguard's entries in `hooks.json` (`None`: the file does not exist).
pub fn install(
    existing: Option<&str>,
    cmd: &HookCommand,
    timeout: u32,
) -> Result<Change, InstallError> {
    engine::install(existing, &SPEC, cmd, timeout)
}

/// Removes lidguard's entries (`cmd` widens the ownership test to its program path).
pub fn remove(existing: &str, cmd: &HookCommand) -> Result<Change, InstallError> {
    engine::remove(existing, &SPEC, cmd)
}

/// Compares `hooks.json` with what [`install`] would write.
pub fn status(
    existing: Option<&str>,
    cmd: &HookCommand,
    timeout: u32,
) -> Result<HookStatus, InstallError> {
    engine::status(existing, &SPEC, cmd, timeout)
}

/// A complete `hooks.json` to merge by hand: what [`install`] writes into a missing file.
pub fn snippet(cmd: &HookCommand, timeout: u32) -> String {
    engine::fresh(install(None, cmd, timeout))
}
