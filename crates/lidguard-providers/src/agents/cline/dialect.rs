//! Cline CLI (`lidguard cline-hook --event <hook file>`).
//!
//! Sources: Cline's hooks reference (<https://docs.cline.bot/customization/hooks>), the
//! `@cline/core` bundle of `cline` 3.0.65 (its file-hook runner), and payloads captured from
//! 3.0.65 in `tests/fixtures/cline/`; summed up in `README.md` here. Cline runs the file named
//! after the event by the program on its first line and passes the file's path last, so the
//! event is the file's name; the payload names Cline's own hook (`hookName`: `agent_start`,
//! `tool_call`, …), which stands in when the file is not known. Fields are camelCase, except
//! `agent_id` and `parent_agent_id`.

use lidguard_core::event::{AgentEvent, Decision, DecisionKind, EventKind, WorkKind};
use lidguard_core::provider::Provider;
use serde::{Deserialize, Serialize};

use crate::{HookInput, ParseError, bounded, from_json, prompt_text, session_id};

/// The tool with which Cline asks the user a question.
const ASK_USER_TOOL: &str = "ask_question";

/// The payload fields lidguard reads. Unknown fields are ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Wire {
    /// Cline's name of the hook (`agent_start`, `tool_call`, `agent_end`, …).
    hook_name: Option<String>,
    /// The conversation of this agent run (one per agent, subagents included).
    task_id: Option<String>,
    session_context: Option<SessionContext>,
    workspace_roots: Option<Vec<String>>,
    #[serde(rename = "agent_id")]
    agent_id: Option<String>,
    /// Set for a subagent's events: the agent that started it.
    #[serde(rename = "parent_agent_id")]
    parent_agent_id: Option<String>,
    /// `PreToolUse`: the call as the model sent it.
    #[serde(rename = "tool_call")]
    tool_call: Option<ToolCall>,
    /// `PostToolUse`: the same call with its output.
    #[serde(rename = "tool_result")]
    tool_result: Option<ToolCall>,
    user_prompt_submit: Option<PromptSubmit>,
    /// `TaskComplete`: the run's final text.
    turn: Option<Turn>,
    /// `TaskCancel`, `SessionShutdown`: why.
    reason: Option<String>,
    /// `TaskError`: the error.
    error: Option<ErrorInfo>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct SessionContext {
    /// The session the user started (the CLI run or the interactive session).
    root_session_id: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ToolCall {
    name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PromptSubmit {
    prompt: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Turn {
    output_text: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ErrorInfo {
    message: Option<String>,
}

/// The hook file's event for Cline's own hook name (`HOOK_CONFIG_FILE_EVENT_MAP` in 3.0.65).
fn file_event(hook_name: &str) -> Option<&'static str> {
    Some(match hook_name {
        "agent_start" => "TaskStart",
        "agent_resume" => "TaskResume",
        "agent_abort" => "TaskCancel",
        "agent_end" => "TaskComplete",
        "agent_error" => "TaskError",
        "tool_call" => "PreToolUse",
        "tool_result" => "PostToolUse",
        "prompt_submit" => "UserPromptSubmit",
        "session_shutdown" => "SessionShutdown",
        _ => return None,
    })
}

/// The event of the hook file Cline ran: its name without extension (`…/hooks/PreToolUse`,
/// `PreToolUse.sh`), else the payload's hook name in the file's terms.
fn event_of(input: &HookInput<'_>, wire: &Wire) -> Result<String, ParseError> {
    let from_file = input.event_arg.and_then(|arg| {
        let name = arg.rsplit(['/', '\\']).next()?;
        let stem = name.split('.').next()?;
        (!stem.is_empty()).then(|| stem.to_owned())
    });
    from_file
        .or_else(|| {
            let name = wire.hook_name.as_deref()?;
            Some(file_event(name).unwrap_or(name).to_owned())
        })
        .ok_or(ParseError::NoEvent(Provider::Cline))
}

/// Parses one Cline hook payload.
pub fn parse(input: &HookInput<'_>) -> Result<Vec<AgentEvent>, ParseError> {
    let wire: Wire = from_json(Provider::Cline, input.stdin)?;
    let event_name = event_of(input, &wire)?;
    let call = wire.tool_call.as_ref().or(wire.tool_result.as_ref());
    let tool = call.and_then(|c| c.name.clone());
    let asks_user = tool.as_deref() == Some(ASK_USER_TOOL);
    // A subagent's run is work of its parent's session: its start and end are that work's.
    let subagent = wire.parent_agent_id.is_some();
    let work = |starting| crate::work_event(wire.agent_id.as_ref(), WorkKind::Subagent, starting);
    let kind = match event_name.as_str() {
        "TaskStart" | "TaskResume" if subagent => work(true),
        "TaskComplete" | "TaskError" | "TaskCancel" if subagent => work(false),
        // Each run of the agent (each message the user sends) starts with one of these.
        "TaskStart" | "TaskResume" | "UserPromptSubmit" => EventKind::PromptSubmitted,
        "PreToolUse" => EventKind::ToolStarting { asks_user },
        "PostToolUse" => EventKind::ToolFinished { asks_user },
        // Cline runs these detached and never reads their output: nothing can continue them.
        "TaskComplete" => EventKind::TurnStopped {
            stop_hook_active: false,
            running_work: None,
            can_continue: false,
            wakes_at: None,
        },
        "TaskError" => EventKind::TurnFailed,
        "TaskCancel" => EventKind::Interrupted,
        "SessionShutdown" => EventKind::SessionEnded {
            normal: true,
            defer_for_work: false,
        },
        _ => EventKind::Telemetry,
    };
    let cwd = wire
        .workspace_roots
        .as_ref()
        .and_then(|roots| roots.first())
        .map(String::as_str)
        .or(input.process_cwd);
    let given = wire
        .session_context
        .as_ref()
        .and_then(|c| c.root_session_id.as_deref())
        .or(wire.task_id.as_deref());
    let id = session_id(Provider::Cline, given, cwd);
    let mut event = AgentEvent::new(Provider::Cline, id, event_name, kind);
    event.tool_name = tool;
    event.cwd = cwd.map(str::to_owned);
    event.reason = wire
        .reason
        .clone()
        .or_else(|| wire.error.as_ref().and_then(|e| e.message.clone()));
    if matches!(event.kind, EventKind::PromptSubmitted) {
        event.prompt = prompt_text(
            wire.user_prompt_submit
                .as_ref()
                .and_then(|p| p.prompt.as_deref()),
        );
    }
    if matches!(event.kind, EventKind::TurnStopped { .. }) {
        event.last_assistant_message = bounded(
            wire.turn.as_ref().and_then(|t| t.output_text.as_deref()),
            4096,
        );
    }
    Ok(vec![event])
}

/// `PreToolUse` output (Cline's hook control JSON, the last line of stdout).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Control<'a> {
    cancel: bool,
    error_message: &'a str,
}

/// Renders a decision for Cline: only its question tool is refused with the lid closed.
/// `PreToolUse` is the one hook Cline waits for and reads; `{"cancel": true, "errorMessage"}`
/// stops the agent's run with that message (3.0.65: the run ends as cancelled). Cline has no
/// permission hook to answer.
pub fn render(hook_event: &str, decision: &Decision) -> Option<String> {
    match (hook_event, &decision.kind) {
        ("PreToolUse", DecisionKind::DenyAskUser { message }) => serde_json::to_string(&Control {
            cancel: true,
            error_message: message,
        })
        .ok(),
        _ => None,
    }
}

/// Cline reads no output of the hook that ends a run (`TaskComplete` runs detached): nothing
/// continues it.
pub fn render_continuation(_reply: &str) -> Option<String> {
    None
}
