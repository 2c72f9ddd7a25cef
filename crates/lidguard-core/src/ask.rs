//! Ask before sleep (the reference's "closed-lid stop follow-up"), restated from reference
//! system §4.5: when an agent's turn ends with the lid closed and the machine is about to
//! sleep, lidguard first asks the user through the follow-up webhook whether the agent should
//! go on. The agent's Stop hook waits meanwhile; a reply becomes the hook's continuation
//! (`{"decision":"block","reason":"<reply>"}`) and the same session carries on.
//!
//! The rules (gate, order, outcomes, repeat) live in [`crate::registry::Registry`]; the HTTP
//! exchange with the receiver is the daemon's. This module holds the vocabulary they share.

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::session::SessionKey;

/// How long before the managed hook timeout the waiting hook is answered at the latest, so
/// the agent never kills it (its timeout is `max(30, delay + reply wait + 300)` seconds).
pub const HOOK_MARGIN: SignedDuration = SignedDuration::from_secs(10);

/// The longest a receiver may push the reply deadline past the one lidguard asked for (the
/// reference receiver's dashboard extends by up to 5 minutes).
pub const MAX_EXTENSION: SignedDuration = SignedDuration::from_secs(300);

/// The runtime status strings of an ask (README, Ask before sleep: the outcomes), also used in log names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AskStatus {
    /// Waiting out the post-stop delay before asking.
    WaitingForDelay,
    /// The question is out; waiting for the reply.
    AwaitingReply,
    /// Canceled: new activity, the lid opened, emergency hibernation, or the user canceled it.
    Canceled,
    /// The feature is not on.
    Disabled,
    /// The reply poll failed or answered something unusable.
    PollFailed,
    /// The user replied; the session goes on.
    ReplyReceived,
    /// No reply in time.
    TimedOut,
    /// The follow-up webhook failed.
    WebhookFailed,
}

impl AskStatus {
    /// The reference's string, e.g. `awaiting-reply`.
    pub fn as_str(self) -> &'static str {
        match self {
            AskStatus::WaitingForDelay => "waiting-for-delay",
            AskStatus::AwaitingReply => "awaiting-reply",
            AskStatus::Canceled => "canceled",
            AskStatus::Disabled => "disabled",
            AskStatus::PollFailed => "poll-failed",
            AskStatus::ReplyReceived => "reply-received",
            AskStatus::TimedOut => "timed-out",
            AskStatus::WebhookFailed => "webhook-failed",
        }
    }
}

/// An ask attached to a pending suspend: whose hook waits, and until when.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ask {
    /// The session whose Stop hook waits for the answer.
    pub key: SessionKey,
    /// The hook is answered by then, whatever happens.
    pub hook_deadline: Timestamp,
    /// Until when a reply is awaited, once asked (the receiver may move it).
    pub reply_deadline: Option<Timestamp>,
    /// The furthest the receiver may move it: [`MAX_EXTENSION`] past the first deadline,
    /// within the hook's limit.
    pub latest_reply_deadline: Option<Timestamp>,
    /// Where it is.
    pub status: AskStatus,
}

/// What the daemon's exchange with the receiver came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AskOutcome {
    /// The user replied with this text (already trimmed; never empty).
    Answered(String),
    /// The receiver says the question expired, or the deadline passed.
    Expired,
    /// The user canceled the question: sleep now.
    Canceled,
    /// The follow-up webhook failed (non-2xx, timeout, unreadable answer).
    WebhookFailed(String),
    /// A poll failed or answered something unusable.
    PollFailed(String),
    /// The agent's process exited: no one is left to continue (e.g. `opencode run`).
    AgentExited,
    /// The agent stopped waiting for its Stop hook (its own hook timeout, or the user): a
    /// reply could not reach it.
    HookGone,
}

impl AskOutcome {
    /// The status this outcome leaves.
    pub fn status(&self) -> AskStatus {
        match self {
            AskOutcome::Answered(_) => AskStatus::ReplyReceived,
            AskOutcome::Expired => AskStatus::TimedOut,
            AskOutcome::Canceled | AskOutcome::AgentExited | AskOutcome::HookGone => {
                AskStatus::Canceled
            }
            AskOutcome::WebhookFailed(_) => AskStatus::WebhookFailed,
            AskOutcome::PollFailed(_) => AskStatus::PollFailed,
        }
    }

    /// Words for the log.
    pub fn detail(&self) -> String {
        match self {
            AskOutcome::Answered(reply) => format!("{} characters", reply.chars().count()),
            AskOutcome::Expired => "no reply in time".into(),
            AskOutcome::Canceled => "the user canceled the question".into(),
            AskOutcome::AgentExited => "the agent's process exited; nothing to continue".into(),
            AskOutcome::HookGone => "the agent stopped waiting for its Stop hook".into(),
            AskOutcome::WebhookFailed(why) | AskOutcome::PollFailed(why) => why.clone(),
        }
    }
}

/// One exchange asked through several transports at once (the follow-up webhook, ntfy): the
/// first reply, cancel or agent exit from any of them settles it; failures and expiries wait
/// for the others. With none left, a question that ran out its wait on some transport counts
/// as expired (it was asked and not answered), else the first failure is the outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transports {
    left: u8,
    expired: bool,
    failure: Option<AskOutcome>,
}

impl Transports {
    /// An exchange running on `count` transports.
    pub fn new(count: u8) -> Transports {
        Transports {
            left: count,
            expired: false,
            failure: None,
        }
    }

    /// One transport ended with `outcome`: the exchange's outcome once it is settled.
    pub fn report(&mut self, outcome: AskOutcome) -> Option<AskOutcome> {
        self.left = self.left.saturating_sub(1);
        if matches!(
            outcome,
            AskOutcome::Answered(_) | AskOutcome::Canceled | AskOutcome::AgentExited
        ) {
            return Some(outcome);
        }
        if outcome == AskOutcome::Expired {
            self.expired = true;
        } else if self.failure.is_none() {
            self.failure = Some(outcome.clone());
        }
        if self.left > 0 {
            return None;
        }
        Some(if self.expired {
            AskOutcome::Expired
        } else {
            self.failure.take().unwrap_or(outcome)
        })
    }
}

#[cfg(test)]
mod transport_tests {
    use super::*;

    #[test]
    fn the_first_answer_settles_failures_wait_for_the_others() {
        use AskOutcome::{Answered, Expired, PollFailed, WebhookFailed};
        let failed = |why: &str| WebhookFailed(why.into());
        // (the first report, the second, what the two come to)
        for (first, second, settled) in [
            (failed("500"), Answered("go".into()), Answered("go".into())),
            // Asked on one, failed on the other: unanswered is expired, not a failure.
            (PollFailed("x".into()), Expired, Expired),
            (Expired, failed("y"), Expired),
            // Failed everywhere: the first failure.
            (failed("a"), failed("b"), failed("a")),
        ] {
            let mut both = Transports::new(2);
            assert_eq!(both.report(first), None);
            assert_eq!(both.report(second), Some(settled));
        }
        // "Sleep now" from either ends it at once.
        let mut both = Transports::new(2);
        assert_eq!(
            both.report(AskOutcome::Canceled),
            Some(AskOutcome::Canceled)
        );
        let mut one = Transports::new(1);
        assert_eq!(
            one.report(AskOutcome::WebhookFailed("c".into())),
            Some(AskOutcome::WebhookFailed("c".into()))
        );
    }
}
