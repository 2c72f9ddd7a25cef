//! The socket stays the daemon's own.
//!
//! A Unix socket is reached by its name in the runtime folder, and a name can be taken over: a
//! file or a folder put in its place, the socket removed, another program listening there. Then
//! every client reaches the wrong thing, each hook spends its whole budget and `start` waits in
//! vain. The [`Keeper`] watches the folder (inotify, kqueue: no polling, an idle daemon stays
//! asleep) and, when the name no longer leads to the socket the daemon bound, binds it again;
//! when it cannot, or the lock file itself is gone (the folder was removed), the daemon ends so
//! the next client starts one that says why.
//!
//! What is found in the socket's place is never lost: a socket or a link (which hold nothing)
//! is removed; anything else is moved aside next to it, and the log says where.
//!
//! Windows needs none of this: the daemon creates its named pipe as the first instance, and no
//! one else can create one of that name while it lives.

#[cfg(unix)]
pub(crate) use unix::{Keeper, bind};

#[cfg(windows)]
pub(crate) use windows::Keeper;

/// What a look at the socket's name found (`L`: the listener).
#[cfg_attr(
    windows,
    expect(
        dead_code,
        reason = "the named pipe needs no keeper: no Kept is ever made"
    )
)]
pub(crate) enum Kept<L> {
    /// The name still leads to the daemon's socket.
    Ours,
    /// It did not; this is the socket bound again in its place.
    Rebound(L),
    /// It cannot be the daemon's any more: the daemon ends, for this reason.
    Lost(String),
}

#[cfg(unix)]
mod unix {
    use std::io;
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    use std::path::{Path, PathBuf};

    use notify::Watcher;
    use tokio::sync::mpsc;

    use super::Kept;

    /// The daemon's listener.
    type Listener = tokio::net::UnixListener;

    /// The longest socket path the OS takes (`sun_path` less its terminating NUL): 107 bytes
    /// on Linux, 103 on macOS and the BSDs.
    pub(crate) const MAX_SOCKET_PATH: usize =
        if cfg!(any(target_os = "linux", target_os = "android")) {
            107
        } else {
            103
        };

    /// Binds the socket at `path`, first clearing what is in its place. Only the lock holder
    /// calls this, so whatever is there is not a live daemon's.
    pub(crate) fn bind(path: &Path) -> io::Result<Listener> {
        use std::os::unix::fs::PermissionsExt;
        check_socket_path(path)?;
        clear(path)?;
        let listener = tokio::net::UnixListener::bind(path)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        Ok(listener)
    }

    /// Refuses, with what to do, a socket path the OS would reject with a bare "invalid
    /// argument".
    fn check_socket_path(path: &Path) -> io::Result<()> {
        let len = path.as_os_str().len();
        if len > MAX_SOCKET_PATH {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "the socket path is {len} bytes, longer than the {MAX_SOCKET_PATH} this \
                     system allows; point LIDGUARD_HOME (or XDG_RUNTIME_DIR) at a shorter \
                     directory"
                ),
            ));
        }
        Ok(())
    }

    /// Makes `path` free: removes a socket or a link (neither holds anything); moves anything
    /// else aside. Even an empty file may be one being written (`echo x > name` creates it
    /// empty first), and what someone may want back is never deleted.
    fn clear(path: &Path) -> io::Result<()> {
        let meta = match std::fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        let kind = meta.file_type();
        if !(kind.is_socket() || kind.is_symlink()) {
            return move_aside(path, &meta);
        }
        std::fs::remove_file(path)?;
        tracing::info!(socket = %path.display(), found = what(&meta), "removed what was in the socket's place");
        Ok(())
    }

    /// Renames `path` to a free name beside it (`<name>.found-<unix time>[-n]`).
    fn move_aside(path: &Path, meta: &std::fs::Metadata) -> io::Result<()> {
        let stamp = jiff::Timestamp::now().as_second();
        let aside = (1..=9)
            .map(|n| {
                let mut name = path.as_os_str().to_owned();
                name.push(format!(".found-{stamp}"));
                if n > 1 {
                    name.push(format!("-{n}"));
                }
                PathBuf::from(name)
            })
            .find(|p| std::fs::symlink_metadata(p).is_err())
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!(
                        "{} is {}, not lidguard's socket, and no name beside it is free to \
                         move it to: move it away",
                        path.display(),
                        what(meta)
                    ),
                )
            })?;
        #[allow(
            clippy::disallowed_methods,
            reason = "moves a stranger's file out of the socket's place inside lidguard's \
                      private runtime folder; nothing is written"
        )]
        std::fs::rename(path, &aside)?;
        tracing::warn!(socket = %path.display(), found = what(meta), moved_to = %aside.display(), "moved what was in the socket's place aside");
        Ok(())
    }

    /// What a file is, for people.
    fn what(meta: &std::fs::Metadata) -> &'static str {
        let kind = meta.file_type();
        if kind.is_socket() {
            "a socket"
        } else if kind.is_symlink() {
            "a link"
        } else if kind.is_dir() {
            "a folder"
        } else if kind.is_file() {
            "a file"
        } else {
            "a special file"
        }
    }

    /// How often a socket taken again in the moment it is cleared is cleared and bound anew.
    const BIND_TRIES: u32 = 5;

    /// Which file a name leads to (the name itself, a link not followed).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Identity {
        dev: u64,
        ino: u64,
    }

    fn identity(path: &Path) -> Option<Identity> {
        std::fs::symlink_metadata(path).ok().map(|m| Identity {
            dev: m.dev(),
            ino: m.ino(),
        })
    }

    /// Watches the runtime folder for the socket's and the lock's names.
    pub(crate) struct Keeper {
        socket: PathBuf,
        lock: PathBuf,
        bound: Option<Identity>,
        locked: Option<Identity>,
        changes: mpsc::UnboundedReceiver<()>,
        _watcher: notify::RecommendedWatcher,
    }

    impl Keeper {
        /// The keeper of a daemon's socket: none for the one systemd passed (systemd keeps
        /// its file); none, said in the log, where the folder cannot be watched.
        pub(crate) fn for_daemon(socket: &Path, lock: &Path, activated: bool) -> Option<Keeper> {
            if activated {
                return None;
            }
            Keeper::watch(socket, lock)
                .inspect_err(|e| tracing::warn!(error = %e, "cannot watch the runtime folder; a replaced socket goes unnoticed"))
                .ok()
        }

        /// Starts watching, the socket just bound at `socket` and the lock held at `lock`.
        pub(crate) fn watch(socket: &Path, lock: &Path) -> notify::Result<Keeper> {
            let folder = socket.parent().unwrap_or(Path::new("/")).to_path_buf();
            let names = [socket.to_path_buf(), lock.to_path_buf(), folder.clone()];
            let (to, changes) = mpsc::unbounded_channel();
            let mut watcher =
                notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                    // Other files of the folder (the tray's lock) are not the socket's business;
                    // an event without paths (a rescan) may be.
                    let relevant = event.is_ok_and(|e| {
                        e.paths.is_empty() || e.paths.iter().any(|p| names.contains(p))
                    });
                    if relevant {
                        let _ = to.send(());
                    }
                })?;
            watcher.watch(&folder, notify::RecursiveMode::NonRecursive)?;
            Ok(Keeper {
                socket: socket.to_path_buf(),
                lock: lock.to_path_buf(),
                bound: identity(socket),
                locked: identity(lock),
                changes,
                _watcher: watcher,
            })
        }

        /// Waits until something happened to the watched names.
        pub(crate) async fn changed(&mut self) {
            if self.changes.recv().await.is_none() {
                // The watcher is gone (it never drops its sender while kept): wait for ever.
                std::future::pending::<()>().await;
            }
            while self.changes.try_recv().is_ok() {}
        }

        /// Looks at the names: still the daemon's, bound again, or lost.
        pub(crate) fn check(&mut self) -> Kept<Listener> {
            if self.locked.is_none() || identity(&self.lock) != self.locked {
                return Kept::Lost(format!(
                    "the lock file {} was removed or replaced (the runtime folder was cleaned?)",
                    self.lock.display()
                ));
            }
            if self.bound.is_some() && identity(&self.socket) == self.bound {
                return Kept::Ours;
            }
            // Something may be appearing in the place while it is cleared (the file that
            // replaces a removed socket): clear and bind again, a few times.
            let mut tries = 1;
            loop {
                match bind(&self.socket) {
                    Ok(listener) => {
                        self.bound = identity(&self.socket);
                        tracing::warn!(socket = %self.socket.display(), "the socket was replaced or removed; bound it again");
                        return Kept::Rebound(listener);
                    }
                    Err(e) if e.kind() == io::ErrorKind::AddrInUse && tries < BIND_TRIES => {
                        tries += 1;
                    }
                    Err(e) => {
                        return Kept::Lost(format!(
                            "the socket {} was replaced and cannot be bound again: {e}",
                            self.socket.display()
                        ));
                    }
                }
            }
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::FileTypeExt;
    use std::path::Path;
    use std::time::Duration;

    use super::unix::MAX_SOCKET_PATH;
    use super::*;

    fn write(path: &Path, bytes: &[u8]) {
        lidguard_files::atomic::write(path, bytes, 0o600).unwrap();
    }

    /// Files beside `socket` whose names start with its own plus `.found-`.
    fn moved_aside(socket: &Path) -> Vec<std::path::PathBuf> {
        let prefix = format!("{}.found-", socket.file_name().unwrap().to_string_lossy());
        std::fs::read_dir(socket.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(&prefix)
            })
            .collect()
    }

    #[tokio::test]
    async fn a_socket_path_too_long_for_the_os_says_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let long = dir.path().join("d".repeat(120)).join("lidguard.sock");
        let err = bind(&long).map(drop).unwrap_err();
        assert!(err.to_string().contains("point LIDGUARD_HOME"), "{err}");
        // At the limit it binds.
        let base = dir.path().as_os_str().len() + 1;
        let fits = dir.path().join("s".repeat(MAX_SOCKET_PATH - base));
        assert_eq!(fits.as_os_str().len(), MAX_SOCKET_PATH);
        bind(&fits).unwrap();
    }

    #[tokio::test]
    async fn what_is_in_the_sockets_place_is_removed_when_a_link_and_moved_aside_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("lidguard.sock");
        let elsewhere = dir.path().join("target");
        write(&elsewhere, b"kept");

        // A link: gone, its target untouched.
        std::os::unix::fs::symlink(&elsewhere, &socket).unwrap();
        bind(&socket).unwrap();
        assert_eq!(std::fs::read(&elsewhere).unwrap(), b"kept");
        assert!(moved_aside(&socket).is_empty());

        // A folder with something in it: moved aside whole.
        std::fs::remove_file(&socket).unwrap();
        std::fs::create_dir(&socket).unwrap();
        write(&socket.join("inside"), b"mine");
        bind(&socket).unwrap();
        let aside = moved_aside(&socket);
        assert_eq!(aside.len(), 1, "{aside:?}");
        assert_eq!(std::fs::read(aside[0].join("inside")).unwrap(), b"mine");
        assert!(
            std::fs::symlink_metadata(&socket)
                .unwrap()
                .file_type()
                .is_socket()
        );
    }

    /// A daemon's runtime folder: the lock, the socket bound, its keeper watching.
    struct Daemon {
        dir: tempfile::TempDir,
        _listener: tokio::net::UnixListener,
        keeper: Keeper,
    }

    impl Daemon {
        fn start() -> Daemon {
            let dir = tempfile::tempdir().unwrap();
            let (socket, lock) = (
                dir.path().join("lidguard.sock"),
                dir.path().join("lidguard.lock"),
            );
            write(&lock, b"1\n");
            let _listener = bind(&socket).unwrap();
            let keeper = Keeper::watch(&socket, &lock).unwrap();
            Daemon {
                dir,
                _listener,
                keeper,
            }
        }

        fn path(&self, name: &str) -> std::path::PathBuf {
            self.dir.path().join(name)
        }

        /// What the keeper sees once the folder changed.
        async fn look(&mut self) -> Kept<tokio::net::UnixListener> {
            tokio::time::timeout(Duration::from_secs(5), self.keeper.changed())
                .await
                .expect("the folder's change is seen");
            self.keeper.check()
        }
    }

    #[tokio::test]
    async fn a_socket_replaced_by_a_file_is_bound_again_and_the_file_kept() {
        let mut daemon = Daemon::start();
        let socket = daemon.path("lidguard.sock");
        assert!(matches!(daemon.keeper.check(), Kept::Ours));

        std::fs::remove_file(&socket).unwrap();
        write(&socket, b"someone's notes");
        let Kept::Rebound(fresh) = daemon.look().await else {
            panic!("the socket is bound again");
        };
        // The new socket answers, and what was in its place is kept beside it.
        let client = tokio::net::UnixStream::connect(&socket);
        let (connected, accepted) = tokio::join!(client, fresh.accept());
        connected.unwrap();
        accepted.unwrap();
        let aside = moved_aside(&socket);
        assert_eq!(std::fs::read(&aside[0]).unwrap(), b"someone's notes");
        assert!(matches!(daemon.keeper.check(), Kept::Ours));
    }

    #[tokio::test]
    async fn a_removed_lock_ends_the_daemon() {
        let mut daemon = Daemon::start();
        std::fs::remove_file(daemon.path("lidguard.lock")).unwrap();
        let Kept::Lost(why) = daemon.look().await else {
            panic!("a lost lock is not kept");
        };
        assert!(why.contains("lidguard.lock"), "{why}");
    }
}

#[cfg(windows)]
mod windows {
    /// Nothing to keep on Windows (see the module's comment): never constructed.
    pub(crate) enum Keeper {}

    impl Keeper {
        pub(crate) fn for_daemon(
            _: &std::path::Path,
            _: &std::path::Path,
            _: bool,
        ) -> Option<Keeper> {
            None
        }

        pub(crate) async fn changed(&mut self) {
            match *self {}
        }

        pub(crate) fn check<L>(&mut self) -> super::Kept<L> {
            match *self {}
        }
    }
}
