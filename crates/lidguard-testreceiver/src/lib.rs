//! Dev-only test helper: a loopback HTTP receiver that speaks the webhook and follow-up
//! protocol of the reference system's `LidGuard.Notifications` server.
//!
//! A [`Receiver`] listens on `127.0.0.1` (an ephemeral port unless [`Options::port`] says
//! otherwise) and serves each connection on its own thread, one request per connection:
//!
//! | method + path | behaviour |
//! | --- | --- |
//! | `GET /healthz` | text `ok` |
//! | `POST /api/webhooks/lidguard/{secret}` | wrong secret ⇒ 404 `Not found.`; invalid payload ⇒ 400 text; `PreSuspend` / `PostSessionEnd` ⇒ 202 empty; `StopFollowUp` ⇒ 202 `{followUpRequestIdentifier, replyPollUrl, expiresAtUtc}` |
//! | `GET /api/follow-ups/{id}/poll/{token}` | 200 `{status, reply, expiresAtUtc}`; unknown id or wrong token ⇒ 404 |
//! | `POST /api/follow-ups/{id}/reply` | bearer token; body `{reply, waitForConsumption}` |
//! | `POST /api/follow-ups/{id}/extend` | bearer token; body `{extendMinutes}` (default 1, allowed 1..=5) |
//! | `POST /api/follow-ups/{id}/cancel` | bearer token; no body |
//!
//! The action endpoints answer with an [`ActionResult`] as JSON (also for 400, 404, 409 and
//! 410); a missing or wrong `Authorization: Bearer <token>` gets 401 text `Unauthorized.`.
//!
//! **Test-only extras** (not part of the reference protocol):
//!
//! - `GET /test/requests`: every recorded request as a JSON array of [`Received`].
//!   Requests to `/test/...` themselves are not recorded.
//! - `GET /test/follow-ups`: every follow-up request as a JSON array of [`FollowUp`]
//!   (including its poll token and poll URL).
//! - Fault modes ([`WebhookFault`], [`PollFault`]) and [`Options::omit_expires_at`], to test
//!   how clients handle a misbehaving server.
//!
//! Rust tests can drive the same actions in-process ([`Receiver::reply`],
//! [`Receiver::extend`], [`Receiver::cancel`]) and need no HTTP client:
//!
//! ```no_run
//! use std::time::Duration;
//! use lidguard_testreceiver::{Options, Receiver};
//!
//! let receiver = Receiver::start(Options::default());
//! // ... point the code under test at receiver.webhook_url() ...
//! let follow_up = receiver
//!     .wait_for_follow_up(|_| true, Duration::from_secs(10))
//!     .expect("a StopFollowUp webhook");
//! assert!(receiver.reply(&follow_up.id, "keep going", true).succeeded);
//! ```
#![allow(
    clippy::disallowed_methods,
    reason = "test support: fixtures are written and the environment read directly"
)]

mod http;
pub mod ntfy;
mod server;
mod state;
mod validate;

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Duration;

use jiff::Timestamp;
use serde::Serialize;

use crate::server::Shared;
use crate::state::State;

/// How the webhook endpoint misbehaves (after the secret check; faults create no follow-up).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WebhookFault {
    /// Follow the protocol.
    #[default]
    Normal,
    /// Answer 500 with a text body.
    Status500,
    /// Answer 202 with the body `not json` (labelled `application/json`).
    Garbage,
    /// Read the request, never answer, keep the connection open for [`Options::silent_hold`].
    Silent,
}

/// How the poll endpoint misbehaves (for a known id and token; others still get 404).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PollFault {
    /// Follow the protocol.
    #[default]
    Normal,
    /// Answer 500 with a text body.
    Status500,
    /// Answer 200 with the body `not json` (labelled `application/json`).
    Garbage,
    /// Read the request, never answer, keep the connection open for [`Options::silent_hold`].
    Silent,
    /// Answer 200 `{"status":"Weird","reply":null,"expiresAtUtc":<deadline>}`.
    UnknownStatus,
}

/// A fault mode name that [`WebhookFault::from_str`] or [`PollFault::from_str`] does not know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseFaultError(String);

impl fmt::Display for ParseFaultError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown fault mode `{}`", self.0)
    }
}

impl std::error::Error for ParseFaultError {}

/// The fault named `name` among `known` (case, `-` and `_` ignored: `Status500`, `status-500`
/// and `status_500` are all `status500`).
fn parse_fault<T: Copy>(name: &str, known: &[(&str, T)]) -> Result<T, ParseFaultError> {
    let key: String = name
        .chars()
        .filter(|c| !matches!(c, '-' | '_'))
        .map(|c| c.to_ascii_lowercase())
        .collect();
    known
        .iter()
        .find(|(known, _)| *known == key)
        .map(|(_, fault)| *fault)
        .ok_or_else(|| ParseFaultError(name.to_owned()))
}

impl FromStr for WebhookFault {
    type Err = ParseFaultError;

    /// Accepts `normal`, `status500`, `garbage`, `silent`.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        use WebhookFault::*;
        let known = [
            ("normal", Normal),
            ("status500", Status500),
            ("garbage", Garbage),
            ("silent", Silent),
        ];
        parse_fault(name, &known)
    }
}

impl FromStr for PollFault {
    type Err = ParseFaultError;

    /// Accepts `normal`, `status500`, `garbage`, `silent`, `unknown-status`.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        use PollFault::*;
        parse_fault(
            name,
            &[
                ("normal", Normal),
                ("status500", Status500),
                ("garbage", Garbage),
                ("silent", Silent),
                ("unknownstatus", UnknownStatus),
            ],
        )
    }
}

/// How to start a [`Receiver`].
#[derive(Clone, Debug)]
pub struct Options {
    /// Port on 127.0.0.1; 0 (the default) picks a free one.
    pub port: u16,
    /// The path secret of the webhook endpoint; default `test-webhook-secret`.
    pub secret: String,
    /// The bearer token of the action endpoints; default `test-access-token`.
    pub access_token: String,
    /// Answer StopFollowUp with an absolute `replyPollUrl` (`http://127.0.0.1:PORT/api/...`)
    /// instead of the reference server's relative `/api/...` path; default false.
    pub absolute_poll_url: bool,
    /// Initial fault mode of the webhook endpoint (change later with
    /// [`Receiver::set_webhook_fault`]).
    pub webhook_fault: WebhookFault,
    /// Initial fault mode of the poll endpoint (change later with [`Receiver::set_poll_fault`]).
    pub poll_fault: PollFault,
    /// Leave `expiresAtUtc` out of StopFollowUp answers (an older contract had it optional).
    pub omit_expires_at: bool,
    /// How long a `Silent` fault holds a connection open without answering; default 60 s.
    pub silent_hold: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            port: 0,
            secret: "test-webhook-secret".to_owned(),
            access_token: "test-access-token".to_owned(),
            absolute_poll_url: false,
            webhook_fault: WebhookFault::Normal,
            poll_fault: PollFault::Normal,
            omit_expires_at: false,
            silent_hold: Duration::from_secs(60),
        }
    }
}

/// One recorded request (JSON: `{method, path, headers, body, json, receivedAt}`).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Received {
    /// The method, e.g. `POST`.
    pub method: String,
    /// The request target as sent: path and query string.
    pub path: String,
    /// Header fields by lowercase name; repeated fields are joined with `, `.
    pub headers: BTreeMap<String, String>,
    /// The raw body (invalid UTF-8 replaced).
    pub body: String,
    /// The body parsed as JSON, `None` when empty or not JSON.
    pub json: Option<serde_json::Value>,
    /// When the request arrived.
    pub received_at: Timestamp,
}

impl Received {
    /// The value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// The `eventType` of a JSON body, if any (webhook requests).
    pub fn event_type(&self) -> Option<&str> {
        self.json.as_ref()?.get("eventType")?.as_str()
    }

    /// Whether this request went to the webhook endpoint (with any secret).
    pub fn is_webhook(&self) -> bool {
        self.method == "POST" && self.path.starts_with("/api/webhooks/lidguard/")
    }
}

/// State of a follow-up request; serialized with the reference server's exact names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum FollowUpStatus {
    /// Waiting for a reply, before the deadline.
    Pending,
    /// A reply was stored.
    Answered,
    /// The deadline passed without a reply.
    Expired,
    /// Canceled from the dashboard (or [`Receiver::cancel`]).
    Canceled,
}

impl fmt::Display for FollowUpStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Pending => "Pending",
            Self::Answered => "Answered",
            Self::Expired => "Expired",
            Self::Canceled => "Canceled",
        })
    }
}

/// One follow-up request, created by a valid `StopFollowUp` webhook (JSON keys camelCase).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FollowUp {
    /// Public identifier: a v4 UUID as 32 lowercase hex characters.
    pub id: String,
    /// Poll token: 24 random bytes as 48 lowercase hex characters.
    pub poll_token: String,
    /// The `replyPollUrl` handed out (relative or absolute per [`Options::absolute_poll_url`]).
    pub reply_poll_url: String,
    /// Current status (lazy expiry applied).
    pub status: FollowUpStatus,
    /// Current deadline, returned to pollers as `expiresAtUtc`.
    pub deadline_at_utc: Timestamp,
    /// The initial deadline plus 300 s; extensions stop here.
    pub maximum_deadline_at_utc: Timestamp,
    /// The reply text once answered.
    pub reply: Option<String>,
    /// When the reply was stored.
    pub replied_at_utc: Option<Timestamp>,
    /// When a poll first saw the `Answered` status.
    pub consumed_at_utc: Option<Timestamp>,
    /// When the webhook created the request.
    pub created_at_utc: Timestamp,
    /// The webhook's `provider`.
    pub provider: String,
    /// The webhook's `sessionIdentifier`.
    pub session_identifier: String,
}

/// Outcome of reply / extend / cancel, as the action endpoints answer it (JSON keys
/// camelCase; [`ActionResult::http_status`] is the HTTP status and is not serialized).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionResult {
    /// 200, or 400 (bad input), 404 (unknown id), 409 (conflicting status), 410 (expired).
    #[serde(skip)]
    pub http_status: u16,
    /// Whether the action took effect (or, for cancel, the request already was canceled).
    pub succeeded: bool,
    /// Whether an extend moved the deadline.
    pub extended: bool,
    /// Status after the action; `None` when no follow-up request was found or input was bad.
    pub status: Option<FollowUpStatus>,
    /// Human-readable outcome.
    pub message: String,
    /// Current deadline.
    pub deadline_at_utc: Option<Timestamp>,
    /// Maximum deadline (initial deadline + 300 s).
    pub maximum_deadline_at_utc: Option<Timestamp>,
    /// Whole seconds (rounded up, at least 0) until the maximum deadline.
    pub provider_hook_timeout_remaining_seconds: i64,
    /// Whether a poll has consumed the reply.
    pub reply_consumed: bool,
    /// When a poll consumed the reply.
    pub consumed_at_utc: Option<Timestamp>,
}

/// A running receiver. Dropping it stops accepting connections (already accepted ones finish).
#[derive(Debug)]
pub struct Receiver {
    shared: Arc<Shared>,
    addr: SocketAddr,
    url: String,
}

impl Receiver {
    /// Starts a receiver on 127.0.0.1.
    ///
    /// # Panics
    ///
    /// When the port cannot be bound (see [`Receiver::try_start`]).
    pub fn start(options: Options) -> Self {
        Self::try_start(options).expect("start the test receiver on 127.0.0.1")
    }

    /// Starts a receiver on 127.0.0.1, reporting a failure to bind.
    pub fn try_start(options: Options) -> io::Result<Self> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, options.port))?;
        let addr = listener.local_addr()?;
        let url = format!("http://{addr}");
        let shared = Arc::new(Shared {
            poll_url_prefix: if options.absolute_poll_url {
                url.clone()
            } else {
                String::new()
            },
            secret: options.secret,
            access_token: options.access_token,
            omit_expires_at: options.omit_expires_at,
            silent_hold: options.silent_hold,
            stopping: AtomicBool::new(false),
            state: Mutex::new(State {
                webhook_fault: options.webhook_fault,
                poll_fault: options.poll_fault,
                ..State::default()
            }),
            changed: Condvar::new(),
        });
        let accept_shared = Arc::clone(&shared);
        thread::Builder::new()
            .name("testreceiver-accept".to_owned())
            .spawn(move || accept_loop(&accept_shared, &listener))?;
        Ok(Self { shared, addr, url })
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The webhook URL with the right secret: `<url>/api/webhooks/lidguard/<secret>`.
    pub fn webhook_url(&self) -> String {
        format!("{}/api/webhooks/lidguard/{}", self.url, self.shared.secret)
    }

    /// The webhook path secret.
    pub fn secret(&self) -> &str {
        &self.shared.secret
    }

    /// The bearer token of the action endpoints.
    pub fn access_token(&self) -> &str {
        &self.shared.access_token
    }

    /// Every recorded request so far, oldest first (requests to `/test/...` are not recorded).
    pub fn requests(&self) -> Vec<Received> {
        self.shared.lock().requests.clone()
    }

    /// The first recorded request (already received or arriving within `timeout`) that
    /// matches `predicate`. A request is recorded together with its effects, so when a
    /// `StopFollowUp` webhook is returned its [`FollowUp`] exists.
    pub fn wait_for_request(
        &self,
        mut predicate: impl FnMut(&Received) -> bool,
        timeout: Duration,
    ) -> Option<Received> {
        self.shared.wait_until(timeout, |state| {
            state.requests.iter().find(|r| predicate(r)).cloned()
        })
    }

    /// Every follow-up request, oldest first, after lazy expiry.
    pub fn follow_ups(&self) -> Vec<FollowUp> {
        self.shared.apply(None, |state, _| state.follow_ups.clone())
    }

    /// The follow-up request with public identifier `id`, after lazy expiry.
    pub fn follow_up(&self, id: &str) -> Option<FollowUp> {
        self.shared.apply(None, |state, _| state.find(id).cloned())
    }

    /// The first follow-up request (existing or created within `timeout`) that matches
    /// `predicate`, after lazy expiry.
    pub fn wait_for_follow_up(
        &self,
        mut predicate: impl FnMut(&FollowUp) -> bool,
        timeout: Duration,
    ) -> Option<FollowUp> {
        self.shared.wait_until(timeout, |state| {
            state.follow_ups.iter().find(|f| predicate(f)).cloned()
        })
    }

    /// Like `POST /api/follow-ups/{id}/reply`: stores `text` as the reply and, with
    /// `wait_for_consumption`, waits up to about 4 s for a poll to consume it.
    pub fn reply(&self, id: &str, text: &str, wait_for_consumption: bool) -> ActionResult {
        self.shared.reply(id, text, wait_for_consumption, None)
    }

    /// Like `POST /api/follow-ups/{id}/extend` with `{"extendMinutes": minutes}`.
    pub fn extend(&self, id: &str, minutes: i64) -> ActionResult {
        self.shared
            .apply(None, |state, now| state.extend(id, minutes, now))
    }

    /// Like `POST /api/follow-ups/{id}/cancel`.
    pub fn cancel(&self, id: &str) -> ActionResult {
        self.shared.apply(None, |state, now| state.cancel(id, now))
    }

    /// Changes the webhook endpoint's fault mode for requests arriving from now on.
    pub fn set_webhook_fault(&self, fault: WebhookFault) {
        self.shared.lock().webhook_fault = fault;
    }

    /// Changes the poll endpoint's fault mode for requests arriving from now on.
    pub fn set_poll_fault(&self, fault: PollFault) {
        self.shared.lock().poll_fault = fault;
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        // Wake the accept thread so it sees the flag and drops the listener.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
    }
}

fn accept_loop(shared: &Arc<Shared>, listener: &TcpListener) {
    for stream in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else {
            // E.g. out of file descriptors: back off a little instead of spinning.
            thread::sleep(Duration::from_millis(10));
            continue;
        };
        let shared = Arc::clone(shared);
        let _ = thread::Builder::new()
            .name("testreceiver-conn".to_owned())
            .spawn(move || server::serve_connection(&shared, &stream));
    }
}
