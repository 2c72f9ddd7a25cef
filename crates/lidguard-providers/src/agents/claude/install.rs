//! Claude Code: `hooks` in `settings.json` (`$CLAUDE_CONFIG_DIR/settings.json`, else
//! `~/.claude/settings.json`), a file the user and Claude share.
//!
//! Shape: `{"hooks": {"<Event>": [{"hooks": [{"type": "command", "command": "<hook exe>",
//! "args": ["claude-hook"], "timeout": N}]}]}}` — one matcher-less group per event, so lidguard
//! sees every occurrence, in Claude's **exec form**: with `args`, Claude spawns `command`
//! directly with those arguments, no shell on any platform (no `sh -c` start, no PowerShell and
//! its console window on Windows). Claude Code reads `args` from 2.1.139 (its hook schema: "When
//! present, `command` is resolved as an executable and spawned directly"; 2.1.138's has no
//! `args`); 2.1.332 runs these entries in the e2e suite. An older Claude would run the program
//! without its arguments, and lidguard would hear nothing: update Claude Code.

use jsonc_parser::cst::{CstInputValue, CstObject};

use crate::install::HookCommand;
use crate::install::engine::{self, Handler, Layout, Spec};

/// The subcommand that marks lidguard's entries.
pub const SUBCOMMAND: &str = "claude-hook";

/// Claude's `settings.json` for the JSON engine.
pub(crate) static SPEC: Spec = Spec::named("Claude Code settings", SUBCOMMAND, REQUIRED_EVENTS)
    .handlers(Layout::Nested, handler, conflicts)
    .warnings(warnings);

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

fn handler(cmd: &HookCommand, _event: &str, timeout: u32) -> Handler {
    vec![
        ("type".to_owned(), "command".into()),
        ("command".to_owned(), cmd.program.as_str().into()),
        (
            "args".to_owned(),
            CstInputValue::Array(vec![SUBCOMMAND.into()]),
        ),
        ("timeout".to_owned(), CstInputValue::from(timeout)),
    ]
}

/// Stop hooks can keep Claude going, permission and elicitation hooks answer what lidguard
/// answers with the lid closed, and prompt or agent hooks on PreToolUse decide tool calls.
fn conflicts(event: &str, handler_type: &str) -> bool {
    matches!(
        event,
        "Stop" | "SubagentStop" | "PermissionRequest" | "Elicitation"
    ) || (event == "PreToolUse" && matches!(handler_type, "prompt" | "agent"))
}

/// `disableAllHooks` turns every hook in the file off.
fn warnings(root: &CstObject, _cmd: &HookCommand) -> Vec<String> {
    engine::all_hooks_disabled(root)
        .then(|| "disableAllHooks is true: Claude Code runs no hooks from this file".to_owned())
        .into_iter()
        .collect()
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
