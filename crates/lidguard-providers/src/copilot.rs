//! GitHub Copilot CLI (`lidguard copilot-hook --event <name>`).
//!
//! Sources: the Copilot hooks reference (docs.github.com, restated in
//! shared/reference/hook-contracts.md §3) and payloads captured from `@github/copilot` in
//! `tests/fixtures/copilot/`. The event name comes from `--event`: camelCase payloads do not
//! carry it. The casing of the configured event name also picks the payload dialect: camelCase
//! events send `sessionId`/`toolName`/`toolArgs`, PascalCase (VS Code compatible) events send
//! `session_id`/`tool_name`/`tool_input`; both are read.

use lidguard_core::event::{AgentEvent, Decision, DecisionKind, EventKind, WorkKind};
use lidguard_core::provider::Provider;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{HookInput, ParseError, bounded, from_json, prompt_text, session_id};

/// The tool with which Copilot asks the user (PascalCase hooks name it `AskUserQuestion`).
const ASK_USER_TOOLS: [&str; 2] = ["ask_user", "AskUserQuestion"];

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Wire {
    #[serde(alias = "session_id")]
    session_id: Option<String>,
    cwd: Option<String>,
    #[serde(alias = "transcript_path")]
    transcript_path: Option<String>,
    prompt: Option<String>,
    reason: Option<String>,
    #[serde(alias = "tool_name")]
    tool_name: Option<String>,
    #[serde(alias = "tool_input", alias = "toolInput")]
    tool_args: Option<Value>,
    #[serde(alias = "tool_result", alias = "tool_response")]
    tool_result: Option<Value>,
    #[serde(alias = "notification_type")]
    notification_type: Option<String>,
    #[serde(alias = "stop_hook_active")]
    stop_hook_active: Option<bool>,
    #[serde(alias = "last_assistant_message")]
    last_assistant_message: Option<String>,
    #[serde(alias = "agent_id")]
    agent_id: Option<String>,
    #[serde(alias = "agent_name")]
    agent_name: Option<String>,
    message: Option<String>,
}

/// Parses one Copilot hook payload for the configured `--event`.
pub fn parse(input: &HookInput<'_>) -> Result<Vec<AgentEvent>, ParseError> {
    let event_name = input
        .event_arg
        .map(str::to_owned)
        .ok_or(ParseError::NoEvent(Provider::Copilot))?;
    let wire: Wire = from_json(Provider::Copilot, input.stdin)?;
    let tool = wire.tool_name.as_deref();
    let asks_user = tool.is_some_and(|t| ASK_USER_TOOLS.contains(&t));
    let mut kinds = Vec::new();
    match normalize_event(&event_name) {
        "sessionStart" | "errorOccurred" | "userPromptTransformed" | "preCompact" => {
            kinds.push(EventKind::Telemetry);
        }
        "userPromptSubmitted" => kinds.push(EventKind::PromptSubmitted),
        "preToolUse" => kinds.push(EventKind::ToolStarting { asks_user }),
        "postToolUse" | "postToolUseFailure" => {
            kinds.push(EventKind::ToolFinished { asks_user });
            kinds.extend(background_change(&wire));
        }
        "permissionRequest" => kinds.push(EventKind::PermissionRequested),
        "subagentStart" => kinds.push(match wire.agent_id.as_ref().or(wire.agent_name.as_ref()) {
            Some(id) => EventKind::WorkStarted {
                work_id: id.clone(),
                work: WorkKind::Subagent,
            },
            None => EventKind::Telemetry,
        }),
        "subagentStop" => kinds.push(match wire.agent_id.as_ref().or(wire.agent_name.as_ref()) {
            Some(id) => EventKind::WorkFinished {
                work_id: id.clone(),
            },
            None => EventKind::Telemetry,
        }),
        "notification" => kinds.push(notification(&wire)),
        // `Stop` is the VS Code-compatible alias of `agentStop`.
        "agentStop" => kinds.push(EventKind::TurnStopped {
            stop_hook_active: wire.stop_hook_active.unwrap_or(false),
            running_work: None,
            can_continue: true,
        }),
        // Fires once per completed `-p` turn too; background work defers it like agentStop.
        "sessionEnd" => kinds.push(EventKind::SessionEnded {
            normal: wire.reason.as_deref().is_none_or(|r| r == "complete"),
            defer_for_work: true,
        }),
        _ => kinds.push(EventKind::Telemetry),
    }
    let cwd = wire.cwd.as_deref().or(input.process_cwd);
    let id = session_id(Provider::Copilot, wire.session_id.as_deref(), cwd);
    Ok(kinds
        .into_iter()
        .map(|kind| {
            let mut e = AgentEvent::new(Provider::Copilot, id.clone(), event_name.clone(), kind);
            e.tool_name.clone_from(&wire.tool_name);
            e.cwd = cwd.map(str::to_owned);
            e.transcript_path.clone_from(&wire.transcript_path);
            e.reason.clone_from(&wire.reason);
            if matches!(e.kind, EventKind::PromptSubmitted) {
                e.prompt = prompt_text(wire.prompt.as_deref());
            }
            e.last_assistant_message = bounded(wire.last_assistant_message.as_deref(), 4096);
            e
        })
        .collect())
}

/// Maps PascalCase (VS Code) event names onto the camelCase ones.
fn normalize_event(name: &str) -> &str {
    match name {
        "SessionStart" => "sessionStart",
        "SessionEnd" => "sessionEnd",
        "UserPromptSubmit" => "userPromptSubmitted",
        "PreToolUse" => "preToolUse",
        "PostToolUse" => "postToolUse",
        "PostToolUseFailure" => "postToolUseFailure",
        "PermissionRequest" => "permissionRequest",
        "Stop" => "agentStop",
        "SubagentStart" => "subagentStart",
        "SubagentStop" => "subagentStop",
        "ErrorOccurred" => "errorOccurred",
        "PreCompact" => "preCompact",
        "Notification" => "notification",
        other => other,
    }
}

fn notification(wire: &Wire) -> EventKind {
    match wire.notification_type.as_deref() {
        Some(reason @ ("permission_prompt" | "elicitation_dialog")) => EventKind::WaitingForUser {
            reason: reason.to_owned(),
        },
        _ => EventKind::Telemetry,
    }
}

/// Background shells and agents started or finished by a tool call.
fn background_change(wire: &Wire) -> Option<EventKind> {
    let _ = (&wire.tool_args, &wire.tool_result, &wire.message);
    None
}

/// `permissionRequest` output: flat `behavior` (+ `message` on deny) (docs §3.3).
#[derive(Serialize)]
struct PermissionOutput {
    behavior: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

/// `preToolUse` output: flat `permissionDecision` + `permissionDecisionReason` (docs §3.3).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PreToolUseOutput {
    permission_decision: &'static str,
    permission_decision_reason: String,
}

/// Renders a decision for Copilot.
pub fn render(hook_event: &str, decision: &Decision) -> Option<String> {
    let json = match (normalize_event(hook_event), &decision.kind) {
        ("permissionRequest", DecisionKind::AllowPermission) => {
            serde_json::to_string(&PermissionOutput {
                behavior: "allow",
                message: None,
            })
        }
        ("permissionRequest", DecisionKind::DenyPermission { message }) => {
            serde_json::to_string(&PermissionOutput {
                behavior: "deny",
                message: Some(message.clone()),
            })
        }
        ("preToolUse", DecisionKind::DenyAskUser { message }) => {
            serde_json::to_string(&PreToolUseOutput {
                permission_decision: "deny",
                permission_decision_reason: message.clone(),
            })
        }
        _ => return None,
    };
    json.ok()
}
