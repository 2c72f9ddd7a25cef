//! The closed lid: when the OS would sleep for it, and what becomes of a hold while agents work
//! once the battery or the heat says the machine must not stay awake in a bag.
//!
//! Each OS decides differently whether an external display keeps a closed laptop awake
//! ([`ClamshellRule`]); the daemon says which rule its platform follows and the registry applies
//! it to what it observed ([`Clamshell`]). Policy never names an OS.
//!
//! While lidguard holds a closed lid awake, the OS's own safety nets are off: on macOS,
//! `SleepDisabled` is checked before the kernel's low-battery and thermal-emergency sleep (XNU
//! `IOPMrootDomain::checkSystemSleepAllowed`: `userDisabledAllSleep` comes before
//! `lowBatteryCondition || thermalWarningState || thermalEmergencyState`). So lidguard keeps its
//! own: below the battery floor, or at a serious thermal state, the hold ends — released with the
//! lid open, released and followed by a sleep with the lid closed ([`verdict`]).

use serde::{Deserialize, Serialize};

/// The lid as the decision saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Lid {
    /// Open.
    Open,
    /// Closed.
    Closed,
    /// Not known (no lid switch, unreadable state): never treated as closed.
    Unknown,
}

impl Lid {
    /// "Open", "Closed" or "Unknown".
    pub fn as_str(self) -> &'static str {
        match self {
            Lid::Open => "Open",
            Lid::Closed => "Closed",
            Lid::Unknown => "Unknown",
        }
    }
}

display_as!(Lid, as_str);

/// How the OS treats a closed lid while an external display is connected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ClamshellRule {
    /// An external display keeps a closed laptop awake whatever powers it: logind's "docked"
    /// state (`HandleLidSwitchDocked=ignore`), and the reference system's eligibility rule.
    #[default]
    DisplayKeepsAwake,
    /// Only an external display *and* AC power keep it awake: XNU's
    /// `IOPMrootDomain::shouldSleepOnClamshellClosed` is
    /// `!clamshellDisabled && !(desktopMode && acAdaptorConnected) && …`, so on battery a Mac
    /// sleeps at lid close even with a display attached.
    DisplayOnAcKeepsAwake,
}

/// What the OS weighs when the lid is closed: the lid, the external displays, the power source
/// and its rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clamshell {
    /// The lid.
    pub lid: Lid,
    /// Connected displays other than internal panels; `None` when unknown.
    pub external_displays: Option<u32>,
    /// Running on the battery (`None`: no battery, or no reading — taken as AC power).
    pub on_battery: Option<bool>,
    /// The OS's rule.
    pub rule: ClamshellRule,
}

impl Clamshell {
    /// Whether a closed lid means sleep right now: the closed-lid policy applies (permission
    /// requests get the user's closed-lid answer; the end of the work puts the machine to
    /// sleep).
    pub fn sleeps(&self) -> bool {
        self.why_not().is_none()
    }

    /// Why a closed lid does not mean sleep right now, in words (`None` when it does).
    pub fn why_not(&self) -> Option<String> {
        match (self.lid, self.external_displays) {
            (Lid::Closed, Some(0)) => None,
            (Lid::Open, _) => Some("the lid is open".into()),
            (Lid::Unknown, _) => Some("the lid state is unknown".into()),
            (Lid::Closed, None) => Some("the display count is unknown".into()),
            (Lid::Closed, Some(n)) => match (self.rule, self.on_battery) {
                (ClamshellRule::DisplayOnAcKeepsAwake, Some(true)) => None,
                (ClamshellRule::DisplayOnAcKeepsAwake, _) => {
                    Some(format!("{n} external display(s) connected on AC power"))
                }
                (ClamshellRule::DisplayKeepsAwake, _) => {
                    Some(format!("{n} external display(s) connected"))
                }
            },
        }
    }
}

/// How hot the machine is as the OS tells an unprivileged program: macOS's
/// `NSProcessInfo.thermalState` (`NSProcessInfoThermalState`: nominal 0, fair 1, serious 2,
/// critical 3), where no temperature can be read without root.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ThermalState {
    /// Within normal limits.
    Nominal,
    /// Slightly elevated.
    Fair,
    /// High: the system throttles; Apple asks apps to reduce their work.
    Serious,
    /// Significantly impacting performance: Apple asks apps to do the minimum.
    Critical,
}

impl ThermalState {
    /// The state with `NSProcessInfoThermalState`'s number.
    pub fn from_index(index: i64) -> Option<ThermalState> {
        match index {
            0 => Some(ThermalState::Nominal),
            1 => Some(ThermalState::Fair),
            2 => Some(ThermalState::Serious),
            3 => Some(ThermalState::Critical),
            _ => None,
        }
    }

    /// The state named as [`ThermalState::name`] gives it.
    pub fn from_name(name: &str) -> Option<ThermalState> {
        [
            ThermalState::Nominal,
            ThermalState::Fair,
            ThermalState::Serious,
            ThermalState::Critical,
        ]
        .into_iter()
        .find(|state| state.name().eq_ignore_ascii_case(name.trim()))
    }

    /// `nominal`, `fair`, `serious` or `critical`.
    pub fn name(self) -> &'static str {
        match self {
            ThermalState::Nominal => "nominal",
            ThermalState::Fair => "fair",
            ThermalState::Serious => "serious",
            ThermalState::Critical => "critical",
        }
    }

    /// Whether a hold must end: serious or worse.
    pub fn pressing(self) -> bool {
        self >= ThermalState::Serious
    }
}

display_as!(ThermalState, name);

/// Why a hold ends although agents work.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// On battery below `batteryFloorPercent`.
    BatteryFloor(String),
    /// At a serious thermal state, with the temperature guard on.
    Thermal(String),
}

impl Stop {
    /// Why, in words.
    pub fn why(&self) -> &str {
        match self {
            Stop::BatteryFloor(why) | Stop::Thermal(why) => why,
        }
    }
}

/// What becomes of the hold while agents work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Keep the machine awake.
    Hold,
    /// Give everything back: the OS does what it would (the lid is open, or a display keeps a
    /// closed laptop awake by the OS's own rule).
    Release,
    /// Give everything back and put the machine to sleep now: the lid is closed and the OS,
    /// which does not look at a lid closed before, would have slept for it.
    Sleep,
}

/// The rule as a table: with no reason to stop, hold; with one, sleep when a closed lid means
/// sleep, else release.
pub fn verdict(clamshell: &Clamshell, stop: Option<&Stop>) -> Verdict {
    match stop {
        None => Verdict::Hold,
        Some(_) if clamshell.sleeps() => Verdict::Sleep,
        Some(_) => Verdict::Release,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(lid: Lid, displays: u32, on_battery: bool, rule: ClamshellRule) -> Clamshell {
        Clamshell {
            lid,
            external_displays: Some(displays),
            on_battery: Some(on_battery),
            rule,
        }
    }

    #[test]
    fn a_display_keeps_a_mac_awake_only_on_ac() {
        use ClamshellRule::*;
        assert!(!shell(Lid::Closed, 1, false, DisplayOnAcKeepsAwake).sleeps());
        assert!(shell(Lid::Closed, 1, true, DisplayOnAcKeepsAwake).sleeps());
        assert!(!shell(Lid::Closed, 1, true, DisplayKeepsAwake).sleeps());
        assert!(shell(Lid::Closed, 0, false, DisplayKeepsAwake).sleeps());
        assert_eq!(
            shell(Lid::Closed, 2, false, DisplayOnAcKeepsAwake).why_not(),
            Some("2 external display(s) connected on AC power".into())
        );
        // No power reading: taken as AC, the display keeps it awake.
        let unknown = Clamshell {
            on_battery: None,
            ..shell(Lid::Closed, 1, true, DisplayOnAcKeepsAwake)
        };
        assert!(!unknown.sleeps());
        assert!(!shell(Lid::Open, 0, true, DisplayOnAcKeepsAwake).sleeps());
    }

    #[test]
    fn thermal_states_by_number_and_name() {
        assert_eq!(ThermalState::from_index(2), Some(ThermalState::Serious));
        assert_eq!(ThermalState::from_index(4), None);
        assert_eq!(
            ThermalState::from_name(" Critical\n"),
            Some(ThermalState::Critical)
        );
        assert_eq!(ThermalState::from_name("hot"), None);
        assert!(!ThermalState::Fair.pressing());
        assert!(ThermalState::Serious.pressing());
        assert_eq!(ThermalState::Serious.to_string(), "serious");
    }
}
