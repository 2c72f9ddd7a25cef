//! The daemon as its front ends ask it things — the CLI, the tray, live-status and the MCP
//! server: one method per question, each answer typed, a refusal an error of its own.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use lidguard_core::settings::Settings;

use super::{ClientError, EventLines, follow, request_starting_daemon};
use crate::places::Places;
use crate::protocol::{Request, Response, Status};
use crate::stream::{Replay, StreamFilter};

/// How long a front end waits for the daemon's answer.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a front end that starts the daemon gives it to listen.
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// This user's daemon, reached through [`Places`]; with [`Daemon::starting_with`], started
/// (`exe run-server`) when a request finds none.
#[derive(Clone, Debug)]
pub struct Daemon {
    places: Places,
    timeout: Duration,
    start_with: Option<PathBuf>,
}

impl Daemon {
    /// The daemon at `places`, asked with the usual timeout, never started.
    pub fn new(places: &Places) -> Daemon {
        Daemon {
            places: places.clone(),
            timeout: REQUEST_TIMEOUT,
            start_with: None,
        }
    }

    /// The same, started with `exe run-server` when none runs.
    #[must_use]
    pub fn starting_with(mut self, exe: PathBuf) -> Daemon {
        self.start_with = Some(exe);
        self
    }

    /// The same, waiting at most `timeout` for each answer.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Daemon {
        self.timeout = timeout;
        self
    }

    /// Sends `request` and returns the answer as given, refusals included.
    pub fn send(&self, request: &Request) -> Result<Response, ClientError> {
        let Some(exe) = &self.start_with else {
            return super::request(&self.places, request, self.timeout);
        };
        // `ensure_runtime_dir` failing shows again, better worded, as the start's own error.
        let _ = self.places.ensure_runtime_dir();
        let deadline = Instant::now() + STARTUP_TIMEOUT + self.timeout;
        request_starting_daemon(&self.places, request, deadline, exe)
    }

    /// Sends `request`; an answer that says it was not carried out is [`ClientError::Refused`].
    pub fn ask(&self, request: &Request) -> Result<Response, ClientError> {
        let response = self.send(request)?;
        if response.ok {
            Ok(response)
        } else {
            Err(ClientError::Refused(response.message))
        }
    }

    /// The daemon's snapshot: sessions, protection, lid, settings.
    pub fn status(&self) -> Result<Status, ClientError> {
        self.ask(&Request::Status)?
            .status
            .map(|status| *status)
            .ok_or_else(|| ClientError::Protocol("the daemon sent no status".into()))
    }

    /// Pauses protection for `minutes` (`None`: until resumed).
    pub fn pause(&self, minutes: Option<u32>) -> Result<Response, ClientError> {
        self.ask(&Request::Pause { minutes })
    }

    /// Takes a pause back.
    pub fn resume(&self) -> Result<Response, ClientError> {
        self.ask(&Request::Resume)
    }

    /// Cancels the suspend lidguard has scheduled.
    pub fn cancel_suspend(&self) -> Result<Response, ClientError> {
        self.ask(&Request::CancelSuspend)
    }

    /// Hands the daemon settings just saved, to use from now on.
    pub fn use_settings(&self, settings: &Settings) -> Result<Response, ClientError> {
        self.ask(&Request::Settings {
            settings: Box::new(settings.clone()),
        })
    }

    /// Opens the event stream (`filter`, `replay`, and `follow`: stay for new events).
    pub fn events(
        &self,
        filter: StreamFilter,
        replay: Replay,
        follow_on: bool,
    ) -> Result<EventLines, ClientError> {
        let request = Request::Events {
            filter,
            replay,
            follow: follow_on,
        };
        match follow(&self.places, &request, self.timeout) {
            Err(ClientError::NotRunning { .. }) if self.start_with.is_some() => {}
            other => return other.map(|(_, lines)| lines),
        }
        // Started by a ping, then followed: the stream then holds everything from its start.
        self.send(&Request::Ping)?;
        follow(&self.places, &request, self.timeout).map(|(_, lines)| lines)
    }

    /// Follows every new event on a thread of its own: `each` gets each line, then `None` when
    /// the stream ends (the daemon stopped); returning false stops following.
    pub fn follow_in_background(
        &self,
        replay: Replay,
        mut each: impl FnMut(Option<String>) -> bool + Send + 'static,
    ) -> Result<(), ClientError> {
        let lines = self.events(StreamFilter::default(), replay, true)?;
        std::thread::spawn(move || {
            for line in lines {
                let Ok(line) = line else { break };
                if !each(Some(line)) {
                    return;
                }
            }
            each(None);
        });
        Ok(())
    }
}
