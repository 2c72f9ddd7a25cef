//! GitHub Copilot CLI (`lidguard copilot-hook --event <name>`).
//!
//! Sources: the Copilot hooks reference (docs.github.com,
//! summed up in `README.md` here) and payloads captured from `@github/copilot` in
//! `tests/fixtures/copilot/`. The event name comes from `--event`: camelCase payloads do not
//! carry it. The casing of the configured event name also picks the payload dialect: camelCase
//! events send `sessionId`/`toolName`/`toolArgs`, PascalCase (VS Code compatible) events send
//! `session_id`/`tool_name`/`tool_input`; both are read.

use crate::agent::Dialect;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_read_after_their_marker() {
        assert_eq!(
            after(
                "<command started in background with shellId: bg2>",
                "shellId: "
            )
            .as_deref(),
            Some("bg2")
        );
        assert_eq!(
            after(
                "Agent started in background with agent_id: b003ef18-198f. You'll",
                "agent_id: "
            )
            .as_deref(),
            Some("b003ef18-198f")
        );
        assert_eq!(after("no marker", "shellId: "), None);
        assert_eq!(after("shellId: )", "shellId: "), None);
    }
}

/// The dialect's entry in the agent table.
pub(crate) const DIALECT: Dialect = Dialect::new(parse, render, render_continuation);

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
        // Captured (async-shell-notify): when background work finishes, Copilot starts a turn
        // by itself with a `<system_notification>` prompt. That is not the user asking for
        // work; the `notification` event that follows names what finished.
        "userPromptSubmitted"
            if wire
                .prompt
                .as_deref()
                .is_some_and(|p| p.trim_start().starts_with("<system_notification>")) =>
        {
            kinds.push(EventKind::WorkNoticeDelivered {
                work_ids: Vec::new(),
            });
        }
        "userPromptSubmitted" => kinds.push(EventKind::PromptSubmitted),
        "preToolUse" => kinds.push(EventKind::ToolStarting { asks_user }),
        "postToolUse" | "postToolUseFailure" => {
            kinds.push(EventKind::ToolFinished { asks_user });
            kinds.extend(background_change(&wire));
        }
        // Captured (bash-tool fixture): it fires for every tool call, before Copilot's own
        // rules, even for an auto-approved `echo hello`; a real prompt shows up afterwards as
        // notification(permission_prompt), which soft-locks the session.
        "permissionRequest" => kinds.push(EventKind::PermissionRequested {
            before_agent_rules: true,
        }),
        "subagentStart" | "subagentStop" => kinds.push(crate::work_event(
            wire.agent_id.as_ref().or(wire.agent_name.as_ref()),
            WorkKind::Subagent,
            normalize_event(&event_name) == "subagentStart",
        )),
        "notification" => kinds.push(notification(&wire)),
        // `Stop` is the VS Code-compatible alias of `agentStop`.
        "agentStop" => kinds.push(EventKind::TurnStopped {
            stop_hook_active: wire.stop_hook_active.unwrap_or(false),
            running_work: None,
            can_continue: true,
            wakes_at: None,
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
            state_reason: reason.to_owned(),
        },
        // Captured: `"message": "Shell command \"…\" (shellId: bg2) has completed successfully."`
        Some("shell_completed" | "shell_detached_completed") => {
            match wire.message.as_deref().and_then(|m| after(m, "shellId: ")) {
                Some(id) => EventKind::WorkFinished { work_id: id },
                None => EventKind::Telemetry,
            }
        }
        // agent_completed / agent_idle name the agent, not its id; subagentStop (with the id)
        // finishes it.
        _ => EventKind::Telemetry,
    }
}

/// Background shells and agents started or finished by a tool call. Shapes from the captured
/// async-shell, detached-shell and task-agent fixtures.
fn background_change(wire: &Wire) -> Option<EventKind> {
    let tool = wire.tool_name.as_deref()?;
    let args = wire.tool_args.as_ref();
    let arg = |key: &str| {
        args.and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let result = wire
        .tool_result
        .as_ref()
        .and_then(|r| r.get("textResultForLlm"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    match tool {
        // `mode: "async"` (optionally `detach: true`) starts a shell that outlives the call:
        // "<command started in background with shellId: bg2>".
        "bash" | "powershell" if arg("mode").as_deref() == Some("async") => {
            let id = arg("shellId").or_else(|| after(result, "shellId: "))?;
            Some(EventKind::WorkStarted {
                work_id: id,
                work: WorkKind::Shell,
            })
        }
        // "<shellId: bg1 completed with exit code 0>"
        "read_bash" | "read_powershell" if result.contains(" completed with exit code") => {
            Some(EventKind::WorkFinished {
                work_id: arg("shellId").or_else(|| after(result, "shellId: "))?,
            })
        }
        "stop_bash" | "stop_powershell" => Some(EventKind::WorkFinished {
            work_id: arg("shellId")?,
        }),
        // `mode: "background"`: "Agent started in background with agent_id: <uuid>. …"
        "task" if arg("mode").as_deref() == Some("background") => Some(EventKind::WorkStarted {
            work_id: after(result, "agent_id: ")?,
            work: WorkKind::Task,
        }),
        // Resuming a background agent starts its work again.
        "write_agent" => Some(EventKind::WorkStarted {
            work_id: arg("agent_id").or_else(|| arg("agentId"))?,
            work: WorkKind::Task,
        }),
        "read_agent"
            if ["idle", "completed", "failed"]
                .iter()
                .any(|s| result.contains(s)) =>
        {
            Some(EventKind::WorkFinished {
                work_id: arg("agent_id").or_else(|| arg("agentId"))?,
            })
        }
        _ => None,
    }
}

/// The id right after `marker` in `text`: letters, digits, `-` and `_`.
fn after(text: &str, marker: &str) -> Option<String> {
    let start = text.find(marker)? + marker.len();
    let id: String = text[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    (!id.is_empty()).then_some(id)
}

/// `permissionRequest` output: flat `behavior` (+ `message` on deny) (hooks reference; README.md here).
#[derive(Serialize)]
struct PermissionOutput {
    behavior: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

/// `preToolUse` output: flat `permissionDecision` + `permissionDecisionReason` (hooks reference; README.md here).
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

/// The answer to a continuable stop when the user's reply continues the turn. Source:
/// Copilot CLI hooks docs, agentStop: `decision: "block"` with `reason`, the next prompt
/// (a cap of 8 consecutive blocks applies).
#[derive(Serialize)]
struct CopilotStopContinuation<'a> {
    decision: &'static str,
    reason: &'a str,
}

/// The hook output that continues the turn with `reply`.
pub fn render_continuation(reply: &str) -> Option<String> {
    serde_json::to_string(&CopilotStopContinuation {
        decision: "block",
        reason: reply,
    })
    .ok()
}
