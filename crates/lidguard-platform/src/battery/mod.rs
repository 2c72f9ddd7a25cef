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

/// Starts sending `()` on `changed` whenever the power source or its charge may have changed, for
/// as long as `changed` has a receiver; returns whether it could. macOS: the notify(3) name IOKit
/// posts for those changes; Linux hears of them with the displays' uevents; Windows and
/// relocated systems: no such signal (the caller reads the battery some other way).
pub fn watch(roots: &Roots, changed: tokio::sync::mpsc::UnboundedSender<()>) -> bool {
    #[cfg(target_os = "macos")]
    if !roots.overridden {
        return macos::watch(changed);
    }
    let _ = (roots, changed);
    false
}

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
