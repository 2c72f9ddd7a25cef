//! The receiver's protocol over real loopback HTTP, with a tiny std-only client.
#![allow(
    clippy::disallowed_methods,
    reason = "test support: fixtures are written and the environment read directly"
)]

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::thread;
use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};
use lidguard_testreceiver::{FollowUpStatus, Options, PollFault, Receiver, WebhookFault};
use serde_json::{Value, json};

/// One HTTP answer.
#[derive(Debug)]
struct Answer {
    status: u16,
    head: String,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("answer is not JSON ({e}): {self:?}"))
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// `http://127.0.0.1:PORT/path` ⇒ (`127.0.0.1:PORT`, `/path`); a bare `/path` uses `base`.
fn split_url<'a>(base: &'a str, target: &'a str) -> (&'a str, &'a str) {
    let absolute = if target.starts_with('/') {
        base
    } else {
        target
    };
    let rest = absolute.strip_prefix("http://").expect("http URL");
    let host = rest.split('/').next().unwrap();
    let path = if target.starts_with('/') {
        target
    } else {
        &rest[host.len()..]
    };
    (host, path)
}

fn send_raw(host: &str, raw: &[u8], timeout: Duration) -> std::io::Result<Vec<u8>> {
    let mut stream = TcpStream::connect(host)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.write_all(raw)?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer)?;
    Ok(answer)
}

fn parse_answer(bytes: &[u8]) -> Answer {
    let text = String::from_utf8(bytes.to_vec()).expect("UTF-8 answer");
    let (head, body) = text.split_once("\r\n\r\n").expect("header end");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status code");
    let answer = Answer {
        status,
        head: head.to_owned(),
        body: body.to_owned(),
    };
    let length: usize = answer
        .header("content-length")
        .expect("Content-Length")
        .parse()
        .unwrap();
    assert_eq!(answer.body.len(), length, "{answer:?}");
    assert_eq!(answer.header("connection"), Some("close"));
    answer
}

fn build(method: &str, host: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
    let mut raw = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for (name, value) in headers {
        raw.push_str(&format!("{name}: {value}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        raw.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    raw.push_str("\r\n");
    raw.push_str(body);
    raw.into_bytes()
}

fn request(
    receiver: &Receiver,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let (host, path) = split_url(receiver.url(), target);
    let raw = build(method, host, path, headers, body);
    let bytes = send_raw(host, &raw, Duration::from_secs(10)).expect("HTTP exchange");
    parse_answer(&bytes)
}

/// Whether the server stays silent (no byte within 700 ms, connection still open).
fn stays_silent(receiver: &Receiver, method: &str, target: &str, body: &str) -> bool {
    let (host, path) = split_url(receiver.url(), target);
    let raw = build(method, host, path, &[], body);
    match send_raw(host, &raw, Duration::from_millis(700)) {
        Err(e) => matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
        Ok(_) => false,
    }
}

fn get(receiver: &Receiver, target: &str) -> Answer {
    request(receiver, "GET", target, &[], "")
}

fn post_webhook(receiver: &Receiver, body: &Value) -> Answer {
    request(
        receiver,
        "POST",
        &receiver.webhook_url(),
        &[],
        &body.to_string(),
    )
}

fn action(receiver: &Receiver, id: &str, name: &str, body: &str) -> Answer {
    let auth = format!("Bearer {}", receiver.access_token());
    request(
        receiver,
        "POST",
        &format!("/api/follow-ups/{id}/{name}"),
        &[("Authorization", &auth)],
        body,
    )
}

fn stop_follow_up(deadline: Timestamp) -> Value {
    json!({
        "eventType": "StopFollowUp",
        "reason": "AwaitingReply",
        "userInterfaceCulture": "en",
        "provider": "Claude",
        "sessionIdentifier": "session-1",
        "replyWaitSeconds": 60,
        "replyDeadlineUtc": deadline.to_string(),
    })
}

/// Sends a StopFollowUp webhook and returns (id, replyPollUrl, full answer JSON).
fn start_follow_up(receiver: &Receiver, deadline: Timestamp) -> (String, String, Value) {
    let answer = post_webhook(receiver, &stop_follow_up(deadline));
    assert_eq!(answer.status, 202, "{answer:?}");
    let body = answer.json();
    let id = body["followUpRequestIdentifier"]
        .as_str()
        .unwrap()
        .to_owned();
    let url = body["replyPollUrl"].as_str().unwrap().to_owned();
    (id, url, body)
}

fn ts(value: &Value) -> Timestamp {
    value
        .as_str()
        .unwrap_or_else(|| panic!("not a timestamp: {value}"))
        .parse()
        .unwrap()
}

fn in_secs(seconds: i64) -> Timestamp {
    Timestamp::now() + SignedDuration::from_secs(seconds)
}

fn is_lower_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'))
}

#[test]
fn healthz_and_unknown_paths() {
    let receiver = Receiver::start(Options::default());
    let answer = get(&receiver, "/healthz");
    assert_eq!((answer.status, answer.body.as_str()), (200, "ok"));
    assert_eq!(get(&receiver, "/nope").status, 404);
    assert_eq!(request(&receiver, "POST", "/healthz", &[], "").status, 405);
}

#[test]
fn wrong_secret_is_404() {
    let receiver = Receiver::start(Options::default());
    let body = json!({"eventType": "PreSuspend", "reason": "Completed"});
    let answer = request(
        &receiver,
        "POST",
        "/api/webhooks/lidguard/wrong-secret",
        &[],
        &body.to_string(),
    );
    assert_eq!((answer.status, answer.body.as_str()), (404, "Not found."));
    assert!(receiver.follow_ups().is_empty());
}

#[test]
fn validation_errors_are_400_and_valid_notifications_202() {
    let receiver = Receiver::start(Options::default());
    let deadline = in_secs(60).to_string();
    let post_end = |changes: Value| {
        let mut body = json!({
            "eventType": "PostSessionEnd", "reason": "SessionEnded",
            "provider": "Codex", "sessionIdentifier": "s-1",
        });
        for (k, v) in changes.as_object().unwrap() {
            body[k] = v.clone();
        }
        body
    };
    let follow_up = |changes: Value| {
        let mut body = stop_follow_up(deadline.parse().unwrap());
        for (k, v) in changes.as_object().unwrap() {
            if v.is_null() {
                body.as_object_mut().unwrap().remove(k);
            } else {
                body[k] = v.clone();
            }
        }
        body.to_string()
    };
    let invalid: Vec<String> = vec![
        "not json".to_owned(),
        "[1, 2]".to_owned(),
        String::new(),
        json!({"reason": "Completed"}).to_string(),
        json!({"eventType": "Bogus", "reason": "Completed"}).to_string(),
        json!({"eventType": 3, "reason": "Completed"}).to_string(),
        json!({"eventType": "PreSuspend"}).to_string(),
        json!({"eventType": "PreSuspend", "reason": "SessionEnded"}).to_string(),
        json!({"eventType": "PreSuspend", "reason": "SoftLocked", "softLockedSessionCount": -1})
            .to_string(),
        post_end(json!({"reason": "Completed"})).to_string(),
        post_end(json!({"provider": null})).to_string(),
        post_end(json!({"provider": ""})).to_string(),
        post_end(json!({"sessionIdentifier": null})).to_string(),
        follow_up(json!({"reason": "Completed"})),
        follow_up(json!({"provider": null})),
        follow_up(json!({"sessionIdentifier": null})),
        follow_up(json!({"replyWaitSeconds": 0})),
        follow_up(json!({"replyWaitSeconds": null})),
        follow_up(json!({"replyDeadlineUtc": null})),
        follow_up(json!({"replyDeadlineUtc": "tomorrow"})),
        follow_up(json!({"replyDeadlineUtc": "2030-01-01T00:00:00"})),
    ];
    for body in &invalid {
        let answer = request(&receiver, "POST", &receiver.webhook_url(), &[], body);
        assert_eq!(answer.status, 400, "body {body}: {answer:?}");
        assert!(!answer.body.is_empty(), "400 without text for {body}");
        assert!(
            answer
                .header("content-type")
                .unwrap()
                .starts_with("text/plain")
        );
    }

    let valid = [
        json!({"eventType": "PreSuspend", "reason": "Completed", "userInterfaceCulture": "en"}),
        json!({"eventType": "PreSuspend", "reason": "SoftLocked", "softLockedSessionCount": 2}),
        json!({"eventType": "PreSuspend", "reason": "EmergencyHibernation"}),
        post_end(json!({"softLockedSessionCount": null, "endReason": "ProviderReported"})),
    ];
    for body in &valid {
        let answer = post_webhook(&receiver, body);
        assert_eq!((answer.status, answer.body.as_str()), (202, ""), "{body}");
    }
    assert!(receiver.follow_ups().is_empty());
    assert_eq!(receiver.requests().len(), invalid.len() + valid.len());
}

#[test]
fn stop_follow_up_answers_with_the_three_fields() {
    let receiver = Receiver::start(Options::default());
    // A .NET-style timestamp: seven fractional digits and a non-UTC offset.
    let mut body = stop_follow_up(Timestamp::now());
    let local_deadline = in_secs(90);
    let dotnet = local_deadline
        .to_zoned_datetime(jiff::tz::TimeZone::fixed(jiff::tz::offset(9)))
        .strftime("%Y-%m-%dT%H:%M:%S%.7f%:z")
        .to_string();
    body["replyDeadlineUtc"] = json!(dotnet);
    let answer = post_webhook(&receiver, &body);
    assert_eq!(answer.status, 202, "{answer:?}");
    assert!(
        answer
            .header("content-type")
            .unwrap()
            .starts_with("application/json")
    );
    let body = answer.json();
    let id = body["followUpRequestIdentifier"].as_str().unwrap();
    assert!(is_lower_hex(id, 32), "{id}");
    let url = body["replyPollUrl"].as_str().unwrap();
    let token = url
        .strip_prefix(&format!("/api/follow-ups/{id}/poll/"))
        .unwrap_or_else(|| panic!("relative poll URL expected: {url}"));
    assert!(is_lower_hex(token, 48), "{token}");
    let expires = ts(&body["expiresAtUtc"]);
    assert_eq!(
        expires.as_microsecond(),
        local_deadline.as_microsecond(),
        "expiresAtUtc is the deadline sent"
    );
    assert_eq!(body.as_object().unwrap().len(), 3);

    let rows = receiver.follow_ups();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].id, id);
    assert_eq!(rows[0].poll_token, token);
    assert_eq!(rows[0].session_identifier, "session-1");
    assert_eq!(rows[0].status, FollowUpStatus::Pending);
    assert_eq!(
        rows[0].maximum_deadline_at_utc,
        expires + SignedDuration::from_secs(300)
    );
    // Every webhook gets a fresh identifier and token.
    let (other, other_url, _) = start_follow_up(&receiver, in_secs(60));
    assert_ne!(other, id);
    assert_ne!(other_url, url);
}

#[test]
fn poll_reply_and_consumption() {
    let receiver = Receiver::start(Options::default());
    let deadline = in_secs(60);
    let (id, url, _) = start_follow_up(&receiver, deadline);

    let answer = get(&receiver, &url);
    assert_eq!(answer.status, 200);
    let body = answer.json();
    assert_eq!(body["status"], "Pending");
    assert_eq!(body["reply"], Value::Null);
    assert_eq!(
        ts(&body["expiresAtUtc"]),
        receiver.follow_ups()[0].deadline_at_utc
    );

    // Unknown id or wrong token.
    let wrong_token = format!("/api/follow-ups/{id}/poll/{}", "0".repeat(48));
    assert_eq!(get(&receiver, &wrong_token).body, "Not found.");
    assert_eq!(get(&receiver, &wrong_token).status, 404);
    let token = url.rsplit('/').next().unwrap();
    let unknown = format!("/api/follow-ups/{}/poll/{token}", "f".repeat(32));
    assert_eq!(get(&receiver, &unknown).status, 404);

    // Authentication.
    let reply_path = format!("/api/follow-ups/{id}/reply");
    let reply_body = json!({"reply": "keep going", "waitForConsumption": false}).to_string();
    for headers in [
        &[][..],
        &[("Authorization", "Bearer wrong")][..],
        &[("Authorization", "Basic test-access-token")][..],
    ] {
        let answer = request(&receiver, "POST", &reply_path, headers, &reply_body);
        assert_eq!(answer.status, 401, "{headers:?}");
    }
    // Empty reply.
    for body in [json!({"reply": ""}), json!({"reply": "  "}), json!({})] {
        let answer = action(&receiver, &id, "reply", &body.to_string());
        assert_eq!(answer.status, 400, "{body}");
        assert_eq!(answer.json()["succeeded"], false);
    }
    assert_eq!(receiver.follow_ups()[0].status, FollowUpStatus::Pending);

    let answer = action(&receiver, &id, "reply", &reply_body);
    assert_eq!(answer.status, 200, "{answer:?}");
    let result = answer.json();
    assert_eq!(result["succeeded"], true);
    assert_eq!(result["status"], "Answered");
    assert_eq!(result["replyConsumed"], false);
    assert_eq!(result["consumedAtUtc"], Value::Null);
    assert_eq!(result["extended"], false);
    assert!(result["message"].is_string());
    assert_eq!(ts(&result["deadlineAtUtc"]), deadline);
    assert_eq!(
        ts(&result["maximumDeadlineAtUtc"]),
        deadline + SignedDuration::from_secs(300)
    );
    let remaining = result["providerHookTimeoutRemainingSeconds"]
        .as_i64()
        .unwrap();
    assert!((355..=361).contains(&remaining), "{remaining}");

    let body = get(&receiver, &url).json();
    assert_eq!(body["status"], "Answered");
    assert_eq!(body["reply"], "keep going");
    let consumed = receiver.follow_ups()[0].consumed_at_utc.expect("consumed");
    // Only the first poll stamps the consumption.
    let _ = get(&receiver, &url);
    assert_eq!(receiver.follow_ups()[0].consumed_at_utc, Some(consumed));

    // 409 for everything but polls now.
    for name in ["reply", "extend", "cancel"] {
        let answer = action(&receiver, &id, name, &reply_body);
        assert_eq!(answer.status, 409, "{name}: {answer:?}");
        let result = answer.json();
        assert_eq!(result["succeeded"], false);
        assert_eq!(result["status"], "Answered");
        assert_eq!(result["replyConsumed"], true);
        assert!(result["consumedAtUtc"].is_string());
    }

    // Unknown identifiers.
    for name in ["reply", "extend", "cancel"] {
        let answer = action(&receiver, &"a".repeat(32), name, &reply_body);
        assert_eq!(answer.status, 404, "{name}");
    }
}

#[test]
fn reply_waits_for_consumption() {
    let receiver = Receiver::start(Options::default());
    let (id, url, _) = start_follow_up(&receiver, in_secs(60));
    let started = Instant::now();
    let result = thread::scope(|scope| {
        scope.spawn(|| {
            thread::sleep(Duration::from_millis(300));
            assert_eq!(get(&receiver, &url).json()["reply"], "go");
        });
        action(
            &receiver,
            &id,
            "reply",
            &json!({"reply": "go", "waitForConsumption": true}).to_string(),
        )
        .json()
    });
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(result["replyConsumed"], true);
    assert!(result["consumedAtUtc"].is_string());
    assert_eq!(result["succeeded"], true);
}

#[test]
fn reply_wait_gives_up_after_about_four_seconds() {
    let receiver = Receiver::start(Options::default());
    let (id, _, _) = start_follow_up(&receiver, in_secs(60));
    let started = Instant::now();
    let result = receiver.reply(&id, "nobody polls", true);
    let waited = started.elapsed();
    assert!(
        (Duration::from_millis(3500)..Duration::from_secs(6)).contains(&waited),
        "{waited:?}"
    );
    assert!(result.succeeded);
    assert!(!result.reply_consumed);
    assert_eq!(result.status, Some(FollowUpStatus::Answered));
}

#[test]
fn extend_is_capped_at_300_seconds_past_the_initial_deadline() {
    let receiver = Receiver::start(Options::default());
    let initial = Timestamp::now() + SignedDuration::from_millis(1500);
    let (id, url, _) = start_follow_up(&receiver, initial);
    let maximum = initial + SignedDuration::from_secs(300);

    for body in [
        json!({"extendMinutes": 0}),
        json!({"extendMinutes": 6}),
        json!({"extendMinutes": -1}),
        json!({"extendMinutes": "two"}),
    ] {
        let answer = action(&receiver, &id, "extend", &body.to_string());
        assert_eq!(answer.status, 400, "{body}");
    }
    assert_eq!(action(&receiver, &id, "extend", "{").status, 400);

    // Default of one minute: now + 60 s, later than the initial deadline.
    let answer = action(&receiver, &id, "extend", "");
    assert_eq!(answer.status, 200, "{answer:?}");
    let result = answer.json();
    assert_eq!(result["extended"], true);
    let deadline = ts(&result["deadlineAtUtc"]);
    assert!((deadline - in_secs(60)).abs() < SignedDuration::from_secs(2));

    // Five minutes from now is still inside the cap (for 1.5 s).
    let result = action(&receiver, &id, "extend", r#"{"extendMinutes":5}"#).json();
    assert_eq!(
        (&result["succeeded"], &result["extended"]),
        (&json!(true), &json!(true))
    );
    let deadline = ts(&result["deadlineAtUtc"]);
    assert!(deadline < maximum);
    assert!((deadline - in_secs(300)).abs() < SignedDuration::from_secs(2));
    assert_eq!(ts(&result["maximumDeadlineAtUtc"]), maximum);

    // One minute does not move it back.
    let result = receiver.extend(&id, 1);
    assert!(result.succeeded);
    assert!(!result.extended);
    assert_eq!(result.deadline_at_utc, Some(deadline));

    // Once now + 5 min is past the cap, extending stops at the maximum deadline ...
    while Timestamp::now() <= initial + SignedDuration::from_millis(100) {
        thread::sleep(Duration::from_millis(50));
    }
    let result = receiver.extend(&id, 5);
    assert!(result.succeeded);
    assert!(result.extended);
    assert_eq!(result.deadline_at_utc, Some(maximum));
    // ... and then reports that nothing moved.
    let answer = action(&receiver, &id, "extend", r#"{"extendMinutes":5}"#);
    assert_eq!(answer.status, 200);
    let result = answer.json();
    assert_eq!(result["succeeded"], true);
    assert_eq!(result["extended"], false, "already at the cap");
    assert_eq!(result["status"], "Pending");
    assert_eq!(ts(&result["deadlineAtUtc"]), maximum);
    let remaining = result["providerHookTimeoutRemainingSeconds"]
        .as_i64()
        .unwrap();
    assert!((295..=300).contains(&remaining), "{remaining}");
    assert_eq!(ts(&get(&receiver, &url).json()["expiresAtUtc"]), maximum);
}

#[test]
fn cancel_rules() {
    let receiver = Receiver::start(Options::default());
    let (id, url, _) = start_follow_up(&receiver, in_secs(60));
    let answer = action(&receiver, &id, "cancel", "");
    assert_eq!(answer.status, 200);
    let result = answer.json();
    assert_eq!(
        (&result["succeeded"], &result["status"]),
        (&json!(true), &json!("Canceled"))
    );
    assert_eq!(get(&receiver, &url).json()["status"], "Canceled");
    assert_eq!(get(&receiver, &url).json()["reply"], Value::Null);
    // Canceling again succeeds; reply and extend conflict.
    let again = receiver.cancel(&id);
    assert!(again.succeeded);
    assert_eq!(again.http_status, 200);
    assert_eq!(
        action(&receiver, &id, "reply", r#"{"reply":"x"}"#).status,
        409
    );
    assert_eq!(action(&receiver, &id, "extend", "").status, 409);
    assert_eq!(
        receiver.follow_up(&id).unwrap().status,
        FollowUpStatus::Canceled
    );

    // Answered cannot be canceled.
    let (answered, _, _) = start_follow_up(&receiver, in_secs(60));
    assert!(receiver.reply(&answered, "done", false).succeeded);
    let result = receiver.cancel(&answered);
    assert_eq!((result.http_status, result.succeeded), (409, false));
    assert_eq!(receiver.cancel("unknown").http_status, 404);
}

#[test]
fn lazy_expiry() {
    let receiver = Receiver::start(Options::default());
    let deadline = Timestamp::now() + SignedDuration::from_millis(1200);
    let (id, url, _) = start_follow_up(&receiver, deadline);
    assert_eq!(get(&receiver, &url).json()["status"], "Pending");
    let found = receiver.wait_for_follow_up(
        |f| f.id == id && f.status == FollowUpStatus::Expired,
        Duration::from_secs(5),
    );
    assert!(Timestamp::now() >= deadline);
    assert!(found.is_some());
    let body = get(&receiver, &url).json();
    assert_eq!(body["status"], "Expired");
    assert_eq!(ts(&body["expiresAtUtc"]), deadline);
    for name in ["reply", "extend", "cancel"] {
        let answer = action(&receiver, &id, name, r#"{"reply":"late"}"#);
        assert_eq!(answer.status, 410, "{name}");
        assert_eq!(answer.json()["status"], "Expired");
    }
    // A deadline already in the past expires at once.
    let (past, url, _) = start_follow_up(&receiver, in_secs(-5));
    assert_eq!(get(&receiver, &url).json()["status"], "Expired");
    assert_eq!(receiver.reply(&past, "late", false).http_status, 410);
}

#[test]
fn webhook_faults() {
    let receiver = Receiver::start(Options {
        webhook_fault: WebhookFault::Status500,
        silent_hold: Duration::from_secs(3),
        ..Options::default()
    });
    let body = stop_follow_up(in_secs(60));
    let answer = post_webhook(&receiver, &body);
    assert_eq!(answer.status, 500);

    receiver.set_webhook_fault(WebhookFault::Garbage);
    let answer = post_webhook(&receiver, &body);
    assert_eq!((answer.status, answer.body.as_str()), (202, "not json"));

    receiver.set_webhook_fault(WebhookFault::Silent);
    assert!(stays_silent(
        &receiver,
        "POST",
        &receiver.webhook_url(),
        &body.to_string()
    ));
    // The silent request was still read and recorded, and did not block other connections.
    assert_eq!(receiver.requests().len(), 3);
    assert_eq!(get(&receiver, "/healthz").body, "ok");
    assert!(receiver.follow_ups().is_empty(), "faults create nothing");

    receiver.set_webhook_fault(WebhookFault::Normal);
    assert_eq!(post_webhook(&receiver, &body).status, 202);
    assert_eq!(receiver.follow_ups().len(), 1);
}

#[test]
fn poll_faults() {
    let receiver = Receiver::start(Options {
        poll_fault: PollFault::UnknownStatus,
        silent_hold: Duration::from_secs(3),
        ..Options::default()
    });
    let deadline = in_secs(60);
    let (id, url, _) = start_follow_up(&receiver, deadline);
    let body = get(&receiver, &url).json();
    assert_eq!(body["status"], "Weird");
    assert_eq!(body["reply"], Value::Null);
    assert_eq!(ts(&body["expiresAtUtc"]), deadline);

    receiver.set_poll_fault(PollFault::Status500);
    assert_eq!(get(&receiver, &url).status, 500);

    receiver.set_poll_fault(PollFault::Garbage);
    let answer = get(&receiver, &url);
    assert_eq!((answer.status, answer.body.as_str()), (200, "not json"));

    receiver.set_poll_fault(PollFault::Silent);
    assert!(stays_silent(&receiver, "GET", &url, ""));
    // Unknown id or wrong token still 404 under a fault.
    let wrong = format!("/api/follow-ups/{id}/poll/{}", "1".repeat(48));
    assert_eq!(get(&receiver, &wrong).status, 404);

    // A faulty poll does not consume a reply.
    receiver.set_poll_fault(PollFault::Status500);
    assert!(receiver.reply(&id, "hi", false).succeeded);
    assert_eq!(get(&receiver, &url).status, 500);
    assert!(receiver.follow_up(&id).unwrap().consumed_at_utc.is_none());
    receiver.set_poll_fault(PollFault::Normal);
    assert_eq!(get(&receiver, &url).json()["reply"], "hi");
}

#[test]
fn omit_expires_at() {
    let receiver = Receiver::start(Options {
        omit_expires_at: true,
        ..Options::default()
    });
    let (_, _, body) = start_follow_up(&receiver, in_secs(60));
    let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["followUpRequestIdentifier", "replyPollUrl"]);
}

#[test]
fn absolute_poll_url() {
    let receiver = Receiver::start(Options {
        absolute_poll_url: true,
        ..Options::default()
    });
    let (id, url, _) = start_follow_up(&receiver, in_secs(60));
    let prefix = format!("{}/api/follow-ups/{id}/poll/", receiver.url());
    assert!(url.starts_with(&prefix), "{url}");
    assert_eq!(get(&receiver, &url).json()["status"], "Pending");
    assert_eq!(receiver.follow_ups()[0].reply_poll_url, url);
}

#[test]
fn test_endpoints_list_requests_and_follow_ups() {
    let receiver = Receiver::start(Options::default());
    let (id, url, _) = start_follow_up(&receiver, in_secs(60));
    let _ = get(&receiver, "/healthz?probe=1");

    let list = get(&receiver, "/test/requests").json();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 2, "test endpoints are not recorded: {list:?}");
    let webhook = &list[0];
    assert_eq!(webhook["method"], "POST");
    assert_eq!(
        webhook["path"],
        format!("/api/webhooks/lidguard/{}", receiver.secret())
    );
    assert_eq!(webhook["headers"]["content-type"], "application/json");
    assert!(webhook["headers"]["host"].is_string());
    assert_eq!(webhook["json"]["eventType"], "StopFollowUp");
    assert_eq!(
        serde_json::from_str::<Value>(webhook["body"].as_str().unwrap()).unwrap(),
        webhook["json"]
    );
    let _ = ts(&webhook["receivedAt"]);
    assert_eq!(list[1]["path"], "/healthz?probe=1");
    assert_eq!(list[1]["json"], Value::Null);
    assert_eq!(list[1]["body"], "");

    let rows = get(&receiver, "/test/follow-ups").json();
    let row = &rows[0];
    assert_eq!(row["id"], id);
    assert_eq!(row["status"], "Pending");
    assert_eq!(row["replyPollUrl"], url);
    assert_eq!(row["sessionIdentifier"], "session-1");
    assert_eq!(row["provider"], "Claude");
    assert_eq!(row["reply"], Value::Null);
    assert_eq!(row["consumedAtUtc"], Value::Null);
    assert!(row["deadlineAtUtc"].is_string());
    assert!(row["maximumDeadlineAtUtc"].is_string());

    // In-process helpers see the same data.
    let seen = receiver
        .wait_for_request(|r| r.event_type() == Some("StopFollowUp"), Duration::ZERO)
        .unwrap();
    assert!(seen.is_webhook());
    assert_eq!(seen.header("Content-Type"), Some("application/json"));
    assert!(
        receiver
            .wait_for_request(|r| r.path == "/never", Duration::from_millis(200))
            .is_none()
    );
}

#[test]
fn wait_for_request_sees_later_requests_with_their_effects() {
    let receiver = Receiver::start(Options::default());
    let found = thread::scope(|scope| {
        scope.spawn(|| {
            thread::sleep(Duration::from_millis(200));
            start_follow_up(&receiver, in_secs(60));
        });
        receiver.wait_for_request(
            |r| r.event_type() == Some("StopFollowUp"),
            Duration::from_secs(5),
        )
    });
    assert!(found.is_some());
    // The follow-up request exists as soon as the webhook is visible.
    assert_eq!(receiver.follow_ups().len(), 1);
}

#[test]
fn chunked_body_and_expect_continue() {
    let receiver = Receiver::start(Options::default());
    let body = json!({"eventType": "PreSuspend", "reason": "Completed"}).to_string();
    let (first, second) = body.split_at(10);
    let host = receiver.addr().to_string();
    let raw = format!(
        "POST /api/webhooks/lidguard/{} HTTP/1.1\r\nHost: {host}\r\nExpect: 100-continue\r\n\
         Transfer-Encoding: chunked\r\n\r\n{:x}\r\n{first}\r\n{:x};ext=1\r\n{second}\r\n0\r\n\r\n",
        receiver.secret(),
        first.len(),
        second.len(),
    );
    let bytes = send_raw(&host, raw.as_bytes(), Duration::from_secs(10)).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let rest = text
        .strip_prefix("HTTP/1.1 100 Continue\r\n\r\n")
        .unwrap_or_else(|| panic!("interim 100 expected: {text}"));
    let answer = parse_answer(rest.as_bytes());
    assert_eq!(answer.status, 202, "{answer:?}");
    assert_eq!(receiver.requests()[0].body, body);

    // A malformed request line gets a 400.
    let bytes = send_raw(&host, b"NONSENSE\r\n\r\n", Duration::from_secs(10)).unwrap();
    assert_eq!(parse_answer(&bytes).status, 400);
}

#[test]
fn dropping_the_receiver_stops_accepting() {
    let receiver = Receiver::start(Options::default());
    let addr = receiver.addr();
    drop(receiver);
    let deadline = Instant::now() + Duration::from_secs(5);
    while TcpStream::connect(addr).is_ok() {
        assert!(Instant::now() < deadline, "still accepting");
        thread::sleep(Duration::from_millis(20));
    }
}
