//! The request/response protocol on the daemon's socket.
//!
//! One request per connection: the client writes one line of JSON, the daemon answers with one
//! line of JSON. One exception: a Stop hook the daemon asks to wait (ask before sleep) gets
//! a first answer with `waitUntil`, then a second line by that time with the outcome
//! (`continuation` holds the user's reply when the turn goes on). Every message carries `v`, the protocol version; a daemon answers a version it
//! does not speak with an error that says so. Field names are camelCase.

use jiff::Timestamp;
use lidguard_core::event::{AgentEvent, Decision};
use lidguard_core::protection::Pause;
use lidguard_core::provider::Provider;
use lidguard_core::session::{Session, SessionKey, StopKind};
use lidguard_core::settings::{Settings, TemperatureMode};
pub use lidguard_core::suspend::{PendingSuspend, SuspendReason};
use serde::{Deserialize, Serialize};

/// The protocol version this build speaks.
pub const PROTOCOL_VERSION: u32 = 1;

/// The largest request line the daemon reads.
pub const MAX_REQUEST_BYTES: usize = 1 << 20;

/// The largest payload a queued hook hands over after its line (see [`Request::Hook`]): within
/// a Unix socket's buffer, so the hook's write never waits for the daemon to read. A larger
/// payload is digested by the hook.
pub const MAX_FOLLOWING_PAYLOAD: usize = 64 * 1024;

/// `sha256:<hex>` of a hook's payload as the agent sent it: the event stream's payload digest.
pub fn payload_digest(payload: &[u8]) -> String {
    use sha2::Digest;
    let hash = sha2::Sha256::digest(payload);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for byte in hash {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// Names a session on the wire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRef {
    /// The agent harness.
    pub provider: Provider,
    /// The session id.
    pub session_id: String,
    /// For `mcp` sessions only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_name: Option<String>,
}

impl SessionRef {
    /// The core's key for this session.
    pub fn key(&self) -> SessionKey {
        SessionKey::new(
            self.provider,
            self.session_id.clone(),
            self.provider_name.as_deref().unwrap_or(""),
        )
    }
}

/// A request to the daemon.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "command",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub enum Request {
    /// Is anyone there?
    Ping,
    /// Start or update a session.
    Start {
        /// The session.
        #[serde(flatten)]
        session: SessionRef,
        /// Working directory (metadata).
        #[serde(default)]
        cwd: Option<String>,
        /// Transcript file.
        #[serde(default)]
        transcript_path: Option<String>,
        /// Agent process to watch.
        #[serde(default)]
        watched_pid: Option<u32>,
    },
    /// End a session, or defer the end while background work runs.
    Stop {
        /// The session.
        #[serde(flatten)]
        session: SessionRef,
        /// How it ended.
        kind: StopKind,
        /// Recorded end reason.
        #[serde(default)]
        end_reason: Option<String>,
        /// Background work still running: defer the stop.
        #[serde(default)]
        pending_work: Option<String>,
    },
    /// Evidence of work; clears a soft-lock.
    Activity {
        /// The session.
        #[serde(flatten)]
        session: SessionRef,
        /// Why.
        reason: String,
    },
    /// The session waits for the user.
    SoftLock {
        /// The session.
        #[serde(flatten)]
        session: SessionRef,
        /// The exact reason.
        reason: String,
    },
    /// Remove sessions by hand.
    RemoveSession {
        /// Every session.
        #[serde(default)]
        all: bool,
        /// Sessions with this id.
        #[serde(default)]
        session_id: Option<String>,
        /// Only this provider.
        #[serde(default)]
        provider: Option<Provider>,
        /// Only this provider name.
        #[serde(default)]
        provider_name: Option<String>,
    },
    /// A snapshot of everything.
    Status,
    /// End the daemon: it answers, then releases what it holds and puts back what it changed,
    /// as on SIGTERM (`lidguard daemon-stop`, `lidguard uninstall`).
    Shutdown,
    /// A relay's lease (`lidguard ssh`, `lidguard container`): answered at once, then held
    /// open. The relay's sessions belong to its place; they end a grace time after the last
    /// relay to that place closed its lease, unless one holds it again by then.
    HoldRelay {
        /// The relay (one connection), for the log.
        relay: String,
        /// Where its sessions run (`ssh:alice@build`): the prefix of their ids.
        #[serde(default)]
        place: String,
    },
    /// Relays' leases ended: their sessions end (sent by the daemon's own lease holder).
    RelayGone {
        /// The place whose last relay ended; `None`: every relayed session whose place is not
        /// in `held` (the sessions a restarted daemon found, once their relays had the time to
        /// come back).
        place: Option<String>,
        /// With no `place`: the places relays held in this daemon's life.
        #[serde(default)]
        held: Vec<String>,
    },
    /// End sessions whose watched process is gone.
    CleanupOrphans,
    /// Pause protection for `minutes` (`None`: until resumed); sessions go on being tracked.
    Pause {
        /// How long.
        #[serde(default)]
        minutes: Option<u32>,
    },
    /// Take protection back before a pause ends.
    Resume,
    /// Cancel the suspend on its way.
    CancelSuspend,
    /// What an agent's hook reported (one hook invocation may carry several events).
    Hook {
        /// The events, in order.
        events: Vec<AgentEvent>,
        /// The hook reads no answer (no event of it asks for a decision or may wait): it
        /// writes the request and closes, and the daemon, which reads request lines in the order
        /// connections come, queues the events ahead of any later request and applies them
        /// without answering. The agent's next event never waits for this one's work.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        queued: bool,
        /// A queued hook's payload, as the agent sent it, follows the line: this many bytes
        /// (at most [`MAX_FOLLOWING_PAYLOAD`]), and the daemon sets the events' digest. A CPU's
        /// hashing features are then looked up once, by the daemon, not by every hook process
        /// (under a hypervisor each lookup traps to it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        payload_follows: Option<usize>,
    },
    /// Follow the event stream: the answer is one line, then the replayed events, then (with
    /// `follow`) every new event as it happens, one JSON line each ([`crate::stream`]), until
    /// either side closes.
    Events {
        /// Which events.
        #[serde(flatten)]
        filter: crate::stream::StreamFilter,
        /// Which recent events come first.
        #[serde(default)]
        replay: crate::stream::Replay,
        /// Keep the connection open for new events.
        #[serde(default)]
        follow: bool,
    },
    /// Apply new settings (already saved to disk by the caller).
    Settings {
        /// The settings.
        settings: Box<Settings>,
    },
}

/// The envelope a client writes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RequestEnvelope {
    /// Protocol version.
    pub v: u32,
    /// The request.
    #[serde(flatten)]
    pub request: Request,
}

/// What the daemon did with a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// A new session.
    Started,
    /// An existing session was updated.
    Updated,
    /// The session ended.
    Stopped,
    /// Deferred: background work still runs.
    StopDeferred,
    /// The session had already ended.
    AlreadyStopped,
    /// State changed.
    Recorded,
    /// Nothing changed.
    Unchanged,
    /// No such session.
    UnknownSession,
    /// Sessions were removed.
    Removed,
    /// Done (status, ping, settings...).
    Done,
    /// The request failed; see `message`.
    Failed,
}

/// The daemon's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Response {
    /// Protocol version.
    pub v: u32,
    /// Whether the request was carried out (an "already stopped" answer is still `ok`).
    pub ok: bool,
    /// What happened.
    pub outcome: Outcome,
    /// A sentence for humans.
    pub message: String,
    /// Sessions affected (removed, cleaned up).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sessions: Vec<SessionRef>,
    /// The snapshot, for `status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Box<Status>>,
    /// The closed-lid decision for a hook, if lidguard made one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// Ask before sleep: a second answer follows on this connection by this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_until: Option<Timestamp>,
    /// Ask before sleep: the user's reply, which continues the agent's turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continuation: Option<String>,
    /// For a hook: exactly what it prints for its agent (the decision or the continuation,
    /// rendered once, by the daemon, in the agent's dialect). Nothing to print when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout: Option<String>,
    /// For `start`: the keep-awake protection as it stands once the session is applied, so the
    /// caller can say at once when nothing can be held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protection: Option<Box<ProtectionStatus>>,
}

impl Response {
    /// A successful answer.
    pub fn ok(outcome: Outcome, message: impl Into<String>) -> Response {
        Response {
            v: PROTOCOL_VERSION,
            ok: true,
            outcome,
            message: message.into(),
            sessions: Vec::new(),
            status: None,
            decision: None,
            wait_until: None,
            continuation: None,
            stdout: None,
            protection: None,
        }
    }

    /// A failure.
    pub fn error(message: impl Into<String>) -> Response {
        Response {
            v: PROTOCOL_VERSION,
            ok: false,
            outcome: Outcome::Failed,
            message: message.into(),
            sessions: Vec::new(),
            status: None,
            decision: None,
            wait_until: None,
            continuation: None,
            stdout: None,
            protection: None,
        }
    }
}

/// Whether a session needs the machine awake.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SessionState {
    /// Working.
    Active,
    /// Waiting for the user.
    SoftLocked,
}

/// One session in `status --json`. Field names are a contract (see docs/reference.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStatus {
    /// The agent harness.
    pub provider: Provider,
    /// The session id.
    pub session_id: String,
    /// `null` unless the provider is `mcp`.
    pub provider_name: Option<String>,
    /// `active` or `softLocked`.
    pub state: SessionState,
    /// The exact soft-lock reason, or `null`.
    pub soft_lock_reason: Option<String>,
    /// When the soft-lock began.
    pub soft_locked_at: Option<Timestamp>,
    /// A stop was deferred for background work.
    pub pending_provider_work: bool,
    /// What background work.
    pub pending_provider_work_reason: Option<String>,
    /// Held for the agent's own scheduled wake-up, due then (Claude's session crons); the
    /// stop is deferred as for background work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wakes_at: Option<Timestamp>,
    /// The agent process watched, or `null`.
    pub watched_pid: Option<u32>,
    /// The tool that runs this provider's hooks when it is not the provider (`devin`, `cursor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_by: Option<String>,
    /// Where the session runs when it is not this machine, and through which relay
    /// (`ssh lgremote@devbox`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// Transcript file.
    pub transcript_path: Option<String>,
    /// First seen (UTC).
    pub started_at: Timestamp,
    /// Last evidence of work (UTC).
    pub last_activity_at: Timestamp,
    /// When the inactive timeout will soft-lock it, if it will.
    pub timeout_at: Option<Timestamp>,
    /// A command's session: held until this process exits, whatever the inactivity timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_process_exits: Option<u32>,
    /// The transcript monitor: `following <path>`, `no transcript found`, or why several
    /// candidates were not followed; `null` when not looked at.
    #[serde(default)]
    pub transcript_monitor: Option<String>,
    /// How many times the followed transcript was opened to be read (it is read only when it
    /// grew or was replaced); `null` when none is followed.
    #[serde(default)]
    pub transcript_reads: Option<u64>,
}

impl SessionStatus {
    /// The status view of a core session.
    pub fn from_session(s: &Session, timeout_at: Option<Timestamp>) -> SessionStatus {
        SessionStatus {
            provider: s.key.provider,
            session_id: s.key.session_id.clone(),
            provider_name: s.key.provider_name().map(str::to_owned),
            state: if s.soft_lock.is_some() {
                SessionState::SoftLocked
            } else {
                SessionState::Active
            },
            soft_lock_reason: s.soft_lock.as_ref().map(|l| l.reason.clone()),
            soft_locked_at: s.soft_lock.as_ref().map(|l| l.since),
            pending_provider_work: s.pending_work.is_some(),
            pending_provider_work_reason: s.pending_work.as_ref().map(|w| w.reason.clone()),
            wakes_at: s.pending_work.as_ref().and_then(|w| w.wakes_at),
            watched_pid: s.watched_pid,
            run_by: s.run_by.clone(),
            via: s.via.clone(),
            cwd: s.cwd.clone(),
            transcript_path: s.transcript_path.clone(),
            started_at: s.started_at,
            last_activity_at: s.last_activity_at,
            timeout_at,
            until_process_exits: s.lasts_while_process(),
            transcript_monitor: None,
            transcript_reads: None,
        }
    }
}

/// Keep-awake protection as the daemon holds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProtectionStatus {
    /// Whether OS locks are held right now.
    pub held: bool,
    /// What is held (`sleep`, `idle`, `handle-lid-switch`).
    pub inhibitors: Vec<String>,
    /// Those of `inhibitors` that let an explicit suspend by the user through (logind's delay
    /// mode, while the lid is open); the others refuse it.
    #[serde(default)]
    pub delay_inhibitors: Vec<String>,
    /// Why protection cannot be had at all, or why the last attempt failed; `null` when fine.
    pub unavailable_reason: Option<String>,
    /// Whether sessions want protection now.
    pub wanted: bool,
    /// The summary given to the OS.
    pub why: Option<String>,
    /// The backend, e.g. "systemd-logind on the system bus".
    pub backend: Option<String>,
    /// Why protection is released for the battery (on battery below `batteryFloorPercent`),
    /// or `null`.
    #[serde(default)]
    pub battery_floor: Option<String>,
    /// Why protection is released for the heat (a serious thermal state with the temperature
    /// guard on), or `null`.
    #[serde(default)]
    pub thermal_pressure: Option<String>,
    /// The user's pause of protection, when one is in force.
    #[serde(default)]
    pub paused: Option<Pause>,
}

impl ProtectionStatus {
    /// Why protection is released although agents may work (the battery floor or the heat),
    /// or `None`.
    pub fn released_for(&self) -> Option<&str> {
        self.battery_floor
            .as_deref()
            .or(self.thermal_pressure.as_deref())
    }
}

/// When the daemon exits on its own.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CleanupStatus {
    /// `serverRuntimeCleanupDelayMinutes` (`null` = never).
    pub delay_minutes: Option<u32>,
    /// When the daemon will exit, if scheduled.
    pub exit_at: Option<Timestamp>,
}

/// The daemon's database.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreStatus {
    /// The database file.
    pub path: String,
    /// Why it is not in use, or why the last write to it failed (until a write succeeds).
    pub error: Option<String>,
    /// A damaged database found at start: where it was moved (kept) and what was wrong.
    #[serde(default)]
    pub moved_aside: Option<MovedAside>,
}

/// A damaged database the daemon moved aside before making a new one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MovedAside {
    /// Where the damaged file is kept.
    pub path: String,
    /// What was wrong with it.
    pub reason: String,
}

/// The full snapshot returned by `status`. Field names are a contract (see docs/reference.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// Tracked sessions, ordered by provider then id.
    pub sessions: Vec<SessionStatus>,
    /// Keep-awake protection.
    pub protection: ProtectionStatus,
    /// `Open`, `Closed` or `Unknown`.
    pub lid: String,
    /// The battery as last read (`null`: none, or not read yet).
    #[serde(default)]
    pub battery: Option<lidguard_core::suspend::Battery>,
    /// The thermal state as last read (macOS; `null` elsewhere or not read yet).
    #[serde(default)]
    pub thermal_state: Option<lidguard_core::clamshell::ThermalState>,
    /// Connected displays, internal panel included; `null` when unknown.
    pub visible_displays: Option<u32>,
    /// Connected displays other than the internal panel; `null` when unknown.
    pub external_displays: Option<u32>,
    /// The daemon's process id.
    pub daemon_pid: u32,
    /// The daemon's version.
    pub daemon_version: String,
    /// When the daemon started.
    pub daemon_started_at: Timestamp,
    /// Idle exit.
    pub cleanup: CleanupStatus,
    /// The database.
    pub store: StoreStatus,
    /// The settings in force.
    pub settings: Settings,
    /// The settings file, and why it could not be used if it could not.
    pub settings_file: String,
    /// A problem with the settings file (the daemon then runs with defaults).
    pub settings_error: Option<String>,
    /// A suspend waiting for its moment (lid closed, work done), or `null`. While it asks
    /// before sleep, `ask` says whose Stop hook waits and until when.
    #[serde(default)]
    pub pending_suspend: Option<PendingSuspend>,
    /// Ask before sleep: `off`, `on` or `configuration error: …`.
    #[serde(default)]
    pub ask_before_sleep: String,
    /// The phone (ntfy).
    #[serde(default)]
    pub phone: PhoneStatus,
    /// Sessions let go at a Stop although their own schedule wakes them again, because the
    /// wake-up is further away than the session timeout; the wake-up protects them again.
    #[serde(default)]
    pub released_wake_ups: Vec<ReleasedWakeUp>,
}

/// A session let go until its own scheduled wake-up (`status`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReleasedWakeUp {
    /// The agent.
    pub provider: Provider,
    /// The session id.
    pub session_id: String,
    /// When its schedule wakes it.
    pub wakes_at: Timestamp,
}

/// The phone (ntfy) in `status`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PhoneStatus {
    /// Whether an ntfy topic is set.
    pub ntfy: bool,
    /// Permission requests waiting for the phone's answer.
    pub waiting: Vec<RemoteWaiting>,
}

/// A permission request waiting for the phone's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteWaiting {
    /// lidguard's id for the question.
    pub request: String,
    /// The session.
    pub provider: Provider,
    /// Its id.
    pub session_id: String,
    /// The tool asked about.
    pub tool: Option<String>,
    /// The relay, for a request from another machine (`ssh alice@build`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// When the fallback answers if the phone does not.
    pub until: Timestamp,
}

/// One suspend request as recorded in the suspend history (`lidguard suspend-history`).
/// Field names are a contract (see docs/reference.md).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SuspendHistoryEntry {
    /// When it was requested (UTC).
    pub recorded_at: Timestamp,
    /// `Sleep` or `Hibernate`.
    pub suspend_mode: String,
    /// `Completed`, `SoftLocked` or `EmergencyHibernation`.
    pub reason: SuspendReason,
    /// Whether the OS accepted the request.
    pub succeeded: bool,
    /// The OS's refusal or error, `null` on success.
    pub error: Option<String>,
    /// Sessions still keeping protection (emergency hibernation only).
    pub active_session_count: usize,
    /// Soft-locked sessions that triggered a `SoftLocked` suspend.
    pub trigger_session_count: usize,
    /// Emergency only: the reading, °C.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_celsius: Option<i32>,
    /// Emergency only: the threshold in force, °C.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold_celsius: Option<i32>,
    /// Emergency only: how thermal zones were combined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_mode: Option<TemperatureMode>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_flat_camel_case_json() {
        let req = RequestEnvelope {
            v: PROTOCOL_VERSION,
            request: Request::Start {
                session: SessionRef {
                    provider: Provider::Claude,
                    session_id: "s1".into(),
                    provider_name: None,
                },
                cwd: Some("/p".into()),
                transcript_path: None,
                watched_pid: Some(9),
            },
        };
        let json = serde_json::to_value(&req).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"v":1,"command":"start","provider":"claude","sessionId":"s1",
                "cwd":"/p","transcriptPath":null,"watchedPid":9})
        );
        let back: RequestEnvelope = serde_json::from_value(json).unwrap();
        assert_eq!(back.request, req.request);

        let status: RequestEnvelope =
            serde_json::from_str(r#"{"v":1,"command":"status"}"#).unwrap();
        assert_eq!(status.request, Request::Status);
        let soft: RequestEnvelope = serde_json::from_str(
            r#"{"v":1,"command":"soft-lock","provider":"mcp","sessionId":"a","providerName":"g","reason":"waiting_for_user_input"}"#,
        )
        .unwrap();
        assert!(matches!(soft.request, Request::SoftLock { .. }));
    }
}
