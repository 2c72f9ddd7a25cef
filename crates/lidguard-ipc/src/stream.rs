//! The event stream (`lidguard events`): one JSON object per line, in the order the daemon saw
//! things, each kept in three parts as the hook-parity design asks — what was *observed*, what
//! lidguard *decided* on its own authority, and what became *visible* (to the agent, the log,
//! a webhook). The published schema is `schema/events.schema.json` in the repository; its field
//! names are a contract.

use jiff::Timestamp;
use lidguard_core::event::{Decision, DecisionKind, Lid};
use lidguard_core::provider::Provider;
use serde::{Deserialize, Serialize};

/// The version of the line format (`v` in every line).
pub const STREAM_VERSION: u32 = 1;

/// How many recent events the daemon keeps for replay.
pub const REPLAY_CAPACITY: usize = 1000;

/// The most bytes of event lines the daemon keeps for replay (and in its database), whatever
/// their count.
pub const REPLAY_BYTES: usize = 2 * 1024 * 1024;

/// The longest a free-text field of an event may be, in bytes: agents' payloads may carry a
/// `cwd` or a reason of any size, and the stream, its replay and a slow follower's backlog must
/// stay small. Longer text is cut at a character boundary and says how much was cut.
pub const FIELD_LIMIT: usize = 2048;

/// The longest an event line may be; an event with many long fields is cut further.
pub const LINE_LIMIT: usize = 8 * 1024;

/// How many recent events a follower gets when it names no `since`.
pub const DEFAULT_REPLAY: usize = 20;

/// One line of the stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamEvent {
    /// [`STREAM_VERSION`].
    pub v: u32,
    /// What happened.
    pub observation: Observation,
    /// What lidguard decided about it, and from what.
    pub authority: Authority,
    /// Who was told.
    pub visibility: Visibility,
}

impl StreamEvent {
    /// An event of the daemon's own (numbered when published), about no session yet.
    pub fn daemon(kind: &str, detail: Option<String>) -> StreamEvent {
        StreamEvent {
            v: STREAM_VERSION,
            observation: Observation {
                id: 0,
                at: Timestamp::now(),
                source: Source::Daemon,
                kind: kind.to_owned(),
                provider: None,
                provider_name: None,
                session_id: None,
                hook_event: None,
                tool: None,
                cwd: None,
                payload_digest: None,
                detail: detail.filter(|d| !d.is_empty()),
            },
            authority: Authority::none(),
            visibility: Visibility::default(),
        }
    }
}

impl StreamEvent {
    /// Cuts every free-text field to `limit` bytes ([`FIELD_LIMIT`]).
    pub fn cut_fields(&mut self, limit: usize) {
        let o = &mut self.observation;
        cut(&mut o.kind, limit);
        for text in [
            &mut o.provider_name,
            &mut o.session_id,
            &mut o.hook_event,
            &mut o.tool,
            &mut o.cwd,
            &mut o.payload_digest,
            &mut o.detail,
            &mut self.authority.outcome,
            &mut self.visibility.stdout,
        ]
        .into_iter()
        .flatten()
        {
            cut(text, limit);
        }
        if let Some(p) = &mut self.authority.provenance {
            for text in [&mut p.setting, &mut p.value, &mut p.reason]
                .into_iter()
                .flatten()
            {
                cut(text, limit);
            }
        }
        for text in &mut self.visibility.webhooks {
            cut(text, limit);
        }
    }
}

/// The longest a text in a row of the event log may be (`hook-events`, the daemon's events):
/// with at most 8 KiB a row the log's 10,000 rows stay bounded in bytes too.
pub const LOG_FIELD_LIMIT: usize = 1024;

/// The longest a row's JSON in the event log may be.
pub const LOG_ROW_LIMIT: usize = 8 * 1024;

/// A detail for the event log, every text in it cut to [`LOG_FIELD_LIMIT`] (further when the
/// whole is over [`LOG_ROW_LIMIT`]).
pub fn log_detail(mut detail: serde_json::Value) -> String {
    cut_strings(&mut detail, LOG_FIELD_LIMIT);
    let text = detail.to_string();
    if text.len() <= LOG_ROW_LIMIT {
        return text;
    }
    cut_strings(&mut detail, 128);
    detail.to_string()
}

/// A text for a column of the event log (a session id), cut to [`LOG_FIELD_LIMIT`].
pub fn log_text(text: &str) -> String {
    let mut text = text.to_owned();
    cut(&mut text, LOG_FIELD_LIMIT);
    text
}

/// Cuts every string inside `value` to `limit` bytes.
fn cut_strings(value: &mut serde_json::Value, limit: usize) {
    match value {
        serde_json::Value::String(text) => cut(text, limit),
        serde_json::Value::Array(items) => {
            for item in items {
                cut_strings(item, limit);
            }
        }
        serde_json::Value::Object(fields) => {
            for (_, item) in fields.iter_mut() {
                cut_strings(item, limit);
            }
        }
        _ => {}
    }
}

/// Cuts `text` to at most `limit` bytes at a character boundary, saying how much was cut.
pub fn cut(text: &mut String, limit: usize) {
    if text.len() <= limit {
        return;
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let dropped = text.len() - end;
    text.truncate(end);
    text.push_str(&format!("…[{dropped} more bytes]"));
}

/// Where an observation comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Source {
    /// An agent's hook (or a Provider MCP tool call) reported it.
    Hook,
    /// The daemon itself: sessions, protection, suspend, ask before sleep, lid and displays,
    /// transcripts and watched processes, webhooks.
    Daemon,
    /// The stream: this follower read too slowly and missed events (`kind` `events-lost`).
    Stream,
}

/// What was observed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Observation {
    /// Increases by one per event within one daemon run (a follower can tell a gap).
    pub id: u64,
    /// When the daemon saw it (UTC).
    pub at: Timestamp,
    /// Where it comes from.
    pub source: Source,
    /// The normalized kind: a hook event's kind (`tool-starting`, `turn-stopped`, …) or a
    /// daemon event's name (`protection-taken`, `suspend-scheduled`, …).
    pub kind: String,
    /// The agent harness, when a session is concerned.
    pub provider: Option<Provider>,
    /// The provider name of an `mcp` session.
    pub provider_name: Option<String>,
    /// The session id, when a session is concerned.
    pub session_id: Option<String>,
    /// The provider's own event name (`PreToolUse`, …), hook events only.
    pub hook_event: Option<String>,
    /// The tool concerned.
    pub tool: Option<String>,
    /// The agent's working directory.
    pub cwd: Option<String>,
    /// `sha256:<hex>` of the hook's whole payload as the agent sent it.
    pub payload_digest: Option<String>,
    /// A short description (daemon events).
    pub detail: Option<String>,
}

/// What lidguard decided on its own authority.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Nothing: lidguard only took note.
    None,
    /// It allowed a permission request.
    Allow,
    /// It denied a permission request or a question to the user.
    Deny,
    /// It canceled an MCP elicitation.
    Cancel,
    /// It marked the session as waiting for the user (protection no longer held for it).
    SoftLock,
    /// Ask before sleep: the user's reply continued the agent's turn.
    Continue,
}

/// What lidguard decided, and from what.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Authority {
    /// The decision.
    pub decision: Verdict,
    /// What it was made from; `null` when `decision` is `none`.
    pub provenance: Option<Provenance>,
    /// What the daemon did with a hook event (`recorded`, `unchanged`, `started`, …).
    pub outcome: Option<String>,
}

impl Authority {
    /// No decision.
    pub fn none() -> Authority {
        Authority {
            decision: Verdict::None,
            provenance: None,
            outcome: None,
        }
    }

    /// A closed-lid decision with its provenance.
    pub fn from_decision(decision: &Decision) -> Authority {
        let verdict = match decision.kind {
            DecisionKind::AllowPermission => Verdict::Allow,
            DecisionKind::DenyPermission { .. } | DecisionKind::DenyAskUser { .. } => Verdict::Deny,
            DecisionKind::CancelElicitation => Verdict::Cancel,
        };
        let p = &decision.provenance;
        Authority {
            decision: verdict,
            provenance: Some(Provenance {
                setting: Some(p.setting.clone()),
                value: Some(p.value.clone()),
                lid: Some(p.lid),
                external_displays: p.external_displays,
                reason: None,
            }),
            outcome: None,
        }
    }
}

/// What a decision was made from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Provenance {
    /// The setting that decided, e.g. `closedLidPermissionRequestDecision`.
    pub setting: Option<String>,
    /// Its value at that moment.
    pub value: Option<String>,
    /// The lid as the decision saw it.
    pub lid: Option<Lid>,
    /// External displays as the decision saw them.
    pub external_displays: Option<u32>,
    /// The reason given (a soft-lock reason, the user's reply arriving, …).
    pub reason: Option<String>,
}

/// Who was told.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Visibility {
    /// What lidguard answered for the agent to read on the hook's stdout (the provider's own
    /// output format), or `null` when it answered nothing.
    pub stdout: Option<String>,
    /// Whether it was written to lidguard's database (`hook-events`, the event log).
    pub logged: bool,
    /// The webhooks this event sent (`PreSuspend`, `PostSessionEnd`, `StopFollowUp`), and
    /// `ntfy` for a notification published to the ntfy topic.
    pub webhooks: Vec<String>,
}

/// Which events a follower wants.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamFilter {
    /// Only sessions of this provider (events that concern no session always pass).
    #[serde(default)]
    pub provider: Option<Provider>,
    /// Only this session id (events that concern no session always pass).
    #[serde(default)]
    pub session_id: Option<String>,
}

impl StreamFilter {
    /// Whether an event of `provider`/`session_id` passes. Events about no session (the lid,
    /// protection, a suspend) concern every session and always pass.
    pub fn admits(&self, provider: Option<Provider>, session_id: Option<&str>) -> bool {
        if provider.is_none() && session_id.is_none() {
            return true;
        }
        self.provider.is_none_or(|p| provider == Some(p))
            && self
                .session_id
                .as_deref()
                .is_none_or(|s| session_id == Some(s))
    }
}

/// Where a follower's replay starts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "from", content = "value")]
pub enum Replay {
    /// The last N events.
    Last(usize),
    /// Every kept event at or after this time.
    Since(Timestamp),
}

impl Default for Replay {
    fn default() -> Replay {
        Replay::Last(DEFAULT_REPLAY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_pass_machine_wide_events() {
        let f = StreamFilter {
            provider: Some(Provider::Claude),
            session_id: None,
        };
        assert!(f.admits(None, None));
        assert!(f.admits(Some(Provider::Claude), Some("a")));
        assert!(!f.admits(Some(Provider::Codex), Some("a")));
        let f = StreamFilter {
            provider: None,
            session_id: Some("a".into()),
        };
        assert!(f.admits(Some(Provider::Codex), Some("a")));
        assert!(!f.admits(Some(Provider::Codex), Some("b")));
        assert!(StreamFilter::default().admits(Some(Provider::Mcp), Some("x")));
    }

    #[test]
    fn lines_are_camel_case_with_three_parts() {
        let event = StreamEvent {
            v: STREAM_VERSION,
            observation: Observation {
                id: 7,
                at: "2026-12-02T10:00:00Z".parse().unwrap(),
                source: Source::Hook,
                kind: "permission-requested".into(),
                provider: Some(Provider::Claude),
                provider_name: None,
                session_id: Some("s".into()),
                hook_event: Some("PermissionRequest".into()),
                tool: Some("Bash".into()),
                cwd: Some("/p".into()),
                payload_digest: Some("sha256:00".into()),
                detail: None,
            },
            authority: Authority {
                decision: Verdict::SoftLock,
                provenance: None,
                outcome: Some("recorded".into()),
            },
            visibility: Visibility::default(),
        };
        let json = serde_json::to_value(&event).unwrap();
        assert_eq!(json["observation"]["sessionId"], "s");
        assert_eq!(json["observation"]["payloadDigest"], "sha256:00");
        assert_eq!(json["authority"]["decision"], "soft-lock");
        assert_eq!(json["visibility"]["webhooks"], serde_json::json!([]));
        let back: StreamEvent = serde_json::from_value(json).unwrap();
        assert_eq!(back, event);
    }
}
