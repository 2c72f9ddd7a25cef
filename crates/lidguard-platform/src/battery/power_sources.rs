//! macOS's power sources as IOKit describes them, read into a [`Battery`].
//!
//! Facts (Apple's `IOPSKeys.h` and `IOPowerSources.h`, IOKitUser `ps.subproj`):
//! - `IOPSCopyPowerSourcesInfo` gives a snapshot, `IOPSCopyPowerSourcesList` its sources and
//!   `IOPSGetPowerSourceDescription` one dictionary per source; none needs root;
//! - `Type` is `InternalBattery` for a laptop's battery (`UPS` for a UPS); `Is Present` says
//!   whether it is there; `Current Capacity` and `Max Capacity` are in percent for Apple's
//!   sources (the charge is their ratio); `Power Source State` is `AC Power`, `Battery Power`
//!   or `Off Line`;
//! - `IOPSGetProvidingPowerSourceType` names what powers the machine now: `AC Power`,
//!   `Battery Power` or `UPS Power`.
//!
//! The reader is plain code: the macOS backend fills [`PowerSources`] from IOKit, and where tests
//! relocate the system it is read from `<sys>/power/power-sources.json`, whose keys are IOKit's.

use std::path::Path;

use lidguard_core::suspend::Battery;
use serde::Deserialize;

/// `kIOPSInternalBatteryType`.
pub const INTERNAL_BATTERY: &str = "InternalBattery";
/// `kIOPSBatteryPowerValue` (and `kIOPMBatteryPowerKey`).
pub const BATTERY_POWER: &str = "Battery Power";
/// `kIOPSACPowerValue` (and `kIOPMACPowerKey`).
pub const AC_POWER: &str = "AC Power";

/// One power source's description (the keys lidguard reads).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct PowerSource {
    /// `Type`.
    #[serde(rename = "Type")]
    pub kind: Option<String>,
    /// `Power Source State`.
    #[serde(rename = "Power Source State")]
    pub state: Option<String>,
    /// `Current Capacity`.
    #[serde(rename = "Current Capacity")]
    pub current_capacity: Option<i64>,
    /// `Max Capacity`.
    #[serde(rename = "Max Capacity")]
    pub max_capacity: Option<i64>,
    /// `Is Present`.
    #[serde(rename = "Is Present")]
    pub present: Option<bool>,
}

/// A snapshot: what powers the machine and each source's description.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct PowerSources {
    /// `IOPSGetProvidingPowerSourceType`, when it answered.
    pub providing: Option<String>,
    /// One description per source.
    pub sources: Vec<PowerSource>,
}

impl PowerSources {
    /// The internal battery: its charge (the ratio of the capacities, averaged over batteries)
    /// and whether the machine runs on it (the providing type, else the battery's own state).
    /// `None` without a present internal battery with capacities (a desktop Mac, a UPS only).
    pub fn battery(&self) -> Option<Battery> {
        let batteries: Vec<&PowerSource> = self
            .sources
            .iter()
            .filter(|s| s.kind.as_deref() == Some(INTERNAL_BATTERY) && s.present != Some(false))
            .collect();
        let percents: Vec<i64> = batteries
            .iter()
            .filter_map(|s| match (s.current_capacity, s.max_capacity) {
                (Some(current), Some(max)) if max > 0 && current >= 0 => {
                    Some((current * 100 / max).min(100))
                }
                _ => None,
            })
            .collect();
        if percents.is_empty() {
            return None;
        }
        let average = percents.iter().sum::<i64>() / i64::try_from(percents.len()).ok()?;
        let on_battery = match self.providing.as_deref() {
            Some(providing) => providing == BATTERY_POWER,
            None => batteries
                .iter()
                .any(|s| s.state.as_deref() == Some(BATTERY_POWER)),
        };
        Some(Battery {
            percent: u8::try_from(average).unwrap_or(100),
            on_battery,
        })
    }
}

/// The recorded snapshot below `sys_root` (`power/power-sources.json`), read as the Mac's:
/// `None` when there is no such file; `Some(None)` when it holds no battery or cannot be read.
pub fn recorded(sys_root: &Path) -> Option<Option<Battery>> {
    let text = std::fs::read_to_string(sys_root.join("power/power-sources.json")).ok()?;
    Some(
        serde_json::from_str::<PowerSources>(&text)
            .ok()
            .and_then(|sources| sources.battery()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn internal(state: &str, current: i64, max: i64) -> PowerSource {
        PowerSource {
            kind: Some(INTERNAL_BATTERY.into()),
            state: Some(state.into()),
            current_capacity: Some(current),
            max_capacity: Some(max),
            present: Some(true),
        }
    }

    #[test]
    fn a_laptop_on_battery_and_on_ac() {
        let on_battery = PowerSources {
            providing: Some(BATTERY_POWER.into()),
            sources: vec![internal(BATTERY_POWER, 38, 100)],
        };
        assert_eq!(
            on_battery.battery(),
            Some(Battery {
                percent: 38,
                on_battery: true
            })
        );
        let charging = PowerSources {
            providing: Some(AC_POWER.into()),
            sources: vec![internal(AC_POWER, 80, 100)],
        };
        assert_eq!(charging.battery().map(|b| b.on_battery), Some(false));
    }

    #[test]
    fn capacities_in_other_units_give_their_ratio() {
        let mah = PowerSources {
            providing: None,
            sources: vec![internal(BATTERY_POWER, 2100, 4200)],
        };
        assert_eq!(
            mah.battery(),
            Some(Battery {
                percent: 50,
                on_battery: true
            })
        );
    }

    #[test]
    fn no_internal_battery_is_no_battery() {
        let ups_only = PowerSources {
            providing: Some("UPS Power".into()),
            sources: vec![PowerSource {
                kind: Some("UPS".into()),
                ..internal(BATTERY_POWER, 50, 100)
            }],
        };
        assert_eq!(ups_only.battery(), None);
        let absent = PowerSources {
            providing: Some(AC_POWER.into()),
            sources: vec![PowerSource {
                present: Some(false),
                ..internal(AC_POWER, 0, 100)
            }],
        };
        assert_eq!(absent.battery(), None);
        assert_eq!(PowerSources::default().battery(), None);
    }

    #[test]
    fn a_recorded_snapshot_below_the_sys_root() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(recorded(dir.path()), None);
        std::fs::create_dir_all(dir.path().join("power")).unwrap();
        std::fs::write(
            dir.path().join("power/power-sources.json"),
            r#"{"providing": "Battery Power", "sources": [{"Type": "InternalBattery",
                "Power Source State": "Battery Power", "Current Capacity": 8,
                "Max Capacity": 100, "Is Present": true, "Name": "InternalBattery-0"}]}"#,
        )
        .unwrap();
        assert_eq!(
            recorded(dir.path()),
            Some(Some(Battery {
                percent: 8,
                on_battery: true
            }))
        );
        std::fs::write(dir.path().join("power/power-sources.json"), "{").unwrap();
        assert_eq!(recorded(dir.path()), Some(None));
    }
}
