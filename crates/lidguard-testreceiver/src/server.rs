//! Connection handling and routing.

use std::collections::BTreeMap;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::AtomicBool;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::http::{self, Request, Response};
use crate::state::State;
use crate::validate::{self, Event};
use crate::{ActionResult, FollowUpStatus, PollFault, Received, WebhookFault};

/// How long a connection may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a reply with `waitForConsumption` waits for a poll to consume it (the reference
/// checks 5 times, 1 s apart).
const CONSUMPTION_WAIT: Duration = Duration::from_secs(4);

/// The body of the `Garbage` fault answers.
const GARBAGE: &[u8] = b"not json";

/// State shared by the accept thread, the connection threads and the [`crate::Receiver`].
#[derive(Debug)]
pub(crate) struct Shared {
    /// Path secret of the webhook endpoint.
    pub(crate) secret: String,
    /// Bearer token of the action endpoints.
    pub(crate) access_token: String,
    /// Put in front of `/api/follow-ups/...` in poll URLs: empty, or the receiver's base URL.
    pub(crate) poll_url_prefix: String,
    /// Leave `expiresAtUtc` out of StopFollowUp answers.
    pub(crate) omit_expires_at: bool,
    /// How long a `Silent` fault keeps a connection open.
    pub(crate) silent_hold: Duration,
    /// Set when the [`crate::Receiver`] is dropped.
    pub(crate) stopping: AtomicBool,
    /// Requests, follow-up requests and fault modes.
    pub(crate) state: Mutex<State>,
    /// Notified after every change of `state`.
    pub(crate) changed: Condvar,
}

/// What to do with a connection after routing.
enum Answer {
    /// Write this response and close.
    Respond(Response),
    /// Write nothing; hold the connection open for [`Shared::silent_hold`].
    Silent,
}

impl From<Response> for Answer {
    fn from(response: Response) -> Self {
        Self::Respond(response)
    }
}

impl Shared {
    /// Locks the state (a panicking test thread does not poison it for the others).
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` on the lazily expired state, records `received` in the same critical section
    /// (so an observer that sees the request also sees its effects), then notifies waiters.
    pub(crate) fn apply<T>(
        &self,
        received: Option<Received>,
        f: impl FnOnce(&mut State, Timestamp) -> T,
    ) -> T {
        let now = Timestamp::now();
        let result = {
            let mut state = self.lock();
            state.expire(now);
            let result = f(&mut state, now);
            state.requests.extend(received);
            result
        };
        self.changed.notify_all();
        result
    }

    /// Waits until `check` returns `Some` (checked at once and after every change), or until
    /// `timeout` has passed.
    pub(crate) fn wait_until<T>(
        &self,
        timeout: Duration,
        mut check: impl FnMut(&mut State) -> Option<T>,
    ) -> Option<T> {
        let end = Instant::now() + timeout;
        let mut state = self.lock();
        loop {
            state.expire(Timestamp::now());
            if let Some(found) = check(&mut state) {
                return Some(found);
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            // Wake at least every 100 ms so lazy expiry is seen without other traffic.
            state = self
                .changed
                .wait_timeout(state, left.min(Duration::from_millis(100)))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Stores a reply and, when asked, waits for a poll to consume it.
    pub(crate) fn reply(
        &self,
        id: &str,
        text: &str,
        wait_for_consumption: bool,
        received: Option<Received>,
    ) -> ActionResult {
        let result = self.apply(received, |state, now| state.reply(id, text, now));
        if !(result.succeeded && wait_for_consumption) {
            return result;
        }
        self.wait_until(CONSUMPTION_WAIT, |state| {
            let row = state.find(id)?;
            (row.status != FollowUpStatus::Answered || row.consumed_at_utc.is_some()).then_some(())
        });
        let now = Timestamp::now();
        let mut state = self.lock();
        state.expire(now);
        match state.find(id) {
            Some(row) => ActionResult::from_row(
                row,
                result.http_status,
                result.succeeded,
                result.extended,
                &result.message,
                now,
            ),
            None => result,
        }
    }
}

/// Serves one connection: one request, one answer (or silence), then close.
pub(crate) fn serve_connection(shared: &Shared, stream: &TcpStream) {
    let _ = stream.set_read_timeout(Some(READ_TIMEOUT));
    let _ = stream.set_write_timeout(Some(READ_TIMEOUT));
    let request = match http::read_request(stream) {
        Ok(Some(request)) => request,
        Ok(None) => return,
        Err(error) => {
            let answer = Response::text(400, &format!("Bad request: {error}"));
            let _ = http::write_response(stream, &answer);
            return;
        }
    };
    match route(shared, &request) {
        Answer::Respond(response) => {
            let _ = http::write_response(stream, &response);
            let _ = stream.shutdown(Shutdown::Write);
        }
        Answer::Silent => thread::sleep(shared.silent_hold),
    }
}

/// The record of `request` as [`crate::Receiver::requests`] returns it.
fn received(request: &Request) -> Received {
    let mut headers = BTreeMap::<String, String>::new();
    for (name, value) in &request.headers {
        headers
            .entry(name.clone())
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(value);
            })
            .or_insert_with(|| value.clone());
    }
    let json = if request.body.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        serde_json::from_slice(&request.body).ok()
    };
    Received {
        method: request.method.clone(),
        path: request.target.clone(),
        headers,
        body: String::from_utf8_lossy(&request.body).into_owned(),
        json,
        received_at: Timestamp::now(),
    }
}

fn not_found() -> Response {
    Response::text(404, "Not found.")
}

fn method_not_allowed() -> Response {
    Response::text(405, "Method not allowed.")
}

fn garbage(status: u16) -> Response {
    Response {
        status,
        content_type: Some("application/json; charset=utf-8"),
        body: GARBAGE.to_vec(),
    }
}

fn route(shared: &Shared, request: &Request) -> Answer {
    let path = request.path();
    let segments: Vec<String> = path
        .strip_prefix('/')
        .unwrap_or(path)
        .split('/')
        .map(http::percent_decode)
        .collect();
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    let method = request.method.as_str();

    // Test-only endpoints are not recorded, so a driver polling them does not see itself.
    match segments.as_slice() {
        ["test", "requests"] if method == "GET" => {
            return Response::json(200, &shared.lock().requests).into();
        }
        ["test", "follow-ups"] if method == "GET" => {
            let mut state = shared.lock();
            state.expire(Timestamp::now());
            return Response::json(200, &state.follow_ups).into();
        }
        ["test", ..] => return method_not_allowed().into(),
        _ => {}
    }

    let record = received(request);
    match segments.as_slice() {
        ["healthz"] if method == "GET" => {
            shared.apply(Some(record), |_, _| Response::text(200, "ok").into())
        }
        ["api", "webhooks", "lidguard", secret] if method == "POST" => {
            webhook(shared, request, secret, record)
        }
        ["api", "follow-ups", id, "poll", token] if method == "GET" => {
            poll(shared, id, token, record)
        }
        [
            "api",
            "follow-ups",
            id,
            action @ ("reply" | "extend" | "cancel"),
        ] if method == "POST" => follow_up_action(shared, request, id, action, record).into(),
        ["healthz"]
        | ["api", "webhooks", "lidguard", _]
        | ["api", "follow-ups", _, "poll", _]
        | ["api", "follow-ups", _, "reply" | "extend" | "cancel"] => {
            shared.apply(Some(record), |_, _| method_not_allowed().into())
        }
        _ => shared.apply(Some(record), |_, _| not_found().into()),
    }
}

fn webhook(shared: &Shared, request: &Request, secret: &str, record: Received) -> Answer {
    let event = validate::webhook(&request.body);
    shared.apply(Some(record), |state, now| {
        if secret != shared.secret {
            return not_found().into();
        }
        match state.webhook_fault {
            WebhookFault::Normal => {}
            WebhookFault::Status500 => {
                return Response::text(500, "Injected fault: status 500.").into();
            }
            WebhookFault::Garbage => return garbage(202).into(),
            WebhookFault::Silent => return Answer::Silent,
        }
        match event {
            Err(invalid) => Response::text(400, &invalid.to_string()).into(),
            Ok(Event::Notification) => Response::empty(202).into(),
            Ok(Event::StopFollowUp {
                provider,
                session_identifier,
                deadline,
            }) => {
                let row = state.create(
                    provider,
                    session_identifier,
                    deadline,
                    now,
                    &shared.poll_url_prefix,
                );
                let mut body = json!({
                    "followUpRequestIdentifier": row.id,
                    "replyPollUrl": row.reply_poll_url,
                    "expiresAtUtc": row.deadline_at_utc,
                });
                if shared.omit_expires_at
                    && let Some(object) = body.as_object_mut()
                {
                    object.remove("expiresAtUtc");
                }
                Response::json(202, &body).into()
            }
        }
    })
}

fn poll(shared: &Shared, id: &str, token: &str, record: Received) -> Answer {
    shared.apply(Some(record), |state, now| {
        let fault = state.poll_fault;
        let Some(row) = state
            .follow_ups
            .iter_mut()
            .find(|f| f.id.eq_ignore_ascii_case(id) && f.poll_token == token)
        else {
            return not_found().into();
        };
        match fault {
            PollFault::Normal => {}
            PollFault::Status500 => {
                return Response::text(500, "Injected fault: status 500.").into();
            }
            PollFault::Garbage => return garbage(200).into(),
            PollFault::Silent => return Answer::Silent,
            PollFault::UnknownStatus => {
                let body = json!({
                    "status": "Weird",
                    "reply": null,
                    "expiresAtUtc": row.deadline_at_utc,
                });
                return Response::json(200, &body).into();
            }
        }
        if row.status == FollowUpStatus::Answered && row.consumed_at_utc.is_none() {
            row.consumed_at_utc = Some(now);
        }
        let reply = match row.status {
            FollowUpStatus::Answered => row.reply.clone(),
            _ => None,
        };
        let body = json!({
            "status": row.status,
            "reply": reply,
            "expiresAtUtc": row.deadline_at_utc,
        });
        Response::json(200, &body).into()
    })
}

fn authorized(shared: &Shared, request: &Request) -> bool {
    request
        .header("authorization")
        .and_then(|value| value.split_once(' '))
        .is_some_and(|(scheme, token)| {
            scheme.eq_ignore_ascii_case("Bearer") && token.trim() == shared.access_token
        })
}

fn follow_up_action(
    shared: &Shared,
    request: &Request,
    id: &str,
    action: &str,
    record: Received,
) -> Response {
    if !authorized(shared, request) {
        return shared.apply(Some(record), |_, _| Response::text(401, "Unauthorized."));
    }
    let body: Value = if request.body.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        match serde_json::from_slice(&request.body) {
            Ok(body) => body,
            Err(error) => {
                let message = format!("The request body is not valid JSON: {error}");
                let result = ActionResult::rejected(400, &message);
                return shared.apply(Some(record), |_, _| Response::json(400, &result));
            }
        }
    };
    let field = |name: &str| body.get(name).filter(|v| !v.is_null());
    let rejected = |message: &str| {
        let result = ActionResult::rejected(400, message);
        shared.apply(Some(record.clone()), |_, _| Response::json(400, &result))
    };

    let result = match action {
        "reply" => {
            let text = match field("reply") {
                None => "",
                Some(Value::String(text)) => text.as_str(),
                Some(_) => return rejected("reply must be a string."),
            };
            let wait = match field("waitForConsumption") {
                None => false,
                Some(Value::Bool(wait)) => *wait,
                Some(_) => return rejected("waitForConsumption must be a boolean."),
            };
            shared.reply(id, text, wait, Some(record))
        }
        "extend" => {
            let minutes = match field("extendMinutes") {
                None => 1,
                Some(value) => match value.as_i64() {
                    Some(minutes) => minutes,
                    None => return rejected("extendMinutes must be an integer."),
                },
            };
            shared.apply(Some(record), |state, now| state.extend(id, minutes, now))
        }
        _ => shared.apply(Some(record), |state, now| state.cancel(id, now)),
    };
    Response::json(result.http_status, &result)
}
