//! How a permission request that waited for the phone ends: the phone's answer, the
//! fallback when none came in time, or the agent's own prompt when someone is back at the
//! machine — logged in `hook-events`, streamed, and rendered for the agent.

use jiff::Timestamp;
use lidguard_core::event::{AgentEvent, Decision, DecisionKind, Lid, Provenance as Basis};
use lidguard_core::remote::{Answer, REMOTE_DENY_MESSAGE, REMOTE_TIMEOUT_MESSAGE};
use lidguard_core::settings::{RemoteDecisionFallback, Settings};
use lidguard_ipc::protocol::{Outcome, Response};
use lidguard_ipc::stream::{Authority, Provenance, Verdict};
use tokio::sync::oneshot;

use crate::runtime::lines::{self, NTFY, daemon_event};
use crate::runtime::outbox::Outbox;
use crate::runtime::records;

/// A permission hook waiting for the phone.
pub(super) struct RemoteWait {
    /// The event it is about.
    pub(super) event: AgentEvent,
    /// The lid and displays the decision was made with.
    pub(super) lid: Lid,
    pub(super) external_displays: Option<u32>,
    /// When the hook event came, and what the registry made of it.
    pub(super) at: Timestamp,
    pub(super) outcome: Outcome,
    /// When the fallback answers.
    pub(super) until: Timestamp,
    /// Where the hook's second answer goes.
    pub(super) answer: oneshot::Sender<Response>,
}

/// How a remote permission request ended.
pub(super) enum Ended {
    Answered {
        answer: Answer,
        message_id: String,
        sent_at: i64,
    },
    TimedOut,
    NotSent(String),
    /// The lid opened (or a display came): the agent's own prompt takes over.
    BackAtTheMachine,
}

/// The decision for a finished wait, logged in `hook-events` and the stream; `true` when
/// the fallback leaves the prompt to the user (the session then waits for them).
pub(super) fn remote_answer(
    settings: &Settings,
    wait: &RemoteWait,
    ended: &Ended,
    out: &mut Outbox,
) -> (Response, bool) {
    let fallback = settings.remote_decision_fallback;
    let waited = settings.remote_decision_timeout_seconds;
    let basis = |setting: &str, value: &str| Basis {
        setting: setting.to_owned(),
        value: value.to_owned(),
        lid: wait.lid,
        external_displays: wait.external_displays,
    };
    let deny_fallback = |why: &str| {
        let kind = DecisionKind::DenyPermission {
            message: REMOTE_TIMEOUT_MESSAGE.to_owned(),
        };
        let reason = format!("{why}: fallback deny");
        (Some(kind), basis("remoteDecisionFallback", "deny"), reason)
    };
    let (kind, provenance, reason, remote) = match ended {
        Ended::Answered {
            answer,
            message_id,
            sent_at,
        } => {
            let when = Timestamp::from_second(*sent_at).unwrap_or_else(|_| Timestamp::now());
            let kind = match answer {
                Answer::Allow => DecisionKind::AllowPermission,
                _ => DecisionKind::DenyPermission {
                    message: REMOTE_DENY_MESSAGE.to_owned(),
                },
            };
            let reason = format!(
                "answered {} on the phone at {when} (ntfy reply {message_id})",
                answer.name()
            );
            let remote = serde_json::json!({
                "via": NTFY, "answer": answer.name(), "replyId": message_id,
                "repliedAt": when.to_string(),
            });
            let basis = basis("closedLidPermissionRequestDecision", "remote");
            (Some(kind), basis, reason, remote)
        }
        Ended::BackAtTheMachine => {
            let reason = "the lid opened or a display came: the agent's own prompt".to_owned();
            let remote = serde_json::json!({ "via": NTFY, "answer": null, "why": reason });
            (
                None,
                basis("closedLidPermissionRequestDecision", "remote"),
                reason,
                remote,
            )
        }
        Ended::TimedOut | Ended::NotSent(_) => {
            let why = match ended {
                Ended::NotSent(error) => format!("not sent to the phone ({error})"),
                _ => format!("no answer on the phone within {waited} s"),
            };
            let remote = serde_json::json!({
                "via": NTFY, "answer": null, "fallback": fallback.as_str(), "why": why,
            });
            match fallback {
                RemoteDecisionFallback::Deny => {
                    let (kind, basis, reason) = deny_fallback(&why);
                    (kind, basis, reason, remote)
                }
                RemoteDecisionFallback::Ask => {
                    let reason = format!("{why}: fallback ask");
                    (None, basis("remoteDecisionFallback", "ask"), reason, remote)
                }
            }
        }
    };
    let event = &wait.event;
    let decision = kind.map(|kind| Decision {
        kind,
        provenance: provenance.clone(),
    });
    let stdout = decision.as_ref().and_then(|d| {
        lines::printed(lidguard_providers::render(
            event.provider,
            &event.hook_event,
            d,
        ))
    });
    // A decision the agent's dialect cannot say is not one the agent received.
    let decision = decision.filter(|_| stdout.is_some());
    out.write(records::hook_event(
        event,
        (wait.outcome, decision.as_ref()),
        wait.at,
        Some(remote),
    ));
    let key = event.key();
    let mut line = daemon_event("remote-decision", Some(&key), Some(reason.clone()));
    let back = matches!(ended, Ended::BackAtTheMachine);
    line.authority = Authority {
        decision: match &decision {
            Some(d) => Authority::from_decision(d).decision,
            None if back => Verdict::None,
            None => Verdict::SoftLock,
        },
        provenance: (!back).then(|| Provenance {
            setting: Some(provenance.setting.clone()),
            value: Some(provenance.value),
            lid: Some(wait.lid),
            external_displays: wait.external_displays,
            reason: Some(reason.clone()),
        }),
        outcome: None,
    };
    line.visibility.stdout.clone_from(&stdout);
    line.visibility.logged = out.logged;
    out.publish(line);
    tracing::info!(session = %key, %reason, "remote decision");
    let mut response = Response::ok(Outcome::Recorded, format!("session {key}: {reason}"));
    let asks = decision.is_none() && !back;
    response.decision = decision;
    response.stdout = stdout;
    (response, asks)
}
