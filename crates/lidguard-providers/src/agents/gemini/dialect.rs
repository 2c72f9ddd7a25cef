//! Gemini CLI (`lidguard gemini-hook`).
//!
//! Sources: the hooks reference of Gemini CLI (`docs/hooks/reference.md`, shipped in the
//! `@google/gemini-cli` package and at <https://github.com/google-gemini/gemini-cli>), summed
//! up in `README.md` here, and payloads captured from 0.61.0 in `tests/fixtures/gemini/`. The
//! event name is in the payload (`hook_event_name`); fields are snake_case.

use crate::agent::Dialect;
use lidguard_core::event::{AgentEvent, Decision, DecisionKind, EventKind};
use lidguard_core::provider::Provider;
use serde::{Deserialize, Serialize};

use crate::{HookInput, ParseError, bounded, from_json, prompt_text, session_id};

/// The tool with which Gemini asks the user questions (offered in interactive sessions only).
const ASK_USER_TOOL: &str = "ask_user";

/// The notification Gemini sends when it shows a tool confirmation and waits for the user.
const TOOL_PERMISSION: &str = "ToolPermission";

/// The payload fields lidguard reads. Unknown fields are ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Wire {
    hook_event_name: Option<String>,
    session_id: Option<String>,
    transcript_path: Option<String>,
    cwd: Option<String>,
    /// `BeforeAgent`, `AfterAgent`: the user's prompt.
    prompt: Option<String>,
    /// `AfterAgent`: the turn's final answer.
    prompt_response: Option<String>,
    stop_hook_active: Option<bool>,
    tool_name: Option<String>,
    notification_type: Option<String>,
    /// `SessionEnd`: `exit`, `clear`, `logout`, `prompt_input_exit`, `other`.
    reason: Option<String>,
}

/// The dialect's entry in the agent table.
pub(crate) const DIALECT: Dialect = Dialect::new(parse, render, render_continuation);

/// Parses one Gemini CLI hook payload.
pub fn parse(input: &HookInput<'_>) -> Result<Vec<AgentEvent>, ParseError> {
    let wire: Wire = from_json(Provider::Gemini, input.stdin)?;
    let event_name = crate::event_name(Provider::Gemini, wire.hook_event_name.as_deref(), input)?;
    let asks_user = wire.tool_name.as_deref() == Some(ASK_USER_TOOL);
    let kind = match event_name.as_str() {
        "SessionStart" => EventKind::SessionStarted,
        "BeforeAgent" => EventKind::PromptSubmitted,
        // BeforeTool runs before Gemini's own policy (which may allow the tool, ask the user,
        // or deny it): it is the tool starting, not a permission request. An `allow` here would
        // not skip Gemini's confirmation, and a `deny` would refuse tools its policy allows.
        "BeforeTool" => EventKind::ToolStarting { asks_user },
        "AfterTool" => EventKind::ToolFinished { asks_user },
        // Gemini shows a tool confirmation and waits: the hook cannot answer it.
        "Notification" if wire.notification_type.as_deref() == Some(TOOL_PERMISSION) => {
            EventKind::WaitingForUser {
                state_reason: TOOL_PERMISSION.to_owned(),
            }
        }
        "AfterAgent" => EventKind::TurnStopped {
            stop_hook_active: wire.stop_hook_active.unwrap_or(false),
            running_work: None,
            can_continue: true,
            wakes_at: None,
        },
        "SessionEnd" => EventKind::SessionEnded {
            normal: true,
            defer_for_work: false,
        },
        _ => EventKind::Telemetry,
    };
    let cwd = wire.cwd.as_deref().or(input.process_cwd);
    let id = session_id(Provider::Gemini, wire.session_id.as_deref(), cwd);
    let mut event = AgentEvent::new(Provider::Gemini, id, event_name, kind);
    event.tool_name.clone_from(&wire.tool_name);
    event.cwd = cwd.map(str::to_owned);
    event.transcript_path.clone_from(&wire.transcript_path);
    event.reason.clone_from(&wire.reason);
    if matches!(event.kind, EventKind::PromptSubmitted) {
        event.prompt = prompt_text(wire.prompt.as_deref());
    }
    if matches!(event.kind, EventKind::TurnStopped { .. }) {
        event.last_assistant_message = bounded(wire.prompt_response.as_deref(), 4096);
    }
    Ok(vec![event])
}

/// `BeforeTool` and `AfterAgent` output: `decision` with `reason` (hooks reference).
#[derive(Serialize)]
struct DecisionOutput<'a> {
    decision: &'static str,
    reason: &'a str,
}

/// Renders a decision for Gemini CLI: only the question tool is refused with the lid closed
/// (`BeforeTool` `decision: "deny"`; the reason reaches the model as the tool's error).
pub fn render(hook_event: &str, decision: &Decision) -> Option<String> {
    match (hook_event, &decision.kind) {
        ("BeforeTool", DecisionKind::DenyAskUser { message }) => {
            serde_json::to_string(&DecisionOutput {
                decision: "deny",
                reason: message,
            })
            .ok()
        }
        _ => None,
    }
}

/// The hook output that continues the turn with `reply`: `AfterAgent` `decision: "block"`
/// (the reference's alias of `deny`) with `reason`, which Gemini sends to the model as the next
/// prompt of the same session (verified with 0.61.0: `-p` and the TUI).
pub fn render_continuation(reply: &str) -> Option<String> {
    serde_json::to_string(&DecisionOutput {
        decision: "block",
        reason: reply,
    })
    .ok()
}
