//! macOS's `SleepDisabled`, which lidguard sets while it protects a Mac with the lid closed, and
//! how the user's own value comes back.
//!
//! A Mac sleeps when its lid closes whatever power assertions are held, unless it drives an
//! external display on power; the one switch that keeps it awake is `pmset -a disablesleep 1`
//! (root only, and it survives reboots). A Mac left with it set never sleeps, so the order is
//! what makes it safe:
//!
//! 1. read the current value;
//! 2. save it durably ([`PolicyBackups`], lidguard's store) — an existing backup is kept, since
//!    it holds the user's original and the current value may already be lidguard's;
//! 3. set 1, unless it is 1 already (then nothing is written, and nothing will be undone:
//!    the user had sleep disabled before lidguard came);
//! 4. when setting fails, restore at once.
//!
//! [`restore`] writes the saved value back only when the current one differs, and deletes the
//! backup. It runs on release, on daemon exit, at daemon start, from any CLI command that finds
//! a backup while no daemon runs, from the watchdog that waits for a daemon holding the change
//! to end, and before lidguard asks the Mac to sleep.

use crate::lid_action::PolicyBackups;
use crate::policy::PolicyError;
use crate::saved_setting::{self, Restored, Setting};

/// The store's backup kind for `SleepDisabled`.
pub const BACKUP_KIND: &str = "macos-sleep-disabled";

/// Disables sleep after backing up the user's value; returns the saved value in force (an older
/// backup's when one existed).
pub fn change(
    setting: &dyn Setting<bool>,
    backups: &dyn PolicyBackups,
) -> Result<bool, PolicyError> {
    saved_setting::change(setting, backups, (BACKUP_KIND, "disable sleep"), true)
}

/// Puts the saved `SleepDisabled` back and deletes the backup.
pub fn restore(
    setting: &dyn Setting<bool>,
    backups: &dyn PolicyBackups,
) -> Result<Restored<bool>, PolicyError> {
    saved_setting::restore(setting, backups, BACKUP_KIND)
}

/// Whether a backup is pending (a change is in place or a dead daemon left one).
pub fn pending(backups: &dyn PolicyBackups) -> Result<bool, PolicyError> {
    saved_setting::pending(backups, BACKUP_KIND)
}

/// What came back, for the user; `None` when nothing was pending.
pub fn describe(restored: &Restored<bool>) -> Option<String> {
    match restored {
        Restored::Nothing => None,
        Restored::Value { value, .. } => {
            Some(format!("your SleepDisabled setting ({})", u8::from(*value)))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// The setting, with every write recorded.
    #[derive(Default)]
    struct Setting {
        value: Mutex<bool>,
        writes: Mutex<Vec<bool>>,
        fail_writes: bool,
    }

    impl Setting {
        fn at(value: bool) -> Setting {
            Setting {
                value: Mutex::new(value),
                ..Setting::default()
            }
        }
        fn value(&self) -> bool {
            *self.value.lock().unwrap()
        }
        fn writes(&self) -> Vec<bool> {
            self.writes.lock().unwrap().clone()
        }
    }

    impl saved_setting::Setting<bool> for Setting {
        fn read(&self) -> Result<bool, PolicyError> {
            Ok(self.value())
        }
        fn write(&self, disabled: bool) -> Result<(), PolicyError> {
            if self.fail_writes {
                return Err(PolicyError::Command {
                    shown: "sudo -n /usr/bin/pmset -a disablesleep 1".to_owned(),
                    status: "exit status: 1".to_owned(),
                    said: "sudo: a password is required".to_owned(),
                });
            }
            self.writes.lock().unwrap().push(disabled);
            *self.value.lock().unwrap() = disabled;
            Ok(())
        }
    }

    use crate::lid_action::memory::MemoryBackups as Backups;

    #[test]
    fn change_then_restore_puts_the_users_value_back() {
        let setting = Setting::at(false);
        let backups = Backups::default();
        let saved = change(&setting, &backups).unwrap();
        assert!(!saved);
        assert!(setting.value());
        assert!(pending(&backups).unwrap());
        assert_eq!(
            restore(&setting, &backups).unwrap(),
            Restored::Value {
                value: false,
                written: true
            }
        );
        assert!(!setting.value());
        assert_eq!(setting.writes(), [true, false]);
        assert!(!pending(&backups).unwrap());
        assert_eq!(restore(&setting, &backups).unwrap(), Restored::Nothing);
    }

    #[test]
    fn already_disabled_is_left_disabled_without_a_write() {
        let setting = Setting::at(true);
        let backups = Backups::default();
        let saved = change(&setting, &backups).unwrap();
        assert!(saved);
        let restored = restore(&setting, &backups).unwrap();
        assert_eq!(
            restored,
            Restored::Value {
                value: true,
                written: false
            }
        );
        assert!(setting.value(), "the user's 1 stays 1");
        assert!(setting.writes().is_empty(), "pmset never ran");
    }

    #[test]
    fn a_second_change_keeps_the_first_backup() {
        // A daemon died with sleep disabled and a new one changes again before restoring:
        // the user's original (0) must win over the current value (lidguard's 1).
        let setting = Setting::at(false);
        let backups = Backups::default();
        change(&setting, &backups).unwrap();
        let again = change(&setting, &backups).unwrap();
        assert!(!again);
        restore(&setting, &backups).unwrap();
        assert!(!setting.value());
    }

    #[test]
    fn a_refused_write_leaves_nothing_behind() {
        let setting = Setting {
            fail_writes: true,
            ..Setting::at(false)
        };
        let backups = Backups::default();
        let err = change(&setting, &backups).unwrap_err();
        let err = err.to_string();
        assert!(
            err.starts_with("cannot disable sleep") && err.contains("password is required"),
            "{err}"
        );
        assert!(!setting.value());
        assert!(!pending(&backups).unwrap(), "no backup left pending");
    }

    #[test]
    fn an_unreadable_backup_is_kept() {
        let setting = Setting::at(true);
        let backups = Backups::default();
        backups.save_if_absent(BACKUP_KIND, "{not json").unwrap();
        assert!(restore(&setting, &backups).is_err());
        assert!(pending(&backups).unwrap());
        assert!(setting.writes().is_empty());
    }
}
