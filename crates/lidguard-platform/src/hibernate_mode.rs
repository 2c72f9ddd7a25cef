//! macOS hibernation: `hibernatemode 25` (memory written to disk and powered off) for one
//! hibernation, with the user's mode saved first and put back after the Mac wakes.
//!
//! Facts (`man pmset`): 0 is plain sleep (desktops), 3 sleep with a copy on disk (laptops), 25
//! disk only; Apple supports no other value, so lidguard refuses to touch any other. Changing it
//! needs root (the sudoers rule of `macos-permission install` allows exactly 0, 3 and 25).

use crate::lid_action::PolicyBackups;
use crate::pmset::{HIBERNATE_MODES, HIBERNATE_TO_DISK};
use crate::policy::PolicyError;
use crate::saved_setting::{self, Restored, Setting};

/// The store's backup kind for `hibernatemode`.
pub const BACKUP_KIND: &str = "macos-hibernate-mode";

/// Sets `hibernatemode 25` after backing up the user's mode; returns the saved mode. Refuses a
/// mode Apple does not support, changing nothing.
pub fn prepare(
    setting: &dyn Setting<u32>,
    backups: &dyn PolicyBackups,
) -> Result<u32, PolicyError> {
    let current = setting.read()?;
    if !HIBERNATE_MODES.contains(&current) {
        return Err(PolicyError::Missing(format!(
            "hibernatemode is {current}, which Apple does not support (0, 3 or 25); lidguard \
             leaves it alone and does not hibernate"
        )));
    }
    let what = "set hibernatemode 25";
    saved_setting::change(setting, backups, (BACKUP_KIND, what), HIBERNATE_TO_DISK)
}

/// Puts the user's mode back and deletes the backup.
pub fn restore(
    setting: &dyn Setting<u32>,
    backups: &dyn PolicyBackups,
) -> Result<Restored<u32>, PolicyError> {
    saved_setting::restore(setting, backups, BACKUP_KIND)
}

/// Whether a backup is pending.
pub fn pending(backups: &dyn PolicyBackups) -> Result<bool, PolicyError> {
    saved_setting::pending(backups, BACKUP_KIND)
}

/// What came back, for the user; `None` when nothing was pending.
pub fn describe(restored: &Restored<u32>) -> Option<String> {
    match restored {
        Restored::Nothing => None,
        Restored::Value { value, .. } => Some(format!("your hibernatemode ({value})")),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::lid_action::memory::MemoryBackups;

    struct Mode(Mutex<u32>, Mutex<Vec<u32>>);

    impl Mode {
        fn at(mode: u32) -> Mode {
            Mode(Mutex::new(mode), Mutex::new(Vec::new()))
        }
    }

    impl Setting<u32> for Mode {
        fn read(&self) -> Result<u32, PolicyError> {
            Ok(*self.0.lock().unwrap())
        }
        fn write(&self, value: u32) -> Result<(), PolicyError> {
            self.1.lock().unwrap().push(value);
            *self.0.lock().unwrap() = value;
            Ok(())
        }
    }

    #[test]
    fn laptop_default_goes_to_25_and_back() {
        let mode = Mode::at(3);
        let backups = MemoryBackups::default();
        assert_eq!(prepare(&mode, &backups).unwrap(), 3);
        assert_eq!(mode.read().unwrap(), 25);
        let restored = restore(&mode, &backups).unwrap();
        assert_eq!(
            describe(&restored).as_deref(),
            Some("your hibernatemode (3)")
        );
        assert_eq!(*mode.1.lock().unwrap(), [25, 3]);
        assert!(!pending(&backups).unwrap());
    }

    #[test]
    fn already_25_is_never_written() {
        let mode = Mode::at(25);
        let backups = MemoryBackups::default();
        prepare(&mode, &backups).unwrap();
        restore(&mode, &backups).unwrap();
        assert!(mode.1.lock().unwrap().is_empty());
    }

    #[test]
    fn unsupported_modes_are_left_alone() {
        let mode = Mode::at(5);
        let backups = MemoryBackups::default();
        let err = prepare(&mode, &backups).unwrap_err();
        assert!(err.to_string().contains("does not support"), "{err}");
        assert!(mode.1.lock().unwrap().is_empty());
        assert!(!pending(&backups).unwrap());
    }
}
