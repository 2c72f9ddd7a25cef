//! The battery on Windows.

/// The battery from `GetSystemPowerStatus`: `None` without a battery (`BatteryFlag` 128, "no
/// system battery") or when the charge is unknown (255).
pub(super) fn battery() -> Option<lidguard_core::suspend::Battery> {
    use windows_sys::Win32::System::Power::{GetSystemPowerStatus, SYSTEM_POWER_STATUS};
    const NO_BATTERY: u8 = 128;
    const UNKNOWN: u8 = 255;
    // SAFETY: the call fills the zeroed plain-data struct it is given and keeps no pointer.
    let status = unsafe {
        let mut status: SYSTEM_POWER_STATUS = std::mem::zeroed();
        (GetSystemPowerStatus(&mut status) != 0).then_some(status)
    }?;
    if status.BatteryFlag & NO_BATTERY != 0 || status.BatteryLifePercent == UNKNOWN {
        return None;
    }
    Some(lidguard_core::suspend::Battery {
        percent: status.BatteryLifePercent.min(100),
        // ACLineStatus: 0 offline, 1 online, 255 unknown.
        on_battery: status.ACLineStatus == 0,
    })
}
