//! Where lidguard keeps its files.
//!
//! Settings live in `$XDG_CONFIG_HOME/lidguard/`, state (database, logs) in
//! `$XDG_STATE_HOME/lidguard/`, the socket and the lock in `$XDG_RUNTIME_DIR/lidguard/` (a
//! private directory under the temp dir when that variable is unset). On macOS the socket and
//! the lock are in the per-user temporary folder the system assigns (see
//! [`Places::resolve_with`]), so one daemon serves the user however lidguard was started
//! (Terminal, ssh, launchd: each may have another `TMPDIR`). On Windows: settings in
//! `%APPDATA%\lidguard\`, state in `%LOCALAPPDATA%\lidguard\state\`, the lock in
//! `%LOCALAPPDATA%\lidguard\run\`, and a named pipe instead of the socket. `LIDGUARD_HOME`
//! relocates all of them under one directory, so two daemons with different homes never meet.

use std::io;
use std::path::{Path, PathBuf};

/// The environment variable that relocates every lidguard file.
pub const HOME_VAR: &str = "LIDGUARD_HOME";

/// The directories lidguard uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Places {
    /// Settings.
    pub config_dir: PathBuf,
    /// Database and logs.
    pub state_dir: PathBuf,
    /// Socket and lock file (private to the user).
    pub runtime_dir: PathBuf,
}

impl Places {
    /// Resolves the places from the process environment.
    pub fn from_env() -> io::Result<Places> {
        Places::resolve_with(
            |name| lidguard_files::environment::var(name).filter(|v| !v.is_empty()),
            lidguard_files::environment::darwin_user_temp_dir(),
        )
    }

    /// Resolves the places from `var` (injectable for tests). Empty values count as unset:
    /// an empty `XDG_*` variable would otherwise resolve relative to the current directory.
    pub fn resolve(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> io::Result<Places> {
        Places::resolve_with(var, None)
    }

    /// [`Places::resolve`] where the system assigns the user a temporary folder of its own
    /// (macOS: `confstr(_CS_DARWIN_USER_TEMP_DIR)`): the socket and the lock go there whatever
    /// `XDG_RUNTIME_DIR` or `TMPDIR` say, since a Terminal, an ssh login and a launchd job may
    /// each have their own and would otherwise start a daemon each.
    pub fn resolve_with(
        var: impl Fn(&str) -> Option<std::ffi::OsString>,
        user_temp_dir: Option<PathBuf>,
    ) -> io::Result<Places> {
        if let Some(home) = var(HOME_VAR) {
            let home = PathBuf::from(home);
            if !home.is_absolute() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "{HOME_VAR} must be an absolute path, got {}",
                        home.display()
                    ),
                ));
            }
            return Ok(Places::under(&home));
        }
        if cfg!(windows) {
            return Places::windows(&var);
        }
        let user_home = home_in(&var, "HOME", "the home directory")?;
        let xdg = |name: &str, fallback: &str| {
            var(name)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .unwrap_or_else(|| user_home.join(fallback))
        };
        let state_dir = xdg("XDG_STATE_HOME", ".local/state").join("lidguard");
        let user_temp_dir = user_temp_dir.filter(|p| p.is_absolute());
        let runtime_dir = match (user_temp_dir, var("XDG_RUNTIME_DIR").map(PathBuf::from)) {
            (Some(dir), _) => dir.join("lidguard"),
            (None, Some(dir)) if dir.is_absolute() => dir.join("lidguard"),
            (None, _) => {
                let temp = var("TMPDIR")
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute())
                    .unwrap_or_else(std::env::temp_dir);
                let shared = temp.join(format!("lidguard-{}", current_uid()));
                // Anyone can create that name in a shared temp dir first; then lidguard uses a
                // directory of the user's own instead of being locked out.
                if taken_by_someone_else(&shared) {
                    state_dir.join("run")
                } else {
                    shared
                }
            }
        };
        Ok(Places {
            config_dir: xdg("XDG_CONFIG_HOME", ".config").join("lidguard"),
            state_dir,
            runtime_dir,
        })
    }

    /// Windows: the roaming and local application data folders (`%APPDATA%`,
    /// `%LOCALAPPDATA%`), else their defaults under the user's profile.
    fn windows(var: &impl Fn(&str) -> Option<std::ffi::OsString>) -> io::Result<Places> {
        let profile = || home_in(var, "USERPROFILE", "the user profile");
        let folder = |name: &str, fallback: &str| -> io::Result<PathBuf> {
            match var(name).map(PathBuf::from).filter(|p| p.is_absolute()) {
                Some(dir) => Ok(dir),
                None => Ok(profile()?.join(fallback)),
            }
        };
        let local = folder("LOCALAPPDATA", "AppData\\Local")?.join("lidguard");
        Ok(Places {
            config_dir: folder("APPDATA", "AppData\\Roaming")?.join("lidguard"),
            state_dir: local.join("state"),
            runtime_dir: local.join("run"),
        })
    }

    /// Every place under one directory (what `LIDGUARD_HOME` does).
    pub fn under(home: &Path) -> Places {
        Places {
            config_dir: home.join("config"),
            state_dir: home.join("state"),
            runtime_dir: home.join("run"),
        }
    }

    /// `settings.json`.
    pub fn settings_file(&self) -> PathBuf {
        self.config_dir.join("settings.json")
    }

    /// The SQLite database.
    pub fn database(&self) -> PathBuf {
        self.state_dir.join("lidguard.db")
    }

    /// The log file (rotated by size).
    pub fn log_file(&self) -> PathBuf {
        self.state_dir.join("lidguard.log")
    }

    /// The daemon's socket; on Windows the named pipe (`\\.\pipe\lidguard-<hash>`, one per
    /// runtime directory, so two homes never meet there either).
    pub fn socket(&self) -> PathBuf {
        if cfg!(windows) {
            return PathBuf::from(pipe_name(&self.runtime_dir));
        }
        self.runtime_dir.join("lidguard.sock")
    }

    /// The single-instance lock file.
    pub fn lock_file(&self) -> PathBuf {
        self.runtime_dir.join("lidguard.lock")
    }

    /// The tray's instance lock (one tray per user; `uninstall` finds a running one by it).
    pub fn tray_lock_file(&self) -> PathBuf {
        self.runtime_dir.join("tray.lock")
    }

    /// Running as root, the first of lidguard's places that belongs to another user (the
    /// nearest part of it that exists, a link not followed): root, given that user's `HOME`
    /// (`sudo` on macOS keeps it, `sudo -E`), must not create, tighten or open files there.
    /// `None` when not root or when every place is root's.
    pub fn someone_elses(&self) -> Option<(PathBuf, u32)> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            if !rustix::process::geteuid().is_root() {
                return None;
            }
            for place in [&self.config_dir, &self.state_dir, &self.runtime_dir] {
                let owner = place
                    .ancestors()
                    .find_map(|p| p.symlink_metadata().ok().map(|m| (p, m.uid())));
                if let Some((path, uid)) = owner
                    && uid != 0
                {
                    return Some((path.to_owned(), uid));
                }
            }
            None
        }
        #[cfg(not(unix))]
        None
    }

    /// Narrows every existing lidguard directory to 0700 and file to 0600 (settings, database
    /// and its journal files, logs, backups, receipts, locks): files from an older lidguard,
    /// or made under a permissive umask, become the user's alone. Returns what changed, for
    /// the log. Backups keep the mode of the file they copy; only their folders are narrowed.
    pub fn tighten_existing(&self) -> Vec<lidguard_files::private::Tightened> {
        let state = &self.state_dir;
        let mut dirs = vec![
            self.config_dir.clone(),
            state.clone(),
            self.runtime_dir.clone(),
        ];
        for sub in ["backups", "installs", "locks"] {
            let dir = state.join(sub);
            dirs.extend(
                std::fs::read_dir(&dir)
                    .into_iter()
                    .flatten()
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.is_dir()),
            );
            dirs.push(dir);
        }
        let database = self.database();
        let with = |suffix: &str| {
            let mut p = database.clone().into_os_string();
            p.push(suffix);
            PathBuf::from(p)
        };
        let log = self.log_file();
        let mut old_log = log.clone().into_os_string();
        old_log.push(".1");
        let files = [
            self.settings_file(),
            database.clone(),
            with("-wal"),
            with("-shm"),
            log,
            PathBuf::from(old_log),
            self.lock_file(),
        ];
        lidguard_files::private::tighten_all(
            dirs.iter().map(PathBuf::as_path),
            files.iter().map(PathBuf::as_path),
        )
    }

    /// Creates the runtime directory private to the user (0700), or checks an existing one:
    /// it must belong to us, and group/other access is removed.
    pub fn ensure_runtime_dir(&self) -> io::Result<()> {
        ensure_private_dir(&self.runtime_dir)
    }
}

/// The pipe name for a runtime directory: a digest of its path (pipe names are flat and
/// limited to 256 characters).
fn pipe_name(runtime_dir: &Path) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(runtime_dir.to_string_lossy().to_lowercase().as_bytes());
    let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
    format!(r"\\.\pipe\lidguard-{hex}")
}

/// The user's home (`what`) from variable `name`, else the system's record of it.
fn home_in(
    var: &impl Fn(&str) -> Option<std::ffi::OsString>,
    name: &str,
    what: &str,
) -> io::Result<PathBuf> {
    var(name)
        .map(PathBuf::from)
        .or_else(std::env::home_dir)
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("cannot find {what} ({name} is unset)"),
            )
        })
}

/// Whether `dir` exists as something the user cannot use as their runtime directory: a link,
/// not a directory, or another user's.
#[cfg(unix)]
fn taken_by_someone_else(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(dir).is_ok_and(|m| !m.is_dir() || m.uid() != current_uid())
}

#[cfg(not(unix))]
fn taken_by_someone_else(_dir: &Path) -> bool {
    false
}

#[cfg(unix)]
fn current_uid() -> u32 {
    rustix::process::getuid().as_raw()
}

#[cfg(not(unix))]
fn current_uid() -> u32 {
    0
}

#[cfg(unix)]
fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    match std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
    {
        Ok(()) => {}
        Err(e) => {
            return Err(io::Error::new(
                e.kind(),
                format!("cannot create the runtime directory {}: {e}", dir.display()),
            ));
        }
    }
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.is_dir() {
        return Err(io::Error::other(format!(
            "{} exists but is not a directory; remove it and try again",
            dir.display()
        )));
    }
    if meta.uid() != current_uid() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "the runtime directory {} belongs to uid {}, not to you (uid {}); refusing to use it",
                dir.display(),
                meta.uid(),
                current_uid()
            ),
        ));
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::ffi::OsString;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: HashMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |name| map.get(name).cloned().filter(|v| !v.is_empty())
    }

    #[test]
    fn lidguard_home_relocates_everything() {
        let p = Places::resolve(env(&[
            ("LIDGUARD_HOME", "/t/h"),
            ("XDG_RUNTIME_DIR", "/run/user/1"),
        ]))
        .unwrap();
        assert_eq!(p.settings_file(), Path::new("/t/h/config/settings.json"));
        assert_eq!(p.database(), Path::new("/t/h/state/lidguard.db"));
        assert_eq!(p.socket(), Path::new("/t/h/run/lidguard.sock"));
        assert!(Places::resolve(env(&[("LIDGUARD_HOME", "relative")])).is_err());
    }

    #[test]
    fn xdg_variables_and_fallbacks() {
        let p = Places::resolve(env(&[
            ("HOME", "/home/u"),
            ("XDG_CONFIG_HOME", "/cfg"),
            ("XDG_STATE_HOME", ""),
            ("XDG_RUNTIME_DIR", "/run/user/1000"),
        ]))
        .unwrap();
        assert_eq!(p.config_dir, Path::new("/cfg/lidguard"));
        assert_eq!(p.state_dir, Path::new("/home/u/.local/state/lidguard"));
        assert_eq!(p.runtime_dir, Path::new("/run/user/1000/lidguard"));

        let p = Places::resolve(env(&[("HOME", "/home/u"), ("XDG_CONFIG_HOME", "rel")])).unwrap();
        assert_eq!(p.config_dir, Path::new("/home/u/.config/lidguard"));
        assert!(p.runtime_dir.starts_with(std::env::temp_dir()));
    }

    /// On a Mac the system's per-user temporary folder decides: a Terminal (`TMPDIR` set by
    /// launchd), an ssh login (no `TMPDIR`) and a job with `XDG_RUNTIME_DIR` meet one daemon.
    #[test]
    fn the_users_own_temporary_folder_wins_over_the_environment() {
        let user_temp = PathBuf::from("/var/folders/7x/k2q9_abc/T");
        let contexts = [
            vec![
                ("HOME", "/Users/alice"),
                ("TMPDIR", "/var/folders/7x/k2q9_abc/T/"),
            ],
            vec![("HOME", "/Users/alice")],
            vec![("HOME", "/Users/alice"), ("TMPDIR", "/tmp")],
            vec![
                ("HOME", "/Users/alice"),
                ("XDG_RUNTIME_DIR", "/Users/alice/.run"),
            ],
        ];
        for vars in contexts {
            let p = Places::resolve_with(env(&vars), Some(user_temp.clone())).unwrap();
            assert_eq!(
                p.socket(),
                user_temp.join("lidguard/lidguard.sock"),
                "{vars:?}"
            );
        }
        // LIDGUARD_HOME still relocates everything.
        let p = Places::resolve_with(env(&[("LIDGUARD_HOME", "/t/h")]), Some(user_temp)).unwrap();
        assert_eq!(p.runtime_dir, Path::new("/t/h/run"));
    }

    #[cfg(unix)]
    #[test]
    fn a_runtime_dir_another_user_took_first_is_not_used() {
        let tmp = tempfile::tempdir().unwrap();
        let temp = tmp.path().join("tmp");
        std::fs::create_dir(&temp).unwrap();
        let vars = [("HOME", "/home/u"), ("TMPDIR", temp.to_str().unwrap())];
        let p = Places::resolve(env(&vars)).unwrap();
        let shared = temp.join(format!("lidguard-{}", current_uid()));
        assert_eq!(p.runtime_dir, shared);
        // Taken first: a file (anyone could), or another user's directory (root can make one).
        std::fs::write(&shared, "").unwrap();
        let p = Places::resolve(env(&vars)).unwrap();
        assert_eq!(
            p.runtime_dir,
            Path::new("/home/u/.local/state/lidguard/run")
        );
        std::fs::remove_file(&shared).unwrap();
        if rustix::process::geteuid().is_root() {
            std::fs::create_dir(&shared).unwrap();
            std::os::unix::fs::chown(&shared, Some(65534), Some(65534)).unwrap();
            let p = Places::resolve(env(&vars)).unwrap();
            assert_eq!(
                p.runtime_dir,
                Path::new("/home/u/.local/state/lidguard/run")
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn runtime_dir_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let places = Places::under(tmp.path());
        let ensured_mode = || {
            places.ensure_runtime_dir().unwrap();
            let meta = std::fs::metadata(&places.runtime_dir).unwrap();
            meta.permissions().mode() & 0o777
        };
        assert_eq!(ensured_mode(), 0o700);
        // A directory opened up by someone is made private again.
        std::fs::set_permissions(&places.runtime_dir, std::fs::Permissions::from_mode(0o755))
            .unwrap();
        assert_eq!(ensured_mode(), 0o700);
    }
}
