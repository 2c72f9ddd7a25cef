//! Copilot CLI's transcript: `$COPILOT_HOME/session-state/<session id>/events.jsonl` (records
//! captured from Copilot CLI 1.0.102 in `tests/fixtures/transcripts/copilot/`).
//!
//! - A latest record with top-level `type` `abort` is an aborted turn (stop).
//! - Background work that finished is named by `system.notification` records
//!   (`data.kind.type` `shell_completed` / `shell_detached_completed` with `data.kind.shellId`,
//!   `agent_idle` / `agent_completed` with `data.kind.agentId`) and by `subagent.completed` /
//!   `subagent.failed` (top-level `agentId`): the same ids the hooks track.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::agent::Discovery;
use crate::agent::{Env, Question, TranscriptRules};

pub(super) static RULES: TranscriptRules = TranscriptRules {
    activity_reason: "github_copilot_session_event_activity_detected",
    stop,
    finished_work: |record| finished_work_of(record).into_iter().collect(),
    question: |_| Question::None,
    question_reason: "",
    discover,
};

fn stop(records: &[Value]) -> Option<&'static str> {
    let last = records.last()?;
    (last["type"] == "abort").then_some("github-copilot-transcript-abort")
}

/// `$COPILOT_HOME/session-state/<id>/events.jsonl`, then `~/.copilot/session-state/<id>/`.
fn discover(session_id: &str, home: &Path, var: Env<'_>) -> Discovery {
    let mut roots = Vec::new();
    if let Some(copilot_home) = var("COPILOT_HOME").filter(|v| !v.is_empty()) {
        roots.push(PathBuf::from(copilot_home));
    }
    roots.push(home.join(".copilot"));
    roots
        .into_iter()
        .map(|r| {
            r.join("session-state")
                .join(session_id)
                .join("events.jsonl")
        })
        .find(|p| p.is_file())
        .map_or(Discovery::NotFound, Discovery::Found)
}

/// The shell or agent a Copilot record says has finished.
fn finished_work_of(record: &Value) -> Option<String> {
    let id = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_owned);
    match record["type"].as_str()? {
        "system.notification" => {
            let kind = &record["data"]["kind"];
            match kind["type"].as_str()? {
                "shell_completed" | "shell_detached_completed" => id(&kind["shellId"]),
                "agent_idle" | "agent_completed" => id(&kind["agentId"]),
                _ => None,
            }
        }
        "subagent.completed" | "subagent.failed" => id(&record["agentId"]),
        _ => None,
    }
}
