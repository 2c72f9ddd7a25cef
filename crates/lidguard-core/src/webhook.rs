//! The webhooks lidguard sends, as the reference system's receiver (LidGuard.Notifications,
//! <https://github.com/airtaxi/LidGuard>) expects them; README, Webhooks and Ask before sleep): the JSON payload with its field names and enum values, and the text rules.
//! Which webhook is sent when is decided by [`crate::registry::Registry`]; sending is the
//! daemon's.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::session::Session;

/// The longest prompt preview, in characters.
pub const PROMPT_PREVIEW_CHARS: usize = 50;

/// Which webhook.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventType {
    /// Right before a suspend request (after the delay, before the sound).
    PreSuspend,
    /// A session ended normally and the machine is not going to sleep for it.
    PostSessionEnd,
    /// Ask before sleep: the session stopped with the lid closed; a reply continues it.
    StopFollowUp,
}

/// One webhook body. Field names are the reference receiver's; absent fields are omitted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Payload {
    /// `PreSuspend`, `PostSessionEnd` or `StopFollowUp`.
    pub event_type: Option<EventType>,
    /// `Completed` / `SoftLocked` / `EmergencyHibernation` (PreSuspend), `SessionEnded`
    /// (PostSessionEnd), `AwaitingReply` (StopFollowUp).
    pub reason: String,
    /// The UI language, e.g. `en`.
    pub user_interface_culture: String,
    /// PreSuspend with reason `SoftLocked`: how many sessions wait for the user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub soft_locked_session_count: Option<usize>,
    /// The agent, as the reference names it (`Claude`, `Codex`, `GitHubCopilot`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Provider MCP sessions only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider_name: Option<String>,
    /// The session id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_identifier: Option<String>,
    /// When the session started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at_utc: Option<Timestamp>,
    /// Its last activity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_activity_at_utc: Option<Timestamp>,
    /// When it ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_at_utc: Option<Timestamp>,
    /// How it ended (e.g. `Stop`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_reason: Option<String>,
    /// Sessions still keeping the machine awake.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_session_count: Option<usize>,
    /// The session's last prompt, at most 50 characters ([`prompt_preview`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_prompt_preview: Option<String>,
    /// The agent's last answer, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_assistant_message: Option<String>,
    /// StopFollowUp: how long lidguard waits for a reply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply_wait_seconds: Option<u32>,
    /// StopFollowUp: until when.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply_deadline_utc: Option<Timestamp>,
    /// The agent's working directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub working_directory: Option<String>,
    /// The agent's transcript.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transcript_path: Option<String>,
}

/// The session fields of a payload.
pub fn with_session(
    mut payload: Payload,
    session: &Session,
    end_reason: &str,
    ended_at: Timestamp,
    active_session_count: usize,
) -> Payload {
    payload.provider = Some(session.key.provider.webhook_name().to_owned());
    payload.provider_name = session.key.provider_name().map(str::to_owned);
    payload.session_identifier = Some(session.key.session_id.clone());
    payload.started_at_utc = Some(session.started_at);
    payload.last_activity_at_utc = Some(session.last_activity_at);
    payload.ended_at_utc = Some(ended_at);
    payload.end_reason = Some(end_reason.to_owned());
    payload.active_session_count = Some(active_session_count);
    payload.input_prompt_preview = session.prompt_preview.clone();
    payload.last_assistant_message = session.last_assistant_message.clone();
    payload.working_directory = session.cwd.clone();
    payload.transcript_path = session.transcript_path.clone();
    payload
}

/// The prompt as the reference previews it: line breaks become spaces, trimmed; longer than
/// 50 characters keeps the first 47 — backing off to the last whitespace when that cut splits
/// a word — and appends `...`.
pub fn prompt_preview(prompt: &str) -> String {
    let flat = prompt
        .replace("\r\n", "\n")
        .replace('\r', "\n")
        .replace('\n', " ");
    let flat = flat.trim();
    if flat.chars().count() <= PROMPT_PREVIEW_CHARS {
        return flat.to_owned();
    }
    let keep = PROMPT_PREVIEW_CHARS - 3;
    let head: String = flat.chars().take(keep).collect();
    let next = flat.chars().nth(keep);
    let splits_word = next.is_some_and(|c| !c.is_whitespace())
        && head.chars().last().is_some_and(|c| !c.is_whitespace());
    let cut = if splits_word {
        match head.rfind(char::is_whitespace) {
            Some(at) => head[..at].trim_end().to_owned(),
            None => head,
        }
    } else {
        head.trim_end().to_owned()
    };
    format!("{cut}...")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::Provider;

    #[test]
    fn previews_follow_the_reference_rule() {
        assert_eq!(prompt_preview("  fix\r\nthe\rbuild\n "), "fix the build");
        let exact = "a".repeat(50);
        assert_eq!(prompt_preview(&exact), exact);
        // 47 characters end inside "consectetur": back off to the space before it.
        let text = "Lorem ipsum dolor sit amet, adipiscing elit, consectetur sed do eiusmod";
        assert_eq!(
            prompt_preview(text),
            "Lorem ipsum dolor sit amet, adipiscing elit,..."
        );
        let one_word = "x".repeat(80);
        assert_eq!(prompt_preview(&one_word), format!("{}...", "x".repeat(47)));
        // A cut right before a space keeps the whole word.
        let text = format!("{} tail tail tail", "w".repeat(47));
        assert_eq!(prompt_preview(&text), format!("{}...", "w".repeat(47)));
        assert!(prompt_preview(&"ü".repeat(60)).chars().count() == 50);
    }

    #[test]
    fn payloads_omit_absent_fields_and_use_reference_names() {
        let p = Payload {
            event_type: Some(EventType::PreSuspend),
            reason: "EmergencyHibernation".into(),
            user_interface_culture: "en".into(),
            ..Payload::default()
        };
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            serde_json::json!({"eventType":"PreSuspend","reason":"EmergencyHibernation","userInterfaceCulture":"en"})
        );
        assert_eq!(Provider::Copilot.webhook_name(), "GitHubCopilot");
    }
}
