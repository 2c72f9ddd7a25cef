//! Files in a directory another user controls, written by root (the launchd job in a user's
//! `~/Library/LaunchAgents`): every step is taken relative to a directory descriptor opened
//! without following links, new files are created exclusively and changed through their own
//! descriptor, and the result is renamed into place. A link the owner plants can then only make
//! the write fail, never send it somewhere else.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags, fchmod, fchown, mkdirat, openat, renameat, unlinkat};
use rustix::io::Errno;

/// Who a created file or directory is given to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner {
    /// The user id.
    pub uid: u32,
    /// The group id.
    pub gid: u32,
}

/// A directory below a trusted root, held open.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

const DIR_FLAGS: OFlags = OFlags::DIRECTORY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::RDONLY)
    .union(OFlags::CLOEXEC);

impl Dir {
    /// Opens `root` (trusted: an account's home as the system records it) and then each of
    /// `components` below it without following a link: a link anywhere below `root` is an error.
    /// With `create`, missing components are made (0755) and given to that owner.
    pub fn open(root: &Path, components: &[&str], create: Option<Owner>) -> io::Result<Dir> {
        let mut fd = rustix::fs::open(
            root,
            OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let mut path = root.to_owned();
        for name in components {
            path.push(name);
            let next = match openat(&fd, *name, DIR_FLAGS, Mode::empty()) {
                Ok(next) => next,
                Err(Errno::NOENT) if create.is_some() => {
                    mkdirat(&fd, *name, Mode::from_raw_mode(0o755))?;
                    let next = openat(&fd, *name, DIR_FLAGS, Mode::empty())?;
                    if let Some(owner) = create {
                        give(&next, owner)?;
                    }
                    next
                }
                Err(e) => return Err(refused(&path, e)),
            };
            fd = next;
        }
        Ok(Dir { fd, path })
    }

    /// The directory's path, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads `name`; `Ok(None)` when it is missing. A link is an error.
    pub fn read(&self, name: &str) -> io::Result<Option<Vec<u8>>> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match openat(&self.fd, name, flags, Mode::empty()) {
            Ok(fd) => {
                let mut bytes = Vec::new();
                File::from(fd).read_to_end(&mut bytes)?;
                Ok(Some(bytes))
            }
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(refused(&self.path.join(name), e)),
        }
    }

    /// Replaces `name` with `bytes`, as a file of `mode` given to `owner`: written to a new
    /// temporary name (created exclusively, never followed), synced, then renamed over `name`
    /// (a link there is replaced, not followed).
    pub fn replace(
        &self,
        name: &str,
        bytes: &[u8],
        mode: u32,
        owner: Option<Owner>,
    ) -> io::Result<()> {
        let temp = format!(".{name}.lidguard-{}", std::process::id());
        // A leftover of ours, or a name planted to be followed: removed, never opened.
        match unlinkat(&self.fd, temp.as_str(), AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(e) => return Err(e.into()),
        }
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = openat(
            &self.fd,
            temp.as_str(),
            flags,
            Mode::from_raw_mode(mode as rustix::fs::RawMode),
        )?;
        let written = (|| {
            fchmod(&fd, Mode::from_raw_mode(mode as rustix::fs::RawMode))?;
            if let Some(owner) = owner {
                give(&fd, owner)?;
            }
            let mut file = File::from(fd);
            file.write_all(bytes)?;
            file.sync_all()?;
            renameat(&self.fd, temp.as_str(), &self.fd, name)?;
            Ok::<(), io::Error>(())
        })();
        if written.is_err() {
            let _ = unlinkat(&self.fd, temp.as_str(), AtFlags::empty());
        }
        written
    }

    /// Removes `name` (a link is removed itself); `Ok(false)` when it was not there.
    pub fn remove(&self, name: &str) -> io::Result<bool> {
        match unlinkat(&self.fd, name, AtFlags::empty()) {
            Ok(()) => Ok(true),
            Err(Errno::NOENT) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
}

fn give(fd: &OwnedFd, owner: Owner) -> io::Result<()> {
    fchown(
        fd,
        Some(rustix::fs::Uid::from_raw(owner.uid)),
        Some(rustix::fs::Gid::from_raw(owner.gid)),
    )?;
    Ok(())
}

/// A link where a directory or file was expected says so.
fn refused(path: &Path, e: Errno) -> io::Error {
    if e == Errno::LOOP || e == Errno::NOTDIR {
        io::Error::other(format!(
            "{} is a link or not a directory; lidguard does not follow links it did not make \
             here (move it away and run the command again)",
            path.display()
        ))
    } else {
        e.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    #[test]
    fn writes_below_a_root_and_replaces_links_instead_of_following_them() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir(&home).unwrap();
        let outside = tmp.path().join("outside");
        std::fs::write(&outside, "precious").unwrap();

        let dir = Dir::open(
            &home,
            &["Library", "LaunchAgents"],
            Some(Owner { uid: 0, gid: 0 }),
        )
        .unwrap();
        let job = home.join("Library/LaunchAgents/job.plist");
        // Planted: the final name and the temporary name both point outside.
        std::os::unix::fs::symlink(&outside, &job).unwrap();
        let temp = home.join(format!(
            "Library/LaunchAgents/.job.plist.lidguard-{}",
            std::process::id()
        ));
        std::os::unix::fs::symlink(&outside, &temp).unwrap();
        dir.replace("job.plist", b"<plist/>", 0o644, None).unwrap();
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious");
        let meta = std::fs::symlink_metadata(&job).unwrap();
        assert!(meta.is_file());
        assert_eq!(meta.permissions().mode() & 0o777, 0o644);
        assert_eq!(meta.uid(), rustix::process::geteuid().as_raw());
        assert!(!temp.exists() && std::fs::symlink_metadata(&temp).is_err());
        assert_eq!(dir.read("job.plist").unwrap().unwrap(), b"<plist/>");

        // A link in place of a directory is refused, and a linked file is not read.
        std::fs::remove_dir_all(home.join("Library")).unwrap();
        std::os::unix::fs::symlink(tmp.path(), home.join("Library")).unwrap();
        let err = Dir::open(&home, &["Library", "LaunchAgents"], None).unwrap_err();
        assert!(err.to_string().contains("is a link"), "{err}");
        let top = Dir::open(tmp.path(), &[], None).unwrap();
        std::os::unix::fs::symlink(&outside, tmp.path().join("linked")).unwrap();
        assert!(top.read("linked").is_err());
        assert!(top.remove("linked").unwrap(), "the link itself is removed");
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious");
    }
}
