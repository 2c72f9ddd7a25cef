//! The tray at login on macOS: a per-user launchd agent, `dev.lidguard.tray.plist` in
//! `~/Library/LaunchAgents/`, that runs `lidguard tray` when the user logs in to the desktop
//! (`LimitLoadToSessionType` Aqua: not for an ssh login). A file of that name that lidguard did
//! not write is the user's: `setup` stops rather than replace it, and `uninstall` leaves it.
//!
//! The file work takes the home folder as an argument, so it is tested on Linux too.

use std::path::Path;
#[cfg(target_os = "macos")]
use std::path::PathBuf;

use super::AutostartError;
use crate::launchd;

#[cfg(target_os = "macos")]
fn home() -> Result<PathBuf, AutostartError> {
    std::env::home_dir().ok_or(AutostartError::NoHome)
}

/// What lets the place be found, when it cannot be.
#[cfg(target_os = "macos")]
pub const FIND_IT: &str = "set HOME so ~/Library/LaunchAgents can be found";

/// The agent's path, as the user reads it.
#[cfg(target_os = "macos")]
pub fn place() -> Result<String, AutostartError> {
    Ok(launchd::tray_agent_path(&home()?).display().to_string())
}

/// A Mac always has a desktop for its users (the agent itself waits for a graphical login).
#[cfg(target_os = "macos")]
pub fn wanted() -> bool {
    true
}

/// Whether lidguard's agent is there.
#[cfg(target_os = "macos")]
pub fn installed() -> Result<bool, AutostartError> {
    Ok(installed_in(&home()?))
}

/// Whether a file of that name is there that lidguard did not write.
#[cfg(target_os = "macos")]
pub fn foreign() -> Result<bool, AutostartError> {
    let home = home()?;
    Ok(launchd::tray_agent_path(&home).symlink_metadata().is_ok() && !installed_in(&home))
}

/// Writes the agent (loaded at the next login); returns its path.
#[cfg(target_os = "macos")]
pub fn install(exe: &Path) -> Result<String, AutostartError> {
    install_in(&home()?, exe)
}

/// Unloads and deletes lidguard's agent (never a file it did not write); returns its path,
/// `None` when there was none.
#[cfg(target_os = "macos")]
pub fn remove() -> Result<Option<String>, AutostartError> {
    remove_in(&home()?, || {
        // Loaded since the last login: unloaded too (not loaded: launchctl says so, which is
        // fine). A tray it started ends with it.
        let uid = rustix::process::getuid().as_raw();
        let _ = std::process::Command::new("/bin/launchctl")
            .args(launchd::bootout_tray_args(uid))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    })
}

fn installed_in(home: &Path) -> bool {
    std::fs::read_to_string(launchd::tray_agent_path(home))
        .is_ok_and(|text| launchd::is_tray_agent(&text))
}

/// Writes the agent running `exe` (readable by the user alone) below `home`.
fn install_in(home: &Path, exe: &Path) -> Result<String, AutostartError> {
    let path = launchd::tray_agent_path(home);
    if path.symlink_metadata().is_ok() && !installed_in(home) {
        return Err(AutostartError::Foreign(path.display().to_string()));
    }
    let dir = home.join("Library").join("LaunchAgents");
    let dir = dir.as_path();
    // Every account has this folder; one made here stays, as any login item's would.
    std::fs::create_dir_all(dir).map_err(AutostartError::io("create", dir))?;
    lidguard_files::atomic::write(&path, launchd::tray_agent_plist(exe).as_bytes(), 0o600)
        .map_err(AutostartError::io("write", &path))?;
    Ok(path.display().to_string())
}

/// Deletes lidguard's agent below `home` after `unload`; a file lidguard did not write stays.
fn remove_in(home: &Path, unload: impl FnOnce()) -> Result<Option<String>, AutostartError> {
    if !installed_in(home) {
        return Ok(None);
    }
    unload();
    let path = launchd::tray_agent_path(home);
    std::fs::remove_file(&path).map_err(AutostartError::io("delete", &path))?;
    Ok(Some(path.display().to_string()))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn install_writes_the_agent_for_the_user_alone_and_remove_takes_it_away() {
        let home = tempfile::tempdir().unwrap();
        let exe = Path::new("/Applications/x y/lidguard");
        let path = install_in(home.path(), exe).unwrap();
        assert!(path.ends_with("Library/LaunchAgents/dev.lidguard.tray.plist"));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("<string>/Applications/x y/lidguard</string>"),
            "{text}"
        );
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(installed_in(home.path()));
        // Again over its own file: fine.
        install_in(home.path(), exe).unwrap();

        let mut unloaded = false;
        let removed = remove_in(home.path(), || unloaded = true).unwrap();
        assert_eq!(removed.as_deref(), Some(path.as_str()));
        assert!(unloaded && !Path::new(&path).exists());
        assert_eq!(
            remove_in(home.path(), || panic!("nothing to unload")).unwrap(),
            None
        );
    }

    #[test]
    fn a_file_of_that_name_lidguard_did_not_write_stays_as_it_is() {
        let home = tempfile::tempdir().unwrap();
        let path = launchd::tray_agent_path(home.path());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        lidguard_files::atomic::write(&path, b"<plist>mine</plist>\n", 0o644).unwrap();
        let err = install_in(home.path(), Path::new("/x/lidguard")).unwrap_err();
        assert!(
            err.to_string().contains("lidguard did not write it"),
            "{err}"
        );
        assert!(!installed_in(home.path()));
        assert_eq!(remove_in(home.path(), || panic!("not ours")).unwrap(), None);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "<plist>mine</plist>\n"
        );
    }
}
