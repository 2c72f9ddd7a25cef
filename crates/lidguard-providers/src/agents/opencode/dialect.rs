//! OpenCode (`lidguard opencode-hook --event <name>`), called by lidguard's OpenCode plugin.
//!
//! OpenCode has no shell hooks: plugins run in-process. lidguard's plugin (the asset
//! `lidguard.js` next to this file, see [`plugin_js`]) is a thin forwarder: for the hook points and
//! bus events lidguard cares about it runs this command with the hook name or event type in
//! `--event` and, on stdin, what OpenCode handed the plugin — `{hook, input, output}` — plus the
//! fields only the plugin can know: `directory` (the plugin's working directory),
//! `lastAssistantMessage` (the last assistant text part, on stop events) and `stopHookActive`
//! (on `session.idle`: this idle ends a turn the plugin started by sending the user's
//! ask-before-sleep reply back into the session). All interpretation happens here.
//!
//! Ask before sleep: `session.idle` is the only continuable stop the plugin forwards (OpenCode 2's
//! `session.execution.succeeded` is understood too). When the daemon answers it with the user's
//! reply, this hook prints [`render_continuation`] and the plugin prompts the same session with
//! the reply. That needs OpenCode, its server and the session alive: it works under `opencode
//! serve` (and the TUI, which runs one), not under `opencode run`, which exits at the first idle.
//!
//! Sources: the V1 plugin API (`@opencode-ai/plugin`,
//! summed up in `README.md` here) and the raw plugin inputs captured from
//! `opencode-ai` 1.18.33 in `tests/fixtures/opencode/`.

use crate::agent::Dialect;
use lidguard_core::event::{AgentEvent, Decision, DecisionKind, EventKind};
use lidguard_core::provider::Provider;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{HookInput, ParseError, bounded, from_json, prompt_text, session_id};

/// OpenCode's tool for asking the user.
const ASK_USER_TOOL: &str = "question";

/// The plugin asset; `__LIDGUARD_COMMAND__` stands for the hook command as a JSON array,
/// `__LIDGUARD_PROVIDER__` for the agent's `--provider` name.
const PLUGIN_TEMPLATE: &str = include_str!("lidguard.js");

/// The plugin file for `command` (the program and its leading arguments, e.g.
/// `["/usr/local/bin/lidguard", "opencode-hook"]`).
pub fn plugin_js(command: &[String]) -> String {
    plugin_js_for("opencode", command)
}

/// The plugin file of the agent whose `--provider` name is `provider`.
pub(crate) fn plugin_js_for(provider: &str, command: &[String]) -> String {
    let literal = serde_json::to_string(command).unwrap_or_else(|_| "[]".to_owned());
    PLUGIN_TEMPLATE
        .replace("__LIDGUARD_COMMAND__", &literal)
        .replace("__LIDGUARD_PROVIDER__", provider)
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Wire {
    hook: Option<String>,
    input: Value,
    output: Value,
    directory: Option<String>,
    last_assistant_message: Option<String>,
    #[serde(alias = "stop_hook_active")]
    stop_hook_active: Option<bool>,
}

/// The dialect's entry in the agent table.
pub(crate) const DIALECT: Dialect = Dialect::new(parse, render, render_continuation);

/// Parses one forwarded plugin call for `--event`.
pub fn parse(input: &HookInput<'_>) -> Result<Vec<AgentEvent>, ParseError> {
    parse_as(Provider::OpenCode, input)
}

/// Parses one forwarded plugin call of an agent of OpenCode's plugin family (OpenCode, Kilo).
pub(crate) fn parse_as(
    provider: Provider,
    input: &HookInput<'_>,
) -> Result<Vec<AgentEvent>, ParseError> {
    let wire: Wire = from_json(provider, input.stdin)?;
    let event_name = input
        .event_arg
        .map(str::to_owned)
        .or_else(|| {
            bus_event(&wire)
                .and_then(|e| str_at(e, &["type"]))
                .map(str::to_owned)
        })
        .or_else(|| wire.hook.clone())
        .ok_or(ParseError::NoEvent(provider))?;
    // Hook points carry the session in `input`; bus events in `input.event.properties`.
    let properties = bus_event(&wire).and_then(|e| e.get("properties"));
    let session = str_at(&wire.input, &["sessionID"])
        .or_else(|| properties.and_then(|p| str_at(p, &["sessionID"])))
        .map(str::to_owned);
    let tool = str_at(&wire.input, &["tool"]).map(str::to_owned);
    let asks_user = tool.as_deref() == Some(ASK_USER_TOOL);

    let mut kinds = Vec::new();
    match event_name.as_str() {
        "chat.message" => kinds.push(EventKind::PromptSubmitted),
        "tool.execute.before" => kinds.push(EventKind::ToolStarting { asks_user }),
        "tool.execute.after" => kinds.push(EventKind::ToolFinished { asks_user }),
        // The typed hook: declared by the plugin API, never called by 1.18.33 (captured).
        "permission.ask" => kinds.push(EventKind::PermissionRequested {
            before_agent_rules: false,
        }),
        // How 1.18 actually asks: a bus event, answered through the SDK by the plugin. Until
        // someone answers, the session waits for the user.
        "permission.asked" | "permission.v2.asked" => {
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
        // The end of a turn; only these may ask before sleep: the plugin sends the user's reply
        // back into the session after them (OpenCode 1 `session.idle`, OpenCode 2
        // `session.execution.succeeded`).
        "session.idle" | "session.execution.succeeded" => kinds.push(turn_stopped(&wire, true)),
        // Also the end of a turn, but the plugin does not forward it and never continues after
        // it (1.18.33 sends `session.idle` right after it: that one may ask).
        "session.status" => {
            let idle = properties.and_then(|p| str_at(p, &["status", "type"])) == Some("idle");
            kinds.push(if idle {
                turn_stopped(&wire, false)
            } else {
                EventKind::Telemetry
            });
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

    let cwd = wire.directory.as_deref().or(input.process_cwd);
    let id = session_id(provider, session.as_deref(), cwd);
    let prompt = prompt_parts(&wire.output);
    Ok(kinds
        .into_iter()
        .map(|kind| {
            let mut e = AgentEvent::new(provider, id.clone(), event_name.clone(), kind);
            e.tool_name.clone_from(&tool);
            e.cwd = cwd.map(str::to_owned);
            if matches!(e.kind, EventKind::PromptSubmitted) {
                e.prompt = prompt_text(prompt.as_deref());
            }
            e.last_assistant_message = bounded(wire.last_assistant_message.as_deref(), 4096);
            e
        })
        .collect())
}

/// The end of a turn. `can_continue`: ask before sleep may continue it (only the stops after
/// which lidguard's plugin sends the user's reply back into the session). `stopHookActive`
/// comes from the plugin: this stop ends a turn the plugin started with such a reply.
fn turn_stopped(wire: &Wire, can_continue: bool) -> EventKind {
    EventKind::TurnStopped {
        stop_hook_active: can_continue && wire.stop_hook_active.unwrap_or(false),
        running_work: None,
        can_continue,
        wakes_at: None,
    }
}

/// `input.event` of a forwarded bus event.
fn bus_event(wire: &Wire) -> Option<&Value> {
    wire.input.get("event")
}

fn str_at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter()
        .try_fold(value, |v, key| v.get(key))
        .and_then(Value::as_str)
}

/// The prompt text of a `chat.message`: its text parts joined (captured: `output.parts`).
fn prompt_parts(output: &Value) -> Option<String> {
    let parts = output.get("parts")?.as_array()?;
    let texts: Vec<&str> = parts
        .iter()
        .filter(|p| str_at(p, &["type"]) == Some("text"))
        .filter_map(|p| str_at(p, &["text"]))
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// What the plugin reads back for a permission: `status` (`allow` or `deny`), which it turns
/// into its reply (`once` or `reject`), and a message for the model where the reply can carry it.
#[derive(Serialize)]
struct PermissionOutput {
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

/// Renders a decision for the plugin.
pub fn render(hook_event: &str, decision: &Decision) -> Option<String> {
    if !matches!(
        hook_event,
        "permission.ask" | "permission.asked" | "permission.v2.asked"
    ) {
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

/// The answer to a continuable stop when the user's reply continues the turn. Source:
/// lidguard's own OpenCode plugin (`lidguard.js` in this folder) reads this after
/// `session.idle` and sends `reason` back into the session as a new prompt.
#[derive(Serialize)]
struct OpenCodeStopContinuation<'a> {
    decision: &'static str,
    reason: &'a str,
}

/// The hook output that continues the turn with `reply`.
pub fn render_continuation(reply: &str) -> Option<String> {
    serde_json::to_string(&OpenCodeStopContinuation {
        decision: "block",
        reason: reply,
    })
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_carries_the_command_as_a_json_array() {
        let js = plugin_js(&["/opt/lidguard bin/lidguard".into(), "opencode-hook".into()]);
        assert!(
            js.contains(r#"["/opt/lidguard bin/lidguard","opencode-hook"]"#),
            "{js}"
        );
        assert!(!js.contains("__LIDGUARD_COMMAND__"));
    }

    #[test]
    fn prompt_text_joins_text_parts() {
        let output: Value = serde_json::json!({"parts": [
            {"type": "text", "text": "a"}, {"type": "file"}, {"type": "text", "text": "b"}
        ]});
        assert_eq!(prompt_parts(&output).as_deref(), Some("a\nb"));
        assert_eq!(prompt_parts(&Value::Null), None);
    }
}
