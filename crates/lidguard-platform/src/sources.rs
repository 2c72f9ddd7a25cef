//! File-based sensing: the lid, the connected displays and the thermal zones.
//!
//! Everything reads below [`Roots`], so tests (and users, through `LIDGUARD_PROC_ROOT` and
//! `LIDGUARD_SYS_ROOT`) can point it at a fake tree. Nothing here panics on odd input: a missing,
//! unreadable or malformed file counts as "nothing known".
//!
//! These are plain file reads and work on every OS; where `/proc` and `/sys` do not exist they
//! report [`Lid::Unknown`], no lid switch and no displays.

use std::fs;
use std::path::{Path, PathBuf};

use crate::power::PowerControl;

pub use crate::no_thermal::NoThermal;
pub use crate::roots::{PROC_ROOT_ENV, Roots, SYS_ROOT_ENV};
pub use crate::units::{decikelvin_to_millidegrees, kelvin_to_millidegrees};

/// The lid: the core's type, so a reading is what a decision sees.
pub use lidguard_core::event::Lid;

/// The subdirectories (or links to them) of `dir`, with their names; nothing when unreadable.
fn entries(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(read) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(String, PathBuf)> = read
        .filter_map(Result::ok)
        .map(|entry| {
            (
                entry.file_name().to_string_lossy().into_owned(),
                entry.path(),
            )
        })
        .collect();
    found.sort();
    found
}

/// `<proc>/acpi/button/lid`.
fn acpi_lid_dir(roots: &Roots) -> PathBuf {
    roots.proc_root.join("acpi").join("button").join("lid")
}

/// Lid from `<proc>/acpi/button/lid/*/state` files: any "closed" → Closed, else any "open" →
/// Open, else Unknown (missing dir, unreadable, malformed → Unknown, never panic).
pub fn lid_state_from_files(roots: &Roots) -> Lid {
    let mut any_open = false;
    for (_, lid) in entries(&acpi_lid_dir(roots)) {
        let Ok(text) = fs::read(lid.join("state")) else {
            continue;
        };
        let text = String::from_utf8_lossy(&text).to_ascii_lowercase();
        if text.contains("closed") {
            return Lid::Closed;
        }
        any_open |= text.contains("open");
    }
    if any_open { Lid::Open } else { Lid::Unknown }
}

/// Whether an input device's `capabilities/sw` bitmap has bit 0 (`SW_LID`) set.
///
/// The kernel prints the bitmap as hexadecimal words separated by spaces, most significant
/// first, so bit 0 is in the last word.
fn sw_bitmap_has_lid(text: &str) -> bool {
    text.split_whitespace()
        .last()
        .and_then(|word| u128::from_str_radix(word, 16).ok())
        .is_some_and(|word| word & 1 == 1)
}

/// Whether the machine has a lid switch at all, per `<sys>/class/input/*/capabilities/sw`
/// (bit 0 = `SW_LID` set), or the ACPI lid files exist.
pub fn has_lid_switch(roots: &Roots) -> bool {
    let input_dir = roots.sys_root.join("class").join("input");
    let from_input = entries(&input_dir).into_iter().any(|(_, device)| {
        fs::read_to_string(device.join("capabilities").join("sw"))
            .is_ok_and(|text| sw_bitmap_has_lid(&text))
    });
    from_input
        || entries(&acpi_lid_dir(roots))
            .into_iter()
            .any(|(_, lid)| lid.join("state").is_file())
}

/// Whether a DRM connector name such as `card0-eDP-1` is a built-in panel (eDP, LVDS, DSI).
fn is_internal_connector(name: &str) -> bool {
    let Some((_, connector)) = name.split_once('-') else {
        return false;
    };
    let connector = connector.to_ascii_lowercase();
    ["edp", "lvds", "dsi"]
        .iter()
        .any(|family| connector.starts_with(family))
}

/// Connected displays; `exclude_internal` leaves built-in panels out.
///
/// - Linux, and any system whose roots are overridden (the test seam): DRM connectors from
///   `<sys>/class/drm/*/status` (content trimmed, case-insensitive "connected"); internal are
///   those whose name after the first '-' starts with eDP, LVDS or DSI (case-insensitive), e.g.
///   card0-eDP-1. Missing dir → 0.
/// - Windows: the active paths of the display configuration API, internal being the output
///   technologies of [`is_internal_output_technology`]; 0 when the API refuses (a service or
///   remote session cannot see the console's displays).
/// - macOS: CoreGraphics' online displays, internal being the built-in ones
///   ([`count_displays`]); 0 when CoreGraphics refuses (no window server session).
pub fn visible_displays(roots: &Roots, exclude_internal: bool) -> u32 {
    #[cfg(windows)]
    if !roots.overridden {
        return match crate::windows::displays::active_output_technologies() {
            Ok(paths) => {
                let count = paths
                    .into_iter()
                    .filter(|&tech| !(exclude_internal && is_internal_output_technology(tech)))
                    .count();
                u32::try_from(count).unwrap_or(u32::MAX)
            }
            Err(_) => 0,
        };
    }
    #[cfg(target_os = "macos")]
    if !roots.overridden {
        return match crate::macos::displays::online_builtin_flags() {
            Ok(builtin) => count_displays(&builtin, exclude_internal),
            Err(_) => 0,
        };
    }
    let drm_dir = roots.sys_root.join("class").join("drm");
    let count = entries(&drm_dir)
        .into_iter()
        .filter(|(name, _)| !(exclude_internal && is_internal_connector(name)))
        .filter(|(_, connector)| {
            fs::read(connector.join("status")).is_ok_and(|status| {
                String::from_utf8_lossy(&status)
                    .trim()
                    .eq_ignore_ascii_case("connected")
            })
        })
        .count();
    u32::try_from(count).unwrap_or(u32::MAX)
}

/// How many of the displays (each given by whether it is built in, as macOS's
/// `CGDisplayIsBuiltin` tells) count: all, or with `exclude_internal` the external ones.
pub fn count_displays(builtin: &[bool], exclude_internal: bool) -> u32 {
    let count = builtin
        .iter()
        .filter(|&&is_builtin| !(exclude_internal && is_builtin))
        .count();
    u32::try_from(count).unwrap_or(u32::MAX)
}

/// Whether a Windows `DISPLAYCONFIG_VIDEO_OUTPUT_TECHNOLOGY` is a built-in panel: INTERNAL
/// (0x80000000), DISPLAYPORT_EMBEDDED (11), UDI_EMBEDDED (13) — Microsoft's enumeration — and
/// LVDS (6), the link older laptop panels use.
pub fn is_internal_output_technology(technology: i32) -> bool {
    const LVDS: i32 = 6;
    const DISPLAYPORT_EMBEDDED: i32 = 11;
    const UDI_EMBEDDED: i32 = 13;
    const INTERNAL: i32 = 0x8000_0000_u32 as i32;
    matches!(
        technology,
        LVDS | DISPLAYPORT_EMBEDDED | UDI_EMBEDDED | INTERNAL
    )
}

/// The thermal zones in millidegrees Celsius, or why there are none:
/// - Linux (and relocated roots): every readable `<sys>/class/thermal/thermal_zone*/temp`, as the
///   kernel reports them; unreadable or non-numeric files are skipped;
/// - Windows: WMI's thermal zones;
/// - macOS: none (no temperature a user may read without root).
///
/// Combine with [`lidguard_core::suspend::aggregate_temperature`], which also drops values not
/// above zero.
pub fn thermal_readings(roots: &Roots) -> Result<Vec<i64>, NoThermal> {
    #[cfg(windows)]
    if !roots.overridden {
        return crate::windows::thermal::zones();
    }
    #[cfg(target_os = "macos")]
    if !roots.overridden {
        return Err(NoThermal::MacOs);
    }
    let dir = roots.sys_root.join("class").join("thermal");
    let zones: Vec<i64> = entries(&dir)
        .into_iter()
        .filter(|(name, _)| name.starts_with("thermal_zone"))
        .filter_map(|(_, zone)| fs::read_to_string(zone.join("temp")).ok())
        .filter_map(|text| text.trim().parse::<i64>().ok())
        .collect();
    if zones.is_empty() {
        Err(NoThermal::NoZone(dir))
    } else {
        Ok(zones)
    }
}

/// [`thermal_readings`], empty when there are none.
pub fn thermal_millidegrees(roots: &Roots) -> Vec<i64> {
    thermal_readings(roots).unwrap_or_default()
}

/// The temperature the emergency guard uses: the zones combined by `mode`, whole °C, or
/// `None` when no zone can be read.
pub fn temperature(roots: &Roots, mode: lidguard_core::settings::TemperatureMode) -> Option<i32> {
    lidguard_core::suspend::aggregate_temperature(&thermal_millidegrees(roots), mode)
}

pub use crate::battery::battery;

/// The lid, displays and power source now, without a daemon (the watcher and the commands that
/// restore `SleepDisabled`): the clamshell from the IORegistry on a Mac, the ACPI files where
/// the system is relocated; the OS's rule ([`crate::power::CLAMSHELL_RULE`]).
pub fn clamshell_now(roots: &Roots) -> lidguard_core::clamshell::Clamshell {
    #[cfg(target_os = "macos")]
    let lid = match crate::macos::iokit::clamshell_closed().filter(|_| !roots.overridden) {
        Some(true) => Lid::Closed,
        Some(false) => Lid::Open,
        None => lid_state_from_files(roots),
    };
    #[cfg(not(target_os = "macos"))]
    let lid = lid_state_from_files(roots);
    lidguard_core::clamshell::Clamshell {
        lid,
        external_displays: Some(visible_displays(roots, true)),
        on_battery: battery(roots).map(|b| b.on_battery),
        rule: crate::power::CLAMSHELL_RULE,
    }
}

/// The lid, by the best source: logind's `LidClosed` (system bus) when the machine has a lid
/// switch and the roots are not overridden, else (or when logind cannot tell) the ACPI files.
pub async fn lid_state(roots: &Roots) -> Lid {
    if !roots.overridden
        && cfg!(target_os = "linux")
        && has_lid_switch(roots)
        && let Some(closed) = crate::power::logind_lid_closed().await
    {
        return if closed { Lid::Closed } else { Lid::Open };
    }
    lid_state_from_files(roots)
}

/// Like [`lid_state`], asking an already connected backend instead of opening a connection
/// (on Windows: the lid-switch notifications, which know a machine has a lid by calling back).
pub async fn lid_state_using(power: &dyn PowerControl, roots: &Roots) -> Lid {
    if !roots.overridden
        && (!cfg!(target_os = "linux") || has_lid_switch(roots))
        && let Some(closed) = power.lid_closed().await
    {
        return if closed { Lid::Closed } else { Lid::Open };
    }
    lid_state_from_files(roots)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macos_built_in_panels_are_not_external() {
        // A MacBook with its panel and one monitor; lid closed, the panel drops out.
        assert_eq!(count_displays(&[true, false], true), 1);
        assert_eq!(count_displays(&[true, false], false), 2);
        assert_eq!(count_displays(&[false], true), 1);
        assert_eq!(count_displays(&[true], true), 0);
        assert_eq!(count_displays(&[], true), 0);
    }

    #[test]
    fn sw_bitmap_parsing() {
        for (bitmap, has_lid) in [
            ("1\n", true),
            ("3", true),
            ("0 1", true),
            ("1 0", false),
            ("0", false),
            ("2", false),
            ("", false),
            ("zz", false),
        ] {
            assert_eq!(sw_bitmap_has_lid(bitmap), has_lid, "{bitmap:?}");
        }
    }

    #[test]
    fn internal_connector_names() {
        let internal = ["card0-eDP-1", "card1-LVDS-1", "card0-DSI-1", "card0-edp-2"];
        let other = ["card0-HDMI-A-1", "card0-DP-1", "eDP", "card0"];
        for name in internal {
            assert!(is_internal_connector(name), "{name}");
        }
        for name in other {
            assert!(!is_internal_connector(name), "{name}");
        }
    }

    #[test]
    fn thermal_zones_skip_unreadable_and_malformed_files() {
        let dir = tempfile::tempdir().unwrap();
        let thermal = dir.path().join("class/thermal");
        for (zone, temp) in [
            ("thermal_zone0", Some("48000\n")),
            ("thermal_zone1", Some("garbage")),
            ("thermal_zone2", None),
            ("thermal_zone3", Some("-273000")),
            ("thermal_zone4", Some("62000")),
            ("cooling_device0", Some("99000")),
        ] {
            std::fs::create_dir_all(thermal.join(zone)).unwrap();
            if let Some(temp) = temp {
                std::fs::write(thermal.join(zone).join("temp"), temp).unwrap();
            }
        }
        let roots = Roots::new(dir.path(), dir.path());
        assert_eq!(thermal_millidegrees(&roots), vec![48000, -273000, 62000]);
        use lidguard_core::settings::TemperatureMode;
        assert_eq!(temperature(&roots, TemperatureMode::High), Some(62));
        assert_eq!(temperature(&roots, TemperatureMode::Low), Some(48));
        assert_eq!(temperature(&roots, TemperatureMode::Average), Some(55));
        let empty = Roots::new(dir.path().join("none"), dir.path().join("none"));
        assert_eq!(temperature(&empty, TemperatureMode::Average), None);
    }

    #[test]
    fn windows_output_technologies() {
        // DISPLAYCONFIG_VIDEO_OUTPUT_TECHNOLOGY values from Microsoft's enumeration.
        for internal in [6, 11, 13, 0x8000_0000_u32 as i32] {
            assert!(is_internal_output_technology(internal), "{internal}");
        }
        // HD15 0, DVI 4, HDMI 5, DISPLAYPORT_EXTERNAL 10 (what Wine reports), UDI_EXTERNAL 12,
        // MIRACAST 15, OTHER -1.
        for external in [0, 4, 5, 10, 12, 15, -1] {
            assert!(!is_internal_output_technology(external), "{external}");
        }
    }

    #[test]
    fn lid_state_display() {
        assert_eq!(Lid::Open.to_string(), "Open");
        assert_eq!(Lid::Closed.to_string(), "Closed");
        assert_eq!(Lid::Unknown.to_string(), "Unknown");
    }
}
