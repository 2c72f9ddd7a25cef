//! The daemon as the MCP servers see it: blocking socket calls moved off the async executor,
//! and the runtime part of every tool result.

use std::path::PathBuf;

use lidguard_ipc::client::ClientError;
use lidguard_ipc::protocol::{
    ProtectionStatus, Request, Response, SessionState, SessionStatus, Status,
};
use lidguard_ipc::{Daemon, Places};
use serde::Serialize;

/// Said whenever no daemon runs.
pub(crate) const NOT_RUNNING: &str = "lidguard's runtime is not running: no session is tracked \
     and nothing keeps the machine awake. It starts with the next agent session (an agent's \
     lidguard hook, `lidguard start`, or provider_start_session).";

/// What came back from the daemon.
pub(crate) enum Answer {
    /// The daemon answered (its `ok` may still be false).
    Reply(Box<Response>),
    /// No daemon runs.
    NotRunning,
    /// A daemon may run but could not be reached or did not answer.
    Unreachable(String),
}

/// Reaches the daemon.
#[derive(Clone, Debug)]
pub(crate) struct Runtime {
    places: Places,
}

impl Runtime {
    pub(crate) fn new(places: Places) -> Runtime {
        Runtime { places }
    }

    pub(crate) fn places(&self) -> &Places {
        &self.places
    }

    /// Sends a request; never starts the daemon.
    pub(crate) async fn send(&self, request: Request) -> Answer {
        let places = self.places.clone();
        blocking(move || Daemon::new(&places).send(&request)).await
    }

    /// Sends a request, starting the daemon first when none runs (the current executable is
    /// the lidguard binary).
    pub(crate) async fn send_starting(&self, request: Request) -> Answer {
        let places = self.places.clone();
        blocking(move || {
            let exe = current_exe()?;
            places.ensure_runtime_dir().map_err(|e| ClientError::Io {
                socket: places.socket().display().to_string(),
                source: e,
            })?;
            Daemon::new(&places).starting_with(exe).send(&request)
        })
        .await
    }

    /// The daemon's snapshot, or why there is none.
    pub(crate) async fn status(&self) -> Result<Box<Status>, String> {
        match self.send(Request::Status).await {
            Answer::Reply(r) => match r.status {
                Some(status) => Ok(status),
                None => Err(format!("the runtime gave no status: {}", r.message)),
            },
            Answer::NotRunning => Err(NOT_RUNNING.to_owned()),
            Answer::Unreachable(e) => Err(e),
        }
    }

    /// The runtime part of a tool result.
    pub(crate) async fn view(&self) -> RuntimeView {
        RuntimeView::from(self.status().await.as_deref())
    }
}

fn current_exe() -> Result<PathBuf, ClientError> {
    std::env::current_exe()
        .map_err(|e| ClientError::Spawn(format!("cannot find the lidguard executable: {e}")))
}

async fn blocking(call: impl FnOnce() -> Result<Response, ClientError> + Send + 'static) -> Answer {
    match tokio::task::spawn_blocking(call).await {
        Ok(Ok(response)) => Answer::Reply(Box::new(response)),
        Ok(Err(ClientError::NotRunning { .. })) => Answer::NotRunning,
        Ok(Err(e)) => Answer::Unreachable(e.to_string()),
        Err(e) => Answer::Unreachable(format!("the request task failed: {e}")),
    }
}

/// Sessions and machine state as the daemon reports them, without the settings.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RuntimeView {
    /// Whether the daemon answered.
    pub(crate) runtime_reachable: bool,
    /// Why not, or a one-line state summary.
    pub(crate) runtime_message: String,
    /// Sessions that keep the machine awake (not soft-locked).
    pub(crate) active_session_count: usize,
    /// Sessions waiting for the user.
    pub(crate) soft_locked_session_count: usize,
    /// `Open`, `Closed` or `Unknown`; `null` without a runtime.
    pub(crate) lid: Option<String>,
    /// Connected displays, internal panel included.
    pub(crate) visible_displays: Option<u32>,
    /// Connected displays other than the internal panel.
    pub(crate) external_displays: Option<u32>,
    /// Keep-awake protection.
    pub(crate) protection: Option<ProtectionStatus>,
    /// Tracked sessions (same fields as `lidguard status --json`).
    pub(crate) sessions: Vec<SessionStatus>,
}

impl From<Result<&Status, &String>> for RuntimeView {
    fn from(status: Result<&Status, &String>) -> RuntimeView {
        match status {
            Ok(s) => {
                let active = s
                    .sessions
                    .iter()
                    .filter(|x| x.state == SessionState::Active)
                    .count();
                let locked = s.sessions.len() - active;
                let held = if s.protection.held {
                    "held"
                } else {
                    "not held"
                };
                RuntimeView {
                    runtime_reachable: true,
                    runtime_message: format!(
                        "{active} active and {locked} soft-locked session(s); keep-awake protection {held}; lid {}.",
                        s.lid
                    ),
                    active_session_count: active,
                    soft_locked_session_count: locked,
                    lid: Some(s.lid.clone()),
                    visible_displays: s.visible_displays,
                    external_displays: s.external_displays,
                    protection: Some(s.protection.clone()),
                    sessions: s.sessions.clone(),
                }
            }
            Err(why) => RuntimeView {
                runtime_reachable: false,
                runtime_message: why.clone(),
                active_session_count: 0,
                soft_locked_session_count: 0,
                lid: None,
                visible_displays: None,
                external_displays: None,
                protection: None,
                sessions: Vec::new(),
            },
        }
    }
}
