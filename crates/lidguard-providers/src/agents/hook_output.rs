//! The answers of the `hookSpecificOutput` family: Claude Code's hook outputs, which Codex
//! reads in the same shape (each agent's `README.md` names its source). Keys are written in
//! the order the agents' documentation shows them.

use serde::Serialize;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Output<T> {
    hook_specific_output: T,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Permission<'a> {
    hook_event_name: &'static str,
    decision: Behavior<'a>,
}

#[derive(Serialize)]
struct Behavior<'a> {
    behavior: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PreToolUse<'a> {
    hook_event_name: &'static str,
    permission_decision: &'static str,
    permission_decision_reason: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Elicitation {
    hook_event_name: &'static str,
    action: &'static str,
}

#[derive(Serialize)]
struct Block<'a> {
    decision: &'static str,
    reason: &'a str,
}

fn json(value: &impl Serialize) -> Option<String> {
    serde_json::to_string(value).ok()
}

/// `PermissionRequest`: `hookSpecificOutput.decision` with `behavior` (`allow`, `deny`) and,
/// on deny, the `message` the model reads.
pub(crate) fn permission(behavior: &'static str, message: Option<&str>) -> Option<String> {
    json(&Output {
        hook_specific_output: Permission {
            hook_event_name: "PermissionRequest",
            decision: Behavior { behavior, message },
        },
    })
}

/// `PreToolUse` refusing the tool call, with the reason the model reads.
pub(crate) fn pre_tool_use_deny(reason: &str) -> Option<String> {
    json(&Output {
        hook_specific_output: PreToolUse {
            hook_event_name: "PreToolUse",
            permission_decision: "deny",
            permission_decision_reason: reason,
        },
    })
}

/// `Elicitation`: `hookSpecificOutput.action` (`accept`, `decline`, `cancel`).
pub(crate) fn elicitation(action: &'static str) -> Option<String> {
    json(&Output {
        hook_specific_output: Elicitation {
            hook_event_name: "Elicitation",
            action,
        },
    })
}

/// `Stop`: `decision: "block"` with a `reason`, which the agent takes as its next
/// instruction (the turn goes on).
pub(crate) fn block_stop(reason: &str) -> Option<String> {
    json(&Block {
        decision: "block",
        reason,
    })
}
