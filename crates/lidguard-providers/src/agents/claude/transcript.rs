//! Claude Code's transcript: `<config dir>/projects/<project>/<session id>.jsonl`, one JSON
//! record per line (records captured from Claude Code 2.1.332 in
//! `tests/fixtures/transcripts/claude/`).
//!
//! - A latest `user` record whose text is exactly `[Request interrupted by user]` or
//!   `[Request interrupted by user for tool use]` is an interrupted turn (stop).
//! - A `user` record with `origin.kind` `task-notification` delivers the completion of the
//!   background tasks it names (`<task-id>…</task-id>`); their queued copies
//!   (`queue-operation` records) do not.

use std::path::Path;

use serde_json::Value;

use crate::agent::Discovery;
use crate::agent::{Env, Question, TranscriptRules, set_dir};
use crate::evidence::one_of;

/// Claude's interrupt markers (exact texts of a `user` record).
const INTERRUPTS: [&str; 2] = [
    "[Request interrupted by user]",
    "[Request interrupted by user for tool use]",
];

pub(super) static RULES: TranscriptRules = TranscriptRules {
    activity_reason: "claude_transcript_activity_detected",
    stop,
    finished_work: delivered_task_ids,
    question: |_| Question::None,
    question_reason: "",
    discover,
};

fn stop(records: &[Value]) -> Option<&'static str> {
    let last_user = records.iter().rev().find(|r| r["type"] == "user")?;
    let text = user_text(last_user)?;
    INTERRUPTS
        .contains(&text.trim())
        .then_some("claude-transcript-interrupted")
}

/// A unique `<session id>.jsonl` in a project folder of `$CLAUDE_CONFIG_DIR/projects`
/// (default `~/.claude/projects`).
fn discover(session_id: &str, home: &Path, var: Env<'_>) -> Discovery {
    let root = set_dir(var, "CLAUDE_CONFIG_DIR")
        .unwrap_or_else(|| home.join(".claude"))
        .join("projects");
    let name = format!("{session_id}.jsonl");
    one_of(
        std::fs::read_dir(&root)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(|project| project.path().join(&name))
            .filter(|p| p.is_file())
            .collect(),
    )
}

/// The task ids of a delivered Claude task notification: a `user` record whose `origin.kind`
/// is `task-notification`, naming each task as `<task-id>ID</task-id>`. The queued copy
/// (`queue-operation` records) is not a delivery.
fn delivered_task_ids(record: &Value) -> Vec<String> {
    if record["type"] != "user" || record["origin"]["kind"] != "task-notification" {
        return Vec::new();
    }
    let Some(text) = user_text(record) else {
        return Vec::new();
    };
    let mut ids = Vec::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find("<task-id>") {
        let after = &rest[start + "<task-id>".len()..];
        let Some(end) = after.find("</task-id>") else {
            break;
        };
        let id = after[..end].trim();
        if !id.is_empty() {
            ids.push(id.to_owned());
        }
        rest = &after[end..];
    }
    ids
}

/// The text of a Claude `user` record: `message.content` as a string, or its text parts.
fn user_text(record: &Value) -> Option<String> {
    let content = &record["message"]["content"];
    if let Some(text) = content.as_str() {
        return Some(text.to_owned());
    }
    let parts: Vec<&str> = content
        .as_array()?
        .iter()
        .filter(|p| p["type"] == "text")
        .filter_map(|p| p["text"].as_str())
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n"))
}
