//! Hook waits for ask before sleep: Stop hooks that wait for their second answer, one per
//! session, each with the id of its wait.

use std::collections::HashMap;

use jiff::Timestamp;
use lidguard_core::ask::AskStatus;
use lidguard_core::session::SessionKey;
use lidguard_ipc::protocol::{Outcome, Response};
use tokio::sync::{mpsc, oneshot};

use super::lines::{self, daemon_event};
use super::outbox::Outbox;
use crate::server::{Then, Waiting};

pub(super) struct HookWaits {
    waiting: HashMap<SessionKey, (u64, oneshot::Sender<Response>)>,
    /// The id of the latest wait.
    latest: u64,
    /// Where a waiting hook's connection reports its end.
    gone: mpsc::UnboundedSender<(SessionKey, u64)>,
}

impl HookWaits {
    pub(super) fn new(gone: mpsc::UnboundedSender<(SessionKey, u64)>) -> HookWaits {
        HookWaits {
            waiting: HashMap::new(),
            latest: 0,
            gone,
        }
    }

    /// Keeps the hook of `key`'s connection for its second answer, due by `until`; an older
    /// one (which the registry let go already) is dropped, and its connection answers without
    /// a reply.
    pub(super) fn wait(
        &mut self,
        key: SessionKey,
        answer: &mut Response,
        until: Timestamp,
    ) -> Then {
        let (tx, rx) = oneshot::channel();
        // The connection holds `present` while it waits; when it ends, `gone` says so (no
        // polling: the wait is dropped the moment the agent stops waiting).
        let (present, ended) = oneshot::channel::<()>();
        self.latest += 1;
        let wait = self.latest;
        let gone = self.gone.clone();
        let watched = key.clone();
        tokio::spawn(async move {
            let _ = ended.await;
            let _ = gone.send((watched, wait));
        });
        self.waiting.insert(key, (wait, tx));
        answer.wait_until = Some(until);
        answer.message = format!(
            "{} — ask before sleep: wait for the outcome",
            answer.message
        );
        Then::Wait(Waiting {
            answer: rx,
            present,
        })
    }

    /// The connection of wait `wait` ended: whether it still waited (it is forgotten).
    pub(super) fn left(&mut self, key: &SessionKey, wait: u64) -> bool {
        if self.waiting.get(key).is_none_or(|(id, _)| *id != wait) {
            return false;
        }
        self.waiting.remove(key);
        true
    }

    /// Gives `key`'s waiting hook its second answer: the ask-before-sleep `status`, and the
    /// user's `reply` (through ntfy when `by_ntfy`) rendered as the agent's continuation.
    pub(super) fn answer(
        &mut self,
        key: &SessionKey,
        reply: Option<String>,
        status: AskStatus,
        by_ntfy: bool,
        out: &mut Outbox,
    ) {
        let Some((_, hook)) = self.waiting.remove(key) else {
            tracing::debug!(session = %key, "no hook waits for this ask-before-sleep outcome");
            return;
        };
        let mut line = daemon_event("hook-answered", Some(key), Some(status.as_str().to_owned()));
        let message = format!("session {key}: ask before sleep: {}", status.as_str());
        let mut answer = Response::ok(Outcome::Stopped, message);
        if let Some(reply) = &reply {
            line.authority = lines::continued(by_ntfy);
            let rendered = lidguard_providers::render_continuation(key.provider, reply);
            answer.stdout = lines::printed(rendered);
            line.visibility.stdout.clone_from(&answer.stdout);
        }
        out.publish(line);
        answer.continuation = reply;
        if hook.send(answer).is_err() {
            tracing::warn!(session = %key, "the waiting Stop hook was gone before its answer");
        }
    }

    /// Lets every waiting hook go (their connections answer without a reply).
    pub(super) fn clear(&mut self) {
        self.waiting.clear();
    }
}
