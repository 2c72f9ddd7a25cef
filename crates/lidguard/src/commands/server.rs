//! `lidguard run-server`.

use std::process::ExitCode;

use lidguard_daemon::{DaemonError, StartedBy};
use lidguard_ipc::Places;

/// Runs the daemon in the foreground. A second daemon for the same places exits 0 at once.
pub(crate) fn run(places: Places, report_start: bool) -> anyhow::Result<ExitCode> {
    // Beside the daemon's start, so the hook that started it is not kept waiting.
    let for_new_agents = places.clone();
    let new_agents = std::thread::spawn(move || super::setup::hook_new_agents(&for_new_agents));
    let started_by = if report_start {
        StartedBy::Client
    } else {
        StartedBy::Hand
    };
    let result = lidguard_daemon::run(places, started_by);
    // A config edit half done would lose its receipt: the process ends after it.
    let _ = new_agents.join();
    match result {
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
