//! Qwen Code: `hooks` in the user `settings.json` (`$QWEN_HOME/settings.json`, else
//! `~/.qwen/settings.json`), a file the user and Qwen share.
//!
//! Shape, Claude Code's: `{"hooks": {"<Event>": [{"hooks": [{"type": "command", "command":
//! "<cmd>", "timeout": N}]}]}}` — one matcher-less group per event. The timeout is in
//! **seconds** (Qwen Code 0.24.4 `hooks/hook-timeout.ts`: values of 1000 or more keep an older
//! millisecond meaning, with a warning). Qwen runs the command with `bash -c`, or PowerShell when
//! the entry says `"shell": "powershell"`, which lidguard's Windows entries do.

use jsonc_parser::cst::{CstInputValue, CstObject};

use crate::install::engine::{self, Handler, Layout, Spec};
use crate::install::{HookCommand, HookShell};

/// The subcommand that marks lidguard's entries.
pub const SUBCOMMAND: &str = "qwen-hook";

/// Qwen's `settings.json` for the JSON engine.
pub(crate) static SPEC: Spec = Spec::named("Qwen Code settings", SUBCOMMAND, REQUIRED_EVENTS)
    .handlers(Layout::Nested, handler, conflicts)
    .warnings(warnings);

/// The events lidguard needs (Qwen Code 0.24.4 `HookEventName`, those the dialect acts on).
pub const REQUIRED_EVENTS: &[&str] = &[
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "SubagentStart",
    "SubagentStop",
    "Stop",
    "StopFailure",
    "PermissionRequest",
    "Notification",
    "SessionEnd",
];

/// The events a capture with the real CLI has shown (`tests/fixtures/qwen/`); the others are
/// from Qwen's hooks reference and its 0.24.4 source (`README.md` here).
pub const CAPTURED_EVENTS: &[&str] = &[
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "Notification",
    "PermissionRequest",
    "SessionEnd",
    "PostToolUseFailure",
];

/// A command handler in shell form (Qwen has no exec form): the timeout in seconds, and
/// PowerShell named on Windows.
fn handler(cmd: &HookCommand, _event: &str, timeout: u32) -> Handler {
    let mut h = vec![
        ("type".to_owned(), "command".into()),
        ("command".to_owned(), cmd.render(SUBCOMMAND).into()),
    ];
    if cmd.shell == HookShell::PowerShell {
        h.push(("shell".to_owned(), "powershell".into()));
    }
    h.push(("timeout".to_owned(), CstInputValue::from(timeout)));
    h
}

/// Stop hooks can keep Qwen going, permission hooks answer what lidguard answers with the lid
/// closed, and prompt or agent hooks on PreToolUse decide tool calls.
fn conflicts(event: &str, handler_type: &str) -> bool {
    matches!(event, "Stop" | "SubagentStop" | "PermissionRequest")
        || (event == "PreToolUse" && matches!(handler_type, "prompt" | "agent"))
}

/// `disableAllHooks` turns every hook off (Qwen Code 0.24.4 `Config.disableAllHooks`).
fn warnings(root: &CstObject, _cmd: &HookCommand) -> Vec<String> {
    engine::all_hooks_disabled(root)
        .then(|| "disableAllHooks is true: Qwen Code runs no hooks".to_owned())
        .into_iter()
        .collect()
}

/// Whether Qwen Code keeps the machine awake by itself: `general.preventSystemSleep` in its
/// `settings.json`, **on by default** (0.24.4's settings reference: "Prevent the system from
/// sleeping while Qwen Code is streaming a model response or executing tools"; its bundle takes
/// `caffeinate -is` on macOS, `systemd-inhibit --what=sleep --mode=block` on Linux except in a
/// headless SSH session, `SetThreadExecutionState` on Windows). `None` when set to `false`.
pub fn qwen_keep_awake(settings_json: Option<&str>) -> Option<String> {
    let set = settings_json
        .and_then(|text| engine::Doc::parse(Some(text), "Qwen settings.json").ok())
        .and_then(|doc| {
            let general = doc
                .object()
                .ok()?
                .get("general")?
                .value()?
                .to_serde_value()?;
            general.get("preventSystemSleep")?.as_bool()
        });
    match set {
        Some(false) => None,
        Some(true) => Some("general.preventSystemSleep = true".to_owned()),
        None => Some("general.preventSystemSleep, on by default".to_owned()),
    }
}

#[cfg(test)]
mod keep_awake_tests {
    use super::qwen_keep_awake;

    #[test]
    fn on_unless_the_user_turned_it_off() {
        assert_eq!(
            qwen_keep_awake(None).as_deref(),
            Some("general.preventSystemSleep, on by default")
        );
        assert_eq!(
            qwen_keep_awake(Some(r#"{"general": {"vimMode": true}}"#)).as_deref(),
            Some("general.preventSystemSleep, on by default")
        );
        assert_eq!(
            qwen_keep_awake(Some(r#"{"general": {"preventSystemSleep": true}}"#)).as_deref(),
            Some("general.preventSystemSleep = true")
        );
        assert_eq!(
            qwen_keep_awake(Some(r#"{"general": {"preventSystemSleep": false}}"#)),
            None
        );
    }
}
