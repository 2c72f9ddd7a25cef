//! The session state machine.
//!
//! [`Registry::apply`] takes an [`Input`] and the current time and returns an [`Outcome`]: a
//! [`Reply`] for whoever asked and the [`Effect`]s the daemon must carry out. The registry never
//! reads a clock; timers are expressed as [`Registry::next_deadline`], and the daemon feeds
//! [`Input::Tick`] when that moment comes.
//!
//! Rules (from the provider-integration spec and the reference system):
//! - start/update refreshes activity and clears the soft-lock;
//! - activity refreshes and clears the soft-lock; unknown sessions are ignored;
//! - a soft-lock does not refresh activity; the same reason twice is a no-op;
//! - stop is idempotent: the first stop wins, later stops, watchdog or cleanup signals for the
//!   same session have no second side effect;
//! - a stop with pending provider work keeps the session, refreshes activity and keeps
//!   protection;
//! - the inactive timeout soft-locks a session; pending work silent for the timeout is
//!   abandoned (logged, flag cleared) and soft-locked the same way;
//! - protection is needed while at least one session is not soft-locked or has pending work;
//! - the daemon exits `serverRuntimeCleanupDelayMinutes` after the last session is gone.

use std::collections::{BTreeMap, VecDeque};

use jiff::{SignedDuration, Timestamp};

use crate::ask::{Ask, AskOutcome, AskStatus, HOOK_MARGIN, MAX_EXTENSION};
use crate::event::{
    AgentEvent, CLOSED_LID_ASK_REASON, Decision, EventKind, Lid, closed_lid_asks,
    closed_lid_decision,
};
use crate::protection::{Inhibit, ProtectionPlan, why_text};
use crate::provider::Provider;
use crate::session::{PendingWork, Session, SessionKey, SoftLock, StopKind};
use crate::settings::{FollowUpState, Settings, SuspendMode};
use crate::suspend::{
    Battery, EMERGENCY_RETRY, Machine, PendingSuspend, SOUND_TIMEOUT, SuspendPhase, SuspendReason,
    SuspendRequest, TemperatureReading, WEBHOOK_TIMEOUT, clamped_threshold,
};
use crate::webhook::{EventType, Payload, prompt_preview, with_session};

/// The `who` lidguard gives the OS for its locks.
pub const WHO: &str = "lidguard";

/// The soft-lock reason of the inactivity timeout, before the minutes.
pub const TIMEOUT_SOFT_LOCK_PREFIX: &str = "session-timeout-expired:";

/// How many ended sessions are remembered to answer late stops with "already stopped".
const ENDED_MEMORY: usize = 256;

/// A request to start or update a session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartSession {
    /// The session.
    pub key: SessionKey,
    /// The agent's working directory, if known.
    pub cwd: Option<String>,
    /// The agent's transcript, if known.
    pub transcript_path: Option<String>,
    /// The agent process to watch, if known.
    pub watched_pid: Option<u32>,
}

/// A request to end a session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StopSession {
    /// The session.
    pub key: SessionKey,
    /// How it ended.
    pub kind: StopKind,
    /// Free text recorded as the end reason (e.g. `Stop`, `SessionEnd:logout`).
    pub end_reason: Option<String>,
    /// When set, background work is still running: the stop is deferred.
    pub pending_work: Option<String>,
    /// Set when the stop comes from a hook that can continue the turn (ask before sleep).
    pub stop_hook: Option<StopHook>,
}

/// A Stop whose hook can answer with a continuation (the reference's
/// `CanReturnStopContinuation`: Claude `Stop`, Codex `Stop`, Copilot `agentStop`, OpenCode
/// `session.idle`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StopHook {
    /// The agent says this Stop follows an earlier continuation.
    pub stop_hook_active: bool,
}

/// Which sessions `remove-session` targets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RemoveSelector {
    /// Every session.
    All,
    /// Sessions with this id, optionally narrowed by provider and provider name.
    Matching {
        /// The session id.
        session_id: String,
        /// Only this provider.
        provider: Option<Provider>,
        /// Only this provider name (for `mcp`).
        provider_name: Option<String>,
    },
}

/// Something that happened.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    /// Start or update a session.
    Start(StartSession),
    /// Evidence of work; clears a soft-lock.
    Activity {
        /// The session.
        key: SessionKey,
        /// Why, e.g. `PostToolUse:Bash`.
        reason: String,
    },
    /// The agent's transcript grew with nothing more specific in it. Weaker evidence than
    /// [`Input::Activity`]: it refreshes the session and ends a soft-lock of the inactivity
    /// timeout, but not a wait for the user's answer (an agent writes its pending question or
    /// tool call to the transcript while it waits).
    TranscriptGrowth {
        /// The session.
        key: SessionKey,
        /// Why, e.g. `claude_transcript_activity_detected`.
        reason: String,
    },
    /// The session waits for the user.
    SoftLock {
        /// The session.
        key: SessionKey,
        /// The exact reason string.
        reason: String,
    },
    /// End a session (or defer the end while background work runs).
    Stop(StopSession),
    /// Remove sessions by hand.
    Remove(RemoveSelector),
    /// These sessions' watched processes are gone (watchdog or orphan cleanup).
    ProcessesGone(Vec<SessionKey>),
    /// Timers may have expired.
    Tick,
    /// New settings.
    Settings(Box<Settings>),
    /// Sessions recovered from the store at daemon start.
    Restore(Vec<Session>),
    /// What the daemon observed of the lid and displays (polled while sessions exist, and right
    /// before a due suspend). The lid opening cancels a pending suspend.
    Machine(Machine),
    /// What the daemon read of the battery (`None`: no battery, or it cannot be read). On
    /// battery below `batteryFloorPercent`, protection is released until the charge is back
    /// above the floor or AC power returns.
    Battery(Option<Battery>),
    /// The post-stop sound of pending suspend `id` finished (or could not be played).
    SoundFinished {
        /// The pending suspend's id.
        id: u64,
    },
    /// The PreSuspend webhook of pending suspend `id` was sent (or failed, or timed out).
    WebhookDone {
        /// The pending suspend's id.
        id: u64,
    },
    /// Ask before sleep: the receiver moved the reply deadline of pending suspend `id`.
    AskExtended {
        /// The pending suspend's id.
        id: u64,
        /// The new deadline (capped by the registry).
        reply_deadline: Timestamp,
    },
    /// Ask before sleep: the Stop hook of `key` is no longer waiting (its connection closed):
    /// a reply could not reach the agent, so the question is dropped and the suspend goes on.
    HookGone {
        /// The session whose hook left.
        key: SessionKey,
    },
    /// Ask before sleep: the exchange with the receiver for pending suspend `id` is over.
    AskResolved {
        /// The pending suspend's id.
        id: u64,
        /// What it came to.
        outcome: AskOutcome,
    },
    /// A temperature reading for the emergency guard, aggregated as the settings say; `None`
    /// when no thermal zone could be read.
    Temperature {
        /// Whole °C.
        celsius: Option<i32>,
    },
    /// What an agent's hook reported, with the lid and displays as they were when it arrived
    /// (read only for events that may need a closed-lid decision).
    Agent {
        /// The event.
        event: Box<AgentEvent>,
        /// The lid.
        lid: Lid,
        /// Connected displays other than internal panels.
        external_displays: Option<u32>,
    },
}

/// What the registry answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// A new session was created.
    Started,
    /// An existing session was updated.
    Updated,
    /// The session ended.
    Stopped,
    /// The stop was deferred because background work is still running.
    StopDeferred,
    /// The session had already ended; nothing was done.
    AlreadyStopped {
        /// How it ended the first time.
        end_reason: String,
    },
    /// The input changed the session.
    Recorded,
    /// The input changed nothing (same soft-lock reason, activity on a fresh session...).
    Unchanged,
    /// No such session; nothing was done.
    UnknownSession,
    /// These sessions were removed.
    Removed(Vec<SessionKey>),
    /// Nothing to answer (ticks, settings, restore).
    Done,
}

/// What the daemon must do.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// Hold exactly this protection (`None` = release everything).
    Protection(Option<ProtectionPlan>),
    /// Persist this session's current state.
    SaveSession(Session),
    /// Forget this session in the store.
    DeleteSession(SessionKey),
    /// Record an event in the log.
    Log(LogEvent),
    /// POST this webhook to the URL the settings give for its event type (5 s at most; a
    /// failure is logged only). With `id`, answer [`Input::WebhookDone`] when it is over.
    Webhook {
        /// The pending suspend waiting for it, if any.
        id: Option<u64>,
        /// The body.
        payload: Box<Payload>,
    },
    /// Play the post-stop sound, then answer [`Input::SoundFinished`] with `id` (also when it
    /// cannot be played: a sound never blocks a suspend).
    PlaySound {
        /// The pending suspend's id.
        id: u64,
        /// The sound setting (a system sound name or a `.wav` path).
        sound: String,
        /// Temporary volume, restored afterwards.
        volume_percent: Option<u8>,
    },
    /// Ask before sleep: POST this StopFollowUp body to the follow-up webhook, play the
    /// follow-up sound once, poll the reply until `reply_deadline` (which the receiver may
    /// move: report it with [`Input::AskExtended`]), then answer [`Input::AskResolved`].
    Ask {
        /// The pending suspend's id.
        id: u64,
        /// The body.
        payload: Box<Payload>,
        /// Until when to wait for a reply.
        reply_deadline: Timestamp,
        /// The latest any deadline may be moved to.
        latest: Timestamp,
        /// The follow-up sound setting (empty: none).
        sound: String,
        /// Temporary volume for it.
        volume_percent: Option<u8>,
        /// The agent process: when it has exited, asking is pointless (report
        /// [`AskOutcome::AgentExited`]).
        watched_pid: Option<u32>,
    },
    /// Answer the Stop hook waiting for `key` (and stop any exchange of pending suspend `id`):
    /// with the reply to continue the turn, or with nothing to let it end.
    AnswerHook {
        /// The pending suspend the hook waited on.
        id: u64,
        /// The session whose hook waits.
        key: SessionKey,
        /// The user's reply, when the session goes on.
        continuation: Option<String>,
        /// How the ask ended.
        status: AskStatus,
    },
    /// Release protection, ask the OS to suspend, record the result in the suspend history,
    /// then hold again whatever protection the registry wants.
    Suspend(SuspendRequest),
    /// Exit the daemon (after answering the current request).
    Exit,
}

/// An entry for lidguard's event log. Names follow the reference system where it has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogEvent {
    /// e.g. `session-started`.
    pub name: String,
    /// The session concerned, if any.
    pub key: Option<SessionKey>,
    /// Free text.
    pub detail: String,
}

/// A reply and the effects to carry out.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The answer for the requester.
    pub reply: Reply,
    /// What to do, in order.
    pub effects: Vec<Effect>,
    /// The closed-lid decision for the agent, if lidguard makes one.
    pub decision: Option<Decision>,
    /// Ask before sleep: the Stop hook that sent this input must wait for an
    /// [`Effect::AnswerHook`], which comes by this time at the latest.
    pub hook_waits_until: Option<Timestamp>,
}

/// A session that ended, remembered briefly so late stops are answered precisely.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndedSession {
    /// The session.
    pub key: SessionKey,
    /// How it ended.
    pub kind: StopKind,
    /// The recorded end reason.
    pub end_reason: String,
    /// When.
    pub at: Timestamp,
}

/// The whole state of the session core.
#[derive(Clone, Debug)]
pub struct Registry {
    settings: Settings,
    sessions: BTreeMap<SessionKey, Session>,
    ended: VecDeque<EndedSession>,
    protection: Option<ProtectionPlan>,
    exit_at: Option<Timestamp>,
    machine: Machine,
    battery: Option<Battery>,
    pending_suspend: Option<PendingSuspend>,
    next_suspend_id: u64,
    last_emergency_at: Option<Timestamp>,
    /// Set while one input is applied: a session ended, and whether by a cancel path.
    trigger: Option<Trigger>,
    /// The normal end that scheduled the pending suspend, if one did.
    pending_origin: Option<Ended>,
    /// Whether the pending suspend's PreSuspend webhook was attempted.
    pre_suspend_sent: bool,
    /// Whether a session needed protection after the last input.
    working: bool,
}

/// A session ended during the current input.
#[derive(Clone, Debug, Default)]
struct Trigger {
    /// Every ending was a cancel path (watched process gone, orphan cleanup).
    cancel_path: bool,
    /// The last provider-reported normal end, for the webhooks.
    provider_end: Option<Ended>,
}

/// A session as it was when it ended normally: what its webhooks describe.
#[derive(Clone, Debug)]
struct Ended {
    session: Session,
    end_reason: String,
    at: Timestamp,
    /// The stop's hook can continue the turn.
    stop_hook: Option<StopHook>,
}

impl Registry {
    /// An empty registry. Call [`Registry::apply`] with [`Input::Restore`] (even empty) once at
    /// daemon start so the idle exit is scheduled.
    pub fn new(settings: Settings) -> Registry {
        Registry {
            settings,
            sessions: BTreeMap::new(),
            ended: VecDeque::new(),
            protection: None,
            exit_at: None,
            machine: Machine::UNKNOWN,
            battery: None,
            pending_suspend: None,
            next_suspend_id: 1,
            last_emergency_at: None,
            trigger: None,
            pending_origin: None,
            pre_suspend_sent: false,
            working: false,
        }
    }

    /// What the daemon last observed of the lid and displays.
    pub fn machine(&self) -> Machine {
        self.machine
    }

    /// The battery as last read.
    pub fn battery(&self) -> Option<Battery> {
        self.battery
    }

    /// Why protection is released for the battery, or `None` when it is not.
    pub fn battery_floor_reached(&self) -> Option<String> {
        let floor = self.settings.battery_floor_percent;
        let battery = self.battery.filter(|b| b.below(floor))?;
        Some(format!(
            "on battery at {}%, below the battery floor of {}%",
            battery.percent,
            floor.unwrap_or_default()
        ))
    }

    /// The suspend waiting for its moment, if any.
    pub fn pending_suspend(&self) -> Option<&PendingSuspend> {
        self.pending_suspend.as_ref()
    }

    /// The session whose normal end scheduled the pending suspend (the one ask before sleep
    /// asks about), as it was when it ended.
    pub fn pending_origin(&self) -> Option<&Session> {
        self.pending_origin.as_ref().map(|e| &e.session)
    }

    /// Whether the daemon should read the temperature: the emergency guard is on, protection
    /// is held, and the closed-lid policy applies.
    pub fn temperature_watch_wanted(&self) -> bool {
        self.settings.emergency_hibernation_on_high_temperature
            && self.protection.is_some()
            && self.machine.closed_lid_applies()
    }

    /// The settings in force.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// All sessions, ordered by key.
    pub fn sessions(&self) -> impl Iterator<Item = &Session> {
        self.sessions.values()
    }

    /// One session.
    pub fn session(&self, key: &SessionKey) -> Option<&Session> {
        self.sessions.get(key)
    }

    /// Recently ended sessions, oldest first.
    pub fn ended(&self) -> impl Iterator<Item = &EndedSession> {
        self.ended.iter()
    }

    /// The protection currently wanted.
    pub fn protection(&self) -> Option<&ProtectionPlan> {
        self.protection.as_ref()
    }

    /// When the daemon will exit for lack of sessions, if scheduled.
    pub fn exit_at(&self) -> Option<Timestamp> {
        self.exit_at
    }

    /// When a session goes inactive without further activity, if any will.
    pub fn session_deadline(&self, session: &Session) -> Option<Timestamp> {
        let minutes = self.settings.session_timeout_minutes?;
        if !session.needs_protection() || session.lasts_while_process().is_some() {
            return None;
        }
        let timeout = SignedDuration::from_mins(i64::from(minutes));
        Some(
            session
                .last_activity_at
                .checked_add(timeout)
                .unwrap_or(Timestamp::MAX),
        )
    }

    /// The earliest moment at which [`Input::Tick`] has something to do.
    pub fn next_deadline(&self) -> Option<Timestamp> {
        let exit_at = self.exit_at.filter(|_| self.pending_suspend.is_none());
        self.sessions
            .values()
            .filter_map(|s| self.session_deadline(s))
            .chain(exit_at)
            .chain(self.pending_suspend.as_ref().map(|p| p.due_at))
            .min()
    }

    /// Applies one input at time `now`.
    pub fn apply(&mut self, input: Input, now: Timestamp) -> Outcome {
        let mut fx = Vec::new();
        let mut decision = None;
        let mut stopped = None;
        let reply = match input {
            Input::Start(start) => self.start(start, now, &mut fx),
            Input::Activity { key, reason } => self.activity(&key, &reason, now, &mut fx),
            Input::SoftLock { key, reason } => self.soft_lock(&key, reason, now, &mut fx),
            Input::TranscriptGrowth { key, reason } => {
                let waits_for_user = self
                    .sessions
                    .get(&key)
                    .and_then(|s| s.soft_lock.as_ref())
                    .is_some_and(|l| !l.reason.starts_with(TIMEOUT_SOFT_LOCK_PREFIX));
                if waits_for_user {
                    Reply::Unchanged
                } else {
                    self.activity(&key, &reason, now, &mut fx)
                }
            }
            Input::Stop(stop) => self.stop(stop, now, &mut fx),
            Input::Remove(selector) => self.remove(&selector, now, &mut fx),
            Input::ProcessesGone(keys) => {
                // Cancel path: only these stops, so no other stop clears the flag below.
                self.trigger = None;
                for key in keys {
                    let stop = StopSession {
                        key,
                        kind: StopKind::ProcessGone,
                        end_reason: Some("watched-process-exited".to_owned()),
                        pending_work: None,
                        stop_hook: None,
                    };
                    self.stop(stop, now, &mut fx);
                }
                Reply::Done
            }
            Input::Tick => {
                self.tick(now, &mut fx);
                Reply::Done
            }
            Input::Machine(machine) => {
                self.observe(machine, &mut fx);
                Reply::Done
            }
            Input::Battery(battery) => {
                let was = self.battery_floor_reached();
                self.battery = battery;
                self.battery_floor_changed(was, &mut fx);
                Reply::Done
            }
            Input::SoundFinished { id } => {
                if self
                    .pending_suspend
                    .as_ref()
                    .is_some_and(|p| p.id == id && p.phase == SuspendPhase::Sound)
                {
                    self.suspend_now(now, &mut fx);
                }
                Reply::Done
            }
            Input::WebhookDone { id } => {
                if self
                    .pending_suspend
                    .as_ref()
                    .is_some_and(|p| p.id == id && p.phase == SuspendPhase::Webhook)
                {
                    self.play_or_suspend(now, &mut fx);
                }
                Reply::Done
            }
            Input::Temperature { celsius } => {
                self.temperature(celsius, now, &mut fx);
                Reply::Done
            }
            Input::AskExtended { id, reply_deadline } => {
                if let Some(p) = self.pending_suspend.as_mut().filter(|p| p.id == id)
                    && let Some(ask) = p.ask.as_mut()
                    && ask.status == AskStatus::AwaitingReply
                {
                    let latest = ask.latest_reply_deadline.unwrap_or(ask.hook_deadline);
                    ask.reply_deadline = Some(reply_deadline.min(latest));
                }
                Reply::Done
            }
            Input::HookGone { key } => {
                self.hook_gone(&key, now, &mut fx);
                Reply::Done
            }
            Input::AskResolved { id, outcome } => {
                if self.pending_suspend.as_ref().is_some_and(|p| {
                    p.id == id && p.phase == SuspendPhase::AwaitingReply && p.ask.is_some()
                }) {
                    self.ask_resolved(outcome, now, &mut fx);
                }
                Reply::Done
            }
            Input::Settings(settings) => {
                let was = self.battery_floor_reached();
                self.settings = *settings;
                log(&mut fx, "settings-updated", None, "");
                self.battery_floor_changed(was, &mut fx);
                Reply::Done
            }
            Input::Agent {
                event,
                lid,
                external_displays,
            } => {
                let (reply, decided) = self.agent(&event, lid, external_displays, now, &mut fx);
                decision = decided;
                stopped = Some(event.key());
                reply
            }
            Input::Restore(sessions) => {
                if sessions.is_empty() {
                    // A daemon started on demand is about to receive the request that started
                    // it: never idle out before that, whatever the cleanup delay.
                    if let Some(minutes) = self.settings.server_runtime_cleanup_delay_minutes {
                        let wait = SignedDuration::from_mins(i64::from(minutes.max(1)));
                        self.exit_at = Some(now.checked_add(wait).unwrap_or(Timestamp::MAX));
                        log(
                            &mut fx,
                            "server-runtime-cleanup-scheduled",
                            None,
                            &format!("{} minutes", minutes.max(1)),
                        );
                    }
                }
                for session in sessions {
                    log(&mut fx, "session-restored", Some(&session.key), "");
                    self.sessions.insert(session.key.clone(), session);
                }
                Reply::Done
            }
        };
        self.reconcile(now, &mut fx);
        // The ask this very stop set up, if any: its hook waits for the answer.
        let hook_waits_until = self
            .pending_suspend
            .as_ref()
            .and_then(|p| p.ask.as_ref())
            .filter(|ask| stopped.as_ref() == Some(&ask.key))
            .filter(|ask| ask.status == AskStatus::WaitingForDelay)
            .filter(|_| reply == Reply::Stopped)
            .map(|ask| ask.hook_deadline);
        Outcome {
            reply,
            effects: fx,
            decision,
            hook_waits_until,
        }
    }

    fn start(&mut self, start: StartSession, now: Timestamp, fx: &mut Vec<Effect>) -> Reply {
        let StartSession {
            key,
            cwd,
            transcript_path,
            watched_pid,
        } = start;
        // An mcp session has no process of its own to watch: the MCP server is shared.
        let watched_pid = watched_pid.filter(|_| key.provider != Provider::Mcp);
        self.ended.retain(|e| e.key != key);
        let (reply, session) = match self.sessions.get_mut(&key) {
            Some(session) => {
                session.last_activity_at = now;
                session.soft_lock = None;
                session.pending_work = None;
                if cwd.is_some() {
                    session.cwd = cwd;
                }
                if transcript_path.is_some() {
                    session.transcript_path = transcript_path;
                }
                if watched_pid.is_some() {
                    session.watched_pid = watched_pid;
                }
                (Reply::Updated, session.clone())
            }
            None => {
                let session = Session {
                    key: key.clone(),
                    cwd,
                    transcript_path,
                    watched_pid,
                    started_at: now,
                    last_activity_at: now,
                    soft_lock: None,
                    pending_work: None,
                    background: BTreeMap::new(),
                    prompt_preview: None,
                    last_assistant_message: None,
                };
                self.sessions.insert(key.clone(), session.clone());
                (Reply::Started, session)
            }
        };
        let name = if reply == Reply::Started {
            "session-started"
        } else {
            "session-updated"
        };
        log(fx, name, Some(&key), "");
        fx.push(Effect::SaveSession(session));
        reply
    }

    fn activity(
        &mut self,
        key: &SessionKey,
        reason: &str,
        now: Timestamp,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        let Some(session) = self.sessions.get_mut(key) else {
            log(fx, "session-activity-ignored", Some(key), reason);
            return Reply::UnknownSession;
        };
        session.last_activity_at = now;
        let was_locked = session.soft_lock.take();
        fx.push(Effect::SaveSession(session.clone()));
        // Activity arrives on every tool call; only a cleared soft-lock is worth a log line.
        match was_locked {
            Some(lock) => {
                let detail = format!("{reason} (was waiting: {})", lock.reason);
                log(fx, "session-activity-recorded", Some(key), &detail);
                Reply::Recorded
            }
            None => Reply::Unchanged,
        }
    }

    fn soft_lock(
        &mut self,
        key: &SessionKey,
        reason: String,
        now: Timestamp,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        let Some(session) = self.sessions.get_mut(key) else {
            log(fx, "session-softlock-ignored", Some(key), &reason);
            return Reply::UnknownSession;
        };
        if session
            .soft_lock
            .as_ref()
            .is_some_and(|l| l.reason == reason)
        {
            return Reply::Unchanged;
        }
        log(fx, "session-softlock-recorded", Some(key), &reason);
        session.soft_lock = Some(SoftLock { reason, since: now });
        fx.push(Effect::SaveSession(session.clone()));
        Reply::Recorded
    }

    fn stop(&mut self, stop: StopSession, now: Timestamp, fx: &mut Vec<Effect>) -> Reply {
        let StopSession {
            key,
            kind,
            end_reason,
            pending_work,
            stop_hook,
        } = stop;
        let end_reason = end_reason
            .filter(|r| !r.trim().is_empty())
            .unwrap_or_else(|| default_end_reason(&kind).to_owned());
        if !self.sessions.contains_key(&key) {
            return match self.ended.iter().rev().find(|e| e.key == key) {
                Some(first) => {
                    let name = format!("{}-already-stopped", stop_event_name(&kind));
                    log(fx, &name, Some(&key), &first.end_reason);
                    Reply::AlreadyStopped {
                        end_reason: first.end_reason.clone(),
                    }
                }
                None => {
                    log(fx, "session-stop-ignored", Some(&key), &end_reason);
                    Reply::UnknownSession
                }
            };
        }
        if let Some(reason) = pending_work.filter(|_| kind != StopKind::ProcessGone) {
            let session = self.sessions.get_mut(&key).expect("checked above");
            session.last_activity_at = now;
            session.pending_work = Some(PendingWork {
                reason: reason.clone(),
                since: now,
            });
            fx.push(Effect::SaveSession(session.clone()));
            log(fx, "session-stop-deferred", Some(&key), &reason);
            return Reply::StopDeferred;
        }
        let removed = self.sessions.remove(&key);
        let cancel_path = kind == StopKind::ProcessGone;
        let provider_end = removed
            .filter(|_| kind == StopKind::ProviderEnd)
            .map(|session| Ended {
                session,
                end_reason: end_reason.clone(),
                at: now,
                stop_hook,
            });
        self.trigger = Some(match self.trigger.take() {
            Some(t) => Trigger {
                cancel_path: t.cancel_path && cancel_path,
                provider_end: provider_end.or(t.provider_end),
            },
            None => Trigger {
                cancel_path,
                provider_end,
            },
        });
        log(fx, stop_event_name(&kind), Some(&key), &end_reason);
        fx.push(Effect::DeleteSession(key.clone()));
        self.ended.push_back(EndedSession {
            key,
            kind,
            end_reason,
            at: now,
        });
        while self.ended.len() > ENDED_MEMORY {
            self.ended.pop_front();
        }
        Reply::Stopped
    }

    fn remove(&mut self, selector: &RemoveSelector, now: Timestamp, fx: &mut Vec<Effect>) -> Reply {
        let keys: Vec<SessionKey> = self
            .sessions
            .keys()
            .filter(|k| match selector {
                RemoveSelector::All => true,
                RemoveSelector::Matching {
                    session_id,
                    provider,
                    provider_name,
                } => {
                    k.session_id == *session_id
                        && provider.is_none_or(|p| p == k.provider)
                        && provider_name
                            .as_deref()
                            .is_none_or(|n| n.trim() == k.provider_name)
                }
            })
            .cloned()
            .collect();
        for key in &keys {
            let stop = StopSession {
                key: key.clone(),
                kind: StopKind::Removed,
                end_reason: Some("remove-session".to_owned()),
                pending_work: None,
                stop_hook: None,
            };
            self.stop(stop, now, fx);
        }
        Reply::Removed(keys)
    }

    /// Carries out one agent event. The mapping from provider events to these kinds lives in
    /// the provider dialects; what each kind means for a session lives here.
    fn agent(
        &mut self,
        event: &AgentEvent,
        lid: Lid,
        external_displays: Option<u32>,
        now: Timestamp,
        fx: &mut Vec<Effect>,
    ) -> (Reply, Option<Decision>) {
        let key = event.key();
        let activity_reason = match &event.tool_name {
            Some(tool) => format!("{}:{tool}", event.hook_event),
            None => event.hook_event.clone(),
        };
        let policy = self.settings.closed_lid_permission_request_decision;
        let reply = match &event.kind {
            EventKind::SessionStarted | EventKind::Telemetry => Reply::Unchanged,
            EventKind::PromptSubmitted => {
                let watched_pid = event
                    .owner_pid
                    .filter(|_| self.settings.watch_parent_process);
                let start = StartSession {
                    key: key.clone(),
                    cwd: event.cwd.clone(),
                    transcript_path: event.transcript_path.clone(),
                    watched_pid,
                };
                let reply = self.start(start, now, fx);
                if let (Some(session), Some(prompt)) = (self.sessions.get_mut(&key), &event.prompt)
                {
                    session.prompt_preview = Some(prompt_preview(prompt));
                    session.last_assistant_message = None;
                }
                reply
            }
            EventKind::WorkNoticeDelivered { work_ids } => {
                // A completion notice is not new work: it only finishes what it names.
                let Some(session) = self.sessions.get_mut(&key) else {
                    return (Reply::UnknownSession, None);
                };
                let before = session.background.len();
                for id in work_ids {
                    session.background.remove(id);
                }
                if session.background.len() == before {
                    return (Reply::Unchanged, None);
                }
                fx.push(Effect::SaveSession(session.clone()));
                log(
                    fx,
                    "session-work-finished",
                    Some(&key),
                    &work_ids.join(", "),
                );
                Reply::Recorded
            }
            EventKind::ToolStarting { asks_user: true } => {
                let decision = closed_lid_decision(&event.kind, policy, lid, external_displays);
                if let Some(d) = &decision {
                    log(fx, "closed-lid-decision", Some(&key), &describe_decision(d));
                }
                // The agent is about to wait for an answer: no new evidence of work.
                return (Reply::Unchanged, decision);
            }
            EventKind::ToolStarting { .. }
            | EventKind::ToolFinished { .. }
            | EventKind::WaitingCleared { .. } => self.activity(&key, &activity_reason, now, fx),
            EventKind::Interrupted | EventKind::TurnFailed => {
                let stop = StopSession {
                    key,
                    kind: StopKind::Interrupted,
                    end_reason: Some(event.end_reason()),
                    pending_work: None,
                    stop_hook: None,
                };
                self.stop(stop, now, fx)
            }
            EventKind::PermissionRequested { .. } | EventKind::ElicitationRequested => {
                let decision = closed_lid_decision(&event.kind, policy, lid, external_displays);
                if let Some(d) = &decision {
                    log(fx, "closed-lid-decision", Some(&key), &describe_decision(d));
                }
                if closed_lid_asks(&event.kind, policy, lid, external_displays) {
                    let reply = self.soft_lock(&key, CLOSED_LID_ASK_REASON.to_owned(), now, fx);
                    return (reply, None);
                }
                return (Reply::Unchanged, decision);
            }
            EventKind::WaitingForUser { state_reason } => {
                self.soft_lock(&key, state_reason.clone(), now, fx)
            }
            EventKind::WorkStarted { work_id, work } => {
                if let Some(session) = self.sessions.get_mut(&key) {
                    session.background.insert(work_id.clone(), *work);
                }
                self.activity(&key, &activity_reason, now, fx)
            }
            EventKind::WorkFinished { work_id } => {
                if let Some(session) = self.sessions.get_mut(&key) {
                    session.background.remove(work_id);
                }
                self.activity(&key, &activity_reason, now, fx)
            }
            EventKind::TurnStopped {
                running_work,
                stop_hook_active,
                can_continue,
            } => {
                self.remember_answer(&key, event);
                let pending = match running_work {
                    // The provider's own list is authoritative when it sends one.
                    Some(list) => {
                        if list.is_empty()
                            && let Some(session) = self.sessions.get_mut(&key)
                        {
                            session.background.clear();
                        }
                        describe_work(list.iter().map(String::as_str))
                    }
                    None => self.tracked_work(&key),
                };
                let stop = StopSession {
                    key,
                    kind: StopKind::ProviderEnd,
                    end_reason: Some(event.end_reason()),
                    pending_work: pending,
                    stop_hook: can_continue.then_some(StopHook {
                        stop_hook_active: *stop_hook_active,
                    }),
                };
                self.stop(stop, now, fx)
            }
            EventKind::SessionEnded {
                normal,
                defer_for_work,
            } => {
                self.remember_answer(&key, event);
                let pending = if *defer_for_work {
                    self.tracked_work(&key)
                } else {
                    None
                };
                let stop = StopSession {
                    key,
                    kind: if *normal {
                        StopKind::ProviderEnd
                    } else {
                        StopKind::Interrupted
                    },
                    end_reason: Some(event.end_reason()),
                    pending_work: pending,
                    stop_hook: None,
                };
                self.stop(stop, now, fx)
            }
        };
        (reply, None)
    }

    /// Keeps the agent's last answer, when its hook gave one, for the webhooks.
    fn remember_answer(&mut self, key: &SessionKey, event: &AgentEvent) {
        if let (Some(session), Some(text)) = (
            self.sessions.get_mut(key),
            event.last_assistant_message.as_ref(),
        ) && !text.trim().is_empty()
        {
            session.last_assistant_message = Some(text.clone());
        }
    }

    /// Tracked background work of a session, described for the pending-work reason.
    fn tracked_work(&self, key: &SessionKey) -> Option<String> {
        let session = self.sessions.get(key)?;
        describe_work(session.background.keys().map(String::as_str))
    }

    fn tick(&mut self, now: Timestamp, fx: &mut Vec<Effect>) {
        if self
            .pending_suspend
            .as_ref()
            .is_some_and(|p| p.due_at <= now)
        {
            self.suspend_due(now, fx);
        }
        let Some(minutes) = self.settings.session_timeout_minutes else {
            return self.tick_exit(now, fx);
        };
        let expired: Vec<SessionKey> = self
            .sessions
            .values()
            .filter(|s| self.session_deadline(s).is_some_and(|d| d <= now))
            .map(|s| s.key.clone())
            .collect();
        for key in expired {
            let session = self.sessions.get_mut(&key).expect("key taken from the map");
            if let Some(work) = session.pending_work.take() {
                log(
                    fx,
                    "session-pending-provider-work-abandoned",
                    Some(&key),
                    &work.reason,
                );
            }
            if session.soft_lock.is_none() {
                let reason = format!("{TIMEOUT_SOFT_LOCK_PREFIX}{minutes} minutes");
                log(fx, "session-timeout-softlock-recorded", Some(&key), &reason);
                session.soft_lock = Some(SoftLock { reason, since: now });
            }
            fx.push(Effect::SaveSession(session.clone()));
        }
        self.tick_exit(now, fx);
    }

    fn tick_exit(&mut self, now: Timestamp, fx: &mut Vec<Effect>) {
        // A suspend on its way (and a Stop hook waiting on it) outlives the idle exit.
        if self.pending_suspend.is_some() {
            return;
        }
        if self.exit_at.is_some_and(|at| at <= now) {
            self.exit_at = None;
            log(fx, "server-runtime-cleanup-requested", None, "");
            fx.push(Effect::Exit);
        }
    }

    /// Brings derived state (protection, idle exit) in line with the sessions.
    fn reconcile(&mut self, now: Timestamp, fx: &mut Vec<Effect>) {
        let working = self.sessions.values().any(Session::needs_protection);
        let dropped = self.working && !working;
        self.working = working;
        let trigger = self.trigger.take();
        let provider_end = trigger.as_ref().and_then(|t| t.provider_end.clone());
        let mut scheduled = false;
        if working {
            self.cancel_suspend("work resumed", fx);
        } else if dropped || trigger.is_some() {
            let cancel_path = trigger.as_ref().is_some_and(|t| t.cancel_path);
            // A cancel path never replaces a suspend already on its way.
            if !(cancel_path && self.pending_suspend.is_some()) {
                scheduled = self.schedule_suspend(now, cancel_path, provider_end.clone(), fx);
            }
        }
        if let Some(ended) = provider_end.filter(|_| !scheduled) {
            // A normal end that does not put the machine to sleep is announced as such.
            self.post_session_end(&ended, fx);
        }
        let wanted = self.wanted_protection();
        if wanted != self.protection {
            self.protection.clone_from(&wanted);
            fx.push(Effect::Protection(wanted));
        }
        if !self.sessions.is_empty() {
            if self.exit_at.take().is_some() {
                log(fx, "server-runtime-cleanup-canceled", None, "");
            }
        } else if self.exit_at.is_none() && !fx.contains(&Effect::Exit) {
            if let Some(minutes) = self.settings.server_runtime_cleanup_delay_minutes {
                let at = now
                    .checked_add(SignedDuration::from_mins(i64::from(minutes)))
                    .unwrap_or(Timestamp::MAX);
                self.exit_at = Some(at);
                log(
                    fx,
                    "server-runtime-cleanup-scheduled",
                    None,
                    &format!("{minutes} minutes"),
                );
                if at <= now {
                    self.tick_exit(now, fx);
                }
            }
        } else if self.exit_at.is_some()
            && self.settings.server_runtime_cleanup_delay_minutes.is_none()
        {
            self.exit_at = None;
            log(
                fx,
                "server-runtime-cleanup-canceled",
                None,
                "cleanup delay is off",
            );
        }
    }

    /// Protection just dropped (or a session ended without it): schedule the suspend when the
    /// closed-lid policy applies. A new suspend replaces a pending one.
    fn schedule_suspend(
        &mut self,
        now: Timestamp,
        webhooks_suppressed: bool,
        origin: Option<Ended>,
        fx: &mut Vec<Effect>,
    ) -> bool {
        // A new suspend replaces a pending one; that one's normal end is announced if its
        // PreSuspend was not.
        let replaced = self.pending_suspend.is_some();
        if replaced {
            self.cancel_suspend("replaced by a new suspend", fx);
        }
        let (reason, trigger_session_count) = if self.sessions.is_empty() {
            (SuspendReason::Completed, 0)
        } else {
            (SuspendReason::SoftLocked, self.sessions.len())
        };
        if let Some(why) = self.machine.why_not() {
            log(
                fx,
                "suspend-skipped",
                None,
                &format!("{}: {why}", reason.as_str()),
            );
            return false;
        }
        let (ask, skip_delay) = self.ask_for(origin.as_ref(), now, fx);
        let delay = if skip_delay {
            0
        } else {
            self.settings.post_stop_suspend_delay_seconds
        };
        let id = self.next_suspend_id;
        self.next_suspend_id += 1;
        self.pending_suspend = Some(PendingSuspend {
            id,
            reason,
            scheduled_at: now,
            due_at: now
                .checked_add(SignedDuration::from_secs(i64::from(delay)))
                .unwrap_or(Timestamp::MAX),
            trigger_session_count,
            webhooks_suppressed,
            phase: SuspendPhase::Delay,
            ask,
        });
        let replacing = if replaced {
            ", replacing the earlier one"
        } else {
            ""
        };
        log(
            fx,
            "suspend-scheduled",
            None,
            &format!(
                "{} in {delay} s ({}){replacing}",
                self.settings.suspend_mode.name(),
                reason.as_str()
            ),
        );
        self.pre_suspend_sent = false;
        self.pending_origin = origin;
        if delay == 0 {
            self.suspend_due(now, fx);
        }
        true
    }

    /// The ask-before-sleep gate (README, Ask before sleep: when it asks) for a suspend about to be scheduled by
    /// `origin`: the ask to attach, and whether to skip the post-stop delay (a continued turn
    /// stopping again while `repeatClosedLidStopFollowUp` is off).
    fn ask_for(
        &self,
        origin: Option<&Ended>,
        now: Timestamp,
        fx: &mut Vec<Effect>,
    ) -> (Option<Ask>, bool) {
        let Some((ended, hook)) = origin.and_then(|e| e.stop_hook.map(|h| (e, h))) else {
            return (None, false);
        };
        let key = &ended.session.key;
        match self.settings.follow_up_state() {
            FollowUpState::On => {}
            FollowUpState::Off => return (None, false),
            FollowUpState::ConfigurationError(issues) => {
                let why: Vec<String> = issues.iter().map(ToString::to_string).collect();
                let detail = format!("configuration error: {}", why.join("; "));
                log(fx, "stop-follow-up-disabled", Some(key), &detail);
                return (None, false);
            }
        }
        if hook.stop_hook_active && !self.settings.repeat_closed_lid_stop_follow_up {
            let detail = "a continued turn stopped again and repeatClosedLidStopFollowUp is off: \
                          suspending without asking or waiting";
            log(fx, "stop-follow-up-skipped", Some(key), detail);
            return (None, true);
        }
        let timeout =
            SignedDuration::from_secs(i64::from(self.settings.managed_hook_timeout_seconds()));
        let hook_deadline = now
            .checked_add(timeout - HOOK_MARGIN)
            .unwrap_or(Timestamp::MAX);
        let ask = Ask {
            key: key.clone(),
            hook_deadline,
            reply_deadline: None,
            latest_reply_deadline: None,
            status: AskStatus::WaitingForDelay,
        };
        (Some(ask), false)
    }

    fn cancel_suspend(&mut self, why: &str, fx: &mut Vec<Effect>) {
        self.end_pending(why, false, fx);
    }

    /// Drops the pending suspend. Unless `suppress`, a normal end whose suspend is canceled
    /// before its PreSuspend webhook is announced with PostSessionEnd. A hook waiting on it
    /// is let go.
    fn end_pending(&mut self, why: &str, suppress: bool, fx: &mut Vec<Effect>) {
        let origin = self.pending_origin.take();
        if let Some(pending) = self.pending_suspend.take() {
            log(fx, "suspend-canceled", None, why);
            if let Some(ask) = pending.ask {
                log(fx, "stop-follow-up-canceled", Some(&ask.key), why);
                answer_hook(fx, pending.id, ask.key, None, AskStatus::Canceled);
            }
            if let Some(ended) = origin.filter(|_| !suppress && !self.pre_suspend_sent) {
                self.post_session_end(&ended, fx);
            }
        }
        self.pre_suspend_sent = false;
    }

    fn post_session_end(&mut self, ended: &Ended, fx: &mut Vec<Effect>) {
        if self.settings.post_session_end_webhook_url.trim().is_empty() {
            return;
        }
        let active = self
            .sessions
            .values()
            .filter(|s| s.needs_protection())
            .count();
        let payload = with_session(
            Payload {
                event_type: Some(EventType::PostSessionEnd),
                reason: "SessionEnded".to_owned(),
                user_interface_culture: self.settings.user_interface_culture.clone(),
                ..Payload::default()
            },
            &ended.session,
            &ended.end_reason,
            ended.at,
            active,
        );
        log(fx, "webhook-post-session-end", Some(&ended.session.key), "");
        fx.push(Effect::Webhook {
            id: None,
            payload: Box::new(payload),
        });
    }

    /// The PreSuspend body for the pending suspend: the whole session when a normal end
    /// scheduled it, else only the reason.
    fn pre_suspend_payload(&self, pending: &PendingSuspend) -> Payload {
        let base = Payload {
            event_type: Some(EventType::PreSuspend),
            reason: pending.reason.as_str().to_owned(),
            user_interface_culture: self.settings.user_interface_culture.clone(),
            soft_locked_session_count: (pending.reason == SuspendReason::SoftLocked)
                .then_some(pending.trigger_session_count),
            ..Payload::default()
        };
        match &self.pending_origin {
            Some(ended) => with_session(base, &ended.session, &ended.end_reason, ended.at, 0),
            None => base,
        }
    }

    /// The pending suspend's phase ended: move on to the next one.
    fn suspend_due(&mut self, now: Timestamp, fx: &mut Vec<Effect>) {
        let Some(pending) = self.pending_suspend.as_ref() else {
            return;
        };
        match pending.phase {
            SuspendPhase::Delay if pending.ask.is_some() => self.start_ask(now, fx),
            SuspendPhase::Delay => self.pre_suspend(now, fx),
            // The hook's own limit came before any answer from the exchange.
            SuspendPhase::AwaitingReply => self.ask_resolved(AskOutcome::Expired, now, fx),
            SuspendPhase::Webhook | SuspendPhase::Sound => self.play_or_suspend(now, fx),
        }
    }

    /// After the post-stop delay: check again, then send the StopFollowUp question.
    fn start_ask(&mut self, now: Timestamp, fx: &mut Vec<Effect>) {
        if let Some(why) = self.machine.why_not() {
            return self.cancel_suspend(&why, fx);
        }
        let wait = self.settings.closed_lid_stop_follow_up_delay_seconds;
        let (Some(pending), Some(origin)) = (self.pending_suspend.as_mut(), &self.pending_origin)
        else {
            return;
        };
        let Some(ask) = pending.ask.as_mut() else {
            return;
        };
        let reply_deadline = now
            .checked_add(SignedDuration::from_secs(i64::from(wait)))
            .unwrap_or(Timestamp::MAX)
            .min(ask.hook_deadline);
        let latest = reply_deadline
            .checked_add(MAX_EXTENSION)
            .unwrap_or(Timestamp::MAX)
            .min(ask.hook_deadline);
        ask.reply_deadline = Some(reply_deadline);
        ask.latest_reply_deadline = Some(latest);
        ask.status = AskStatus::AwaitingReply;
        pending.phase = SuspendPhase::AwaitingReply;
        pending.due_at = ask.hook_deadline;
        let key = ask.key.clone();
        let mut payload = with_session(
            Payload {
                event_type: Some(EventType::StopFollowUp),
                reason: "AwaitingReply".to_owned(),
                user_interface_culture: self.settings.user_interface_culture.clone(),
                ..Payload::default()
            },
            &origin.session,
            &origin.end_reason,
            origin.at,
            0,
        );
        payload.reply_wait_seconds = Some(wait);
        payload.reply_deadline_utc = Some(reply_deadline);
        let id = pending.id;
        log(
            fx,
            "stop-follow-up-awaiting-reply",
            Some(&key),
            &format!("{wait} s, until {reply_deadline}"),
        );
        fx.push(Effect::Ask {
            id,
            payload: Box::new(payload),
            reply_deadline,
            latest,
            sound: self
                .settings
                .closed_lid_stop_follow_up_sound
                .trim()
                .to_owned(),
            volume_percent: self
                .settings
                .closed_lid_stop_follow_up_sound_volume_override_percent,
            watched_pid: origin.session.watched_pid,
        });
    }

    /// The exchange is over: a reply continues the session; anything else lets its hook go
    /// and the suspend goes on (a canceled question means "sleep now": no more waiting).
    fn ask_resolved(&mut self, outcome: AskOutcome, now: Timestamp, fx: &mut Vec<Effect>) {
        let Some(pending) = self.pending_suspend.as_mut() else {
            return;
        };
        let Some(ask) = pending.ask.take() else {
            return;
        };
        let id = pending.id;
        let outcome = match outcome {
            AskOutcome::Answered(reply) if reply.trim().is_empty() => {
                AskOutcome::PollFailed("the reply was empty".into())
            }
            other => other,
        };
        let status = outcome.status();
        let name = format!("stop-follow-up-{}", status.as_str());
        log(fx, &name, Some(&ask.key), &outcome.detail());
        let AskOutcome::Answered(reply) = outcome else {
            answer_hook(fx, id, ask.key, None, status);
            return self.pre_suspend(now, fx);
        };
        // The reply resumes the session: no PostSessionEnd, no PreSuspend, no sleep.
        self.pending_suspend = None;
        self.pre_suspend_sent = false;
        log(
            fx,
            "suspend-canceled",
            None,
            "a reply continues the session",
        );
        if let Some(origin) = self.pending_origin.take() {
            let session = Session {
                last_activity_at: now,
                soft_lock: None,
                pending_work: None,
                background: BTreeMap::new(),
                last_assistant_message: None,
                ..origin.session
            };
            self.ended.retain(|e| e.key != session.key);
            log(fx, "session-continued", Some(&session.key), "");
            fx.push(Effect::SaveSession(session.clone()));
            self.sessions.insert(session.key.clone(), session);
        }
        answer_hook(fx, id, ask.key, Some(reply.trim().to_owned()), status);
    }

    /// The waiting hook left: before the question, drop it (the delay runs on); while it is out,
    /// end it as canceled and go on with the suspend.
    fn hook_gone(&mut self, key: &SessionKey, now: Timestamp, fx: &mut Vec<Effect>) {
        let Some(pending) = self.pending_suspend.as_mut() else {
            return;
        };
        if pending.ask.as_ref().is_none_or(|ask| ask.key != *key) {
            return;
        }
        if pending.phase == SuspendPhase::AwaitingReply {
            return self.ask_resolved(AskOutcome::HookGone, now, fx);
        }
        if let Some(ask) = pending.ask.take() {
            let detail = AskOutcome::HookGone.detail();
            log(fx, "stop-follow-up-canceled", Some(&ask.key), &detail);
        }
    }

    /// After the delay (and any ask): the PreSuspend webhook, unless suppressed or unset;
    /// then the sound and the request.
    fn pre_suspend(&mut self, now: Timestamp, fx: &mut Vec<Effect>) {
        let Some(pending) = self.pending_suspend.clone() else {
            return;
        };
        if !pending.webhooks_suppressed && !self.settings.pre_suspend_webhook_url.trim().is_empty()
        {
            if let Some(why) = self.machine.why_not() {
                return self.cancel_suspend(&why, fx);
            }
            let payload = self.pre_suspend_payload(&pending);
            self.pre_suspend_sent = true;
            if let Some(p) = self.pending_suspend.as_mut() {
                p.phase = SuspendPhase::Webhook;
                p.due_at = now.checked_add(WEBHOOK_TIMEOUT).unwrap_or(Timestamp::MAX);
            }
            log(fx, "webhook-pre-suspend", None, pending.reason.as_str());
            fx.push(Effect::Webhook {
                id: Some(pending.id),
                payload: Box::new(payload),
            });
            return;
        }
        self.play_or_suspend(now, fx);
    }

    /// After the delay and the PreSuspend webhook: the sound if one is set, then the request.
    fn play_or_suspend(&mut self, now: Timestamp, fx: &mut Vec<Effect>) {
        let Some(pending) = self.pending_suspend.as_mut() else {
            return;
        };
        let sound = self.settings.post_stop_suspend_sound.trim().to_owned();
        if pending.phase != SuspendPhase::Sound && !sound.is_empty() {
            if let Some(why) = self.machine.why_not() {
                return self.cancel_suspend(&why, fx);
            }
            pending.phase = SuspendPhase::Sound;
            pending.due_at = now.checked_add(SOUND_TIMEOUT).unwrap_or(Timestamp::MAX);
            let id = pending.id;
            fx.push(Effect::PlaySound {
                id,
                sound,
                volume_percent: self
                    .settings
                    .post_stop_suspend_sound_volume_override_percent,
            });
            return;
        }
        self.suspend_now(now, fx);
    }

    /// The last check before the OS request.
    fn suspend_now(&mut self, _now: Timestamp, fx: &mut Vec<Effect>) {
        if self.sessions.values().any(Session::needs_protection) {
            return self.cancel_suspend("a session works again", fx);
        }
        if let Some(why) = self.machine.why_not() {
            return self.cancel_suspend(&why, fx);
        }
        let Some(pending) = self.pending_suspend.take() else {
            return;
        };
        self.pending_origin = None;
        self.pre_suspend_sent = false;
        log(
            fx,
            "suspend-requested",
            None,
            &format!(
                "{} ({})",
                self.settings.suspend_mode.name(),
                pending.reason.as_str()
            ),
        );
        fx.push(Effect::Suspend(SuspendRequest {
            id: pending.id,
            mode: self.settings.suspend_mode,
            fallback: None,
            reason: pending.reason,
            active_session_count: 0,
            trigger_session_count: pending.trigger_session_count,
            temperature: None,
        }));
    }

    /// Logs the battery floor being reached or left (`was`: the state before the change).
    fn battery_floor_changed(&self, was: Option<String>, fx: &mut Vec<Effect>) {
        match (was, self.battery_floor_reached()) {
            (None, Some(why)) => log(fx, "battery-floor-reached", None, &why),
            (Some(_), None) => {
                let detail = match self.battery {
                    _ if self.settings.battery_floor_percent.is_none() => {
                        "the battery floor was turned off".to_owned()
                    }
                    Some(b) if b.on_battery => format!("back at {}%", b.percent),
                    Some(b) => format!("on AC power at {}%", b.percent),
                    None => "no battery reading".to_owned(),
                };
                log(fx, "battery-floor-cleared", None, &detail);
            }
            _ => {}
        }
    }

    fn observe(&mut self, machine: Machine, fx: &mut Vec<Effect>) {
        let before = self.machine;
        self.machine = machine;
        if machine.lid != before.lid {
            log(fx, "lid-state-changed", None, &format!("{:?}", machine.lid));
        }
        if machine.lid == Lid::Open {
            self.cancel_suspend("the lid was opened", fx);
        }
    }

    /// Emergency hibernation: hot, protected, lid closed, no display — hibernate now.
    fn temperature(&mut self, celsius: Option<i32>, now: Timestamp, fx: &mut Vec<Effect>) {
        let Some(celsius) = celsius else { return };
        if !self.temperature_watch_wanted() {
            return;
        }
        let threshold = clamped_threshold(self.settings.emergency_hibernation_temperature_celsius);
        if celsius < threshold {
            return;
        }
        if self
            .last_emergency_at
            .is_some_and(|at| now.duration_since(at) < EMERGENCY_RETRY)
        {
            return;
        }
        self.last_emergency_at = Some(now);
        self.end_pending("emergency hibernation", true, fx);
        if !self.settings.pre_suspend_webhook_url.trim().is_empty() {
            fx.push(Effect::Webhook {
                id: None,
                payload: Box::new(Payload {
                    event_type: Some(EventType::PreSuspend),
                    reason: SuspendReason::EmergencyHibernation.as_str().to_owned(),
                    user_interface_culture: self.settings.user_interface_culture.clone(),
                    ..Payload::default()
                }),
            });
        }
        let active = self
            .sessions
            .values()
            .filter(|s| s.needs_protection())
            .count();
        log(
            fx,
            "emergency-hibernation-requested",
            None,
            &format!("{celsius} °C >= {threshold} °C"),
        );
        fx.push(Effect::Suspend(SuspendRequest {
            id: 0,
            mode: SuspendMode::Hibernate,
            fallback: Some(SuspendMode::Sleep),
            reason: SuspendReason::EmergencyHibernation,
            active_session_count: active,
            trigger_session_count: 0,
            temperature: Some(TemperatureReading {
                celsius,
                threshold_celsius: threshold,
                mode: self.settings.emergency_hibernation_temperature_mode,
            }),
        }));
    }

    /// Protection is held while sessions work, and while a suspend is on its way — through
    /// the post-stop delay, an ask-before-sleep wait, the PreSuspend webhook and the sound —
    /// so the OS's own lid or idle handling never puts the machine to sleep first; it is
    /// released right before the OS request (README, Sleeping when the work is done).
    fn wanted_protection(&self) -> Option<ProtectionPlan> {
        // On battery below the floor the OS gets the machine back: it may sleep or hibernate
        // as it would. Sessions go on being tracked; protection returns with the charge.
        if self.battery_floor_reached().is_some() {
            return None;
        }
        let count = self
            .sessions
            .values()
            .filter(|s| s.needs_protection())
            .count();
        if count == 0 && self.pending_suspend.is_none() {
            return None;
        }
        let power = &self.settings.power_request;
        let mut keep_awake = Vec::new();
        if power.prevent_system_sleep {
            keep_awake.push(Inhibit::Sleep);
        }
        if power.prevent_system_sleep || power.prevent_display_sleep {
            keep_awake.push(Inhibit::Idle);
        }
        Some(ProtectionPlan {
            keep_awake,
            lid_switch: self.settings.change_lid_action,
            who: WHO.to_owned(),
            reason: power.reason.clone(),
            away_mode: power.prevent_system_sleep && power.prevent_away_mode_sleep == Some(true),
            display: power.prevent_display_sleep,
            sleep_gives_way: self.machine.lid != Lid::Closed,
            why: match (count, &self.pending_suspend) {
                (0, Some(p)) if p.ask.is_some() => {
                    "asking before sleep: an agent may go on".to_owned()
                }
                (0, _) => "a closed-lid suspend is on its way".to_owned(),
                (n, _) => why_text(n),
            },
        })
    }
}

fn default_end_reason(kind: &StopKind) -> &'static str {
    match kind {
        StopKind::ProviderEnd | StopKind::Manual => "stop",
        StopKind::Interrupted => "interrupted",
        StopKind::ProcessGone => "watched-process-exited",
        StopKind::Removed => "remove-session",
    }
}

fn stop_event_name(kind: &StopKind) -> &'static str {
    match kind {
        StopKind::ProviderEnd | StopKind::Manual | StopKind::Interrupted => "session-stopped",
        StopKind::ProcessGone => "watched-process-exited",
        StopKind::Removed => "session-removed",
    }
}

/// "2 background tasks running: a, b", or `None` when nothing runs.
fn describe_work<'a>(ids: impl Iterator<Item = &'a str>) -> Option<String> {
    let ids: Vec<&str> = ids.collect();
    match ids.len() {
        0 => None,
        1 => Some(format!("1 background task running: {}", ids[0])),
        n => Some(format!("{n} background tasks running: {}", ids.join(", "))),
    }
}

fn describe_decision(d: &Decision) -> String {
    format!(
        "{:?} by {}={} (lid {:?}, external displays {:?})",
        d.kind,
        d.provenance.setting,
        d.provenance.value,
        d.provenance.lid,
        d.provenance.external_displays
    )
}

/// Lets a waiting Stop hook go, with the reply when the session goes on.
fn answer_hook(
    fx: &mut Vec<Effect>,
    id: u64,
    key: SessionKey,
    continuation: Option<String>,
    status: AskStatus,
) {
    fx.push(Effect::AnswerHook {
        id,
        key,
        continuation,
        status,
    });
}

fn log(fx: &mut Vec<Effect>, name: &str, key: Option<&SessionKey>, detail: &str) {
    fx.push(Effect::Log(LogEvent {
        name: name.to_owned(),
        key: key.cloned(),
        detail: detail.to_owned(),
    }));
}
