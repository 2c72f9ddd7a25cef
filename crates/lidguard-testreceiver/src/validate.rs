//! Webhook payload validation, following the reference receiver's rules.

use jiff::Timestamp;
use serde_json::{Map, Value};

/// What a valid webhook asks the receiver to do.
#[derive(Debug)]
pub(crate) enum Event {
    /// `PreSuspend` or `PostSessionEnd`: acknowledge with 202 and an empty body.
    Notification,
    /// `StopFollowUp`: create a follow-up request.
    StopFollowUp {
        /// The `provider` field.
        provider: String,
        /// The `sessionIdentifier` field.
        session_identifier: String,
        /// The `replyDeadlineUtc` field.
        deadline: Timestamp,
    },
}

/// The event types the receiver accepts.
const EVENT_TYPES: [&str; 3] = ["PreSuspend", "PostSessionEnd", "StopFollowUp"];

/// The reasons a `PreSuspend` event may carry.
const PRE_SUSPEND_REASONS: [&str; 3] = ["Completed", "SoftLocked", "EmergencyHibernation"];

/// A field's value, with JSON `null` treated like an absent field (LidGuard omits nulls).
fn field<'a>(object: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    object.get(name).filter(|v| !v.is_null())
}

/// Why a webhook body is refused; the text is the 400 answer's (the reference's wording).
#[derive(Debug, thiserror::Error)]
pub(crate) enum Invalid {
    #[error("The request body is not valid JSON: {0}")]
    NotJson(serde_json::Error),
    #[error("The request body must be a JSON object.")]
    NotAnObject,
    #[error("{0} must be a string.")]
    NotAString(String),
    #[error("{0} is required.")]
    Missing(String),
    #[error("{0} must be an integer.")]
    NotAnInteger(String),
    #[error("eventType '{0}' is not supported; expected {events}.", events = EVENT_TYPES.join(", "))]
    UnknownEvent(String),
    #[error("softLockedSessionCount must not be negative.")]
    NegativeCount,
    #[error("reason '{reason}' is not valid for {event}; expected {}.", .allowed.join(" or "))]
    WrongReason {
        reason: String,
        event: String,
        allowed: &'static [&'static str],
    },
    #[error("reason is required for {0}.")]
    NoReason(String),
    #[error("replyWaitSeconds must be greater than 0.")]
    NoWait,
    #[error("replyDeadlineUtc '{deadline}' is not an RFC 3339 timestamp: {source}")]
    BadDeadline {
        deadline: String,
        source: jiff::Error,
    },
}

fn optional_string<'a>(
    object: &'a Map<String, Value>,
    name: &str,
) -> Result<Option<&'a str>, Invalid> {
    match field(object, name) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(Invalid::NotAString(name.to_owned())),
    }
}

fn required_string<'a>(object: &'a Map<String, Value>, name: &str) -> Result<&'a str, Invalid> {
    match optional_string(object, name)? {
        Some(s) if !s.trim().is_empty() => Ok(s),
        _ => Err(Invalid::Missing(name.to_owned())),
    }
}

fn optional_integer(object: &Map<String, Value>, name: &str) -> Result<Option<i64>, Invalid> {
    match field(object, name) {
        None => Ok(None),
        Some(value) => value
            .as_i64()
            .map(Some)
            .ok_or_else(|| Invalid::NotAnInteger(name.to_owned())),
    }
}

fn expect_reason(
    reason: Option<&str>,
    allowed: &'static [&'static str],
    event_type: &str,
) -> Result<(), Invalid> {
    match reason {
        Some(reason) if allowed.contains(&reason) => Ok(()),
        Some(reason) => Err(Invalid::WrongReason {
            reason: reason.to_owned(),
            event: event_type.to_owned(),
            allowed,
        }),
        None => Err(Invalid::NoReason(event_type.to_owned())),
    }
}

/// Validates a webhook body; the error is the text of the 400 answer.
pub(crate) fn webhook(body: &[u8]) -> Result<Event, Invalid> {
    let value: Value = serde_json::from_slice(body).map_err(Invalid::NotJson)?;
    let Value::Object(object) = value else {
        return Err(Invalid::NotAnObject);
    };

    let event_type = optional_string(&object, "eventType")?
        .ok_or_else(|| Invalid::Missing("eventType".to_owned()))?;
    if !EVENT_TYPES.contains(&event_type) {
        return Err(Invalid::UnknownEvent(event_type.to_owned()));
    }
    if optional_integer(&object, "softLockedSessionCount")?.is_some_and(|n| n < 0) {
        return Err(Invalid::NegativeCount);
    }
    let reason = optional_string(&object, "reason")?;

    match event_type {
        "PreSuspend" => {
            expect_reason(reason, &PRE_SUSPEND_REASONS, event_type)?;
            Ok(Event::Notification)
        }
        "PostSessionEnd" => {
            expect_reason(reason, &["SessionEnded"], event_type)?;
            required_string(&object, "provider")?;
            required_string(&object, "sessionIdentifier")?;
            Ok(Event::Notification)
        }
        _ => {
            expect_reason(reason, &["AwaitingReply"], event_type)?;
            let provider = required_string(&object, "provider")?;
            let session_identifier = required_string(&object, "sessionIdentifier")?;
            match optional_integer(&object, "replyWaitSeconds")? {
                Some(seconds) if seconds > 0 => {}
                Some(_) => return Err(Invalid::NoWait),
                None => return Err(Invalid::Missing("replyWaitSeconds".to_owned())),
            }
            let deadline = required_string(&object, "replyDeadlineUtc")?;
            let deadline: Timestamp = deadline.parse().map_err(|source| Invalid::BadDeadline {
                deadline: deadline.to_owned(),
                source,
            })?;
            Ok(Event::StopFollowUp {
                provider: provider.to_owned(),
                session_identifier: session_identifier.to_owned(),
                deadline,
            })
        }
    }
}
