//! `NSProcessInfo.thermalState` (Foundation, macOS 10.10.3 and later): a getter that asks
//! nothing of the window server and needs no run loop.

use lidguard_core::clamshell::ThermalState;
use objc2_foundation::NSProcessInfo;

/// The thermal state now.
pub(super) fn thermal_state() -> Option<ThermalState> {
    let state = NSProcessInfo::processInfo().thermalState();
    ThermalState::from_index(i64::try_from(state.0).ok()?)
}
