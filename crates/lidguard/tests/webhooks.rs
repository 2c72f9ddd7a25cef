//! Webhooks from the real daemon to a receiver on loopback started by the test: PostSessionEnd
//! after a normal end with the lid open, PreSuspend (field by field) before a closed-lid
//! suspend, and a receiver that never answers or fails not holding up the suspend.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{Home, eventually, expected_signature, fake_roots, pipe, suspend_history};

/// How the receiver answers.
#[derive(Clone, Copy)]
enum Mode {
    Ok,
    ServerError,
    Silent,
}

/// One request as the receiver saw it.
struct Received {
    path: String,
    /// Header names in lower case.
    headers: Vec<(String, String)>,
    raw: Vec<u8>,
    body: Value,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A one-thread HTTP receiver; each request arrives on the channel.
fn receiver(mode: Mode) -> (String, Receiver<Received>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            reader.read_line(&mut request_line).unwrap();
            let path = request_line
                .split_whitespace()
                .nth(1)
                .unwrap_or("")
                .to_owned();
            let mut length = 0;
            let mut headers = Vec::new();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if line.trim().is_empty() {
                    break;
                }
                if let Some((name, value)) = line.split_once(':') {
                    let name = name.trim().to_ascii_lowercase();
                    if name == "content-length" {
                        length = value.trim().parse().unwrap();
                    }
                    headers.push((name, value.trim().to_owned()));
                }
            }
            let mut raw = vec![0; length];
            reader.read_exact(&mut raw).unwrap();
            let body = serde_json::from_slice(&raw).unwrap_or(Value::Null);
            let _ = tx.send(Received {
                path,
                headers,
                raw,
                body,
            });
            match mode {
                Mode::Ok => {
                    let _ = stream.write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}",
                    );
                }
                Mode::ServerError => {
                    let _ = stream.write_all(
                        b"HTTP/1.1 500 Oops\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                    );
                }
                Mode::Silent => {
                    std::thread::sleep(Duration::from_secs(30));
                }
            }
        }
    });
    (url, rx)
}

/// Runs the Claude hook with `payload`, with the daemon seeing the fake lid.
fn claude(home: &Home, roots: &(PathBuf, PathBuf), payload: &str) {
    let mut cmd = home.cmd(&["claude-hook"]);
    cmd.env("LIDGUARD_PROC_ROOT", &roots.0)
        .env("LIDGUARD_SYS_ROOT", &roots.1);
    let out = pipe(cmd, payload.as_bytes());
    assert!(out.status.success());
}

const PROMPT: &str = r#"{"session_id":"w1","cwd":"/home/u/proj","transcript_path":"/home/u/.claude/projects/p/w1.jsonl","hook_event_name":"UserPromptSubmit","prompt":"Please refactor the storage layer\nand add tests for every edge case you find"}"#;
const STOP: &str = r#"{"session_id":"w1","cwd":"/home/u/proj","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"Refactored; 12 tests added."}"#;

/// A home whose daemon posts to a receiver answering as `mode`: each `(setting, path)` names
/// a webhook URL setting and the receiver path it gets; `settings` are further settings.
fn home_with_receiver(
    mode: Mode,
    webhooks: &[(&str, &str)],
    settings: &[&str],
) -> (Home, Receiver<Received>) {
    let home = Home::new();
    let (url, rx) = receiver(mode);
    let mut args = vec!["settings".to_owned()];
    for (setting, path) in webhooks {
        args.extend([format!("--{setting}-webhook-url"), format!("{url}{path}")]);
    }
    args.extend(settings.iter().map(|s| (*s).to_owned()));
    home.ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    (home, rx)
}

/// Suspend right after the work ends.
const NO_DELAY: &[&str] = &["--post-stop-suspend-delay-seconds", "0"];

#[test]
fn post_session_end_after_a_normal_end_with_the_lid_open() {
    let (home, rx) =
        home_with_receiver(Mode::Ok, &[("post-session-end", "/post/secret-path")], &[]);
    let roots = fake_roots(&home, "open");
    claude(&home, &roots, PROMPT);
    claude(&home, &roots, STOP);
    let got = rx.recv_timeout(Duration::from_secs(10)).expect("a webhook");
    let (path, body) = (got.path, got.body);
    assert_eq!(path, "/post/secret-path");
    assert_eq!(body["eventType"], "PostSessionEnd");
    assert_eq!(body["reason"], "SessionEnded");
    crate::util::assert_ended_claude_session(&body, "w1");
    for field in [
        "startedAtUtc",
        "lastActivityAtUtc",
        "endedAtUtc",
        "userInterfaceCulture",
    ] {
        assert!(body[field].is_string(), "{field}: {body}");
    }
    assert!(
        body.get("providerName").is_none(),
        "absent fields are omitted"
    );
    assert!(
        rx.recv_timeout(Duration::from_millis(500)).is_err(),
        "exactly one"
    );
}

#[test]
fn pre_suspend_before_a_closed_lid_suspend_and_no_post_session_end() {
    let (home, rx) = home_with_receiver(
        Mode::Ok,
        &[("pre-suspend", "/pre"), ("post-session-end", "/post")],
        NO_DELAY,
    );
    let roots = fake_roots(&home, "closed");
    claude(&home, &roots, PROMPT);
    assert!(eventually(Duration::from_secs(5), || home.status()["lid"] == "Closed"));
    std::thread::sleep(Duration::from_millis(2500)); // the daemon's machine reading
    claude(&home, &roots, STOP);
    let got = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("PreSuspend");
    assert!(
        got.header("x-lidguard-signature").is_none(),
        "unsigned without a secret"
    );
    let (path, body) = (got.path, got.body);
    assert_eq!(path, "/pre");
    assert_eq!(body["eventType"], "PreSuspend");
    assert_eq!(body["reason"], "Completed");
    assert_eq!(body["sessionIdentifier"], "w1");
    assert_eq!(body["lastAssistantMessage"], "Refactored; 12 tests added.");
    assert!(eventually(Duration::from_secs(5), || !suspend_history(
        &home
    )
    .is_empty()));
    assert!(
        rx.recv_timeout(Duration::from_millis(500)).is_err(),
        "no PostSessionEnd"
    );
}

#[test]
fn a_receiver_that_never_answers_or_fails_does_not_hold_up_the_suspend() {
    for mode in [Mode::Silent, Mode::ServerError] {
        let (home, rx) = home_with_receiver(mode, &[("pre-suspend", "/pre")], NO_DELAY);
        let roots = fake_roots(&home, "closed");
        claude(&home, &roots, PROMPT);
        std::thread::sleep(Duration::from_millis(2500));
        let at = Instant::now();
        claude(&home, &roots, STOP);
        rx.recv_timeout(Duration::from_secs(10))
            .expect("the webhook was attempted");
        assert!(eventually(Duration::from_secs(10), || !suspend_history(
            &home
        )
        .is_empty()));
        let took = at.elapsed();
        assert!(took < Duration::from_secs(8), "{took:?}");
        // The daemon kept answering meanwhile.
        assert_eq!(home.status()["lid"], "Closed");
    }
}

#[test]
fn a_webhook_secret_signs_every_request() {
    let (home, rx) = home_with_receiver(Mode::Ok, &[("post-session-end", "/post")], &[]);
    home.ok(&[
        "settings",
        "--webhook-secret",
        "correct horse battery staple",
    ]);
    let shown = home.ok(&["settings"]);
    assert!(
        !shown.contains("correct horse"),
        "the secret is never printed"
    );
    let roots = fake_roots(&home, "open");
    claude(&home, &roots, PROMPT);
    claude(&home, &roots, STOP);
    let got = rx.recv_timeout(Duration::from_secs(10)).expect("a webhook");
    let timestamp = got
        .header("x-lidguard-timestamp")
        .expect("timestamp header");
    let age = jiff::Timestamp::now().as_second() - timestamp.parse::<i64>().unwrap();
    assert!((0..60).contains(&age), "{age}");
    // Verify as a receiver would: HMAC-SHA256 over "<timestamp>.<raw body>".
    let want = expected_signature("correct horse battery staple", timestamp, &got.raw);
    assert_eq!(got.header("x-lidguard-signature"), Some(want.as_str()));
    assert_eq!(got.body["eventType"], "PostSessionEnd");
}

#[test]
fn a_watched_process_that_dies_ends_its_session_without_webhooks() {
    let (home, rx) = home_with_receiver(
        Mode::Ok,
        &[("post-session-end", "/post"), ("pre-suspend", "/pre")],
        NO_DELAY,
    );
    let roots = fake_roots(&home, "closed");
    let mut agent = crate::util::Agent::spawn();
    let pid = agent.pid().to_string();
    let mut cmd = home.cmd(&[
        "start",
        "--provider",
        "claude",
        "--session",
        "gone",
        "--parent-pid",
        &pid,
    ]);
    cmd.env("LIDGUARD_PROC_ROOT", &roots.0)
        .env("LIDGUARD_SYS_ROOT", &roots.1);
    assert!(cmd.output().unwrap().status.success());
    std::thread::sleep(Duration::from_millis(2500)); // the daemon sees the closed lid
    agent.kill();
    assert!(eventually(Duration::from_secs(10), || home
        .session("gone")
        .is_none()));
    // The cancel path: the suspend is requested (and recorded), but nothing is announced.
    assert!(eventually(Duration::from_secs(10), || !suspend_history(
        &home
    )
    .is_empty()));
    assert!(
        rx.recv_timeout(Duration::from_secs(1)).is_err(),
        "no PreSuspend and no PostSessionEnd for a process that died"
    );
}

/// A Stop hook without `last_assistant_message`: the webhook takes the answer from the newest
/// assistant record of the agent's transcript (a real captured Claude transcript).
#[test]
fn the_last_answer_comes_from_the_transcript_when_the_hook_has_none() {
    let (home, rx) = home_with_receiver(Mode::Ok, &[("post-session-end", "/post")], &[]);
    let transcript = home.path().join("t1.jsonl");
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/transcripts/claude/background-pending.jsonl"
    );
    std::fs::copy(fixture, &transcript).unwrap();
    let t = transcript.display().to_string();
    let roots = fake_roots(&home, "open");
    let prompt = format!(
        r#"{{"session_id":"t1","cwd":"/home/u/proj","transcript_path":"{t}","hook_event_name":"UserPromptSubmit","prompt":"go"}}"#
    );
    let stop = format!(
        r#"{{"session_id":"t1","cwd":"/home/u/proj","transcript_path":"{t}","hook_event_name":"Stop","stop_hook_active":false}}"#
    );
    claude(&home, &roots, &prompt);
    claude(&home, &roots, &stop);
    let got = rx.recv_timeout(Duration::from_secs(10)).expect("a webhook");
    assert_eq!(got.body["eventType"], "PostSessionEnd");
    assert_eq!(
        got.body["lastAssistantMessage"],
        "Started a background sleep; ending my turn."
    );
}
