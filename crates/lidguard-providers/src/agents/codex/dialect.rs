//! Codex CLI (`lidguard codex-hook`).
//!
//! Sources: the Codex hooks docs and the generated input/output schemas of `openai/codex`
//! (`codex-rs/hooks/schema/generated/`), summed up in `README.md` here, and
//! payloads captured from `@openai/codex` in `tests/fixtures/codex/`. The event name is in the
//! payload (`hook_event_name`); fields are snake_case.
//!
//! Output schemas are `additionalProperties: false`: any field Codex does not know makes the
//! hook run fail (and the tool proceed), so outputs carry exactly the documented fields.

use crate::agent::Dialect;
use crate::agents::hook_output;
use lidguard_core::event::{AgentEvent, Decision, DecisionKind, EventKind, WorkKind};
use lidguard_core::provider::Provider;
use serde::Deserialize;

use crate::{HookInput, ParseError, bounded, from_json, prompt_text, session_id};

/// The tool with which Codex asks the user (the TUI's `request_user_input`; the transcript
/// records its calls, `tests/fixtures/transcripts/codex/request-user-input-*.jsonl`).
const USER_INPUT_TOOL: &str = "request_user_input";

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Wire {
    hook_event_name: Option<String>,
    session_id: Option<String>,
    transcript_path: Option<String>,
    cwd: Option<String>,
    prompt: Option<String>,
    reason: Option<String>,
    tool_name: Option<String>,
    tool_input: Option<serde_json::Value>,
    agent_id: Option<String>,
    stop_hook_active: Option<bool>,
    last_assistant_message: Option<String>,
}

/// The dialect's entry in the agent table.
pub(crate) const DIALECT: Dialect = Dialect::new(parse, render, render_continuation);

/// Parses one Codex hook payload.
pub fn parse(input: &HookInput<'_>) -> Result<Vec<AgentEvent>, ParseError> {
    let wire: Wire = from_json(Provider::Codex, input.stdin)?;
    let event_name = crate::event_name(Provider::Codex, wire.hook_event_name.as_deref(), input)?;
    // The TUI's question tool: its own PreToolUse arrives right after the transcript showed the
    // question (1.4 ms later in a 0.171.0 run) and must not count as work that clears the
    // waiting state; its PostToolUse is the answer.
    let asks_user = wire.tool_name.as_deref() == Some(USER_INPUT_TOOL);
    let kind = match event_name.as_str() {
        "SessionStart" => EventKind::SessionStarted,
        "UserPromptSubmit" => EventKind::PromptSubmitted,
        "PreToolUse" => EventKind::ToolStarting { asks_user },
        "PostToolUse" => EventKind::ToolFinished { asks_user },
        "PermissionRequest" => EventKind::PermissionRequested {
            before_agent_rules: false,
        },
        // 0.152+: the user interrupted the turn; no Stop follows.
        "Interrupt" => EventKind::Interrupted,
        "SubagentStart" | "SubagentStop" => crate::work_event(
            wire.agent_id.as_ref(),
            WorkKind::Subagent,
            event_name == "SubagentStart",
        ),
        "Stop" => EventKind::TurnStopped {
            stop_hook_active: wire.stop_hook_active.unwrap_or(false),
            running_work: None,
            can_continue: true,
            wakes_at: None,
        },
        // Not in release docs but in the main-branch schemas; a failed turn, not a normal end.
        "StopFailure" => EventKind::TurnFailed,
        "SessionEnd" => EventKind::SessionEnded {
            normal: true,
            defer_for_work: false,
        },
        _ => EventKind::Telemetry,
    };
    let cwd = wire.cwd.as_deref().or(input.process_cwd);
    let mut event = AgentEvent::new(
        Provider::Codex,
        session_id(Provider::Codex, wire.session_id.as_deref(), cwd),
        event_name,
        kind,
    );
    crate::permission_details(&mut event, wire.tool_input.as_ref());
    event.tool_name = wire.tool_name;
    event.cwd = cwd.map(str::to_owned);
    event.transcript_path = wire.transcript_path;
    event.reason = wire.reason;
    if matches!(event.kind, EventKind::PromptSubmitted) {
        event.prompt = prompt_text(wire.prompt.as_deref());
    }
    event.last_assistant_message = bounded(wire.last_assistant_message.as_deref(), 4096);
    Ok(vec![event])
}

/// Renders a decision for Codex.
///
/// `PermissionRequest` takes `hookSpecificOutput.decision.behavior` (+ `message` on deny);
/// `interrupt` and `updatedInput` are reserved by Codex and would fail the hook. `PreToolUse`
/// refuses the question tool with `permissionDecision: deny` and its reason
/// (`pre-tool-use.command.output.schema.json` in `openai/codex`).
pub fn render(hook_event: &str, decision: &Decision) -> Option<String> {
    match (hook_event, &decision.kind) {
        ("PermissionRequest", DecisionKind::AllowPermission) => {
            hook_output::permission("allow", None)
        }
        ("PermissionRequest", DecisionKind::DenyPermission { message }) => {
            hook_output::permission("deny", Some(message))
        }
        ("PreToolUse", DecisionKind::DenyAskUser { message }) => {
            hook_output::pre_tool_use_deny(message)
        }
        _ => None,
    }
}

/// The answer to a continuable stop when the user's reply continues the turn. Source:
/// Codex hooks docs, Stop: `decision: "block"` with `reason` starts a continuation turn
/// whose user prompt is `reason`.
pub fn render_continuation(reply: &str) -> Option<String> {
    hook_output::block_stop(reply)
}
