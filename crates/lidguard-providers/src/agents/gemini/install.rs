//! Gemini CLI: `hooks` in the user `settings.json` (`$GEMINI_CLI_HOME/.gemini/settings.json`,
//! else `~/.gemini/settings.json`), a file the user and Gemini share.
//!
//! Shape, as Gemini CLI 0.61.0 accepted it in `tests/e2e/capture/gemini/` (and its hooks
//! reference): `{"hooks": {"<Event>": [{"hooks": [{"type": "command", "name": "lidguard",
//! "command": "<cmd>", "timeout": N}]}]}}` — one matcher-less group per event. The timeout is
//! in **milliseconds**. Gemini runs the command with `bash -c` (PowerShell on Windows).

use jsonc_parser::cst::{CstInputValue, CstObject};
use serde_json::Value;

use crate::install::HookCommand;
use crate::install::engine::{Handler, Layout, Spec};

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

/// Gemini's `settings.json` for the JSON engine.
pub(crate) static SPEC: Spec = Spec::named("Gemini CLI settings", SUBCOMMAND, REQUIRED_EVENTS)
    .handlers(Layout::Nested, handler, conflicts)
    .warnings(warnings);

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

/// `hooksConfig` turns hooks off (`enabled: false`, or lidguard's name or command in
/// `disabled`; configuration reference, `hooksConfig`).
fn warnings(root: &CstObject, cmd: &HookCommand) -> Vec<String> {
    let mut warnings = Vec::new();
    let Some(config) = root
        .get("hooksConfig")
        .and_then(|p| p.value()?.to_serde_value())
    else {
        return warnings;
    };
    if config.get("enabled") == Some(&Value::Bool(false)) {
        warnings.push(
            "hooksConfig.enabled is false: Gemini CLI runs no hooks from its settings".to_owned(),
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
        warnings
            .push("hooksConfig.disabled names lidguard's hooks: Gemini CLI skips them".to_owned());
    }
    warnings
}
