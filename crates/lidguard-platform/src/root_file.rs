//! A file lidguard owns in a system directory (polkit's rules, macOS's `sudoers.d`): it is
//! lidguard's only when it is a regular file carrying every marker line, it is written through a
//! temporary file in the same directory renamed over it (so readers never see half a file), and
//! it has a fixed mode whatever the umask.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// One managed file.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RootFile<'a> {
    /// The directory it lives in.
    pub(crate) dir: &'a Path,
    /// Its name.
    pub(crate) name: &'a str,
    /// The lines that mark it as lidguard's, each on a line of its own.
    pub(crate) markers: &'a [&'a str],
    /// Its permission bits.
    pub(crate) mode: u32,
}

/// What is at the file's path.
pub(crate) enum Existing {
    /// Nothing (or no directory).
    Absent,
    /// Something that is not lidguard's: no markers, or not a regular file (never followed).
    Foreign,
    /// lidguard's file.
    Ours {
        /// Its content.
        text: String,
        /// Whether its permission bits are the managed ones.
        mode_ok: bool,
    },
}

impl RootFile<'_> {
    /// The file's path.
    pub(crate) fn path(&self) -> PathBuf {
        self.dir.join(self.name)
    }

    /// Looks at the file without following a symlink.
    pub(crate) fn inspect(&self) -> io::Result<Existing> {
        let path = self.path();
        let meta = match fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(e) if is_absent(&e) => return Ok(Existing::Absent),
            Err(e) => return Err(e),
        };
        if !meta.file_type().is_file() {
            return Ok(Existing::Foreign);
        }
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if is_absent(&e) => return Ok(Existing::Absent),
            Err(e) => return Err(e),
        };
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if !has_markers(&text, self.markers) {
            return Ok(Existing::Foreign);
        }
        Ok(Existing::Ours {
            mode_ok: mode_of(&meta).is_none_or(|mode| mode == self.mode),
            text,
        })
    }

    /// Writes `text` atomically (a temporary file in the directory, whose dot name the readers
    /// skip, renamed over the file) with the managed mode. On failure the file is as it was,
    /// and the error says which step failed.
    pub(crate) fn write(&self, text: &str) -> Result<(), (&'static str, io::Error)> {
        lidguard_files::atomic::write(&self.path(), text.as_bytes(), self.mode)
            .map_err(|e| ("write the new file into", e))
    }

    /// Deletes the file; `Ok(false)` when it was not there.
    pub(crate) fn remove(&self) -> io::Result<bool> {
        match fs::remove_file(self.path()) {
            Ok(()) => {
                sync_dir(self.dir);
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }
}

/// Creates `dir` readable by this user alone (0700 on Unix).
pub(crate) fn private_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        fs::DirBuilder::new().mode(0o700).create(dir)
    }
    #[cfg(not(unix))]
    {
        fs::DirBuilder::new().create(dir)
    }
}

/// Whether an error means "nothing there" (including a directory that is a file).
pub(crate) fn is_absent(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// Whether every marker appears as a line of its own.
pub(crate) fn has_markers(text: &str, markers: &[&str]) -> bool {
    markers
        .iter()
        .all(|marker| text.lines().any(|line| line.trim() == *marker))
}

#[cfg(unix)]
fn mode_of(meta: &fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    Some(meta.permissions().mode() & 0o7777)
}

/// Permission bits are not managed off Unix.
#[cfg(not(unix))]
fn mode_of(_meta: &fs::Metadata) -> Option<u32> {
    None
}

/// Flushes the directory entry change to disk; best effort.
#[cfg(unix)]
fn sync_dir(dir: &Path) {
    if let Ok(handle) = fs::File::open(dir) {
        let _ = handle.sync_all();
    }
}

/// Directories cannot be synced this way off Unix.
#[cfg(not(unix))]
fn sync_dir(_dir: &Path) {}
