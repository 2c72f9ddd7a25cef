//! The user's hand on protection: pausing it (for a while or until resumed) and cancelling a
//! suspend on its way.

use super::*;
use crate::protection::Pause;

impl Registry {
    /// Pauses protection until `until` (`None`: until resumed). A new pause replaces one in
    /// force.
    pub(super) fn pause(
        &mut self,
        until: Option<Timestamp>,
        now: Timestamp,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        let until = until.filter(|u| *u > now);
        if self.pause.is_some_and(|p| p.until == until) {
            return Reply::Unchanged;
        }
        let since = self.pause.map_or(now, |p| p.since);
        self.pause = Some(Pause { since, until });
        let detail = match until {
            Some(at) => format!("until {at}"),
            None => "until resumed".to_owned(),
        };
        log(fx, "protection-paused", None, &detail);
        Reply::Recorded
    }

    /// Ends a pause (`why`: the user resumed, or its time ran out).
    pub(super) fn resume(&mut self, why: &str, fx: &mut Vec<Effect>) -> Reply {
        if self.pause.take().is_none() {
            return Reply::Unchanged;
        }
        log(fx, "protection-resumed", None, why);
        Reply::Recorded
    }

    /// A pause whose time has come ends.
    pub(super) fn tick_pause(&mut self, now: Timestamp, fx: &mut Vec<Effect>) {
        if self
            .pause
            .and_then(|p| p.until)
            .is_some_and(|until| until <= now)
        {
            self.resume("the pause ended", fx);
        }
    }

    /// The user cancels the suspend on its way (a Stop hook waiting on it is let go).
    pub(super) fn cancel_by_user(&mut self, fx: &mut Vec<Effect>) -> Reply {
        if self.pending_suspend.is_none() {
            return Reply::Unchanged;
        }
        self.cancel_suspend("canceled by the user", fx);
        Reply::Recorded
    }
}
