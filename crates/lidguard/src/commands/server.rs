//! `lidguard run-server`.

use std::process::ExitCode;

use lidguard_daemon::DaemonError;
use lidguard_ipc::Places;

/// Runs the daemon in the foreground. A second daemon for the same places exits 0 at once.
pub(crate) fn run(places: Places) -> anyhow::Result<ExitCode> {
    match lidguard_daemon::run(places) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(DaemonError::AlreadyRunning(lock)) => {
            tracing::info!(%lock, "another daemon is running; exiting");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            tracing::error!(error = %e, "daemon failed");
            Err(e.into())
        }
    }
}
