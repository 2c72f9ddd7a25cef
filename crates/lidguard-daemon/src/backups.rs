//! Backups of OS policy lidguard changes (the Windows lid-close action), kept in the store, and
//! the restore any lidguard command runs when a daemon died with a change in place.

use std::sync::Mutex;

use jiff::Timestamp;
use lidguard_ipc::Places;
use lidguard_platform::lid_action::{PolicyBackups, Restored};
use lidguard_store::Store;

use crate::InstanceLock;

/// [`PolicyBackups`] on a connection of its own to lidguard's database (the daemon's main
/// connection stays with its event loop).
pub struct StoreBackups {
    store: Mutex<Store>,
}

impl StoreBackups {
    /// Opens the database at `places`.
    pub fn open(places: &Places) -> Result<StoreBackups, String> {
        lidguard_files::private::ensure_dir(&places.state_dir).map_err(|e| e.to_string())?;
        let store = Store::open(&places.database()).map_err(|e| e.to_string())?;
        Ok(StoreBackups {
            store: Mutex::new(store),
        })
    }

    fn with<T>(
        &self,
        f: impl FnOnce(&Store) -> Result<T, lidguard_store::StoreError>,
    ) -> Result<T, String> {
        let store = self
            .store
            .lock()
            .map_err(|_| "the backup store's lock is poisoned".to_owned())?;
        f(&store).map_err(|e| e.to_string())
    }
}

impl PolicyBackups for StoreBackups {
    fn save_if_absent(&self, kind: &str, json: &str) -> Result<bool, String> {
        self.with(|s| s.save_policy_backup(kind, json, Timestamp::now()))
    }

    fn load(&self, kind: &str) -> Result<Option<String>, String> {
        self.with(|s| s.policy_backup(kind))
            .map(|b| b.map(|b| b.data_json))
    }

    fn delete(&self, kind: &str) -> Result<(), String> {
        self.with(|s| s.delete_policy_backup(kind)).map(drop)
    }
}

/// When no daemon runs and a backup is pending, puts the user's policy back (a daemon died with
/// it changed). Holds the daemon's instance lock meanwhile, so no daemon starts halfway.
/// Returns a line for the user when something was restored or could not be.
pub fn restore_left_changed(places: &Places) -> Option<String> {
    if !places.database().exists() {
        return None;
    }
    let Ok(lock) = InstanceLock::acquire(&places.lock_file()) else {
        // A daemon runs (it restored at its start) or the lock cannot be taken: nothing to do.
        return None;
    };
    let backups = match StoreBackups::open(places) {
        Ok(backups) => backups,
        Err(e) => {
            return Some(format!(
                "cannot check for a lid-close action to restore: {e}"
            ));
        }
    };
    let restored = lidguard_platform::power::restore_pending(&backups);
    drop(lock);
    match restored {
        Ok(Restored::Nothing) => None,
        Ok(Restored::Values { backup, applied }) => {
            tracing::warn!(
                ?backup,
                applied,
                "restored the lid-close action a dead daemon left changed"
            );
            Some(format!(
                "restored your lid-close action (AC {}, DC {}) that a stopped daemon had \
                 left at \"do nothing\"",
                backup.ac, backup.dc
            ))
        }
        Err(e) => Some(format!(
            "the lid-close action a stopped daemon changed could not be restored: {e}; \
             it stays backed up and the next lidguard command tries again"
        )),
    }
}
