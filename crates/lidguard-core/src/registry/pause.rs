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
        log(fx, "protection-paused", None, &until_text(until));
        fx.push(Effect::SavePause(self.pause));
        Reply::Recorded
    }

    /// Takes back the pause a stopped daemon kept; [`Registry::tick_pause`] ends it if its
    /// time has come.
    pub(super) fn restore_pause(
        &mut self,
        pause: Pause,
        now: Timestamp,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        self.pause = Some(pause);
        log(
            fx,
            "protection-pause-restored",
            None,
            &until_text(pause.until),
        );
        self.tick_pause(now, fx);
        Reply::Recorded
    }

    /// Ends a pause (`why`: the user resumed, or its time ran out).
    pub(super) fn resume(&mut self, why: &str, fx: &mut Vec<Effect>) -> Reply {
        if self.pause.take().is_none() {
            return Reply::Unchanged;
        }
        log(fx, "protection-resumed", None, why);
        fx.push(Effect::SavePause(None));
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

/// How long a pause lasts, for the event log.
fn until_text(until: Option<Timestamp>) -> String {
    until.map_or_else(|| "until resumed".to_owned(), |at| format!("until {at}"))
}
