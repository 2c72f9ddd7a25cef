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
use crate::clamshell::{Clamshell, ClamshellRule, Stop, ThermalState, Verdict};
use crate::event::{
    AgentEvent, CLOSED_LID_ASK_REASON, Decision, EventKind, Lid, closed_lid_asks,
    closed_lid_decision,
};
use crate::protection::{Inhibit, Pause, ProtectionPlan, why_text};
use crate::provider::Provider;
use crate::session::{PendingWork, Session, SessionKey, SoftLock, StopKind};
use crate::settings::{FollowUpState, Settings, SuspendMode};
use crate::suspend::{
    Battery, EMERGENCY_RETRY, Machine, PendingSuspend, SOUND_TIMEOUT, SuspendPhase, SuspendReason,
    SuspendRequest, TemperatureReading, WEBHOOK_TIMEOUT, clamped_threshold,
};
use crate::webhook::{EventType, Payload, prompt_preview, with_session};

mod agent;
mod ask;
mod machine;
mod pause;
mod sessions;
mod suspend;
mod wake_up;

/// The `who` lidguard gives the OS for its locks.
pub const WHO: &str = "lidguard";

/// The soft-lock reason of the inactivity timeout, before the minutes.
pub const TIMEOUT_SOFT_LOCK_PREFIX: &str = "session-timeout-expired:";

/// The most sessions one place elsewhere (a relay's `via`: an ssh host, a container) may keep
/// here at once; a new one beyond it is refused, so a far side cannot make the daemon's work
/// grow without bound.
pub const MAX_SESSIONS_PER_PLACE: usize = 32;

/// The longest a session on another machine (one with a relay's `via`) holds this one without
/// a word from it, whatever `session-timeout-minutes` says (off included): its processes and
/// transcript cannot be watched from here, and a relay can stay connected long after the agent
/// went quiet. No agent tool call runs this long without a hook; longer silence is a wait for
/// the user or an agent gone.
pub const RELAYED_SILENCE_MINUTES: u32 = 60;

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
    /// The tool that runs the agent's hooks when it is not the agent (see [`Session::run_by`]).
    pub run_by: Option<String>,
    /// The relay the session comes through (see [`Session::via`]).
    pub via: Option<String>,
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
    /// above the floor or AC power returns; with a closed lid that means sleep, the machine is
    /// put to sleep (see [`crate::clamshell`]).
    Battery(Option<Battery>),
    /// What the daemon read of the thermal state (`None`: the OS gives none). At serious or
    /// worse, with the temperature guard on, protection is released the same way.
    Thermal(Option<ThermalState>),
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
    /// The user pauses protection until this moment (`None`: until resumed).
    Pause {
        /// When protection comes back by itself.
        until: Option<Timestamp>,
    },
    /// The user takes protection back before a pause ends.
    Resume,
    /// The pause the last daemon kept (applied before [`Input::Restore`], so the sessions it
    /// covers are never held): it goes on, and one whose time ran out meanwhile ends at once.
    RestorePause(Pause),
    /// The user cancels the suspend on its way.
    CancelSuspend,
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
    SaveSession(Box<Session>),
    /// Forget this session in the store.
    DeleteSession(SessionKey),
    /// Persist the user's pause (`None`: none in force), so a restarted daemon keeps it.
    SavePause(Option<Pause>),
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
    /// The agent's own wake-up, too far ahead to hold the machine for, when it had one.
    pub wakes_at: Option<Timestamp>,
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
    thermal: Option<ThermalState>,
    /// How the OS treats a closed lid with a display (the daemon's platform says).
    rule: ClamshellRule,
    /// When the battery floor or the heat last put the machine to sleep (asked again after
    /// [`EMERGENCY_RETRY`] while the reason lasts and the lid stays closed).
    guard_slept_at: Option<Timestamp>,
    pending_suspend: Option<PendingSuspend>,
    next_suspend_id: u64,
    last_emergency_at: Option<Timestamp>,
    /// Protection paused by the user.
    pause: Option<Pause>,
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
        Registry::with_rule(settings, ClamshellRule::default())
    }

    /// An empty registry for an OS that treats a closed lid with a display by `rule`.
    pub fn with_rule(settings: Settings, rule: ClamshellRule) -> Registry {
        Registry {
            settings,
            sessions: BTreeMap::new(),
            ended: VecDeque::new(),
            protection: None,
            exit_at: None,
            machine: Machine::UNKNOWN,
            battery: None,
            thermal: None,
            rule,
            guard_slept_at: None,
            pending_suspend: None,
            next_suspend_id: 1,
            last_emergency_at: None,
            pause: None,
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

    /// The thermal state as last read.
    pub fn thermal(&self) -> Option<ThermalState> {
        self.thermal
    }

    /// The lid, displays and power source as last observed, under the OS's rule.
    pub fn clamshell(&self) -> Clamshell {
        Clamshell {
            lid: self.machine.lid,
            external_displays: self.machine.external_displays,
            on_battery: self.battery.map(|b| b.on_battery),
            rule: self.rule,
        }
    }

    /// Why the hold ends although agents may work (the battery floor first), or `None`.
    pub fn stop_reason(&self) -> Option<Stop> {
        self.battery_floor_reached()
            .map(Stop::BatteryFloor)
            .or_else(|| self.thermal_pressure().map(Stop::Thermal))
    }

    /// What becomes of the hold while agents work: held, released, or released with the
    /// machine put to sleep.
    pub fn verdict(&self) -> Verdict {
        crate::clamshell::verdict(&self.clamshell(), self.stop_reason().as_ref())
    }

    /// Why protection is released for the heat, or `None` when it is not: a serious thermal
    /// state or worse while the temperature guard is on.
    pub fn thermal_pressure(&self) -> Option<String> {
        let state = self
            .thermal
            .filter(|t| t.pressing())
            .filter(|_| self.settings.emergency_hibernation_on_high_temperature)?;
        Some(format!("the thermal state is {state}"))
    }

    /// Whether the daemon should read the thermal state: the temperature guard is on and
    /// protection is held (the OS's own thermal sleep is off while lidguard holds a lid).
    pub fn thermal_watch_wanted(&self) -> bool {
        self.settings.emergency_hibernation_on_high_temperature
            && (self.protection.is_some() || self.thermal_pressure().is_some())
    }

    /// The user's pause of protection, if one is in force.
    pub fn pause_in_force(&self) -> Option<Pause> {
        self.pause
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
            && self.clamshell().sleeps()
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

    /// The earliest moment at which [`Input::Tick`] has something to do.
    pub fn next_deadline(&self) -> Option<Timestamp> {
        // A suspend on its way or a pause the user set outlives the idle exit.
        let exit_at = self
            .exit_at
            .filter(|_| self.pending_suspend.is_none() && self.pause.is_none());
        self.sessions
            .values()
            .filter_map(|s| self.session_deadline(s))
            .chain(exit_at)
            .chain(self.pending_suspend.as_ref().map(|p| p.due_at))
            .chain(self.pause.and_then(|p| p.until))
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
                self.tick_pause(now, &mut fx);
                self.tick(now, &mut fx);
                Reply::Done
            }
            Input::Machine(machine) => {
                self.observe(machine, &mut fx);
                self.guard(now, &mut fx);
                Reply::Done
            }
            Input::Battery(battery) => {
                let was = self.battery_floor_reached();
                self.battery = battery;
                self.battery_floor_changed(was, &mut fx);
                self.guard(now, &mut fx);
                Reply::Done
            }
            Input::Thermal(thermal) => {
                let was = self.thermal_pressure();
                self.thermal = thermal;
                self.thermal_pressure_changed(was, &mut fx);
                self.guard(now, &mut fx);
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
                let was_hot = self.thermal_pressure();
                self.settings = *settings;
                log(&mut fx, "settings-updated", None, "");
                self.battery_floor_changed(was, &mut fx);
                self.thermal_pressure_changed(was_hot, &mut fx);
                self.guard(now, &mut fx);
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
            Input::Pause { until } => self.pause(until, now, &mut fx),
            Input::Resume => self.resume("resumed by the user", &mut fx),
            Input::RestorePause(pause) => self.restore_pause(pause, now, &mut fx),
            Input::CancelSuspend => self.cancel_by_user(&mut fx),
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
