//! Gemini CLI: `hooks` in the user `settings.json` (`$GEMINI_CLI_HOME/.gemini/settings.json`,
//! else `~/.gemini/settings.json`), a file the user and Gemini share.
//!
//! Shape, as Gemini CLI 0.61.0 accepted it in `tests/e2e/capture/gemini/` (and its hooks
//! reference): `{"hooks": {"<Event>": [{"hooks": [{"type": "command", "name": "lidguard",
//! "command": "<cmd>", "timeout": N}]}]}}` — one matcher-less group per event. The timeout is
//! in **milliseconds**. Gemini runs the command with `bash -c` (PowerShell on Windows).

use jsonc_parser::cst::CstInputValue;
use serde_json::Value;

use crate::install::duplicates::DuplicateKeys;
use crate::install::engine::{self, Handler, Layout, Spec};
use crate::install::{Change, HookCommand, HookStatus, InstallError};

/// The events lidguard needs. The model events (`BeforeModel`, `AfterModel` — once per
/// streamed chunk —, `BeforeToolSelection`, `PreCompress`) would start a hook process per
/// model call and tell lidguard nothing a turn's start and end do not.
pub const REQUIRED_EVENTS: &[&str] = &[
    "SessionStart",
    "BeforeAgent",
    "BeforeTool",
    "AfterTool",
    "Notification",
    "AfterAgent",
    "SessionEnd",
];

/// The subcommand that marks lidguard's entries.
pub const SUBCOMMAND: &str = "gemini-hook";

/// The `name` of lidguard's entries (what `/hooks` lists and `hooksConfig.disabled` names).
const NAME: &str = "lidguard";

const SPEC: Spec = Spec {
    what: "Gemini CLI settings",
    subcommand: SUBCOMMAND,
    events: REQUIRED_EVENTS,
    layout: Layout::Nested,
    handler,
    conflicts,
    root_keys: None,
    duplicates: DuplicateKeys::LastWins,
};

fn handler(cmd: &HookCommand, _event: &str, timeout: u32) -> Handler {
    vec![
        ("type".to_owned(), "command".into()),
        ("name".to_owned(), NAME.into()),
        ("command".to_owned(), cmd.render(SUBCOMMAND).into()),
        (
            "timeout".to_owned(),
            CstInputValue::from(u64::from(timeout) * 1000),
        ),
    ]
}

/// AfterAgent hooks can send Gemini into another turn, and BeforeTool hooks can refuse the
/// question tool lidguard refuses with the lid closed.
fn conflicts(event: &str, _handler_type: &str) -> bool {
    matches!(event, "AfterAgent" | "BeforeTool")
}

/// Adds or corrects lidguard's entries in `settings.json` (`None`: the file does not exist);
/// `timeout` in seconds.
pub fn install(
    existing: Option<&str>,
    cmd: &HookCommand,
    timeout: u32,
) -> Result<Change, InstallError> {
    engine::install(existing, &SPEC, cmd, timeout)
}

/// Removes lidguard's entries; `before` as in [`crate::install`].
pub fn remove(
    existing: &str,
    cmd: &HookCommand,
    before: Option<&str>,
) -> Result<Change, InstallError> {
    engine::remove(existing, &SPEC, cmd, before)
}

/// Compares `settings.json` with what [`install`] writes; warns when `hooksConfig` turns hooks
/// off (`enabled: false`, or lidguard's name or command in `disabled`; configuration
/// reference, `hooksConfig`).
pub fn status(
    existing: Option<&str>,
    cmd: &HookCommand,
    timeout: u32,
) -> Result<HookStatus, InstallError> {
    let mut status = engine::status(existing, &SPEC, cmd, timeout)?;
    let config = existing
        .and_then(|t| engine::Doc::parse(Some(t), SPEC.what).ok())
        .and_then(|doc| doc.object().ok())
        .and_then(|root| root.get("hooksConfig")?.value()?.to_serde_value());
    if let Some(config) = config {
        if config.get("enabled") == Some(&Value::Bool(false)) {
            status.warnings.push(
                "hooksConfig.enabled is false: Gemini CLI runs no hooks from its settings"
                    .to_owned(),
            );
        }
        let ours = cmd.render(SUBCOMMAND);
        let disabled = config
            .get("disabled")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .any(|d| d == NAME || d == ours);
        if disabled {
            status.warnings.push(
                "hooksConfig.disabled names lidguard's hooks: Gemini CLI skips them".to_owned(),
            );
        }
    }
    Ok(status)
}

/// The `settings.json` fragment to merge by hand (`lidguard gemini-hooks settings-json`): what
/// [`install`] writes into a missing file.
pub fn snippet(cmd: &HookCommand, timeout: u32) -> String {
    engine::fresh(install(None, cmd, timeout))
}
