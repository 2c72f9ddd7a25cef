//! lidguard's own files: its settings (which may hold the webhook secret), database, log,
//! backups of the agents' configs and lock files. Directories are 0700 and files 0600 whatever
//! the umask; ones found more open than that are tightened, and the caller logs it.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

use crate::atomic::{self, Attributes};

/// The mode of lidguard's directories.
pub const DIR_MODE: u32 = 0o700;
/// The mode of lidguard's files.
pub const FILE_MODE: u32 = 0o600;

/// A file or directory whose permissions were narrowed: `old_mode` → 0700 or 0600.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tightened {
    /// The file or directory.
    pub path: std::path::PathBuf,
    /// Its permission bits before.
    pub old_mode: u32,
    /// Its permission bits now.
    pub new_mode: u32,
}

impl std::fmt::Display for Tightened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "tightened the permissions of {} from {:04o} to {:04o} (lidguard's files are for you alone)",
            self.path.display(),
            self.old_mode,
            self.new_mode
        )
    }
}

/// Creates `dir` and its missing parents as 0700; an existing `dir` open to group or others is
/// tightened to 0700 (returned). The parents that already exist are left as they are. `dir`
/// itself is lidguard's own folder: a link planted at its name is refused, never followed.
pub fn ensure_dir(dir: &Path) -> io::Result<Option<Tightened>> {
    refuse_link(dir)?;
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(DIR_MODE);
    }
    builder.create(dir)?;
    tighten(dir, DIR_MODE)
}

/// [`ensure_dir`] for `dir` below lidguard's folder `base` (`state/backups/<tag>` below the
/// state folder): `base` and every folder between it and `dir` are lidguard's own, so each is
/// made one at a time and none may be a link (a link planted at `backups` would otherwise send
/// the copies of the agents' configs, keys included, wherever it points).
pub fn ensure_dir_below(base: &Path, dir: &Path) -> io::Result<Option<Tightened>> {
    let Ok(inside) = dir.strip_prefix(base) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not below {}", dir.display(), base.display()),
        ));
    };
    ensure_dir(base)?;
    let mut path = base.to_path_buf();
    let mut tightened = None;
    for part in inside.components() {
        path.push(part);
        tightened = ensure_dir(&path)?.or(tightened);
    }
    Ok(tightened)
}

/// Refuses `path` when it is a link (it is not followed; a missing path is fine).
fn refuse_link(path: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is a link; lidguard's own folders are never links, and it does not follow \
                 one planted there (remove it, and lidguard makes the folder again)",
                path.display()
            ),
        )),
        _ => Ok(()),
    }
}

/// Narrows `path` (file or directory, not followed through a link) to `limit`: any permission
/// bit outside it is removed. `Ok(None)` when nothing changed or the path does not exist.
pub fn tighten(path: &Path, limit: u32) -> io::Result<Option<Tightened>> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        if meta.file_type().is_symlink() {
            return Ok(None);
        }
        let old_mode = meta.permissions().mode() & 0o7777;
        let new_mode = old_mode & limit;
        if new_mode == old_mode {
            return Ok(None);
        }
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(new_mode))?;
        Ok(Some(Tightened {
            path: path.to_owned(),
            old_mode,
            new_mode,
        }))
    }
    #[cfg(not(unix))]
    {
        let _ = (path, limit);
        Ok(None)
    }
}

/// Tightens each existing path of `files` to 0600 and of `dirs` to 0700; returns what changed.
/// Errors are skipped: a file that cannot be changed is reported by whatever uses it.
pub fn tighten_all<'a>(
    dirs: impl IntoIterator<Item = &'a Path>,
    files: impl IntoIterator<Item = &'a Path>,
) -> Vec<Tightened> {
    let dirs = dirs.into_iter().map(|d| (d, DIR_MODE));
    let files = files.into_iter().map(|f| (f, FILE_MODE));
    dirs.chain(files)
        .filter_map(|(path, limit)| tighten(path, limit).ok().flatten())
        .collect()
}

/// Writes `bytes` to `path` atomically as a 0600 file, creating its directory as 0700.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        ensure_dir(dir)?;
    }
    atomic::replace(
        path,
        bytes,
        Attributes {
            mode: FILE_MODE,
            ..Attributes::default()
        },
        || Ok(()),
    )
}

/// Writes a copy of someone else's file into lidguard's 0700 directory `dir` under `name`,
/// keeping the original's permission bits (a 0600 file stays 0600; nothing is opened wider).
pub fn write_copy(dir: &Path, name: &str, bytes: &[u8], mode: u32) -> io::Result<()> {
    ensure_dir(dir)?;
    atomic::replace(
        &dir.join(name),
        bytes,
        Attributes {
            mode: mode & 0o777,
            ..Attributes::default()
        },
        || Ok(()),
    )
}

/// Opens `path` for appending, creating it as 0600 (and its directory as 0700).
pub fn open_append(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        ensure_dir(dir)?;
    }
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(FILE_MODE).custom_flags(NO_FOLLOW);
    }
    options.open(path)
}

/// `O_NOFOLLOW`: lidguard's own files are never links; one planted at their name is refused
/// rather than followed (a process running as root with the user's `HOME` would otherwise
/// create or append to a file anywhere).
#[cfg(unix)]
pub const NO_FOLLOW: i32 = rustix::fs::OFlags::NOFOLLOW.bits().cast_signed();

/// Creates `path` as an empty 0600 file when it does not exist (so a library that creates
/// files with its own default mode, such as SQLite, finds a private one).
pub fn create_if_missing(path: &Path) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(FILE_MODE).custom_flags(NO_FOLLOW);
    }
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// The permission bits of `path` itself (a link is not followed).
#[cfg(unix)]
pub fn mode_of(path: &Path) -> io::Result<u32> {
    use std::os::unix::fs::PermissionsExt;
    Ok(std::fs::symlink_metadata(path)?.permissions().mode() & 0o7777)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        mode_of(path).unwrap()
    }

    #[test]
    fn new_dirs_and_files_are_private_and_open_ones_are_tightened() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/b");
        assert_eq!(ensure_dir(&dir).unwrap(), None);
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&tmp.path().join("a")), 0o700);
        let file = dir.join("settings.json");
        write(&file, b"{}").unwrap();
        assert_eq!(mode(&file), 0o600);

        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let changed = tighten_all([dir.as_path()], [file.as_path(), &dir.join("missing")]);
        assert_eq!(changed.len(), 2, "{changed:?}");
        assert_eq!(changed[0].old_mode, 0o755);
        assert!(changed[1].to_string().contains("from 0644 to 0600"));
        assert_eq!((mode(&dir), mode(&file)), (0o700, 0o600));
        assert!(tighten_all([dir.as_path()], [file.as_path()]).is_empty());
    }

    /// A link planted where lidguard keeps its own folders is refused, never followed: at the
    /// folder's own name, and at any folder between lidguard's base and it.
    #[test]
    fn links_planted_at_lidguards_folders_are_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let state = tmp.path().join("state");
        ensure_dir(&state).unwrap();
        std::os::unix::fs::symlink(&elsewhere, state.join("backups")).unwrap();
        let tagged = state.join("backups/hooks-claude");
        let err = ensure_dir_below(&state, &tagged).unwrap_err();
        assert!(err.to_string().contains("is a link"), "{err}");
        let err = write_copy(&state.join("backups"), "x", b"key", 0o600).unwrap_err();
        assert!(err.to_string().contains("is a link"), "{err}");
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
        std::fs::remove_file(state.join("backups")).unwrap();
        ensure_dir_below(&state, &tagged).unwrap();
        assert_eq!(mode(&tagged), 0o700);
        assert!(ensure_dir_below(&state, tmp.path()).is_err(), "not below");
    }

    #[test]
    fn a_copy_keeps_the_original_mode_and_appends_are_private() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("backups");
        write_copy(&dir, "x.json", b"secret", 0o640).unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&dir.join("x.json")), 0o640);
        let log = tmp.path().join("log/lidguard.log");
        drop(open_append(&log).unwrap());
        assert_eq!(mode(&log), 0o600);
        let db = tmp.path().join("lidguard.db");
        create_if_missing(&db).unwrap();
        create_if_missing(&db).unwrap();
        assert_eq!(mode(&db), 0o600);

        // A link planted at the log's name is refused, not followed.
        let target = tmp.path().join("elsewhere");
        let planted = tmp.path().join("log/planted.log");
        std::os::unix::fs::symlink(&target, &planted).unwrap();
        assert!(open_append(&planted).is_err());
        assert!(!target.exists());
    }
}
