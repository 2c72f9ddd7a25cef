//! The runtime's side of the phone (ntfy): permission requests decided remotely, ask before
//! sleep over ntfy next to the webhook, and the "needs you" / "works again" notices.

use std::collections::HashMap;

use jiff::{SignedDuration, Timestamp};
use lidguard_core::ask::{AskOutcome, Transports};
use lidguard_core::event::CLOSED_LID_ASK_REASON;
use lidguard_core::notice::{Ending, Moment, What};
use lidguard_core::registry::Input;
use lidguard_core::remote::{
    Answer, Asked, Notices, Whereabouts, ask_notice, needs_you_notice, permission_notice,
    resumed_notice,
};
use lidguard_core::session::{Session, SessionKey};
use lidguard_core::settings::Settings;
use lidguard_ipc::protocol::{PhoneStatus, RemoteWaiting, Response};
use tokio::sync::{mpsc, oneshot};

use super::hooks::ToPhone;
use super::lines::{NTFY, daemon_event};
use super::outbox::Outbox;
use crate::ntfy::Ntfy;
use crate::remote::{Desk, News};
use crate::server::{Answer as Answered, Then, Waiting};

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
    ask: Option<AskRun>,
    /// Which transport gave the last ask-before-sleep answer (for the stream).
    pub(super) answered_by: Option<&'static str>,
    /// An ask-before-sleep exchange settled here: its webhook side is to stop.
    pub(super) ended_exchange: Option<u64>,
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
            ask: None,
            answered_by: None,
            ended_exchange: None,
        }
    }
}

mod answer;

use answer::{Ended, RemoteWait, remote_answer};

/// After `delay`, tells the desk's news channel `news` (a question's timer).
fn after(delay: SignedDuration, news: &mpsc::UnboundedSender<News>, what: News) {
    let news = news.clone();
    let delay = std::time::Duration::try_from(delay).unwrap_or_default();
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        let _ = news.send(what);
    });
}

impl Phone {
    /// Where webhook exchanges report (ask before sleep, combined with ntfy's).
    pub(super) fn news_sender(&self) -> mpsc::UnboundedSender<News> {
        self.news.clone()
    }

    /// A closed-lid permission request under policy `remote`: publishes the question and keeps
    /// the hook's connection for its second answer (the decision), due by the wait's end.
    pub(super) fn ask(
        &mut self,
        settings: &Settings,
        asked: ToPhone,
        mut first: Response,
        out: &mut Outbox,
    ) -> Answered {
        let ToPhone {
            event,
            seen: (lid, external_displays),
            at,
            outcome,
        } = asked;
        let wait = SignedDuration::from_secs(i64::from(settings.remote_decision_timeout_seconds));
        let fallback = settings.remote_decision_fallback;
        let Some(ntfy) = Ntfy::from_settings(settings) else {
            // Policy `remote` without a topic: the fallback, at once (settings says so too).
            let (answer, _) = remote_answer(
                settings,
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
                out,
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
        let via = event.via.clone();
        let summary = event.tool_summary.clone();
        let question = self.desk.ask(&ntfy, key.clone(), asked, move |q| {
            let at = Whereabouts {
                cwd: cwd.as_deref(),
                via: via.as_deref(),
            };
            permission_notice(q, at, summary.as_deref(), wait, fallback.as_str())
        });
        after(wait, &self.news, News::Expired(question.id.clone()));
        let (tx, rx) = oneshot::channel();
        let (present, ended) = oneshot::channel::<()>();
        let gone = self.news.clone();
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
        out.publish(line);
        tracing::info!(session = %key, request = %question.id, "permission request asked on the phone");
        let until = at.checked_add(wait).unwrap_or(at);
        self.waits.insert(
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
    pub(super) fn news(&mut self, news: News, settings: &Settings, out: &mut Outbox) {
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
                    self.remote_decided(settings, &question.id, &ended, out);
                }
                Asked::AskBeforeSleep => {
                    let outcome = match answer {
                        Answer::Continue(text) => AskOutcome::Answered(text),
                        _ => AskOutcome::Canceled,
                    };
                    if let Some(id) = self.ask_question(&question.id) {
                        self.ask_reported(id, outcome, NTFY, out);
                    }
                }
            },
            News::Expired(id) => {
                if !self.desk.end(&id) {
                    return;
                }
                if self.waits.contains_key(&id) {
                    self.remote_decided(settings, &id, &Ended::TimedOut, out);
                } else if let Some(ask) = self.ask_question(&id) {
                    self.ask_reported(ask, AskOutcome::Expired, NTFY, out);
                }
            }
            News::PublishFailed { question, error } => {
                tracing::warn!(request = %question, %error, "the question did not reach ntfy");
                let mut line =
                    daemon_event("ntfy-failed", None, Some(format!("{question}: {error}")));
                line.visibility.webhooks = vec![NTFY.to_owned()];
                out.publish(line);
                if !self.desk.end(&question) {
                    return;
                }
                if self.waits.contains_key(&question) {
                    self.remote_decided(settings, &question, &Ended::NotSent(error), out);
                } else if let Some(ask) = self.ask_question(&question) {
                    let outcome = AskOutcome::WebhookFailed(format!("ntfy: {error}"));
                    self.ask_reported(ask, outcome, NTFY, out);
                }
            }
            News::HookGone(id) => {
                if self.waits.remove(&id).is_some() && self.desk.end(&id) {
                    tracing::info!(request = %id, "the agent stopped waiting for the phone's answer");
                    out.daemon(
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
                out.daemon("remote-reply-ignored", None, detail.clone());
                out.log(&lidguard_core::registry::LogEvent {
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
                out.publish(line);
            }
            News::PollFailed(error) => {
                tracing::warn!(%error, "cannot read the ntfy reply topic (retrying)");
                out.daemon("ntfy-failed", None, format!("reading replies: {error}"));
            }
            News::AskOutcome { id, outcome } => {
                self.ask_reported(id, outcome, "webhook", out);
            }
        }
    }

    /// The lid opened or a display came: every permission request waiting for the phone is
    /// let go without a decision, so the agent shows its own prompt to the person now there.
    pub(super) fn back_at_the_machine(&mut self, settings: &Settings, out: &mut Outbox) {
        let waiting: Vec<String> = self.waits.keys().cloned().collect();
        for id in waiting {
            if self.desk.end(&id) {
                self.remote_decided(settings, &id, &Ended::BackAtTheMachine, out);
            }
        }
    }

    /// The phone in `status`: whether ntfy is set, and the requests waiting for it.
    pub(super) fn status(&self, settings: &Settings) -> PhoneStatus {
        let mut waiting: Vec<RemoteWaiting> = self
            .waits
            .iter()
            .map(|(id, w)| RemoteWaiting {
                request: id.clone(),
                provider: w.event.provider,
                session_id: w.event.session_id.clone(),
                tool: w.event.tool_name.clone(),
                via: w.event.via.clone(),
                until: w.until,
            })
            .collect();
        waiting.sort_by_key(|w| w.until);
        PhoneStatus {
            ntfy: settings.ntfy().is_some(),
            waiting,
        }
    }

    /// The ask-before-sleep exchange whose ntfy question is `question`.
    fn ask_question(&self, question: &str) -> Option<u64> {
        self.ask
            .as_ref()
            .filter(|run| run.question.as_deref() == Some(question))
            .map(|run| run.id)
    }

    /// Gives a waiting permission hook its answer: the phone's, or the fallback.
    fn remote_decided(&mut self, settings: &Settings, id: &str, ended: &Ended, out: &mut Outbox) {
        let Some(wait) = self.waits.remove(id) else {
            return;
        };
        let key = wait.event.key();
        let (response, asks) = remote_answer(settings, &wait, ended, out);
        if asks {
            out.apply(Input::SoftLock {
                key,
                reason: CLOSED_LID_ASK_REASON.to_owned(),
            });
        }
        if wait.answer.send(response).is_err() {
            tracing::warn!(request = %id, "the permission hook was gone before its answer");
        }
    }

    /// Ask before sleep: starts the ntfy side of the exchange `id` (when it is on) and
    /// returns how many transports run.
    pub(super) fn ask_before_sleep(
        &mut self,
        settings: &Settings,
        (key, origin): (Option<SessionKey>, Option<Session>),
        (id, payload, reply_deadline): (u64, &lidguard_core::webhook::Payload, Timestamp),
        webhook: bool,
    ) -> u8 {
        let ntfy = settings
            .ntfy_follow_up()
            .and_then(|_| Ntfy::from_settings(settings));
        let mut count = u8::from(webhook);
        let mut question = None;
        if let (Some(ntfy), Some(key)) = (ntfy, key) {
            let mut payload = payload.clone();
            let free_text = !ntfy.token.is_empty();
            let asked = self.desk.ask(&ntfy, key, Asked::AskBeforeSleep, move |q| {
                crate::webhook::fill_last_message(&mut payload);
                let at = origin.as_ref().map(Whereabouts::of).unwrap_or_default();
                ask_notice(
                    q,
                    at,
                    payload.last_assistant_message.as_deref(),
                    reply_deadline,
                    free_text,
                )
            });
            let left = reply_deadline.duration_since(Timestamp::now());
            after(left, &self.news, News::Expired(asked.id.clone()));
            question = Some(asked.id);
            count += 1;
        }
        if count > 0 {
            self.ask = Some(AskRun {
                id,
                transports: Transports::new(count),
                question,
            });
        }
        count
    }

    /// One transport of ask before sleep reported (see [`Transports`] for what settles it).
    fn ask_reported(&mut self, id: u64, outcome: AskOutcome, by: &'static str, out: &mut Outbox) {
        let Some(run) = self.ask.as_mut().filter(|r| r.id == id) else {
            return;
        };
        let Some(outcome) = run.transports.report(outcome) else {
            return;
        };
        self.end_ask(id);
        self.ended_exchange = Some(id);
        self.answered_by = Some(by);
        out.apply(Input::AskResolved { id, outcome });
    }

    /// The exchange `id` is over (or was let go): its ntfy question closes.
    pub(super) fn end_ask(&mut self, id: u64) {
        if let Some(run) = self.ask.take_if(|r| r.id == id)
            && let Some(question) = run.question
        {
            self.desk.end(&question);
        }
    }

    /// The phone channel: a session that now waits for the user sends "needs you"
    /// (rate-limited), its end "works again" — each when ntfy is set and that notice is on. The
    /// core decides the moments ([`lidguard_core::notice`]); other moments are the desktop's.
    pub(super) fn tell(&mut self, moment: &Moment, settings: &Settings) {
        let notice = match moment {
            Moment::Began(What::WaitingForYou(wait)) => {
                let Some(ntfy) = Ntfy::from_settings(settings) else {
                    return;
                };
                (settings.ntfy_needs_you && self.notices.locked(&wait.key, Timestamp::now())).then(
                    || {
                        let notice = needs_you_notice(&wait.key, wait.whereabouts(), &wait.reason);
                        (ntfy, format!("needs-you {}", wait.key), notice)
                    },
                )
            }
            Moment::Ended(What::WaitingForYou(wait), how) => {
                let key = &wait.key;
                if *how == Ending::Gone {
                    self.notices.forget(key);
                    return;
                }
                let Some(ntfy) = Ntfy::from_settings(settings) else {
                    return;
                };
                // The follow-up is owed even when it is off (or the session only went quiet):
                // that clears it.
                (self.notices.resumed(key) && *how == Ending::Cleared && settings.ntfy_resumed)
                    .then(|| {
                        let notice = resumed_notice(key, wait.whereabouts());
                        (ntfy, format!("resumed {key}"), notice)
                    })
            }
            _ => None,
        };
        if let Some((ntfy, what, notice)) = notice {
            self.desk.notify(&ntfy, &what, notice);
        }
    }
}
