//! How the runtime words what happened: the event stream's lines and the answers' outcomes.
//! Pure: built from what the registry and the parts report.

use jiff::Timestamp;
use lidguard_core::event::{AgentEvent, Lid};
use lidguard_core::registry::{Effect, LogEvent, Reply};
use lidguard_core::session::SessionKey;
use lidguard_core::settings::Settings;
use lidguard_core::suspend::Machine;
use lidguard_core::webhook::EventType;
use lidguard_ipc::protocol::{Outcome, Response, SessionRef, SuspendHistoryEntry};
use lidguard_ipc::stream::{
    Authority, Observation, Provenance, STREAM_VERSION, Source, StreamEvent, Verdict, Visibility,
};

use super::outbound::Attempt;

/// The name the stream gives what went to ntfy (next to the webhooks).
pub(super) const NTFY: &str = "ntfy";

/// A daemon event for the stream, about the session `key` if any.
pub(super) fn daemon_event(
    kind: &str,
    key: Option<&SessionKey>,
    detail: Option<String>,
) -> StreamEvent {
    let mut event = StreamEvent::daemon(kind, detail);
    if let Some(key) = key {
        event.observation.provider = Some(key.provider);
        event.observation.provider_name = key.provider_name().map(str::to_owned);
        event.observation.session_id = Some(key.session_id.clone());
    }
    event
}

/// The stream's line for one hook event: what came, who decided what, and what the agent was
/// shown (`stdout`, the exact bytes its hook printed).
pub(super) fn hook_line(
    event: &AgentEvent,
    at: Timestamp,
    authority: Authority,
    visibility: Visibility,
) -> StreamEvent {
    StreamEvent {
        v: STREAM_VERSION,
        observation: Observation {
            id: 0,
            at,
            source: Source::Hook,
            kind: event.kind.name().to_owned(),
            provider: Some(event.provider),
            provider_name: None,
            session_id: Some(event.session_id.clone()),
            hook_event: Some(event.hook_event.clone()),
            tool: event.tool_name.clone(),
            cwd: event.cwd.clone(),
            payload_digest: event.payload_digest.clone(),
            detail: None,
        },
        authority,
        visibility,
    }
}

/// The authority of a hook event that made no closed-lid decision: a soft-lock it caused, with
/// where it came from (the closed-lid `ask` policy, or the agent saying it waits), else none.
pub(super) fn soft_lock_authority(
    before: Option<&str>,
    after: Option<&str>,
    settings: &Settings,
    (lid, external_displays): (Lid, Option<u32>),
) -> Authority {
    let Some(reason) = after.filter(|a| before != Some(*a)) else {
        return Authority::none();
    };
    let provenance = if reason == lidguard_core::event::CLOSED_LID_ASK_REASON {
        Provenance {
            setting: Some("closedLidPermissionRequestDecision".to_owned()),
            value: Some(
                settings
                    .closed_lid_permission_request_decision
                    .as_str()
                    .to_owned(),
            ),
            lid: Some(lid),
            external_displays,
            reason: Some(reason.to_owned()),
        }
    } else {
        Provenance {
            setting: None,
            value: None,
            lid: None,
            external_displays: None,
            reason: Some(reason.to_owned()),
        }
    };
    Authority {
        decision: Verdict::SoftLock,
        provenance: Some(provenance),
        outcome: None,
    }
}

/// What a hook prints for what its agent's dialect `rendered`: that line, ended.
pub(super) fn printed(rendered: Option<String>) -> Option<String> {
    rendered.map(|line| line + "\n")
}

/// The wire outcome of a core reply, and what it means in words.
pub(super) fn reply_outcome(reply: &Reply) -> (Outcome, String) {
    match reply {
        Reply::Started => (Outcome::Started, "started".into()),
        Reply::Updated => (Outcome::Updated, "updated".into()),
        Reply::Stopped => (Outcome::Stopped, "stopped".into()),
        Reply::StopDeferred => (
            Outcome::StopDeferred,
            "stays active: background work is still running".into(),
        ),
        Reply::AlreadyStopped { end_reason } => (
            Outcome::AlreadyStopped,
            format!("had already stopped ({end_reason})"),
        ),
        Reply::Recorded => (Outcome::Recorded, "updated".into()),
        Reply::Unchanged => (Outcome::Unchanged, "unchanged".into()),
        Reply::UnknownSession => (Outcome::UnknownSession, "no such session".into()),
        Reply::Removed(_) | Reply::Done => (Outcome::Done, "done".into()),
    }
}

/// The wire name of a core reply (`recorded`, `started`, …).
pub(super) fn outcome_name(reply: &Reply) -> String {
    wire_name(reply_outcome(reply).0)
}

/// The webhook an effect sends, as the receiver names its event type.
pub(super) fn webhook_sent(effect: &Effect) -> Option<String> {
    match effect {
        Effect::Webhook { payload, .. } => payload.event_type.map(webhook_name),
        Effect::Ask { .. } => Some(webhook_name(EventType::StopFollowUp)),
        _ => None,
    }
}

/// The line saying the count of external displays changed, if it did.
pub(super) fn displays_changed(before: Machine, now: Machine) -> Option<StreamEvent> {
    if now.external_displays == before.external_displays {
        return None;
    }
    let detail = match now.external_displays {
        Some(n) => format!("{n} external"),
        None => "unknown".to_owned(),
    };
    Some(daemon_event("displays-changed", None, Some(detail)))
}

/// A webhook event type as the receiver sees it (`PreSuspend`, …).
fn webhook_name(event: EventType) -> String {
    wire_name(event)
}

fn wire_name(value: impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The answer to a request about one session.
pub(super) fn session_answer(reply: &Reply, key: &SessionKey) -> Response {
    let (outcome, message) = reply_outcome(reply);
    let mut answer = Response::ok(outcome, format!("session {key}: {message}"));
    answer.sessions = vec![session_ref(key)];
    answer
}

/// The answer to a request that removed sessions: `none` when there were none, else `verb`
/// and the count of `what`.
pub(super) fn removed_answer(keys: &[SessionKey], none: &str, verb: &str, what: &str) -> Response {
    let message = match keys.len() {
        0 => none.to_owned(),
        1 => format!("{verb} 1 {what}"),
        n => format!("{verb} {n} {what}s"),
    };
    let mut answer = Response::ok(Outcome::Removed, message);
    answer.sessions = keys.iter().map(session_ref).collect();
    answer
}

pub(super) fn session_ref(key: &SessionKey) -> SessionRef {
    SessionRef {
        provider: key.provider,
        session_id: key.session_id.clone(),
        provider_name: key.provider_name().map(str::to_owned),
    }
}

/// The authority of a continuation: the user's reply, through ntfy or the receiver.
pub(super) fn continued(by_ntfy: bool) -> Authority {
    let setting = match by_ntfy {
        true => "ntfyUrl",
        false => "closedLidStopFollowUpWebhookUrl",
    };
    Authority {
        decision: Verdict::Continue,
        provenance: Some(Provenance {
            setting: Some(setting.to_owned()),
            value: None,
            lid: None,
            external_displays: None,
            reason: Some("the user replied to the ask-before-sleep question".to_owned()),
        }),
        outcome: None,
    }
}

/// The log event of one suspend attempt.
pub(super) fn suspend_attempt(entry: &SuspendHistoryEntry) -> LogEvent {
    let name = match entry.succeeded {
        true => "suspend-succeeded",
        false => "suspend-failed",
    };
    let error = entry.error.as_deref().map(|e| format!(": {e}"));
    LogEvent {
        name: name.to_owned(),
        key: None,
        detail: format!(
            "{} ({:?}){}",
            entry.suspend_mode,
            entry.reason,
            error.unwrap_or_default()
        ),
    }
}

/// The stream's line for one webhook attempt.
pub(super) fn attempt_line(attempt: &Attempt, logged: bool) -> StreamEvent {
    let kind = match attempt.ok {
        true => "webhook-sent",
        false => "webhook-failed",
    };
    let key = attempt.session_id.as_ref().and_then(|id| {
        let provider = attempt.provider.as_deref()?.parse().ok()?;
        Some(SessionKey::new(provider, id.clone(), ""))
    });
    let detail = format!(
        "{} to {}: {}",
        attempt.event_type, attempt.host, attempt.result
    );
    let mut line = daemon_event(kind, key.as_ref(), Some(detail));
    line.visibility.logged = logged;
    line.visibility.webhooks = vec![attempt.event_type.clone()];
    line
}
