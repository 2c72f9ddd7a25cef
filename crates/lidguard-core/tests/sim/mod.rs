//! A registry driven by a virtual clock, recording every effect: shared by the suspend and
//! webhook simulation tests.

#![allow(dead_code, reason = "each test file uses a different part")]

use jiff::{SignedDuration, Timestamp};
use lidguard_core::event::Lid;
use lidguard_core::provider::Provider;
use lidguard_core::registry::{Effect, Input, Outcome, Registry, StartSession, StopSession};
use lidguard_core::session::{SessionKey, StopKind};
use lidguard_core::settings::Settings;
use lidguard_core::suspend::{Machine, SuspendRequest};
use lidguard_core::webhook::Payload;

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

pub(crate) struct Sim {
    pub(crate) reg: Registry,
    pub(crate) now: Timestamp,
    pub(crate) effects: Vec<Effect>,
}

impl Sim {
    /// A restored, empty registry that has seen `machine`.
    pub(crate) fn with(settings: Settings, machine: Machine) -> Sim {
        let mut sim = Sim {
            reg: Registry::new(settings),
            now: "2026-11-30T03:00:00Z".parse().unwrap(),
            effects: Vec::new(),
        };
        sim.apply(Input::Restore(Vec::new()));
        sim.apply(Input::Machine(machine));
        sim.effects.clear();
        sim
    }

    pub(crate) fn apply(&mut self, input: Input) {
        let Outcome { effects, .. } = self.reg.apply(input, self.now);
        self.effects.extend(effects);
    }

    /// Advances the clock, firing every deadline on the way exactly when it is due.
    pub(crate) fn advance(&mut self, secs: i64) {
        let end = self
            .now
            .checked_add(SignedDuration::from_secs(secs))
            .unwrap();
        while let Some(deadline) = self.reg.next_deadline() {
            if deadline > end {
                break;
            }
            self.now = self.now.max(deadline);
            self.apply(Input::Tick);
        }
        self.now = end;
    }

    pub(crate) fn start(&mut self, id: &str) {
        self.apply(Input::Start(StartSession {
            key: key(id),
            cwd: Some("/home/u/proj".into()),
            transcript_path: Some("/home/u/.claude/projects/p/s.jsonl".into()),
            watched_pid: None,
        }));
    }

    pub(crate) fn stop(&mut self, id: &str, kind: StopKind) {
        self.apply(Input::Stop(StopSession {
            key: key(id),
            kind,
            end_reason: Some("Stop".into()),
            pending_work: None,
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
