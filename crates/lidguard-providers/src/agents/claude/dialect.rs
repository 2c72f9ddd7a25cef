//! Claude Code (`lidguard claude-hook`).
//!
//! Sources: the hooks reference (code.claude.com/docs/en/hooks,
//! summed up in `README.md` here) and payloads captured from
//! `@anthropic-ai/claude-code` 2.1 in `tests/fixtures/claude/`. The event name is in the payload
//! (`hook_event_name`); fields are snake_case.

use crate::agent::Dialect;
use crate::agents::hook_output;
use jiff::Timestamp;
use lidguard_core::event::{AgentEvent, Decision, DecisionKind, EventKind, WorkKind};
use lidguard_core::provider::Provider;
use serde::Deserialize;
use serde_json::Value;

use crate::{HookInput, ParseError, bounded, from_json, prompt_text, session_id};

/// What differs between the agents that speak Claude Code's hook dialect (the same event
/// names, payload fields and `hookSpecificOutput` answers).
pub(crate) struct Family {
    /// Whose events these are.
    pub(crate) provider: Provider,
    /// The tool with which the agent asks the user a question.
    pub(crate) ask_user_tool: &'static str,
    /// Tools whose `run_in_background: true` leaves work running after the call returns.
    pub(crate) background_tools: &'static [&'static str],
    /// A Notification `idle_prompt` ends the turn: the agent sends it, and no Stop, when the
    /// user stops it while the model answers (Droid); Claude's follows a Stop.
    pub(crate) idle_ends_turn: bool,
}

/// Claude Code itself.
static CLAUDE: Family = Family {
    provider: Provider::Claude,
    ask_user_tool: "AskUserQuestion",
    background_tools: &["Bash", "PowerShell", "Agent", "Task"],
    idle_ends_turn: false,
};

/// The payload fields lidguard reads. Unknown fields are ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Wire {
    hook_event_name: Option<String>,
    session_id: Option<String>,
    transcript_path: Option<String>,
    cwd: Option<String>,
    prompt: Option<String>,
    reason: Option<String>,
    /// `StopFailure`: the error type (`server_error`, `rate_limit`, ...).
    error: Option<Value>,
    is_interrupt: Option<bool>,
    stop_hook_active: Option<bool>,
    last_assistant_message: Option<String>,
    notification_type: Option<String>,
    agent_id: Option<String>,
    task_id: Option<String>,
    tool_name: Option<String>,
    tool_input: Option<Value>,
    tool_response: Option<Value>,
    /// `Stop` (2.1.197+): `[{id, type, status, ...}]`, empty when nothing runs.
    background_tasks: Option<Vec<BackgroundTask>>,
    /// `Stop` (2.1.33x): `[{id, schedule, recurring, prompt}]`, the crons that will wake the
    /// session; empty when none.
    session_crons: Option<Vec<SessionCron>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct SessionCron {
    schedule: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct BackgroundTask {
    id: String,
    status: Option<String>,
}

/// The dialect's entry in the agent table.
pub(crate) const DIALECT: Dialect = Dialect::new(parse, render, render_continuation);

/// Parses one Claude Code hook payload.
pub fn parse(input: &HookInput<'_>) -> Result<Vec<AgentEvent>, ParseError> {
    parse_as(&CLAUDE, input)
}

/// Parses one hook payload of an agent of Claude's dialect family.
pub(crate) fn parse_as(
    family: &Family,
    input: &HookInput<'_>,
) -> Result<Vec<AgentEvent>, ParseError> {
    let provider = family.provider;
    let wire: Wire = from_json(provider, input.stdin)?;
    let event_name = crate::event_name(provider, wire.hook_event_name.as_deref(), input)?;
    let tool = wire.tool_name.as_deref();
    let asks_user = tool == Some(family.ask_user_tool);
    let mut kinds = Vec::new();
    match event_name.as_str() {
        "SessionStart" => kinds.push(EventKind::SessionStarted),
        "UserPromptSubmit" => {
            let prompt = wire.prompt.as_deref().unwrap_or_default();
            if prompt.contains("<task-notification>") {
                // A background task reporting back: completion, not a new prompt.
                kinds.push(EventKind::WorkNoticeDelivered {
                    work_ids: task_notification_ids(prompt),
                });
            } else {
                kinds.push(EventKind::PromptSubmitted);
            }
        }
        "PreToolUse" => kinds.push(EventKind::ToolStarting { asks_user }),
        "PostToolUse" => {
            kinds.push(EventKind::ToolFinished { asks_user });
            kinds.extend(background_change(family, &wire));
        }
        "PostToolUseFailure" => {
            if wire.is_interrupt == Some(true) {
                kinds.push(EventKind::Interrupted);
            } else {
                kinds.push(EventKind::ToolFinished { asks_user });
            }
        }
        "PermissionRequest" => kinds.push(EventKind::PermissionRequested {
            before_agent_rules: false,
        }),
        "Elicitation" => kinds.push(EventKind::ElicitationRequested),
        // The user answered an MCP elicitation.
        "ElicitationResult" => kinds.push(EventKind::WaitingCleared {
            state_reason: event_name.clone(),
        }),
        "Notification" => kinds.push(match wire.notification_type.as_deref() {
            Some("idle_prompt") if family.idle_ends_turn => EventKind::Interrupted,
            kind => notification(kind),
        }),
        "SubagentStart" | "SubagentStop" => kinds.push(crate::work_event(
            wire.agent_id.as_ref(),
            WorkKind::Subagent,
            event_name == "SubagentStart",
        )),
        "TaskCreated" | "TaskCompleted" => kinds.push(crate::work_event(
            wire.task_id.as_ref(),
            WorkKind::Task,
            event_name == "TaskCreated",
        )),
        "Stop" => kinds.push(EventKind::TurnStopped {
            stop_hook_active: wire.stop_hook_active.unwrap_or(false),
            running_work: wire.background_tasks.as_ref().map(|tasks| {
                tasks
                    .iter()
                    .filter(|t| {
                        t.status
                            .as_deref()
                            .is_none_or(|s| s == "running" || s == "pending")
                    })
                    .map(|t| t.id.clone())
                    .collect()
            }),
            // Only Stop may ask before sleep; StopFailure and SessionEnd may not.
            can_continue: true,
            wakes_at: next_wake_up(wire.session_crons.as_deref(), input.now),
        }),
        // 2.1.337: the user (or a permission refused, a rewind) ended the turn; it fires
        // instead of Stop, and once.
        "Interrupt" => kinds.push(EventKind::Interrupted),
        "StopFailure" => kinds.push(EventKind::TurnFailed),
        "SessionEnd" => kinds.push(EventKind::SessionEnded {
            normal: true,
            defer_for_work: false,
        }),
        _ => kinds.push(EventKind::Telemetry),
    }
    let cwd = wire.cwd.as_deref().or(input.process_cwd);
    let id = session_id(provider, wire.session_id.as_deref(), cwd);
    let reason = wire.reason.clone().or_else(|| match &wire.error {
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    });
    let events = kinds
        .into_iter()
        .map(|kind| {
            let mut e = AgentEvent::new(provider, id.clone(), event_name.clone(), kind);
            e.tool_name.clone_from(&wire.tool_name);
            crate::permission_details(&mut e, wire.tool_input.as_ref());
            e.cwd = cwd.map(str::to_owned);
            e.transcript_path.clone_from(&wire.transcript_path);
            e.reason.clone_from(&reason);
            if matches!(e.kind, EventKind::PromptSubmitted) {
                // Qwen sends an empty prompt when the model goes on after tool results (captured):
                // no prompt, so the session keeps the one it has.
                e.prompt = prompt_text(wire.prompt.as_deref().filter(|p| !p.is_empty()));
            }
            e.last_assistant_message = bounded(wire.last_assistant_message.as_deref(), 4096);
            e
        })
        .collect();
    Ok(events)
}

/// The earliest time one of the session's crons wakes it; the clock is read only when there
/// are crons.
fn next_wake_up(
    crons: Option<&[SessionCron]>,
    now: fn() -> jiff::ZonedDateTime,
) -> Option<Timestamp> {
    let crons = crons.filter(|c| !c.is_empty())?;
    let now = now();
    crons
        .iter()
        .filter_map(|c| super::cron::next_fire(&c.schedule, &now))
        .map(|z| z.timestamp())
        .min()
}

/// Background work started or stopped by a finished tool call.
fn background_change(family: &Family, wire: &Wire) -> Option<EventKind> {
    let tool = wire.tool_name.as_deref()?;
    let input = wire.tool_input.as_ref();
    let response = wire.tool_response.as_ref();
    let field = |v: Option<&Value>, key: &str| {
        v.and_then(|v| v.get(key))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    if tool == "TaskStop" || tool == "KillShell" || tool == "KillBash" {
        let id = field(input, "task_id").or_else(|| field(input, "shell_id"))?;
        return Some(EventKind::WorkFinished { work_id: id });
    }
    let flag = |v: Option<&Value>, key: &str| {
        v.and_then(|v| v.get(key)).and_then(Value::as_bool) == Some(true)
    };
    // `run_in_background: true`, or (captured, 2.1) an Agent call Claude launched
    // asynchronously on its own: `tool_response: {"isAsync": true, "status": "async_launched",
    // "agentId": …}`.
    let in_background = flag(input, "run_in_background") || flag(response, "isAsync");
    let work = match tool {
        "Monitor" => WorkKind::Monitor,
        t if in_background && family.background_tools.contains(&t) => {
            if t == "Bash" || t == "PowerShell" {
                WorkKind::Shell
            } else {
                WorkKind::Task
            }
        }
        _ => return None,
    };
    // Captured: PostToolUse of a background Bash carries `tool_response.backgroundTaskId`,
    // the id that Stop's `background_tasks` and `<task-notification>` use later.
    let id = field(response, "backgroundTaskId")
        .or_else(|| field(response, "taskId"))
        .or_else(|| field(response, "agentId"))?;
    Some(EventKind::WorkStarted { work_id: id, work })
}

/// The ids named by `<task-id>…</task-id>` in a `<task-notification>` prompt.
fn task_notification_ids(prompt: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut rest = prompt;
    while let Some(start) = rest.find("<task-id>") {
        rest = &rest[start + "<task-id>".len()..];
        let Some(end) = rest.find("</task-id>") else {
            break;
        };
        ids.push(rest[..end].trim().to_owned());
        rest = &rest[end..];
    }
    ids
}

fn notification(kind: Option<&str>) -> EventKind {
    match kind {
        Some(reason @ ("permission_prompt" | "elicitation_dialog")) => EventKind::WaitingForUser {
            state_reason: reason.to_owned(),
        },
        Some(reason @ ("elicitation_complete" | "elicitation_response")) => {
            EventKind::WaitingCleared {
                state_reason: reason.to_owned(),
            }
        }
        _ => EventKind::Telemetry,
    }
}

/// Renders a decision for Claude Code.
///
/// A denied permission does not set `interrupt`: the model gets the message and can carry on
/// with what it can do without the denied action, instead of ending the turn.
pub fn render(hook_event: &str, decision: &Decision) -> Option<String> {
    match (hook_event, &decision.kind) {
        ("PermissionRequest", DecisionKind::AllowPermission) => {
            hook_output::permission("allow", None)
        }
        ("PermissionRequest", DecisionKind::DenyPermission { message }) => {
            hook_output::permission("deny", Some(message))
        }
        ("Elicitation", DecisionKind::CancelElicitation) => hook_output::elicitation("cancel"),
        _ => None,
    }
}

/// The answer to a continuable stop when the user's reply continues the turn. Source:
/// Claude Code hooks reference, Stop: `decision: "block"` with `reason`, which becomes
/// Claude's next instruction (a cap of 8 consecutive blocks applies).
pub fn render_continuation(reply: &str) -> Option<String> {
    hook_output::block_stop(reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_notification_ids_are_extracted() {
        let prompt = "<task-notification>\n<task-id>bacbaimp1</task-id>\n<status>completed</status>\n</task-notification>\n<task-notification><task-id> b2 </task-id></task-notification>";
        assert_eq!(task_notification_ids(prompt), ["bacbaimp1", "b2"]);
        assert!(task_notification_ids("<task-id>unterminated").is_empty());
    }
}
