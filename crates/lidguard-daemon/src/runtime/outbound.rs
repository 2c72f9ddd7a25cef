//! Outbound: what leaves the daemon off its event loop — webhooks, the post-stop sound, the
//! ask-before-sleep exchange with the receiver — and reports back through channels.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use jiff::Timestamp;
use lidguard_core::ask::AskOutcome;
use lidguard_core::registry::{Effect, Input};
use lidguard_core::settings::Settings;
use lidguard_core::webhook::Payload;
use tokio::sync::mpsc;

use crate::ask::{Exchange, SOUND_LIMIT};
use crate::remote::News;

pub(super) struct Outbound {
    /// Inputs that come back from work done off the actor (a sound finished playing).
    internal: mpsc::Sender<Input>,
    /// Webhooks still being sent (the daemon's exit waits for them, 5 s at most).
    webhooks: Vec<tokio::task::JoinHandle<()>>,
    /// Ask before sleep: the pending suspend whose exchange runs, and its stop switch.
    asking: Option<(u64, Arc<AtomicBool>)>,
    /// Webhook attempts finished off the actor, for the event log.
    records: mpsc::UnboundedSender<Attempt>,
}

/// The ask-before-sleep exchange an [`Effect::Ask`] asks for, with the pending suspend's id
/// (the URL and secret come from the settings when it is sent).
pub(super) fn ask_of(effect: Effect) -> Option<(u64, Exchange)> {
    let Effect::Ask {
        id,
        payload,
        reply_deadline,
        latest,
        sound,
        volume_percent,
        watched_pid,
    } = effect
    else {
        return None;
    };
    let mut payload = *payload;
    payload.user_interface_culture = crate::webhook::culture(&payload.user_interface_culture);
    let exchange = Exchange {
        url: String::new(),
        payload,
        secret: String::new(),
        reply_deadline,
        latest,
        sound,
        volume_percent,
        watched_pid,
    };
    Some((id, exchange))
}

impl Outbound {
    pub(super) fn new(
        internal: mpsc::Sender<Input>,
        records: mpsc::UnboundedSender<Attempt>,
    ) -> Outbound {
        Outbound {
            internal,
            webhooks: Vec::new(),
            asking: None,
            records,
        }
    }

    /// Tells the registry, from off the actor, that `input` happened.
    pub(super) fn report(&self, input: Input) {
        let done = self.internal.clone();
        tokio::spawn(async move {
            let _ = done.send(input).await;
        });
    }

    /// Sends a webhook off the actor; a pending suspend waiting for it (`id`) hears back
    /// either way.
    pub(super) fn send_webhook(
        &mut self,
        settings: &Settings,
        id: Option<u64>,
        mut payload: Payload,
    ) {
        let Some(event) = payload.event_type else {
            return;
        };
        let Some(url) = crate::webhook::url_for(settings, event) else {
            if let Some(id) = id {
                self.report(Input::WebhookDone { id });
            }
            return;
        };
        payload.user_interface_culture = crate::webhook::culture(&payload.user_interface_culture);
        let secret = settings.webhook_secret.clone();
        let done = self.internal.clone();
        let records = self.records.clone();
        self.webhooks.retain(|t| !t.is_finished());
        self.webhooks.push(tokio::spawn(async move {
            let mut attempt = Attempt::new(&payload, &url);
            let sent = tokio::task::spawn_blocking(move || {
                crate::webhook::fill_last_message(&mut payload);
                crate::webhook::post(&url, &payload, &secret)
            })
            .await;
            match sent {
                Ok(Ok(answer)) => {
                    tracing::info!(?event, status = answer.status, "webhook sent");
                    attempt.finish(true, format!("HTTP {}", answer.status));
                }
                Ok(Err(e)) => {
                    tracing::warn!(?event, error = %e, "webhook failed");
                    attempt.finish(false, e.to_string());
                }
                Err(e) => {
                    tracing::warn!(?event, error = %e, "webhook task failed");
                    attempt.finish(false, e.to_string());
                }
            }
            let _ = records.send(attempt);
            if let Some(id) = id {
                let _ = done.send(Input::WebhookDone { id }).await;
            }
        }));
    }

    /// Plays the post-stop sound off the actor; the registry hears back either way.
    pub(super) fn play_sound(&self, id: u64, sound: String, volume_percent: Option<u8>) {
        let done = self.internal.clone();
        tokio::spawn(async move {
            let played = tokio::task::spawn_blocking(move || {
                lidguard_platform::sound::play(&sound, volume_percent, SOUND_LIMIT)
            })
            .await;
            match played {
                Ok(Ok(played)) => tracing::info!(?played, "post-stop sound played"),
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "post-stop sound not played; suspending anyway")
                }
                Err(e) => tracing::warn!(error = %e, "post-stop sound task failed"),
            }
            let _ = done.send(Input::SoundFinished { id }).await;
        });
    }

    /// Ask before sleep on the receiver's webhook at `url`, next to the phone's
    /// `transports` (reporting to `news`); with no transport at all, the registry hears so at
    /// once.
    pub(super) fn ask_before_sleep(
        &mut self,
        (id, mut exchange): (u64, Exchange),
        (url, secret): (Option<String>, String),
        transports: u8,
        news: mpsc::UnboundedSender<News>,
    ) {
        if transports == 0 {
            let outcome = AskOutcome::WebhookFailed("no follow-up webhook URL".into());
            self.report(Input::AskResolved { id, outcome });
            return;
        }
        let Some(url) = url else {
            return;
        };
        exchange.url = url;
        exchange.secret = secret;
        self.ask(id, exchange, news);
    }

    /// Ask before sleep: runs the exchange with the receiver off the actor; the registry hears
    /// of moved deadlines, and `news` (where ntfy's side reports too) of the outcome.
    fn ask(&mut self, id: u64, exchange: Exchange, news: mpsc::UnboundedSender<News>) {
        let canceled = Arc::new(AtomicBool::new(false));
        if let Some((_, old)) = self.asking.replace((id, Arc::clone(&canceled))) {
            old.store(true, Ordering::Relaxed);
        }
        let report = self.internal.clone();
        let records = self.records.clone();
        let mut attempt = Attempt::new(&exchange.payload, &exchange.url);
        tokio::task::spawn_blocking(move || {
            let moved = |reply_deadline| {
                let _ = report.blocking_send(Input::AskExtended { id, reply_deadline });
            };
            let outcome = crate::ask::run(exchange, &canceled, &moved);
            let stopped = canceled.load(Ordering::Relaxed);
            let result = if stopped {
                "canceled: the wait ended first".to_owned()
            } else {
                format!("{}: {}", outcome.status().as_str(), outcome.detail())
            };
            let ok = !matches!(
                outcome,
                AskOutcome::WebhookFailed(_) | AskOutcome::PollFailed(_)
            );
            attempt.finish(ok, result);
            let _ = records.send(attempt);
            if !stopped {
                let _ = news.send(News::AskOutcome { id, outcome });
            }
        });
    }

    /// Stops the exchange `id` (any exchange when `None`), if it still runs.
    pub(super) fn stop_asking(&mut self, id: Option<u64>) {
        if let Some((_, canceled)) = self
            .asking
            .take_if(|(asking, _)| id.is_none_or(|id| id == *asking))
        {
            canceled.store(true, Ordering::Relaxed);
        }
    }

    /// Waits for the webhooks still being sent (at most their timeout and a second).
    pub(super) async fn finish(&mut self) {
        let sending = std::mem::take(&mut self.webhooks);
        let _ = tokio::time::timeout(crate::webhook::TIMEOUT + Duration::from_secs(1), async {
            for task in sending {
                let _ = task.await;
            }
        })
        .await;
    }
}

/// One webhook attempt (for ask before sleep: the whole exchange), as the history keeps it.
pub(super) struct Attempt {
    pub(super) started: Timestamp,
    clock: std::time::Instant,
    pub(super) event_type: String,
    pub(super) reason: String,
    pub(super) host: String,
    pub(super) provider: Option<String>,
    pub(super) session_id: Option<String>,
    pub(super) ok: bool,
    pub(super) result: String,
    pub(super) duration_ms: u64,
}

impl Attempt {
    fn new(payload: &Payload, url: &str) -> Attempt {
        let host = url::Url::parse(url)
            .ok()
            .and_then(|u| {
                let host = u.host_str()?.to_owned();
                Some(match u.port() {
                    Some(port) => format!("{host}:{port}"),
                    None => host,
                })
            })
            .unwrap_or_else(|| "?".to_owned());
        Attempt {
            started: Timestamp::now(),
            clock: std::time::Instant::now(),
            event_type: payload
                .event_type
                .map(|e| format!("{e:?}"))
                .unwrap_or_default(),
            reason: payload.reason.clone(),
            host,
            provider: payload.provider.clone(),
            session_id: payload.session_identifier.clone(),
            ok: false,
            result: String::new(),
            duration_ms: 0,
        }
    }

    fn finish(&mut self, ok: bool, result: String) {
        self.ok = ok;
        self.result = result;
        self.duration_ms = u64::try_from(self.clock.elapsed().as_millis()).unwrap_or(u64::MAX);
    }
}
