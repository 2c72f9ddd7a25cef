//! Claude Code: `hooks` in `settings.json` (`$CLAUDE_CONFIG_DIR/settings.json`, else
//! `~/.claude/settings.json`), a file the user and Claude share.
//!
//! Shape, as Claude Code 2.1.332 accepted it in `tests/e2e/capture/claude/`:
//! `{"hooks": {"<Event>": [{"hooks": [{"type": "command", "command": "<cmd>", "timeout": N}]}]}}`
//! — one matcher-less group per event, so lidguard sees every occurrence. No `shell` on Linux
//! and macOS (Claude runs `sh -c` there and the command is POSIX-quoted); `"shell":
//! "powershell"` on Windows, where Claude would otherwise pick Git Bash when it is installed.

use jsonc_parser::cst::CstInputValue;

use crate::install::duplicates::DuplicateKeys;
use crate::install::engine::{self, Handler, Layout, Spec};
use crate::install::{Change, HookCommand, HookShell, HookStatus, InstallError};

/// The events lidguard needs (what the captures showed fires and the dialect acts on).
pub const REQUIRED_EVENTS: &[&str] = &[
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "SubagentStart",
    "SubagentStop",
    "TaskCreated",
    "TaskCompleted",
    "Stop",
    "StopFailure",
    "Elicitation",
    "ElicitationResult",
    "PermissionRequest",
    "Notification",
    "SessionEnd",
];

/// The subcommand that marks lidguard's entries.
pub const SUBCOMMAND: &str = "claude-hook";

const SPEC: Spec = Spec {
    what: "Claude Code settings",
    subcommand: SUBCOMMAND,
    events: REQUIRED_EVENTS,
    layout: Layout::Nested,
    handler,
    conflicts,
    root_keys: None,
    duplicates: DuplicateKeys::LastWins,
};

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

/// Stop hooks can keep Claude going, permission and elicitation hooks answer what lidguard
/// answers with the lid closed, and prompt or agent hooks on PreToolUse decide tool calls.
fn conflicts(event: &str, handler_type: &str) -> bool {
    matches!(
        event,
        "Stop" | "SubagentStop" | "PermissionRequest" | "Elicitation"
    ) || (event == "PreToolUse" && matches!(handler_type, "prompt" | "agent"))
}

/// Adds or corrects lidguard's entries in `settings.json` (`None`: the file does not exist).
pub fn install(
    existing: Option<&str>,
    cmd: &HookCommand,
    timeout: u32,
) -> Result<Change, InstallError> {
    engine::install(existing, &SPEC, cmd, timeout)
}

/// Removes lidguard's entries (`cmd` widens the ownership test to its program path).
/// `before`: the file as it was before lidguard's install, when known (see the module docs of
/// [`super`]).
pub fn remove(
    existing: &str,
    cmd: &HookCommand,
    before: Option<&str>,
) -> Result<Change, InstallError> {
    engine::remove(existing, &SPEC, cmd, before)
}

/// Compares `settings.json` with what [`install`] would write; warns when
/// `disableAllHooks` is on.
pub fn status(
    existing: Option<&str>,
    cmd: &HookCommand,
    timeout: u32,
) -> Result<HookStatus, InstallError> {
    let mut status = engine::status(existing, &SPEC, cmd, timeout)?;
    let disabled = existing
        .and_then(|t| engine::Doc::parse(Some(t), SPEC.what).ok())
        .and_then(|doc| doc.object().ok())
        .and_then(|root| root.get("disableAllHooks")?.value()?.to_serde_value())
        .is_some_and(|v| v == serde_json::Value::Bool(true));
    if disabled {
        status
            .warnings
            .push("disableAllHooks is true: Claude Code runs no hooks from this file".to_owned());
    }
    Ok(status)
}

/// The `settings.json` fragment to merge by hand (`lidguard claude-hooks settings-json`): what
/// [`install`] writes into a missing file.
pub fn snippet(cmd: &HookCommand, timeout: u32) -> String {
    engine::fresh(install(None, cmd, timeout))
}

/// What Claude Code's permission mode (`permissions.defaultMode` in `settings.json`) means for
/// lidguard. Claude Code 2.1.332 starts interactive sessions in `auto` mode when none is set:
/// a classifier decides, no dialog appears and no `PermissionRequest` fires (observed in the
/// captures, `tests/fixtures/claude/README.md`). `--permission-mode` on Claude's command line
/// overrides the setting for that session.
pub fn permission_mode(settings_json: Option<&str>) -> Option<String> {
    let mode = settings_json
        .and_then(|t| engine::Doc::parse(Some(t), SPEC.what).ok())
        .and_then(|doc| doc.object().ok())
        .and_then(|root| root.object_value("permissions"))
        .and_then(|p| p.get("defaultMode")?.value()?.to_serde_value())
        .and_then(|v| v.as_str().map(str::to_owned));
    Some(match mode.as_deref() {
        None => "auto (Claude Code's default; no permissions.defaultMode set): no permission \
                 dialog and no PermissionRequest, so the closed-lid policy is not consulted"
            .to_owned(),
        Some("auto") => "auto: no permission dialog and no PermissionRequest, so the closed-lid \
                         policy is not consulted"
            .to_owned(),
        Some(m @ ("bypassPermissions" | "dontAsk")) => {
            format!("{m}: Claude Code asks nothing, so the closed-lid policy is not consulted")
        }
        Some(m) => format!(
            "{m}: what this mode does not allow raises a PermissionRequest, answered with the \
             closed-lid policy while the lid is closed"
        ),
    })
}
