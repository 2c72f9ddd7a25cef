use std::time::Duration;

use lidguard_core::provider::Provider;
use lidguard_core::session::StopKind;
use lidguard_ipc::protocol::{Outcome, Request, SessionRef};

use crate::util::{Agent, Home, alive, eventually, signal};

fn claude(id: &str) -> SessionRef {
    SessionRef {
        provider: Provider::Claude,
        session_id: id.into(),
        provider_name: None,
    }
}

#[test]
fn start_launches_the_daemon_and_status_json_follows_every_state() {
    let home = Home::new();
    // Not running yet: status says so and does not start it.
    let status = home.status();
    assert_eq!(status["running"], false);
    assert!(home.daemon_pid().is_none());

    let agent = Agent::spawn();
    let pid = agent.pid().to_string();
    let out = home.ok(&[
        "start",
        "--provider",
        "claude",
        "--session",
        "s1",
        "--parent-pid",
        &pid,
        "--transcript",
        "t.jsonl",
    ]);
    assert!(out.contains("started"), "{out}");
    let daemon = home.daemon_pid().expect("start launched the daemon");

    let status = home.status();
    assert_eq!(status["running"], true);
    assert_eq!(status["daemonPid"], daemon);
    assert_eq!(status["lid"], "Unknown");
    let s = &status["sessions"][0];
    assert_eq!(s["provider"], "claude");
    assert_eq!(s["sessionId"], "s1");
    assert_eq!(s["providerName"], serde_json::Value::Null);
    assert_eq!(s["state"], "active");
    assert_eq!(s["softLockReason"], serde_json::Value::Null);
    assert_eq!(s["pendingProviderWork"], false);
    assert_eq!(s["watchedPid"], agent.pid());
    assert_eq!(s["cwd"], home.path().display().to_string());
    assert_eq!(
        s["transcriptPath"],
        home.path().join("t.jsonl").display().to_string()
    );
    for field in ["startedAt", "lastActivityAt"] {
        let text = s[field].as_str().unwrap();
        assert!(text.ends_with('Z'), "{field} is RFC 3339 UTC: {text}");
        text.parse::<jiff::Timestamp>().unwrap();
    }
    // No system bus here: tracked, but protection is unavailable and says why.
    assert_eq!(status["protection"]["held"], false);
    assert_eq!(status["protection"]["wanted"], true);
    let reason = status["protection"]["unavailableReason"].as_str().unwrap();
    assert!(reason.contains("D-Bus is not reachable"), "{reason}");

    // Soft-lock with a reason, then activity clears it.
    let r = home.request(&Request::SoftLock {
        session: claude("s1"),
        reason: "permission_prompt".into(),
    });
    assert_eq!(r.outcome, Outcome::Recorded);
    let s = home.session("s1").unwrap();
    assert_eq!(s["state"], "softLocked");
    assert_eq!(s["softLockReason"], "permission_prompt");
    assert_eq!(home.status()["protection"]["wanted"], false);
    home.request(&Request::Activity {
        session: claude("s1"),
        reason: "PostToolUse:Bash".into(),
    });
    assert_eq!(home.session("s1").unwrap()["state"], "active");

    // A stop with background work is deferred.
    let r = home.request(&Request::Stop {
        session: claude("s1"),
        kind: StopKind::ProviderEnd,
        end_reason: Some("Stop".into()),
        pending_work: Some("1 background shell".into()),
    });
    assert_eq!(r.outcome, Outcome::StopDeferred);
    let s = home.session("s1").unwrap();
    assert_eq!(s["pendingProviderWork"], true);
    assert_eq!(s["state"], "active");

    // The final stop ends it; a second stop is answered, changes nothing, and succeeds.
    let out = home.ok(&["stop", "--provider", "claude", "--session", "s1"]);
    assert!(out.contains("stopped"), "{out}");
    let out = home.ok(&["stop", "--provider", "claude", "--session", "s1"]);
    assert!(out.contains("already stopped"), "{out}");
    assert!(home.status()["sessions"].as_array().unwrap().is_empty());
    assert!(alive(daemon));
}

#[test]
fn session_ids_default_to_the_provider_and_working_directory() {
    let home = Home::new();
    let dir = home.path().join("proj");
    std::fs::create_dir(&dir).unwrap();
    let dir_text = dir.display().to_string();
    home.ok(&["start", "--provider", "codex", "--cwd", &dir_text]);
    let expected = format!("codex:{dir_text}");
    assert!(home.session(&expected).is_some(), "{}", home.status());
    // The same directory written differently names the same session.
    let odd = format!("{dir_text}/./");
    home.ok(&["stop", "--provider", "codex", "--cwd", &odd]);
    assert!(home.session(&expected).is_none());
}

#[test]
fn a_missing_provider_fails_clearly_without_a_terminal() {
    let home = Home::new();
    let err = home.fails(&["start", "--session", "x"]);
    assert!(err.contains("needs --provider"), "{err}");
    assert!(home.daemon_pid().is_none());
}

#[test]
fn commands_other_than_start_never_launch_the_daemon() {
    let home = Home::new();
    for args in [
        &["stop", "--provider", "claude", "--session", "x"][..],
        &["remove-session", "--all"],
        &["cleanup-orphans"],
    ] {
        // Nothing to stop or remove is no failure: said, exit 0.
        let out = home.ok(args);
        assert!(
            out.contains("not running") && out.contains("nothing to do"),
            "{args:?}: {out}"
        );
    }
    let out = home.ok(&["resume", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (&v["ok"], &v["outcome"]),
        (&serde_json::json!(true), &serde_json::json!("unchanged")),
        "{v}"
    );
    assert!(home.daemon_pid().is_none());
}

#[test]
fn remove_session_by_id_provider_name_and_all() {
    let home = Home::new();
    home.ok(&["start", "--provider", "claude", "--session", "a"]);
    home.ok(&["start", "--provider", "codex", "--session", "a"]);
    home.ok(&[
        "start",
        "--provider",
        "mcp",
        "--provider-name",
        "gemini",
        "--session",
        "m",
    ]);
    home.ok(&[
        "start",
        "--provider",
        "mcp",
        "--provider-name",
        "qwen",
        "--session",
        "m",
    ]);
    assert_eq!(home.session("m").unwrap()["providerName"], "gemini");

    let out = home.ok(&[
        "remove-session",
        "--session",
        "m",
        "--provider",
        "mcp",
        "--provider-name",
        "qwen",
    ]);
    assert!(out.contains("removed 1 session"), "{out}");
    let out = home.ok(&["remove-session", "--session", "a", "--provider", "codex"]);
    assert!(out.contains("codex:a"), "{out}");
    let ids: Vec<String> = home.status()["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            format!(
                "{}:{}",
                s["provider"].as_str().unwrap(),
                s["sessionId"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(ids, ["claude:a", "mcp:m"]);
    let out = home.ok(&["remove-session", "--all"]);
    assert!(out.contains("removed 2 sessions"), "{out}");
    let out = home.run(&["remove-session"]);
    assert!(!out.status.success());
}

#[test]
fn cleanup_orphans_ends_sessions_whose_process_is_gone() {
    let home = Home::new();
    // Without the watchdog, a dead process's session stays until cleanup finds it.
    home.ok(&["settings", "--watch-parent-process", "false"]);
    let mut dead = Agent::spawn();
    let live = Agent::spawn();
    home.ok(&[
        "start",
        "--provider",
        "claude",
        "--session",
        "dead",
        "--parent-pid",
        &dead.pid().to_string(),
    ]);
    home.ok(&[
        "start",
        "--provider",
        "claude",
        "--session",
        "live",
        "--parent-pid",
        &live.pid().to_string(),
    ]);
    dead.kill();
    let out = home.ok(&["cleanup-orphans"]);
    assert!(out.contains("cleaned up 1 orphaned session"), "{out}");
    assert!(home.session("dead").is_none());
    assert!(home.session("live").is_some());
    let out = home.ok(&["cleanup-orphans", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["outcome"], "removed");
    assert!(v.get("sessions").is_none());
}

#[test]
fn a_restarted_daemon_resumes_sessions_whose_process_lives_and_drops_the_rest() {
    let home = Home::new();
    let agent = Agent::spawn();
    home.start_watched("watched", &agent.pid().to_string());
    home.ok(&["start", "--provider", "codex", "--session", "unwatched"]);
    let first = home.daemon_pid().unwrap();
    signal(first, rustix::process::Signal::KILL);
    assert!(eventually(Duration::from_secs(5), || !alive(first)));

    home.ok(&["start", "--provider", "copilot", "--session", "new"]);
    assert_ne!(home.daemon_pid().unwrap(), first);
    let ids = home.session_ids();
    assert_eq!(
        ids,
        ["watched", "new"],
        "ordered by provider: codex < claude < copilot"
    );
}

#[test]
fn the_daemon_exits_after_the_cleanup_delay_and_a_second_one_does_not_start() {
    let home = Home::new();
    home.write_settings(r#"{ "serverRuntimeCleanupDelayMinutes": 0 }"#);
    home.ok(&["start", "--provider", "claude", "--session", "s"]);
    let pid = home.daemon_pid().unwrap();

    // A second run-server for the same home sees the lock and exits 0 at once.
    let out = home.run(&["run-server"]);
    assert!(out.status.success());
    assert!(alive(pid));

    home.ok(&["stop", "--provider", "claude", "--session", "s"]);
    assert!(
        home.wait_daemon_gone(Duration::from_secs(5)),
        "idle daemon should exit at once"
    );
    assert!(!home.socket().exists(), "socket removed on exit");
    assert_eq!(home.status()["running"], false);
}

#[test]
fn sigterm_shuts_down_cleanly_and_keeps_sessions_for_the_next_daemon() {
    let home = Home::new();
    let agent = Agent::spawn();
    home.start_watched("s", &agent.pid().to_string());
    let pid = home.daemon_pid().unwrap();
    signal(pid, rustix::process::Signal::TERM);
    assert!(home.wait_daemon_gone(Duration::from_secs(5)));
    assert!(!home.socket().exists());
    home.ok(&["start", "--provider", "codex", "--session", "other"]);
    assert!(
        home.session("s").is_some(),
        "the watched session survived the restart"
    );
}

#[test]
fn many_concurrent_clients_are_all_answered() {
    let home = Home::new();
    home.ok(&["start", "--provider", "custom", "--session", "warm"]);
    std::thread::scope(|scope| {
        for t in 0..8 {
            let home = &home;
            scope.spawn(move || {
                for i in 0..25 {
                    let s = SessionRef {
                        provider: Provider::Custom,
                        session_id: format!("t{t}-{i}"),
                        provider_name: None,
                    };
                    let r = home.request(&Request::Start {
                        session: s.clone(),
                        cwd: None,
                        transcript_path: None,
                        watched_pid: None,
                    });
                    assert_eq!(r.outcome, Outcome::Started);
                    let r = home.request(&Request::Activity {
                        session: s.clone(),
                        reason: "x".into(),
                    });
                    assert!(r.ok);
                    if i % 2 == 0 {
                        let r = home.request(&Request::Stop {
                            session: s,
                            kind: StopKind::Manual,
                            end_reason: None,
                            pending_work: None,
                        });
                        assert_eq!(r.outcome, Outcome::Stopped);
                    }
                }
            });
        }
    });
    assert_eq!(
        home.status()["sessions"].as_array().unwrap().len(),
        1 + 8 * 12
    );
}

#[test]
fn a_fake_proc_root_for_the_lid_never_hides_live_agent_processes() {
    let home = Home::new();
    let fake_proc = home.path().join("proc");
    std::fs::create_dir_all(fake_proc.join("acpi/button/lid/LID0")).unwrap();
    std::fs::write(
        fake_proc.join("acpi/button/lid/LID0/state"),
        "state: closed\n",
    )
    .unwrap();
    let agent = Agent::spawn();
    let out = home
        .cmd(&[
            "start",
            "--provider",
            "claude",
            "--session",
            "s",
            "--parent-pid",
            &agent.pid().to_string(),
        ])
        .env("LIDGUARD_PROC_ROOT", &fake_proc)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        home.status()["lid"],
        "Closed",
        "the lid comes from the fake root"
    );
    let out = home.ok(&["cleanup-orphans"]);
    assert!(out.contains("no orphaned session"), "{out}");
    assert!(home.session("s").is_some());
}

/// Without a power backend the commands that promise "awake" say at once that nothing is held:
/// `start` warns on stderr and its JSON has `protection`; `status --check` exits 3 for scripts.
#[test]
fn without_a_power_backend_start_and_status_check_say_so() {
    let home = Home::new();
    let out = home.run(&["start", "--provider", "custom", "--session", "s", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr
            .contains("warning: the machine is NOT kept awake: the system D-Bus is not reachable"),
        "{stderr}"
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["protection"]["held"], false);
    assert_eq!(json["protection"]["wanted"], true);
    assert!(crate::util::text(&json["protection"]["unavailableReason"]).contains("D-Bus"));
    let check = home.run(&["status", "--check"]);
    assert_eq!(check.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&check.stderr).contains("nothing is held"));
    assert!(check.stdout.is_empty(), "--check is quiet");
    let verbose = home.run(&["status", "--check", "--verbose"]);
    assert_eq!(verbose.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&verbose.stdout).contains("Sessions (1)"));
    home.ok(&["stop", "--provider", "custom", "--session", "s"]);
    assert_eq!(home.ok(&["status", "--check"]), "");
}

/// The daemon raises its soft open-descriptor limit to the hard one (1,024 is reached by a burst
/// of idle connections long before the machine's limit).
#[test]
fn the_daemon_raises_its_descriptor_limit_to_the_hard_one() {
    let home = Home::new();
    let mut start = std::process::Command::new("prlimit");
    start.arg("--nofile=256:4096").arg(crate::util::BIN);
    start.args(["start", "--provider", "custom", "--session", "s"]);
    let start = home.configure(start);
    let out = crate::util::pipe(start, b"");
    assert!(out.status.success(), "{out:?}");
    let pid = home.daemon_pid().unwrap();
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let numbers: Vec<&str> = line.split_whitespace().skip(3).take(2).collect();
    assert_eq!(numbers, ["4096", "4096"], "{line}");
}

/// Text from outside reaches the terminal escaped: a session id (or cwd, reason, tool) carrying
/// an escape sequence or a bidi override is shown as `\u{1b}`, `\u{202e}`, never raw, in
/// `status`, `events` and `hook-events`; `--json` keeps the exact string.
#[test]
fn terminal_output_escapes_controls_and_bidi_from_payloads() {
    let home = Home::new();
    let id = "a\u{1b}[2Jb\u{202e}c";
    home.ok(&["start", "--provider", "custom", "--session", id]);
    let hook = r#"{"session_id":"h\u001b]0;owned\u0007","hook_event_name":"PostToolUse","tool_name":"T\u202eX","tool_input":{},"tool_response":{},"cwd":"/tmp"}"#;
    let out = crate::util::pipe(home.hook_cmd(&["claude-hook"]), hook.as_bytes());
    assert!(out.status.success());
    for args in [&["status"][..], &["events"], &["hook-events"]] {
        let text = home.ok(args);
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{202e}') && !text.contains('\u{7}'),
            "{args:?}: {text:?}"
        );
    }
    assert!(home.ok(&["status"]).contains("a\\u{1b}[2Jb\\u{202e}c"));
    assert_eq!(home.session(id).unwrap()["sessionId"], id);
}

#[test]
fn daemon_stop_ends_the_daemon_and_says_when_none_runs() {
    let home = Home::new();
    assert_eq!(
        home.ok(&["daemon-stop"]).trim(),
        "no lidguard daemon is running"
    );
    home.ok(&["start", "--provider", "custom", "--session", "s"]);
    let pid = home.daemon_pid().expect("a daemon");
    let out = home.ok(&["daemon-stop"]);
    assert_eq!(out.trim(), format!("stopped the daemon (pid {pid})"));
    // It has let go of its lock and socket when daemon-stop returns; the process ends right after.
    assert!(!home.socket().exists(), "its socket is gone");
    assert!(eventually(Duration::from_secs(2), || !alive(pid)));
    // The next command that needs it starts it again; the session was kept on disk.
    home.ok(&["start", "--provider", "custom", "--session", "t"]);
    assert!(home.daemon_pid().is_some_and(|p| p != pid));
    // For scripts: --json.
    let v: serde_json::Value = serde_json::from_str(&home.ok(&["daemon-stop", "--json"])).unwrap();
    assert_eq!(v["stopped"], true, "{v}");
    let v: serde_json::Value = serde_json::from_str(&home.ok(&["daemon-stop", "--json"])).unwrap();
    assert_eq!(v["stopped"], false, "{v}");
}
