//! Arbitrary stdin never panics any dialect: it parses or it is an error (and the hook then
//! fails open).
#![allow(
    clippy::disallowed_methods,
    reason = "tests write fixtures and read the environment"
)]

use lidguard_core::provider::Provider;
use lidguard_providers::{HookInput, parse};
use proptest::prelude::*;

const PROVIDERS: [Provider; 4] = [
    Provider::Claude,
    Provider::Codex,
    Provider::Copilot,
    Provider::OpenCode,
];

const EVENTS: [&str; 12] = [
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "UserPromptSubmit",
    "Notification",
    "agentStop",
    "permissionRequest",
    "notification",
    "session.idle",
    "permission.asked",
    "chat.message",
    "x",
];

/// A fixed local time for the payloads that need one.
fn clock() -> jiff::ZonedDateTime {
    "2026-12-07T10:59:12+00:00[UTC]".parse().unwrap()
}

/// JSON-ish text: objects with the field names the dialects read, and random values.
fn jsonish() -> impl Strategy<Value = Vec<u8>> {
    let key = prop::sample::select(vec![
        "hook_event_name",
        "session_id",
        "sessionId",
        "sessionID",
        "tool_name",
        "toolName",
        "tool_input",
        "tool_response",
        "toolResult",
        "background_tasks",
        "session_crons",
        "prompt",
        "is_interrupt",
        "notification_type",
        "agent_id",
        "task_id",
        "stop_hook_active",
        "cwd",
        "error",
    ]);
    let value = prop_oneof![
        Just("null".to_owned()),
        Just("true".to_owned()),
        any::<i64>().prop_map(|n| n.to_string()),
        ".{0,20}".prop_map(|s| serde_json::to_string(&s).unwrap()),
        Just(r#"[{"id":"b1","status":"running"},{"id":3}]"#.to_owned()),
        Just(r#"{"run_in_background":true,"backgroundTaskId":"x"}"#.to_owned()),
        Just(r#"[{"schedule":"*/1 * * * *"},{"schedule":"61 * * * *"},{"id":3}]"#.to_owned()),
        Just("\"<task-notification><task-id>a</task-id>\"".to_owned()),
    ];
    prop::collection::vec((key, value), 0..8).prop_map(|pairs| {
        let body: Vec<String> = pairs.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
        format!("{{{}}}", body.join(",")).into_bytes()
    })
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512), p in 0usize..4, e in 0usize..12) {
        let input = HookInput { stdin: &bytes, event_arg: Some(EVENTS[e]), process_cwd: Some("/tmp"), now: clock };
        let _ = parse(PROVIDERS[p], &input);
    }

    #[test]
    fn json_with_the_fields_we_read_never_panics(bytes in jsonish(), p in 0usize..4, e in 0usize..12) {
        let input = HookInput { stdin: &bytes, event_arg: Some(EVENTS[e]), process_cwd: None, now: clock };
        if let Ok(events) = parse(PROVIDERS[p], &input) {
            for event in events {
                prop_assert!(!event.session_id.is_empty());
            }
        }
    }
}
