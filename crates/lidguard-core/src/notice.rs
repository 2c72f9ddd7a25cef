//! The one place that decides which moments need the user: a session now waits for them, it
//! works again, protection failed, a closed-lid suspend is on its way, the battery floor or a
//! serious thermal state let protection go. Pure: the daemon hands in an input's effects (and,
//! after they are carried out, whether protection holds) and gets [`Moment`]s, which it hands
//! to every channel — the desktop ([`crate::desktop`]), the phone, any other. A channel decides
//! only whether and how it tells a moment (its setting, the lid, its rate), never whether the
//! moment happened.

use std::collections::HashMap;

use crate::registry::{Effect, Registry};
use crate::remote::{Whereabouts, waits_for_user};
use crate::session::{Session, SessionKey};
use crate::suspend::SuspendReason;

/// What a moment is about; with the session, for a wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// Protection is wanted and cannot be held.
    ProtectionFailed,
    /// A closed-lid suspend is on its way while sessions wait for the user.
    SuspendScheduled,
    /// An agent waits for the user.
    WaitingForYou,
    /// On battery below the floor: protection released.
    BatteryFloor,
    /// At a serious thermal state: protection released.
    ThermalPressure,
}

/// What holds, with what a channel needs to say it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum What {
    /// Protection is wanted and cannot be held, for this reason.
    ProtectionFailed(String),
    /// A closed-lid suspend in this many seconds, every session waiting for the user.
    SuspendScheduled(i64),
    /// A session waits for the user.
    WaitingForYou(Waiting),
    /// The battery is below the floor (what it is).
    BatteryFloor(String),
    /// The machine is at a serious thermal state (what it is).
    ThermalPressure(String),
}

/// A session that waits for the user, and where it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    /// The session.
    pub key: SessionKey,
    /// The soft-lock reason: what it waits for (`permission_prompt`, `idle_prompt`, …).
    pub reason: String,
    /// Its working directory.
    pub cwd: Option<String>,
    /// The relay it comes through, for a session on another machine.
    pub via: Option<String>,
}

impl Waiting {
    /// Where it runs, as notices name it.
    pub fn whereabouts(&self) -> Whereabouts<'_> {
        Whereabouts {
            cwd: self.cwd.as_deref(),
            via: self.via.as_deref(),
        }
    }
}

impl What {
    /// What the moment is about.
    pub fn reason(&self) -> Reason {
        match self {
            What::ProtectionFailed(_) => Reason::ProtectionFailed,
            What::SuspendScheduled(_) => Reason::SuspendScheduled,
            What::WaitingForYou(_) => Reason::WaitingForYou,
            What::BatteryFloor(_) => Reason::BatteryFloor,
            What::ThermalPressure(_) => Reason::ThermalPressure,
        }
    }

    /// The session it is about, for a wait.
    pub fn key(&self) -> Option<&SessionKey> {
        match self {
            What::WaitingForYou(w) => Some(&w.key),
            _ => None,
        }
    }
}

/// How a moment that held ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// It no longer holds (the session works again, protection holds, …).
    Cleared,
    /// Its session is gone.
    Gone,
    /// Its session no longer waits for the user but does not work either (locked by the
    /// inactivity timeout).
    Quiet,
}

/// A moment, said once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Moment {
    /// It begins: it did not hold before (or held for another reason, for a wait).
    Began(What),
    /// It still holds, seen again: a channel that held it back (the lid was closed, its setting
    /// was off) may tell it now.
    Holds(What),
    /// What held (as last seen) ended.
    Ended(What, Ending),
}

/// What holds now: the memory that makes each moment begin once.
#[derive(Clone, Debug, Default)]
pub struct Moments {
    /// Each reason (and session) that holds, as last seen.
    holding: HashMap<(Reason, Option<SessionKey>), What>,
}

impl Moments {
    /// Sessions restored at start: their waits began before this daemon, so they hold already
    /// (no channel says "needs you" for them as new).
    pub fn restored(&mut self, sessions: &[Session]) {
        for session in sessions {
            if let Some(wait) = waiting(session) {
                let at = (Reason::WaitingForYou, Some(session.key.clone()));
                self.holding.insert(at, What::WaitingForYou(wait));
            }
        }
    }

    /// The moments an input's `effects` make, with the registry as it is after it.
    pub fn due(&mut self, effects: &[Effect], registry: &Registry) -> Vec<Moment> {
        let logged = |name: &str| {
            effects
                .iter()
                .any(|e| matches!(e, Effect::Log(l) if l.name == name))
        };
        let mut due = Vec::new();
        if logged("battery-floor-cleared") {
            self.end(Reason::BatteryFloor, None, Ending::Cleared, &mut due);
        }
        if logged("battery-floor-reached")
            && let Some(why) = registry.battery_floor_reached()
        {
            due.push(self.hold(What::BatteryFloor(why)));
        }
        if logged("thermal-pressure-cleared") {
            self.end(Reason::ThermalPressure, None, Ending::Cleared, &mut due);
        }
        if logged("thermal-pressure-reached")
            && let Some(why) = registry.thermal_pressure()
        {
            due.push(self.hold(What::ThermalPressure(why)));
        }
        match registry.pending_suspend() {
            Some(p) if logged("suspend-scheduled") && p.reason == SuspendReason::SoftLocked => {
                let seconds = p.due_at.duration_since(p.scheduled_at).as_secs().max(0);
                due.push(self.hold(What::SuspendScheduled(seconds)));
            }
            Some(_) => {}
            None => self.end(Reason::SuspendScheduled, None, Ending::Cleared, &mut due),
        }
        for effect in effects {
            match effect {
                Effect::DeleteSession(key) => {
                    self.end(Reason::WaitingForYou, Some(key), Ending::Gone, &mut due);
                }
                Effect::SaveSession(s) => match waiting(s) {
                    Some(wait) => due.push(self.hold(What::WaitingForYou(wait))),
                    None => {
                        let how = if s.soft_lock.is_some() {
                            Ending::Quiet
                        } else {
                            Ending::Cleared
                        };
                        self.end(Reason::WaitingForYou, Some(&s.key), how, &mut due);
                    }
                },
                _ => {}
            }
        }
        due
    }

    /// After an input's effects are carried out: protection not held (`unavailable`: why, when
    /// nothing is held) is a moment while the registry wants protection.
    pub fn protection(&mut self, unavailable: Option<&str>, registry: &Registry) -> Vec<Moment> {
        let mut due = Vec::new();
        match unavailable.filter(|_| registry.protection().is_some()) {
            Some(why) => due.push(self.hold(What::ProtectionFailed(why.to_owned()))),
            None => self.end(Reason::ProtectionFailed, None, Ending::Cleared, &mut due),
        }
        due
    }

    /// `what` holds: it begins unless it held already (for a wait: for the same reason).
    fn hold(&mut self, what: What) -> Moment {
        let at = (what.reason(), what.key().cloned());
        let same = match (self.holding.insert(at, what.clone()), &what) {
            (Some(What::WaitingForYou(before)), What::WaitingForYou(now)) => {
                before.reason == now.reason
            }
            (before, _) => before.is_some(),
        };
        if same {
            Moment::Holds(what)
        } else {
            Moment::Began(what)
        }
    }

    fn end(
        &mut self,
        reason: Reason,
        key: Option<&SessionKey>,
        how: Ending,
        due: &mut Vec<Moment>,
    ) {
        if let Some(what) = self.holding.remove(&(reason, key.cloned())) {
            due.push(Moment::Ended(what, how));
        }
    }
}

/// The session's wait, when it waits for the user (every soft-lock but the inactivity
/// timeout).
fn waiting(session: &Session) -> Option<Waiting> {
    let reason = session.soft_lock.as_ref().map(|l| &l.reason)?;
    waits_for_user(reason).then(|| Waiting {
        key: session.key.clone(),
        reason: reason.clone(),
        cwd: session.cwd.clone(),
        via: session.via.clone(),
    })
}

#[cfg(test)]
mod tests;
