//! OpenCode (`lidguard opencode-hook --event <name>`), called by lidguard's OpenCode plugin.
//!
//! OpenCode has no shell hooks: its plugins run in-process. lidguard's plugin forwards the
//! plugin hook points and bus events it cares about to this command, with the name in
//! `--event` and a payload it shapes itself: `{eventName, sessionID, workingDirectory, ...}`
//! (see the plugin asset). Sources for what OpenCode delivers to plugins: the plugin API
//! (`@opencode-ai/plugin`, restated in shared/reference/hook-contracts.md §4) and the raw
//! plugin inputs captured from `opencode-ai` in `tests/fixtures/opencode/`.

use lidguard_core::event::{AgentEvent, Decision, DecisionKind, EventKind};
use lidguard_core::provider::Provider;
use serde::{Deserialize, Serialize};

use crate::{HookInput, ParseError, bounded, from_json, prompt_text, session_id};

/// OpenCode's tool for asking the user.
const ASK_USER_TOOL: &str = "question";

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Wire {
    #[serde(rename = "sessionID", alias = "sessionId")]
    session_id: Option<String>,
    working_directory: Option<String>,
    prompt: Option<String>,
    tool_name: Option<String>,
    session_status: Option<String>,
    stop_hook_active: Option<bool>,
    last_assistant_message: Option<String>,
}

/// Parses one payload forwarded by the plugin for `--event`.
pub fn parse(input: &HookInput<'_>) -> Result<Vec<AgentEvent>, ParseError> {
    let event_name = input
        .event_arg
        .map(str::to_owned)
        .ok_or(ParseError::NoEvent(Provider::OpenCode))?;
    let wire: Wire = from_json(Provider::OpenCode, input.stdin)?;
    let asks_user = wire.tool_name.as_deref() == Some(ASK_USER_TOOL);
    let mut kinds = Vec::new();
    match event_name.as_str() {
        "chat.message" => kinds.push(EventKind::PromptSubmitted),
        "tool.execute.before" => kinds.push(EventKind::ToolStarting { asks_user }),
        "tool.execute.after" => kinds.push(EventKind::ToolFinished { asks_user }),
        // The typed `permission.ask` hook (never called by OpenCode 1.18, but declared).
        "permission.ask" => kinds.push(EventKind::PermissionRequested {
            before_agent_rules: false,
        }),
        // The permission request as OpenCode 1.18 actually delivers it: a bus event. The
        // plugin can answer it; until someone does, the session waits for the user.
        "permission.asked" => {
            kinds.push(EventKind::PermissionRequested {
                before_agent_rules: false,
            });
            kinds.push(EventKind::WaitingForUser {
                state_reason: event_name.clone(),
            });
        }
        "question.asked" | "question.v2.asked" | "form.created" => {
            kinds.push(EventKind::WaitingForUser {
                state_reason: event_name.clone(),
            });
        }
        "permission.replied"
        | "question.replied"
        | "question.rejected"
        | "question.v2.replied"
        | "question.v2.rejected"
        | "form.replied"
        | "form.cancelled" => {
            kinds.push(EventKind::WaitingCleared {
                state_reason: event_name.clone(),
            });
        }
        // The end of a turn. Only these two may ask before sleep.
        "session.idle" | "session.execution.succeeded" => kinds.push(turn_stopped(&wire)),
        "session.status" if wire.session_status.as_deref() == Some("idle") => {
            kinds.push(turn_stopped(&wire));
        }
        "session.deleted"
        | "session.error"
        | "session.execution.failed"
        | "session.execution.interrupted" => kinds.push(EventKind::SessionEnded {
            normal: false,
            defer_for_work: false,
        }),
        _ => kinds.push(EventKind::Telemetry),
    }
    let cwd = wire.working_directory.as_deref().or(input.process_cwd);
    let id = session_id(Provider::OpenCode, wire.session_id.as_deref(), cwd);
    Ok(kinds
        .into_iter()
        .map(|kind| {
            let mut e = AgentEvent::new(Provider::OpenCode, id.clone(), event_name.clone(), kind);
            e.tool_name.clone_from(&wire.tool_name);
            e.cwd = cwd.map(str::to_owned);
            if matches!(e.kind, EventKind::PromptSubmitted) {
                e.prompt = prompt_text(wire.prompt.as_deref());
            }
            e.last_assistant_message = bounded(wire.last_assistant_message.as_deref(), 4096);
            e
        })
        .collect())
}

fn turn_stopped(wire: &Wire) -> EventKind {
    EventKind::TurnStopped {
        stop_hook_active: wire.stop_hook_active.unwrap_or(false),
        running_work: None,
        can_continue: true,
    }
}

/// What the plugin reads back: `status` for the permission (and a message for the model where
/// the mechanism can carry one).
#[derive(Serialize)]
struct PermissionOutput {
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

/// Renders a decision for the plugin.
pub fn render(hook_event: &str, decision: &Decision) -> Option<String> {
    if !matches!(hook_event, "permission.ask" | "permission.asked") {
        return None;
    }
    let output = match &decision.kind {
        DecisionKind::AllowPermission => PermissionOutput {
            status: "allow",
            message: None,
        },
        DecisionKind::DenyPermission { message } => PermissionOutput {
            status: "deny",
            message: Some(message.clone()),
        },
        _ => return None,
    };
    serde_json::to_string(&output).ok()
}
