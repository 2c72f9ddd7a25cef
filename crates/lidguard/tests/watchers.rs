//! The daemon watching the agents themselves: a watched process that exits ends its session
//! through the cancel path; transcripts appended by a writer process are followed (each
//! provider's detector, truncation, rotation, a file that appears later), and a 1 GiB
//! transcript neither costs memory nor slows detection.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::util::{Agent, Home, eventually};

const WAIT: Duration = Duration::from_secs(10);

/// Appends `text` to `path` from another process, as an agent writing its transcript does.
fn writer_appends(path: &Path, text: &str) {
    let status = Command::new("sh")
        .arg("-c")
        .arg("printf '%s' \"$1\" >> \"$2\"")
        .arg("writer")
        .arg(text)
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

fn start(home: &Home, provider: &str, id: &str, transcript: &Path) {
    home.ok(&[
        "start",
        "--provider",
        provider,
        "--session",
        id,
        "--transcript",
        transcript.to_str().unwrap(),
    ]);
}

/// Fails unless session `id` ends within [`WAIT`].
#[track_caller]
fn ends(home: &Home, id: &str, why: &str) {
    assert!(
        eventually(WAIT, || home.session(id).is_none()),
        "{id}: {why}"
    );
}

fn state(home: &Home, id: &str) -> Option<(String, Option<String>)> {
    home.session(id).map(|s| {
        (
            s["state"].as_str().unwrap().to_owned(),
            s["softLockReason"].as_str().map(str::to_owned),
        )
    })
}

#[test]
fn a_watched_process_that_exits_ends_its_session_through_the_cancel_path() {
    let home = Home::new();
    let mut agent = Agent::spawn();
    let pid = agent.pid().to_string();
    home.start_watched("w1", &pid);
    home.ok(&["start", "--provider", "codex", "--session", "other"]);
    assert!(home.session("w1").is_some());
    agent.kill();
    ends(&home, "w1", "the session ends when its process exits");
    assert!(
        home.session("other").is_some(),
        "other sessions are untouched"
    );
    // A second stop afterwards is harmless: answered, nothing else happens.
    let out = home.ok(&["stop", "--provider", "claude", "--session", "w1"]);
    assert!(out.contains("already stopped"), "{out}");
    assert!(home.session("other").is_some());
}

#[test]
fn a_later_start_without_a_pid_keeps_the_watched_process() {
    let home = Home::new();
    let mut agent = Agent::spawn();
    let pid = agent.pid().to_string();
    home.start_watched("k", &pid);
    home.ok(&["start", "--provider", "claude", "--session", "k"]);
    assert_eq!(home.session("k").unwrap()["watchedPid"], agent.pid());
    agent.kill();
    ends(&home, "k", "");
}

#[test]
fn codex_transcript_interrupts_and_pending_questions() {
    let home = Home::new();
    let t = home.path().join("rollout-2026-11-30T00-00-00-c1.jsonl");
    writer_appends(
        &t,
        "{\"type\":\"session_meta\",\"payload\":{\"id\":\"c1\"}}\n",
    );
    start(&home, "codex", "c1", &t);
    assert!(
        crate::util::text(&home.session("c1").unwrap()["transcriptMonitor"])
            .starts_with("following ")
    );

    writer_appends(
        &t,
        "{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call\",\"name\":\"request_user_input\",\"call_id\":\"q1\",\"arguments\":\"{}\"}}\n",
    );
    assert!(eventually(WAIT, || state(&home, "c1")
        == Some((
            "softLocked".into(),
            Some("codex_transcript_request_user_input_pending".into())
        ))));
    writer_appends(
        &t,
        "{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call_output\",\"call_id\":\"q1\",\"output\":\"yes\"}}\n",
    );
    assert!(eventually(WAIT, || state(&home, "c1")
        .is_some_and(|(s, _)| s == "active")));

    writer_appends(
        &t,
        "{\"type\":\"event_msg\",\"payload\":{\"type\":\"turn_aborted\",\"reason\":\"interrupted\"}}\n",
    );
    ends(&home, "c1", "an aborted turn ends it");
}

#[test]
fn claude_and_copilot_interrupts_and_plain_growth() {
    let home = Home::new();
    let claude = home.path().join("s1.jsonl");
    let copilot = home.path().join("events.jsonl");
    writer_appends(&claude, "");
    start(&home, "claude", "s1", &claude);
    start(&home, "copilot", "p1", &copilot); // appears later

    let soft_lock = |reason: &str| {
        home.request(&lidguard_ipc::protocol::Request::SoftLock {
            session: lidguard_ipc::protocol::SessionRef {
                provider: lidguard_core::provider::Provider::Claude,
                session_id: "s1".into(),
                provider_name: None,
            },
            reason: reason.into(),
        });
    };
    let assistant = "{\"type\":\"assistant\",\"message\":{\"content\":[]}}\n";
    // Growth does not answer a permission prompt: the agent writes its pending tool call.
    soft_lock("permission_prompt");
    writer_appends(&claude, assistant);
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(state(&home, "s1").unwrap().0, "softLocked");
    // It does end a soft-lock of the inactivity timeout.
    soft_lock("session-timeout-expired:12 minutes");
    writer_appends(&claude, assistant);
    assert!(eventually(WAIT, || state(&home, "s1").unwrap().0 == "active"));

    writer_appends(
        &claude,
        "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"[Request interrupted by user for tool use]\"}]}}\n",
    );
    ends(&home, "s1", "");

    writer_appends(&copilot, "{\"type\":\"user.message\",\"data\":{}}\n");
    writer_appends(
        &copilot,
        "{\"type\":\"abort\",\"data\":{\"reason\":\"user\"}}\n",
    );
    ends(
        &home,
        "p1",
        "a transcript that appears after the session started is followed",
    );
}

#[test]
fn truncation_and_rotation_are_followed() {
    let home = Home::new();
    let t = home.path().join("t.jsonl");
    writer_appends(&t, "{\"type\":\"assistant\"}\n{\"type\":\"assistant\"}\n");
    start(&home, "copilot", "r1", &t);
    // Truncated, then an abort: read from the start again.
    std::fs::write(&t, "").unwrap();
    writer_appends(&t, "{\"type\":\"abort\"}\n");
    ends(&home, "r1", "after truncation");

    start(&home, "copilot", "r2", &t);
    let fresh = home.path().join("t.jsonl.new");
    std::fs::write(
        &fresh,
        "{\"type\":\"a\"}\n{\"type\":\"b\"}\n{\"type\":\"c\"}\n{\"type\":\"abort\"}\n",
    )
    .unwrap();
    std::fs::rename(&fresh, &t).unwrap();
    ends(&home, "r2", "after rotation");
}

#[test]
fn a_1_gib_transcript_keeps_memory_flat_and_detection_fast() {
    let home = Home::new();
    let t = home.path().join("rollout-big.jsonl");
    // 1 GiB of existing transcript (sparse: no disk used), ending in a complete line.
    let f = std::fs::File::create(&t).unwrap();
    f.set_len(1 << 30).unwrap();
    drop(f);
    writer_appends(
        &t,
        "\n{\"type\":\"event_msg\",\"payload\":{\"type\":\"task_started\"}}\n",
    );
    start(&home, "codex", "big", &t);
    let daemon = home.daemon_pid().unwrap();
    let before = crate::util::rss_kib(daemon);

    let mut latencies = Vec::new();
    for i in 0..20 {
        let (line, want) = if i % 2 == 0 {
            (
                format!(
                    "{{\"type\":\"response_item\",\"payload\":{{\"type\":\"function_call\",\"name\":\"request_user_input\",\"call_id\":\"q{i}\"}}}}\n"
                ),
                "softLocked",
            )
        } else {
            (
                format!(
                    "{{\"type\":\"response_item\",\"payload\":{{\"type\":\"function_call_output\",\"call_id\":\"q{}\"}}}}\n",
                    i - 1
                ),
                "active",
            )
        };
        let at = Instant::now();
        writer_appends(&t, &line);
        let seen = eventually(Duration::from_secs(5), || {
            state(&home, "big").is_some_and(|(s, _)| s == want)
        });
        assert!(seen, "record {i} not detected");
        latencies.push(at.elapsed());
    }
    latencies.sort();
    let median = latencies[latencies.len() / 2];
    let after = crate::util::rss_kib(daemon);
    eprintln!(
        "1 GiB transcript: detection median {median:?} (min {:?}, max {:?}) over {} appends; daemon RSS {before} KiB -> {after} KiB",
        latencies[0],
        latencies[latencies.len() - 1],
        latencies.len()
    );
    assert!(median < Duration::from_millis(250), "median {median:?}");
    assert!(
        after < before + 16 * 1024,
        "RSS grew from {before} KiB to {after} KiB"
    );
}

#[test]
fn a_copilot_shell_finished_in_the_transcript_releases_the_deferred_stop() {
    use crate::util::{hook_args, pipe};
    let home = Home::new();
    let state = home.path().join("session-state/cp1");
    std::fs::create_dir_all(&state).unwrap();
    let events = state.join("events.jsonl");
    writer_appends(&events, "{\"type\":\"session.start\",\"data\":{}}\n");
    let hook = |event: &str, payload: &str| {
        let args = hook_args("copilot", event);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert!(pipe(home.cmd(&args), payload.as_bytes()).status.success());
    };
    let t = events.to_str().unwrap();
    hook(
        "userPromptSubmitted",
        &format!(r#"{{"sessionId":"cp1","cwd":"/p","prompt":"go","transcriptPath":"{t}"}}"#),
    );
    // A background shell starts; the turn ends while it runs: the stop waits for it.
    hook(
        "postToolUse",
        r#"{"sessionId":"cp1","toolName":"bash","toolArgs":{"command":"sleep 5","mode":"async"},"toolResult":{"resultType":"success","textResultForLlm":"<command started in background with shellId: 0>"}}"#,
    );
    hook(
        "agentStop",
        r#"{"sessionId":"cp1","stopReason":"end_turn"}"#,
    );
    let s = home.session("cp1").expect("deferred, not stopped");
    assert_eq!(s["pendingProviderWork"], true, "{s}");
    // Copilot records the shell as done in its session state; no hook says so.
    writer_appends(
        &events,
        "{\"type\":\"system.notification\",\"data\":{\"kind\":{\"type\":\"shell_completed\",\"shellId\":\"0\",\"exitCode\":0}}}\n",
    );
    std::thread::sleep(Duration::from_millis(500));
    // The next stop is final: nothing is left running.
    hook(
        "agentStop",
        r#"{"sessionId":"cp1","stopReason":"end_turn"}"#,
    );
    assert!(home.session("cp1").is_none(), "{:?}", home.session("cp1"));
}

/// How many times the daemon opened `id`'s transcript to read it.
fn reads(home: &Home, id: &str) -> u64 {
    home.session(id).unwrap()["transcriptReads"]
        .as_u64()
        .unwrap_or_else(|| panic!("{id}: no transcriptReads in {:?}", home.session(id)))
}

#[test]
fn a_transcript_nothing_was_appended_to_is_never_read_again() {
    let home = Home::new();
    // Two sessions in one folder, as Claude Code keeps a project's and Codex a day's sessions.
    let dir = home.path().join("projects/-tmp-proj");
    std::fs::create_dir_all(&dir).unwrap();
    let a = dir.join("a.jsonl");
    let b = dir.join("b.jsonl");
    writer_appends(&a, "{\"type\":\"user\"}\n");
    writer_appends(&b, "{\"type\":\"user\"}\n");
    start(&home, "claude", "a", &a);
    start(&home, "claude", "b", &b);
    std::thread::sleep(Duration::from_millis(300));
    let (a0, b0) = (reads(&home, "a"), reads(&home, "b"));
    // Idle: the daemon's own reads (opens, accesses, closes) must not look like writes.
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        (reads(&home, "a"), reads(&home, "b")),
        (a0, b0),
        "idle transcripts were read"
    );
    // A write to one is read once; the other stays untouched.
    writer_appends(
        &a,
        "{\"type\":\"assistant\",\"message\":{\"content\":[]}}\n",
    );
    assert!(eventually(WAIT, || reads(&home, "a") > a0));
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        reads(&home, "a") <= a0 + 2,
        "{} reads",
        reads(&home, "a") - a0
    );
    assert_eq!(reads(&home, "b"), b0);
}

const CLAUDE_INTERRUPT: &str = "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"[Request interrupted by user]\"}]}}\n";
const CODEX_ABORT: &str =
    "{\"type\":\"event_msg\",\"payload\":{\"type\":\"turn_aborted\",\"reason\":\"interrupted\"}}\n";

/// Time from the write to the session's end, which the interrupt in the transcript causes.
fn detection(home: &Home, id: &str, write: impl FnOnce()) -> Duration {
    let started = Instant::now();
    write();
    assert!(
        eventually(WAIT, || home.session(id).is_none()),
        "{id}: the interrupt was not seen"
    );
    started.elapsed()
}

#[test]
fn transcripts_are_seen_however_the_agents_write_them() {
    let home = Home::new();
    let within = Duration::from_millis(1500); // well under the old 5 s fallback poll

    // Claude Code: the project's folder is created with the session's first record.
    let claude = home
        .path()
        .join("claude/projects/-tmp-new-project/c1.jsonl");
    start(&home, "claude", "c1", &claude);
    std::thread::sleep(Duration::from_millis(200));
    let took = detection(&home, "c1", || {
        std::fs::create_dir_all(claude.parent().unwrap()).unwrap();
        writer_appends(&claude, "{\"type\":\"user\"}\n");
        writer_appends(&claude, CLAUDE_INTERRUPT);
    });
    assert!(
        took < within,
        "a folder created after the watch began: {took:?}"
    );

    // Codex: a day's folder (several levels) appears; the file stays open and is appended to.
    let codex = home
        .path()
        .join("codex/sessions/2026/12/03/rollout-2026-12-03T00-00-00-x1.jsonl");
    start(&home, "codex", "x1", &codex);
    std::thread::sleep(Duration::from_millis(200));
    let took = detection(&home, "x1", || {
        use std::io::Write;
        std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
        let mut file = std::fs::File::create(&codex).unwrap();
        file.write_all(b"{\"type\":\"session_meta\"}\n").unwrap();
        std::thread::sleep(Duration::from_millis(100));
        file.write_all(CODEX_ABORT.as_bytes()).unwrap();
        file.flush().unwrap();
    });
    assert!(took < within, "nested folders and an open file: {took:?}");

    // A transcript replaced by a rename (write elsewhere, then move into place).
    let renamed = home.path().join("copilot/session-state/p1/events.jsonl");
    std::fs::create_dir_all(renamed.parent().unwrap()).unwrap();
    writer_appends(&renamed, "{\"type\":\"user.message\",\"data\":{}}\n");
    start(&home, "copilot", "p1", &renamed);
    std::thread::sleep(Duration::from_millis(200));
    let took = detection(&home, "p1", || {
        let tmp = renamed.with_extension("tmp");
        std::fs::write(
            &tmp,
            "{\"type\":\"user.message\",\"data\":{}}\n{\"type\":\"abort\",\"data\":{\"reason\":\"user\"}}\n",
        )
        .unwrap();
        std::fs::rename(&tmp, &renamed).unwrap();
    });
    assert!(took < within, "a rename into place: {took:?}");
}
