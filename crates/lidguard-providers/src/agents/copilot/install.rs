//! GitHub Copilot CLI: `$COPILOT_HOME/hooks/lidguard-copilot-cli.json` (else
//! `~/.copilot/hooks/`), a file lidguard owns.
//!
//! Shape, as Copilot CLI 1.0.102 accepted it in `tests/e2e/capture/copilot/`: a version
//! envelope with handlers listed directly per camelCase event (camelCase keys get camelCase
//! payloads, which the dialect reads):
//! `{"version": 1, "hooks": {"<event>": [{"type": "command", "bash": "<cmd> --event <event>",
//! "timeoutSec": N}]}}` — `powershell` instead of `bash` on Windows. The event goes on the
//! command line because Copilot's camelCase payloads do not name it.
//!
//! Though the file is lidguard's, it is edited like a shared one: entries someone added by
//! hand survive install and remove. Remove deletes the file once nothing else is left in it.

use jsonc_parser::cst::CstInputValue;
use serde_json::Value;

use crate::install::engine::{self, Doc, Handler, Layout, Spec};
use crate::install::{HookCommand, HookShell, HookSource, InstallError};

/// The events lidguard needs.
pub const REQUIRED_EVENTS: &[&str] = &[
    "sessionStart",
    "sessionEnd",
    "userPromptSubmitted",
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "permissionRequest",
    "agentStop",
    "subagentStart",
    "subagentStop",
    "errorOccurred",
    "notification",
];

/// The subcommand that marks lidguard's entries.
pub const SUBCOMMAND: &str = "copilot-hook";

/// The file's name in Copilot's `hooks/` directory.
pub const FILE_NAME: &str = "lidguard-copilot-cli.json";

/// Copilot's hooks file for the JSON engine. Remove deletes it once nothing but an empty
/// envelope is left (unless it existed before lidguard's install).
pub(crate) static SPEC: Spec = Spec::named("Copilot hooks file", SUBCOMMAND, REQUIRED_EVENTS)
    .handlers(Layout::Flat, handler, conflicts)
    .envelope(1, "is not 1, the only hooks file version Copilot CLI reads");

fn handler(cmd: &HookCommand, event: &str, timeout: u32) -> Handler {
    // Copilot has a key per shell; a Windows command always goes under `powershell`.
    let (key, cmd) = match cmd.shell {
        HookShell::Posix => ("bash", cmd.clone()),
        HookShell::PowerShell | HookShell::Cmd => (
            "powershell",
            HookCommand {
                shell: HookShell::PowerShell,
                ..cmd.clone()
            },
        ),
    };
    vec![
        ("type".to_owned(), "command".into()),
        (
            key.to_owned(),
            format!("{} --event {event}", cmd.render(SUBCOMMAND)).into(),
        ),
        ("timeoutSec".to_owned(), CstInputValue::from(timeout)),
    ]
}

/// Stop hooks can keep Copilot going and permission hooks answer what lidguard answers; the
/// PascalCase spellings are the same events in Copilot's VS Code-compatible dialect.
fn conflicts(event: &str, _handler_type: &str) -> bool {
    matches!(
        event,
        "agentStop"
            | "subagentStop"
            | "permissionRequest"
            | "Stop"
            | "SubagentStop"
            | "PermissionRequest"
    )
}

/// Another file whose hooks Copilot runs next to lidguard's (hooks reference; README.md here): a hooks file
/// (`~/.copilot/hooks/*.json` besides lidguard's, a repository's `.github/hooks/*.json`) or a
/// settings file with inline `hooks` (`.github/copilot/settings.json`,
/// `settings.local.json`). Returns its conflicting hooks (source [`HookSource::OtherFile`])
/// and the events on which it runs lidguard itself. A file with `disableAllHooks: true` runs
/// nothing and yields nothing.
pub fn scan_other_file(
    text: &str,
    cmd: &HookCommand,
) -> Result<(Vec<crate::install::ForeignHook>, Vec<String>), InstallError> {
    let doc = Doc::parse(Some(text), "Copilot hooks")?;
    let root = doc.object()?;
    let disabled = engine::all_hooks_disabled(&root);
    let Some(hooks) = root.object_value("hooks").filter(|_| !disabled) else {
        return Ok(Default::default());
    };
    let (ours, theirs): (Vec<_>, Vec<_>) = engine::sites(&hooks, SPEC.layout)
        .into_iter()
        .partition(|s| s.is_ours(&SPEC, cmd));
    Ok((
        engine::foreign(&theirs, &SPEC, HookSource::OtherFile),
        ours.into_iter().map(|s| s.event).collect(),
    ))
}

/// Whether GitHub Copilot CLI keeps the machine awake by itself: `keepAlive` in
/// `$COPILOT_HOME/settings.json` (`"on"`, or `"busy"`: only while the agent works; the
/// interactive CLI applies it at start, as `/keep-alive` does). Copilot ignores it when it is
/// missing, empty or `"off"`, and treats any other value as `"on"`. `None` when off or when the
/// file is missing or does not parse.
pub fn copilot_keep_awake(settings_json: Option<&str>) -> Option<String> {
    let doc = Doc::parse(settings_json, "Copilot settings.json").ok()?;
    let value = doc
        .object()
        .ok()?
        .get("keepAlive")?
        .value()?
        .to_serde_value()?;
    match value {
        Value::String(mode) if !mode.is_empty() && mode != "off" => {
            Some(format!("keepAlive = {}", Value::String(mode)))
        }
        Value::Bool(true) => Some("keepAlive = true".to_owned()),
        _ => None,
    }
}
