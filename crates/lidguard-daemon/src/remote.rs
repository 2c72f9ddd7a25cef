//! The phone desk: publishes questions and notices to ntfy and, while any question waits,
//! polls the reply topic (every [`POLL_INTERVAL`]; never while nothing waits, so an idle daemon
//! makes no requests). What the replies mean is [`lidguard_core::remote::Book`]'s to judge;
//! the runtime hears the judgements and the publish failures as [`News`].

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use jiff::Timestamp;
use lidguard_core::remote::{Answer, Asked, Book, Ignored, Judgement, Notice, Question};
use lidguard_core::session::SessionKey;
use tokio::sync::mpsc;

use crate::ntfy::{Message, Ntfy};

/// The pause between two polls of the reply topic: the rate ntfy.sh refills a visitor's
/// request allowance at (its docs, "Rate limiting": a burst of 60, then one request per 5 s),
/// so a question may stay open for its whole wait without being throttled.
const POLL_INTERVAL: Duration = Duration::from_secs(5);

/// Full pages read back to back before the usual pause (ntfy.sh allows a burst of 60).
const BACKLOG_PAGES: u32 = 30;

/// What the desk tells the runtime.
#[derive(Debug)]
pub(crate) enum News {
    /// A reply answered an open question (now closed).
    Answered {
        /// The question.
        question: Question,
        /// The answer.
        answer: Answer,
        /// ntfy's id of the reply and when ntfy took it (Unix seconds).
        message_id: String,
        sent_at: i64,
    },
    /// A reply changed nothing.
    Ignored {
        /// Why.
        ignored: Ignored,
        /// ntfy's id of the reply.
        message_id: String,
    },
    /// The question could not be published: nobody will answer it.
    PublishFailed {
        /// The question.
        question: String,
        /// Why.
        error: String,
    },
    /// A notice went out, or not.
    Noticed {
        /// What it was (`needs-you`, `resumed`, a question id).
        what: String,
        /// The error, if it failed.
        error: Option<String>,
    },
    /// Polling the reply topic failed (told once per run of failures).
    PollFailed(String),
    /// A question's wait ended (its timer).
    Expired(String),
    /// The hook waiting for a question's answer left.
    HookGone(String),
    /// Ask before sleep: the webhook exchange `id` ended so.
    AskOutcome {
        /// The exchange.
        id: u64,
        /// How.
        outcome: lidguard_core::ask::AskOutcome,
    },
}

#[derive(Default)]
struct State {
    book: Book,
    ntfy: Option<Ntfy>,
    /// Where the next poll starts: the last reply's id, or the time the first question opened.
    since: Option<String>,
    polling: bool,
    stop: bool,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

/// The desk. Dropping it stops the poller.
pub(crate) struct Desk {
    shared: Arc<Shared>,
    news: mpsc::UnboundedSender<News>,
    next: u64,
}

impl Drop for Desk {
    fn drop(&mut self) {
        self.lock().stop = true;
        self.shared.wake.notify_all();
    }
}

/// 80 random bits from the OS (two v4 UUIDs' random bytes; their version and variant bits are
/// skipped).
fn random_code() -> String {
    let a = uuid::Uuid::new_v4();
    let b = uuid::Uuid::new_v4();
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let bytes = [a[0], a[1], a[2], a[3], a[4], a[5], b[0], b[1], b[2], b[3]];
    lidguard_core::remote::reply_code(&bytes)
}

impl Desk {
    pub(crate) fn new(news: mpsc::UnboundedSender<News>) -> Desk {
        Desk {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                wake: Condvar::new(),
            }),
            news,
            next: 0,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Opens a question about `key`, publishes the notice `notice` makes for it, and polls
    /// for its answer.
    pub(crate) fn ask(
        &mut self,
        ntfy: &Ntfy,
        key: SessionKey,
        asked: Asked,
        notice: impl FnOnce(&Question) -> Notice,
    ) -> Question {
        self.next += 1;
        let question = Question {
            id: format!("r{}-{}", std::process::id(), self.next),
            code: random_code(),
            key,
            asked,
        };
        let shown = notice(&question);
        {
            let mut state = self.lock();
            state.book.open(question.clone());
            // Typed words for the agent count only on a topic a token protects.
            state.book.set_free_text(!ntfy.token.is_empty());
            state.ntfy = Some(ntfy.clone());
            if state.since.is_none() {
                // Replies from before this question cannot answer it.
                state.since = Some((Timestamp::now().as_second() - 1).to_string());
            }
            if !state.polling {
                state.polling = true;
                let shared = Arc::clone(&self.shared);
                let news = self.news.clone();
                std::thread::spawn(move || poll_loop(&shared, &news));
            }
        }
        self.shared.wake.notify_all();
        let id = question.id.clone();
        let news = self.news.clone();
        let ntfy = ntfy.clone();
        std::thread::spawn(move || {
            let sent = ntfy.publish(&shown);
            let _ = match sent {
                Ok(_) => news.send(News::Noticed {
                    what: id,
                    error: None,
                }),
                Err(error) => news.send(News::PublishFailed {
                    question: id,
                    error: error.to_string(),
                }),
            };
        });
        question
    }

    /// Closes a question whose wait ended; a reply to it from now on is late.
    pub(crate) fn end(&self, id: &str) -> bool {
        self.lock().book.end(id)
    }

    /// Publishes a notice that asks nothing.
    pub(crate) fn notify(&self, ntfy: &Ntfy, what: &str, notice: Notice) {
        let news = self.news.clone();
        let ntfy = ntfy.clone();
        let what = what.to_owned();
        std::thread::spawn(move || {
            let error = ntfy.publish(&notice).err().map(|e| e.to_string());
            let _ = news.send(News::Noticed { what, error });
        });
    }
}

/// Polls while a question is open; sleeps on the condition variable (no wake-ups) otherwise.
fn poll_loop(shared: &Shared, news: &mpsc::UnboundedSender<News>) {
    let mut failing = false;
    let mut pages = 0;
    loop {
        let (ntfy, since) = {
            let mut state = shared.state.lock().unwrap_or_else(PoisonError::into_inner);
            while !state.stop && !state.book.is_waiting() {
                // Idle: the next question starts from its own time.
                state.since = None;
                state = shared
                    .wake
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            if state.stop {
                return;
            }
            let Some(ntfy) = state.ntfy.clone() else {
                return;
            };
            (ntfy, state.since.clone().unwrap_or_else(|| "all".into()))
        };
        let mut more = false;
        match ntfy.poll(&since) {
            Ok(page) => {
                failing = false;
                more = page.more;
                for message in page.messages {
                    judge(shared, news, message);
                }
            }
            Err(error) => {
                if !failing {
                    let _ = news.send(News::PollFailed(error.to_string()));
                }
                failing = true;
            }
        }
        let state = shared.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.stop {
            return;
        }
        // A full page: the rest of a backlog is read at once, a few pages within ntfy's burst
        // allowance, before the usual pause.
        let pause = if more && pages < BACKLOG_PAGES {
            pages += 1;
            Duration::ZERO
        } else {
            pages = 0;
            POLL_INTERVAL
        };
        drop(
            shared
                .wake
                .wait_timeout_while(state, pause, |s| !s.stop)
                .unwrap_or_else(PoisonError::into_inner),
        );
    }
}

fn judge(shared: &Shared, news: &mpsc::UnboundedSender<News>, message: Message) {
    let judged = {
        let mut state = shared.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.since = Some(message.id.clone());
        state.book.judge(&message.message)
    };
    let _ = news.send(match judged {
        Judgement::Answered { question, answer } => News::Answered {
            question,
            answer,
            message_id: message.id,
            sent_at: message.time,
        },
        Judgement::Ignored(ignored) => News::Ignored {
            ignored,
            message_id: message.id,
        },
    });
}
