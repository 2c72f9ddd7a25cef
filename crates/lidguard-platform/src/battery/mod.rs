//! The battery: its charge and whether the machine runs on it, for the battery floor.
//!
//! - Linux: the kernel's `power_supply` class ([`power_supply`]), below the sys root.
//! - macOS: IOKit's power sources ([`macos`]), whose descriptions [`power_sources`] reads; where
//!   tests relocate the system, the same reader takes a recorded list from
//!   `<sys>/power/power-sources.json`, so only the IOKit call itself is not run off a Mac.
//! - Windows: `GetSystemPowerStatus` ([`windows`]).

use lidguard_core::suspend::Battery;

use crate::roots::Roots;

#[cfg(target_os = "macos")]
mod macos;
pub mod power_sources;
mod power_supply;
#[cfg(windows)]
mod windows;

/// The battery, or `None` without one (or when it cannot be read).
pub fn battery(roots: &Roots) -> Option<Battery> {
    if roots.overridden {
        return match power_sources::recorded(&roots.sys_root) {
            Some(recorded) => recorded,
            None => power_supply::battery(&roots.sys_root),
        };
    }
    #[cfg(windows)]
    {
        windows::battery()
    }
    #[cfg(target_os = "macos")]
    {
        macos::battery()
    }
    #[cfg(not(any(windows, target_os = "macos")))]
    {
        power_supply::battery(&roots.sys_root)
    }
}
