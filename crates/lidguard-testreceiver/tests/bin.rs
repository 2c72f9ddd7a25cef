//! The `lidguard-test-receiver` binary: its ready line, flags and exit codes.
#![allow(
    clippy::disallowed_methods,
    reason = "test support: fixtures are written and the environment read directly"
)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_lidguard-test-receiver");

/// A spawned receiver, killed on drop.
struct Running {
    child: Child,
    ready: Value,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn(args: &[&str]) -> Running {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn lidguard-test-receiver");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .expect("read the ready line");
    let ready = serde_json::from_str(line.trim_end())
        .unwrap_or_else(|e| panic!("ready line is not JSON ({e}): {line:?}"));
    Running { child, ready }
}

/// Sends one request and returns (status, body).
fn exchange(url: &str, method: &str, body: &str) -> (u16, String) {
    send(url, method, "", body)
}

/// Sends one POST with a bearer token and returns (status, body).
fn exchange_with_token(url: &str, token: &str, body: &str) -> (u16, String) {
    send(
        url,
        "POST",
        &format!("Authorization: Bearer {token}\r\n"),
        body,
    )
}

/// One HTTP/1.1 request with the extra header lines `headers` (each ending in CRLF).
fn send(url: &str, method: &str, headers: &str, body: &str) -> (u16, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let mut stream = TcpStream::connect(host).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\n{headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, body.to_owned())
}

#[test]
fn prints_one_ready_line_and_serves() {
    let running = spawn(&[]);
    let object = running.ready.as_object().unwrap();
    assert_eq!(object.len(), 2, "{object:?}");
    let url = running.ready["url"].as_str().unwrap();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    assert_eq!(
        running.ready["webhookUrl"],
        format!("{url}/api/webhooks/lidguard/test-webhook-secret")
    );
    assert_eq!(
        exchange(&format!("{url}/healthz"), "GET", ""),
        (200, "ok".to_owned())
    );
}

#[test]
fn flags_reach_the_receiver() {
    let running = spawn(&[
        "--secret",
        "s3cret",
        "--access-token=tok",
        "--absolute-poll-url",
        "--poll-fault",
        "unknown-status",
        "--omit-expires-at",
    ]);
    let url = running.ready["url"].as_str().unwrap();
    let webhook = running.ready["webhookUrl"].as_str().unwrap();
    assert_eq!(webhook, format!("{url}/api/webhooks/lidguard/s3cret"));
    let deadline = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(60);
    let body = serde_json::json!({
        "eventType": "StopFollowUp", "reason": "AwaitingReply", "provider": "Codex",
        "sessionIdentifier": "s", "replyWaitSeconds": 60, "replyDeadlineUtc": deadline,
    });
    let (status, answer) = exchange(webhook, "POST", &body.to_string());
    assert_eq!(status, 202, "{answer}");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert!(answer.get("expiresAtUtc").is_none(), "{answer}");
    let poll_url = answer["replyPollUrl"].as_str().unwrap();
    assert!(
        poll_url.starts_with(&format!("{url}/api/follow-ups/")),
        "{poll_url}"
    );
    let (status, polled) = exchange(poll_url, "GET", "");
    assert_eq!(status, 200);
    assert!(polled.contains(r#""status":"Weird""#), "{polled}");

    let id = answer["followUpRequestIdentifier"].as_str().unwrap();
    let cancel = format!("{url}/api/follow-ups/{id}/cancel");
    assert_eq!(exchange_with_token(&cancel, "wrong", "").0, 401);
    let (status, result) = exchange_with_token(&cancel, "tok", "");
    assert_eq!(status, 200, "{result}");
    assert!(result.contains(r#""status":"Canceled""#), "{result}");

    let (status, listed) = exchange(&format!("{url}/test/follow-ups"), "GET", "");
    assert_eq!(status, 200);
    let listed: Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(listed[0]["status"], "Canceled");
}

#[test]
fn webhook_fault_flag() {
    let running = spawn(&["--webhook-fault", "Status500"]);
    let webhook = running.ready["webhookUrl"].as_str().unwrap();
    let body = r#"{"eventType":"PreSuspend","reason":"Completed"}"#;
    assert_eq!(exchange(webhook, "POST", body).0, 500);
    let url = running.ready["url"].as_str().unwrap();
    let (status, listed) = exchange(&format!("{url}/test/requests"), "GET", "");
    assert_eq!(status, 200);
    let listed: Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(listed[0]["json"]["eventType"], "PreSuspend");
}

#[test]
fn fixed_port_and_bad_flags() {
    // Find a free port, release it, then ask the binary for it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let running = spawn(&["--port", &port.to_string()]);
    assert_eq!(running.ready["url"], format!("http://127.0.0.1:{port}"));

    let output = Command::new(BIN)
        .arg("--webhook-fault=weird")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    assert!(String::from_utf8_lossy(&output.stderr).contains("unknown fault mode"));

    let output = Command::new(BIN).arg("--help").output().unwrap();
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).contains("--poll-fault"));
}
