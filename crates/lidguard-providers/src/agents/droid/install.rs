//! Factory Droid: `hooks.json` in `.factory` in the home directory (`$FACTORY_HOME_OVERRIDE`
//! replaces the home, Droid 0.225.2), a file of hooks only, the user's and lidguard's.
//!
//! Shape: the events are the top-level keys, `{"<Event>": [{"hooks": [{"type": "command",
//! "command": "<cmd>", "timeout": N}]}]}` — one matcher-less group per event; the timeout is in
//! seconds. Droid 0.225.2 runs the command with `sh -c` on Linux (its hook runner); on Windows
//! the entry is written for `cmd.exe` (the program in double quotes, which `sh` also reads),
//! not run here: no Windows build of Droid is on the registry this project reaches. It reads a file in
//! the hooks reference's `{"hooks": {...}}` shape as holding no hooks at all (observed; the
//! binary validates the file's top level against its event names), so that shape is never
//! written.
//!
//! Droid reads its user hooks from two places and merges them **per event**: the events of
//! `hooks.json` (or, while that file does not exist, the older `hooks/hooks.json`) replace the
//! same events of `settings.json`'s `hooks` key (Droid 0.225.2 `mergeHookSettings`:
//! `{...settings, ...hooksJson}`; observed with the real binary, `README.md` here). lidguard's
//! entry for an event in `hooks.json` would therefore silence a user's hooks for that event in
//! `settings.json`, and a new `hooks.json` would silence all of `hooks/hooks.json`: the install
//! refuses both and says what to do ([`shadowed`]).

use std::path::{Path, PathBuf};

use jsonc_parser::cst::{CstInputValue, CstObject};
use serde_json::Value;

use crate::agent::Location;
use crate::install::engine::{Handler, Layout, Spec};
use crate::install::{HookCommand, HookShell};

/// The subcommand that marks lidguard's entries.
pub const SUBCOMMAND: &str = "droid-hook";

/// Droid's `hooks.json` for the JSON engine.
pub(crate) static SPEC: Spec = Spec::named("Factory Droid hooks.json", SUBCOMMAND, REQUIRED_EVENTS)
    .handlers(Layout::Nested, handler, conflicts)
    .events_at_root()
    .warnings(warnings);

/// The events lidguard needs: Droid 0.225.2 has nine (its hook schema's `SessionStart`,
/// `UserPromptSubmit`, `PreToolUse`, `PostToolUse`, `Notification`, `Stop`, `SubagentStop`,
/// `PreCompact`, `SessionEnd`); these are the ones the dialect acts on (`SessionStart` for
/// `droid exec "<prompt>"`, whose launch is the start of its work).
pub const REQUIRED_EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Notification",
    "Stop",
    "SubagentStop",
    "SessionEnd",
];

/// The events a capture with the real CLI has shown (`tests/fixtures/droid/`).
pub const CAPTURED_EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Notification",
    "Stop",
    "SessionEnd",
];

/// A command handler in shell form (Droid has no exec form), the timeout in seconds.
fn handler(cmd: &HookCommand, _event: &str, timeout: u32) -> Handler {
    let cmd = HookCommand {
        shell: match cmd.shell {
            HookShell::Posix => HookShell::Posix,
            HookShell::PowerShell | HookShell::Cmd => HookShell::Cmd,
        },
        ..cmd.clone()
    };
    vec![
        ("type".to_owned(), "command".into()),
        ("command".to_owned(), cmd.render(SUBCOMMAND).into()),
        ("timeout".to_owned(), CstInputValue::from(timeout)),
    ]
}

/// A Stop hook can keep Droid going (`decision: "block"`), so its session with it. (A
/// PreToolUse hook can refuse tool calls, but lidguard answers no tool call of Droid's.)
fn conflicts(event: &str, _handler_type: &str) -> bool {
    matches!(event, "Stop" | "SubagentStop")
}

/// `hooksDisabled` turns every hook off (Droid 0.225.2 `getHooksDisabled`).
fn warnings(root: &CstObject, _cmd: &HookCommand) -> Vec<String> {
    let disabled = root
        .get("hooksDisabled")
        .and_then(|p| p.value()?.to_serde_value())
        == Some(Value::Bool(true));
    disabled
        .then(|| "hooksDisabled is true: Factory Droid runs no hooks".to_owned())
        .into_iter()
        .collect()
}

/// The files whose hooks lidguard's `hooks.json` entries can silence: `settings.json` and the
/// older `hooks/hooks.json`, next to it.
pub fn shadowed_files(location: &Location) -> Vec<PathBuf> {
    vec![
        location.root.join("settings.json"),
        location.root.join("hooks").join("hooks.json"),
    ]
}

/// What installing lidguard's entries into `hooks` (the text of `hooks.json`, `None` when it
/// does not exist) would silence in the file `path` holding `text`, as the reason to refuse;
/// `None` when nothing of the user's goes quiet.
pub fn shadowed(hooks: Option<&str>, path: &Path, text: &str) -> Option<String> {
    let other: Value = serde_json::from_str(text).ok()?;
    let named = |v: &Value| -> Vec<String> {
        v.as_object()
            .map(|o| {
                o.keys()
                    .filter(|k| REQUIRED_EVENTS.contains(&k.as_str()))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    };
    if path.parent().and_then(Path::file_name) == Some("hooks".as_ref()) {
        // Droid reads `hooks/hooks.json` only while `hooks.json` does not exist.
        let events = named(&other);
        return (hooks.is_none() && !events.is_empty()).then(|| {
            format!(
                "Factory Droid reads your hooks in {} only while hooks.json next to its folder \
                 does not exist, so lidguard's new hooks.json would silence them; open /hooks \
                 in Droid and save once (Droid moves them into hooks.json), then install again",
                path.display()
            )
        });
    }
    let theirs = named(other.get("hooks")?);
    let ours: Value = hooks
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or(Value::Null);
    let silenced: Vec<String> = theirs
        .into_iter()
        .filter(|e| ours.get(e).is_none())
        .collect();
    (!silenced.is_empty()).then(|| {
        format!(
            "Factory Droid runs the hooks under `hooks` in {} only for events hooks.json does not \
             name, so lidguard's entries would silence yours for {}; move them into hooks.json \
             (Droid's /hooks does it when it saves), then install again",
            path.display(),
            silenced.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_users_settings_hooks_for_an_event_hooks_json_lacks_stop_the_install() {
        let settings = Path::new("/h/.factory/settings.json");
        let theirs = r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say"}]}], "PreCompact": []}}"#;
        let why = shadowed(None, settings, theirs).expect("refused");
        assert!(why.contains("for Stop;"), "{why}");
        // hooks.json already names Stop: settings.json's Stop was silent before lidguard.
        assert_eq!(shadowed(Some(r#"{"Stop": []}"#), settings, theirs), None);
        assert_eq!(shadowed(None, settings, r#"{"theme": "dark"}"#), None);
        assert_eq!(shadowed(None, settings, "not json"), None);
    }

    #[test]
    fn the_older_hooks_folder_file_counts_only_while_hooks_json_is_missing() {
        let nested = Path::new("/h/.factory/hooks/hooks.json");
        let theirs = r#"{"PreToolUse": [{"hooks": [{"type": "command", "command": "log"}]}]}"#;
        assert!(shadowed(None, nested, theirs).is_some());
        assert_eq!(shadowed(Some("{}"), nested, theirs), None);
        assert_eq!(shadowed(None, nested, "{}"), None);
    }
}
