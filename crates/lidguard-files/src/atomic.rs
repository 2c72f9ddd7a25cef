//! The one atomic replace: a new file next to the destination, written, given its mode and
//! owner, synced, then renamed over the destination, and the directory synced.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// What the new file gets.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Attributes {
    /// Permission bits (Unix; ignored elsewhere).
    #[cfg_attr(not(unix), allow(dead_code))]
    pub(crate) mode: u32,
    /// Owner and group to give the file when they differ from the new file's (Unix).
    #[cfg_attr(not(unix), allow(dead_code))]
    pub(crate) owner: Option<(u32, u32)>,
    /// Keep the file read-only (Windows' only permission bit; on Unix it is in `mode`).
    #[cfg_attr(unix, allow(dead_code))]
    pub(crate) readonly: bool,
}

/// Writes `bytes` to `path` atomically as a file with permission bits `mode` (Unix; ignored
/// elsewhere), whatever the umask: a reader sees the old file or the new one, never part of
/// one. The directory must exist.
pub fn write(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let attrs = Attributes {
        mode: mode & 0o7777,
        ..Attributes::default()
    };
    replace(path, bytes, attrs, || Ok(()))
}

/// Creates the temporary file in `dir` (private until its attributes are set).
pub(crate) fn temp_file(dir: &Path, name: &str) -> io::Result<(File, PathBuf)> {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.lidguard-{}-{n}.tmp", std::process::id()));
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    Ok((options.open(&tmp)?, tmp))
}

/// Writes `bytes` to `path` atomically with `attrs`. `check` runs just before the rename (the
/// caller's last look at the destination); an error from it leaves the destination as it was.
pub(crate) fn replace(
    path: &Path,
    bytes: &[u8],
    attrs: Attributes,
    check: impl FnOnce() -> io::Result<()>,
) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (mut file, tmp) = temp_file(dir, &name)?;
    let result = (|| {
        file.write_all(bytes)?;
        set_attributes(&file, attrs)?;
        file.sync_all()?;
        drop(file);
        check()?;
        #[allow(clippy::disallowed_methods, reason = "this is the one atomic rename")]
        std::fs::rename(&tmp, path)?;
        sync_dir(dir);
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(unix)]
fn set_attributes(file: &File, attrs: Attributes) -> io::Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    if let Some((uid, gid)) = attrs.owner {
        let meta = file.metadata()?;
        if (meta.uid(), meta.gid()) != (uid, gid) {
            rustix::fs::fchown(
                file,
                Some(rustix::fs::Uid::from_raw(uid)),
                Some(rustix::fs::Gid::from_raw(gid)),
            )?;
        }
    }
    // After the owner: chown clears set-id bits, and the mode must be exactly the original.
    file.set_permissions(std::fs::Permissions::from_mode(attrs.mode & 0o7777))
}

#[cfg(not(unix))]
fn set_attributes(file: &File, attrs: Attributes) -> io::Result<()> {
    if attrs.readonly {
        let mut perms = file.metadata()?.permissions();
        perms.set_readonly(true);
        file.set_permissions(perms)?;
    }
    Ok(())
}

/// Makes a rename in `dir` durable (best effort: not every file system allows it).
pub(crate) fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}
