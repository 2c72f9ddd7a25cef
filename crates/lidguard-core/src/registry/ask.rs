//! Ask before sleep: the question to the user before a closed-lid suspend, its deadlines,
//! and the Stop hook that waits for the answer.

use super::*;

impl Registry {
    /// The ask-before-sleep gate (README, Ask before sleep: when it asks) for a suspend about to be scheduled by
    /// `origin`: the ask to attach, and whether to skip the post-stop delay (a continued turn
    /// stopping again while `repeatClosedLidStopFollowUp` is off).
    pub(super) fn ask_for(
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

    /// After the post-stop delay: check again, then send the StopFollowUp question.
    pub(super) fn start_ask(&mut self, now: Timestamp, fx: &mut Vec<Effect>) {
        if let Some(why) = self.clamshell().why_not() {
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
    pub(super) fn ask_resolved(
        &mut self,
        outcome: AskOutcome,
        now: Timestamp,
        fx: &mut Vec<Effect>,
    ) {
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
            fx.push(Effect::SaveSession(Box::new(session.clone())));
            self.sessions.insert(session.key.clone(), session);
        }
        answer_hook(fx, id, ask.key, Some(reply.trim().to_owned()), status);
    }

    /// The waiting hook left: before the question, drop it (the delay runs on); while it is out,
    /// end it as canceled and go on with the suspend.
    pub(super) fn hook_gone(&mut self, key: &SessionKey, now: Timestamp, fx: &mut Vec<Effect>) {
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
}
