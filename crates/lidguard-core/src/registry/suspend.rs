//! Suspend: the closed-lid suspend after the work ends — scheduled, announced, played,
//! requested or canceled — and the idle exit.

use super::*;

impl Registry {
    pub(super) fn tick_exit(&mut self, now: Timestamp, fx: &mut Vec<Effect>) {
        // A suspend on its way (and a Stop hook waiting on it) outlives the idle exit, and so
        // does the user's pause: it lasts until its time or until resumed.
        if self.pending_suspend.is_some() || self.pause.is_some() {
            return;
        }
        if self.exit_at.is_some_and(|at| at <= now) {
            self.exit_at = None;
            log(fx, "server-runtime-cleanup-requested", None, "");
            fx.push(Effect::Exit);
        }
    }

    /// Protection just dropped (or a session ended without it): schedule the suspend when the
    /// closed-lid policy applies. A new suspend replaces a pending one.
    pub(super) fn schedule_suspend(
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
        if let Some(why) = self.clamshell().why_not() {
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

    pub(super) fn cancel_suspend(&mut self, why: &str, fx: &mut Vec<Effect>) {
        self.end_pending(why, false, fx);
    }

    /// Drops the pending suspend. Unless `suppress`, a normal end whose suspend is canceled
    /// before its PreSuspend webhook is announced with PostSessionEnd. A hook waiting on it
    /// is let go.
    pub(super) fn end_pending(&mut self, why: &str, suppress: bool, fx: &mut Vec<Effect>) {
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

    /// The PreSuspend body for the pending suspend: the whole session when a normal end
    /// scheduled it, else only the reason.
    pub(super) fn pre_suspend_payload(&self, pending: &PendingSuspend) -> Payload {
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
    pub(super) fn suspend_due(&mut self, now: Timestamp, fx: &mut Vec<Effect>) {
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

    /// After the delay (and any ask): the PreSuspend webhook, unless suppressed or unset;
    /// then the sound and the request.
    pub(super) fn pre_suspend(&mut self, now: Timestamp, fx: &mut Vec<Effect>) {
        let Some(pending) = self.pending_suspend.clone() else {
            return;
        };
        if !pending.webhooks_suppressed && !self.settings.pre_suspend_webhook_url.trim().is_empty()
        {
            if let Some(why) = self.clamshell().why_not() {
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
    pub(super) fn play_or_suspend(&mut self, now: Timestamp, fx: &mut Vec<Effect>) {
        let why_not = self.clamshell().why_not();
        let Some(pending) = self.pending_suspend.as_mut() else {
            return;
        };
        let sound = self.settings.post_stop_suspend_sound.trim().to_owned();
        if pending.phase != SuspendPhase::Sound && !sound.is_empty() {
            if let Some(why) = why_not {
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
    pub(super) fn suspend_now(&mut self, _now: Timestamp, fx: &mut Vec<Effect>) {
        if self.sessions.values().any(Session::needs_protection) {
            return self.cancel_suspend("a session works again", fx);
        }
        if let Some(why) = self.clamshell().why_not() {
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
}
