//! The runtime task: owns the registry, turns requests into inputs, carries out effects, keeps
//! the timers, and shuts down cleanly.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use jiff::Timestamp;
use lidguard_core::ask::{AskOutcome, AskStatus};
use lidguard_core::event::{AgentEvent, Decision, EventKind, Lid};
use lidguard_core::protection::ProtectionPlan;
use lidguard_core::registry::{
    Effect, Input, LogEvent, Registry, RemoveSelector, Reply, StartSession, StopSession,
};
use lidguard_core::session::{Session, SessionKey};
use lidguard_core::settings::{Os, Settings};
use lidguard_core::suspend::{Machine, TEMPERATURE_INTERVAL};
use lidguard_core::webhook::EventType;
use lidguard_ipc::Places;
use lidguard_ipc::protocol::{
    CleanupStatus, MovedAside, Outcome, ProtectionStatus, Request, Response, SessionRef,
    SessionStatus, Status, StoreStatus,
};
use lidguard_ipc::stream::{
    Authority, Observation, Provenance, STREAM_VERSION, Source, StreamEvent, Verdict, Visibility,
};
use lidguard_platform::power::{HeldProtection, Inhibit, PowerControl, PowerError};
use lidguard_platform::sources::{LidState, Roots};
use lidguard_store::{EventRow, SessionRowKey, Store, StoreWrite};
use tokio::sync::{mpsc, oneshot};

use crate::server::{self, Answer, Job, Then};
use crate::{DaemonError, InstanceLock};

mod phone;

/// Deadlines are wall-clock times; sleeping at most this long re-reads the clock often enough
/// that a suspend/resume (which stops the monotonic clock) never delays a timer for long.
const MAX_SLEEP: Duration = Duration::from_secs(30);

/// How often a failed protection acquisition is retried while sessions want it.
const PROTECTION_RETRY: Duration = Duration::from_secs(30);

/// How often the lid and displays are read while sessions exist or a suspend is pending, when
/// one of them has no change signal ([`crate::machine_watch`]); with signals they are read only
/// when they change, and when a decision needs them.
const MACHINE_FALLBACK_POLL: Duration = Duration::from_secs(15);

/// How long database writes wait, gathered, after the request that caused them: a hook gets
/// its answer without waiting for the disk (nor for the CPU it shares with the daemon), and a
/// burst of events costs one transaction. Any other request (`status`, or the CLI's ping
/// before it reads the database) writes them first.
const WRITE_DELAY: Duration = Duration::from_millis(20);

/// How long after its own suspend request the OS's sleep announcement is taken as lidguard's.
const OWN_SUSPEND_WINDOW: Duration = Duration::from_secs(60);

/// The longest the post-stop (or follow-up) sound may play.
pub(crate) const SOUND_LIMIT: Duration = Duration::from_secs(60);

/// Runs the daemon: binds the socket, restores sessions, serves until exit.
pub(crate) async fn serve(places: Places, lock: InstanceLock) -> Result<(), DaemonError> {
    let os = Os::current();
    let settings_path = places.settings_file();
    let (settings, settings_error) = match lidguard_ipc::settings_file::load_or_default(
        &settings_path,
        os,
    ) {
        Ok(settings) => (settings, None),
        Err(e) => {
            tracing::error!(error = %e, "settings file unusable; running with defaults until it is fixed");
            (Settings::defaults_for(os), Some(e.to_string()))
        }
    };
    let (store, store_error, store_moved_aside) = open_store(&places);
    // Windows (the lid-close action) and macOS (SleepDisabled, hibernatemode) change OS policy
    // that needs a durable backup; Linux's locks end with the daemon.
    let backups = if cfg!(any(windows, target_os = "macos")) {
        match crate::StoreBackups::open(&places) {
            Ok(backups) => {
                Some(Arc::new(backups) as Arc<dyn lidguard_platform::lid_action::PolicyBackups>)
            }
            Err(e) => {
                tracing::error!(error = %e, "no durable place for policy backups; the lid-close policy stays as it is");
                None
            }
        }
    } else {
        None
    };
    let power = lidguard_platform::power::connect_keeping(backups).await;
    match &power {
        Ok(p) => tracing::info!(backend = %p.describe(), "keep-awake backend ready"),
        Err(e) => tracing::warn!(reason = %e, "keep-awake protection unavailable"),
    }

    let (listener, socket_activated) = server::listen(&places.socket()).map_err(|e| {
        DaemonError::Setup(format!(
            "cannot listen on {}: {e}",
            places.socket().display()
        ))
    })?;
    tracing::info!(pid = std::process::id(), socket = %places.socket().display(), lock = %lock.path().display(), "daemon started");

    let (internal_tx, mut internal) = mpsc::channel::<Input>(64);
    let (records_tx, mut records) = mpsc::unbounded_channel::<Attempt>();
    let (gone_tx, mut hooks_gone) = mpsc::unbounded_channel::<(SessionKey, u64)>();
    let (fs_tx, mut fs_events) = mpsc::unbounded_channel::<crate::watch::FsChange>();
    let (left_tx, mut followers_left) = mpsc::unbounded_channel::<()>();
    let (news_tx, mut phone_news) = mpsc::unbounded_channel::<crate::remote::News>();
    let watchers = crate::watch::Watchers::new(internal_tx.clone(), fs_tx);
    let mut transcript_poll = tokio::time::interval(crate::watch::TRANSCRIPT_POLL);
    transcript_poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut flush_at: Option<tokio::time::Instant> = None;
    let mut writes_due: Option<tokio::time::Instant> = None;
    let mut was_watching = false;
    let mut machine_poll = tokio::time::interval(MACHINE_FALLBACK_POLL);
    machine_poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut temperature_poll = tokio::time::interval(
        Duration::try_from(TEMPERATURE_INTERVAL).unwrap_or(Duration::from_secs(10)),
    );
    temperature_poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let roots = Roots::from_env();
    let (machine_tx, mut machine_changes) = mpsc::unbounded_channel::<()>();
    let (sleep_tx, mut sleeps) = mpsc::unbounded_channel::<bool>();
    if let Ok(power) = &power {
        let watched = power.watch_sleep(sleep_tx).await;
        tracing::debug!(watched, "the OS's sleep announcements");
    }
    let machine_watch =
        crate::machine_watch::MachineWatch::start(&roots, power.as_ref().ok(), machine_tx).await;
    tracing::info!(
        lid = machine_watch.lid_signalled,
        displays = machine_watch.displays_signalled,
        "lid and display changes signalled (else polled every {} s while needed)",
        MACHINE_FALLBACK_POLL.as_secs()
    );
    let mut rt = Runtime {
        registry: Registry::new(settings),
        places,
        store,
        store_error,
        store_moved_aside,
        power: power.map_err(|e| e.to_string()),
        held: None,
        held_plan: None,
        power_error: None,
        last_attempt: None,
        roots,
        machine_watch,
        started_at: Timestamp::now(),
        settings_error,
        exit: false,
        internal: internal_tx,
        last_temperature: None,
        watchers,
        webhooks: Vec::new(),
        asking: None,
        waiting_hooks: HashMap::new(),
        next_wait: 0,
        hooks_gone: gone_tx,
        records: records_tx,
        writes: Vec::new(),
        stream: crate::stream::Hub::new(left_tx),
        held_back: None,
        exit_deferred: false,
        own_suspend_at: None,
        phone: phone::Phone::new(news_tx),
    };
    // The stream goes on from what the last daemon kept: `events --since` spans restarts.
    if let Some(store) = &rt.store {
        match store.load_stream_lines() {
            Ok(lines) => rt.stream.restore(lines),
            Err(e) => tracing::warn!(error = %e, "cannot load the kept event stream"),
        }
    }
    let restored = rt.recover_sessions();
    rt.phone_restored(&restored);
    rt.apply(Input::Restore(restored)).await;

    let (jobs_tx, mut jobs) = mpsc::channel::<Job>(256);
    let connections = Arc::new(());
    let acceptor = tokio::spawn(server::accept_loop(
        listener,
        jobs_tx,
        Arc::clone(&connections),
    ));
    let mut stop = StopSignals::new()?;

    while !rt.exit {
        let sleep = rt.sleep_duration();
        tokio::select! {
            job = jobs.recv() => {
                let Some((request, reply)) = job else { break };
                let answer = rt.handle(request).await;
                let _ = reply.send(answer);
            }
            () = tokio::time::sleep(sleep) => {
                // A suspend about to be decided sees the lid as it is now.
                if rt.registry.pending_suspend().is_some_and(|p| p.due_at <= Timestamp::now()) {
                    rt.observe_machine().await;
                }
                rt.apply(Input::Tick).await;
                rt.retry_protection().await;
            }
            Some(input) = internal.recv() => { rt.apply(input).await; }
            Some(attempt) = records.recv() => rt.record_attempt(&attempt),
            Some((key, wait)) = hooks_gone.recv() => rt.hook_left(key, wait).await,
            Some(()) = followers_left.recv() => rt.follower_left(),
            Some(news) = phone_news.recv() => rt.phone_news(news).await,
            Some(starting) = sleeps.recv() => rt.os_sleep(starting).await,
            Some(change) = fs_events.recv() => {
                rt.watchers.changed(change);
                if rt.watchers.needs_resync() {
                    rt.watchers.move_watches();
                }
                if rt.watchers.has_dirty() && flush_at.is_none() {
                    flush_at = Some(tokio::time::Instant::now() + crate::watch::DEBOUNCE);
                }
            }
            () = async { tokio::time::sleep_until(flush_at.unwrap_or_else(tokio::time::Instant::now)).await }, if flush_at.is_some() => {
                flush_at = None;
                rt.read_transcripts().await;
            }
            _ = transcript_poll.tick(), if rt.watchers.needs_poll() => {
                rt.watchers.poll();
                rt.read_transcripts().await;
            }
            Some(()) = machine_changes.recv() => {
                while machine_changes.try_recv().is_ok() {}
                if rt.watching_machine() {
                    rt.observe_machine().await;
                }
            }
            _ = machine_poll.tick(), if rt.watching_machine() && !rt.machine_watch.complete() => {
                rt.observe_machine().await;
            }
            _ = temperature_poll.tick(), if rt.registry.temperature_watch_wanted() => {
                rt.read_temperature().await;
            }
            () = async { tokio::time::sleep_until(writes_due.unwrap_or_else(tokio::time::Instant::now)).await }, if writes_due.is_some() => {
                writes_due = None;
                rt.flush_writes();
            }
            why = stop.recv() => { tracing::info!("{why}: shutting down"); break; }
        }
        if rt.registry.sessions().next().is_some() {
            // Work came back: the idle exit is the registry's to schedule again.
            rt.exit_deferred = false;
        }
        let watching = rt.watching_machine();
        rt.machine_watch.set_active(watching);
        if watching && !was_watching {
            // Sessions appeared: from now on changes are signalled; read where things stand.
            rt.observe_machine().await;
        }
        was_watching = watching;
        if rt.writes.is_empty() {
            writes_due = None;
        } else if writes_due.is_none() {
            writes_due = Some(tokio::time::Instant::now() + WRITE_DELAY);
        }
    }
    rt.flush_writes();

    // Stop taking requests, let answers already given reach their clients (requests still
    // queued are told the daemon is shutting down), then give everything back. Stop hooks
    // waiting for ask before sleep are let go first (their connections answer "no reply").
    rt.waiting_hooks.clear();
    rt.phone.let_go();
    rt.stream.close();
    if let Some((_, canceled)) = rt.asking.take() {
        canceled.store(true, Ordering::Relaxed);
    }
    drop(jobs);
    acceptor.abort();
    let _ = acceptor.await;
    let drained = tokio::time::timeout(Duration::from_secs(2), async {
        while Arc::strong_count(&connections) > 1 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    let _ = drained.await;
    // A socket systemd passed stays systemd's: it starts the daemon again on the next request.
    if !socket_activated {
        let _ = std::fs::remove_file(rt.places.socket());
    }
    let sending = std::mem::take(&mut rt.webhooks);
    let _ = tokio::time::timeout(crate::webhook::TIMEOUT + Duration::from_secs(1), async {
        for task in sending {
            let _ = task.await;
        }
    })
    .await;
    rt.release_all();
    rt.flush_writes();
    tracing::info!("daemon stopped");
    drop(lock);
    Ok(())
}

fn open_store(places: &Places) -> (Option<Store>, Option<String>, Option<MovedAside>) {
    let path = places.database();
    if let Err(e) = lidguard_files::private::ensure_dir(&places.state_dir) {
        let reason = format!(
            "cannot create the state directory {}: {e}",
            places.state_dir.display()
        );
        tracing::error!(%reason, "running without the database");
        return (None, Some(reason), None);
    }
    match Store::open_or_recover(&path) {
        Ok((store, moved)) => (
            Some(store),
            None,
            moved.map(|m| MovedAside {
                path: m.to.display().to_string(),
                reason: m.reason,
            }),
        ),
        Err(e) => {
            tracing::error!(error = %e, "running without the database; sessions are not persisted");
            (None, Some(e.to_string()), None)
        }
    }
}

struct Runtime {
    registry: Registry,
    places: Places,
    store: Option<Store>,
    /// Why there is no store.
    store_error: Option<String>,
    /// A damaged database moved aside at start.
    store_moved_aside: Option<MovedAside>,
    /// The backend, or why there is none.
    power: Result<Arc<dyn PowerControl>, String>,
    held: Option<Box<dyn HeldProtection>>,
    /// The plan `held` was acquired for.
    held_plan: Option<ProtectionPlan>,
    /// Why the last acquisition failed.
    power_error: Option<String>,
    last_attempt: Option<std::time::Instant>,
    /// Where the lid, displays and temperatures are read (overridable for tests and debugging;
    /// processes are always read from the real `/proc`).
    roots: Roots,
    /// The signals that the lid or the displays changed.
    machine_watch: crate::machine_watch::MachineWatch,
    started_at: Timestamp,
    settings_error: Option<String>,
    exit: bool,
    /// Inputs that come back from work done off the actor (a sound finished playing).
    internal: mpsc::Sender<Input>,
    /// When the emergency guard last read the temperature.
    last_temperature: Option<std::time::Instant>,
    /// The agents' processes and transcripts.
    watchers: crate::watch::Watchers,
    /// Webhooks still being sent (the daemon's exit waits for them, 5 s at most).
    webhooks: Vec<tokio::task::JoinHandle<()>>,
    /// Ask before sleep: the pending suspend whose exchange runs, and its stop switch.
    asking: Option<(u64, Arc<AtomicBool>)>,
    /// Ask before sleep: Stop hooks waiting for their second answer, each with its wait's id.
    waiting_hooks: HashMap<SessionKey, (u64, oneshot::Sender<Response>)>,
    /// The id of the latest wait.
    next_wait: u64,
    /// Where a waiting hook's connection reports its end.
    hooks_gone: mpsc::UnboundedSender<(SessionKey, u64)>,
    /// Webhook attempts finished off the actor, for the event log.
    records: mpsc::UnboundedSender<Attempt>,
    /// Database writes waiting for the end of the current step ([`Runtime::flush_writes`]).
    writes: Vec<StoreWrite>,
    /// The event stream (`lidguard events`).
    stream: crate::stream::Hub,
    /// While a hook event is applied, the daemon events it causes wait here, so the stream
    /// shows the observation before its consequences.
    held_back: Option<Vec<StreamEvent>>,
    /// The idle exit came while someone follows the stream: it happens when they leave.
    exit_deferred: bool,
    /// When lidguard last asked the OS to suspend (its own sleep announcements are not a
    /// user's suspend).
    own_suspend_at: Option<std::time::Instant>,
    /// The phone (ntfy): remote decisions, ask before sleep over ntfy, notices.
    phone: phone::Phone,
}

impl Runtime {
    /// Sessions from the store whose watched process still lives; the rest are dropped, since
    /// nothing would ever end them.
    fn recover_sessions(&mut self) -> Vec<Session> {
        let Some(store) = &self.store else {
            return Vec::new();
        };
        let rows = match store.load_sessions() {
            Ok(rows) => rows,
            Err(e) => {
                tracing::error!(error = %e, "cannot load sessions from the database");
                return Vec::new();
            }
        };
        let mut kept = Vec::new();
        for row in rows {
            let key = SessionRowKey {
                provider: &row.provider,
                session_id: &row.session_id,
                provider_name: &row.provider_name,
            };
            let session: Option<Session> = serde_json::from_str(&row.data_json)
                .inspect_err(|e| tracing::warn!(error = %e, session = %row.session_id, "unreadable stored session"))
                .ok();
            let alive = session
                .as_ref()
                .and_then(|s| s.watched_pid)
                .is_some_and(|pid| lidguard_platform::process::is_alive(&Roots::system(), pid));
            match session {
                Some(session) if alive => kept.push(session),
                _ => {
                    tracing::info!(session = %row.session_id, provider = %row.provider, "dropped a stored session: its process is gone or unknown");
                    if let Err(e) = store.delete_session(&key) {
                        tracing::warn!(error = %e, "cannot delete a stored session");
                    }
                }
            }
        }
        kept
    }

    fn sleep_duration(&self) -> Duration {
        let until_deadline = self.registry.next_deadline().map(|deadline| {
            let secs = deadline
                .duration_since(Timestamp::now())
                .as_secs_f64()
                .max(0.0);
            Duration::try_from_secs_f64(secs).unwrap_or(MAX_SLEEP)
        });
        let retry =
            (self.held_plan.as_ref() != self.registry.protection()).then_some(PROTECTION_RETRY);
        [Some(MAX_SLEEP), until_deadline, retry]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(MAX_SLEEP)
    }

    async fn handle(&mut self, request: Request) -> Answer {
        match request {
            Request::Hook { events } => self.hook(events).await,
            Request::Events {
                filter,
                replay,
                follow,
            } => {
                let following = self.stream.follow(filter, &replay, follow);
                let message = if follow { "following" } else { "replay" };
                (
                    Response::ok(Outcome::Done, message),
                    Some(Then::Follow(following)),
                )
            }
            request => (self.handle_plain(request).await, None),
        }
    }

    /// Every request but a hook's: one answer, given with everything written first (readers of
    /// the database ping the daemon before they read).
    async fn handle_plain(&mut self, request: Request) -> Response {
        self.flush_writes();
        match request {
            Request::Ping => Response::ok(Outcome::Done, "pong"),
            Request::Status => {
                let mut answer = Response::ok(Outcome::Done, "status");
                answer.status = Some(Box::new(self.status().await));
                answer
            }
            Request::Start {
                session,
                cwd,
                transcript_path,
                watched_pid,
            } => {
                let key = session.key();
                let reply = self
                    .apply(Input::Start(StartSession {
                        key: key.clone(),
                        cwd,
                        transcript_path,
                        watched_pid,
                    }))
                    .await;
                let mut answer = self.durable_answer(&reply, &key);
                answer.protection = Some(Box::new(self.protection_status()));
                answer
            }
            Request::Stop {
                session,
                kind,
                end_reason,
                pending_work,
            } => {
                let key = session.key();
                self.observe_machine().await;
                let reply = self
                    .apply(Input::Stop(StopSession {
                        key: key.clone(),
                        kind,
                        end_reason,
                        pending_work,
                        stop_hook: None,
                    }))
                    .await;
                self.durable_answer(&reply, &key)
            }
            Request::Activity { session, reason } => {
                let key = session.key();
                let reply = self
                    .apply(Input::Activity {
                        key: key.clone(),
                        reason,
                    })
                    .await;
                self.answer(&reply, &key)
            }
            Request::SoftLock { session, reason } => {
                let key = session.key();
                let reply = self
                    .apply(Input::SoftLock {
                        key: key.clone(),
                        reason,
                    })
                    .await;
                self.answer(&reply, &key)
            }
            Request::RemoveSession {
                all,
                session_id,
                provider,
                provider_name,
            } => {
                let selector = match (all, session_id) {
                    (true, _) => RemoveSelector::All,
                    (false, Some(session_id)) => RemoveSelector::Matching {
                        session_id,
                        provider,
                        provider_name,
                    },
                    (false, None) => {
                        return Response::error("remove-session needs `all` or a `sessionId`");
                    }
                };
                let reply = self.apply(Input::Remove(selector)).await;
                let Reply::Removed(keys) = reply else {
                    return Response::error("unexpected reply to remove-session");
                };
                let mut answer = Response::ok(
                    Outcome::Removed,
                    match keys.len() {
                        0 => "no matching session".to_owned(),
                        1 => "removed 1 session".to_owned(),
                        n => format!("removed {n} sessions"),
                    },
                );
                answer.sessions = keys.iter().map(session_ref).collect();
                self.made_durable(answer)
            }
            Request::CleanupOrphans => {
                let gone: Vec<SessionKey> = self
                    .registry
                    .sessions()
                    .filter(|s| {
                        s.watched_pid.is_some_and(|pid| {
                            !lidguard_platform::process::is_alive(&Roots::system(), pid)
                        })
                    })
                    .map(|s| s.key.clone())
                    .collect();
                self.apply(Input::ProcessesGone(gone.clone())).await;
                let mut answer = Response::ok(
                    Outcome::Removed,
                    match gone.len() {
                        0 => "no orphaned session".to_owned(),
                        1 => "cleaned up 1 orphaned session".to_owned(),
                        n => format!("cleaned up {n} orphaned sessions"),
                    },
                );
                answer.sessions = gone.iter().map(session_ref).collect();
                self.made_durable(answer)
            }
            Request::Hook { .. } | Request::Events { .. } => {
                Response::error("hook and events requests are handled above")
            }
            Request::Settings { settings } => {
                let mut settings = *settings;
                settings.normalize(Os::current());
                if let Err(errors) = settings.validate(Os::current()) {
                    let reasons: Vec<String> = errors.iter().map(ToString::to_string).collect();
                    return Response::error(format!("settings rejected: {}", reasons.join("; ")));
                }
                self.settings_error = None;
                self.apply(Input::Settings(Box::new(settings))).await;
                Response::ok(Outcome::Done, "settings applied")
            }
        }
    }

    /// The answer to a session change from the command line, given only once the change is on
    /// disk: a daemon killed right after answering loses nothing it acknowledged.
    fn durable_answer(&mut self, reply: &Reply, key: &SessionKey) -> Response {
        let answer = self.answer(reply, key);
        self.made_durable(answer)
    }

    /// Writes what the request changed before `answer` goes out; a write that fails is said in
    /// the answer (the change holds in memory, but would not survive a restart).
    fn made_durable(&mut self, mut answer: Response) -> Response {
        if let Err(e) = self.write_now(true) {
            answer.message = format!("{} (not saved to the database: {e})", answer.message);
        }
        answer
    }

    fn answer(&self, reply: &Reply, key: &SessionKey) -> Response {
        let (outcome, message) = reply_outcome(reply);
        let mut answer = Response::ok(outcome, format!("session {key}: {message}"));
        answer.sessions = vec![session_ref(key)];
        answer
    }

    /// Records and applies a hook's events; answers with the first decision made. A Stop the
    /// registry asks to wait (ask before sleep) gets a second answer later.
    async fn hook(&mut self, events: Vec<AgentEvent>) -> Answer {
        let mut decision = None;
        let mut last = Reply::Done;
        let mut wait = None;
        let mut remote = None;
        // The event the hook renders a decision for (as the hook itself picks it).
        let decision_event = events
            .iter()
            .find(|e| e.kind.wants_decision())
            .map(|e| e.hook_event.clone());
        for event in events {
            let now = Timestamp::now();
            self.write(StoreWrite::HookReceipt {
                provider: event.provider.as_str().to_owned(),
                event: event.hook_event.clone(),
                at: now,
            });
            // A stop may schedule a suspend: decide it on the lid as it is now, not as the last
            // 2 s poll saw it.
            if matches!(
                event.kind,
                EventKind::TurnStopped { .. } | EventKind::SessionEnded { .. }
            ) {
                self.observe_machine().await;
            }
            // Lid and displays are read only when a decision may depend on them.
            let (lid, external_displays) = if event.kind.wants_decision() {
                self.closed_lid_state().await
            } else {
                (Lid::Unknown, None)
            };
            let key = event.key();
            let locked_before = self.soft_lock_reason(&key);
            self.held_back = Some(Vec::new());
            let applied = self
                .apply_outcome(Input::Agent {
                    event: Box::new(event.clone()),
                    lid,
                    external_displays,
                })
                .await;
            let consequences = self.held_back.take().unwrap_or_default();
            // Policy `remote`: the phone decides; the event is logged with that decision.
            let policy = self
                .registry
                .settings()
                .closed_lid_permission_request_decision;
            let to_phone = decision.is_none()
                && applied.decision.is_none()
                && remote.is_none()
                && lidguard_core::event::closed_lid_remote(
                    &event.kind,
                    policy,
                    lid,
                    external_displays,
                );
            if to_phone {
                let outcome = reply_outcome(&applied.reply).0;
                remote = Some((event.clone(), (lid, external_displays), now, outcome));
            } else {
                let outcome = reply_outcome(&applied.reply).0;
                self.log_hook_event(&event, (outcome, applied.decision.as_ref()), now, None);
            }
            // What the hook prints: the first decision, rendered for the event it belongs to.
            let stdout = match (&decision, &applied.decision, &decision_event) {
                (None, Some(d), Some(name)) => lidguard_providers::render(event.provider, name, d),
                _ => None,
            };
            let locked_after = self.soft_lock_reason(&key);
            let mut authority = match &applied.decision {
                Some(d) => Authority::from_decision(d),
                None => soft_lock_authority(
                    locked_before.as_deref(),
                    locked_after.as_deref(),
                    self.registry.settings(),
                    (lid, external_displays),
                ),
            };
            authority.outcome = Some(outcome_name(&applied.reply));
            self.publish(StreamEvent {
                v: STREAM_VERSION,
                observation: Observation {
                    id: 0,
                    at: now,
                    source: Source::Hook,
                    kind: event.kind.name().to_owned(),
                    provider: Some(event.provider),
                    provider_name: None,
                    session_id: Some(event.session_id.clone()),
                    hook_event: Some(event.hook_event.clone()),
                    tool: event.tool_name.clone(),
                    cwd: event.cwd.clone(),
                    payload_digest: event.payload_digest.clone(),
                    detail: None,
                },
                authority,
                visibility: Visibility {
                    stdout,
                    logged: self.store.is_some(),
                    webhooks: applied.webhooks,
                },
            });
            for consequence in consequences {
                self.publish(consequence);
            }
            decision = decision.or(applied.decision);
            if let Some(until) = applied.hook_waits_until {
                wait = Some((event.key(), until));
            }
            last = applied.reply;
        }
        let (outcome, message) = reply_outcome(&last);
        let mut answer = Response::ok(outcome, message);
        answer.decision = decision;
        if let Some((event, machine, at, outcome)) = remote {
            return self.ask_phone(event, machine, (at, outcome), answer);
        }
        let Some((key, until)) = wait else {
            return (answer, None);
        };
        let (tx, rx) = oneshot::channel();
        // The connection holds `present` while it waits; when it ends, `gone` says so (no
        // polling: the wait is dropped the moment the agent stops waiting).
        let (present, ended) = oneshot::channel::<()>();
        self.next_wait += 1;
        let wait = self.next_wait;
        let gone = self.hooks_gone.clone();
        let watched = key.clone();
        tokio::spawn(async move {
            let _ = ended.await;
            let _ = gone.send((watched, wait));
        });
        // One waiting hook per session: an older one (which the registry let go already) is
        // dropped, and its connection answers without a reply.
        self.waiting_hooks.insert(key, (wait, tx));
        answer.wait_until = Some(until);
        answer.message = format!(
            "{} — ask before sleep: wait for the outcome",
            answer.message
        );
        (
            answer,
            Some(Then::Wait(crate::server::Waiting {
                answer: rx,
                present,
            })),
        )
    }

    /// The lid, through logind when it answers, else from the files.
    async fn lid_state(&self) -> LidState {
        match &self.power {
            Ok(power) => {
                lidguard_platform::sources::lid_state_using(power.as_ref(), &self.roots).await
            }
            Err(_) => lidguard_platform::sources::lid_state_from_files(&self.roots),
        }
    }

    /// The lid and the external display count, from the same sources the suspend decision
    /// uses: internal panels never count, so a closed laptop's own panel does not hide the lid.
    async fn closed_lid_state(&self) -> (Lid, Option<u32>) {
        let lid = self.lid_state().await;
        let lid = match lid {
            LidState::Open => Lid::Open,
            LidState::Closed => Lid::Closed,
            LidState::Unknown => Lid::Unknown,
        };
        (
            lid,
            Some(lidguard_platform::sources::visible_displays(
                &self.roots,
                true,
            )),
        )
    }

    /// Sends an event to the stream, or holds it back while a hook event is applied.
    fn publish(&mut self, event: StreamEvent) {
        if let Some(held) = &mut self.held_back {
            held.push(event);
            return;
        }
        let kept = self.stream.publish(event);
        self.write(StoreWrite::StreamLine {
            id: kept.id,
            line: kept.line,
        });
        if let Some(through) = kept.dropped_through {
            self.write(StoreWrite::ForgetStreamLines { through });
        }
    }

    /// A daemon event that only the stream carries (not the database's event log).
    fn publish_daemon(&mut self, kind: &str, key: Option<&SessionKey>, detail: String) {
        self.publish(daemon_event(kind, key, Some(detail)));
    }

    /// The OS announced a sleep (`starting`) or a wake-up. A sleep lidguard did not ask for
    /// while it held protection is an explicit suspend it let through (the `sleep` lock gives
    /// way while the lid is open): everything is released at once so the OS need not wait
    /// for it, and the suspend is recorded. After the wake-up protection is taken again.
    async fn os_sleep(&mut self, starting: bool) {
        if !starting {
            tracing::info!("the machine woke up (or did not sleep)");
            self.publish_daemon("resumed", None, String::new());
            let wanted = self.registry.protection().cloned();
            if wanted.is_some() && self.held.is_none() {
                self.set_protection(wanted).await;
            }
            return;
        }
        // lidguard's own request: the OS announces it too (before answering the request).
        if self
            .own_suspend_at
            .is_some_and(|at| at.elapsed() < OWN_SUSPEND_WINDOW)
        {
            return;
        }
        let Some(held) = self.held.take() else {
            return;
        };
        self.held_plan = None;
        let gave_way = held.giving_way();
        drop(held);
        let working = self
            .registry
            .sessions()
            .filter(|s| s.needs_protection())
            .count();
        tracing::info!(
            working,
            ?gave_way,
            "a suspend lidguard did not ask for: protection released for it"
        );
        self.publish_daemon(
            "protection-released",
            None,
            "released for a suspend lidguard did not ask for".into(),
        );
        let entry = lidguard_ipc::protocol::SuspendHistoryEntry {
            recorded_at: Timestamp::now(),
            suspend_mode: lidguard_core::settings::SuspendMode::Sleep
                .name()
                .to_owned(),
            reason: lidguard_core::suspend::SuspendReason::UserRequested,
            succeeded: true,
            error: None,
            active_session_count: working,
            trigger_session_count: 0,
            temperature_celsius: None,
            threshold_celsius: None,
            temperature_mode: None,
        };
        let keep = self.registry.settings().suspend_history_entry_count;
        crate::suspend::record(self.store.as_ref(), std::slice::from_ref(&entry), keep);
        self.log(&LogEvent {
            name: "suspend-by-user".to_owned(),
            key: None,
            detail: format!("{working} sessions working; lidguard let it through"),
        });
    }

    /// A follower went away: an idle exit it postponed happens now, if still due.
    fn follower_left(&mut self) {
        if self.exit_deferred
            && self.stream.followers() == 0
            && self.registry.sessions().next().is_none()
            && self.registry.pending_suspend().is_none()
        {
            tracing::info!("the last follower left: idle exit");
            self.exit = true;
        }
    }

    fn soft_lock_reason(&self, key: &SessionKey) -> Option<String> {
        self.registry
            .session(key)
            .and_then(|s| s.soft_lock.as_ref().map(|l| l.reason.clone()))
    }

    /// Logs a hook event with the decision it got (`remote`: how the phone's wait ended).
    fn log_hook_event(
        &mut self,
        event: &AgentEvent,
        (outcome, decision): (Outcome, Option<&Decision>),
        at: Timestamp,
        remote: Option<serde_json::Value>,
    ) {
        tracing::debug!(provider = %event.provider, hook = %event.hook_event, kind = event.kind.name(), session = %event.session_id, "hook event");
        if self.store.is_none() {
            return;
        }
        // The normalized event itself, without the raw payload excerpt (the log is bounded by
        // rows, not bytes) and without the owner pid (it belongs to the session).
        let mut normalized = serde_json::to_value(event).unwrap_or_default();
        if let Some(fields) = normalized.as_object_mut() {
            fields.remove("raw");
            fields.remove("ownerPid");
            fields.remove("payloadDigest");
            fields.remove("toolSummary");
            fields.remove("toolInputDigest");
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
        let row = EventRow {
            at,
            name: HOOK_EVENT.to_owned(),
            provider: Some(event.provider.as_str().to_owned()),
            session_id: Some(lidguard_ipc::stream::log_text(&event.session_id)),
            detail_json: lidguard_ipc::stream::log_detail(detail),
        };
        self.write(StoreWrite::Event(row));
    }

    /// Applies one input and carries out its effects.
    async fn apply(&mut self, input: Input) -> Reply {
        self.apply_outcome(input).await.reply
    }

    /// Applies one input, carries out its effects, and returns what the registry answered.
    async fn apply_outcome(&mut self, input: Input) -> Applied {
        let outcome = self.registry.apply(input, Timestamp::now());
        let mut webhooks = Vec::new();
        for effect in outcome.effects {
            match &effect {
                Effect::Webhook { payload, .. } => {
                    if let Some(t) = payload.event_type {
                        webhooks.push(webhook_name(t));
                    }
                }
                Effect::Ask { .. } => webhooks.push(webhook_name(EventType::StopFollowUp)),
                _ => {}
            }
            match effect {
                Effect::Protection(plan) => self.set_protection(plan).await,
                Effect::SaveSession(session) => {
                    self.phone_session_saved(&session);
                    self.save_session(&session);
                }
                Effect::DeleteSession(key) => {
                    self.phone_session_gone(&key);
                    self.delete_session(&key);
                }
                Effect::Log(event) => self.log(&event),
                Effect::Exit if self.stream.followers() > 0 => {
                    tracing::info!("idle exit postponed: the event stream has followers");
                    self.exit_deferred = true;
                }
                Effect::Exit => self.exit = true,
                Effect::PlaySound {
                    id,
                    sound,
                    volume_percent,
                } => self.play_sound(id, sound, volume_percent),
                Effect::Suspend(request) => self.suspend(&request).await,
                Effect::Webhook { id, payload } => self.send_webhook(id, *payload),
                Effect::Ask {
                    id,
                    payload,
                    reply_deadline,
                    latest,
                    sound,
                    volume_percent,
                    watched_pid,
                } => self.ask(
                    id,
                    *payload,
                    (reply_deadline, latest),
                    (sound, volume_percent),
                    watched_pid,
                ),
                Effect::AnswerHook {
                    id,
                    key,
                    continuation,
                    status,
                } => self.answer_hook(id, &key, continuation, status),
            }
        }
        let watch_processes = self.registry.settings().watch_parent_process;
        self.watchers
            .sync(self.registry.sessions(), watch_processes);
        Applied {
            reply: outcome.reply,
            decision: outcome.decision,
            hook_waits_until: outcome.hook_waits_until,
            webhooks,
        }
    }

    /// Ask before sleep: runs the exchange with the receiver off the actor; the registry hears
    /// of moved deadlines and of the outcome.
    fn ask(
        &mut self,
        id: u64,
        mut payload: lidguard_core::webhook::Payload,
        (reply_deadline, latest): (Timestamp, Timestamp),
        (sound, volume_percent): (String, Option<u8>),
        watched_pid: Option<u32>,
    ) {
        let settings = self.registry.settings();
        let url = crate::webhook::url_for(settings, EventType::StopFollowUp);
        payload.user_interface_culture = crate::webhook::culture(&payload.user_interface_culture);
        // Through ntfy too, when it is set: the first reply from either counts.
        if self.ask_on_phone(id, &payload, reply_deadline, url.is_some()) == 0 {
            let done = self.internal.clone();
            tokio::spawn(async move {
                let outcome = AskOutcome::WebhookFailed("no follow-up webhook URL".into());
                let _ = done.send(Input::AskResolved { id, outcome }).await;
            });
            return;
        }
        let Some(url) = url else {
            return;
        };
        let settings = self.registry.settings();
        let exchange = crate::ask::Exchange {
            url,
            payload,
            secret: settings.webhook_secret.clone(),
            reply_deadline,
            latest,
            sound,
            volume_percent,
            watched_pid,
        };
        let canceled = Arc::new(AtomicBool::new(false));
        if let Some((_, old)) = self.asking.replace((id, Arc::clone(&canceled))) {
            old.store(true, Ordering::Relaxed);
        }
        let report = self.internal.clone();
        let news = self.phone_news_sender();
        let records = self.records.clone();
        let mut attempt = Attempt::new(&exchange.payload, &exchange.url);
        tokio::task::spawn_blocking(move || {
            let moved = |reply_deadline| {
                let _ = report.blocking_send(Input::AskExtended { id, reply_deadline });
            };
            let outcome = crate::ask::run(exchange, &canceled, &moved);
            let stopped = canceled.load(Ordering::Relaxed);
            let result = if stopped {
                "canceled: the wait ended first".to_owned()
            } else {
                format!("{}: {}", outcome.status().as_str(), outcome.detail())
            };
            let ok = !matches!(
                outcome,
                AskOutcome::WebhookFailed(_) | AskOutcome::PollFailed(_)
            );
            attempt.finish(ok, result);
            let _ = records.send(attempt);
            if !stopped {
                let _ = news.send(crate::remote::News::AskOutcome { id, outcome });
            }
        });
    }

    /// Ask before sleep: tells the registry about waiting hooks whose connection closed.
    /// A waiting Stop hook's connection ended (its agent stopped waiting, or it got its
    /// answer): when it was still waiting, the question is dropped.
    async fn hook_left(&mut self, key: SessionKey, wait: u64) {
        if self
            .waiting_hooks
            .get(&key)
            .is_none_or(|(id, _)| *id != wait)
        {
            return;
        }
        self.waiting_hooks.remove(&key);
        tracing::info!(session = %key, "the waiting Stop hook left");
        self.apply(Input::HookGone { key }).await;
    }

    /// Gives a waiting Stop hook its second answer and stops the exchange it waited on.
    fn answer_hook(
        &mut self,
        id: u64,
        key: &SessionKey,
        continuation: Option<String>,
        status: AskStatus,
    ) {
        self.end_phone_ask(id);
        let answered_by = self.phone.answered_by.take();
        let Some((_, hook)) = self.waiting_hooks.remove(key) else {
            tracing::debug!(session = %key, "no hook waits for this ask-before-sleep outcome");
            return;
        };
        let mut line = daemon_event("hook-answered", Some(key), Some(status.as_str().to_owned()));
        if let Some(reply) = &continuation {
            line.authority = Authority {
                decision: Verdict::Continue,
                provenance: Some(Provenance {
                    setting: Some(
                        match answered_by {
                            Some(phone::NTFY) => "ntfyUrl",
                            _ => "closedLidStopFollowUpWebhookUrl",
                        }
                        .to_owned(),
                    ),
                    value: None,
                    lid: None,
                    external_displays: None,
                    reason: Some("the user replied to the ask-before-sleep question".to_owned()),
                }),
                outcome: None,
            };
            line.visibility.stdout = lidguard_providers::render_continuation(key.provider, reply);
        }
        self.publish(line);
        let mut answer = Response::ok(
            Outcome::Stopped,
            format!("session {key}: ask before sleep: {}", status.as_str()),
        );
        answer.continuation = continuation;
        if hook.send(answer).is_err() {
            tracing::warn!(session = %key, "the waiting Stop hook was gone before its answer");
        }
    }

    async fn set_protection(&mut self, plan: Option<ProtectionPlan>) {
        let Some(plan) = plan else {
            if self.held.take().is_some() {
                tracing::info!("protection released");
                self.publish_daemon("protection-released", None, "no session is working".into());
            }
            self.held_plan = None;
            self.power_error = None;
            return;
        };
        let power = match &self.power {
            Ok(power) => Arc::clone(power),
            Err(reason) => {
                let reason = reason.clone();
                if self.power_error.as_ref() != Some(&reason) {
                    let detail = format!("unavailable: {reason}");
                    self.publish_daemon("protection-failed", None, detail);
                }
                self.power_error = Some(reason);
                return;
            }
        };
        self.last_attempt = Some(std::time::Instant::now());
        let result = match power.hold(&plan).await {
            // Users may be allowed to block sleep but not lid handling: keeping the machine
            // awake matters more than the lid switch, so hold what is allowed and say so.
            Err(PowerError::Refused { what, message, .. })
                if plan.lid_switch && what == Inhibit::HandleLidSwitch.as_str() =>
            {
                let smaller = ProtectionPlan {
                    lid_switch: false,
                    ..plan.clone()
                };
                let note = format!(
                    "the lid-switch lock was refused ({message}); holding the rest without it"
                );
                power.hold(&smaller).await.map(|held| (held, Some(note)))
            }
            // Allowed to block sleep but not to delay it (an older polkit rule, say): keep the
            // machine awake as before, and say that a suspend the user asks for is refused.
            Err(PowerError::Refused { what, message, .. })
                if plan.sleep_gives_way && what == Inhibit::Sleep.as_str() =>
            {
                let blocking = ProtectionPlan {
                    sleep_gives_way: false,
                    ..plan.clone()
                };
                let note = format!(
                    "holding sleep in delay mode was refused ({message}), so it is blocked: a \
                     suspend you ask for is refused while agents work (`sudo lidguard \
                     linux-permission install` allows delay mode)"
                );
                power.hold(&blocking).await.map(|held| (held, Some(note)))
            }
            other => other.map(|held| (held, None)),
        };
        match result {
            Ok((held, note)) => {
                let what: Vec<_> = held.inhibits().iter().map(|i| i.as_str()).collect();
                tracing::info!(what = %what.join(":"), why = %plan.why, "protection held");
                if let Some(note) = &note {
                    tracing::warn!("{note}");
                }
                // The new locks are in place before the old ones go: no gap. The plan recorded
                // is the one wanted, so a refused lid switch is not retried every time.
                let detail = format!("{} ({})", what.join(":"), plan.why);
                self.held = Some(held);
                self.held_plan = Some(plan);
                self.power_error = note;
                self.publish_daemon("protection-taken", None, detail);
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot hold protection");
                if self.power_error.as_deref() != Some(&e.to_string()) {
                    self.publish_daemon("protection-failed", None, e.to_string());
                }
                self.power_error = Some(e.to_string());
            }
        }
    }

    /// Tries again when sessions want protection that is not held (logind restarted, say).
    async fn retry_protection(&mut self) {
        let wanted = self.registry.protection().cloned();
        let due = self
            .last_attempt
            .is_none_or(|t| t.elapsed() >= PROTECTION_RETRY);
        if wanted.is_some() && wanted != self.held_plan && due && self.power.is_ok() {
            self.set_protection(wanted).await;
        }
    }

    /// Reads the transcripts that changed and applies what their detectors found.
    async fn read_transcripts(&mut self) {
        for input in self.watchers.read_dirty() {
            self.apply(input).await;
        }
    }

    /// Whether the lid and displays are worth watching: sessions exist or a suspend waits.
    fn watching_machine(&self) -> bool {
        self.registry.sessions().next().is_some() || self.registry.pending_suspend().is_some()
    }

    /// Reads the lid, displays and battery and tells the registry when they changed.
    async fn observe_machine(&mut self) {
        let battery = lidguard_platform::sources::battery(&self.roots);
        if battery != self.registry.battery() {
            self.apply(Input::Battery(battery)).await;
        }
        let (lid, external_displays) = self.closed_lid_state().await;
        let machine = Machine {
            lid,
            external_displays,
        };
        let before = self.registry.machine();
        if machine != before {
            if machine.external_displays != before.external_displays {
                let detail = match machine.external_displays {
                    Some(n) => format!("{n} external"),
                    None => "unknown".to_owned(),
                };
                self.publish_daemon("displays-changed", None, detail);
            }
            self.apply(Input::Machine(machine)).await;
            // Someone is at the machine again: permission prompts waiting for the phone go
            // back to the agent's own prompt.
            if lid != Lid::Closed || external_displays != Some(0) {
                self.phone_back_at_the_machine().await;
            }
        }
    }

    /// Emergency guard: every [`TEMPERATURE_INTERVAL`] while it is armed.
    async fn read_temperature(&mut self) {
        if !self.registry.temperature_watch_wanted() {
            return;
        }
        let interval = Duration::try_from(TEMPERATURE_INTERVAL).unwrap_or(Duration::from_secs(10));
        if self
            .last_temperature
            .is_some_and(|t| t.elapsed() < interval)
        {
            return;
        }
        self.last_temperature = Some(std::time::Instant::now());
        let mode = self
            .registry
            .settings()
            .emergency_hibernation_temperature_mode;
        // Off the event loop: on Windows this is a WMI query.
        let roots = self.roots.clone();
        let celsius = tokio::task::spawn_blocking(move || {
            lidguard_platform::sources::temperature(&roots, mode)
        })
        .await
        .unwrap_or(None);
        tracing::debug!(?celsius, "temperature read");
        self.apply(Input::Temperature { celsius }).await;
    }

    /// Sends a webhook off the actor; a pending suspend waiting for it hears back either way.
    fn send_webhook(&mut self, id: Option<u64>, mut payload: lidguard_core::webhook::Payload) {
        let settings = self.registry.settings();
        let Some(event) = payload.event_type else {
            return;
        };
        let Some(url) = crate::webhook::url_for(settings, event) else {
            if let Some(id) = id {
                let done = self.internal.clone();
                tokio::spawn(async move {
                    let _ = done.send(Input::WebhookDone { id }).await;
                });
            }
            return;
        };
        payload.user_interface_culture = crate::webhook::culture(&payload.user_interface_culture);
        let secret = settings.webhook_secret.clone();
        let done = self.internal.clone();
        let records = self.records.clone();
        self.webhooks.retain(|t| !t.is_finished());
        self.webhooks.push(tokio::spawn(async move {
            let mut attempt = Attempt::new(&payload, &url);
            let sent = tokio::task::spawn_blocking(move || {
                crate::webhook::fill_last_message(&mut payload);
                crate::webhook::post(&url, &payload, &secret)
            })
            .await;
            match sent {
                Ok(Ok(answer)) => {
                    tracing::info!(?event, status = answer.status, "webhook sent");
                    attempt.finish(true, format!("HTTP {}", answer.status));
                }
                Ok(Err(e)) => {
                    tracing::warn!(?event, error = %e, "webhook failed");
                    attempt.finish(false, e);
                }
                Err(e) => {
                    tracing::warn!(?event, error = %e, "webhook task failed");
                    attempt.finish(false, e.to_string());
                }
            }
            let _ = records.send(attempt);
            if let Some(id) = id {
                let _ = done.send(Input::WebhookDone { id }).await;
            }
        }));
    }

    /// Plays the post-stop sound off the actor; the registry hears back either way.
    fn play_sound(&self, id: u64, sound: String, volume_percent: Option<u8>) {
        let done = self.internal.clone();
        tokio::spawn(async move {
            let played = tokio::task::spawn_blocking(move || {
                lidguard_platform::sound::play(&sound, volume_percent, SOUND_LIMIT)
            })
            .await;
            match played {
                Ok(Ok(played)) => tracing::info!(?played, "post-stop sound played"),
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "post-stop sound not played; suspending anyway")
                }
                Err(e) => tracing::warn!(error = %e, "post-stop sound task failed"),
            }
            let _ = done.send(Input::SoundFinished { id }).await;
        });
    }

    /// Releases protection, asks the OS, records the history, then holds again what the
    /// registry wants (emergency hibernation leaves working sessions; after a failed or
    /// finished suspend they need their protection back).
    async fn suspend(&mut self, request: &lidguard_core::suspend::SuspendRequest) {
        self.own_suspend_at = Some(std::time::Instant::now());
        if self.held.take().is_some() {
            tracing::info!("protection released for the suspend request");
            self.publish_daemon(
                "protection-released",
                None,
                "released for the suspend request".into(),
            );
        }
        self.held_plan = None;
        let entries = crate::suspend::request(self.power.as_ref(), request).await;
        let keep = self.registry.settings().suspend_history_entry_count;
        crate::suspend::record(self.store.as_ref(), &entries, keep);
        for entry in &entries {
            let name = if entry.succeeded {
                "suspend-succeeded"
            } else {
                "suspend-failed"
            };
            let detail = format!(
                "{} ({:?}){}",
                entry.suspend_mode,
                entry.reason,
                entry
                    .error
                    .as_deref()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            );
            self.log(&LogEvent {
                name: name.to_owned(),
                key: None,
                detail,
            });
        }
        let wanted = self.registry.protection().cloned();
        if wanted.is_some() {
            self.set_protection(wanted).await;
        }
    }

    fn release_all(&mut self) {
        if self.held.take().is_some() {
            tracing::info!("protection released on shutdown");
        }
        self.held_plan = None;
    }

    fn save_session(&mut self, session: &Session) {
        let key = &session.key;
        self.write(StoreWrite::UpsertSession {
            provider: key.provider.as_str().to_owned(),
            session_id: key.session_id.clone(),
            provider_name: key.provider_name.clone(),
            data_json: serde_json::to_string(session).unwrap_or_default(),
            updated_at: Timestamp::now(),
        });
    }

    fn delete_session(&mut self, key: &SessionKey) {
        self.write(StoreWrite::DeleteSession {
            provider: key.provider.as_str().to_owned(),
            session_id: key.session_id.clone(),
            provider_name: key.provider_name.clone(),
        });
    }

    /// Queues a database write. Writes are carried out together, in one transaction, after the
    /// request that caused them has its answer (a hook waits for the answer, not the disk).
    fn write(&mut self, write: StoreWrite) {
        if self.store.is_some() {
            self.writes.push(write);
        }
    }

    /// Carries out the queued writes (failures are logged).
    fn flush_writes(&mut self) {
        let _ = self.write_now(false);
    }

    /// Carries out the queued writes, synced to disk when `synced`; says why they could not be
    /// made.
    fn write_now(&mut self, synced: bool) -> Result<(), String> {
        if self.writes.is_empty() {
            return match &self.store {
                Some(_) => Ok(()),
                None => Err(self
                    .store_error
                    .clone()
                    .unwrap_or_else(|| "no database".into())),
            };
        }
        let writes = std::mem::take(&mut self.writes);
        let written = match &self.store {
            Some(store) if synced => store.write_batch_synced(&writes),
            Some(store) => store.write_batch(&writes),
            None => Ok(()),
        };
        if let Err(e) = written {
            tracing::warn!(error = %e, count = writes.len(), "cannot save to the database; continuing without persistence for these changes");
            return Err(e.to_string());
        }
        Ok(())
    }

    /// Records one webhook attempt in the event log (`lidguard webhook-history` reads them):
    /// the receiver's host only, never the URL (its path may hold a secret).
    fn record_attempt(&mut self, attempt: &Attempt) {
        let kind = if attempt.ok {
            "webhook-sent"
        } else {
            "webhook-failed"
        };
        let key = attempt.session_id.as_ref().and_then(|id| {
            let provider = attempt.provider.as_deref()?.parse().ok()?;
            Some(SessionKey::new(provider, id.clone(), ""))
        });
        let mut line = daemon_event(
            kind,
            key.as_ref(),
            Some(format!(
                "{} to {}: {}",
                attempt.event_type, attempt.host, attempt.result
            )),
        );
        line.visibility.logged = self.store.is_some();
        line.visibility.webhooks = vec![attempt.event_type.clone()];
        self.publish(line);
        let row = EventRow {
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
        };
        self.write(StoreWrite::Event(row));
    }

    fn log(&mut self, event: &LogEvent) {
        let mut line = daemon_event(&event.name, event.key.as_ref(), Some(event.detail.clone()));
        line.visibility.logged = self.store.is_some();
        self.publish(line);
        let session = event.key.as_ref().map(ToString::to_string);
        tracing::info!(event = %event.name, session = session.as_deref().unwrap_or(""), detail = %event.detail);
        let row = EventRow {
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
        };
        self.write(StoreWrite::Event(row));
    }

    /// The keep-awake protection as held now.
    fn protection_status(&self) -> ProtectionStatus {
        let held = self.held.as_ref().map(|h| h.inhibits()).unwrap_or_default();
        let giving_way = self
            .held
            .as_ref()
            .map(|h| h.giving_way())
            .unwrap_or_default();
        let unavailable_reason = match &self.power {
            Err(reason) => Some(reason.clone()),
            Ok(_) => self.power_error.clone(),
        };
        ProtectionStatus {
            held: self.held.is_some(),
            inhibitors: held.iter().map(|i| i.as_str().to_owned()).collect(),
            delay_inhibitors: giving_way.iter().map(|i| i.as_str().to_owned()).collect(),
            unavailable_reason,
            wanted: self.registry.protection().is_some(),
            why: self.held_plan.as_ref().map(|p| p.why.clone()),
            backend: self.power.as_ref().ok().map(|p| p.describe()),
            battery_floor: self.registry.battery_floor_reached(),
        }
    }

    async fn status(&self) -> Status {
        let sessions = self
            .registry
            .sessions()
            .map(|s| {
                let mut status = SessionStatus::from_session(s, self.registry.session_deadline(s));
                status.transcript_monitor = self.watchers.note(&s.key).map(|n| n.describe());
                status.transcript_reads = self.watchers.reads(&s.key);
                status
            })
            .collect();
        let lid = self.lid_state().await;
        let settings = self.registry.settings().clone();
        Status {
            sessions,
            protection: self.protection_status(),
            lid: lid.to_string(),
            battery: self.registry.battery(),
            visible_displays: Some(lidguard_platform::sources::visible_displays(
                &self.roots,
                false,
            )),
            external_displays: Some(lidguard_platform::sources::visible_displays(
                &self.roots,
                true,
            )),
            daemon_pid: std::process::id(),
            daemon_version: env!("CARGO_PKG_VERSION").to_owned(),
            daemon_started_at: self.started_at,
            cleanup: CleanupStatus {
                delay_minutes: settings.server_runtime_cleanup_delay_minutes,
                exit_at: self.registry.exit_at(),
            },
            store: StoreStatus {
                path: self.places.database().display().to_string(),
                error: self
                    .store_error
                    .clone()
                    .or_else(|| self.store.as_ref().and_then(Store::write_failure)),
                moved_aside: self.store_moved_aside.clone(),
            },
            settings_file: self.places.settings_file().display().to_string(),
            settings_error: self.settings_error.clone(),
            ask_before_sleep: settings.follow_up_state().to_string(),
            phone: self.phone_status(),
            settings,
            pending_suspend: self.registry.pending_suspend().cloned(),
        }
    }
}

/// The name the event log uses for webhook attempts (`lidguard webhook-history` reads them).
pub const WEBHOOK_ATTEMPT: &str = "webhook-attempt";

/// One webhook attempt (for ask before sleep: the whole exchange), as the history keeps it.
struct Attempt {
    started: Timestamp,
    clock: std::time::Instant,
    event_type: String,
    reason: String,
    host: String,
    provider: Option<String>,
    session_id: Option<String>,
    ok: bool,
    result: String,
    duration_ms: u64,
}

impl Attempt {
    fn new(payload: &lidguard_core::webhook::Payload, url: &str) -> Attempt {
        let host = url::Url::parse(url)
            .ok()
            .and_then(|u| {
                let host = u.host_str()?.to_owned();
                Some(match u.port() {
                    Some(port) => format!("{host}:{port}"),
                    None => host,
                })
            })
            .unwrap_or_else(|| "?".to_owned());
        Attempt {
            started: Timestamp::now(),
            clock: std::time::Instant::now(),
            event_type: payload
                .event_type
                .map(|e| format!("{e:?}"))
                .unwrap_or_default(),
            reason: payload.reason.clone(),
            host,
            provider: payload.provider.clone(),
            session_id: payload.session_identifier.clone(),
            ok: false,
            result: String::new(),
            duration_ms: 0,
        }
    }

    fn finish(&mut self, ok: bool, result: String) {
        self.ok = ok;
        self.result = result;
        self.duration_ms = u64::try_from(self.clock.elapsed().as_millis()).unwrap_or(u64::MAX);
    }
}

/// What the registry answered to one input.
struct Applied {
    reply: Reply,
    decision: Option<Decision>,
    hook_waits_until: Option<Timestamp>,
    /// The webhooks the input sent, by event type.
    webhooks: Vec<String>,
}

/// The wire name of a core reply (`recorded`, `started`, …).
fn outcome_name(reply: &Reply) -> String {
    serde_json::to_value(reply_outcome(reply).0)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// A webhook event type as the receiver sees it (`PreSuspend`, …).
fn webhook_name(event: EventType) -> String {
    serde_json::to_value(event)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The authority of a hook event that made no closed-lid decision: a soft-lock it caused, with
/// where it came from (the closed-lid `ask` policy, or the agent saying it waits), else none.
fn soft_lock_authority(
    before: Option<&str>,
    after: Option<&str>,
    settings: &Settings,
    (lid, external_displays): (Lid, Option<u32>),
) -> Authority {
    let Some(reason) = after.filter(|a| before != Some(*a)) else {
        return Authority::none();
    };
    let provenance = if reason == lidguard_core::event::CLOSED_LID_ASK_REASON {
        Provenance {
            setting: Some("closedLidPermissionRequestDecision".to_owned()),
            value: Some(
                settings
                    .closed_lid_permission_request_decision
                    .as_str()
                    .to_owned(),
            ),
            lid: Some(lid),
            external_displays,
            reason: Some(reason.to_owned()),
        }
    } else {
        Provenance {
            setting: None,
            value: None,
            lid: None,
            external_displays: None,
            reason: Some(reason.to_owned()),
        }
    };
    Authority {
        decision: Verdict::SoftLock,
        provenance: Some(provenance),
        outcome: None,
    }
}

/// A daemon event for the stream, about the session `key` if any.
fn daemon_event(kind: &str, key: Option<&SessionKey>, detail: Option<String>) -> StreamEvent {
    let mut event = StreamEvent::daemon(kind, detail);
    if let Some(key) = key {
        event.observation.provider = Some(key.provider);
        event.observation.provider_name = key.provider_name().map(str::to_owned);
        event.observation.session_id = Some(key.session_id.clone());
    }
    event
}

/// The name the event log uses for hook events (`lidguard hook-events` reads them).
pub const HOOK_EVENT: &str = "hook-event";

/// The wire outcome of a core reply, and what it means in words.
fn reply_outcome(reply: &Reply) -> (Outcome, String) {
    match reply {
        Reply::Started => (Outcome::Started, "started".into()),
        Reply::Updated => (Outcome::Updated, "updated".into()),
        Reply::Stopped => (Outcome::Stopped, "stopped".into()),
        Reply::StopDeferred => (
            Outcome::StopDeferred,
            "stays active: background work is still running".into(),
        ),
        Reply::AlreadyStopped { end_reason } => (
            Outcome::AlreadyStopped,
            format!("had already stopped ({end_reason})"),
        ),
        Reply::Recorded => (Outcome::Recorded, "updated".into()),
        Reply::Unchanged => (Outcome::Unchanged, "unchanged".into()),
        Reply::UnknownSession => (Outcome::UnknownSession, "no such session".into()),
        Reply::Removed(_) | Reply::Done => (Outcome::Done, "done".into()),
    }
}

fn session_ref(key: &SessionKey) -> SessionRef {
    SessionRef {
        provider: key.provider,
        session_id: key.session_id.clone(),
        provider_name: key.provider_name().map(str::to_owned),
    }
}

/// The requests to stop from outside: SIGTERM and SIGINT on Unix; Ctrl+C, Ctrl+Break and the
/// console closing on Windows.
struct StopSignals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
    #[cfg(windows)]
    ctrl_c: tokio::signal::windows::CtrlC,
    #[cfg(windows)]
    ctrl_break: tokio::signal::windows::CtrlBreak,
    #[cfg(windows)]
    close: tokio::signal::windows::CtrlClose,
}

impl StopSignals {
    fn new() -> std::io::Result<StopSignals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(StopSignals {
                term: signal(SignalKind::terminate())?,
                int: signal(SignalKind::interrupt())?,
            })
        }
        #[cfg(windows)]
        {
            use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close};
            Ok(StopSignals {
                ctrl_c: ctrl_c()?,
                ctrl_break: ctrl_break()?,
                close: ctrl_close()?,
            })
        }
    }

    /// Waits for one; says which.
    async fn recv(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.term.recv() => "SIGTERM",
                _ = self.int.recv() => "SIGINT",
            }
        }
        #[cfg(windows)]
        {
            tokio::select! {
                _ = self.ctrl_c.recv() => "Ctrl+C",
                _ = self.ctrl_break.recv() => "Ctrl+Break",
                _ = self.close.recv() => "console closed",
            }
        }
    }
}
