//! What an agent's transcript says, beyond "it grew": the per-provider detectors of the
//! transcript monitor. Pure: they see the lines the monitor read, in order.
//!
//! Rules (reference system §2.7, restated; record shapes in `tests/fixtures/transcripts/`):
//! - Codex: a latest record `{"type":"event_msg","payload":{"type":"turn_aborted"}}` is an
//!   interrupted turn (stop). A `response_item` whose payload is a `function_call` named
//!   `request_user_input` without a `function_call_output` of the same `call_id` means the
//!   agent waits for the user (soft-lock) until that output appears.
//! - Claude Code: a latest `user` record whose text is exactly `[Request interrupted by user]`
//!   or `[Request interrupted by user for tool use]` is an interrupted turn (stop). A `user`
//!   record with `origin.kind` `task-notification` delivers the completion of the background
//!   tasks it names (`<task-id>…</task-id>`); their queued copies (`queue-operation`) do not.
//! - Copilot CLI: a latest record with top-level `type` `abort` is an aborted turn (stop).
//!   Background work that finished is named by `system.notification` records
//!   (`data.kind.type` `shell_completed` / `shell_detached_completed` with `data.kind.shellId`,
//!   `agent_idle` / `agent_completed` with `data.kind.agentId`) and by `subagent.completed` /
//!   `subagent.failed` (top-level `agentId`): the same ids the hooks track.
//!
//! Any other growth is activity. What was already in the file when following started only sets
//! up state (a question still pending); it is never a stop or activity by itself, since it may
//! belong to an earlier turn.

use std::collections::BTreeSet;

use lidguard_core::provider::Provider;
use serde_json::Value;

/// The soft-lock reason while a Codex `request_user_input` call waits for its answer.
pub const CODEX_USER_INPUT_PENDING: &str = "codex_transcript_request_user_input_pending";

/// Claude's interrupt markers (exact texts of a `user` record).
const CLAUDE_INTERRUPTS: [&str; 2] = [
    "[Request interrupted by user]",
    "[Request interrupted by user for tool use]",
];

/// What the monitor tells the daemon.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Signal {
    /// The agent worked: refresh the session. `answered` when the records show the user
    /// answered what the agent waited for (a Codex question's output): that ends any
    /// soft-lock; plain growth ends only the inactivity one (the agent also writes while it
    /// waits).
    Activity {
        /// The activity reason recorded.
        reason: &'static str,
        /// A pending question was answered.
        answered: bool,
    },
    /// The turn was interrupted or aborted: end the session (not a normal end).
    Stop {
        /// The end reason recorded.
        reason: &'static str,
    },
    /// The agent waits for the user.
    SoftLock {
        /// The exact soft-lock reason.
        reason: &'static str,
    },
    /// Background work finished: Claude Code delivered completion notices for these tasks,
    /// or Copilot CLI recorded these shells and agents as done. The agent works on their
    /// results now.
    WorkDelivered {
        /// The task ids named by the notices.
        work_ids: Vec<String>,
    },
}

/// One session's detector.
#[derive(Clone, Debug)]
pub struct Detector {
    provider: Provider,
    /// Codex `request_user_input` call ids still without output.
    pending_questions: BTreeSet<String>,
}

impl Detector {
    /// A detector for `provider`'s transcript format (others only report activity).
    pub fn new(provider: Provider) -> Detector {
        Detector {
            provider,
            pending_questions: BTreeSet::new(),
        }
    }

    /// Takes in what the file held when following started: state only, no signal.
    pub fn prime(&mut self, lines: &[String]) {
        for line in lines {
            if let Ok(record) = serde_json::from_str::<Value>(line) {
                self.track(&record);
            }
        }
    }

    /// The signal for newly appended lines, `None` when nothing was appended.
    pub fn feed(&mut self, lines: &[String]) -> Option<Signal> {
        if lines.is_empty() {
            return None;
        }
        let records: Vec<Value> = lines
            .iter()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let waited = !self.pending_questions.is_empty();
        for record in &records {
            self.track(record);
        }
        let answered = waited && self.pending_questions.is_empty();
        if let Some(reason) = self.stop_in(&records) {
            return Some(Signal::Stop { reason });
        }
        if !self.pending_questions.is_empty() {
            return Some(Signal::SoftLock {
                reason: CODEX_USER_INPUT_PENDING,
            });
        }
        let mut work_ids: Vec<String> = match self.provider {
            Provider::Claude => records.iter().flat_map(delivered_task_ids).collect(),
            Provider::Copilot => records.iter().filter_map(copilot_finished_work).collect(),
            _ => Vec::new(),
        };
        work_ids.dedup();
        if !work_ids.is_empty() {
            return Some(Signal::WorkDelivered { work_ids });
        }
        Some(Signal::Activity {
            reason: self.activity_reason(),
            answered,
        })
    }

    /// Whether a question is pending (the session should stay soft-locked).
    pub fn waiting_for_user(&self) -> bool {
        !self.pending_questions.is_empty()
    }

    fn activity_reason(&self) -> &'static str {
        match self.provider {
            Provider::Codex => "codex_transcript_activity_detected",
            Provider::Claude => "claude_transcript_activity_detected",
            Provider::Copilot => "github_copilot_session_event_activity_detected",
            _ => "transcript_activity_detected",
        }
    }

    fn track(&mut self, record: &Value) {
        if self.provider != Provider::Codex || record["type"] != "response_item" {
            return;
        }
        let payload = &record["payload"];
        let call_id = payload["call_id"].as_str().map(str::to_owned);
        match (payload["type"].as_str(), call_id) {
            (Some("function_call"), Some(id)) if payload["name"] == "request_user_input" => {
                self.pending_questions.insert(id);
            }
            (Some("function_call_output"), Some(id)) => {
                self.pending_questions.remove(&id);
            }
            _ => {}
        }
    }

    /// The stop the latest records show, if any.
    fn stop_in(&self, records: &[Value]) -> Option<&'static str> {
        match self.provider {
            Provider::Codex => {
                let last = records.last()?;
                (last["type"] == "event_msg" && last["payload"]["type"] == "turn_aborted")
                    .then_some("codex-transcript-turn-aborted")
            }
            Provider::Claude => {
                let last_user = records.iter().rev().find(|r| r["type"] == "user")?;
                let text = user_text(last_user)?;
                CLAUDE_INTERRUPTS
                    .contains(&text.trim())
                    .then_some("claude-transcript-interrupted")
            }
            Provider::Copilot => {
                let last = records.last()?;
                (last["type"] == "abort").then_some("github-copilot-transcript-abort")
            }
            _ => None,
        }
    }
}

/// The result of looking for a session's transcript when its hooks gave no path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Discovery {
    /// Exactly one file matches.
    Found(std::path::PathBuf),
    /// No file matches (yet).
    NotFound,
    /// Several files match; none is chosen.
    Ambiguous(usize),
}

/// Looks for `session_id`'s transcript where `provider` keeps them (`var` reads environment
/// variables; `home` is the user's home directory):
/// - Codex: a unique `rollout-*<session id>.jsonl` under `$CODEX_HOME/sessions` (default
///   `~/.codex/sessions`, in `YYYY/MM/DD` folders; hook-contracts §2.5);
/// - Claude Code: a unique `<session id>.jsonl` in a project folder of
///   `$CLAUDE_CONFIG_DIR/projects` (default `~/.claude/projects`; §1.5);
/// - Copilot CLI: `$COPILOT_HOME/session-state/<id>/events.jsonl`, then
///   `~/.copilot/session-state/<id>/events.jsonl` (§3.5).
pub fn discover(
    provider: Provider,
    session_id: &str,
    home: &std::path::Path,
    var: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> Discovery {
    use std::path::PathBuf;
    // A session id is a file-name part, never a path.
    if session_id.is_empty() || session_id.contains(['/', '\\']) || session_id.contains("..") {
        return Discovery::NotFound;
    }
    let dir = |name: &str, default: PathBuf| -> PathBuf {
        var(name)
            .filter(|v| !v.is_empty())
            .map_or(default, PathBuf::from)
    };
    let found = |mut files: Vec<PathBuf>| -> Discovery {
        files.sort();
        files.dedup();
        match files.len() {
            0 => Discovery::NotFound,
            1 => Discovery::Found(files.remove(0)),
            n => Discovery::Ambiguous(n),
        }
    };
    match provider {
        Provider::Codex => {
            let root = dir("CODEX_HOME", home.join(".codex")).join("sessions");
            let suffix = format!("{session_id}.jsonl");
            let mut files = Vec::new();
            walk(&root, 4, &mut |path| {
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if name.starts_with("rollout-") && name.ends_with(&suffix) {
                    files.push(path.to_path_buf());
                }
            });
            found(files)
        }
        Provider::Claude => {
            let root = dir("CLAUDE_CONFIG_DIR", home.join(".claude")).join("projects");
            let name = format!("{session_id}.jsonl");
            let files = std::fs::read_dir(&root)
                .into_iter()
                .flatten()
                .filter_map(Result::ok)
                .map(|project| project.path().join(&name))
                .filter(|p| p.is_file())
                .collect();
            found(files)
        }
        Provider::Copilot => {
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
        _ => Discovery::NotFound,
    }
}

/// Calls `visit` for every file below `dir`, at most `depth` levels down.
fn walk(dir: &std::path::Path, depth: usize, visit: &mut dyn FnMut(&std::path::Path)) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() && depth > 0 => walk(&path, depth - 1, visit),
            Ok(t) if t.is_file() => visit(&path),
            _ => {}
        }
    }
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

/// The shell or agent a Copilot record says has finished.
fn copilot_finished_work(record: &Value) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(records: &[Value]) -> Vec<String> {
        records.iter().map(Value::to_string).collect()
    }

    #[test]
    fn codex_turn_aborted_is_a_stop_only_when_latest() {
        let mut d = Detector::new(Provider::Codex);
        let aborted = serde_json::json!({"type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}});
        let later = serde_json::json!({"type":"event_msg","payload":{"type":"user_message"}});
        assert_eq!(
            d.feed(&lines(&[later.clone(), aborted.clone()])),
            Some(Signal::Stop {
                reason: "codex-transcript-turn-aborted"
            })
        );
        assert_eq!(
            d.feed(&lines(&[aborted, later])),
            Some(Signal::Activity {
                reason: "codex_transcript_activity_detected",
                answered: false
            })
        );
        assert_eq!(d.feed(&[]), None);
    }

    #[test]
    fn codex_pending_question_soft_locks_until_answered() {
        let mut d = Detector::new(Provider::Codex);
        let ask = serde_json::json!({"type":"response_item","payload":{"type":"function_call","name":"request_user_input","call_id":"c1","arguments":"{}"}});
        let other = serde_json::json!({"type":"response_item","payload":{"type":"function_call_output","call_id":"zz","output":"x"}});
        let answer = serde_json::json!({"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"yes"}});
        assert_eq!(
            d.feed(&lines(&[ask])),
            Some(Signal::SoftLock {
                reason: CODEX_USER_INPUT_PENDING
            })
        );
        assert_eq!(
            d.feed(&lines(&[other])),
            Some(Signal::SoftLock {
                reason: CODEX_USER_INPUT_PENDING
            })
        );
        assert_eq!(
            d.feed(&lines(std::slice::from_ref(&answer))),
            Some(Signal::Activity {
                reason: "codex_transcript_activity_detected",
                answered: true
            })
        );
        assert!(!d.waiting_for_user());
    }

    #[test]
    fn priming_sets_state_without_signals() {
        let mut d = Detector::new(Provider::Codex);
        d.prime(&lines(&[
            serde_json::json!({"type":"response_item","payload":{"type":"function_call","name":"request_user_input","call_id":"c9"}}),
            serde_json::json!({"type":"event_msg","payload":{"type":"turn_aborted"}}),
        ]));
        assert!(d.waiting_for_user());
    }

    #[test]
    fn claude_interrupt_texts_in_either_shape() {
        for content in [
            serde_json::json!("[Request interrupted by user]"),
            serde_json::json!([{"type":"text","text":"[Request interrupted by user for tool use]"}]),
        ] {
            let mut d = Detector::new(Provider::Claude);
            let record =
                serde_json::json!({"type":"user","message":{"role":"user","content":content}});
            let meta = serde_json::json!({"type":"system","subtype":"x"});
            assert_eq!(
                d.feed(&lines(&[record, meta])),
                Some(Signal::Stop {
                    reason: "claude-transcript-interrupted"
                })
            );
        }
        let mut d = Detector::new(Provider::Claude);
        let prompt = serde_json::json!({"type":"user","message":{"content":"[Request interrupted by user] please go on"}});
        assert!(matches!(
            d.feed(&lines(&[prompt])),
            Some(Signal::Activity { .. })
        ));
    }

    #[test]
    fn discovery_finds_a_unique_file_per_provider() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        let none = |_: &str| None;
        let day = h.join(".codex/sessions/2026/11/30");
        std::fs::create_dir_all(&day).unwrap();
        std::fs::write(day.join("rollout-2026-11-30T00-00-00-abc.jsonl"), "").unwrap();
        assert_eq!(
            discover(Provider::Codex, "abc", h, &none),
            Discovery::Found(day.join("rollout-2026-11-30T00-00-00-abc.jsonl"))
        );
        std::fs::write(day.join("rollout-2026-11-30T01-00-00-abc.jsonl"), "").unwrap();
        assert_eq!(
            discover(Provider::Codex, "abc", h, &none),
            Discovery::Ambiguous(2)
        );
        assert_eq!(
            discover(Provider::Codex, "zzz", h, &none),
            Discovery::NotFound
        );
        assert_eq!(
            discover(Provider::Codex, "../x", h, &none),
            Discovery::NotFound
        );

        let elsewhere = h.join("claude-config");
        let project = elsewhere.join("projects/-home-u-proj");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(project.join("s1.jsonl"), "").unwrap();
        let var =
            |name: &str| (name == "CLAUDE_CONFIG_DIR").then(|| elsewhere.clone().into_os_string());
        assert_eq!(
            discover(Provider::Claude, "s1", h, &var),
            Discovery::Found(project.join("s1.jsonl"))
        );
        assert_eq!(
            discover(Provider::Claude, "s1", h, &none),
            Discovery::NotFound
        );

        let state = h.join(".copilot/session-state/p1");
        std::fs::create_dir_all(&state).unwrap();
        std::fs::write(state.join("events.jsonl"), "").unwrap();
        assert_eq!(
            discover(Provider::Copilot, "p1", h, &none),
            Discovery::Found(state.join("events.jsonl"))
        );
    }

    #[test]
    fn copilot_abort_is_a_stop_and_garbage_is_activity() {
        let mut d = Detector::new(Provider::Copilot);
        assert_eq!(
            d.feed(&lines(&[serde_json::json!({"type":"abort","data":{}})])),
            Some(Signal::Stop {
                reason: "github-copilot-transcript-abort"
            })
        );
        assert!(matches!(
            d.feed(&["not json".to_owned()]),
            Some(Signal::Activity { .. })
        ));
    }
}
