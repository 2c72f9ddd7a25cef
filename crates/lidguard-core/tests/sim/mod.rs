//! A registry driven by a virtual clock, recording every effect: shared by the suspend and
//! webhook simulation tests.

#![allow(dead_code, reason = "each test file uses a different part")]

use jiff::{SignedDuration, Timestamp};
use lidguard_core::ask::AskStatus;
use lidguard_core::clamshell::ClamshellRule;
use lidguard_core::event::{AgentEvent, EventKind, Lid};
use lidguard_core::provider::Provider;
use lidguard_core::registry::{Effect, Input, Outcome, Registry, StartSession, StopSession};
use lidguard_core::session::{SessionKey, StopKind};
use lidguard_core::settings::Settings;
use lidguard_core::suspend::{Machine, SuspendRequest};
use lidguard_core::webhook::{EventType, Payload};

pub(crate) const CLOSED: Machine = Machine {
    lid: Lid::Closed,
    external_displays: Some(0),
};
pub(crate) const OPEN: Machine = Machine {
    lid: Lid::Open,
    external_displays: Some(0),
};

pub(crate) fn key(id: &str) -> SessionKey {
    SessionKey::new(Provider::Claude, id, "")
}

/// Fires every deadline of `reg` up to `end` exactly when it is due, moving `now` along, and
/// leaves `now` at `end`; returns the effects on the way.
pub(crate) fn tick_until(reg: &mut Registry, now: &mut Timestamp, end: Timestamp) -> Vec<Effect> {
    let mut effects = Vec::new();
    while let Some(deadline) = reg.next_deadline().filter(|d| *d <= end) {
        *now = (*now).max(deadline);
        effects.extend(reg.apply(Input::Tick, *now).effects);
    }
    *now = end;
    effects
}

pub(crate) struct Sim {
    pub(crate) reg: Registry,
    pub(crate) now: Timestamp,
    pub(crate) effects: Vec<Effect>,
}

impl Sim {
    /// A restored, empty registry that has seen `machine`.
    pub(crate) fn with(settings: Settings, machine: Machine) -> Sim {
        Sim::with_rule(settings, machine, ClamshellRule::default())
    }

    /// [`Sim::with`] for an OS that treats a closed lid with a display by `rule`.
    pub(crate) fn with_rule(settings: Settings, machine: Machine, rule: ClamshellRule) -> Sim {
        let mut sim = Sim {
            reg: Registry::with_rule(settings, rule),
            now: "2026-11-30T03:00:00Z".parse().unwrap(),
            effects: Vec::new(),
        };
        sim.apply(Input::Restore(Vec::new()));
        sim.apply(Input::Machine(machine));
        sim.effects.clear();
        sim
    }

    pub(crate) fn apply(&mut self, input: Input) {
        self.apply_outcome(input);
    }

    /// Applies `input`; returns until when its hook must wait, if it must.
    pub(crate) fn apply_outcome(&mut self, input: Input) -> Option<Timestamp> {
        let Outcome {
            effects,
            hook_waits_until,
            ..
        } = self.reg.apply(input, self.now);
        self.effects.extend(effects);
        hook_waits_until
    }

    /// A Claude hook event for session `id` (lid and displays as the daemon last saw them).
    pub(crate) fn hook(
        &mut self,
        id: &str,
        hook_event: &str,
        kind: EventKind,
    ) -> Option<Timestamp> {
        let mut event = AgentEvent::new(Provider::Claude, id, hook_event, kind);
        event.cwd = Some("/home/u/proj".into());
        event.transcript_path = Some("/home/u/.claude/projects/p/s.jsonl".into());
        if hook_event == "UserPromptSubmit" {
            event.prompt = Some("Please refactor the storage layer and add tests for it".into());
        }
        if hook_event == "Stop" {
            event.last_assistant_message = Some("Refactored; 12 tests added.".into());
        }
        let machine = self.reg.machine();
        self.apply_outcome(Input::Agent {
            event: Box::new(event),
            lid: machine.lid,
            external_displays: machine.external_displays,
        })
    }

    /// The user submits a prompt in session `id`.
    pub(crate) fn prompt(&mut self, id: &str) {
        self.hook(id, "UserPromptSubmit", EventKind::PromptSubmitted);
    }

    /// The agent's Stop hook for session `id`; returns until when the hook waits, if it does.
    pub(crate) fn stop_hook(&mut self, id: &str, stop_hook_active: bool) -> Option<Timestamp> {
        self.hook(
            id,
            "Stop",
            EventKind::TurnStopped {
                stop_hook_active,
                running_work: None,
                can_continue: true,
                wakes_at: None,
            },
        )
    }

    /// Every ask-before-sleep question: (id, body, reply deadline, latest deadline).
    pub(crate) fn asks(&self) -> Vec<(u64, Payload, Timestamp, Timestamp)> {
        self.effects
            .iter()
            .filter_map(|e| match e {
                Effect::Ask {
                    id,
                    payload,
                    reply_deadline,
                    latest,
                    ..
                } => Some((*id, (**payload).clone(), *reply_deadline, *latest)),
                _ => None,
            })
            .collect()
    }

    /// Every answer to a waiting hook: (session, continuation, status).
    pub(crate) fn answers(&self) -> Vec<(SessionKey, Option<String>, AskStatus)> {
        self.effects
            .iter()
            .filter_map(|e| match e {
                Effect::AnswerHook {
                    key,
                    continuation,
                    status,
                    ..
                } => Some((key.clone(), continuation.clone(), *status)),
                _ => None,
            })
            .collect()
    }

    /// Advances the clock, firing every deadline on the way exactly when it is due.
    pub(crate) fn advance(&mut self, secs: i64) {
        let end = self
            .now
            .checked_add(SignedDuration::from_secs(secs))
            .unwrap();
        let fired = tick_until(&mut self.reg, &mut self.now, end);
        self.effects.extend(fired);
    }

    pub(crate) fn start(&mut self, id: &str) {
        self.apply(Input::Start(StartSession {
            key: key(id),
            cwd: Some("/home/u/proj".into()),
            transcript_path: Some("/home/u/.claude/projects/p/s.jsonl".into()),
            watched_pid: None,
            run_by: None,
            via: None,
        }));
    }

    pub(crate) fn stop(&mut self, id: &str, kind: StopKind) {
        self.apply(Input::Stop(StopSession {
            key: key(id),
            kind,
            end_reason: Some("Stop".into()),
            pending_work: None,
            stop_hook: None,
        }));
    }

    pub(crate) fn soft_lock(&mut self, id: &str) {
        self.apply(Input::SoftLock {
            key: key(id),
            reason: "waiting".into(),
        });
    }

    pub(crate) fn requests(&self) -> Vec<&SuspendRequest> {
        self.effects
            .iter()
            .filter_map(|e| match e {
                Effect::Suspend(r) => Some(r),
                _ => None,
            })
            .collect()
    }

    pub(crate) fn webhooks(&self) -> Vec<(Option<u64>, Payload)> {
        self.effects
            .iter()
            .filter_map(|e| match e {
                Effect::Webhook { id, payload } => Some((*id, (**payload).clone())),
                _ => None,
            })
            .collect()
    }

    pub(crate) fn logged(&self, name: &str) -> usize {
        self.effects
            .iter()
            .filter(|e| matches!(e, Effect::Log(l) if l.name == name))
            .count()
    }

    pub(crate) fn take(&mut self) -> Vec<Effect> {
        std::mem::take(&mut self.effects)
    }
}

/// Asserts that a webhook `p` of `event` with `reason` is about Claude's session `s1`, ended by
/// its `Stop`, in English.
pub(crate) fn assert_about_s1(p: &Payload, event: EventType, reason: &str) {
    assert_eq!(p.event_type, Some(event));
    assert_eq!(p.reason, reason);
    assert_eq!(p.user_interface_culture, "en");
    assert_eq!(p.provider.as_deref(), Some("Claude"));
    assert_eq!(p.session_identifier.as_deref(), Some("s1"));
    assert_eq!(p.end_reason.as_deref(), Some("Stop"));
}
