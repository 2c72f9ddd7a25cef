//! What front ends show of the daemon's answers, in words.

use jiff::Timestamp;
use jiff::tz::TimeZone;

use crate::protocol::ProtectionStatus;

/// A time as the user's clock shows it: `2026-12-07 18:55:57`.
pub fn local_time(t: Timestamp) -> String {
    t.to_zoned_datetime(TimeZone::system())
        .strftime("%Y-%m-%d %H:%M:%S")
        .to_string()
}

impl ProtectionStatus {
    /// Protection in words: what is held and why, or why nothing is (status, live-status, the
    /// tray).
    pub fn in_words(&self) -> String {
        let p = self;
        if p.held {
            let gives_way = if p.delay_inhibitors.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} gives way to a suspend you ask for",
                    p.delay_inhibitors.join(", ")
                )
            };
            format!(
                "held: {} (\"{}\") via {}{gives_way}",
                p.inhibitors.join(", "),
                p.why.as_deref().unwrap_or(""),
                p.backend.as_deref().unwrap_or("?")
            )
        } else if let Some(pause) = &p.paused {
            match pause.until {
                Some(until) => format!(
                    "paused until {} (`lidguard resume` takes it back sooner)",
                    local_time(until)
                ),
                None => "paused until you resume it (`lidguard resume`)".to_owned(),
            }
        } else if let Some(why) = &p.battery_floor {
            format!("released for the battery: {why} (it comes back above the floor or on AC)")
        } else if let Some(why) = &p.thermal_pressure {
            format!("released for the heat: {why} (it comes back once the machine cools down)")
        } else if p.wanted {
            format!(
                "WANTED BUT NOT HELD: {}",
                p.unavailable_reason.as_deref().unwrap_or("unknown reason")
            )
        } else {
            match &p.unavailable_reason {
                Some(reason) => {
                    format!("not needed (no session is working); unavailable anyway: {reason}")
                }
                None => "not held: no session is working".to_owned(),
            }
        }
    }
}
