//! The thermal state an unprivileged program may read, for the temperature guard where no
//! temperature can be read.
//!
//! - macOS: `NSProcessInfo.thermalState` ([`macos`]; Apple's Foundation reference: nominal,
//!   fair, serious, critical). A user cannot read a temperature there without root.
//! - Where tests relocate the system: `<sys>/power/thermal-state`, the same number
//!   (`NSProcessInfoThermalState`) the Mac returns.
//! - Linux and Windows: none (their guard reads temperatures instead).

use lidguard_core::clamshell::ThermalState;

use crate::roots::Roots;

#[cfg(target_os = "macos")]
mod macos;

/// The thermal state now, or `None` where the OS gives none.
pub fn thermal_state(roots: &Roots) -> Option<ThermalState> {
    if roots.overridden {
        let text = std::fs::read_to_string(roots.sys_root.join("power/thermal-state")).ok()?;
        return ThermalState::from_index(text.trim().parse().ok()?);
    }
    #[cfg(target_os = "macos")]
    {
        macos::thermal_state()
    }
    #[cfg(not(target_os = "macos"))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_state_below_the_sys_root() {
        let dir = tempfile::tempdir().unwrap();
        let roots = Roots::new(dir.path(), dir.path());
        assert_eq!(thermal_state(&roots), None);
        std::fs::create_dir_all(dir.path().join("power")).unwrap();
        for (text, state) in [
            ("0\n", Some(ThermalState::Nominal)),
            ("2", Some(ThermalState::Serious)),
            ("3", Some(ThermalState::Critical)),
            ("7", None),
            ("hot", None),
        ] {
            std::fs::write(dir.path().join("power/thermal-state"), text).unwrap();
            assert_eq!(thermal_state(&roots), state, "{text:?}");
        }
    }
}
