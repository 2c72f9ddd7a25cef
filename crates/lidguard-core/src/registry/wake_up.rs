//! The agent's own schedule. A turn that ends with a wake-up the agent set for itself (Claude
//! Code's session crons: `CronCreate`, `ScheduleWakeup`, `/loop`) is paused work when the
//! wake-up is near, and finished work when it is far: the machine is held until a near wake-up,
//! and let go for a far one, which starts the session again when it comes.

use super::*;
use crate::settings::DEFAULT_SESSION_TIMEOUT_MINUTES;

/// What a session held for its wake-up says in `status` and the log.
const WAKE_UP_REASON: &str = "its own scheduled wake-up";

impl Registry {
    /// How far ahead a wake-up still counts as the same work: the session's inactivity
    /// timeout (its default when the timeout is off), the silence lidguard tolerates anyway.
    fn wake_up_horizon(&self, session: &Session) -> SignedDuration {
        let minutes = self
            .timeout_minutes(session)
            .unwrap_or(DEFAULT_SESSION_TIMEOUT_MINUTES);
        SignedDuration::from_mins(i64::from(minutes))
    }

    /// Holds `key` until its wake-up at `at` when that is near, and answers the Stop; `None`
    /// when the wake-up is too far ahead (or the session unknown): the Stop then ends it.
    pub(super) fn await_wake_up(
        &mut self,
        key: &SessionKey,
        at: Timestamp,
        now: Timestamp,
        fx: &mut Vec<Effect>,
    ) -> Option<Reply> {
        let session = self.sessions.get(key)?;
        let horizon = self.wake_up_horizon(session);
        if at.duration_since(now) > horizon {
            let text = format!(
                "its scheduled wake-up at {at} is more than {} minutes away: released until then",
                horizon.as_mins()
            );
            log(fx, "session-wake-up-far", Some(key), &text);
            return None;
        }
        let session = self.sessions.get_mut(key).expect("looked up above");
        session.last_activity_at = now;
        session.pending_work = Some(PendingWork {
            reason: WAKE_UP_REASON.to_owned(),
            since: now,
            wakes_at: Some(at),
        });
        fx.push(Effect::SaveSession(Box::new(session.clone())));
        log(
            fx,
            "session-stop-deferred",
            Some(key),
            &format!("{WAKE_UP_REASON} at {at}"),
        );
        Some(Reply::StopDeferred)
    }

    /// Remembers, with the session `key` just ended, the far wake-up it was released for.
    pub(super) fn remember_far_wake_up(&mut self, key: &SessionKey, at: Timestamp) {
        if let Some(ended) = self.ended.iter_mut().rev().find(|e| e.key == *key) {
            ended.wakes_at = Some(at);
        }
    }

    /// Sessions released for a wake-up of their own that is still ahead, with its time.
    pub fn released_wake_ups(
        &self,
        now: Timestamp,
    ) -> impl Iterator<Item = (&SessionKey, Timestamp)> {
        self.ended
            .iter()
            .filter_map(move |e| Some((&e.key, e.wakes_at.filter(|at| *at > now)?)))
            .filter(|(key, _)| !self.sessions.contains_key(key))
    }
}
