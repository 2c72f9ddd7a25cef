//! macOS hibernation: `hibernatemode 25` (memory written to disk and powered off) for one
//! hibernation, with the user's modes saved first — one per power source — and put back after
//! the Mac wakes.
//!
//! Facts (`man pmset`): 0 is plain sleep (desktops), 3 sleep with a copy on disk (laptops), 25
//! disk only; Apple supports no other value, so lidguard refuses to touch any other. A user may
//! keep a different mode on battery and on the charger (`pmset -b` / `-c`), so the modes are
//! read per source (`pmset -g custom`) and each is put back on its own source. Changing them
//! needs root (the sudoers rule of `macos-permission install` allows exactly `-a hibernatemode
//! 25` and `-b`/`-c` with 0, 3 and 25).

use crate::lid_action::PolicyBackups;
use crate::pmset::{HIBERNATE_MODES, HIBERNATE_TO_DISK, PerSource};
use crate::policy::PolicyError;
use crate::saved_setting::{self, Restored, Setting};

/// The store's backup kind for `hibernatemode`.
pub const BACKUP_KIND: &str = "macos-hibernate-mode";

/// Sets `hibernatemode 25` on every source after backing up the user's modes; returns the saved
/// modes. Refuses a mode Apple does not support, changing nothing.
pub fn prepare(
    setting: &dyn Setting<PerSource>,
    backups: &dyn PolicyBackups,
) -> Result<PerSource, PolicyError> {
    let current = setting.read()?;
    if let Some((_, mode)) = current.values().find(|(_, m)| !HIBERNATE_MODES.contains(m)) {
        return Err(PolicyError::Missing(format!(
            "hibernatemode is {mode}, which Apple does not support (0, 3 or 25); lidguard \
             leaves it alone and does not hibernate"
        )));
    }
    let what = "set hibernatemode 25";
    saved_setting::change(
        setting,
        backups,
        (BACKUP_KIND, what),
        PerSource::both(HIBERNATE_TO_DISK),
    )
}

/// Puts the user's modes back, each on its source, and deletes the backup.
pub fn restore(
    setting: &dyn Setting<PerSource>,
    backups: &dyn PolicyBackups,
) -> Result<Restored<PerSource>, PolicyError> {
    saved_setting::restore(setting, backups, BACKUP_KIND)
}

/// Whether a backup is pending.
pub fn pending(backups: &dyn PolicyBackups) -> Result<bool, PolicyError> {
    saved_setting::pending(backups, BACKUP_KIND)
}

/// What came back, for the user; `None` when nothing was pending.
pub fn describe(restored: &Restored<PerSource>) -> Option<String> {
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

    /// The modes per source, with every write recorded.
    struct Modes(Mutex<PerSource>, Mutex<Vec<PerSource>>);

    impl Modes {
        fn at(modes: PerSource) -> Modes {
            Modes(Mutex::new(modes), Mutex::new(Vec::new()))
        }
        fn writes(&self) -> Vec<PerSource> {
            self.1.lock().unwrap().clone()
        }
    }

    impl Setting<PerSource> for Modes {
        fn read(&self) -> Result<PerSource, PolicyError> {
            Ok(*self.0.lock().unwrap())
        }
        fn write(&self, value: PerSource) -> Result<(), PolicyError> {
            self.1.lock().unwrap().push(value);
            *self.0.lock().unwrap() = value;
            Ok(())
        }
    }

    #[test]
    fn laptop_default_goes_to_25_and_back() {
        let mode = Modes::at(PerSource::both(3));
        let backups = MemoryBackups::default();
        assert_eq!(prepare(&mode, &backups).unwrap(), PerSource::both(3));
        assert_eq!(mode.read().unwrap(), PerSource::both(25));
        let restored = restore(&mode, &backups).unwrap();
        assert_eq!(
            describe(&restored).as_deref(),
            Some("your hibernatemode (3)")
        );
        assert_eq!(mode.writes(), [PerSource::both(25), PerSource::both(3)]);
        assert!(!pending(&backups).unwrap());
    }

    /// A user with 25 on battery and 3 on the charger gets both back, each on its source.
    #[test]
    fn modes_differing_per_source_come_back_per_source() {
        let users = PerSource {
            battery: Some(25),
            ac: Some(3),
        };
        let mode = Modes::at(users);
        let backups = MemoryBackups::default();
        prepare(&mode, &backups).unwrap();
        assert_eq!(mode.read().unwrap(), PerSource::both(25));
        let restored = restore(&mode, &backups).unwrap();
        assert_eq!(mode.read().unwrap(), users);
        assert_eq!(
            describe(&restored).as_deref(),
            Some("your hibernatemode (battery 25, AC 3)")
        );
    }

    #[test]
    fn already_25_is_never_written() {
        let mode = Modes::at(PerSource::both(25));
        let backups = MemoryBackups::default();
        prepare(&mode, &backups).unwrap();
        restore(&mode, &backups).unwrap();
        assert!(mode.writes().is_empty());
    }

    #[test]
    fn unsupported_modes_are_left_alone() {
        let mode = Modes::at(PerSource {
            battery: Some(3),
            ac: Some(5),
        });
        let backups = MemoryBackups::default();
        let err = prepare(&mode, &backups).unwrap_err();
        assert!(err.to_string().contains("hibernatemode is 5"), "{err}");
        assert!(mode.writes().is_empty());
        assert!(!pending(&backups).unwrap());
    }

    /// A backup an earlier lidguard wrote as one number is read as both sources'.
    #[test]
    fn an_older_single_value_backup_still_restores() {
        let mode = Modes::at(PerSource::both(25));
        let backups = MemoryBackups::default();
        backups.save_if_absent(BACKUP_KIND, "0").unwrap();
        restore(&mode, &backups).unwrap();
        assert_eq!(mode.read().unwrap(), PerSource::both(0));
    }
}
