use std::time::{Duration, Instant};

use crate::util::{Home, pipe};

/// Runs `lidguard <args>` with `stdin`; returns (exit success, stdout, stderr).
fn hook(
    home: &Home,
    args: &[&str],
    stdin: &[u8],
    env: &[(&str, &std::path::Path)],
) -> (bool, String, String) {
    let mut cmd = home.cmd(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = pipe(cmd, stdin);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn log(home: &Home) -> String {
    std::fs::read_to_string(home.places.log_file()).unwrap_or_default()
}

const CLAUDE_PROMPT: &str =
    r#"{"session_id":"s1","cwd":"/tmp","hook_event_name":"UserPromptSubmit","prompt":"go"}"#;

#[test]
fn malformed_input_unknown_events_and_no_daemon_all_fail_open() {
    let home = Home::new();
    let cases: &[(&[&str], &[u8])] = &[
        (&["claude-hook"], b"not json"),
        (&["claude-hook"], b""),
        (&["claude-hook"], b"{}"),
        (&["codex-hook"], b"\xff\xfe"),
        (&["copilot-hook", "--event", "agentStop"], b"[1,2"),
        (
            &["opencode-hook", "--event", "session.idle"],
            b"{\"sessionID\": 5}",
        ),
        (
            &["claude-hook"],
            br#"{"hook_event_name":"Stop","session_id":"x"}"#,
        ),
        (
            &["claude-hook"],
            br#"{"hook_event_name":"SomethingNew","session_id":"x"}"#,
        ),
    ];
    for (args, stdin) in cases {
        let (ok, stdout, stderr) = hook(&home, args, stdin, &[]);
        assert!(ok, "{args:?} must exit 0");
        assert_eq!(stdout, "", "{args:?}");
        assert_eq!(stderr, "", "{args:?}");
    }
    // Only events that start a session launch the daemon.
    assert!(home.daemon_pid().is_none());
    let log = log(&home);
    assert!(log.contains("not valid JSON"), "{log}");
    assert!(log.contains("the daemon is not running"), "{log}");
    assert!(
        log.lines().count() >= cases.len(),
        "one diagnostic line per failure:\n{log}"
    );
}

#[test]
fn a_prompt_launches_the_daemon_and_starts_the_session() {
    let home = Home::new();
    let (ok, stdout, _) = hook(&home, &["claude-hook"], CLAUDE_PROMPT.as_bytes(), &[]);
    assert!(ok);
    assert_eq!(stdout, "");
    let s = home.session("s1").expect("session started by the hook");
    assert_eq!(s["provider"], "claude");
    assert_eq!(s["cwd"], "/tmp");
    let events = home.ok(&["hook-events", "--json"]);
    let events: serde_json::Value = serde_json::from_str(&events).unwrap();
    assert_eq!(events[0]["hookEvent"], "UserPromptSubmit");
    assert_eq!(events[0]["prompt"], "go");
    let receipts: serde_json::Value =
        serde_json::from_str(&home.ok(&["hook-events", "--receipts", "--json"])).unwrap();
    assert_eq!(receipts[0]["event"], "UserPromptSubmit");
    assert_eq!(receipts[0]["count"], 1);
}

#[test]
fn a_claude_cloud_session_keeps_nothing_awake_and_says_why() {
    let home = Home::new();
    // A session on this machine first, so the daemon runs and can be asked.
    let here = CLAUDE_PROMPT.replace("\"s1\"", "\"s0\"");
    assert!(hook(&home, &["claude-hook"], here.as_bytes(), &[]).0);
    assert!(home.session("s0").is_some());
    let mut cmd = home.cmd(&["claude-hook"]);
    cmd.env("CLAUDE_CODE_REMOTE", "true");
    let out = pipe(cmd, CLAUDE_PROMPT.as_bytes());
    assert!(out.status.success());
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    assert!(
        home.session("s1").is_none(),
        "no session for work elsewhere"
    );
    assert!(
        log(&home).contains("a Claude cloud session"),
        "{}",
        log(&home)
    );
    // The same prompt from a self-hosted runner (this machine) starts its session.
    let mut cmd = home.cmd(&["claude-hook"]);
    cmd.env("CLAUDE_CODE_REMOTE", "true");
    cmd.env("CLAUDE_CODE_ENVIRONMENT_KIND", "byoc");
    assert!(pipe(cmd, CLAUDE_PROMPT.as_bytes()).status.success());
    assert!(home.session("s1").is_some());
}

#[test]
fn a_hook_executable_alone_reaches_a_running_daemon_and_says_why_it_cannot_start_one() {
    // A copy of the hook executable without `lidguard` beside it (the static build put on its
    // own somewhere): it cannot start the daemon, but it reaches one that runs.
    let home = Home::new();
    let lone = home.path().join("bin").join("lidguard-hook");
    std::fs::create_dir_all(lone.parent().unwrap()).unwrap();
    // Written from a child process: a copy written here could be busy when run (ETXTBSY).
    crate::util::write_executable(&lone, &std::fs::read(crate::util::hook_bin()).unwrap());
    let run = |stdin: &str| {
        let mut cmd = std::process::Command::new(&lone);
        cmd.arg("claude-hook");
        let out = pipe(home.configure(cmd), stdin.as_bytes());
        assert!(out.status.success() && out.stdout.is_empty() && out.stderr.is_empty());
    };
    run(CLAUDE_PROMPT);
    assert!(home.daemon_pid().is_none(), "it starts no daemon");
    let log = log(&home);
    assert!(
        log.contains("the daemon is not running; event ignored") && log.contains("is not next to"),
        "{log}"
    );
    home.ok(&["start", "--provider", "custom", "--session", "keep"]);
    run(CLAUDE_PROMPT);
    assert!(
        home.session("s1").is_some(),
        "the running daemon got the prompt"
    );
}

#[test]
fn a_daemon_that_never_answers_costs_a_bounded_wait() {
    let home = Home::new();
    home.places.ensure_runtime_dir().unwrap();
    // Something listens on the socket but never reads or answers.
    let _listener = std::os::unix::net::UnixListener::bind(home.socket()).unwrap();
    // An event that awaits no answer is handed over and the hook exits: it never waits.
    let started = Instant::now();
    let (ok, stdout, _) = hook(
        &home,
        &["claude-hook"],
        br#"{"hook_event_name":"PreToolUse","session_id":"x","tool_name":"Bash"}"#,
        &[],
    );
    assert!(ok);
    assert_eq!(stdout, "");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert!(!log(&home).contains("did not answer"), "{}", log(&home));
    // One that awaits an answer (a permission request) waits until the deadline.
    let started = Instant::now();
    let (ok, stdout, _) = hook(&home, &["claude-hook"], PERMISSION_REQUEST, &[]);
    assert!(ok);
    assert_eq!(stdout, "");
    // The 2 s deadline plus the process's own start: a bound no hook without a deadline meets,
    // with room for a busy machine.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(log(&home).contains("did not answer"), "{}", log(&home));
}

/// A Claude permission request: the agent reads lidguard's answer to it.
const PERMISSION_REQUEST: &[u8] = br#"{"hook_event_name":"PermissionRequest","session_id":"x","tool_name":"Bash","tool_input":{"command":"touch x"}}"#;

/// A payload of about `size` bytes (a long tool output) for Claude's hook `event`.
fn big_payload(event: &str, size: usize) -> Vec<u8> {
    let mut text = format!(
        r#"{{"session_id":"big","cwd":"/tmp","hook_event_name":"{event}","tool_name":"Bash","tool_input":{{"command":"cat big"}},"tool_response":{{"stdout":""#,
    );
    text.push_str(&"y".repeat(size));
    text.push_str(r#""}}"#);
    text.into_bytes()
}

/// Runs the installed hook executable with `payload` written from another thread; returns
/// whether every byte could be written (no broken pipe) and the exit status.
fn hook_with_writer(home: &Home, payload: &std::sync::Arc<Vec<u8>>) -> (bool, bool) {
    use std::io::Write;
    let mut child = home
        .hook_cmd(&["claude-hook"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let bytes = std::sync::Arc::clone(payload);
    let writer = std::thread::spawn(move || stdin.write_all(&bytes).is_ok());
    let status = child.wait().unwrap();
    (writer.join().unwrap(), status.success())
}

#[test]
fn one_deadline_for_the_whole_hook_whatever_the_daemon_and_the_payload() {
    let home = Home::new();
    home.places.ensure_runtime_dir().unwrap();
    // A daemon that accepts every connection and never reads or answers.
    let listener = std::os::unix::net::UnixListener::bind(home.socket()).unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    // Permission requests: the hook waits for the answer.
    let payload = std::sync::Arc::new(big_payload("PermissionRequest", 16 << 20));
    let results: Vec<(bool, bool, Duration)> = std::thread::scope(|scope| {
        let runs: Vec<_> = (0..30)
            .map(|_| {
                scope.spawn(|| {
                    let started = Instant::now();
                    let (written, ok) = hook_with_writer(&home, &payload);
                    (written, ok, started.elapsed())
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    assert!(
        results.iter().all(|(written, ok, _)| *written && *ok),
        "{results:?}"
    );
    // Each hook gives up on the silent daemon by its own deadline: without one it would wait
    // forever. How long 30 parallel 16 MB hooks take in all depends on the machine (the
    // benchmark reports it); here only a bound no working deadline comes near.
    let slowest = results.iter().map(|r| r.2).max().unwrap();
    eprintln!("30 parallel hooks with 16 MB payloads: the slowest exited after {slowest:?}");
    assert!(slowest < Duration::from_secs(30), "{slowest:?}");
    assert!(log(&home).contains("did not answer"), "{}", log(&home));

    // Past the size limit: read to the end and dropped, never a broken pipe for the agent.
    let huge = std::sync::Arc::new(big_payload("PostToolUse", 50 << 20));
    let (written, ok) = hook_with_writer(&home, &huge);
    assert!(written && ok);
    assert!(log(&home).contains("more than the"), "{}", log(&home));
}

#[test]
fn closed_lid_permission_requests_follow_the_policy_for_each_provider() {
    let home = Home::new();
    let (proc_root, sys_root) = crate::util::fake_roots(&home, "closed");
    let env = [
        ("LIDGUARD_PROC_ROOT", proc_root.as_path()),
        ("LIDGUARD_SYS_ROOT", sys_root.as_path()),
    ];
    let (ok, _, _) = hook(&home, &["claude-hook"], CLAUDE_PROMPT.as_bytes(), &env);
    assert!(ok);
    assert_eq!(home.status()["lid"], "Closed");
    assert_eq!(home.status()["externalDisplays"], 0);

    let claude = br#"{"session_id":"s1","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"touch x"}}"#;
    let codex = br#"{"session_id":"c1","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"touch x"}}"#;
    let copilot = br#"{"sessionId":"p1","toolName":"bash","toolInput":{"command":"touch x"}}"#;

    // Deny (the default).
    let (_, out, _) = hook(&home, &["claude-hook"], claude, &env);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["hookSpecificOutput"]["hookEventName"],
        "PermissionRequest"
    );
    assert_eq!(v["hookSpecificOutput"]["decision"]["behavior"], "deny");
    assert!(
        crate::util::text(&v["hookSpecificOutput"]["decision"]["message"])
            .contains("lid is closed")
    );
    let (_, out, _) = hook(&home, &["codex-hook"], codex, &env);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["hookSpecificOutput"]["decision"]["behavior"], "deny");
    let (_, out, _) = hook(
        &home,
        &["copilot-hook", "--event", "permissionRequest"],
        copilot,
        &env,
    );
    // Copilot asks before its own rules, for every tool: denying would stop work its rules
    // allow, so only an `allow` policy is applied there.
    assert_eq!(out, "");
    // The log names a closed-lid decision only where the agent got it: Claude's and Codex's,
    // not Copilot's, which printed nothing.
    let stream = home.ok(&["events", "--json", "--since", "all"]);
    let decided: Vec<&str> = stream
        .lines()
        .filter(|l| l.contains("\"closed-lid-decision\""))
        .collect();
    assert_eq!(decided.len(), 2, "{decided:#?}");
    assert!(
        decided
            .iter()
            .all(|l| l.contains("Deny") && !l.contains("p1")),
        "{decided:#?}"
    );
    let events: serde_json::Value =
        serde_json::from_str(&home.ok(&["hook-events", "--json"])).unwrap();
    let last = events
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|e| e["decision"].is_object())
        .unwrap();
    assert_eq!(
        last["decision"]["provenance"]["setting"],
        "closedLidPermissionRequestDecision"
    );
    assert_eq!(last["decision"]["provenance"]["lid"], "Closed");
    assert_eq!(last["decision"]["provenance"]["externalDisplays"], 0);

    // Allow.
    home.ok(&[
        "settings",
        "--closed-lid-permission-request-decision",
        "allow",
    ]);
    let (_, out, _) = hook(&home, &["claude-hook"], claude, &env);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["hookSpecificOutput"]["decision"]["behavior"], "allow");
    let (_, out, _) = hook(
        &home,
        &["copilot-hook", "--event", "permissionRequest"],
        copilot,
        &env,
    );
    assert_eq!(out, "{\"behavior\":\"allow\"}\n");
    let (_, out, _) = hook(
        &home,
        &["copilot-hook", "--event", "permissionRequest"],
        copilot,
        &env,
    );
    assert_eq!(out, r#"{"behavior":"allow"}"#.to_owned() + "\n");

    // Ask: nothing printed, the session waits for the user.
    home.ok(&[
        "settings",
        "--closed-lid-permission-request-decision",
        "ask",
    ]);
    let (_, out, _) = hook(&home, &["claude-hook"], claude, &env);
    assert_eq!(out, "");
    let s = home.session("s1").unwrap();
    assert_eq!(s["state"], "softLocked");
    assert_eq!(s["softLockReason"], "closed_lid_permission_request_ask");

    // Copilot ask_user is refused with the lid closed, whatever the permission policy.
    let ask_user = br#"{"sessionId":"p1","toolName":"ask_user","toolArgs":{"question":"which?"}}"#;
    let (_, out, _) = hook(
        &home,
        &["copilot-hook", "--event", "preToolUse"],
        ask_user,
        &env,
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["permissionDecision"], "deny");
    // So is Codex's request_user_input (its PreToolUse answer).
    let question = br#"{"session_id":"c9","hook_event_name":"PreToolUse","tool_name":"request_user_input","tool_input":{}}"#;
    let (_, out, _) = hook(&home, &["codex-hook"], question, &env);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(
        crate::util::text(&v["hookSpecificOutput"]["permissionDecisionReason"])
            .contains("lid is closed")
    );
    // Claude elicitations are cancelled.
    let elicit = br#"{"session_id":"s1","hook_event_name":"Elicitation","mcp_server_name":"x"}"#;
    let (_, out, _) = hook(&home, &["claude-hook"], elicit, &env);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["hookSpecificOutput"]["action"], "cancel");
}

#[test]
fn a_codex_question_stays_waiting_through_its_own_pre_tool_use() {
    use lidguard_ipc::protocol::{Request, SessionRef};
    let home = Home::new();
    let prompt =
        br#"{"session_id":"c1","hook_event_name":"UserPromptSubmit","cwd":"/tmp","prompt":"go"}"#;
    hook(&home, &["codex-hook"], prompt, &[]);
    let ask = br#"{"session_id":"c1","hook_event_name":"PreToolUse","tool_name":"request_user_input","tool_input":{"questions":[]}}"#;
    let answer = br#"{"session_id":"c1","hook_event_name":"PostToolUse","tool_name":"request_user_input","tool_response":"red"}"#;
    let other = br#"{"session_id":"c1","hook_event_name":"PreToolUse","tool_name":"exec_command","tool_input":{"cmd":"ls"}}"#;
    // The transcript monitor marks the session waiting when request_user_input appears; the
    // question's own PreToolUse (a moment later) is not work, its PostToolUse (the answer)
    // and any other tool are.
    for (payload, still_waiting) in [(&ask[..], true), (&answer[..], false), (&other[..], false)] {
        let reply = home.request(&Request::SoftLock {
            session: SessionRef {
                provider: lidguard_core::provider::Provider::Codex,
                session_id: "c1".into(),
                provider_name: None,
            },
            reason: "codex_transcript_request_user_input_pending".into(),
        });
        assert!(reply.ok, "{}", reply.message);
        hook(&home, &["codex-hook"], payload, &[]);
        let state = &home.session("c1").unwrap()["state"];
        assert_eq!(
            state == "softLocked",
            still_waiting,
            "{}: {state}",
            String::from_utf8_lossy(payload)
        );
    }
}

#[test]
fn with_the_lid_open_or_a_display_attached_hooks_stay_silent() {
    let home = Home::new();
    let (proc_root, sys_root) = crate::util::fake_roots(&home, "open");
    let env = [
        ("LIDGUARD_PROC_ROOT", proc_root.as_path()),
        ("LIDGUARD_SYS_ROOT", sys_root.as_path()),
    ];
    hook(&home, &["claude-hook"], CLAUDE_PROMPT.as_bytes(), &env);
    let claude = br#"{"session_id":"s1","hook_event_name":"PermissionRequest","tool_name":"Bash"}"#;
    let (_, out, _) = hook(&home, &["claude-hook"], claude, &env);
    assert_eq!(out, "");
    // Lid closed but an external monitor connected: still silent.
    std::fs::write(
        proc_root.join("acpi/button/lid/LID0/state"),
        "state:      closed\n",
    )
    .unwrap();
    std::fs::create_dir_all(sys_root.join("class/drm/card0-HDMI-A-1")).unwrap();
    std::fs::write(
        sys_root.join("class/drm/card0-HDMI-A-1/status"),
        "connected\n",
    )
    .unwrap();
    let (_, out, _) = hook(&home, &["claude-hook"], claude, &env);
    assert_eq!(out, "");
    assert_eq!(home.status()["externalDisplays"], 1);
}

#[test]
fn concurrent_hook_streams_lose_no_event() {
    let home = Home::new();
    hook(&home, &["claude-hook"], CLAUDE_PROMPT.as_bytes(), &[]);
    let payload = br#"{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_response":{"stdout":"ok"}}"#;
    std::thread::scope(|scope| {
        for _ in 0..8 {
            scope.spawn(|| {
                for _ in 0..25 {
                    let (ok, out, _) = hook(&home, &["claude-hook"], payload, &[]);
                    assert!(ok && out.is_empty());
                }
            });
        }
    });
    let receipts: serde_json::Value =
        serde_json::from_str(&home.ok(&["hook-events", "--receipts", "--json"])).unwrap();
    let post = crate::util::row_where(&receipts, "event", "PostToolUse");
    assert_eq!(post["count"], 200);
    assert!(!log(&home).contains("lidguard::hook"), "{}", log(&home));
}

/// Hooks of events that await no answer exit without waiting for the daemon's work, yet the
/// daemon applies every event in the order the agent sent them: each tool's start before its
/// end, all before the Stop that ends the turn (which awaits its answer).
#[test]
fn events_handed_over_without_an_answer_are_applied_in_the_order_they_came() {
    let home = Home::new();
    hook(&home, &["claude-hook"], CLAUDE_PROMPT.as_bytes(), &[]);
    for i in 0..30 {
        for event in ["PreToolUse", "PostToolUse"] {
            let payload = format!(
                r#"{{"session_id":"s1","hook_event_name":"{event}","tool_name":"Bash","tool_use_id":"t{i}","tool_input":{{"command":"true"}}}}"#
            );
            let (ok, out, _) = hook(&home, &["claude-hook"], payload.as_bytes(), &[]);
            assert!(ok && out.is_empty());
        }
    }
    let stop = br#"{"session_id":"s1","hook_event_name":"Stop","stop_hook_active":false}"#;
    assert!(hook(&home, &["claude-hook"], stop, &[]).0);
    let kinds: Vec<String> = home
        .ok(&["events", "--json", "--since", "all", "--provider", "claude"])
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["observation"]["source"] == "hook")
        .filter_map(|v| v["observation"]["kind"].as_str().map(str::to_owned))
        .collect();
    let mut expected = vec!["prompt-submitted".to_owned()];
    for _ in 0..30 {
        expected.extend(["tool-starting".to_owned(), "tool-finished".to_owned()]);
    }
    expected.push("turn-stopped".to_owned());
    assert_eq!(kinds, expected);
    assert!(!log(&home).contains("lidguard::hook"), "{}", log(&home));
}

/// Runs Claude's prompt hook from a process named `name` (a copy of sh, as an agent runs a
/// hook through `sh -c`), which lives until its stdin closes; returns it and its pid.
fn prompt_from_process(home: &Home, name: &str) -> (std::process::Child, u64) {
    let agent = home.path().join(name);
    crate::util::write_executable(&agent, &std::fs::read("/bin/sh").unwrap());
    let payload = home.path().join("prompt.json");
    std::fs::write(&payload, CLAUDE_PROMPT).unwrap();
    let script = format!("{} claude-hook < {}", crate::util::BIN, payload.display());
    let mut cmd = std::process::Command::new(&agent);
    // The "agent" prints its pid after the hook ran, then lives until its stdin closes.
    cmd.args(["-c", &format!("{script}; echo $$; read _ || true")])
        .env("LIDGUARD_HOME", home.path())
        .env("DBUS_SYSTEM_BUS_ADDRESS", &home.bus)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    (child, line.trim().parse().unwrap())
}

#[test]
fn a_prompt_hook_watches_the_agent_process_found_in_its_ancestry() {
    let home = Home::new();
    let (mut child, agent_pid) = prompt_from_process(&home, "claude");
    let s = home.session("s1").unwrap();
    assert_eq!(s["watchedPid"], agent_pid, "{s}");
    assert!(s.get("runBy").is_none(), "{s}");
    // The agent exits: the daemon's watchdog ends the session (cancel path).
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    assert!(crate::util::eventually(
        std::time::Duration::from_secs(10),
        || home.session("s1").is_none()
    ));
}

/// On a Mac the ancestry comes from `proc_pidinfo` (the name) and `KERN_PROCARGS2` (the
/// arguments): the same rule as on Linux finds Claude Code under Homebrew's Node, and Codex's
/// own executable, in what that buffer holds (laid out as XNU's `sysctl_procargsx` fills it).
#[test]
fn the_agents_rule_finds_the_agent_in_a_macs_process_arguments() {
    use lidguard_core::provider::Provider;
    use lidguard_platform::process::procargs;
    let buffer = |argv: &[&str], path: &str| {
        let mut bytes = i32::try_from(argv.len()).unwrap().to_ne_bytes().to_vec();
        bytes.extend_from_slice(path.as_bytes());
        bytes.extend([0, 0, 0, 0]);
        for arg in argv {
            bytes.extend_from_slice(arg.as_bytes());
            bytes.push(0);
        }
        bytes.extend_from_slice(b"HOME=/Users/alice\0");
        bytes
    };
    let shell = procargs::parse(&buffer(&["-zsh"], "/bin/zsh")).unwrap();
    let claude = procargs::parse(&buffer(
        &["node", "/opt/homebrew/bin/claude", "-p", "fix the tests"],
        "/opt/homebrew/Cellar/node/22.11.0/bin/node",
    ))
    .unwrap();
    let codex = procargs::parse(&buffer(&["codex"], "/usr/local/bin/codex")).unwrap();
    // The hook's parent chain: a shell the agent started, the agent, the user's shell.
    let chain = [
        (501, "zsh", shell.argv.join(" ")),
        (500, "node", claude.argv.join(" ")),
        (400, "zsh", shell.argv.join(" ")),
    ];
    let found = lidguard_providers::owner::find_runner(
        Provider::Claude,
        chain
            .iter()
            .map(|(pid, name, cmd)| (*pid, *name, cmd.as_str())),
    );
    assert_eq!(found.map(|r| r.pid), Some(500));
    let found = lidguard_providers::owner::find_runner(
        Provider::Codex,
        [(700, "codex", codex.argv.join(" "))]
            .iter()
            .map(|(pid, name, cmd)| (*pid, *name, cmd.as_str())),
    );
    assert_eq!(found.map(|r| r.pid), Some(700));
}

#[test]
fn a_claude_hook_run_by_devin_is_devins_session() {
    let home = Home::new();
    let (mut child, devin_pid) = prompt_from_process(&home, "devin");
    let s = home.session("s1").unwrap();
    assert_eq!(s["watchedPid"], devin_pid, "{s}");
    assert_eq!(s["runBy"], "devin", "{s}");
    let status = home.ok(&["status"]);
    assert!(
        status.contains("devin:s1 (through Claude Code's hooks)"),
        "{status}"
    );
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    assert!(crate::util::eventually(
        std::time::Duration::from_secs(10),
        || home.session("s1").is_none()
    ));
}
