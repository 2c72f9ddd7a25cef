//! Backups of OS policy lidguard changes (the Windows lid-close action, macOS's SleepDisabled),
//! kept in the store, and the restore any lidguard command runs when a daemon died with a change
//! in place.

use std::sync::Mutex;

use jiff::Timestamp;
use lidguard_ipc::Places;
use lidguard_platform::lid_action::PolicyBackups;
use lidguard_platform::policy::PolicyError;
use lidguard_store::Store;

use crate::{DaemonError, InstanceLock};

/// [`PolicyBackups`] on a connection of its own to lidguard's database (the daemon's main
/// connection stays with its event loop).
pub struct StoreBackups {
    store: Mutex<Store>,
    #[cfg_attr(
        not(target_os = "macos"),
        allow(dead_code, reason = "the watcher is started on macOS only")
    )]
    places: Places,
}

impl StoreBackups {
    /// Opens the database at `places`.
    pub fn open(places: &Places) -> Result<StoreBackups, PolicyError> {
        lidguard_files::private::ensure_dir(&places.state_dir)
            .map_err(|e| PolicyError::Backups(Box::new(e)))?;
        let store =
            Store::open(&places.database()).map_err(|e| PolicyError::Backups(Box::new(e)))?;
        Ok(StoreBackups {
            store: Mutex::new(store),
            places: places.clone(),
        })
    }

    fn with<T>(
        &self,
        f: impl FnOnce(&Store) -> Result<T, lidguard_store::StoreError>,
    ) -> Result<T, PolicyError> {
        let store = self
            .store
            .lock()
            .map_err(|_| PolicyError::Backups("the backup store's lock is poisoned".into()))?;
        f(&store).map_err(|e| PolicyError::Backups(Box::new(e)))
    }
}

impl PolicyBackups for StoreBackups {
    fn save_if_absent(&self, kind: &str, json: &str) -> Result<bool, PolicyError> {
        self.with(|s| s.save_policy_backup(kind, json, Timestamp::now()))
    }

    fn load(&self, kind: &str) -> Result<Option<String>, PolicyError> {
        self.with(|s| s.policy_backup(kind))
            .map(|b| b.map(|b| b.data_json))
    }

    fn delete(&self, kind: &str) -> Result<(), PolicyError> {
        self.with(|s| s.delete_policy_backup(kind)).map(drop)
    }

    #[cfg(target_os = "macos")]
    fn changed(&self, kind: &str) {
        tracing::info!(
            kind,
            "starting the watcher that restores it if this daemon dies"
        );
        start_watcher(&self.places);
    }
}

/// Starts `lidguard power-restore --wait-for-daemon`: through the launchd job when
/// `macos-permission install` put one in place (launchd runs it outside this daemon's process
/// tree), else as a detached process in a process group of its own. A watcher already waiting
/// makes the new one leave at once.
#[cfg(target_os = "macos")]
fn start_watcher(places: &Places) {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    use lidguard_platform::launchd;

    let uid = rustix::process::getuid().as_raw();
    let job = std::env::home_dir().map(|home| launchd::agent_path(&home));
    if job.is_some_and(|job| job.exists())
        && lidguard_files::environment::var(lidguard_ipc::places::HOME_VAR).is_none()
    {
        let kicked = Command::new("/bin/launchctl")
            .args(launchd::kickstart_args(uid))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if kicked.is_ok_and(|s| s.success()) {
            return;
        }
    }
    let Ok(exe) = std::env::current_exe() else {
        tracing::warn!("cannot find lidguard's executable to start the restore watcher");
        return;
    };
    let spawned = Command::new(exe)
        .args(launchd::ARGS)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
    match spawned {
        // Reap it when it ends (after this daemon, or at once when another watcher waits).
        Ok(mut child) => {
            std::thread::spawn(move || child.wait());
        }
        Err(e) => {
            tracing::warn!(error = %e, places = ?places.state_dir, "cannot start the restore watcher")
        }
    }
}

/// When no daemon runs and a backup is pending, puts the user's policy back (a daemon died with
/// it changed). Holds the daemon's instance lock meanwhile, so no daemon starts halfway.
/// Returns a line for the user when something was restored or could not be.
pub fn restore_left_changed(places: &Places) -> Option<String> {
    if !places.database().exists() {
        return None;
    }
    // After a reboot the runtime directory (and so the lock file) may be gone.
    if let Err(e) = places.ensure_runtime_dir() {
        return Some(format!("cannot check for power policy to restore: {e}"));
    }
    // A daemon runs (it restored at its start) or the lock cannot be taken: nothing to do.
    let lock = InstanceLock::acquire(&places.lock_file()).ok()?;
    restore_holding(places, lock)
}

/// `lidguard power-restore --wait-for-daemon`: waits, blocked in the OS, until no daemon holds
/// the instance lock (the daemon ended, however), then restores what is pending as
/// [`restore_left_changed`] does. One waiter at a time: a second one returns `Ok(None)` at
/// once, and so does the first when the daemon put everything back itself.
pub fn restore_after_daemon(places: &Places) -> Result<Option<String>, DaemonError> {
    places.ensure_runtime_dir()?;
    let guard = InstanceLock::acquire(&places.runtime_dir.join("power-restore.lock"));
    let Ok(_guard) = guard else {
        return Ok(None);
    };
    let lock = InstanceLock::wait(&places.lock_file())?;
    if !places.database().exists() {
        return Ok(None);
    }
    Ok(restore_holding(places, lock))
}

fn restore_holding(places: &Places, lock: InstanceLock) -> Option<String> {
    let backups = match StoreBackups::open(places) {
        Ok(backups) => backups,
        Err(e) => return Some(format!("cannot check for power policy to restore: {e}")),
    };
    let restored = lidguard_platform::restore::pending_and_settle(&backups);
    drop(lock);
    match restored {
        Ok(None) => None,
        Ok(Some((what, then))) => {
            tracing::warn!(%what, ?then, "restored OS policy a dead daemon left changed");
            let then = then.map(|then| format!("; {then}")).unwrap_or_default();
            Some(format!(
                "restored {what}, which a stopped daemon had left changed{then}"
            ))
        }
        Err(e) => Some(format!(
            "OS power policy a stopped daemon changed could not be restored: {e}; it stays \
             backed up and the next lidguard command tries again"
        )),
    }
}

#[cfg(all(test, unix))]
#[allow(
    clippy::disallowed_methods,
    reason = "tests write fixtures and read the environment directly"
)]
mod tests {
    //! macOS's `SleepDisabled` change and its restore, at the state-machine level on any Unix:
    //! the real store, the file seam for the setting, and a process really killed with the
    //! change in place.

    use std::path::Path;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use lidguard_platform::pmset::{FileSetting, Setting};
    use lidguard_platform::saved_setting::Restored;
    use lidguard_platform::sleep_disabled;

    use super::*;

    const CHILD_HOME: &str = "LIDGUARD_TEST_CHILD_HOME";

    /// Run as a child (see [`killed`]): changes the setting with backups in the store at
    /// `$LIDGUARD_TEST_CHILD_HOME`, then waits to be killed.
    #[test]
    fn child_changes_then_waits() {
        let Some(home) = std::env::var_os(CHILD_HOME) else {
            return;
        };
        let home = Path::new(&home);
        let backups = StoreBackups::open(&Places::under(home)).unwrap();
        sleep_disabled::change(&FileSetting::sleep_disabled(&home.join("sys")), &backups).unwrap();
        std::fs::write(home.join("changed"), "").unwrap();
        std::thread::sleep(Duration::from_secs(60));
    }

    /// Starts this test binary as a daemon stand-in that changes `SleepDisabled`, and SIGKILLs
    /// it once the change is in place.
    fn killed(home: &Path) {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "backups::tests::child_changes_then_waits"])
            .env(CHILD_HOME, home)
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while !home.join("changed").exists() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "child never changed it"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        child.kill().unwrap();
        child.wait().unwrap();
    }

    fn home_with(sleep_disabled: Option<bool>) -> tempfile::TempDir {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join("sys/power")).unwrap();
        if let Some(value) = sleep_disabled {
            Setting::<bool>::write(
                &FileSetting::sleep_disabled(&home.path().join("sys")),
                value,
            )
            .unwrap();
        }
        home
    }

    #[test]
    fn daemon_killed_after_disabling_sleep_next_invocation_restores() {
        let home = home_with(None);
        let file = FileSetting::sleep_disabled(&home.path().join("sys"));
        let setting: &dyn Setting<bool> = &file;
        killed(home.path());
        assert!(
            setting.read().unwrap(),
            "the dead process left sleep disabled"
        );

        // The next invocation: a new connection to the same store.
        let backups = StoreBackups::open(&Places::under(home.path())).unwrap();
        assert!(sleep_disabled::pending(&backups).unwrap());
        let restored = sleep_disabled::restore(setting, &backups).unwrap();
        assert_eq!(
            restored,
            Restored::Value {
                value: false,
                written: true
            }
        );
        assert_eq!(
            sleep_disabled::describe(&restored).as_deref(),
            Some("your SleepDisabled setting (0)")
        );
        assert!(!setting.read().unwrap(), "sleep works again");
        assert!(!sleep_disabled::pending(&backups).unwrap());
    }

    #[test]
    fn daemon_killed_when_sleep_was_already_disabled_leaves_it_disabled() {
        let home = home_with(Some(true));
        let file = FileSetting::sleep_disabled(&home.path().join("sys"));
        let setting: &dyn Setting<bool> = &file;
        let before = std::fs::metadata(home.path().join("sys/power/sleep-disabled"))
            .unwrap()
            .modified()
            .unwrap();
        killed(home.path());
        let backups = StoreBackups::open(&Places::under(home.path())).unwrap();
        let restored = sleep_disabled::restore(setting, &backups).unwrap();
        assert_eq!(
            restored,
            Restored::Value {
                value: true,
                written: false
            }
        );
        assert!(setting.read().unwrap(), "the user's 1 stays 1");
        let after = std::fs::metadata(home.path().join("sys/power/sleep-disabled"))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(before, after, "the setting was never written");
    }
}
