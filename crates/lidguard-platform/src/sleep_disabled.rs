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

use serde::{Deserialize, Serialize};

use crate::lid_action::PolicyBackups;
use crate::pmset::SleepSetting;

/// The store's backup kind for `SleepDisabled`.
pub const BACKUP_KIND: &str = "macos-sleep-disabled";

/// The user's `SleepDisabled`, as saved before lidguard changed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SleepBackup {
    /// The value before lidguard's change.
    pub sleep_disabled: bool,
}

/// Disables sleep after backing up the user's value; returns the backup in force (an older one
/// when it existed).
pub fn change(
    setting: &dyn SleepSetting,
    backups: &dyn PolicyBackups,
) -> Result<SleepBackup, String> {
    let current = SleepBackup {
        sleep_disabled: setting.read()?,
    };
    let json = serde_json::to_string(&current).map_err(|e| e.to_string())?;
    let saved = if backups.save_if_absent(BACKUP_KIND, &json)? {
        current
    } else {
        load(backups)?.unwrap_or(current)
    };
    if current.sleep_disabled {
        return Ok(saved);
    }
    if let Err(e) = setting.write(true) {
        return Err(match restore(setting, backups) {
            Ok(_) => format!("cannot disable sleep: {e}"),
            Err(undo) => {
                format!("cannot disable sleep: {e}; restoring the saved value failed too: {undo}")
            }
        });
    }
    Ok(saved)
}

/// What [`restore`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Restored {
    /// No backup was pending.
    Nothing,
    /// The backup was settled: `written` tells whether the value had to be written back (it
    /// had not when it was already the saved one).
    Value {
        /// The value put back.
        backup: SleepBackup,
        /// Whether `pmset` was run.
        written: bool,
    },
}

impl Restored {
    /// What came back, for the user; `None` when nothing was pending.
    pub fn describe(&self) -> Option<String> {
        match self {
            Restored::Nothing => None,
            Restored::Value { backup, .. } => Some(format!(
                "your SleepDisabled setting ({})",
                u8::from(backup.sleep_disabled)
            )),
        }
    }
}

/// Puts the saved `SleepDisabled` back and deletes the backup.
///
/// An unreadable backup is left in place (and reported): deleting it would lose the user's
/// value for good.
pub fn restore(
    setting: &dyn SleepSetting,
    backups: &dyn PolicyBackups,
) -> Result<Restored, String> {
    let Some(backup) = load(backups)? else {
        return Ok(Restored::Nothing);
    };
    let written = setting.read()? != backup.sleep_disabled;
    if written {
        setting.write(backup.sleep_disabled)?;
    }
    backups.delete(BACKUP_KIND)?;
    Ok(Restored::Value { backup, written })
}

/// Whether a backup is pending (a change is in place or a dead daemon left one).
pub fn pending(backups: &dyn PolicyBackups) -> Result<bool, String> {
    Ok(backups.load(BACKUP_KIND)?.is_some())
}

fn load(backups: &dyn PolicyBackups) -> Result<Option<SleepBackup>, String> {
    match backups.load(BACKUP_KIND)? {
        None => Ok(None),
        Some(json) => serde_json::from_str(&json)
            .map(Some)
            .map_err(|e| format!("the saved SleepDisabled value is unreadable ({e}): {json}")),
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

    impl SleepSetting for Setting {
        fn read(&self) -> Result<bool, String> {
            Ok(self.value())
        }
        fn write(&self, disabled: bool) -> Result<(), String> {
            if self.fail_writes {
                return Err("sudo: a password is required".into());
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
        assert!(!saved.sleep_disabled);
        assert!(setting.value());
        assert!(pending(&backups).unwrap());
        assert_eq!(
            restore(&setting, &backups).unwrap(),
            Restored::Value {
                backup: saved,
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
        assert!(saved.sleep_disabled);
        let restored = restore(&setting, &backups).unwrap();
        assert_eq!(
            restored,
            Restored::Value {
                backup: saved,
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
        assert!(!again.sleep_disabled);
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
        assert!(err.contains("password is required"), "{err}");
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
