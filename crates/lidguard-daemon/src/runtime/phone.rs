//! The runtime's side of the phone (ntfy): permission requests decided remotely, ask before
//! sleep over ntfy next to the webhook, and the "needs you" / "works again" notices.

use std::collections::HashMap;

use jiff::{SignedDuration, Timestamp};
use lidguard_core::ask::{AskOutcome, Transports};
use lidguard_core::event::{
    AgentEvent, CLOSED_LID_ASK_REASON, Decision, DecisionKind, Lid, Provenance as Basis,
};
use lidguard_core::registry::Input;
use lidguard_core::remote::{
    Answer, Asked, Notices, REMOTE_DENY_MESSAGE, REMOTE_TIMEOUT_MESSAGE, ask_notice,
    needs_you_notice, permission_notice, resumed_notice,
};
use lidguard_core::session::{Session, SessionKey};
use lidguard_core::settings::RemoteDecisionFallback;
use lidguard_ipc::protocol::{Outcome, PhoneStatus, RemoteWaiting, Response};
use lidguard_ipc::stream::{Authority, Provenance, Verdict};
use tokio::sync::{mpsc, oneshot};

use super::{Runtime, daemon_event};
use crate::ntfy::Ntfy;
use crate::remote::{Desk, News};
use crate::server::{Answer as Answered, Then, Waiting};

/// The name the stream gives what went to ntfy (next to the webhooks).
pub(super) const NTFY: &str = "ntfy";

/// A permission hook waiting for the phone.
struct RemoteWait {
    /// The event it is about.
    event: AgentEvent,
    /// The lid and displays the decision was made with.
    lid: Lid,
    external_displays: Option<u32>,
    /// When the hook event came, and what the registry made of it.
    at: Timestamp,
    outcome: Outcome,
    /// When the fallback answers.
    until: Timestamp,
    /// Where the hook's second answer goes.
    answer: oneshot::Sender<Response>,
}

/// Ask before sleep, while an exchange runs on its transports.
struct AskRun {
    id: u64,
    transports: Transports,
    /// The ntfy question, when it goes through ntfy.
    question: Option<String>,
}

/// What the phone side keeps.
pub(super) struct Phone {
    desk: Desk,
    news: mpsc::UnboundedSender<News>,
    waits: HashMap<String, RemoteWait>,
    notices: Notices,
    /// Each session's soft-lock reason as last saved.
    locks: HashMap<SessionKey, String>,
    ask: Option<AskRun>,
    /// Which transport gave the last ask-before-sleep answer (for the stream).
    pub(super) answered_by: Option<&'static str>,
}

impl Phone {
    /// The daemon stops: hooks waiting for the phone are let go (their connections end
    /// without a decision, so the agents show their own prompts).
    pub(super) fn let_go(&mut self) {
        self.waits.clear();
        self.ask = None;
    }

    pub(super) fn new(news: mpsc::UnboundedSender<News>) -> Phone {
        Phone {
            desk: Desk::new(news.clone()),
            news,
            waits: HashMap::new(),
            notices: Notices::default(),
            locks: HashMap::new(),
            ask: None,
            answered_by: None,
        }
    }
}

/// How a remote permission request ended.
enum Ended {
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

/// After `delay`, tells the desk's news channel `news` (a question's timer).
fn after(delay: SignedDuration, news: &mpsc::UnboundedSender<News>, what: News) {
    let news = news.clone();
    let delay = std::time::Duration::try_from(delay).unwrap_or_default();
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        let _ = news.send(what);
    });
}

impl Runtime {
    /// Where webhook exchanges report (ask before sleep, combined with ntfy's).
    pub(super) fn phone_news_sender(&self) -> mpsc::UnboundedSender<News> {
        self.phone.news.clone()
    }

    /// A closed-lid permission request under policy `remote`: publishes the question and keeps
    /// the hook's connection for its second answer (the decision), due by the wait's end.
    pub(super) fn ask_phone(
        &mut self,
        event: AgentEvent,
        (lid, external_displays): (Lid, Option<u32>),
        (at, outcome): (Timestamp, Outcome),
        mut first: Response,
    ) -> Answered {
        let settings = self.registry.settings();
        let wait = SignedDuration::from_secs(i64::from(settings.remote_decision_timeout_seconds));
        let fallback = settings.remote_decision_fallback;
        let Some(ntfy) = Ntfy::from_settings(settings) else {
            // Policy `remote` without a topic: the fallback, at once (settings says so too).
            let (answer, _) = self.remote_answer(
                &RemoteWait {
                    event,
                    lid,
                    external_displays,
                    at,
                    outcome,
                    until: at,
                    answer: oneshot::channel().0,
                },
                &Ended::NotSent("ntfy-url is off".into()),
            );
            return (answer, None);
        };
        let key = event.key();
        let asked = Asked::Permission {
            tool: event.tool_name.clone().unwrap_or_default(),
            input_digest: event.tool_input_digest.clone(),
            allow_offered: lidguard_core::remote::shows_whole(event.tool_summary.as_deref()),
        };
        let cwd = event.cwd.clone();
        let summary = event.tool_summary.clone();
        let question = self.phone.desk.ask(&ntfy, key.clone(), asked, move |q| {
            permission_notice(
                q,
                cwd.as_deref(),
                summary.as_deref(),
                wait,
                fallback.as_str(),
            )
        });
        after(wait, &self.phone.news, News::Expired(question.id.clone()));
        let (tx, rx) = oneshot::channel();
        let (present, ended) = oneshot::channel::<()>();
        let gone = self.phone.news.clone();
        let id = question.id.clone();
        tokio::spawn(async move {
            let _ = ended.await;
            let _ = gone.send(News::HookGone(id));
        });
        let mut line = daemon_event(
            "remote-asked",
            Some(&key),
            Some(format!(
                "request {} for {}: asked on the phone; waiting {} s",
                question.id,
                event.tool_name.as_deref().unwrap_or("a tool"),
                wait.as_secs()
            )),
        );
        line.visibility.webhooks = vec![NTFY.to_owned()];
        self.publish(line);
        tracing::info!(session = %key, request = %question.id, "permission request asked on the phone");
        let until = at.checked_add(wait).unwrap_or(at);
        self.phone.waits.insert(
            question.id,
            RemoteWait {
                event,
                lid,
                external_displays,
                at,
                outcome,
                until,
                answer: tx,
            },
        );
        first.wait_until = Some(until);
        first.message = format!("{} — remote decision: wait for the phone", first.message);
        (
            first,
            Some(Then::Wait(Waiting {
                answer: rx,
                present,
            })),
        )
    }

    /// Handles what the desk (or a question's timer) reports.
    pub(super) async fn phone_news(&mut self, news: News) {
        match news {
            News::Answered {
                question,
                answer,
                message_id,
                sent_at,
            } => match question.asked {
                Asked::Permission { .. } => {
                    let ended = Ended::Answered {
                        answer,
                        message_id,
                        sent_at,
                    };
                    self.remote_decided(&question.id, ended).await;
                }
                Asked::AskBeforeSleep => {
                    let outcome = match answer {
                        Answer::Continue(text) => AskOutcome::Answered(text),
                        _ => AskOutcome::Canceled,
                    };
                    if let Some(id) = self.ask_question(&question.id) {
                        self.ask_reported(id, outcome, NTFY).await;
                    }
                }
            },
            News::Expired(id) => {
                if !self.phone.desk.end(&id) {
                    return;
                }
                if self.phone.waits.contains_key(&id) {
                    self.remote_decided(&id, Ended::TimedOut).await;
                } else if let Some(ask) = self.ask_question(&id) {
                    self.ask_reported(ask, AskOutcome::Expired, NTFY).await;
                }
            }
            News::PublishFailed { question, error } => {
                tracing::warn!(request = %question, %error, "the question did not reach ntfy");
                let mut line =
                    daemon_event("ntfy-failed", None, Some(format!("{question}: {error}")));
                line.visibility.webhooks = vec![NTFY.to_owned()];
                self.publish(line);
                if !self.phone.desk.end(&question) {
                    return;
                }
                if self.phone.waits.contains_key(&question) {
                    self.remote_decided(&question, Ended::NotSent(error)).await;
                } else if let Some(ask) = self.ask_question(&question) {
                    let outcome = AskOutcome::WebhookFailed(format!("ntfy: {error}"));
                    self.ask_reported(ask, outcome, NTFY).await;
                }
            }
            News::HookGone(id) => {
                if self.phone.waits.remove(&id).is_some() && self.phone.desk.end(&id) {
                    tracing::info!(request = %id, "the agent stopped waiting for the phone's answer");
                    self.publish_daemon(
                        "remote-abandoned",
                        None,
                        format!("request {id}: the agent stopped waiting"),
                    );
                }
            }
            News::Ignored {
                ignored,
                message_id,
            } => {
                let detail = format!("ntfy message {message_id}: {}", ignored.describe());
                tracing::info!(%detail, "a reply on the phone changed nothing");
                self.publish_daemon("remote-reply-ignored", None, detail.clone());
                self.log(&lidguard_core::registry::LogEvent {
                    name: "remote-reply-ignored".to_owned(),
                    key: None,
                    detail,
                });
            }
            News::Noticed { what, error } => {
                let (kind, detail) = match &error {
                    None => ("ntfy-sent", what.clone()),
                    Some(e) => ("ntfy-failed", format!("{what}: {e}")),
                };
                if let Some(e) = &error {
                    tracing::warn!(%what, error = %e, "ntfy notice not sent");
                }
                let mut line = daemon_event(kind, None, Some(detail));
                line.visibility.webhooks = vec![NTFY.to_owned()];
                self.publish(line);
            }
            News::PollFailed(error) => {
                tracing::warn!(%error, "cannot read the ntfy reply topic (retrying)");
                self.publish_daemon("ntfy-failed", None, format!("reading replies: {error}"));
            }
            News::AskOutcome { id, outcome } => self.ask_reported(id, outcome, "webhook").await,
        }
    }

    /// The lid opened or a display came: every permission request waiting for the phone is
    /// let go without a decision, so the agent shows its own prompt to the person now there.
    pub(super) async fn phone_back_at_the_machine(&mut self) {
        let waiting: Vec<String> = self.phone.waits.keys().cloned().collect();
        for id in waiting {
            if self.phone.desk.end(&id) {
                self.remote_decided(&id, Ended::BackAtTheMachine).await;
            }
        }
    }

    /// The phone in `status`: whether ntfy is set, and the requests waiting for it.
    pub(super) fn phone_status(&self) -> PhoneStatus {
        let mut waiting: Vec<RemoteWaiting> = self
            .phone
            .waits
            .iter()
            .map(|(id, w)| RemoteWaiting {
                request: id.clone(),
                provider: w.event.provider,
                session_id: w.event.session_id.clone(),
                tool: w.event.tool_name.clone(),
                until: w.until,
            })
            .collect();
        waiting.sort_by_key(|w| w.until);
        PhoneStatus {
            ntfy: self.registry.settings().ntfy().is_some(),
            waiting,
        }
    }

    /// The ask-before-sleep exchange whose ntfy question is `question`.
    fn ask_question(&self, question: &str) -> Option<u64> {
        self.phone
            .ask
            .as_ref()
            .filter(|run| run.question.as_deref() == Some(question))
            .map(|run| run.id)
    }

    /// Gives a waiting permission hook its answer: the phone's, or the fallback.
    async fn remote_decided(&mut self, id: &str, ended: Ended) {
        let Some(wait) = self.phone.waits.remove(id) else {
            return;
        };
        let key = wait.event.key();
        let (response, asks) = self.remote_answer(&wait, &ended);
        if asks {
            self.apply(Input::SoftLock {
                key,
                reason: CLOSED_LID_ASK_REASON.to_owned(),
            })
            .await;
        }
        if wait.answer.send(response).is_err() {
            tracing::warn!(request = %id, "the permission hook was gone before its answer");
        }
    }

    /// The decision for a finished wait, logged in `hook-events` and the stream; `true` when
    /// the fallback leaves the prompt to the user (the session then waits for them).
    fn remote_answer(&mut self, wait: &RemoteWait, ended: &Ended) -> (Response, bool) {
        let settings = self.registry.settings();
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
        let stdout = decision
            .as_ref()
            .and_then(|d| lidguard_providers::render(event.provider, &event.hook_event, d));
        self.log_hook_event(
            event,
            (wait.outcome, decision.as_ref()),
            wait.at,
            Some(remote),
        );
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
        line.visibility.stdout = stdout;
        line.visibility.logged = self.store.is_some();
        self.publish(line);
        tracing::info!(session = %key, %reason, "remote decision");
        let mut response = Response::ok(Outcome::Recorded, format!("session {key}: {reason}"));
        let asks = decision.is_none() && !back;
        response.decision = decision;
        (response, asks)
    }

    /// Ask before sleep: starts the ntfy side of the exchange `id` (when it is on) and
    /// returns how many transports run.
    pub(super) fn ask_on_phone(
        &mut self,
        id: u64,
        payload: &lidguard_core::webhook::Payload,
        reply_deadline: Timestamp,
        webhook: bool,
    ) -> u8 {
        let settings = self.registry.settings();
        let ntfy = settings
            .ntfy_follow_up()
            .and_then(|_| Ntfy::from_settings(settings));
        let key = self
            .registry
            .pending_suspend()
            .and_then(|p| p.ask.as_ref())
            .map(|a| a.key.clone());
        let mut count = u8::from(webhook);
        let mut question = None;
        if let (Some(ntfy), Some(key)) = (ntfy, key) {
            let mut payload = payload.clone();
            let cwd = self.registry.pending_origin().and_then(|s| s.cwd.clone());
            let free_text = !ntfy.token.is_empty();
            let asked = self
                .phone
                .desk
                .ask(&ntfy, key, Asked::AskBeforeSleep, move |q| {
                    crate::webhook::fill_last_message(&mut payload);
                    ask_notice(
                        q,
                        cwd.as_deref(),
                        payload.last_assistant_message.as_deref(),
                        reply_deadline,
                        free_text,
                    )
                });
            let left = reply_deadline.duration_since(Timestamp::now());
            after(left, &self.phone.news, News::Expired(asked.id.clone()));
            question = Some(asked.id);
            count += 1;
        }
        if count > 0 {
            self.phone.ask = Some(AskRun {
                id,
                transports: Transports::new(count),
                question,
            });
        }
        count
    }

    /// One transport of ask before sleep reported (see [`Transports`] for what settles it).
    async fn ask_reported(&mut self, id: u64, outcome: AskOutcome, by: &'static str) {
        let Some(run) = self.phone.ask.as_mut().filter(|r| r.id == id) else {
            return;
        };
        let Some(outcome) = run.transports.report(outcome) else {
            return;
        };
        self.end_phone_ask(id);
        self.phone.answered_by = Some(by);
        self.apply(Input::AskResolved { id, outcome }).await;
    }

    /// The exchange `id` is over (or was let go): its ntfy question closes and the webhook
    /// exchange stops.
    pub(super) fn end_phone_ask(&mut self, id: u64) {
        if let Some(run) = self.phone.ask.take_if(|r| r.id == id)
            && let Some(question) = run.question
        {
            self.phone.desk.end(&question);
        }
        if let Some((asking, canceled)) = &self.asking
            && *asking == id
        {
            canceled.store(true, std::sync::atomic::Ordering::Relaxed);
            self.asking = None;
        }
    }

    /// A session was saved: a new wait for the user sends "needs you" (rate-limited), its end
    /// "works again" — each when ntfy is set and that notice is on.
    pub(super) fn phone_session_saved(&mut self, session: &Session) {
        let key = &session.key;
        let reason = session.soft_lock.as_ref().map(|l| l.reason.clone());
        let before = match &reason {
            Some(r) => self.phone.locks.insert(key.clone(), r.clone()),
            None => self.phone.locks.remove(key),
        };
        let settings = self.registry.settings();
        let Some(ntfy) = Ntfy::from_settings(settings) else {
            return;
        };
        let cwd = session.cwd.as_deref();
        let notice = match (before, reason) {
            (None, Some(reason)) => (settings.ntfy_needs_you
                && self.phone.notices.locked(key, &reason, Timestamp::now()))
            .then(|| ("needs-you", needs_you_notice(key, cwd, &reason))),
            // The follow-up is owed even when it is off: that clears it.
            (Some(_), None) => (self.phone.notices.resumed(key) && settings.ntfy_resumed)
                .then(|| ("resumed", resumed_notice(key, cwd))),
            _ => None,
        };
        if let Some((what, notice)) = notice {
            self.phone
                .desk
                .notify(&ntfy, &format!("{what} {key}"), notice);
        }
    }

    /// Sessions restored at start: their waits are known already (no "needs you" for a wait
    /// that began before this daemon).
    pub(super) fn phone_restored(&mut self, sessions: &[Session]) {
        for session in sessions {
            if let Some(lock) = &session.soft_lock {
                self.phone
                    .locks
                    .insert(session.key.clone(), lock.reason.clone());
            }
        }
    }

    /// A session is gone: nothing more to tell about it.
    pub(super) fn phone_session_gone(&mut self, key: &SessionKey) {
        self.phone.locks.remove(key);
        self.phone.notices.forget(key);
    }
}
