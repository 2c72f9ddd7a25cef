//! One daemon per user: an exclusive lock on a file in the runtime directory.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::DaemonError;

/// Held for the daemon's lifetime; the OS drops the lock if the process dies.
#[derive(Debug)]
pub struct InstanceLock {
    _file: File,
    path: PathBuf,
}

impl InstanceLock {
    /// Takes the lock or reports that another daemon holds it.
    pub fn acquire(path: &Path) -> Result<InstanceLock, DaemonError> {
        Self::take(path, false)
    }

    /// Waits (blocked in the OS, no polling) until no daemon holds the lock, then takes it.
    pub fn wait(path: &Path) -> Result<InstanceLock, DaemonError> {
        Self::take(path, true)
    }

    fn take(path: &Path, wait: bool) -> Result<InstanceLock, DaemonError> {
        let mut options = std::fs::OpenOptions::new();
        options.create(true).truncate(false).write(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            // A link planted at the lock's name is refused (ELOOP), never followed.
            options
                .mode(lidguard_files::private::FILE_MODE)
                .custom_flags(lidguard_files::private::NO_FOLLOW);
        }
        let mut file = options.open(path).map_err(|e| {
            DaemonError::Setup(format!(
                "cannot open the lock file {}: {e}; check that its folder is yours and writable",
                path.display()
            ))
        })?;
        if wait {
            file.lock()?;
        } else {
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(DaemonError::AlreadyRunning(path.display().to_string()));
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(e.into()),
            }
        }
        // The pid is only for humans looking at the file.
        file.set_len(0)?;
        writeln!(file, "{}", std::process::id())?;
        Ok(InstanceLock {
            _file: file,
            path: path.to_owned(),
        })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
