//! Cursor (`lidguard cursor-hook`).
//!
//! Sources: Cursor's hooks documentation (<https://cursor.com/docs/agent/hooks>), summed up in
//! `README.md` here. The fixtures in `tests/fixtures/cursor/` are written from its documented
//! examples (each says so), not captured: Cursor's client cannot run here. The event name is
//! in the payload (`hook_event_name`); fields are snake_case; the session is the
//! `conversation_id`.

use crate::agent::Dialect;
use lidguard_core::event::{AgentEvent, Decision, DecisionKind, EventKind};
use lidguard_core::provider::Provider;
use serde::{Deserialize, Serialize};

use crate::{HookInput, ParseError, bounded, from_json, prompt_text, session_id};

/// The payload fields lidguard reads. Unknown fields are ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Wire {
    hook_event_name: Option<String>,
    conversation_id: Option<String>,
    /// `sessionStart`/`sessionEnd` name the conversation this way too.
    session_id: Option<String>,
    transcript_path: Option<String>,
    workspace_roots: Vec<String>,
    cwd: Option<String>,
    prompt: Option<String>,
    tool_name: Option<String>,
    /// `stop`: `completed`, `aborted` or `error`.
    status: Option<String>,
    /// `stop`: how many follow-ups already continued this loop.
    loop_count: Option<u64>,
    /// `sessionEnd`: `completed`, `aborted`, `error`, `window_close`, `user_close`.
    reason: Option<String>,
    /// `postToolUseFailure`: the user interrupted the tool.
    is_interrupt: Option<bool>,
    /// `afterAgentResponse`: the assistant's message.
    text: Option<String>,
}

/// The dialect's entry in the agent table.
pub(crate) const DIALECT: Dialect = Dialect::new(parse, render, render_continuation);

/// Parses one Cursor hook payload.
pub fn parse(input: &HookInput<'_>) -> Result<Vec<AgentEvent>, ParseError> {
    let wire: Wire = from_json(Provider::Cursor, input.stdin)?;
    let event_name = crate::event_name(Provider::Cursor, wire.hook_event_name.as_deref(), input)?;
    let kind = match event_name.as_str() {
        "sessionStart" => EventKind::SessionStarted,
        "beforeSubmitPrompt" => EventKind::PromptSubmitted,
        "preToolUse" | "subagentStart" => EventKind::ToolStarting { asks_user: false },
        "postToolUseFailure" if wire.is_interrupt == Some(true) => EventKind::Interrupted,
        "postToolUse"
        | "postToolUseFailure"
        | "afterShellExecution"
        | "afterMCPExecution"
        | "afterFileEdit"
        | "subagentStop" => EventKind::ToolFinished { asks_user: false },
        // Both fire for every command or MCP call, before Cursor's own rules (its allow list
        // and auto-run mode): only an `allow` policy applies, a `deny` would refuse what those
        // rules allow.
        "beforeShellExecution" | "beforeMCPExecution" => EventKind::PermissionRequested {
            before_agent_rules: true,
        },
        "stop" => match wire.status.as_deref() {
            Some("aborted") => EventKind::Interrupted,
            Some("error") => EventKind::TurnFailed,
            _ => EventKind::TurnStopped {
                stop_hook_active: wire.loop_count.is_some_and(|n| n > 0),
                running_work: None,
                can_continue: true,
                wakes_at: None,
            },
        },
        "sessionEnd" => EventKind::SessionEnded {
            normal: wire.reason.as_deref() == Some("completed"),
            defer_for_work: false,
        },
        _ => EventKind::Telemetry,
    };
    let cwd = wire
        .cwd
        .as_deref()
        .or(wire.workspace_roots.first().map(String::as_str))
        .or(input.process_cwd);
    let conversation = wire
        .conversation_id
        .as_deref()
        .or(wire.session_id.as_deref());
    let id = session_id(Provider::Cursor, conversation, cwd);
    let mut event = AgentEvent::new(Provider::Cursor, id, event_name, kind);
    event.tool_name.clone_from(&wire.tool_name);
    event.cwd = cwd.map(str::to_owned);
    event.transcript_path.clone_from(&wire.transcript_path);
    event.reason = wire.reason.clone().or_else(|| wire.status.clone());
    if matches!(event.kind, EventKind::PromptSubmitted) {
        event.prompt = prompt_text(wire.prompt.as_deref());
    }
    event.last_assistant_message = bounded(wire.text.as_deref(), 4096);
    Ok(vec![event])
}

/// `beforeShellExecution` / `beforeMCPExecution` output: `permission` with a message for the
/// user and one for the model.
#[derive(Serialize)]
struct PermissionOutput<'a> {
    permission: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    user_message: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent_message: Option<&'a str>,
}

/// Renders a decision for Cursor.
pub fn render(hook_event: &str, decision: &Decision) -> Option<String> {
    if !matches!(hook_event, "beforeShellExecution" | "beforeMCPExecution") {
        return None;
    }
    let output = match &decision.kind {
        DecisionKind::AllowPermission => PermissionOutput {
            permission: "allow",
            user_message: None,
            agent_message: None,
        },
        DecisionKind::DenyPermission { message } => PermissionOutput {
            permission: "deny",
            user_message: Some(message),
            agent_message: Some(message),
        },
        _ => return None,
    };
    serde_json::to_string(&output).ok()
}

/// `stop` output that continues: `followup_message` is submitted as the next user message.
#[derive(Serialize)]
struct StopContinuation<'a> {
    followup_message: &'a str,
}

/// The hook output that continues the turn with `reply`.
pub fn render_continuation(reply: &str) -> Option<String> {
    serde_json::to_string(&StopContinuation {
        followup_message: reply,
    })
    .ok()
}
