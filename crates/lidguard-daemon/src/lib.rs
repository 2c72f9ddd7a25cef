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

mod ask;
mod backups;
mod instance;
mod leases;
mod machine_watch;
mod ntfy;
mod remote;
mod runtime;
mod server;
mod socket_keeper;
mod stderr;
mod stream;
mod suspend;
mod watch;
mod webhook;

use std::io;

use lidguard_ipc::Places;

pub use backups::{StoreBackups, restore_after_daemon, restore_left_changed};
pub use instance::InstanceLock;
pub use leases::RELAY_GRACE;
pub use ntfy::probe as probe_phone;
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

/// Raises the soft limit of open descriptors to the hard one: every connection, follower and
/// waiting hook holds one, and the usual soft limit of 1,024 is reached by a burst of idle
/// connections long before the hard limit (Rust's runtime already does this on macOS).
fn raise_descriptor_limit() {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
        let limit = getrlimit(Resource::Nofile);
        if limit.current != limit.maximum {
            let raised = Rlimit {
                current: limit.maximum,
                maximum: limit.maximum,
            };
            match setrlimit(Resource::Nofile, raised) {
                Ok(()) => {
                    tracing::debug!(from = ?limit.current, to = ?limit.maximum, "raised the open-descriptor limit")
                }
                Err(e) => tracing::warn!(error = %e, "cannot raise the open-descriptor limit"),
            }
        }
    }
}

/// Who started the daemon, which decides what becomes of its stderr.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartedBy {
    /// A person or a service manager: stderr stays as it is.
    Hand,
    /// A client (`run-server --report-start`): stderr is the client's pipe, where a failed
    /// start is said; once the daemon listens, `/dev/null` takes its place, so the client's
    /// reader ends and nothing later waits on a pipe no one reads.
    Client,
}

impl StartedBy {
    /// Who started the daemon, for its `daemon-started` event.
    pub(crate) fn describe(self, socket_activated: bool) -> &'static str {
        match (self, socket_activated) {
            (_, true) => "started by the service manager's socket",
            (StartedBy::Client, false) => "started on demand by a lidguard command or hook",
            (StartedBy::Hand, false) => "started by hand or by a service",
        }
    }
}

/// Runs the daemon until it is told to stop or has nothing left to do.
pub fn run(places: Places, started_by: StartedBy) -> Result<(), DaemonError> {
    raise_descriptor_limit();
    places
        .ensure_runtime_dir()
        .map_err(|e| DaemonError::Setup(e.to_string()))?;
    let lock = InstanceLock::acquire(&places.lock_file())?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let result = rt.block_on(runtime::serve(places, lock, started_by));
    // Don't wait for stray blocking tasks (a stuck D-Bus call, say) on the way out.
    rt.shutdown_timeout(std::time::Duration::from_millis(500));
    result
}
