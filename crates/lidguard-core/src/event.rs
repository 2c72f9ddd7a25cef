//! The provider-neutral model of what an agent did, and what lidguard decided about it.
//!
//! Three things are kept apart: the observation ([`AgentEvent`]: who, what,
//! where), lidguard's answer ([`Decision`], with the [`Provenance`] that justifies it), and who
//! gets to see it (the provider dialect renders a decision for the agent; the daemon logs
//! both). A decision is never inferred from an observation alone: it always names the setting
//! and the lid and display state it was made from.

use serde::{Deserialize, Serialize};

use crate::clamshell::Clamshell;
/// The lid, defined with the rule that reads it ([`crate::clamshell`]).
pub use crate::clamshell::Lid;
use crate::provider::Provider;
use crate::session::SessionKey;
use crate::settings::ClosedLidPermissionRequestDecision;

/// Longest raw payload excerpt kept with an event, in bytes.
pub const RAW_EXCERPT_BYTES: usize = 2048;

/// Longest prompt text kept with a start event, in characters.
pub const PROMPT_CHARS: usize = 500;

pub use crate::session::WorkKind;

/// What happened, in provider-neutral terms.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum EventKind {
    /// The agent process started or resumed a session (telemetry only).
    SessionStarted,
    /// The user submitted a prompt: the session starts working.
    PromptSubmitted,
    /// A completion notice for background work delivered as a prompt (Claude
    /// `<task-notification>`): it finishes the named work but does not start the session.
    WorkNoticeDelivered {
        /// Ids of the finished work, as far as the notice names them.
        work_ids: Vec<String>,
    },
    /// A tool is about to run.
    ToolStarting {
        /// The tool asks the user a question (Claude `AskUserQuestion`, Copilot `ask_user`).
        asks_user: bool,
    },
    /// A tool finished (successfully or with an error).
    ToolFinished {
        /// The tool asked the user a question (its answer is now in).
        asks_user: bool,
    },
    /// The user interrupted a tool or the turn.
    Interrupted,
    /// The agent asks permission for a tool.
    PermissionRequested {
        /// The hook runs before the agent's own permission rules, so the request may be one
        /// the agent would approve by itself (Copilot's `permissionRequest` fires for every
        /// tool call, auto-approved ones included). Then only an `allow` policy is applied:
        /// denying would stop work the user's own rules allow.
        before_agent_rules: bool,
    },
    /// An MCP server asks the user for input.
    ElicitationRequested,
    /// The agent now waits for the user.
    WaitingForUser {
        /// The exact soft-lock reason (e.g. `permission_prompt`).
        state_reason: String,
    },
    /// The user answered; the agent works again.
    WaitingCleared {
        /// Why (e.g. `elicitation_complete`).
        state_reason: String,
    },
    /// Background work started.
    WorkStarted {
        /// The provider's id for it.
        work_id: String,
        /// What it is.
        work: WorkKind,
    },
    /// Background work finished.
    WorkFinished {
        /// The provider's id for it.
        work_id: String,
    },
    /// The agent ended its turn.
    TurnStopped {
        /// The provider says this Stop follows an earlier continuation.
        stop_hook_active: bool,
        /// Background work the provider itself reports as still running, when it reports it
        /// (Claude's `background_tasks`); `None` falls back to the work lidguard tracked.
        running_work: Option<Vec<String>>,
        /// Whether ask-before-sleep may continue this turn (only the events the spec names).
        can_continue: bool,
        /// When the agent's own schedule wakes this session again (Claude's `session_crons`:
        /// the earliest next fire), if it will.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        wakes_at: Option<jiff::Timestamp>,
    },
    /// The turn ended with an error (API failure): not a normal end.
    TurnFailed,
    /// The session ended.
    SessionEnded {
        /// A normal end (counts for end-of-session notifications) or not.
        normal: bool,
        /// Check tracked background work first (Copilot `sessionEnd`).
        defer_for_work: bool,
    },
    /// Recorded, changes nothing.
    Telemetry,
}

impl EventKind {
    /// Short name for logs and `hook-events`.
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::SessionStarted => "session-started",
            EventKind::PromptSubmitted => "prompt-submitted",
            EventKind::WorkNoticeDelivered { .. } => "work-notice-delivered",
            EventKind::ToolStarting { .. } => "tool-starting",
            EventKind::ToolFinished { .. } => "tool-finished",
            EventKind::Interrupted => "interrupted",
            EventKind::PermissionRequested { .. } => "permission-requested",
            EventKind::ElicitationRequested => "elicitation-requested",
            EventKind::WaitingForUser { .. } => "waiting-for-user",
            EventKind::WaitingCleared { .. } => "waiting-cleared",
            EventKind::WorkStarted { .. } => "work-started",
            EventKind::WorkFinished { .. } => "work-finished",
            EventKind::TurnStopped { .. } => "turn-stopped",
            EventKind::TurnFailed => "turn-failed",
            EventKind::SessionEnded { .. } => "session-ended",
            EventKind::Telemetry => "telemetry",
        }
    }

    /// Whether this event starts (or updates) a session, and so may launch the daemon.
    pub fn starts_session(&self) -> bool {
        matches!(self, EventKind::PromptSubmitted)
    }

    /// Whether the agent reads an answer to this event: a closed-lid decision, or a Stop that
    /// ask-before-sleep may continue. The hook of any other event need not wait for its work.
    pub fn awaits_answer(&self) -> bool {
        self.wants_decision()
            || matches!(
                self,
                EventKind::TurnStopped {
                    can_continue: true,
                    ..
                }
            )
    }

    /// Whether this event asks lidguard for a closed-lid decision.
    pub fn wants_decision(&self) -> bool {
        matches!(
            self,
            EventKind::PermissionRequested { .. }
                | EventKind::ElicitationRequested
                | EventKind::ToolStarting { asks_user: true }
        )
    }
}

/// One observation from an agent hook.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentEvent {
    /// The agent harness.
    pub provider: Provider,
    /// The provider's session id (or one derived from the working directory).
    pub session_id: String,
    /// The provider's own name for the event (`PreToolUse`, `agentStop`, ...).
    pub hook_event: String,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
    /// The tool concerned, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// The agent's working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The agent's transcript.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript_path: Option<String>,
    /// The agent process, found from the hook's ancestry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_pid: Option<u32>,
    /// The tool that ran this agent's hook when it is not the agent: another program that reads
    /// the agent's hook files (Cursor and Devin CLI run Claude Code's), found like the owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_by: Option<String>,
    /// The relay the event came through when the agent runs on another machine (set by the
    /// relay, never by the hook): `ssh lgremote@devbox`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// The user's prompt (start events only), at most [`PROMPT_CHARS`] characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// The last assistant text the payload carried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_assistant_message: Option<String>,
    /// Why the provider ended the turn or session (`logout`, `server_error`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The start of the raw payload, at most [`RAW_EXCERPT_BYTES`], for the log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// `sha256:<hex>` of the whole payload, set by the hook (the event stream shows it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload_digest: Option<String>,
    /// Permission requests: what is asked, in a few safe words (see [`crate::remote`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_summary: Option<String>,
    /// Permission requests: `sha256:<hex>` of the tool's input, which a remote answer binds to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_input_digest: Option<String>,
}

impl AgentEvent {
    /// A bare event; dialects fill in the rest.
    pub fn new(
        provider: Provider,
        session_id: impl Into<String>,
        hook_event: impl Into<String>,
        kind: EventKind,
    ) -> AgentEvent {
        AgentEvent {
            provider,
            session_id: session_id.into(),
            hook_event: hook_event.into(),
            kind,
            tool_name: None,
            cwd: None,
            transcript_path: None,
            owner_pid: None,
            run_by: None,
            via: None,
            prompt: None,
            last_assistant_message: None,
            reason: None,
            raw: None,
            payload_digest: None,
            tool_summary: None,
            tool_input_digest: None,
        }
    }

    /// The session this event belongs to.
    pub fn key(&self) -> SessionKey {
        SessionKey::new(self.provider, self.session_id.clone(), "")
    }

    /// The end reason recorded when this event ends a session: `<event>:<reason>` when the
    /// provider gave a reason, else the event name (e.g. `SessionEnd:logout`, `Stop`).
    pub fn end_reason(&self) -> String {
        match self.reason.as_deref().filter(|r| !r.is_empty()) {
            Some(reason) => format!("{}:{reason}", self.hook_event),
            None => self.hook_event.clone(),
        }
    }
}

/// Cuts `text` to at most `max` bytes on a character boundary.
pub fn truncate_bytes(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Cuts `text` to at most `max` characters.
pub fn truncate_chars(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// What lidguard answers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "action",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum DecisionKind {
    /// Allow the permission request.
    AllowPermission,
    /// Deny the permission request, telling the model why.
    DenyPermission {
        /// For the model.
        message: String,
    },
    /// Cancel an MCP elicitation.
    CancelElicitation,
    /// Refuse a tool that would ask the user (Copilot `ask_user`).
    DenyAskUser {
        /// For the model.
        message: String,
    },
}

/// The setting, lid and displays a decision was made from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Provenance {
    /// The setting that decided (`closedLidPermissionRequestDecision`).
    pub setting: String,
    /// Its value at that moment.
    pub value: String,
    /// The lid.
    pub lid: Lid,
    /// Connected displays other than internal panels.
    pub external_displays: Option<u32>,
}

/// A decision with its provenance.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    /// What to answer.
    #[serde(flatten)]
    pub kind: DecisionKind,
    /// Why.
    pub provenance: Provenance,
}

impl Decision {
    /// The log's words for it: what, by which setting, and the machine it was made for.
    pub fn describe(&self) -> String {
        format!(
            "{:?} by {}={} (lid {:?}, external displays {:?})",
            self.kind,
            self.provenance.setting,
            self.provenance.value,
            self.provenance.lid,
            self.provenance.external_displays
        )
    }
}

/// The soft-lock reason of a closed-lid `Ask` decision.
pub const CLOSED_LID_ASK_REASON: &str = "closed_lid_permission_request_ask";

/// The message given to the model when a closed-lid permission request is denied.
pub const CLOSED_LID_DENY_MESSAGE: &str = "The laptop lid is closed and nobody can answer this \
    permission request now (lidguard closed-lid policy: deny). Continue without this action, or \
    stop and summarize what is left for the user.";

/// The message given to the model when a question to the user is refused.
pub const CLOSED_LID_ASK_USER_MESSAGE: &str = "The laptop lid is closed and nobody can answer a \
    question now (lidguard). Make a reasonable assumption and continue, or stop and summarize \
    the open question for the user.";

/// What the closed-lid policy answers to `kind`, or `None` when lidguard stays out of the way
/// (lid open or unknown, a display keeping the machine awake, policy `Ask` for permissions).
/// Only a closed lid that means sleep ([`Clamshell::sleeps`]) — the same condition as
/// suspending — makes lidguard answer.
pub fn closed_lid_decision(
    kind: &EventKind,
    policy: ClosedLidPermissionRequestDecision,
    clamshell: &Clamshell,
) -> Option<Decision> {
    if !clamshell.sleeps() {
        return None;
    }
    let provenance = |setting: &str, value: &str| Provenance {
        setting: setting.to_owned(),
        value: value.to_owned(),
        lid: clamshell.lid,
        external_displays: clamshell.external_displays,
    };
    let permission_setting = "closedLidPermissionRequestDecision";
    let decision = match kind {
        EventKind::PermissionRequested { before_agent_rules } => {
            let decided = match policy {
                ClosedLidPermissionRequestDecision::Deny
                | ClosedLidPermissionRequestDecision::Ask
                | ClosedLidPermissionRequestDecision::Remote
                    if *before_agent_rules =>
                {
                    return None;
                }
                ClosedLidPermissionRequestDecision::Allow => DecisionKind::AllowPermission,
                ClosedLidPermissionRequestDecision::Deny => DecisionKind::DenyPermission {
                    message: CLOSED_LID_DENY_MESSAGE.to_owned(),
                },
                // The prompt stays the agent's, or the phone answers later (the daemon's wait).
                ClosedLidPermissionRequestDecision::Ask
                | ClosedLidPermissionRequestDecision::Remote => return None,
            };
            Decision {
                kind: decided,
                provenance: provenance(permission_setting, policy.as_str()),
            }
        }
        // Nobody can fill in a form or answer a question with the lid shut, whatever the
        // permission policy: the alternative is an agent hanging until someone opens the lid.
        EventKind::ElicitationRequested => Decision {
            kind: DecisionKind::CancelElicitation,
            provenance: provenance("closedLid", "cancel"),
        },
        EventKind::ToolStarting { asks_user: true } => Decision {
            kind: DecisionKind::DenyAskUser {
                message: CLOSED_LID_ASK_USER_MESSAGE.to_owned(),
            },
            provenance: provenance("closedLid", "deny"),
        },
        _ => return None,
    };
    Some(decision)
}

/// Whether a closed-lid permission request goes to the user's phone (policy `Remote`): the
/// same condition as the other policies, and never before the agent's own rules.
pub fn closed_lid_remote(
    kind: &EventKind,
    policy: ClosedLidPermissionRequestDecision,
    clamshell: &Clamshell,
) -> bool {
    policy == ClosedLidPermissionRequestDecision::Remote
        && closed_lid_permission_prompt(kind, clamshell)
}

/// Whether a closed-lid permission request should soft-lock the session (policy `Ask`).
pub fn closed_lid_asks(
    kind: &EventKind,
    policy: ClosedLidPermissionRequestDecision,
    clamshell: &Clamshell,
) -> bool {
    policy == ClosedLidPermissionRequestDecision::Ask
        && closed_lid_permission_prompt(kind, clamshell)
}

/// A permission prompt the agent shows by its own rules, with a closed lid that means sleep.
fn closed_lid_permission_prompt(kind: &EventKind, clamshell: &Clamshell) -> bool {
    matches!(
        kind,
        EventKind::PermissionRequested {
            before_agent_rules: false
        }
    ) && clamshell.sleeps()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ClosedLidPermissionRequestDecision as P;

    /// The lid and displays under the rule where a display always keeps the machine awake.
    fn at(lid: Lid, external_displays: Option<u32>) -> Clamshell {
        Clamshell {
            lid,
            external_displays,
            on_battery: None,
            rule: crate::clamshell::ClamshellRule::DisplayKeepsAwake,
        }
    }

    #[test]
    fn decisions_only_with_the_lid_closed_and_no_external_display() {
        let perm = EventKind::PermissionRequested {
            before_agent_rules: false,
        };
        for (lid, displays) in [
            (Lid::Open, Some(0)),
            (Lid::Unknown, Some(0)),
            (Lid::Closed, Some(1)),
            (Lid::Closed, None),
        ] {
            for policy in [P::Deny, P::Allow, P::Ask, P::Remote] {
                assert_eq!(closed_lid_decision(&perm, policy, &at(lid, displays)), None);
                assert!(!closed_lid_asks(&perm, policy, &at(lid, displays)));
                assert!(!closed_lid_remote(&perm, policy, &at(lid, displays)));
            }
        }
        let deny = closed_lid_decision(&perm, P::Deny, &at(Lid::Closed, Some(0))).unwrap();
        assert!(matches!(deny.kind, DecisionKind::DenyPermission { .. }));
        assert_eq!(
            deny.provenance.setting,
            "closedLidPermissionRequestDecision"
        );
        assert_eq!(deny.provenance.value, "deny");
        let allow = closed_lid_decision(&perm, P::Allow, &at(Lid::Closed, Some(0))).unwrap();
        assert_eq!(allow.kind, DecisionKind::AllowPermission);
        assert_eq!(
            closed_lid_decision(&perm, P::Ask, &at(Lid::Closed, Some(0))),
            None
        );
        assert!(closed_lid_asks(&perm, P::Ask, &at(Lid::Closed, Some(0))));
        // Remote: no decision now (the phone's comes later), no soft-lock.
        assert_eq!(
            closed_lid_decision(&perm, P::Remote, &at(Lid::Closed, Some(0))),
            None
        );
        assert!(closed_lid_remote(
            &perm,
            P::Remote,
            &at(Lid::Closed, Some(0))
        ));
        assert!(!closed_lid_asks(
            &perm,
            P::Remote,
            &at(Lid::Closed, Some(0))
        ));
        assert!(!closed_lid_remote(&perm, P::Ask, &at(Lid::Closed, Some(0))));

        // Before the agent's own rules, only Allow is applied.
        let early = EventKind::PermissionRequested {
            before_agent_rules: true,
        };
        assert_eq!(
            closed_lid_decision(&early, P::Deny, &at(Lid::Closed, Some(0))),
            None
        );
        assert!(!closed_lid_asks(&early, P::Ask, &at(Lid::Closed, Some(0))));
        assert!(!closed_lid_remote(
            &early,
            P::Remote,
            &at(Lid::Closed, Some(0))
        ));
        let allow = closed_lid_decision(&early, P::Allow, &at(Lid::Closed, Some(0))).unwrap();
        assert_eq!(allow.kind, DecisionKind::AllowPermission);

        let elicit = EventKind::ElicitationRequested;
        let cancel = closed_lid_decision(&elicit, P::Allow, &at(Lid::Closed, Some(0))).unwrap();
        assert_eq!(cancel.kind, DecisionKind::CancelElicitation);
        let ask_user = EventKind::ToolStarting { asks_user: true };
        assert!(closed_lid_decision(&ask_user, P::Ask, &at(Lid::Closed, Some(0))).is_some());
        let tool = EventKind::ToolStarting { asks_user: false };
        assert_eq!(
            closed_lid_decision(&tool, P::Deny, &at(Lid::Closed, Some(0))),
            None
        );
    }

    #[test]
    fn events_serialize_flat_and_round_trip() {
        let mut e = AgentEvent::new(
            Provider::Claude,
            "s1",
            "Stop",
            EventKind::TurnStopped {
                stop_hook_active: true,
                running_work: Some(vec!["b1".into()]),
                can_continue: true,
                wakes_at: Some("2026-12-07T11:00:00Z".parse().unwrap()),
            },
        );
        e.reason = Some("x".into());
        let json = serde_json::to_value(&e).unwrap();
        assert_eq!(json["kind"], "turnStopped");
        assert_eq!(json["stopHookActive"], true);
        assert_eq!(json["wakesAt"], "2026-12-07T11:00:00Z");
        assert_eq!(json["runningWork"][0], "b1");
        let back: AgentEvent = serde_json::from_value(json).unwrap();
        assert_eq!(back, e);
        assert_eq!(e.end_reason(), "Stop:x");
    }

    /// Every kind survives the wire inside an event: their fields are flattened next to the
    /// event's own, so a name used twice would break deserialization.
    #[test]
    fn every_kind_round_trips_inside_an_event() {
        let kinds = [
            EventKind::SessionStarted,
            EventKind::PromptSubmitted,
            EventKind::WorkNoticeDelivered {
                work_ids: vec!["a".into()],
            },
            EventKind::ToolStarting { asks_user: true },
            EventKind::ToolFinished { asks_user: false },
            EventKind::Interrupted,
            EventKind::PermissionRequested {
                before_agent_rules: true,
            },
            EventKind::ElicitationRequested,
            EventKind::WaitingForUser {
                state_reason: "permission_prompt".into(),
            },
            EventKind::WaitingCleared {
                state_reason: "x".into(),
            },
            EventKind::WorkStarted {
                work_id: "w".into(),
                work: WorkKind::Shell,
            },
            EventKind::WorkFinished {
                work_id: "w".into(),
            },
            EventKind::TurnStopped {
                stop_hook_active: true,
                running_work: None,
                can_continue: true,
                wakes_at: None,
            },
            EventKind::TurnFailed,
            EventKind::SessionEnded {
                normal: true,
                defer_for_work: true,
            },
            EventKind::Telemetry,
        ];
        for kind in kinds {
            let mut e = AgentEvent::new(Provider::Copilot, "s", "e", kind);
            e.reason = Some("r".into());
            e.tool_name = Some("t".into());
            e.prompt = Some("p".into());
            let json = serde_json::to_string(&e).unwrap();
            let back: AgentEvent =
                serde_json::from_str(&json).unwrap_or_else(|err| panic!("{json}: {err}"));
            assert_eq!(back, e);
        }
    }

    #[test]
    fn truncation_respects_characters() {
        assert_eq!(truncate_bytes("héllo", 2), "h");
        assert_eq!(truncate_bytes("abc", 10), "abc");
        assert_eq!(truncate_chars("héllo", 2), "hé");
    }
}
