//! A loopback stand-in for an ntfy server, for tests only: the parts of ntfy's documented HTTP
//! API lidguard uses, written from ntfy's public docs (docs.ntfy.sh — "Publishing": publish as
//! JSON to the root URL, publish a plain body to `/<topic>`; "Subscribing → API": `GET
//! /<topic>/json?poll=1&since=<all|id|unix time|duration>` answering one JSON message per line;
//! "Access control": `Authorization: Bearer <token>`, 401/403 answers). No ntfy code is used.
//!
//! With a token set, every request must carry it (as on a server with `auth-default-access:
//! deny-all`). Messages are kept for the life of the server.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::http::{self, Request, Response};

/// One stored message, as ntfy returns it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NtfyMessage {
    /// Unique id.
    pub id: String,
    /// When it was published, Unix seconds.
    pub time: i64,
    /// Always `message` here.
    pub event: String,
    /// Its topic.
    pub topic: String,
    /// Title, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The text.
    #[serde(default)]
    pub message: String,
    /// 1 to 5, if set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<u8>,
    /// Tags, if any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Action buttons as published.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<Value>,
}

/// The JSON publish body (ntfy docs, "Publish as JSON").
#[derive(Deserialize)]
struct PublishJson {
    topic: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    priority: Option<u8>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    actions: Vec<Value>,
}

/// A request as the server saw it (for assertions on headers).
#[derive(Clone, Debug)]
pub struct NtfyRequest {
    /// Method.
    pub method: String,
    /// Target with query.
    pub target: String,
    /// The `Authorization` header, if sent.
    pub authorization: Option<String>,
    /// The answer's status.
    pub status: u16,
}

#[derive(Default)]
struct State {
    messages: Vec<NtfyMessage>,
    requests: Vec<NtfyRequest>,
    next: u64,
}

struct Shared {
    token: Option<String>,
    state: Mutex<State>,
    changed: Condvar,
    stopping: AtomicBool,
}

/// A running stand-in. Dropping it stops accepting connections.
pub struct NtfyServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
}

impl Drop for NtfyServer {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(self.addr);
    }
}

impl NtfyServer {
    /// Starts on 127.0.0.1 (`port` 0: any free port); with `token`, requests must carry it.
    pub fn start(port: u16, token: Option<&str>) -> io::Result<NtfyServer> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port))?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            token: token.map(str::to_owned),
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            stopping: AtomicBool::new(false),
        });
        let accept = Arc::clone(&shared);
        thread::Builder::new()
            .name("test-ntfy-accept".into())
            .spawn(move || {
                for stream in listener.incoming() {
                    if accept.stopping.load(Ordering::Relaxed) {
                        return;
                    }
                    let Ok(stream) = stream else { continue };
                    let shared = Arc::clone(&accept);
                    let _ = thread::Builder::new()
                        .name("test-ntfy-conn".into())
                        .spawn(move || serve(&shared, &stream));
                }
            })?;
        Ok(NtfyServer { shared, addr })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Every message published to `topic`, oldest first.
    pub fn messages(&self, topic: &str) -> Vec<NtfyMessage> {
        let state = self.lock();
        state
            .messages
            .iter()
            .filter(|m| m.topic == topic)
            .cloned()
            .collect()
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<NtfyRequest> {
        self.lock().requests.clone()
    }

    /// Waits until `topic` holds at least `count` messages; returns them (possibly fewer, at
    /// the timeout).
    pub fn wait_for(&self, topic: &str, count: usize, timeout: Duration) -> Vec<NtfyMessage> {
        let deadline = Instant::now() + timeout;
        let mut state = self.lock();
        loop {
            let found: Vec<NtfyMessage> = state
                .messages
                .iter()
                .filter(|m| m.topic == topic)
                .cloned()
                .collect();
            let left = deadline.saturating_duration_since(Instant::now());
            if found.len() >= count || left.is_zero() {
                return found;
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

fn error(status: u16, code: u32, text: &str) -> Response {
    Response::json(
        status,
        &serde_json::json!({"code": code, "http": status, "error": text}),
    )
}

fn serve(shared: &Shared, stream: &TcpStream) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let Ok(Some(request)) = http::read_request(stream) else {
        return;
    };
    let response = route(shared, &request);
    {
        let mut state = shared.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.requests.push(NtfyRequest {
            method: request.method.clone(),
            target: request.target.clone(),
            authorization: request.header("authorization").map(str::to_owned),
            status: response.status,
        });
    }
    shared.changed.notify_all();
    let _ = http::write_response(stream, &response);
}

fn route(shared: &Shared, request: &Request) -> Response {
    if let Some(token) = &shared.token {
        match request.header("authorization") {
            None => return error(403, 40301, "forbidden"),
            Some(auth) if auth != format!("Bearer {token}") => {
                return error(401, 40101, "unauthorized");
            }
            Some(_) => {}
        }
    }
    let path = request.path().trim_start_matches('/').to_owned();
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match (request.method.as_str(), segments.as_slice()) {
        ("POST" | "PUT", []) => {
            let Ok(body) = serde_json::from_slice::<PublishJson>(&request.body) else {
                return error(400, 40001, "invalid request: JSON body expected");
            };
            if !valid_topic(&body.topic) {
                return error(400, 40009, "invalid topic");
            }
            let message = publish(shared, |id, time| NtfyMessage {
                id,
                time,
                event: "message".into(),
                topic: body.topic,
                title: body.title,
                message: body.message.unwrap_or_default(),
                priority: body.priority,
                tags: body.tags,
                actions: body.actions,
            });
            Response::json(200, &message)
        }
        ("POST" | "PUT", [topic]) if valid_topic(topic) => {
            let text = String::from_utf8_lossy(&request.body).into_owned();
            let message = publish(shared, |id, time| NtfyMessage {
                id,
                time,
                event: "message".into(),
                topic: (*topic).to_owned(),
                title: request
                    .header("title")
                    .or(request.header("x-title"))
                    .map(str::to_owned),
                message: text,
                priority: None,
                tags: Vec::new(),
                actions: Vec::new(),
            });
            Response::json(200, &message)
        }
        ("GET", [topic, "json"]) if valid_topic(topic) => {
            if query(request, "poll").is_none() {
                // Only polling is served here; a stream would never end.
                return error(400, 40000, "this test server answers poll=1 only");
            }
            let since = query(request, "since").unwrap_or_default();
            let state = shared.state.lock().unwrap_or_else(PoisonError::into_inner);
            let mine: Vec<&NtfyMessage> = state
                .messages
                .iter()
                .filter(|m| m.topic == *topic)
                .collect();
            let picked: Vec<&NtfyMessage> = match since.as_str() {
                "all" => mine,
                "" | "none" => Vec::new(),
                s if s.bytes().all(|b| b.is_ascii_digit()) => {
                    let t: i64 = s.parse().unwrap_or(i64::MAX);
                    mine.into_iter().filter(|m| m.time >= t).collect()
                }
                s if duration(s).is_some() => {
                    let t = now() - duration(s).unwrap_or(0);
                    mine.into_iter().filter(|m| m.time >= t).collect()
                }
                id => match mine.iter().position(|m| m.id == id) {
                    Some(at) => mine[at + 1..].to_vec(),
                    None => mine,
                },
            };
            let mut body = String::new();
            for m in picked {
                body.push_str(&serde_json::to_string(m).unwrap_or_default());
                body.push('\n');
            }
            Response {
                status: 200,
                content_type: Some("application/x-ndjson; charset=utf-8"),
                body: body.into_bytes(),
            }
        }
        _ => error(404, 40401, "page not found"),
    }
}

fn publish(shared: &Shared, make: impl FnOnce(String, i64) -> NtfyMessage) -> NtfyMessage {
    let mut state = shared.state.lock().unwrap_or_else(PoisonError::into_inner);
    state.next += 1;
    let message = make(format!("msg{:09}", state.next), now());
    state.messages.push(message.clone());
    drop(state);
    shared.changed.notify_all();
    message
}

fn now() -> i64 {
    jiff::Timestamp::now().as_second()
}

/// `10s`, `5m`, `2h`, `1d` in seconds.
fn duration(text: &str) -> Option<i64> {
    let (number, unit) = text.split_at(text.len().checked_sub(1)?);
    let n: i64 = number.parse().ok()?;
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return None,
    };
    Some(n * scale)
}

/// ntfy's topic names: 1 to 64 of `A-Za-z0-9_-`.
fn valid_topic(topic: &str) -> bool {
    (1..=64).contains(&topic.len())
        && topic
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn query(request: &Request, name: &str) -> Option<String> {
    let (_, query) = request.target.split_once('?')?;
    query.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (key == name).then(|| http::percent_decode(value))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_topics() {
        assert_eq!(duration("10m"), Some(600));
        assert_eq!(duration("x"), None);
        assert!(valid_topic("lidguard-abc_1"));
        assert!(!valid_topic("a/b") && !valid_topic(""));
    }
}
