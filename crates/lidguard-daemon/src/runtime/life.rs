//! The daemon's own life: since when it runs, the settings file's problem, and when it stops
//! (on a signal, or idle; an idle exit waits while someone follows the stream).

use std::time::Duration;

use jiff::Timestamp;
use lidguard_core::settings::{Os, Settings};
use lidguard_ipc::Places;
use lidguard_ipc::protocol::{Outcome, Response};

/// Deadlines are wall-clock times; sleeping at most this long re-reads the clock often enough
/// that a suspend/resume (which stops the monotonic clock) never delays a timer for long.
const MAX_SLEEP: Duration = Duration::from_secs(30);

/// Why an idle daemon stops.
const IDLE_EXIT: &str = "idle exit: no session for the cleanup delay";

pub(super) struct Life {
    pub(super) started_at: Timestamp,
    /// Why the settings file is unusable (the defaults run meanwhile).
    pub(super) settings_error: Option<String>,
    pub(super) exit: bool,
    /// Why the daemon stops, once it does (for the `daemon-stopped` event).
    pub(super) stop_reason: Option<String>,
    /// The idle exit came while someone follows the stream: it happens when they leave.
    exit_deferred: bool,
}

impl Life {
    pub(super) fn new(settings_error: Option<String>) -> Life {
        Life {
            started_at: Timestamp::now(),
            settings_error,
            exit: false,
            stop_reason: None,
            exit_deferred: false,
        }
    }

    /// The registry's idle exit: now, or when the last of `followers` leaves.
    pub(super) fn idle_exit(&mut self, followers: usize) {
        if followers > 0 {
            tracing::info!("idle exit postponed: the event stream has followers");
            self.exit_deferred = true;
        } else {
            self.stop(IDLE_EXIT);
        }
    }

    /// The loop ends, for `why`.
    pub(super) fn stop(&mut self, why: &str) {
        self.exit = true;
        self.stop_reason.get_or_insert_with(|| why.to_owned());
    }

    /// Someone asked the daemon to stop (`daemon-stop`): the loop ends after this answer.
    pub(super) fn shutdown_asked(&mut self) -> Response {
        tracing::info!("asked to stop: shutting down");
        self.stop("asked to stop (`lidguard daemon-stop`)");
        Response::ok(Outcome::Done, "the daemon is stopping")
    }

    /// Work came back: the idle exit is the registry's to schedule again.
    pub(super) fn busy(&mut self) {
        self.exit_deferred = false;
    }

    /// A follower went away: an idle exit it postponed happens now, if still due (`idle`:
    /// no session and no pending suspend).
    pub(super) fn follower_left(&mut self, followers: usize, idle: bool) {
        if self.exit_deferred && followers == 0 && idle {
            tracing::info!("the last follower left: idle exit");
            self.stop(IDLE_EXIT);
        }
    }
}

/// How long the loop may sleep: until the next deadline or retry, and never long.
pub(super) fn sleep_for(deadline: Option<Timestamp>, retry: Option<Duration>) -> Duration {
    let until_deadline = deadline.map(|deadline| {
        let secs = deadline.duration_since(Timestamp::now()).as_secs_f64();
        Duration::try_from_secs_f64(secs.max(0.0)).unwrap_or(MAX_SLEEP)
    });
    [Some(MAX_SLEEP), until_deadline, retry]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(MAX_SLEEP)
}

/// The settings file, or the defaults with why the file is unusable.
pub(super) fn load_settings(places: &Places) -> (Settings, Option<String>) {
    let os = Os::current();
    match lidguard_ipc::settings_file::load_or_default(&places.settings_file(), os) {
        Ok(settings) => (settings, None),
        Err(e) => {
            tracing::error!(error = %e, "settings file unusable; running with defaults until it is fixed");
            (Settings::defaults_for(os), Some(e.to_string()))
        }
    }
}
