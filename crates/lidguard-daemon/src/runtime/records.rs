//! Records: the database, the writes waiting to be batched into it, and why it is missing.
//! Also how each record is worded (event-log rows for hook events, log events and webhook
//! attempts).

use jiff::Timestamp;
use lidguard_core::event::{AgentEvent, Decision};
use lidguard_core::protection::Pause;
use lidguard_core::registry::LogEvent;
use lidguard_core::session::{Session, SessionKey};
use lidguard_ipc::Places;
use lidguard_ipc::protocol::{MovedAside, Outcome, Response, StoreStatus, SuspendHistoryEntry};
use lidguard_platform::sources::Roots;
use lidguard_store::{EventRow, SessionRowKey, Store, StoreWrite};

use super::outbound::Attempt;

/// The name the event log uses for webhook attempts (`lidguard webhook-history` reads them).
pub const WEBHOOK_ATTEMPT: &str = "webhook-attempt";

/// The name the event log uses for hook events (`lidguard hook-events` reads them).
pub const HOOK_EVENT: &str = "hook-event";

/// Where the user's pause is kept among the daemon's state.
const PAUSE_KEY: &str = "pause";

/// How long database writes wait, gathered, after the request that caused them: a hook gets
/// its answer without waiting for the disk (nor for the CPU it shares with the daemon), and a
/// burst of events costs one transaction. Any other request (`status`, or the CLI's ping
/// before it reads the database) writes them first.
const WRITE_DELAY: std::time::Duration = std::time::Duration::from_millis(20);

pub(super) struct Records {
    store: Option<Store>,
    /// Why there is no store.
    error: Option<String>,
    /// A damaged database moved aside at start.
    moved_aside: Option<MovedAside>,
    /// Writes waiting for the end of the current step ([`Records::flush`]).
    writes: Vec<StoreWrite>,
    /// When the waiting writes are due.
    due: Option<tokio::time::Instant>,
}

impl Records {
    /// Opens (or recovers) the database in the state directory; runs without one when it
    /// cannot, and says why in `status`.
    pub(super) fn open(places: &Places) -> Records {
        let without = |error: String| Records {
            store: None,
            error: Some(error),
            moved_aside: None,
            writes: Vec::new(),
            due: None,
        };
        if let Err(e) = lidguard_files::private::ensure_dir(&places.state_dir) {
            let reason = format!(
                "cannot create the state directory {}: {e}",
                places.state_dir.display()
            );
            tracing::error!(%reason, "running without the database");
            return without(reason);
        }
        match Store::open_or_recover(&places.database()) {
            Ok((store, moved)) => Records {
                store: Some(store),
                error: None,
                moved_aside: moved.map(|m| MovedAside {
                    path: m.to.display().to_string(),
                    reason: m.reason,
                }),
                writes: Vec::new(),
                due: None,
            },
            Err(e) => {
                tracing::error!(error = %e, "running without the database; sessions are not persisted");
                without(e.to_string())
            }
        }
    }

    /// Whether what happens is logged (there is a database).
    pub(super) fn logged(&self) -> bool {
        self.store.is_some()
    }

    /// The event stream the last daemon kept.
    pub(super) fn stream_lines(&self) -> Vec<(u64, String)> {
        let Some(store) = &self.store else {
            return Vec::new();
        };
        store
            .load_stream_lines()
            .inspect_err(|e| tracing::warn!(error = %e, "cannot load the kept event stream"))
            .unwrap_or_default()
    }

    /// Sessions from the store whose watched process still lives, and the keys of those
    /// dropped: nothing would ever end them.
    pub(super) fn recover_sessions(&self) -> (Vec<Session>, Vec<SessionKey>) {
        let Some(store) = &self.store else {
            return (Vec::new(), Vec::new());
        };
        let rows = match store.load_sessions() {
            Ok(rows) => rows,
            Err(e) => {
                tracing::error!(error = %e, "cannot load sessions from the database");
                return (Vec::new(), Vec::new());
            }
        };
        let mut kept = Vec::new();
        let mut dropped = Vec::new();
        for row in rows {
            let key = SessionRowKey {
                provider: &row.provider,
                session_id: &row.session_id,
                provider_name: &row.provider_name,
            };
            let session: Option<Session> = serde_json::from_str(&row.data_json)
                .inspect_err(|e| tracing::warn!(error = %e, session = %row.session_id, "unreadable stored session"))
                .ok();
            // A relayed session's lease stands for its process: its relay has the grace time
            // to take the lease again on this daemon (see `leases`).
            let alive = session.as_ref().is_some_and(|s| {
                s.via.is_some()
                    || s.watched_pid.is_some_and(|pid| {
                        lidguard_platform::process::is_alive(&Roots::system(), pid)
                    })
            });
            match session {
                Some(session) if alive => kept.push(session),
                session => {
                    tracing::info!(session = %row.session_id, provider = %row.provider, "dropped a stored session: its process is gone or unknown");
                    dropped.extend(session.map(|s| s.key).or_else(|| {
                        let provider = row.provider.parse().ok()?;
                        Some(SessionKey::new(
                            provider,
                            &row.session_id,
                            &row.provider_name,
                        ))
                    }));
                    if let Err(e) = store.delete_session(&key) {
                        tracing::warn!(error = %e, "cannot delete a stored session");
                    }
                }
            }
        }
        (kept, dropped)
    }

    /// The daemon's own state kept under `key` by the last daemon, if readable.
    pub(super) fn kept_state<T: serde::de::DeserializeOwned>(&self, key: &str) -> Option<T> {
        let json = self.store.as_ref()?.daemon_state(key);
        let json = json
            .inspect_err(
                |e| tracing::error!(error = %e, key, "cannot read the daemon's kept state"),
            )
            .ok()??;
        serde_json::from_str(&json)
            .inspect_err(|e| tracing::warn!(error = %e, key, "unreadable kept state"))
            .ok()
    }

    /// The pause the last daemon kept, if one was in force.
    pub(super) fn recover_pause(&self) -> Option<Pause> {
        self.kept_state(PAUSE_KEY)
    }

    /// Queues a database write. Writes are carried out together, in one transaction, after the
    /// request that caused them has its answer (a hook waits for the answer, not the disk).
    pub(super) fn write(&mut self, write: StoreWrite) {
        if self.store.is_some() {
            self.writes.push(write);
        }
    }

    /// After a step of the loop: waiting writes are due [`WRITE_DELAY`] after the first.
    pub(super) fn schedule(&mut self) {
        self.due = match self.writes.is_empty() {
            true => None,
            false => self
                .due
                .or_else(|| Some(tokio::time::Instant::now() + WRITE_DELAY)),
        };
    }

    /// Whether writes wait, due at [`Records::due`].
    pub(super) fn scheduled(&self) -> bool {
        self.due.is_some()
    }

    /// Ends when the waiting writes are due.
    pub(super) async fn due(&self) {
        tokio::time::sleep_until(self.due.unwrap_or_else(tokio::time::Instant::now)).await;
    }

    /// Carries out the queued writes (failures are logged).
    pub(super) fn flush(&mut self) {
        let _ = self.write_now(false);
    }

    /// Carries out the queued writes, synced to disk when `synced`; says why they could not be
    /// made.
    pub(super) fn write_now(&mut self, synced: bool) -> Result<(), String> {
        let Some(store) = &self.store else {
            return Err(self.error.clone().unwrap_or_else(|| "no database".into()));
        };
        if self.writes.is_empty() {
            return Ok(());
        }
        self.due = None;
        let writes = std::mem::take(&mut self.writes);
        let written = if synced {
            store.write_batch_synced(&writes)
        } else {
            store.write_batch(&writes)
        };
        written.map_err(|e| {
            tracing::warn!(error = %e, count = writes.len(), "cannot save to the database; continuing without persistence for these changes");
            e.to_string()
        })
    }

    /// `answer`, once what the request changed is on disk (acknowledged means durable); a write
    /// that fails is said in the answer (the change holds in memory, but would not survive a
    /// restart).
    pub(super) fn acknowledged(&mut self, mut answer: Response) -> Response {
        if let Err(e) = self.write_now(true) {
            answer.message = format!("{} (not saved to the database: {e})", answer.message);
        }
        answer
    }

    /// Adds suspend attempts to the history, keeping the newest `keep`.
    pub(super) fn record_suspends(&self, entries: &[SuspendHistoryEntry], keep: Option<u32>) {
        crate::suspend::record(self.store.as_ref(), entries, keep);
    }

    /// The database in `status`.
    pub(super) fn status(&self, places: &Places) -> StoreStatus {
        StoreStatus {
            path: places.database().display().to_string(),
            error: self
                .error
                .clone()
                .or_else(|| self.store.as_ref().and_then(Store::write_failure)),
            moved_aside: self.moved_aside.clone(),
        }
    }
}

/// That a hook of `event`'s agent ran (`lidguard doctor` reads when each last did).
pub(super) fn hook_receipt(event: &AgentEvent, at: Timestamp) -> StoreWrite {
    StoreWrite::HookReceipt {
        provider: event.provider.as_str().to_owned(),
        event: event.hook_event.clone(),
        at,
    }
}

/// A session as saved.
pub(super) fn save_session(session: &Session) -> StoreWrite {
    let key = &session.key;
    StoreWrite::UpsertSession {
        provider: key.provider.as_str().to_owned(),
        session_id: key.session_id.clone(),
        provider_name: key.provider_name.clone(),
        data_json: serde_json::to_string(session).unwrap_or_default(),
        updated_at: Timestamp::now(),
    }
}

/// The user's pause as kept (`None`: none in force).
pub(super) fn save_pause(pause: Option<Pause>) -> StoreWrite {
    StoreWrite::DaemonState {
        key: PAUSE_KEY,
        data_json: pause.and_then(|p| serde_json::to_string(&p).ok()),
    }
}

/// A session removed.
pub(super) fn delete_session(key: &SessionKey) -> StoreWrite {
    StoreWrite::DeleteSession {
        provider: key.provider.as_str().to_owned(),
        session_id: key.session_id.clone(),
        provider_name: key.provider_name.clone(),
    }
}

/// The event-log row of a hook event with the decision it got (`remote`: how the phone's wait
/// ended).
pub(super) fn hook_event(
    event: &AgentEvent,
    (outcome, decision): (Outcome, Option<&Decision>),
    at: Timestamp,
    remote: Option<serde_json::Value>,
) -> StoreWrite {
    // The normalized event itself, without the raw payload excerpt (the log is bounded by
    // rows, not bytes) and without the owner pid (it belongs to the session).
    let mut normalized = serde_json::to_value(event).unwrap_or_default();
    if let Some(fields) = normalized.as_object_mut() {
        for field in [
            "raw",
            "ownerPid",
            "payloadDigest",
            "toolSummary",
            "toolInputDigest",
        ] {
            fields.remove(field);
        }
    }
    let mut detail = serde_json::json!({
        "hookEvent": event.hook_event,
        "kind": event.kind.name(),
        "tool": event.tool_name,
        "cwd": event.cwd,
        "prompt": event.prompt,
        "outcome": outcome,
        "decision": decision,
        "payloadDigest": event.payload_digest,
        "event": normalized,
    });
    if let Some(fields) = detail.as_object_mut() {
        if let Some(summary) = &event.tool_summary {
            fields.insert("toolSummary".into(), summary.clone().into());
        }
        if let Some(digest) = &event.tool_input_digest {
            fields.insert("toolInputDigest".into(), digest.clone().into());
        }
        if let Some(remote) = remote {
            fields.insert("remote".into(), remote);
        }
    }
    StoreWrite::Event(EventRow {
        at,
        name: HOOK_EVENT.to_owned(),
        provider: Some(event.provider.as_str().to_owned()),
        session_id: Some(lidguard_ipc::stream::log_text(&event.session_id)),
        detail_json: lidguard_ipc::stream::log_detail(detail),
    })
}

/// The event-log row of something the registry logged.
pub(super) fn log_event(event: &LogEvent) -> StoreWrite {
    let session = event.key.as_ref().map(ToString::to_string);
    StoreWrite::Event(EventRow {
        at: Timestamp::now(),
        name: event.name.clone(),
        provider: event.key.as_ref().map(|k| k.provider.as_str().to_owned()),
        session_id: event
            .key
            .as_ref()
            .map(|k| lidguard_ipc::stream::log_text(&k.session_id)),
        detail_json: lidguard_ipc::stream::log_detail(
            serde_json::json!({ "detail": event.detail, "session": session }),
        ),
    })
}

/// The event-log row of one webhook attempt (`lidguard webhook-history` reads them): the
/// receiver's host only, never the URL (its path may hold a secret).
pub(super) fn webhook_attempt(attempt: &Attempt) -> StoreWrite {
    StoreWrite::Event(EventRow {
        at: attempt.started,
        name: WEBHOOK_ATTEMPT.to_owned(),
        provider: attempt.provider.clone(),
        session_id: attempt.session_id.clone(),
        detail_json: serde_json::json!({
            "eventType": attempt.event_type,
            "reason": attempt.reason,
            "host": attempt.host,
            "succeeded": attempt.ok,
            "result": attempt.result,
            "durationMs": attempt.duration_ms,
        })
        .to_string(),
    })
}
