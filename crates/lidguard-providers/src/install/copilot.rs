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

use super::duplicates::DuplicateKeys;
use super::engine::{self, Doc, Handler, Keep, Layout, Spec};
use super::{Change, HookCommand, HookShell, HookSource, HookStatus, InstallError, InstallState};

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

/// The only envelope version Copilot reads.
const VERSION: u32 = 1;

const SPEC: Spec = Spec {
    what: "Copilot hooks file",
    subcommand: SUBCOMMAND,
    events: REQUIRED_EVENTS,
    layout: Layout::Flat,
    handler,
    conflicts,
    root_keys: None,
    duplicates: DuplicateKeys::LastWins,
};

fn handler(cmd: &HookCommand, event: &str, timeout: u32) -> Handler {
    let key = match cmd.shell {
        HookShell::Posix => "bash",
        HookShell::PowerShell => "powershell",
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

/// Writes or corrects the file (`None`: it does not exist).
pub fn install(
    existing: Option<&str>,
    cmd: &HookCommand,
    timeout: u32,
) -> Result<Change, InstallError> {
    let doc = Doc::parse(existing, SPEC.what)?;
    doc.refuse_duplicates(&["version", "hooks"], SPEC.what, SPEC.duplicates)?;
    let root = doc.object()?;
    match root.get("version") {
        None => {
            root.insert(0, "version", CstInputValue::from(VERSION));
        }
        Some(prop) if prop.value().and_then(|v| v.to_serde_value()) == Some(VERSION.into()) => {}
        Some(_) => {
            return Err(engine::shape(
                "version",
                "is not 1, the only hooks file version Copilot CLI reads",
            ));
        }
    }
    engine::install_into(&root, &SPEC, cmd, timeout)?;
    Ok(doc.change_from(existing))
}

/// Removes lidguard's entries; `Delete` when nothing but an empty envelope is left.
/// With `before` (the file as it was before lidguard's install, when it existed and is known)
/// the file stays, keeping what it had.
pub fn remove(
    existing: &str,
    cmd: &HookCommand,
    before: Option<&str>,
) -> Result<Change, InstallError> {
    let doc = Doc::parse(Some(existing), SPEC.what)?;
    doc.refuse_duplicates(&["version", "hooks"], SPEC.what, SPEC.duplicates)?;
    let root = doc.object()?;
    let removed = engine::remove_from(&root, &SPEC, cmd, &Keep::from_before(before, SPEC.what));
    if let Some(before) = before {
        return Ok(if removed {
            doc.change_back(existing, Some(before))
        } else {
            Change::Unchanged
        });
    }
    let empty = root.to_serde_value().is_some_and(|v| {
        v.as_object().is_some_and(|o| {
            o.iter().all(|(k, v)| match k.as_str() {
                "version" => true,
                "hooks" => v.as_object().is_some_and(serde_json::Map::is_empty),
                _ => false,
            })
        })
    });
    Ok(match (empty, removed) {
        (true, _) => Change::Delete,
        (false, true) => doc.change_from(Some(existing)),
        (false, false) => Change::Unchanged,
    })
}

/// Compares the file with what [`install`] would write, and lists the conflicting hooks in it
/// and in Copilot's `settings.json` (`settings`: its text, when it exists), whose inline hooks
/// run next to every hooks file.
pub fn status(
    existing: Option<&str>,
    settings: Option<&str>,
    cmd: &HookCommand,
    timeout: u32,
) -> Result<HookStatus, InstallError> {
    let mut status = engine::status(existing, &SPEC, cmd, timeout)?;
    if let Some(text) = existing.filter(|t| !t.trim().is_empty()) {
        let version = Doc::parse(Some(text), SPEC.what)?
            .object()?
            .get("version")
            .and_then(|p| p.value()?.to_serde_value());
        if version != Some(VERSION.into()) {
            let found = version.map_or_else(|| "missing".to_owned(), |v| v.to_string());
            status
                .drift
                .push(format!("version: {found}, expected {VERSION}"));
            if status.state == InstallState::Installed {
                status.state = InstallState::Drifted;
            }
        }
    }
    if let Some(text) = settings {
        match inline_hooks(text, cmd) {
            Ok((foreign, ours)) => {
                status.foreign_hooks.extend(foreign);
                for event in ours {
                    status.warnings.push(format!(
                        "settings.json also runs lidguard on {event}: the event reaches lidguard twice"
                    ));
                }
            }
            Err(e) => status.warnings.push(format!(
                "settings.json not checked for conflicting hooks: {e}"
            )),
        }
    }
    Ok(status)
}

/// The conflicting hooks inline in Copilot's `settings.json`, and the events on which it runs
/// lidguard itself.
fn inline_hooks(
    text: &str,
    cmd: &HookCommand,
) -> Result<(Vec<super::ForeignHook>, Vec<String>), InstallError> {
    hooks_in(
        text,
        cmd,
        "Copilot settings.json",
        HookSource::CopilotSettings,
    )
}

/// Another file whose hooks Copilot runs next to lidguard's (hook-contracts §3.1): a hooks file
/// (`~/.copilot/hooks/*.json` besides lidguard's, a repository's `.github/hooks/*.json`) or a
/// settings file with inline `hooks` (`.github/copilot/settings.json`,
/// `settings.local.json`). Returns its conflicting hooks (source [`HookSource::OtherFile`])
/// and the events on which it runs lidguard itself. A file with `disableAllHooks: true` runs
/// nothing and yields nothing.
pub fn scan_other_file(
    text: &str,
    cmd: &HookCommand,
) -> Result<(Vec<super::ForeignHook>, Vec<String>), InstallError> {
    hooks_in(text, cmd, "Copilot hooks", HookSource::OtherFile)
}

fn hooks_in(
    text: &str,
    cmd: &HookCommand,
    what: &str,
    source: HookSource,
) -> Result<(Vec<super::ForeignHook>, Vec<String>), InstallError> {
    let doc = Doc::parse(Some(text), what)?;
    let root = doc.object()?;
    let disabled = root
        .get("disableAllHooks")
        .and_then(|p| p.value()?.to_serde_value())
        == Some(serde_json::Value::Bool(true));
    let Some(hooks) = root.object_value("hooks").filter(|_| !disabled) else {
        return Ok(Default::default());
    };
    let (ours, theirs): (Vec<_>, Vec<_>) = engine::sites(&hooks, Layout::Flat)
        .into_iter()
        .partition(|s| s.is_ours(&SPEC, cmd));
    Ok((
        engine::foreign(&theirs, &SPEC, source),
        ours.into_iter().map(|s| s.event).collect(),
    ))
}

/// The whole file, as [`install`] writes it when it does not exist.
pub fn snippet(cmd: &HookCommand, timeout: u32) -> String {
    engine::fresh(install(None, cmd, timeout))
}
