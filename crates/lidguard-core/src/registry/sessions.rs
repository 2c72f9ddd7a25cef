//! Sessions: start, activity, soft-lock, stop and removal; the inactivity timeout; and
//! what protection the sessions want.

use super::*;

impl Registry {
    pub(super) fn start(
        &mut self,
        start: StartSession,
        now: Timestamp,
        fx: &mut Vec<Effect>,
    ) -> Reply {
        let StartSession {
            key,
            cwd,
            transcript_path,
            watched_pid,
            run_by,
            via,
        } = start;
        // An mcp session has no process of its own to watch: the MCP server is shared. A relayed
        // session's pid and transcript are another machine's: never looked up here.
        let watched_pid = watched_pid.filter(|_| key.provider != Provider::Mcp && via.is_none());
        let transcript_path = transcript_path.filter(|_| via.is_none());
        // A place elsewhere is less trusted: it may keep only so many sessions here.
        if let Some(place) = via.as_deref()
            && !self.sessions.contains_key(&key)
            && self.sessions_via(place) >= MAX_SESSIONS_PER_PLACE
        {
            log(
                fx,
                "relayed-session-refused",
                Some(&key),
                &format!("{place} already has {MAX_SESSIONS_PER_PLACE} sessions here"),
            );
            return Reply::Unchanged;
        }
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
                if run_by.is_some() {
                    session.run_by = run_by;
                }
                (Reply::Updated, session.clone())
            }
            None => {
                let session = Session {
                    key: key.clone(),
                    cwd,
                    transcript_path,
                    watched_pid,
                    run_by,
                    via,
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
        fx.push(Effect::SaveSession(Box::new(session)));
        reply
    }

    pub(super) fn activity(
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
        fx.push(Effect::SaveSession(Box::new(session.clone())));
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

    pub(super) fn soft_lock(
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
        fx.push(Effect::SaveSession(Box::new(session.clone())));
        Reply::Recorded
    }

    pub(super) fn stop(
        &mut self,
        stop: StopSession,
        now: Timestamp,
        fx: &mut Vec<Effect>,
    ) -> Reply {
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
                wakes_at: None,
            });
            fx.push(Effect::SaveSession(Box::new(session.clone())));
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
            wakes_at: None,
        });
        while self.ended.len() > ENDED_MEMORY {
            self.ended.pop_front();
        }
        Reply::Stopped
    }

    pub(super) fn remove(
        &mut self,
        selector: &RemoveSelector,
        now: Timestamp,
        fx: &mut Vec<Effect>,
    ) -> Reply {
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

    pub(super) fn tick(&mut self, now: Timestamp, fx: &mut Vec<Effect>) {
        if self
            .pending_suspend
            .as_ref()
            .is_some_and(|p| p.due_at <= now)
        {
            self.suspend_due(now, fx);
        }
        let expired: Vec<(SessionKey, u32)> = self
            .sessions
            .values()
            .filter(|s| self.session_deadline(s).is_some_and(|d| d <= now))
            .filter_map(|s| Some((s.key.clone(), self.timeout_minutes(s)?)))
            .collect();
        for (key, minutes) in expired {
            let session = self.sessions.get_mut(&key).expect("key taken from the map");
            if let Some(work) = session.pending_work.take() {
                let name = match work.wakes_at {
                    Some(_) => "session-wake-up-missed",
                    None => "session-pending-provider-work-abandoned",
                };
                log(fx, name, Some(&key), &work.reason);
            }
            if session.soft_lock.is_none() {
                let reason = format!("{TIMEOUT_SOFT_LOCK_PREFIX}{minutes} minutes");
                log(fx, "session-timeout-softlock-recorded", Some(&key), &reason);
                session.soft_lock = Some(SoftLock { reason, since: now });
            }
            fx.push(Effect::SaveSession(Box::new(session.clone())));
        }
        self.tick_exit(now, fx);
    }

    /// Brings derived state (protection, idle exit) in line with the sessions.
    pub(super) fn reconcile(&mut self, now: Timestamp, fx: &mut Vec<Effect>) {
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

    pub(super) fn post_session_end(&mut self, ended: &Ended, fx: &mut Vec<Effect>) {
        if self.settings.post_session_end_webhook_url.trim().is_empty() {
            return;
        }
        let active = self.working_count();
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

    /// When a session goes inactive without further activity, if any will.
    pub fn session_deadline(&self, session: &Session) -> Option<Timestamp> {
        let minutes = self.timeout_minutes(session)?;
        if !session.needs_protection() || session.lasts_while_process().is_some() {
            return None;
        }
        let timeout = SignedDuration::from_mins(i64::from(minutes));
        // A session held for its own wake-up is inactive from then on, not from its Stop.
        let from = match session.pending_work.as_ref().and_then(|w| w.wakes_at) {
            Some(at) => at.max(session.last_activity_at),
            None => session.last_activity_at,
        };
        Some(from.checked_add(timeout).unwrap_or(Timestamp::MAX))
    }

    /// The inactivity timeout of `session`: the setting, bounded for a session on another
    /// machine by [`RELAYED_SILENCE_MINUTES`].
    pub(super) fn timeout_minutes(&self, session: &Session) -> Option<u32> {
        let set = self.settings.session_timeout_minutes;
        if session.via.is_none() {
            return set;
        }
        Some(set.map_or(RELAYED_SILENCE_MINUTES, |m| m.min(RELAYED_SILENCE_MINUTES)))
    }

    /// How many sessions came through relays to `place`.
    fn sessions_via(&self, place: &str) -> usize {
        self.sessions
            .values()
            .filter(|s| s.via.as_deref() == Some(place))
            .count()
    }

    /// How many sessions need protection (working, or with pending work).
    pub(super) fn working_count(&self) -> usize {
        self.sessions
            .values()
            .filter(|s| s.needs_protection())
            .count()
    }

    /// Protection is held while sessions work, and while a suspend is on its way — through
    /// the post-stop delay, an ask-before-sleep wait, the PreSuspend webhook and the sound —
    /// so the OS's own lid or idle handling never puts the machine to sleep first; it is
    /// released right before the OS request (README, Sleeping when the work is done).
    pub(super) fn wanted_protection(&self) -> Option<ProtectionPlan> {
        // On battery below the floor, or at a serious thermal state, the OS gets the machine
        // back: it may sleep or hibernate as it would (and with a closed lid it is put to sleep,
        // see `guard`). Sessions go on being tracked; protection returns with the charge or
        // when the machine cools down.
        if self.stop_reason().is_some() {
            return None;
        }
        // Paused by the user: the OS handles sleep and the lid as it would without lidguard.
        if self.pause.is_some() {
            return None;
        }
        let count = self.working_count();
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
            // Away mode turns a sleep into a running machine with its screen off: never on
            // battery, where that is a laptop running down in a bag.
            away_mode: power.prevent_system_sleep
                && power.prevent_away_mode_sleep == Some(true)
                && !self.battery.is_some_and(|b| b.on_battery),
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
