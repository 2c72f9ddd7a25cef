//! A hook's turn: the events of one hook request, applied one by one, with the first decision
//! rendered once — here — into the bytes the hook prints, which the stream shows as they are.

use jiff::Timestamp;
use lidguard_core::event::{AgentEvent, Decision, Lid};
use lidguard_core::registry::{LogEvent, Registry, Reply};
use lidguard_core::session::SessionKey;
use lidguard_core::settings::Settings;
use lidguard_ipc::protocol::{Outcome, Response};
use lidguard_ipc::stream::{Authority, StreamEvent, Visibility};
use lidguard_store::StoreWrite;

use super::lines::{self, reply_outcome};
use super::records;

/// The soft-lock reason of `key`'s session, if it waits.
pub(super) fn soft_lock_reason(registry: &Registry, key: &SessionKey) -> Option<String> {
    let session = registry.session(key)?;
    session.soft_lock.as_ref().map(|l| l.reason.clone())
}

/// What the registry answered to one input.
pub(super) struct Applied {
    pub(super) reply: Reply,
    pub(super) decision: Option<Decision>,
    pub(super) hook_waits_until: Option<Timestamp>,
    /// The webhooks the input sent, by event type.
    pub(super) webhooks: Vec<String>,
}

/// A closed-lid permission request the phone decides (policy `remote`).
pub(super) struct ToPhone {
    pub(super) event: AgentEvent,
    pub(super) seen: (Lid, Option<u32>),
    pub(super) at: Timestamp,
    pub(super) outcome: Outcome,
}

/// One event as it was applied: what it came with and what it changed.
pub(super) struct Seen<'a> {
    pub(super) event: &'a AgentEvent,
    pub(super) at: Timestamp,
    pub(super) machine: (Lid, Option<u32>),
    /// The same lid and displays with the power source and the OS's rule.
    pub(super) clamshell: lidguard_core::clamshell::Clamshell,
    /// The session's soft-lock reason before and after.
    pub(super) locked: (Option<String>, Option<String>),
}

/// The state of one hook request across its events.
pub(super) struct HookTurn {
    /// The event the agent reads a decision for: the first that wants one.
    decision_event: Option<String>,
    decision: Option<Decision>,
    /// What the hook prints, rendered for `decision_event`.
    stdout: Option<String>,
    last: Reply,
    wait: Option<(SessionKey, Timestamp)>,
    to_phone: Option<ToPhone>,
}

impl HookTurn {
    pub(super) fn new(events: &[AgentEvent]) -> HookTurn {
        HookTurn {
            decision_event: events
                .iter()
                .find(|e| e.kind.wants_decision())
                .map(|e| e.hook_event.clone()),
            decision: None,
            stdout: None,
            last: Reply::Done,
            wait: None,
            to_phone: None,
        }
    }

    /// Takes in what one event got; returns its log row (none when the phone decides: that
    /// row is written with the phone's answer), its stream line, and the closed-lid decision's
    /// log entry when the agent gets that decision (it is rendered in its dialect).
    pub(super) fn record(
        &mut self,
        seen: &Seen<'_>,
        applied: Applied,
        settings: &Settings,
        logged: bool,
    ) -> (Option<StoreWrite>, StreamEvent, Option<LogEvent>) {
        let event = seen.event;
        let outcome = reply_outcome(&applied.reply).0;
        let policy = settings.closed_lid_permission_request_decision;
        let to_phone = self.decision.is_none()
            && applied.decision.is_none()
            && self.to_phone.is_none()
            && lidguard_core::event::closed_lid_remote(&event.kind, policy, &seen.clamshell);
        // A decision reaches the agent only as the bytes its hook prints: the first one, when
        // the agent's dialect can say it. Any other was not the agent's answer, and neither the
        // log nor the stream names it as one.
        let stdout = match (&applied.decision, &self.decision_event) {
            (Some(d), Some(name)) if self.decision.is_none() => {
                lines::printed(lidguard_providers::render(event.provider, name, d))
            }
            _ => None,
        };
        let decision = applied.decision.filter(|_| stdout.is_some());
        let row = if to_phone {
            self.to_phone = Some(ToPhone {
                event: event.clone(),
                seen: seen.machine,
                at: seen.at,
                outcome,
            });
            None
        } else {
            let decided = (outcome, decision.as_ref());
            Some(records::hook_event(event, decided, seen.at, None))
        };
        if stdout.is_some() {
            self.stdout.clone_from(&stdout);
        }
        let mut authority = match &decision {
            Some(d) => Authority::from_decision(d),
            None => lines::soft_lock_authority(
                seen.locked.0.as_deref(),
                seen.locked.1.as_deref(),
                settings,
                seen.machine,
            ),
        };
        authority.outcome = Some(lines::outcome_name(&applied.reply));
        let visibility = Visibility {
            stdout,
            logged,
            webhooks: applied.webhooks,
        };
        let line = lines::hook_line(event, seen.at, authority, visibility);
        // The turn's first decision is the agent's answer, logged as such.
        let told = decision
            .as_ref()
            .filter(|_| self.decision.is_none())
            .map(|d| LogEvent {
                name: "closed-lid-decision".to_owned(),
                key: Some(event.key()),
                detail: d.describe(),
            });
        if self.decision.is_none() {
            self.decision = decision;
        }
        if let Some(until) = applied.hook_waits_until {
            self.wait = Some((event.key(), until));
        }
        self.last = applied.reply;
        (row, line, told)
    }

    /// The first answer, and what follows it: the phone's question, or a Stop hook's wait.
    pub(super) fn answer(self) -> (Response, Option<ToPhone>, Option<(SessionKey, Timestamp)>) {
        let (outcome, message) = reply_outcome(&self.last);
        let mut answer = Response::ok(outcome, message);
        answer.decision = self.decision;
        answer.stdout = self.stdout;
        (answer, self.to_phone, self.wait)
    }
}
