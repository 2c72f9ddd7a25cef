//! Ask before sleep, the daemon's side: the HTTP exchange with the follow-up receiver
//! (README, Ask before sleep: what happens). It runs on a blocking thread and reports back to the
//! registry, which decides what the outcome means.
//!
//! 1. POST the StopFollowUp body; a 2xx answer carries `followUpRequestIdentifier`,
//!    `replyPollUrl` (absolute `http`/`https`, or relative to the webhook URL) and
//!    `expiresAtUtc` (an earlier one shortens the wait; absent is tolerated).
//! 2. Play the follow-up sound once, without waiting for it.
//! 3. GET the poll URL every second until the deadline: `Pending` waits, `Answered` gives
//!    the reply, `Expired` and `Canceled` end it; a later `expiresAtUtc` extends the wait
//!    (within the registry's limit). Anything else, or an HTTP failure, ends it as a failed
//!    poll. Every request has the 5 s limit of all webhooks.

use crate::webhook::HttpError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use jiff::Timestamp;
use lidguard_core::ask::AskOutcome;
use lidguard_core::webhook::Payload;
use serde::Deserialize;

/// The longest the post-stop (or follow-up) sound may play.
pub(crate) const SOUND_LIMIT: Duration = Duration::from_secs(60);

/// The pause between two polls.
const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// One question to the receiver.
pub(crate) struct Exchange {
    /// The follow-up webhook URL.
    pub(crate) url: String,
    /// The StopFollowUp body.
    pub(crate) payload: Payload,
    /// The webhook secret (empty: unsigned).
    pub(crate) secret: String,
    /// Until when to wait for a reply.
    pub(crate) reply_deadline: Timestamp,
    /// The furthest the receiver may move it.
    pub(crate) latest: Timestamp,
    /// The follow-up sound (empty: none) and its temporary volume.
    pub(crate) sound: String,
    pub(crate) volume_percent: Option<u8>,
    /// The agent process; once it has exited there is no one to continue.
    pub(crate) watched_pid: Option<u32>,
}

impl Exchange {
    fn agent_exited(&self) -> bool {
        self.watched_pid.is_some_and(|pid| {
            !lidguard_platform::process::is_alive(&lidguard_platform::sources::Roots::system(), pid)
        })
    }
}

/// The receiver's answer to the StopFollowUp POST.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Started {
    #[serde(default)]
    follow_up_request_identifier: Option<String>,
    #[serde(default)]
    reply_poll_url: Option<String>,
    #[serde(default)]
    expires_at_utc: Option<Timestamp>,
}

/// The receiver's answer to a poll.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Polled {
    status: String,
    #[serde(default)]
    reply: Option<String>,
    #[serde(default)]
    expires_at_utc: Option<Timestamp>,
}

/// Runs the exchange. `moved` hears every new reply deadline; `canceled` ends it early (the
/// registry no longer waits, so the outcome is then ignored).
pub(crate) fn run(mut x: Exchange, canceled: &AtomicBool, moved: &dyn Fn(Timestamp)) -> AskOutcome {
    crate::webhook::fill_last_message(&mut x.payload);
    // An agent that already exited (`opencode run` ends with its turn) cannot take a reply:
    // do not ask the user a question whose answer would be lost.
    if x.agent_exited() {
        return AskOutcome::AgentExited;
    }
    let answer = match crate::webhook::post(&x.url, &x.payload, &x.secret) {
        Ok(answer) => answer,
        Err(e) => return AskOutcome::WebhookFailed(e.to_string()),
    };
    let started: Started = match serde_json::from_str(&answer.body) {
        Ok(started) => started,
        Err(e) => {
            return AskOutcome::WebhookFailed(format!("the answer is not the follow-up JSON: {e}"));
        }
    };
    let Some(poll) = started
        .reply_poll_url
        .as_deref()
        .and_then(|p| poll_url(&x.url, p))
    else {
        return AskOutcome::PollFailed(format!(
            "no usable replyPollUrl in the answer ({:?})",
            started.reply_poll_url
        ));
    };
    tracing::info!(
        request = started
            .follow_up_request_identifier
            .as_deref()
            .unwrap_or(""),
        host = poll.host_str().unwrap_or(""),
        "ask before sleep: question sent; polling for the reply"
    );
    let mut deadline = x.reply_deadline;
    if let Some(expires) = started.expires_at_utc
        && expires < deadline
    {
        deadline = expires;
        moved(deadline);
    }
    play_sound(&x);
    loop {
        if canceled.load(Ordering::Relaxed) {
            return AskOutcome::Canceled;
        }
        if Timestamp::now() > deadline {
            return AskOutcome::Expired;
        }
        if x.agent_exited() {
            return AskOutcome::AgentExited;
        }
        let polled = crate::webhook::get(poll.as_str(), &x.secret).and_then(|a| {
            serde_json::from_str::<Polled>(&a.body).map_err(|source| HttpError::Decode {
                what: "the poll answer is not the follow-up JSON",
                source,
            })
        });
        let polled = match polled {
            Ok(polled) => polled,
            Err(e) => return AskOutcome::PollFailed(e.to_string()),
        };
        if let Some(expires) = polled.expires_at_utc
            && expires > deadline
        {
            let extended = expires.min(x.latest);
            if extended != deadline {
                deadline = extended;
                moved(deadline);
            }
        }
        // Exact, case-sensitive strings from the receiver.
        match polled.status.as_str() {
            "Pending" => sleep_unless(canceled, POLL_INTERVAL),
            "Answered" => {
                let reply = polled.reply.unwrap_or_default().trim().to_owned();
                return if reply.is_empty() {
                    AskOutcome::PollFailed("the reply was empty".into())
                } else {
                    AskOutcome::Answered(reply)
                };
            }
            "Expired" => return AskOutcome::Expired,
            "Canceled" => return AskOutcome::Canceled,
            other => return AskOutcome::PollFailed(format!("unknown status {other:?}")),
        }
    }
}

/// The poll URL: absolute `http`/`https`, or relative to the webhook URL.
fn poll_url(webhook: &str, poll: &str) -> Option<url::Url> {
    let poll = poll.trim();
    if poll.is_empty() {
        return None;
    }
    let base = url::Url::parse(webhook).ok()?;
    let resolved = base.join(poll).ok()?;
    matches!(resolved.scheme(), "http" | "https").then_some(resolved)
}

/// Plays the follow-up sound once on its own thread: a sound never delays the polls.
fn play_sound(x: &Exchange) {
    let sound = x.sound.trim().to_owned();
    if sound.is_empty() {
        return;
    }
    let volume = x.volume_percent;
    std::thread::spawn(
        move || match lidguard_platform::sound::play(&sound, volume, SOUND_LIMIT) {
            Ok(played) => tracing::info!(?played, "follow-up sound played"),
            Err(e) => tracing::warn!(error = %e, "follow-up sound not played"),
        },
    );
}

fn sleep_unless(canceled: &AtomicBool, total: Duration) {
    let step = Duration::from_millis(100);
    let mut left = total;
    while !left.is_zero() && !canceled.load(Ordering::Relaxed) {
        let now = step.min(left);
        std::thread::sleep(now);
        left -= now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_urls_are_absolute_or_relative_to_the_webhook() {
        let hook = "https://n.example/api/webhooks/lidguard/s3cret";
        assert_eq!(
            poll_url(hook, "/api/follow-ups/ab/poll/cd")
                .unwrap()
                .as_str(),
            "https://n.example/api/follow-ups/ab/poll/cd"
        );
        assert_eq!(
            poll_url(hook, "http://other.example:8080/p?x=1")
                .unwrap()
                .as_str(),
            "http://other.example:8080/p?x=1"
        );
        assert!(poll_url(hook, "").is_none());
        assert!(poll_url(hook, "   ").is_none());
        assert!(poll_url(hook, "file:///etc/passwd").is_none());
        assert!(poll_url(hook, "ftp://n.example/x").is_none());
    }

    #[test]
    fn answers_tolerate_a_missing_expiry_and_read_dotnet_timestamps() {
        let s: Started =
            serde_json::from_str(r#"{"followUpRequestIdentifier":"ab","replyPollUrl":"/p"}"#)
                .unwrap();
        assert!(s.expires_at_utc.is_none());
        let p: Polled = serde_json::from_str(
            r#"{"status":"Pending","reply":null,"expiresAtUtc":"2026-12-01T20:00:00.1234567+00:00"}"#,
        )
        .unwrap();
        assert_eq!(p.status, "Pending");
        assert_eq!(
            p.expires_at_utc.unwrap().to_string(),
            "2026-12-01T20:00:00.1234567Z"
        );
    }
}
