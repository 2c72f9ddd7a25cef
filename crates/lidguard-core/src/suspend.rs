//! The closed-lid suspend flow's vocabulary: what the daemon observed of the machine, a
//! pending suspend, and the request the daemon hands to the OS. The rules live in
//! [`crate::registry::Registry`]; the temperature arithmetic is here.
//!
//! Flow (README, Sleeping when the work is done): when protection drops — the last working session
//! stopped, or every remaining session waits for the user — and the lid is closed with no
//! external display, a suspend is scheduled `postStopSuspendDelaySeconds` later. New work, a
//! new session or the lid opening cancels it. When it is due, eligibility is checked again, the
//! user may be asked first ([`crate::ask`]), the PreSuspend webhook is sent, the post-stop
//! sound (if any) is played to its end, eligibility is checked once more, and the
//! configured mode is requested. Emergency hibernation bypasses all of that when the machine is
//! too hot in a closed bag.

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::ask::Ask;
use crate::event::Lid;
use crate::settings::{
    MAX_EMERGENCY_TEMPERATURE_CELSIUS, MIN_EMERGENCY_TEMPERATURE_CELSIUS, SuspendMode,
    TemperatureMode,
};

/// The longest the flow waits for the post-stop sound to finish before suspending anyway (a
/// sound never blocks a suspend).
pub const SOUND_TIMEOUT: SignedDuration = SignedDuration::from_secs(60);

/// The longest the flow waits for the PreSuspend webhook (its 5 s request timeout, plus a
/// margin) before going on without an answer.
pub const WEBHOOK_TIMEOUT: SignedDuration = SignedDuration::from_secs(6);

/// The shortest time between two emergency hibernation attempts: a machine that cannot
/// hibernate is not asked again every temperature reading.
pub const EMERGENCY_RETRY: SignedDuration = SignedDuration::from_mins(5);

/// How often the daemon reads the temperature while the emergency guard is armed.
pub const TEMPERATURE_INTERVAL: SignedDuration = SignedDuration::from_secs(10);

/// The battery as the daemon last read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Battery {
    /// Charge, 0..=100.
    pub percent: u8,
    /// Running on the battery (no AC power).
    pub on_battery: bool,
}

impl Battery {
    /// Whether the battery floor (`batteryFloorPercent`) is reached: on battery, below it.
    pub fn below(&self, floor: Option<u8>) -> bool {
        self.on_battery && floor.is_some_and(|floor| self.percent < floor)
    }
}

/// What the daemon last saw of the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Machine {
    /// The lid.
    pub lid: Lid,
    /// Connected displays other than internal panels; `None` when unknown.
    pub external_displays: Option<u32>,
}

impl Machine {
    /// Nothing known yet: never eligible.
    pub const UNKNOWN: Machine = Machine {
        lid: Lid::Unknown,
        external_displays: None,
    };
}

/// Why a suspend is requested. Names as in the reference's suspend history.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SuspendReason {
    /// The last working session ended.
    Completed,
    /// Every remaining session waits for the user.
    SoftLocked,
    /// The machine was too hot with the lid closed.
    EmergencyHibernation,
    /// Not lidguard's request: the user (or another program) suspended the machine while
    /// sessions worked, which lidguard let through (see `ProtectionPlan::sleep_gives_way`).
    UserRequested,
    /// On battery below the floor with the lid closed: the hold ended and the machine sleeps
    /// (see [`crate::clamshell`]).
    BatteryFloor,
    /// At a serious thermal state with the lid closed: the hold ended and the machine sleeps.
    ThermalPressure,
}

impl SuspendReason {
    /// The name used in logs and history.
    pub fn as_str(self) -> &'static str {
        match self {
            SuspendReason::Completed => "Completed",
            SuspendReason::SoftLocked => "SoftLocked",
            SuspendReason::EmergencyHibernation => "EmergencyHibernation",
            SuspendReason::UserRequested => "UserRequested",
            SuspendReason::BatteryFloor => "BatteryFloor",
            SuspendReason::ThermalPressure => "ThermalPressure",
        }
    }
}

/// Where a pending suspend is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SuspendPhase {
    /// Waiting out `postStopSuspendDelaySeconds`.
    Delay,
    /// Asking before sleep: waiting for the user's reply (see [`crate::ask`]).
    AwaitingReply,
    /// Sending the PreSuspend webhook.
    Webhook,
    /// Playing the post-stop sound.
    Sound,
}

/// A suspend waiting for its moment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingSuspend {
    /// Tells this suspend from a later one (sound completions name it).
    pub id: u64,
    /// Why.
    pub reason: SuspendReason,
    /// When it was scheduled.
    pub scheduled_at: Timestamp,
    /// When the current phase ends.
    pub due_at: Timestamp,
    /// Soft-locked sessions when the reason is `SoftLocked`, else 0.
    pub trigger_session_count: usize,
    /// Scheduled by a cancel path (watched process gone, orphan cleanup) or a manual removal:
    /// the webhooks that announce it are not sent.
    pub webhooks_suppressed: bool,
    /// Where it is.
    pub phase: SuspendPhase,
    /// Ask before sleep, when this suspend asks first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ask: Option<Ask>,
}

/// What the daemon asks the OS for. Protection is released right before it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuspendRequest {
    /// The pending suspend this came from (0 for emergency hibernation).
    pub id: u64,
    /// Sleep or hibernate.
    pub mode: SuspendMode,
    /// Tried when `mode` fails (emergency hibernation falls back to sleep).
    pub fallback: Option<SuspendMode>,
    /// Why.
    pub reason: SuspendReason,
    /// Sessions still keeping protection (0 unless emergency).
    pub active_session_count: usize,
    /// Soft-locked sessions when the reason is `SoftLocked`.
    pub trigger_session_count: usize,
    /// Emergency only: the reading, the threshold and how zones were combined.
    pub temperature: Option<TemperatureReading>,
}

/// A temperature that triggered emergency hibernation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TemperatureReading {
    /// The aggregated reading, °C.
    pub celsius: i32,
    /// The threshold in force, °C (clamped).
    pub threshold_celsius: i32,
    /// How zones were combined.
    pub mode: TemperatureMode,
}

/// The emergency threshold actually used: the setting clamped to 70..=110 °C.
pub fn clamped_threshold(celsius: i32) -> i32 {
    celsius.clamp(
        MIN_EMERGENCY_TEMPERATURE_CELSIUS,
        MAX_EMERGENCY_TEMPERATURE_CELSIUS,
    )
}

/// Combines thermal-zone readings in millidegrees Celsius: values that are not above zero are
/// ignored; `Low` takes the coolest, `High` the hottest, `Average` the mean; the result is in
/// whole °C, rounded half away from zero. `None` when no reading is usable.
pub fn aggregate_temperature(millidegrees: &[i64], mode: TemperatureMode) -> Option<i32> {
    let usable: Vec<i64> = millidegrees.iter().copied().filter(|m| *m > 0).collect();
    if usable.is_empty() {
        return None;
    }
    let milli = match mode {
        TemperatureMode::Low => usable.iter().copied().min()? as f64,
        TemperatureMode::High => usable.iter().copied().max()? as f64,
        TemperatureMode::Average => {
            usable.iter().map(|m| *m as f64).sum::<f64>() / usable.len() as f64
        }
    };
    // f64::round rounds half away from zero.
    let celsius = (milli / 1000.0).round();
    (celsius.is_finite() && celsius.abs() < f64::from(i32::MAX)).then_some(celsius as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temperatures_combine_as_the_reference_does() {
        let zones = [45_000, 0, -5, 50_500, 61_000];
        assert_eq!(
            aggregate_temperature(&zones, TemperatureMode::Low),
            Some(45)
        );
        assert_eq!(
            aggregate_temperature(&zones, TemperatureMode::High),
            Some(61)
        );
        // (45 + 50.5 + 61) / 3 = 52.1666…
        assert_eq!(
            aggregate_temperature(&zones, TemperatureMode::Average),
            Some(52)
        );
        assert_eq!(
            aggregate_temperature(&[50_500], TemperatureMode::Average),
            Some(51)
        );
        assert_eq!(aggregate_temperature(&[0, -1], TemperatureMode::High), None);
        assert_eq!(aggregate_temperature(&[], TemperatureMode::Low), None);
    }

    #[test]
    fn thresholds_are_clamped() {
        assert_eq!(clamped_threshold(20), 70);
        assert_eq!(clamped_threshold(93), 93);
        assert_eq!(clamped_threshold(500), 110);
    }
}
