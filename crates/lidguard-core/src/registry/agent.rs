//! Agent events: what a hook event means for its session, the closed-lid decision it gets,
//! and the background work an agent reports.

use super::*;

impl Registry {
    /// Carries out one agent event. The mapping from provider events to these kinds lives in
    /// the provider dialects; what each kind means for a session lives here.
    pub(super) fn agent(
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
        // The lid and displays as they were when the event came, the power source as last read.
        let clamshell = Clamshell {
            lid,
            external_displays,
            ..self.clamshell()
        };
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
                    run_by: event.run_by.clone(),
                    via: event.via.clone(),
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
                fx.push(Effect::SaveSession(Box::new(session.clone())));
                log(
                    fx,
                    "session-work-finished",
                    Some(&key),
                    &work_ids.join(", "),
                );
                Reply::Recorded
            }
            EventKind::ToolStarting { asks_user: true } => {
                let decision = closed_lid_decision(&event.kind, policy, &clamshell);
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
                let decision = closed_lid_decision(&event.kind, policy, &clamshell);
                if closed_lid_asks(&event.kind, policy, &clamshell) {
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
                wakes_at,
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
                // Work still running decides first; without it, the agent's own wake-up.
                if pending.is_none()
                    && let Some(at) = *wakes_at
                    && let Some(reply) = self.await_wake_up(&key, at, now, fx)
                {
                    return (reply, None);
                }
                let stop = StopSession {
                    key: key.clone(),
                    kind: StopKind::ProviderEnd,
                    end_reason: Some(event.end_reason()),
                    pending_work: pending,
                    stop_hook: can_continue.then_some(StopHook {
                        stop_hook_active: *stop_hook_active,
                    }),
                };
                let reply = self.stop(stop, now, fx);
                if let (Reply::Stopped, Some(at)) = (&reply, wakes_at) {
                    self.remember_far_wake_up(&key, *at);
                }
                reply
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
    pub(super) fn remember_answer(&mut self, key: &SessionKey, event: &AgentEvent) {
        if let (Some(session), Some(text)) = (
            self.sessions.get_mut(key),
            event.last_assistant_message.as_ref(),
        ) && !text.trim().is_empty()
        {
            session.last_assistant_message = Some(text.clone());
        }
    }

    /// Tracked background work of a session, described for the pending-work reason.
    pub(super) fn tracked_work(&self, key: &SessionKey) -> Option<String> {
        let session = self.sessions.get(key)?;
        describe_work(session.background.keys().map(String::as_str))
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
