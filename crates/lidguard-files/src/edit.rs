//! Editing a file that belongs to the user (an agent's config).
//!
//! - **Where the agent reads it.** A symlink (stow, chezmoi, home-manager) is followed to the
//!   file its chain ends at, and that file is replaced in place: the link stays a link. A link
//!   into a read-only place is refused, naming both.
//! - **As it was.** The new file keeps the old one's permission bits and owner (a 0600 file
//!   stays 0600; run as root for another user, the file stays theirs). A new file is 0600.
//! - **Not read-only files.** A file without its owner's write bit is refused unless forced.
//! - **Atomic, and never over someone else's change.** The bytes go to a temporary file in the
//!   same directory, then a rename; just before it the file is read again and, if it is no
//!   longer what the caller read, nothing is written ([`EditError::ChangedMeanwhile`]).

use std::io;
use std::path::{Path, PathBuf};

use crate::atomic::{self, Attributes};

/// How many links a chain may have before it is treated as a loop.
const MAX_LINKS: usize = 40;

/// A file to edit: the path the agent opens, and the file its bytes are in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The path as the agent names it.
    pub path: PathBuf,
    /// Where the bytes are: `path` itself, or the end of its chain of symlinks (which may not
    /// exist yet, for a link that points at a file to be created).
    pub real: PathBuf,
}

impl Target {
    /// Follows `path` through its symlinks.
    pub fn resolve(path: &Path) -> Result<Target, EditError> {
        let mut current = path.to_path_buf();
        for _ in 0..MAX_LINKS {
            match std::fs::symlink_metadata(&current) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    let dest = std::fs::read_link(&current)
                        .map_err(|e| EditError::io("read the link", &current, e))?;
                    current = match current.parent() {
                        Some(dir) if dest.is_relative() => dir.join(dest),
                        _ => dest,
                    };
                }
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                Err(e) => return Err(EditError::io("look at", &current, e)),
            }
        }
        if std::fs::symlink_metadata(&current).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(EditError::io(
                "follow the links of",
                path,
                io::Error::other(format!("more than {MAX_LINKS} links (a loop?)")),
            ));
        }
        Ok(Target {
            path: path.to_path_buf(),
            real: current,
        })
    }

    /// Whether the agent's path is a link.
    pub fn is_link(&self) -> bool {
        self.path != self.real
    }

    /// `path`, and where a link leads: `a (a link to b)`.
    pub fn describe(&self) -> String {
        if self.is_link() {
            format!(
                "{} (a link to {})",
                self.path.display(),
                self.real.display()
            )
        } else {
            self.path.display().to_string()
        }
    }
}

/// The file as read: its bytes and what it must keep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Current {
    /// The whole file.
    pub bytes: Vec<u8>,
    /// Permission bits (Unix; 0o644 or 0o444 elsewhere).
    pub mode: u32,
    /// Owner and group (Unix).
    pub owner: Option<(u32, u32)>,
}

impl Current {
    /// Its owner cannot write it.
    pub fn is_read_only(&self) -> bool {
        self.mode & 0o200 == 0
    }
}

/// Why a file was not edited. Nothing was changed in any case.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// The file is read-only.
    #[error(
        "{} is read-only (mode {mode:04o}); lidguard does not overwrite a read-only file. \
         Make it writable (chmod u+w {}) or pass --force to edit it anyway (it stays read-only)",
        .path.display(), .real.display()
    )]
    ReadOnlyFile {
        /// The agent's path.
        path: PathBuf,
        /// The file itself.
        real: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The file is in a place nobody may write (a read-only file system, such as a Nix store
    /// that home-manager links configs into).
    #[error(
        "{} is in a read-only place ({source}); lidguard cannot edit it there. If a tool such as \
         home-manager generates this file, add lidguard's entries in that tool's configuration \
         (the `*-hooks` snippet commands print them), or replace the link with a file of your own",
        .what
    )]
    ReadOnlyPlace {
        /// The file, and the link it is reached through.
        what: String,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// Someone changed the file between lidguard's read and its write.
    #[error("{} changed while lidguard was editing it; nothing was written. Run the command again", .path.display())]
    ChangedMeanwhile {
        /// The agent's path.
        path: PathBuf,
    },
    /// Any other I/O failure.
    #[error("cannot {action} {}: {source}", .path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
}

impl EditError {
    fn io(action: &'static str, path: &Path, source: io::Error) -> EditError {
        EditError::Io {
            action,
            path: path.to_owned(),
            source,
        }
    }
}

/// Reads the file; `None` when it does not exist.
pub fn read(target: &Target) -> Result<Option<Current>, EditError> {
    use std::io::Read;
    let mut file = match std::fs::File::open(&target.real) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(EditError::io("read", &target.path, e)),
    };
    let meta = file
        .metadata()
        .map_err(|e| EditError::io("read", &target.path, e))?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.read_to_end(&mut bytes)
        .map_err(|e| EditError::io("read", &target.path, e))?;
    #[cfg(unix)]
    let (mode, owner) = {
        use std::os::unix::fs::MetadataExt;
        (meta.mode() & 0o7777, Some((meta.uid(), meta.gid())))
    };
    #[cfg(not(unix))]
    let (mode, owner) = (
        if meta.permissions().readonly() {
            0o444
        } else {
            0o644
        },
        None,
    );
    Ok(Some(Current { bytes, mode, owner }))
}

/// Whether the file still holds what was read (`None`: still does not exist).
fn unchanged(target: &Target, before: Option<&Current>) -> io::Result<()> {
    let now = match std::fs::read(&target.real) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    if now.as_deref() == before.map(|c| c.bytes.as_slice()) {
        Ok(())
    } else {
        Err(io::Error::other(Changed))
    }
}

/// Marks the error of [`unchanged`].
#[derive(Debug)]
struct Changed;

impl std::fmt::Display for Changed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("changed meanwhile")
    }
}

impl std::error::Error for Changed {}

fn is_changed(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<Changed>())
}

fn is_read_only_place(e: &io::Error) -> bool {
    #[cfg(unix)]
    {
        e.raw_os_error() == Some(rustix::io::Errno::ROFS.raw_os_error())
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

/// Refuses a read-only file unless `force`.
pub fn check_writable(
    target: &Target,
    before: Option<&Current>,
    force: bool,
) -> Result<(), EditError> {
    match before {
        Some(current) if current.is_read_only() && !force => Err(EditError::ReadOnlyFile {
            path: target.path.clone(),
            real: target.real.clone(),
            mode: current.mode,
        }),
        _ => Ok(()),
    }
}

/// Replaces the file's bytes with `bytes`. `before` is what [`read`] gave; the file keeps its
/// mode and owner, or is created as 0600 (with its missing directories as 0700).
pub fn replace(
    target: &Target,
    before: Option<&Current>,
    bytes: &[u8],
    force: bool,
) -> Result<(), EditError> {
    check_writable(target, before, force)?;
    if before.is_none()
        && let Some(dir) = target.real.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        crate::private::ensure_dir(dir).map_err(|e| classify(target, "create the folder of", e))?;
    }
    let attrs = match before {
        Some(c) => Attributes {
            mode: c.mode,
            owner: c.owner,
            readonly: c.is_read_only(),
        },
        None => Attributes {
            mode: crate::private::FILE_MODE,
            ..Attributes::default()
        },
    };
    atomic::replace(&target.real, bytes, attrs, || unchanged(target, before))
        .map_err(|e| classify(target, "write", e))
}

/// What [`delete`] takes away when the agent's path is a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deleting {
    /// The file the link points at (lidguard created it there: the link was dangling before).
    File,
    /// The link only: the agent no longer reads the file, which stays where it is (someone
    /// else's, in a dotfiles repository).
    Link,
}

/// Deletes the file (for a plain path), or for a link what `deleting` says. Returns the file
/// left in place when only a link was removed.
pub fn delete(
    target: &Target,
    before: &Current,
    force: bool,
    deleting: Deleting,
) -> Result<Option<PathBuf>, EditError> {
    check_writable(target, Some(before), force)?;
    unchanged(target, Some(before)).map_err(|e| classify(target, "delete", e))?;
    let (path, kept) = match deleting {
        Deleting::Link if target.is_link() => (&target.path, Some(target.real.clone())),
        _ => (&target.real, None),
    };
    std::fs::remove_file(path).map_err(|e| classify(target, "delete", e))?;
    if let Some(dir) = path.parent() {
        atomic::sync_dir(dir);
    }
    Ok(kept)
}

fn classify(target: &Target, action: &'static str, e: io::Error) -> EditError {
    if is_changed(&e) {
        EditError::ChangedMeanwhile {
            path: target.path.clone(),
        }
    } else if is_read_only_place(&e) {
        EditError::ReadOnlyPlace {
            what: target.describe(),
            source: e,
        }
    } else {
        EditError::io(action, &target.path, e)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    fn mode(path: &Path) -> u32 {
        crate::private::mode_of(path).unwrap()
    }

    /// A file `name` holding `text` with `mode`, resolved and read as an edit would.
    fn existing(name: &str, text: &str, mode: u32) -> (tempfile::TempDir, Target, Current) {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        let target = Target::resolve(&path).unwrap();
        let before = read(&target).unwrap().unwrap();
        (tmp, target, before)
    }

    #[test]
    fn a_rewrite_keeps_mode_and_a_new_file_is_private() {
        let (tmp, target, before) = existing("config.toml", "a = 1\n", 0o640);
        let path = target.path.clone();
        replace(&target, Some(&before), b"a = 2\n", false).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a = 2\n");
        assert_eq!(mode(&path), 0o640);

        let new = Target::resolve(&tmp.path().join("new/dir/hooks.json")).unwrap();
        replace(&new, None, b"{}", false).unwrap();
        assert_eq!(mode(&new.path), 0o600);
        assert_eq!(mode(&tmp.path().join("new")), 0o700);
        let leftovers: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn links_are_edited_in_place_and_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("dotfiles");
        std::fs::create_dir(&repo).unwrap();
        std::fs::write(repo.join("settings.json"), "{}").unwrap();
        let link = tmp.path().join("settings.json");
        symlink("dotfiles/settings.json", &link).unwrap();
        let hop = tmp.path().join("hop.json");
        symlink(&link, &hop).unwrap();
        let target = Target::resolve(&hop).unwrap();
        assert_eq!(target.real, tmp.path().join("dotfiles/settings.json"));
        assert!(target.describe().contains("a link to"));
        let before = read(&target).unwrap().unwrap();
        replace(&target, Some(&before), b"{\"a\": 1}", false).unwrap();
        assert!(hop.is_symlink());
        assert_eq!(
            std::fs::read_to_string(repo.join("settings.json")).unwrap(),
            "{\"a\": 1}"
        );
        // Deleting through a link removes the link only, or the file lidguard created there.
        let before = read(&target).unwrap().unwrap();
        assert_eq!(
            delete(&target, &before, false, Deleting::File).unwrap(),
            None
        );
        assert!(!repo.join("settings.json").exists());
        assert!(std::fs::symlink_metadata(&hop).is_ok(), "the link stays");
        std::fs::write(repo.join("settings.json"), "{}").unwrap();
        let before = read(&target).unwrap().unwrap();
        assert_eq!(
            delete(&target, &before, false, Deleting::Link).unwrap(),
            Some(target.real.clone())
        );
        assert!(!hop.exists() && repo.join("settings.json").exists());

        let looped = tmp.path().join("loop");
        symlink(&looped, &looped).unwrap();
        assert!(Target::resolve(&looped).is_err());
    }

    #[test]
    fn read_only_files_and_concurrent_changes_are_refused() {
        let (_tmp, target, before) = existing("settings.json", "{}", 0o444);
        let path = target.path.clone();
        let err = replace(&target, Some(&before), b"x", false).unwrap_err();
        assert!(matches!(err, EditError::ReadOnlyFile { .. }), "{err}");
        assert!(err.to_string().contains("--force"));
        replace(&target, Some(&before), b"{ }", true).unwrap();
        assert_eq!(mode(&path), 0o444);

        let before = read(&target).unwrap().unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::write(&path, "{\"theirs\": 1}").unwrap();
        let err = replace(&target, Some(&before), b"mine", true).unwrap_err();
        assert!(matches!(err, EditError::ChangedMeanwhile { .. }), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"theirs\": 1}");
    }
}
