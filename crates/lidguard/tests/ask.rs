//! Ask before sleep end to end on this machine: the real hook binary, the real daemon and a
//! receiver on loopback that speaks the reference receiver's protocol
//! (`lidguard-testreceiver`). The Stop hook waits; the receiver's reply becomes the hook's
//! continuation; every other outcome lets the hook go empty-handed and the suspend go on.
//!
//! The reference's minimums apply (post-stop delay ≥ 10 s, reply wait ≥ 20 s), so the
//! scenarios that do not depend on each other run side by side in one test.

use std::path::PathBuf;
use std::process::Output;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use lidguard_testreceiver::{FollowUp, FollowUpStatus, Options, PollFault, Receiver, WebhookFault};
use serde_json::Value;

use crate::util::{Agent, Home, eventually, expected_signature, fake_roots, pipe, set_lid, signal};

const PROMPT: &str = r#"{"session_id":"a1","cwd":"/home/u/proj","transcript_path":"/home/u/.claude/projects/p/a1.jsonl","hook_event_name":"UserPromptSubmit","prompt":"Please refactor the storage layer\nand add tests for every edge case you find"}"#;
const STOP: &str = r#"{"session_id":"a1","cwd":"/home/u/proj","transcript_path":"/home/u/.claude/projects/p/a1.jsonl","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"Refactored; 12 tests added."}"#;
const STOP_AGAIN: &str = r#"{"session_id":"a1","cwd":"/home/u/proj","hook_event_name":"Stop","stop_hook_active":true,"last_assistant_message":"README updated."}"#;

/// A private home with ask before sleep on (10 s delay, 20 s reply wait), the lid closed
/// and a receiver.
struct Scenario {
    home: Home,
    roots: (PathBuf, PathBuf),
    receiver: Receiver,
}

impl Scenario {
    fn new(options: Options, extra: &[&str]) -> Scenario {
        let home = Home::new();
        let receiver = Receiver::start(options);
        let url = receiver.webhook_url();
        let mut args = vec![
            "settings",
            "--closed-lid-stop-follow-up-webhook-url",
            &url,
            "--post-stop-suspend-delay-seconds",
            "10",
            "--closed-lid-stop-follow-up-delay-seconds",
            "20",
        ];
        args.extend_from_slice(extra);
        home.ok(&args);
        let roots = fake_roots(&home, "closed");
        Scenario {
            home,
            roots,
            receiver,
        }
    }

    fn hook(&self, payload: &str) -> Output {
        let mut cmd = self.home.cmd(&["claude-hook"]);
        cmd.env("LIDGUARD_PROC_ROOT", &self.roots.0)
            .env("LIDGUARD_SYS_ROOT", &self.roots.1);
        pipe(cmd, payload.as_bytes())
    }

    /// Starts the session and lets the daemon read the closed lid.
    fn work(&self) {
        assert!(self.hook(PROMPT).status.success());
        assert!(eventually(Duration::from_secs(5), || {
            self.home.status()["lid"] == "Closed"
        }));
        std::thread::sleep(Duration::from_millis(2500));
    }

    /// Runs the Stop hook on a thread (it waits); returns it and when it started.
    fn stop(&self, payload: &'static str) -> (JoinHandle<Output>, Instant) {
        let mut cmd = self.home.cmd(&["claude-hook"]);
        cmd.env("LIDGUARD_PROC_ROOT", &self.roots.0)
            .env("LIDGUARD_SYS_ROOT", &self.roots.1);
        (
            std::thread::spawn(move || pipe(cmd, payload.as_bytes())),
            Instant::now(),
        )
    }

    fn question(&self) -> FollowUp {
        self.receiver
            .wait_for_follow_up(|_| true, Duration::from_secs(20))
            .expect("the StopFollowUp question")
    }

    fn history(&self) -> Vec<Value> {
        serde_json::from_str::<Value>(&self.home.ok(&["suspend-history", "--json"]))
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    }
}

fn stdout(out: &Output) -> String {
    assert!(out.status.success(), "hooks always exit 0");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn a_reply_continues_the_same_session_and_the_question_has_every_field() {
    let s = Scenario::new(Options::default(), &[]);
    s.work();
    let (hook, started) = s.stop(STOP);
    let question = s.question();
    let asked_after = started.elapsed();
    assert!(
        asked_after >= Duration::from_secs(9),
        "asked after the post-stop delay, not {asked_after:?}"
    );
    let request = s
        .receiver
        .requests()
        .into_iter()
        .find(|r| r.event_type() == Some("StopFollowUp"))
        .unwrap();
    let body = request.json.clone().unwrap();
    assert_eq!(body["eventType"], "StopFollowUp");
    assert_eq!(body["reason"], "AwaitingReply");
    assert_eq!(body["replyWaitSeconds"], 20);
    crate::util::assert_ended_claude_session(&body, "a1");
    assert!(
        body["userInterfaceCulture"]
            .as_str()
            .is_some_and(|c| !c.is_empty())
    );
    for field in ["startedAtUtc", "lastActivityAtUtc", "endedAtUtc"] {
        assert!(
            body[field]
                .as_str()
                .unwrap()
                .parse::<jiff::Timestamp>()
                .is_ok(),
            "{field}"
        );
    }
    let deadline: jiff::Timestamp = body["replyDeadlineUtc"].as_str().unwrap().parse().unwrap();
    let wait = deadline.duration_since(request.received_at).as_secs_f64();
    assert!((18.0..=21.0).contains(&wait), "{wait}");
    assert_eq!(question.deadline_at_utc, deadline);
    assert!(
        request
            .header("content-type")
            .unwrap()
            .starts_with("application/json"),
        "{:?}",
        request.header("content-type")
    );
    // While the question is out, `status` says so.
    let status = s.home.status();
    let ask = &status["pendingSuspend"]["ask"];
    assert_eq!(ask["status"], "awaiting-reply", "{status}");
    assert_eq!(ask["key"]["sessionId"], "a1");
    assert!(!hook.is_finished(), "the Stop hook waits for the answer");

    let result = s
        .receiver
        .reply(&question.id, "also update the README", true);
    assert!(result.succeeded, "{}", result.message);
    let out = hook.join().unwrap();
    assert_eq!(
        stdout(&out),
        r#"{"decision":"block","reason":"also update the README"}"#
    );
    assert!(result.reply_consumed, "the daemon polled the reply");
    // The same session, working again.
    let session = s.home.session("a1").expect("the session is back");
    assert_eq!(session["state"], "active");
    assert!(s.home.status()["pendingSuspend"].is_null());
    assert!(s.history().is_empty(), "no suspend was requested");
    assert!(
        !s.receiver
            .requests()
            .iter()
            .any(|r| r.event_type() == Some("PostSessionEnd")
                || r.event_type() == Some("PreSuspend")),
        "a reply that resumes sends nothing else"
    );

    // The attempt is in the webhook history: host, never the URL with its secret.
    let history: Value = serde_json::from_str(&s.home.ok(&["webhook-history", "--json"])).unwrap();
    let entry = &history.as_array().unwrap()[0];
    assert_eq!(entry["eventType"], "StopFollowUp");
    assert_eq!(entry["reason"], "AwaitingReply");
    assert_eq!(entry["host"], s.receiver.addr().to_string());
    assert_eq!(entry["sessionId"], "a1");
    assert_eq!(entry["succeeded"], true);
    assert!(
        crate::util::text(&entry["result"]).starts_with("reply-received"),
        "{entry}"
    );
    assert!(entry["durationMs"].as_u64().unwrap() > 0);
    assert!(!history.to_string().contains(s.receiver.secret()));

    // The continued turn stops again (stop_hook_active): asked again (repeat is on).
    let (hook, _) = s.stop(STOP_AGAIN);
    let again = s
        .receiver
        .wait_for_follow_up(|f| f.id != question.id, Duration::from_secs(20))
        .expect("asked again");
    s.receiver.cancel(&again.id);
    assert_eq!(stdout(&hook.join().unwrap()), "");
    assert!(eventually(Duration::from_secs(10), || !s
        .history()
        .is_empty()));
}

#[test]
fn without_a_reply_the_hook_ends_silently_and_the_suspend_is_requested() {
    let s = Scenario::new(Options::default(), &[]);
    s.work();
    let (hook, started) = s.stop(STOP);
    let question = s.question();
    let out = hook.join().unwrap();
    let took = started.elapsed();
    assert_eq!(stdout(&out), "");
    // 10 s delay + 20 s wait (+ polling slack).
    assert!(
        took >= Duration::from_secs(29) && took < Duration::from_secs(45),
        "{took:?}"
    );
    assert_eq!(
        s.receiver.follow_up(&question.id).unwrap().status,
        FollowUpStatus::Expired
    );
    assert!(eventually(Duration::from_secs(10), || !s
        .history()
        .is_empty()));
    assert!(s.home.session("a1").is_none());
}

#[test]
fn receivers_that_fail_cancel_or_move_the_deadline() {
    // Every scenario runs on its own thread with its own daemon and receiver.
    type Check = fn() -> ();
    let scenarios: Vec<(&str, Check)> = vec![
        ("canceled", canceled),
        ("webhook 500", || webhook_fault(WebhookFault::Status500, 12)),
        ("webhook garbage", || {
            webhook_fault(WebhookFault::Garbage, 12)
        }),
        ("webhook silent", || webhook_fault(WebhookFault::Silent, 17)),
        ("poll 500", || poll_fault(PollFault::Status500, 14)),
        ("poll garbage", || poll_fault(PollFault::Garbage, 14)),
        ("poll silent", || poll_fault(PollFault::Silent, 19)),
        ("poll unknown status", || {
            poll_fault(PollFault::UnknownStatus, 14)
        }),
        (
            "absolute poll url, no expiry",
            absolute_poll_url_without_expiry,
        ),
        ("extended", extended),
        ("lid opened", lid_opened),
        ("signed", signed),
        ("daemon stopped", daemon_stopped),
        ("agent exited", agent_exited),
        ("hook killed", hook_killed),
    ];
    let running: Vec<_> = scenarios
        .into_iter()
        .map(|(name, check)| (name, std::thread::spawn(check)))
        .collect();
    let mut failed = Vec::new();
    for (name, thread) in running {
        if thread.join().is_err() {
            failed.push(name);
        }
    }
    assert!(failed.is_empty(), "failed: {failed:?}");
}

/// The user cancels the question: sleep now, no waiting for the deadline.
fn canceled() {
    let s = Scenario::new(Options::default(), &[]);
    s.work();
    let (hook, _) = s.stop(STOP);
    let question = s.question();
    let at = Instant::now();
    assert!(s.receiver.cancel(&question.id).succeeded);
    assert_eq!(stdout(&hook.join().unwrap()), "");
    assert!(eventually(Duration::from_secs(10), || !s
        .history()
        .is_empty()));
    assert!(at.elapsed() < Duration::from_secs(8), "{:?}", at.elapsed());
}

/// The question cannot be asked: the hook goes at once (within the 5 s request limit).
fn webhook_fault(fault: WebhookFault, limit_secs: u64) {
    let s = Scenario::new(
        Options {
            webhook_fault: fault,
            ..Options::default()
        },
        &[],
    );
    s.work();
    let (hook, started) = s.stop(STOP);
    let out = hook.join().unwrap();
    assert_eq!(stdout(&out), "", "{fault:?}");
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(limit_secs),
        "{fault:?}: {took:?}"
    );
    assert!(
        s.receiver.follow_ups().is_empty(),
        "{fault:?}: the receiver made no follow-up"
    );
    assert!(
        eventually(Duration::from_secs(10), || !s.history().is_empty()),
        "{fault:?}: the suspend goes on"
    );
}

/// The question is out but the poll answers something unusable (or nothing within its 5 s):
/// the hook goes, sleep goes on.
fn poll_fault(fault: PollFault, limit_secs: u64) {
    let s = Scenario::new(
        Options {
            poll_fault: fault,
            ..Options::default()
        },
        &[],
    );
    s.work();
    let (hook, started) = s.stop(STOP);
    s.question();
    assert_eq!(stdout(&hook.join().unwrap()), "", "{fault:?}");
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(limit_secs),
        "{fault:?}: {took:?}"
    );
    assert!(
        eventually(Duration::from_secs(10), || !s.history().is_empty()),
        "{fault:?}"
    );
}

/// An absolute `replyPollUrl` and an answer without `expiresAtUtc` work as well.
fn absolute_poll_url_without_expiry() {
    let s = Scenario::new(
        Options {
            absolute_poll_url: true,
            omit_expires_at: true,
            ..Options::default()
        },
        &[],
    );
    s.work();
    let (hook, _) = s.stop(STOP);
    let question = s.question();
    assert!(question.reply_poll_url.starts_with("http://127.0.0.1:"));
    s.receiver.reply(&question.id, "run the tests again", false);
    assert_eq!(
        stdout(&hook.join().unwrap()),
        r#"{"decision":"block","reason":"run the tests again"}"#
    );
}

/// The dashboard extends the wait: the daemon keeps polling past the first deadline.
fn extended() {
    let s = Scenario::new(Options::default(), &[]);
    s.work();
    let (hook, started) = s.stop(STOP);
    let question = s.question();
    let result = s.receiver.extend(&question.id, 1);
    assert!(result.extended, "{}", result.message);
    let new_deadline = result.deadline_at_utc.unwrap();
    assert!(eventually(Duration::from_secs(5), || {
        let status = s.home.status();
        status["pendingSuspend"]["ask"]["replyDeadline"]
            .as_str()
            .and_then(|d| d.parse::<jiff::Timestamp>().ok())
            == Some(new_deadline)
    }));
    // Past the first deadline (10 + 20 s after the stop) the hook still waits.
    while started.elapsed() < Duration::from_secs(34) {
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(!hook.is_finished(), "the extension is honoured");
    s.receiver.reply(&question.id, "one more thing", false);
    assert_eq!(
        stdout(&hook.join().unwrap()),
        r#"{"decision":"block","reason":"one more thing"}"#
    );
}

/// Opening the lid cancels the wait; nothing is requested.
fn lid_opened() {
    let s = Scenario::new(Options::default(), &[]);
    s.work();
    let (hook, _) = s.stop(STOP);
    s.question();
    let at = Instant::now();
    set_lid(&s.roots.0, "open");
    assert_eq!(stdout(&hook.join().unwrap()), "");
    assert!(at.elapsed() < Duration::from_secs(6), "{:?}", at.elapsed());
    std::thread::sleep(Duration::from_secs(1));
    assert!(s.history().is_empty());
}

/// With a secret, the question and every poll carry the signature.
fn signed() {
    let secret = "correct horse battery staple";
    let s = Scenario::new(Options::default(), &["--webhook-secret", secret]);
    s.work();
    let (hook, _) = s.stop(STOP);
    let question = s.question();
    assert!(
        s.receiver
            .wait_for_request(|r| r.method == "GET", Duration::from_secs(5))
            .is_some()
    );
    s.receiver.reply(&question.id, "ok", false);
    assert_eq!(
        stdout(&hook.join().unwrap()),
        r#"{"decision":"block","reason":"ok"}"#
    );
    let requests = s.receiver.requests();
    assert!(requests.len() >= 2);
    for r in requests {
        let timestamp = r.header("x-lidguard-timestamp").expect("timestamp");
        let want = expected_signature(secret, timestamp, r.body.as_bytes());
        assert_eq!(
            r.header("x-lidguard-signature"),
            Some(want.as_str()),
            "{} {}",
            r.method,
            r.path
        );
    }
}

/// The daemon stops (SIGTERM) while a hook waits: the hook is let go at once, empty-handed.
fn daemon_stopped() {
    let s = Scenario::new(Options::default(), &[]);
    s.work();
    let (hook, _) = s.stop(STOP);
    s.question();
    let pid = s.home.daemon_pid().expect("the daemon runs");
    let at = Instant::now();
    signal(pid, rustix::process::Signal::TERM);
    assert_eq!(stdout(&hook.join().unwrap()), "");
    assert!(at.elapsed() < Duration::from_secs(5), "{:?}", at.elapsed());
}

/// The agent's process is gone before the question would go out (as after `opencode run`):
/// nobody could take a reply, so nothing is asked and the suspend goes on.
fn agent_exited() {
    let s = Scenario::new(Options::default(), &[]);
    let mut agent = Agent::spawn();
    let pid = agent.pid().to_string();
    let mut start = s.home.cmd(&[
        "start",
        "--provider",
        "claude",
        "--session",
        "a1",
        "--parent-pid",
        &pid,
    ]);
    start
        .env("LIDGUARD_PROC_ROOT", &s.roots.0)
        .env("LIDGUARD_SYS_ROOT", &s.roots.1);
    assert!(start.output().unwrap().status.success());
    assert!(eventually(Duration::from_secs(5), || {
        s.home.status()["lid"] == "Closed"
    }));
    std::thread::sleep(Duration::from_millis(2500));
    let (hook, started) = s.stop(STOP);
    // Killed once the Stop scheduled the suspend: killed before the daemon read the Stop, the
    // session would end as a dead agent's, which never schedules a suspend (seen under load).
    assert!(eventually(Duration::from_secs(5), || {
        s.home.status()["pendingSuspend"].is_object()
    }));
    agent.kill();
    assert_eq!(stdout(&hook.join().unwrap()), "");
    let took = started.elapsed();
    assert!(took < Duration::from_secs(14), "{took:?}");
    assert!(s.receiver.follow_ups().is_empty(), "nothing was asked");
    assert!(eventually(Duration::from_secs(10), || !s
        .history()
        .is_empty()));
}

/// The agent stops waiting for its Stop hook (its own hook timeout, or the user) while the
/// question is out: a reply could not reach it, so lidguard drops the question and sleeps.
fn hook_killed() {
    use std::io::Write;
    let s = Scenario::new(Options::default(), &[]);
    s.work();
    let mut cmd = s.home.cmd(&["claude-hook"]);
    cmd.env("LIDGUARD_PROC_ROOT", &s.roots.0)
        .env("LIDGUARD_SYS_ROOT", &s.roots.1)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut hook = cmd.spawn().unwrap();
    hook.stdin
        .take()
        .unwrap()
        .write_all(STOP.as_bytes())
        .unwrap();
    s.question();
    assert!(s.history().is_empty());
    let at = Instant::now();
    hook.kill().unwrap();
    hook.wait().unwrap();
    assert!(
        eventually(Duration::from_secs(8), || !s.history().is_empty()),
        "the suspend goes on once the hook is gone"
    );
    assert!(at.elapsed() < Duration::from_secs(8), "{:?}", at.elapsed());
    assert!(s.home.session("a1").is_none());
}
