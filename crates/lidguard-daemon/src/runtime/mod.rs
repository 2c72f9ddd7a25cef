//! The runtime task: owns the registry, turns requests into inputs, carries out effects, keeps
//! the timers, and shuts down cleanly. Each concern is a part that owns its state (records,
//! protection, the machine view, hook waits, outbound work, the stream, the phone); this module
//! holds the loop and the one dispatcher that hands each effect to its part.

mod desktop;
mod history;
mod hook_waits;
mod hooks;
mod inbox;
mod life;
mod lines;
mod machine;
mod notices;
mod observe;
mod outbound;
mod outbox;
mod phone;
mod protection;
mod publisher;
mod records;
mod requests;
mod signals;
mod status;

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use lidguard_core::ask::AskStatus;
use lidguard_core::event::{AgentEvent, EventKind};
use lidguard_core::registry::{Effect, Input, Registry, Reply};
use lidguard_core::session::SessionKey;
use lidguard_core::suspend::SuspendRequest;
use lidguard_core::webhook::EventType;
use lidguard_ipc::Places;
use lidguard_ipc::protocol::{Outcome, Request, Response};
use lidguard_platform::sources::Roots;
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep_until};

use crate::machine_watch::MachineWatch;
use crate::server::{self, Answer, Job};
use crate::socket_keeper::Keeper;
use crate::{DaemonError, InstanceLock};
use hook_waits::HookWaits;
use hooks::{Applied, HookTurn, Seen};
use life::Life;
use machine::MachineView;
use outbound::{Attempt, Outbound};
use outbox::Outbox;
use protection::Protection;
use publisher::Publisher;
use records::Records;
use requests::Route;

pub use records::{HOOK_EVENT, WEBHOOK_ATTEMPT};

/// Runs the daemon: binds the socket, restores sessions, serves until exit.
pub(crate) async fn serve(
    places: Places,
    lock: InstanceLock,
    started_by: crate::StartedBy,
) -> Result<(), DaemonError> {
    let (settings, settings_error) = life::load_settings(&places);
    let records = Records::open(&places);
    let protection = Protection::connect(&places).await;
    let socket = places.socket();
    let (listener, socket_activated) = server::listen(&socket)
        .map_err(|e| DaemonError::Setup(format!("cannot listen on {}: {e}", socket.display())))?;
    tracing::info!(pid = std::process::id(), socket = %socket.display(), lock = %lock.path().display(), "daemon started");
    if started_by == crate::StartedBy::Client {
        crate::stderr::let_go();
    }
    let (to, mut inbox) = inbox::open();
    let roots = Roots::from_env();
    if let Some(power) = protection.power() {
        let watched = power.watch_sleep(to.sleeps).await;
        tracing::debug!(watched, "the OS's sleep announcements");
    }
    let watch = MachineWatch::start(&roots, protection.power(), to.machine).await;
    let mut rt = Runtime {
        registry: Registry::with_rule(settings, lidguard_platform::power::CLAMSHELL_RULE),
        places,
        life: Life::new(settings_error),
        records,
        protection,
        machine: MachineView::new(roots, watch),
        hook_waits: HookWaits::new(to.hooks_gone),
        watchers: crate::watch::Watchers::new(to.internal.clone(), to.fs),
        outbound: Outbound::new(to.internal, to.attempts),
        publisher: Publisher::new(crate::stream::Hub::new(to.followers_left)),
        phone: phone::Phone::new(to.phone_news),
        notices: notices::Notices::new(),
    };
    // The stream goes on from what the last daemon kept: `events --since` spans restarts.
    rt.publisher.hub.restore(rt.records.stream_lines());
    let (restored, dropped) = rt.records.recover_sessions();
    rt.history_started(started_by.describe(socket_activated), &dropped);
    rt.notices.restored(&restored);
    // The user's pause first: sessions it covers are not held even for a moment.
    if let Some(pause) = rt.records.recover_pause() {
        rt.apply(Input::RestorePause(pause)).await;
    }
    rt.apply(Input::Restore(restored)).await;

    let (jobs_tx, mut jobs) = mpsc::channel::<Job>(256);
    let connections = Arc::new(());
    let (lost_tx, mut lost) = mpsc::unbounded_channel();
    let mut socket_lost = false;
    let acceptor = tokio::spawn(server::accept_loop(
        listener,
        Keeper::for_daemon(&socket, lock.path(), socket_activated),
        jobs_tx,
        Arc::clone(&connections),
        lost_tx,
    ));
    let mut stop = signals::StopSignals::new()?;
    let mut flush_at: Option<Instant> = None;
    let mut was_watching = false;

    while !rt.life.exit {
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
                let mut out = rt.outbox();
                rt.protection.retry(rt.registry.protection(), &mut out).await;
                rt.settle(out);
            }
            Some(input) = inbox.internal.recv() => { rt.apply(input).await; }
            Some(attempt) = inbox.attempts.recv() => rt.record_attempt(&attempt),
            Some((key, wait)) = inbox.hooks_gone.recv() => rt.hook_left(key, wait).await,
            Some(()) = inbox.followers_left.recv() => rt.follower_left(),
            Some(news) = inbox.phone_news.recv() => rt.phone_news(news).await,
            Some(starting) = inbox.sleeps.recv() => rt.os_sleep(starting).await,
            Some(change) = inbox.fs_events.recv() => {
                if rt.watchers.take_change(change) && flush_at.is_none() {
                    flush_at = Some(Instant::now() + crate::watch::DEBOUNCE);
                }
            }
            () = async { sleep_until(flush_at.unwrap_or_else(Instant::now)).await }, if flush_at.is_some() => {
                flush_at = None;
                rt.read_transcripts().await;
            }
            _ = inbox.transcript_poll.tick(), if rt.watchers.needs_poll() => {
                rt.watchers.poll();
                rt.read_transcripts().await;
            }
            Some(()) = inbox.machine_changes.recv() => {
                while inbox.machine_changes.try_recv().is_ok() {}
                if rt.watching_machine() {
                    rt.observe_machine().await;
                }
            }
            _ = inbox.machine_poll.tick(), if rt.watching_machine() && !rt.machine.watch.complete() => {
                rt.observe_machine().await;
            }
            _ = inbox.temperature_poll.tick(), if rt.registry.temperature_watch_wanted() || rt.registry.thermal_watch_wanted() => {
                rt.read_temperature().await;
            }
            () = rt.records.due(), if rt.records.scheduled() => rt.records.flush(),
            why = stop.recv() => { tracing::info!("{why}: shutting down"); rt.life.stop(why); break; }
            Some(why) = lost.recv() => {
                tracing::error!("{why}: shutting down");
                rt.life.stop(&why);
                socket_lost = true;
                break;
            }
        }
        if rt.registry.sessions().next().is_some() {
            rt.life.busy();
        }
        let watching = rt.watching_machine();
        rt.machine.watch.set_active(watching);
        if watching && !was_watching {
            // Sessions appeared: from now on changes are signalled; read where things stand.
            rt.observe_machine().await;
        }
        was_watching = watching;
        rt.records.schedule();
    }
    rt.history_stopped();
    rt.records.flush();

    // Stop taking requests, let answers already given reach their clients (requests still
    // queued are told the daemon is shutting down), then give everything back. Stop hooks
    // waiting for ask before sleep are let go first (their connections answer "no reply").
    rt.hook_waits.clear();
    rt.phone.let_go();
    rt.publisher.hub.close();
    rt.outbound.stop_asking(None);
    drop(jobs);
    acceptor.abort();
    let _ = acceptor.await;
    server::answers_written(&connections).await;
    // A socket systemd passed stays systemd's: it starts the daemon again on the next request.
    // A socket lost to something else is not ours to remove.
    if !socket_activated && !socket_lost {
        let _ = std::fs::remove_file(&socket);
    }
    rt.outbound.finish().await;
    let mut out = rt.outbox();
    let clamshell = rt.registry.clamshell();
    rt.protection.release_all(clamshell, &mut out).await;
    rt.settle(out);
    rt.records.flush();
    tracing::info!("daemon stopped");
    drop(lock);
    Ok(())
}

/// The registry and the parts that carry out its effects.
struct Runtime {
    registry: Registry,
    places: Places,
    life: Life,
    records: Records,
    protection: Protection,
    machine: MachineView,
    hook_waits: HookWaits,
    outbound: Outbound,
    publisher: Publisher,
    phone: phone::Phone,
    /// What the user is told, on every channel.
    notices: notices::Notices,
    /// The agents' processes and transcripts.
    watchers: crate::watch::Watchers,
}

impl Runtime {
    fn sleep_duration(&self) -> Duration {
        let retry = self.protection.retry_wait(self.registry.protection());
        life::sleep_for(self.registry.next_deadline(), retry)
    }

    async fn handle(&mut self, request: Request) -> Answer {
        match request {
            Request::Hook { events, .. } => self.hook(events).await,
            Request::Events {
                filter,
                replay,
                follow,
            } => self.publisher.follow(filter, &replay, follow),
            Request::Shutdown => (self.life.shutdown_asked(), None),
            request => (self.handle_plain(request).await, None),
        }
    }

    /// Every request but a hook's: one answer, given with everything written first (readers of
    /// the database ping the daemon before they read).
    async fn handle_plain(&mut self, request: Request) -> Response {
        self.records.flush();
        match requests::route(request) {
            Route::Now(answer) => answer,
            Route::Status => {
                let mut answer = Response::ok(Outcome::Done, "status");
                answer.status = Some(Box::new(status::snapshot(self.view()).await));
                answer
            }
            Route::Session {
                key,
                input,
                durable,
                observe_first,
                with_protection,
            } => {
                if observe_first {
                    self.observe_machine().await;
                }
                let reply = self.apply(input).await;
                let mut answer = lines::session_answer(&reply, &key);
                if durable {
                    answer = self.records.acknowledged(answer);
                }
                if with_protection {
                    answer.protection = Some(Box::new(status::protection(
                        &self.registry,
                        &self.protection,
                    )));
                }
                answer
            }
            Route::Remove(selector) => {
                let Reply::Removed(keys) = self.apply(Input::Remove(selector)).await else {
                    return Response::error("unexpected reply to remove-session");
                };
                let answer =
                    lines::removed_answer(&keys, "no matching session", "removed", "session");
                self.records.acknowledged(answer)
            }
            Route::Gone(which) => {
                // The cancel path, as for an agent process that exited (none: nothing to do).
                let gone = which.sessions(self.registry.sessions());
                if !gone.is_empty() {
                    self.apply(Input::ProcessesGone(gone.clone())).await;
                }
                let (none, verb, noun) = which.words();
                let answer = lines::removed_answer(&gone, none, verb, noun);
                self.records.acknowledged(answer)
            }
            Route::Settings(settings) => {
                self.life.settings_error = None;
                self.apply(Input::Settings(settings)).await;
                Response::ok(Outcome::Done, "settings applied")
            }
            Route::Hand {
                input,
                done,
                unchanged,
            } => {
                let reply = self.apply(input).await;
                let held = status::protection(&self.registry, &self.protection);
                // A pause is kept for the next daemon: said done once it is on disk.
                (self.records).acknowledged(requests::hand_answer(&reply, &done, unchanged, held))
            }
        }
    }

    /// Records and applies a hook's events; answers with the first decision made, rendered for
    /// the agent. A Stop the registry asks to wait (ask before sleep) gets a second answer later.
    async fn hook(&mut self, events: Vec<AgentEvent>) -> Answer {
        let mut turn = HookTurn::new(&events);
        for event in &events {
            let at = Timestamp::now();
            self.records.write(records::hook_receipt(event, at));
            // A stop may schedule a suspend: decide it on the lid as it is now.
            if matches!(
                event.kind,
                EventKind::TurnStopped { .. } | EventKind::SessionEnded { .. }
            ) {
                self.observe_machine().await;
            }
            let machine = self.machine.for_event(event, self.protection.power()).await;
            let key = event.key();
            let before = hooks::soft_lock_reason(&self.registry, &key);
            self.publisher.hold_back();
            let input = Input::Agent {
                event: Box::new(event.clone()),
                lid: machine.lid,
                external_displays: machine.external_displays,
            };
            let applied = self.apply_outcome(input).await;
            let consequences = self.publisher.release();
            let seen = Seen {
                event,
                at,
                machine: (machine.lid, machine.external_displays),
                clamshell: lidguard_core::clamshell::Clamshell {
                    lid: machine.lid,
                    external_displays: machine.external_displays,
                    ..self.registry.clamshell()
                },
                locked: (before, hooks::soft_lock_reason(&self.registry, &key)),
            };
            let settings = self.registry.settings();
            let (row, line, told) = turn.record(&seen, applied, settings, self.records.logged());
            if let Some(row) = row {
                self.records.write(row);
            }
            if let Some(told) = told {
                let mut out = self.outbox();
                out.log(&told);
                self.settle(out);
            }
            self.publisher.publish(line, &mut self.records);
            for consequence in consequences {
                self.publisher.publish(consequence, &mut self.records);
            }
        }
        let (answer, to_phone, wait) = turn.answer();
        if let Some(asked) = to_phone {
            let mut out = self.outbox();
            let settings = self.registry.settings();
            let answered = self.phone.ask(settings, asked, answer, &mut out);
            self.settle(out);
            return answered;
        }
        match wait {
            Some((key, until)) => {
                let mut answer = answer;
                let then = self.hook_waits.wait(key, &mut answer, until);
                (answer, Some(then))
            }
            None => (answer, None),
        }
    }

    /// An outbox for a part to fill.
    fn outbox(&self) -> Outbox {
        Outbox::new(self.records.logged())
    }

    /// Publishes and queues what a part asked for; returns the inputs it asked to apply.
    fn settle(&mut self, out: Outbox) -> Vec<Input> {
        for line in out.lines {
            self.publisher.publish(line, &mut self.records);
        }
        for write in out.writes {
            self.records.write(write);
        }
        out.inputs
    }

    /// [`Runtime::settle`], then applies the inputs the part asked for.
    async fn drain(&mut self, out: Outbox) {
        for input in self.settle(out) {
            self.apply(input).await;
        }
    }

    /// Applies one input and carries out its effects.
    async fn apply(&mut self, input: Input) -> Reply {
        self.apply_outcome(input).await.reply
    }

    /// Applies one input, hands each effect to its part, returns what the registry answered.
    async fn apply_outcome(&mut self, input: Input) -> Applied {
        let outcome = self.registry.apply(input, Timestamp::now());
        (self.notices).effects(&outcome.effects, &self.registry, &mut self.phone);
        let mut webhooks = Vec::new();
        let mut out = self.outbox();
        for effect in outcome.effects {
            webhooks.extend(lines::webhook_sent(&effect));
            match effect {
                Effect::Protection(plan) => {
                    let clamshell = self.registry.clamshell();
                    self.protection.set(plan, clamshell, &mut out).await;
                }
                Effect::SaveSession(session) => out.write(records::save_session(&session)),
                Effect::DeleteSession(key) => out.write(records::delete_session(&key)),
                Effect::SavePause(pause) => out.write(records::save_pause(pause)),
                Effect::Log(event) => out.log(&event),
                Effect::Exit => self.life.idle_exit(self.publisher.hub.followers()),
                Effect::PlaySound {
                    id,
                    sound,
                    volume_percent,
                } => self.outbound.play_sound(id, sound, volume_percent),
                Effect::Suspend(request) => self.suspend(&request, &mut out).await,
                Effect::Webhook { id, payload } => {
                    let settings = self.registry.settings();
                    self.outbound.send_webhook(settings, id, *payload);
                }
                ask @ Effect::Ask { .. } => self.ask(outbound::ask_of(ask)),
                Effect::AnswerHook {
                    id,
                    key,
                    continuation,
                    status,
                } => self.answer_hook(id, &key, continuation, status, &mut out),
            }
        }
        let unavailable = self.protection.unavailable();
        (self.notices).protection(unavailable, &self.registry, &mut self.phone);
        // Effects never ask for inputs of their own; one that did is applied on the next turn.
        for input in self.settle(out) {
            self.outbound.report(input);
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

    /// Ask before sleep: the question goes to every transport that is set (the receiver's
    /// webhook, ntfy); with none, the registry hears so at once.
    fn ask(&mut self, exchange: Option<(u64, crate::ask::Exchange)>) {
        let Some(exchange) = exchange else {
            return;
        };
        let pending = self.registry.pending_suspend();
        let key = pending.and_then(|p| p.ask.as_ref()).map(|a| a.key.clone());
        let origin = self.registry.pending_origin().cloned();
        let settings = self.registry.settings();
        let url = crate::webhook::url_for(settings, EventType::StopFollowUp);
        let asked = (exchange.0, &exchange.1.payload, exchange.1.reply_deadline);
        let transports =
            (self.phone).ask_before_sleep(settings, (key, origin), asked, url.is_some());
        let webhook = (url, settings.webhook_secret.clone());
        let news = self.phone.news_sender();
        (self.outbound).ask_before_sleep(exchange, webhook, transports, news);
    }

    /// Gives a waiting Stop hook its second answer and stops the exchange it waited on.
    fn answer_hook(
        &mut self,
        id: u64,
        key: &SessionKey,
        reply: Option<String>,
        status: AskStatus,
        out: &mut Outbox,
    ) {
        self.phone.end_ask(id);
        self.outbound.stop_asking(Some(id));
        let by_ntfy = self.phone.answered_by.take() == Some(lines::NTFY);
        self.hook_waits.answer(key, reply, status, by_ntfy, out);
    }

    /// A waiting Stop hook's connection ended (its agent stopped waiting, or it got its
    /// answer): when it was still waiting, the question is dropped.
    async fn hook_left(&mut self, key: SessionKey, wait: u64) {
        if self.hook_waits.left(&key, wait) {
            tracing::info!(session = %key, "the waiting Stop hook left");
            self.apply(Input::HookGone { key }).await;
        }
    }

    async fn phone_news(&mut self, news: crate::remote::News) {
        let mut out = self.outbox();
        let settings = self.registry.settings();
        self.phone.news(news, settings, &mut out);
        if let Some(id) = self.phone.ended_exchange.take() {
            self.outbound.stop_asking(Some(id));
        }
        self.drain(out).await;
    }

    /// Releases protection, asks the OS, records the history, then holds again what the
    /// registry wants (emergency hibernation leaves working sessions; after a failed or
    /// finished suspend they need their protection back).
    async fn suspend(&mut self, request: &SuspendRequest, out: &mut Outbox) {
        let entries = self.protection.suspend(request, out).await;
        let keep = self.registry.settings().suspend_history_entry_count;
        self.records.record_suspends(&entries, keep);
        let wanted = self.registry.protection().cloned();
        if wanted.is_some() {
            let clamshell = self.registry.clamshell();
            self.protection.set(wanted, clamshell, out).await;
        }
    }

    /// The OS announced a sleep (`starting`) or a wake-up: a suspend lidguard let through is
    /// recorded; after the wake-up protection is taken again.
    async fn os_sleep(&mut self, starting: bool) {
        let mut out = self.outbox();
        let working = self.registry.sessions().filter(|s| s.needs_protection());
        let (working, wanted) = (working.count(), self.registry.protection());
        let let_through = self
            .protection
            .os_sleep(starting, wanted, working, &mut out);
        if let Some(entry) = let_through.await {
            let keep = self.registry.settings().suspend_history_entry_count;
            self.records.record_suspends(&[entry], keep);
        }
        self.settle(out);
    }

    fn follower_left(&mut self) {
        let idle = !self.watching_machine();
        self.life
            .follower_left(self.publisher.hub.followers(), idle);
    }

    /// Records one webhook attempt in the event log and the stream.
    fn record_attempt(&mut self, attempt: &Attempt) {
        let line = lines::attempt_line(attempt, self.records.logged());
        self.publisher.publish(line, &mut self.records);
        self.records.write(records::webhook_attempt(attempt));
    }

    /// Reads the transcripts that changed and applies what their detectors found.
    async fn read_transcripts(&mut self) {
        for input in self.watchers.read_dirty() {
            self.apply(input).await;
        }
    }

    /// Every part, read only.
    fn view(&self) -> status::View<'_> {
        status::View {
            registry: &self.registry,
            watchers: &self.watchers,
            machine: &self.machine,
            protection: &self.protection,
            records: &self.records,
            places: &self.places,
            life: &self.life,
            phone: &self.phone,
        }
    }
}
