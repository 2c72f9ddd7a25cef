//! Desktop notifications: how the desktop tells the moments [`crate::notice`] decides, each
//! once while it holds. Pure: the daemon hands in each moment and shows what comes out.
//!
//! Each moment has its own setting (`notify-*`); an agent waiting for the user is told with
//! the lid open (with it closed, the phone is the way to reach them) — when the lid opens while
//! it still waits, at the next time the wait is seen.

use std::collections::HashSet;

use crate::notice::{Moment, Reason, What};
use crate::remote::needs_you_notice;
use crate::session::SessionKey;
use crate::settings::Settings;

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

/// What has been told and still holds.
#[derive(Clone, Debug, Default)]
pub struct Desktop {
    told: HashSet<(Reason, Option<SessionKey>)>,
}

impl Desktop {
    /// The notice `moment` calls for, if the desktop tells it now (`lid_open`: whether the lid
    /// is not closed).
    pub fn tell(&mut self, moment: &Moment, settings: &Settings, lid_open: bool) -> Option<Notice> {
        let what = match moment {
            Moment::Began(what) | Moment::Holds(what) => what,
            Moment::Ended(what, _) => {
                self.told.remove(&(what.reason(), what.key().cloned()));
                return None;
            }
        };
        let on = match what.reason() {
            Reason::ProtectionFailed => settings.notify_protection_failed,
            Reason::SuspendScheduled => settings.notify_suspend_scheduled,
            Reason::WaitingForYou => settings.notify_waiting_for_you && lid_open,
            Reason::BatteryFloor => settings.notify_battery_floor,
            Reason::ThermalPressure => settings.notify_thermal_pressure,
        };
        if !on || !self.told.insert((what.reason(), what.key().cloned())) {
            return None;
        }
        Some(notice(what))
    }
}

/// The notice for `what`.
fn notice(what: &What) -> Notice {
    match what {
        What::ProtectionFailed(why) => Notice {
            summary: "lidguard cannot keep this machine awake".to_owned(),
            body: format!("Agents are working, but {why}. `lidguard doctor` says what to do."),
            urgent: true,
        },
        What::BatteryFloor(why) => Notice {
            summary: "lidguard let go for the battery".to_owned(),
            body: format!("The machine may sleep: it is {why}. Protection comes back on AC power."),
            urgent: false,
        },
        What::ThermalPressure(why) => Notice {
            summary: "lidguard let go for the heat".to_owned(),
            body: format!(
                "The machine may sleep: {why}. Protection comes back once it cools down."
            ),
            urgent: false,
        },
        What::SuspendScheduled(seconds) => Notice {
            summary: format!("Suspend in {seconds} s: every agent waits for you"),
            body: "The lid is closed and no session is working. Open the lid to keep it awake, \
                   or run `lidguard cancel-suspend`."
                .to_owned(),
            urgent: true,
        },
        What::WaitingForYou(w) => {
            let n = needs_you_notice(&w.key, w.whereabouts(), &w.reason);
            Notice {
                summary: n.title,
                body: n.message,
                urgent: false,
            }
        }
    }
}
