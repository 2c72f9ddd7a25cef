//! The follow-up request state machine (the reference keeps it in SQLite; here it is a `Vec`).

use jiff::{SignedDuration, Timestamp};

use crate::{ActionResult, FollowUp, FollowUpStatus, PollFault, Received, WebhookFault};

/// How far past the initial deadline a follow-up request may be extended.
pub(crate) const MAXIMUM_EXTENSION: SignedDuration = SignedDuration::from_secs(300);

/// Allowed `extendMinutes` values.
pub(crate) const EXTEND_MINUTES: std::ops::RangeInclusive<i64> = 1..=5;

/// Everything the receiver remembers, behind one mutex.
#[derive(Debug, Default)]
pub(crate) struct State {
    /// Every recorded request, oldest first.
    pub(crate) requests: Vec<Received>,
    /// Every follow-up request, oldest first.
    pub(crate) follow_ups: Vec<FollowUp>,
    /// Current fault mode of the webhook endpoint.
    pub(crate) webhook_fault: WebhookFault,
    /// Current fault mode of the poll endpoint.
    pub(crate) poll_fault: PollFault,
}

/// 24 random bytes as 48 lowercase hex characters (random bits of two v4 UUIDs).
fn new_poll_token() -> String {
    let mut bytes = Vec::with_capacity(32);
    bytes.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
    bytes.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
    // Byte 6 and 8 of a v4 UUID carry version and variant bits; skip them.
    let random = bytes
        .iter()
        .enumerate()
        .filter(|(i, _)| !matches!(i % 16, 6 | 8))
        .map(|(_, b)| *b)
        .take(24);
    random.map(|b| format!("{b:02x}")).collect()
}

impl State {
    /// Lazy expiry: flips every `Pending` request whose deadline is not after `now` to `Expired`.
    pub(crate) fn expire(&mut self, now: Timestamp) {
        for follow_up in &mut self.follow_ups {
            if follow_up.status == FollowUpStatus::Pending && follow_up.deadline_at_utc <= now {
                follow_up.status = FollowUpStatus::Expired;
            }
        }
    }

    /// Creates a `Pending` follow-up request and returns a copy of it.
    pub(crate) fn create(
        &mut self,
        provider: String,
        session_identifier: String,
        deadline: Timestamp,
        now: Timestamp,
        poll_url_prefix: &str,
    ) -> FollowUp {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let poll_token = new_poll_token();
        let reply_poll_url = format!("{poll_url_prefix}/api/follow-ups/{id}/poll/{poll_token}");
        let follow_up = FollowUp {
            id,
            poll_token,
            reply_poll_url,
            status: FollowUpStatus::Pending,
            deadline_at_utc: deadline,
            maximum_deadline_at_utc: deadline
                .checked_add(MAXIMUM_EXTENSION)
                .unwrap_or(Timestamp::MAX),
            reply: None,
            replied_at_utc: None,
            consumed_at_utc: None,
            created_at_utc: now,
            provider,
            session_identifier,
        };
        self.follow_ups.push(follow_up);
        // A deadline already in the past expires at once.
        self.expire(now);
        self.follow_ups.last().cloned().expect("just pushed")
    }

    /// The follow-up request with public identifier `id` (hex digits compared case-insensitively).
    pub(crate) fn find(&self, id: &str) -> Option<&FollowUp> {
        self.follow_ups
            .iter()
            .find(|f| f.id.eq_ignore_ascii_case(id))
    }

    fn find_mut(&mut self, id: &str) -> Option<&mut FollowUp> {
        self.follow_ups
            .iter_mut()
            .find(|f| f.id.eq_ignore_ascii_case(id))
    }

    /// Stores a reply (without waiting for its consumption).
    pub(crate) fn reply(&mut self, id: &str, text: &str, now: Timestamp) -> ActionResult {
        if text.trim().is_empty() {
            return ActionResult::rejected(400, "Reply text is required.");
        }
        let Some(row) = self.find_mut(id) else {
            return ActionResult::not_found();
        };
        match row.status {
            FollowUpStatus::Pending => {
                row.status = FollowUpStatus::Answered;
                row.reply = Some(text.to_owned());
                row.replied_at_utc = Some(now);
                ActionResult::from_row(row, 200, true, false, "Reply saved.", now)
            }
            FollowUpStatus::Answered => ActionResult::refused(row, 409, ANSWERED, now),
            FollowUpStatus::Canceled => {
                ActionResult::refused(row, 409, "The follow-up request has been canceled.", now)
            }
            FollowUpStatus::Expired => ActionResult::refused(row, 410, EXPIRED, now),
        }
    }

    /// Moves the deadline to `max(current, now + minutes)`, capped at the maximum deadline.
    pub(crate) fn extend(&mut self, id: &str, minutes: i64, now: Timestamp) -> ActionResult {
        if !EXTEND_MINUTES.contains(&minutes) {
            return ActionResult::rejected(400, "extendMinutes must be between 1 and 5.");
        }
        let Some(row) = self.find_mut(id) else {
            return ActionResult::not_found();
        };
        match row.status {
            FollowUpStatus::Pending => {
                let wanted = now
                    .checked_add(SignedDuration::from_mins(minutes))
                    .unwrap_or(Timestamp::MAX);
                let new_deadline = row
                    .deadline_at_utc
                    .max(wanted)
                    .min(row.maximum_deadline_at_utc);
                let extended = new_deadline > row.deadline_at_utc;
                let message = if extended {
                    "Deadline extended."
                } else if row.deadline_at_utc >= row.maximum_deadline_at_utc {
                    "The deadline is already at the maximum."
                } else {
                    "The deadline is already later than requested."
                };
                row.deadline_at_utc = new_deadline;
                ActionResult::from_row(row, 200, true, extended, message, now)
            }
            FollowUpStatus::Answered | FollowUpStatus::Canceled => ActionResult::refused(
                row,
                409,
                "Only a pending follow-up request can be extended.",
                now,
            ),
            FollowUpStatus::Expired => ActionResult::refused(row, 410, EXPIRED, now),
        }
    }

    /// Cancels a pending request; canceling a canceled one succeeds again.
    pub(crate) fn cancel(&mut self, id: &str, now: Timestamp) -> ActionResult {
        let Some(row) = self.find_mut(id) else {
            return ActionResult::not_found();
        };
        match row.status {
            FollowUpStatus::Pending => {
                row.status = FollowUpStatus::Canceled;
                ActionResult::from_row(row, 200, true, false, "Follow-up request canceled.", now)
            }
            FollowUpStatus::Canceled => ActionResult::from_row(
                row,
                200,
                true,
                false,
                "The follow-up request was already canceled.",
                now,
            ),
            FollowUpStatus::Answered => ActionResult::refused(row, 409, ANSWERED, now),
            FollowUpStatus::Expired => ActionResult::refused(row, 410, EXPIRED, now),
        }
    }
}

/// Why an action on an expired request fails (410).
const EXPIRED: &str = "The follow-up request has expired.";
/// Why a reply or cancel on an answered request fails (409).
const ANSWERED: &str = "The follow-up request has already been answered.";

impl ActionResult {
    /// A result describing `row`.
    pub(crate) fn from_row(
        row: &FollowUp,
        http_status: u16,
        succeeded: bool,
        extended: bool,
        message: &str,
        now: Timestamp,
    ) -> Self {
        let remaining_ns = row.maximum_deadline_at_utc.as_nanosecond() - now.as_nanosecond();
        let remaining_seconds = if remaining_ns <= 0 {
            0
        } else {
            i64::try_from((remaining_ns + 999_999_999) / 1_000_000_000).unwrap_or(i64::MAX)
        };
        Self {
            http_status,
            succeeded,
            extended,
            status: Some(row.status),
            message: message.to_owned(),
            deadline_at_utc: Some(row.deadline_at_utc),
            maximum_deadline_at_utc: Some(row.maximum_deadline_at_utc),
            provider_hook_timeout_remaining_seconds: remaining_seconds,
            reply_consumed: row.consumed_at_utc.is_some(),
            consumed_at_utc: row.consumed_at_utc,
        }
    }

    /// A refusal (409, 410) that leaves `row` as it is.
    fn refused(row: &FollowUp, http_status: u16, message: &str, now: Timestamp) -> Self {
        Self::from_row(row, http_status, false, false, message, now)
    }

    /// A failed result that concerns no follow-up request (bad input, unknown identifier).
    pub(crate) fn rejected(http_status: u16, message: &str) -> Self {
        Self {
            http_status,
            succeeded: false,
            extended: false,
            status: None,
            message: message.to_owned(),
            deadline_at_utc: None,
            maximum_deadline_at_utc: None,
            provider_hook_timeout_remaining_seconds: 0,
            reply_consumed: false,
            consumed_at_utc: None,
        }
    }

    /// The 404 result for an unknown public identifier.
    pub(crate) fn not_found() -> Self {
        Self::rejected(404, "Follow-up request not found.")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_token_is_48_lowercase_hex() {
        let token = new_poll_token();
        assert_eq!(token.len(), 48);
        assert!(
            token
                .chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
        );
        assert_ne!(token, new_poll_token());
    }

    /// A follow-up request of session `s` created at `now`, due at `deadline`.
    fn created(state: &mut State, now: Timestamp, deadline: Timestamp) -> FollowUp {
        state.create("Claude".into(), "s".into(), deadline, now, "")
    }

    #[test]
    fn remaining_seconds_round_up_and_never_go_negative() {
        let now = Timestamp::now();
        let mut state = State::default();
        let row = created(&mut state, now, now + SignedDuration::from_millis(10_500));
        let result = ActionResult::from_row(&row, 200, true, false, "", now);
        assert_eq!(result.provider_hook_timeout_remaining_seconds, 311);
        let later = now + SignedDuration::from_secs(400);
        let result = ActionResult::from_row(&row, 200, true, false, "", later);
        assert_eq!(result.provider_hook_timeout_remaining_seconds, 0);
    }

    #[test]
    fn past_deadline_expires_at_creation() {
        let now = Timestamp::now();
        let mut state = State::default();
        let row = created(&mut state, now, now - SignedDuration::from_secs(1));
        assert_eq!(state.find(&row.id).unwrap().status, FollowUpStatus::Expired);
    }
}
