//! The daemon's own life in the event stream and the event log: it started (and whether the
//! one before it ended without stopping: killed or crashed), it stopped and why, and the
//! sessions a restart dropped because their agent was gone. `events` then explains a gap.

use jiff::Timestamp;
use lidguard_core::registry::LogEvent;
use lidguard_core::session::SessionKey;
use lidguard_store::StoreWrite;
use serde::{Deserialize, Serialize};

use super::Runtime;

/// Where a running daemon notes itself; a clean stop removes the note, so a note found at start
/// is a daemon that ended without stopping.
const RUN_KEY: &str = "daemon-run";

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Run {
    pid: u32,
    started_at: Timestamp,
}

impl Runtime {
    /// At start, after the kept stream is back: a crash found, the start (`how`: who started
    /// it), then each session `dropped` from the store. On disk before anything else happens.
    pub(super) fn history_started(&mut self, how: &str, dropped: &[SessionKey]) {
        let mut out = self.outbox();
        let mut log = |name: &str, key: Option<&SessionKey>, detail: String| {
            out.log(&LogEvent {
                name: name.to_owned(),
                key: key.cloned(),
                detail,
            });
        };
        if let Some(last) = self.records.kept_state::<Run>(RUN_KEY) {
            log(
                "daemon-crash-found",
                None,
                format!(
                    "the daemon before this one (pid {}, started {}) ended without stopping: \
                     killed or crashed",
                    last.pid, last.started_at
                ),
            );
        }
        let pid = std::process::id();
        log(
            "daemon-started",
            None,
            format!("pid {pid}, version {}, {how}", env!("CARGO_PKG_VERSION")),
        );
        for key in dropped {
            log(
                "session-dropped-at-restart",
                Some(key),
                "its agent process is gone (or was never known), so nothing would end it".into(),
            );
        }
        let run = Run {
            pid,
            started_at: self.life.started_at,
        };
        out.write(StoreWrite::DaemonState {
            key: RUN_KEY,
            data_json: serde_json::to_string(&run).ok(),
        });
        self.settle(out);
        self.records.flush();
    }

    /// At the end of the loop: the stop and why; the run note goes with it.
    pub(super) fn history_stopped(&mut self) {
        let why = self
            .life
            .stop_reason
            .clone()
            .unwrap_or_else(|| "the loop ended".to_owned());
        let mut out = self.outbox();
        out.log(&LogEvent {
            name: "daemon-stopped".to_owned(),
            key: None,
            detail: why,
        });
        out.write(StoreWrite::DaemonState {
            key: RUN_KEY,
            data_json: None,
        });
        self.settle(out);
    }
}
