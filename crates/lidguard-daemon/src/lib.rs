//! The per-user lidguard runtime (`lidguard run-server`).
//!
//! One daemon per user, guarded by a lock file. It listens on a Unix socket in the user's
//! private runtime directory, accepts only peers with the same uid, and funnels every request
//! into one task that owns the session [`Registry`](lidguard_core::registry::Registry): the
//! registry decides, this crate carries out the effects (logind inhibitors, the SQLite store,
//! the log) and keeps the timers.
//!
//! It exits on SIGTERM/SIGINT (releasing everything first) and on its own
//! `serverRuntimeCleanupDelayMinutes` after the last session is gone.
#![deny(missing_docs)]

mod ask;
mod backups;
mod instance;
mod machine_watch;
mod ntfy;
mod remote;
mod runtime;
mod server;
mod stream;
mod suspend;
mod watch;
mod webhook;

use std::io;

use lidguard_ipc::Places;

pub use backups::{StoreBackups, restore_after_daemon, restore_left_changed};
pub use instance::InstanceLock;
pub use runtime::{HOOK_EVENT, WEBHOOK_ATTEMPT};

/// Why the daemon could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DaemonError {
    /// Another daemon already runs for these places.
    #[error("a lidguard daemon is already running (lock {0} is held)")]
    AlreadyRunning(String),
    /// A directory or the socket could not be set up.
    #[error("{0}")]
    Setup(String),
    /// Anything else from the OS.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Runs the daemon until it is told to stop or has nothing left to do.
pub fn run(places: Places) -> Result<(), DaemonError> {
    places
        .ensure_runtime_dir()
        .map_err(|e| DaemonError::Setup(e.to_string()))?;
    let lock = InstanceLock::acquire(&places.lock_file())?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let result = rt.block_on(runtime::serve(places, lock));
    // Don't wait for stray blocking tasks (a stuck D-Bus call, say) on the way out.
    rt.shutdown_timeout(std::time::Duration::from_millis(500));
    result
}
