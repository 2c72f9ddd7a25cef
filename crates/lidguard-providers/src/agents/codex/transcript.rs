//! Codex's transcript: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl`
//! (records captured from Codex 0.171.0 in `tests/fixtures/transcripts/codex/`).
//!
//! - A latest record `{"type":"event_msg","payload":{"type":"turn_aborted"}}` is an
//!   interrupted turn (stop).
//! - A `response_item` whose payload is a `function_call` named `request_user_input` without a
//!   `function_call_output` of the same `call_id` means the agent waits for the user
//!   (soft-lock) until that output appears.

use std::path::Path;

use serde_json::Value;

use crate::agent::Discovery;
use crate::agent::{Env, Question, TranscriptRules, set_dir};
use crate::evidence::{one_of, walk};

/// The soft-lock reason while a `request_user_input` call waits for its answer.
pub const USER_INPUT_PENDING: &str = "codex_transcript_request_user_input_pending";

pub(super) static RULES: TranscriptRules = TranscriptRules {
    activity_reason: "codex_transcript_activity_detected",
    stop,
    finished_work: |_| Vec::new(),
    question,
    question_reason: USER_INPUT_PENDING,
    discover,
};

fn stop(records: &[Value]) -> Option<&'static str> {
    let last = records.last()?;
    (last["type"] == "event_msg" && last["payload"]["type"] == "turn_aborted")
        .then_some("codex-transcript-turn-aborted")
}

fn question(record: &Value) -> Question {
    if record["type"] != "response_item" {
        return Question::None;
    }
    let payload = &record["payload"];
    let call_id = payload["call_id"].as_str().map(str::to_owned);
    match (payload["type"].as_str(), call_id) {
        (Some("function_call"), Some(id)) if payload["name"] == "request_user_input" => {
            Question::Asked(id)
        }
        (Some("function_call_output"), Some(id)) => Question::Answered(id),
        _ => Question::None,
    }
}

/// A unique `rollout-*<session id>.jsonl` under `$CODEX_HOME/sessions` (default
/// `~/.codex/sessions`, in `YYYY/MM/DD` folders).
fn discover(session_id: &str, home: &Path, var: Env<'_>) -> Discovery {
    let root = set_dir(var, "CODEX_HOME")
        .unwrap_or_else(|| home.join(".codex"))
        .join("sessions");
    let suffix = format!("{session_id}.jsonl");
    let mut files = Vec::new();
    walk(&root, 4, &mut |path| {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with("rollout-") && name.ends_with(&suffix) {
            files.push(path.to_path_buf());
        }
    });
    one_of(files)
}
