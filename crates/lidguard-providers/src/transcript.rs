//! What an agent's transcript says, beyond "it grew": the transcript monitor's detectors.
//! Pure: they see the lines the monitor read, in order. Each agent's rules (its interrupt
//! records, its finished background work, its questions to the user, where it keeps the file)
//! are in its folder under `agents/`; this drives them.
//!
//! Any growth that is not one of those is activity. What was already in the file when
//! following started only sets up state (a question still pending); it is never a stop or
//! activity by itself, since it may belong to an earlier turn.
// Dispatch on agents is exhaustive: a new agent must be a compile error here, never a fallback.
#![deny(clippy::wildcard_enum_match_arm)]

use std::collections::BTreeSet;
use std::path::Path;

use lidguard_core::provider::Provider;
use serde_json::Value;

use crate::agent::{Env, Question, TranscriptRules};
use crate::agents::agent;

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

/// Growth of a transcript lidguard has no rules for.
static ANY_GROWTH: TranscriptRules = TranscriptRules {
    activity_reason: "transcript_activity_detected",
    stop: |_| None,
    finished_work: |_| Vec::new(),
    question: |_| Question::None,
    question_reason: "",
    discover: |_, _, _| Discovery::NotFound,
};

/// One session's detector.
#[derive(Clone, Debug)]
pub struct Detector {
    rules: &'static TranscriptRules,
    /// Question call ids still without an answer.
    pending_questions: BTreeSet<String>,
}

impl std::fmt::Debug for TranscriptRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TranscriptRules")
            .field("activity_reason", &self.activity_reason)
            .finish_non_exhaustive()
    }
}

impl Detector {
    /// A detector for `provider`'s transcript format (others only report activity).
    pub fn new(provider: Provider) -> Detector {
        Detector {
            rules: agent(provider)
                .and_then(|a| a.transcript)
                .unwrap_or(&ANY_GROWTH),
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
        if let Some(reason) = (self.rules.stop)(&records) {
            return Some(Signal::Stop { reason });
        }
        if !self.pending_questions.is_empty() {
            return Some(Signal::SoftLock {
                reason: self.rules.question_reason,
            });
        }
        let mut work_ids: Vec<String> = records
            .iter()
            .flat_map(|r| (self.rules.finished_work)(r))
            .collect();
        work_ids.dedup();
        if !work_ids.is_empty() {
            return Some(Signal::WorkDelivered { work_ids });
        }
        Some(Signal::Activity {
            reason: self.rules.activity_reason,
            answered,
        })
    }

    /// Whether a question is pending (the session should stay soft-locked).
    pub fn waiting_for_user(&self) -> bool {
        !self.pending_questions.is_empty()
    }

    fn track(&mut self, record: &Value) {
        match (self.rules.question)(record) {
            Question::Asked(id) => {
                self.pending_questions.insert(id);
            }
            Question::Answered(id) => {
                self.pending_questions.remove(&id);
            }
            Question::None => {}
        }
    }
}

pub use crate::agent::Discovery;

/// Looks for `session_id`'s transcript where `provider` keeps them (`var` reads environment
/// variables; `home` is the user's home directory); see each agent's rules.
pub fn discover(provider: Provider, session_id: &str, home: &Path, var: Env<'_>) -> Discovery {
    // A session id is a file-name part, never a path.
    if session_id.is_empty() || session_id.contains(['/', '\\']) || session_id.contains("..") {
        return Discovery::NotFound;
    }
    match agent(provider).and_then(|a| a.transcript) {
        Some(rules) => (rules.discover)(session_id, home, var),
        None => Discovery::NotFound,
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

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
                reason: crate::agents::codex::USER_INPUT_PENDING
            })
        );
        assert_eq!(
            d.feed(&lines(&[other])),
            Some(Signal::SoftLock {
                reason: crate::agents::codex::USER_INPUT_PENDING
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
        // An empty file at `path`, with its folders.
        let touched = |path: PathBuf| {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "").unwrap();
            path
        };
        let day = h.join(".codex/sessions/2026/11/30");
        let rollout = touched(day.join("rollout-2026-11-30T00-00-00-abc.jsonl"));
        assert_eq!(
            discover(Provider::Codex, "abc", h, &none),
            Discovery::Found(rollout)
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
        let s1 = touched(elsewhere.join("projects/-home-u-proj/s1.jsonl"));
        let var =
            |name: &str| (name == "CLAUDE_CONFIG_DIR").then(|| elsewhere.clone().into_os_string());
        assert_eq!(
            discover(Provider::Claude, "s1", h, &var),
            Discovery::Found(s1)
        );
        assert_eq!(
            discover(Provider::Claude, "s1", h, &none),
            Discovery::NotFound
        );

        let events = touched(h.join(".copilot/session-state/p1/events.jsonl"));
        assert_eq!(
            discover(Provider::Copilot, "p1", h, &none),
            Discovery::Found(events)
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
