//! Hook round trip benchmark: what an agent pays per hook event.
//!
//! Measures, against a running daemon, the wall time from spawning `lidguard claude-hook` with
//! a captured `PostToolUse` payload on stdin to its exit — interleaved, in the same run, with
//! spawning `/bin/true` with the same stdin as the baseline (the floor: process creation).
//! Then runs 8 concurrent hook streams for a while and checks that every event was counted.
//!
//! Run: `cargo bench -p lidguard --bench hook_roundtrip` (options after `--`:
//! `--runs N`, default 1000; `--seconds S` for the concurrent part, default 10).
#![allow(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_lidguard");

const PROMPT: &str = r#"{"session_id":"bench-session","transcript_path":null,"cwd":"/tmp","hook_event_name":"UserPromptSubmit","prompt":"benchmark"}"#;

/// The shape of a real Claude Code PostToolUse payload (see tests/fixtures/claude/).
const POST_TOOL_USE: &str = r#"{"session_id":"bench-session","transcript_path":null,"cwd":"/tmp","permission_mode":"default","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"cargo test --workspace","description":"Run the tests"},"tool_response":{"stdout":"test result: ok. 25 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.40s","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false},"tool_use_id":"toolu_01bench","duration_ms":1400}"#;

fn main() {
    let mut runs = 1000usize;
    let mut seconds = 10u64;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).unwrap_or(runs),
            "--seconds" => seconds = args.next().and_then(|v| v.parse().ok()).unwrap_or(seconds),
            _ => {} // cargo passes `--bench`
        }
    }

    let home = tempfile::tempdir().unwrap();
    let payload = home.path().join("post-tool-use.json");
    std::fs::write(&payload, POST_TOOL_USE).unwrap();
    let prompt = home.path().join("prompt.json");
    std::fs::write(&prompt, PROMPT).unwrap();
    let hook = |stdin: &Path| {
        let mut cmd = Command::new(BIN);
        cmd.arg("claude-hook")
            .env("LIDGUARD_HOME", home.path())
            .env("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent")
            .stdin(File::open(stdin).unwrap())
            .stdout(Stdio::null());
        cmd
    };
    // The prompt starts the daemon and the session.
    assert!(hook(&prompt).status().unwrap().success());

    let time = |mut cmd: Command| {
        let start = Instant::now();
        let status = cmd.status().unwrap();
        let elapsed = start.elapsed();
        assert!(status.success());
        elapsed
    };
    let baseline = || {
        let mut cmd = Command::new("/bin/true");
        cmd.stdin(File::open(&payload).unwrap())
            .stdout(Stdio::null());
        cmd
    };
    for _ in 0..50 {
        time(hook(&payload));
        time(baseline());
    }
    let mut hook_times = Vec::with_capacity(runs);
    let mut true_times = Vec::with_capacity(runs);
    for _ in 0..runs {
        hook_times.push(time(hook(&payload)));
        true_times.push(time(baseline()));
    }
    let h = Stats::of(&mut hook_times);
    let t = Stats::of(&mut true_times);
    println!("hook round trip, {runs} runs interleaved with the baseline:");
    println!("  lidguard claude-hook (PostToolUse): {h}");
    println!("  /bin/true, same stdin:             {t}");
    println!(
        "  median ratio {:.2}x, median overhead {:.2} ms",
        h.median.as_secs_f64() / t.median.as_secs_f64(),
        (h.median.as_secs_f64() - t.median.as_secs_f64()) * 1e3
    );

    // Concurrent streams: every event must be received.
    let before = receipts(home.path());
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let sent: usize = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..8)
            .map(|_| {
                scope.spawn(|| {
                    let mut n = 0;
                    while Instant::now() < deadline {
                        time(hook(&payload));
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    });
    let received = receipts(home.path()) - before;
    println!(
        "8 concurrent streams for {seconds} s: {sent} events sent, {received} counted ({})",
        if sent as u64 == received {
            "none lost"
        } else {
            "EVENTS LOST"
        }
    );

    if let Ok(text) = std::fs::read_to_string(home.path().join("run/lidguard.lock"))
        && let Ok(pid) = text.trim().parse::<i32>()
    {
        let _ = Command::new("kill").arg(pid.to_string()).status();
    }
    assert_eq!(sent as u64, received, "every hook event must be counted");
}

/// PostToolUse receipts counted so far.
fn receipts(home: &Path) -> u64 {
    let out = Command::new(BIN)
        .args([
            "hook-events",
            "--receipts",
            "--json",
            "--provider",
            "claude",
        ])
        .env("LIDGUARD_HOME", home)
        .output()
        .unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    rows.as_array()
        .unwrap()
        .iter()
        .filter(|r| r["event"] == "PostToolUse")
        .map(|r| r["count"].as_u64().unwrap())
        .sum()
}

struct Stats {
    median: Duration,
    p90: Duration,
    p99: Duration,
}

impl Stats {
    fn of(samples: &mut [Duration]) -> Stats {
        samples.sort();
        let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
        Stats {
            median: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
        }
    }
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        write!(
            f,
            "median {:.2} ms, p90 {:.2} ms, p99 {:.2} ms",
            ms(self.median),
            ms(self.p90),
            ms(self.p99)
        )
    }
}
