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

fn optional_string<'a>(
    object: &'a Map<String, Value>,
    name: &str,
) -> Result<Option<&'a str>, String> {
    match field(object, name) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("{name} must be a string.")),
    }
}

fn required_string<'a>(object: &'a Map<String, Value>, name: &str) -> Result<&'a str, String> {
    match optional_string(object, name)? {
        Some(s) if !s.trim().is_empty() => Ok(s),
        _ => Err(format!("{name} is required.")),
    }
}

fn optional_integer(object: &Map<String, Value>, name: &str) -> Result<Option<i64>, String> {
    match field(object, name) {
        None => Ok(None),
        Some(value) => value
            .as_i64()
            .map(Some)
            .ok_or_else(|| format!("{name} must be an integer.")),
    }
}

fn expect_reason(reason: Option<&str>, allowed: &[&str], event_type: &str) -> Result<(), String> {
    match reason {
        Some(reason) if allowed.contains(&reason) => Ok(()),
        Some(reason) => Err(format!(
            "reason '{reason}' is not valid for {event_type}; expected {}.",
            allowed.join(" or ")
        )),
        None => Err(format!("reason is required for {event_type}.")),
    }
}

/// Validates a webhook body; the error is the text of the 400 answer.
pub(crate) fn webhook(body: &[u8]) -> Result<Event, String> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| format!("The request body is not valid JSON: {e}"))?;
    let Value::Object(object) = value else {
        return Err("The request body must be a JSON object.".to_owned());
    };

    let event_type = optional_string(&object, "eventType")?.ok_or("eventType is required.")?;
    if !EVENT_TYPES.contains(&event_type) {
        return Err(format!(
            "eventType '{event_type}' is not supported; expected {}.",
            EVENT_TYPES.join(", ")
        ));
    }
    if optional_integer(&object, "softLockedSessionCount")?.is_some_and(|n| n < 0) {
        return Err("softLockedSessionCount must not be negative.".to_owned());
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
                Some(_) => return Err("replyWaitSeconds must be greater than 0.".to_owned()),
                None => return Err("replyWaitSeconds is required.".to_owned()),
            }
            let deadline = required_string(&object, "replyDeadlineUtc")?;
            let deadline: Timestamp = deadline.parse().map_err(|e| {
                format!("replyDeadlineUtc '{deadline}' is not an RFC 3339 timestamp: {e}")
            })?;
            Ok(Event::StopFollowUp {
                provider: provider.to_owned(),
                session_identifier: session_identifier.to_owned(),
                deadline,
            })
        }
    }
}
