//! An advisory lock held for one read-modify-write, so two lidguard processes (two
//! `hook-install`s, the CLI's `settings` and the MCP server's `update_settings`) never lose
//! each other's change. The lock is a separate 0600 file: the file being edited is replaced by
//! a rename, which a lock on the file itself would not survive.

use std::fs::{File, TryLockError};
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a writer waits for another before giving up: far longer than any edit takes.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(10);

/// A held lock; dropping it releases the lock.
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

/// Takes the exclusive lock on `path` (created as a private file), waiting up to `wait`.
pub fn acquire(path: &Path, wait: Duration) -> io::Result<Lock> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::private::ensure_dir(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .mode(crate::private::FILE_MODE)
            .custom_flags(crate::private::NO_FOLLOW);
    }
    let file = options.open(path)?;
    let deadline = Instant::now() + wait;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(Lock { _file: file }),
            Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(TryLockError::WouldBlock) => {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "another lidguard process has held the lock {} for {} s; try again when it is done",
                        path.display(),
                        wait.as_secs()
                    ),
                ));
            }
            Err(TryLockError::Error(e)) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_waits_then_gives_up() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("locks/x.lock");
        let held = acquire(&path, DEFAULT_WAIT).unwrap();
        let started = Instant::now();
        let err = acquire(&path, Duration::from_millis(50)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert!(started.elapsed() >= Duration::from_millis(50));
        drop(held);
        acquire(&path, Duration::from_millis(50)).unwrap();
    }
}
