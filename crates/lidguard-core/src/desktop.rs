//! Desktop notifications: which moments need the user, each told once per session and reason
//! while it lasts. Pure: the daemon hands in an input's effects and shows what comes out.
//!
//! The moments: protection wanted and not held; a closed-lid suspend scheduled while sessions
//! still wait for the user (work was expected); an agent waiting for the user with the lid
//! open (with it closed, the phone is the way to reach them); the battery floor reached; a
//! serious thermal state. Each has its own setting (`notify-*`).

use std::collections::HashSet;

use crate::event::Lid;
use crate::registry::{Effect, Registry};
use crate::remote::{Whereabouts, needs_you_notice, waits_for_user};
use crate::session::SessionKey;
use crate::suspend::SuspendReason;

/// One desktop notification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    /// The title line.
    pub summary: String,
    /// The text under it.
    pub body: String,
    /// Whether it stays until dismissed (the desktop's "critical" urgency).
    pub urgent: bool,
}

/// Why the user is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// Protection is wanted and cannot be held.
    ProtectionFailed,
    /// A closed-lid suspend is on its way while sessions wait for the user.
    SuspendScheduled,
    /// An agent waits for the user, the lid open.
    WaitingForYou,
    /// On battery below the floor: protection released.
    BatteryFloor,
    /// At a serious thermal state: protection released.
    ThermalPressure,
}

/// What has been told and still holds.
#[derive(Clone, Debug, Default)]
pub struct Desktop {
    told: HashSet<(Reason, Option<SessionKey>)>,
}

impl Desktop {
    /// Whether protection not held (`unavailable`: why, when nothing is held) needs telling:
    /// it does while the registry wants protection. Called after the input's effects are
    /// carried out, with protection as it is then.
    pub fn protection(&mut self, unavailable: Option<&str>, registry: &Registry) -> Option<Notice> {
        let failed = unavailable.filter(|_| registry.protection().is_some());
        let Some(why) = failed else {
            self.forget(Reason::ProtectionFailed, None);
            return None;
        };
        let on = registry.settings().notify_protection_failed;
        self.tell(Reason::ProtectionFailed, None, on)
            .then(|| Notice {
                summary: "lidguard cannot keep this machine awake".to_owned(),
                body: format!("Agents are working, but {why}. `lidguard doctor` says what to do."),
                urgent: true,
            })
    }

    /// The notices an input's `effects` call for, with the registry as it is after it.
    pub fn due(&mut self, effects: &[Effect], registry: &Registry) -> Vec<Notice> {
        let settings = registry.settings();
        let logged = |name: &str| {
            effects
                .iter()
                .any(|e| matches!(e, Effect::Log(l) if l.name == name))
        };
        let mut due = Vec::new();
        if logged("battery-floor-cleared") {
            self.forget(Reason::BatteryFloor, None);
        }
        if logged("battery-floor-reached")
            && let Some(why) = registry.battery_floor_reached()
            && self.tell(Reason::BatteryFloor, None, settings.notify_battery_floor)
        {
            due.push(Notice {
                summary: "lidguard let go for the battery".to_owned(),
                body: format!(
                    "The machine may sleep: it is {why}. Protection comes back on AC power."
                ),
                urgent: false,
            });
        }
        if logged("thermal-pressure-cleared") {
            self.forget(Reason::ThermalPressure, None);
        }
        if logged("thermal-pressure-reached")
            && let Some(why) = registry.thermal_pressure()
            && self.tell(
                Reason::ThermalPressure,
                None,
                settings.notify_thermal_pressure,
            )
        {
            due.push(Notice {
                summary: "lidguard let go for the heat".to_owned(),
                body: format!(
                    "The machine may sleep: {why}. Protection comes back once it cools down."
                ),
                urgent: false,
            });
        }
        match registry.pending_suspend() {
            Some(p) if logged("suspend-scheduled") && p.reason == SuspendReason::SoftLocked => {
                let seconds = p.due_at.duration_since(p.scheduled_at).as_secs().max(0);
                if self.tell(
                    Reason::SuspendScheduled,
                    None,
                    settings.notify_suspend_scheduled,
                ) {
                    due.push(Notice {
                        summary: format!("Suspend in {seconds} s: every agent waits for you"),
                        body: "The lid is closed and no session is working. Open the lid to \
                               keep it awake, or run `lidguard cancel-suspend`."
                            .to_owned(),
                        urgent: true,
                    });
                }
            }
            Some(_) => {}
            None => self.forget(Reason::SuspendScheduled, None),
        }
        let lid_open = registry.machine().lid != Lid::Closed;
        for effect in effects {
            match effect {
                Effect::DeleteSession(key) => self.forget(Reason::WaitingForYou, Some(key)),
                Effect::SaveSession(s) => {
                    let wait = s.soft_lock.as_ref().map(|l| l.reason.as_str());
                    match wait.filter(|r| waits_for_user(r)) {
                        Some(reason) => {
                            let on = settings.notify_waiting_for_you && lid_open;
                            if self.tell(Reason::WaitingForYou, Some(&s.key), on) {
                                let n = needs_you_notice(&s.key, Whereabouts::of(s), reason);
                                due.push(Notice {
                                    summary: n.title,
                                    body: n.message,
                                    urgent: false,
                                });
                            }
                        }
                        None => self.forget(Reason::WaitingForYou, Some(&s.key)),
                    }
                }
                _ => {}
            }
        }
        due
    }

    /// Whether to tell now: `on`, and not told already while the reason holds.
    fn tell(&mut self, reason: Reason, key: Option<&SessionKey>, on: bool) -> bool {
        on && self.told.insert((reason, key.cloned()))
    }

    /// The reason no longer holds: it may be told again when it comes back.
    fn forget(&mut self, reason: Reason, key: Option<&SessionKey>) {
        if !self.told.is_empty() {
            self.told.remove(&(reason, key.cloned()));
        }
    }
}
