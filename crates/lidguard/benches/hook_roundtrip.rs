//! Hook round trip benchmark: what an agent pays per hook event.
//!
//! Measures, against a running daemon, the wall time from spawning the hook with a captured
//! `PostToolUse` payload on stdin to its exit — an event that awaits no answer, so the hook
//! hands it to the daemon and exits without waiting for its work — each way an agent runs
//! lidguard's entry: `lidguard-hook claude-hook` spawned directly (Claude's exec form, OpenCode's
//! and Kilo's plugin; on Linux with glibc a static executable, see build.rs), the same through
//! `sh -c` and `bash -c` (shell-form entries: Gemini CLI and Qwen Code run `bash -c`), the static
//! musl build when `LIDGUARD_BENCH_STATIC_HOOK` names it, and the full `lidguard claude-hook` —
//! all interleaved in rounds with spawning `/bin/true` with the same stdin as the baseline (the
//! floor: process creation, with the dynamic loader `/bin/true` pays). Each way's figure is the
//! median of the rounds' ratios. Then the cold case: the first hook after the daemon exited,
//! which starts it (and, with a private `systemd-logind` when run as root, until logind shows
//! lidguard's inhibitors; polled through `busctl`, so that figure carries a few milliseconds of
//! polling). Then 8 concurrent hook streams for a while, checking that every event was counted
//! by the daemon and received by a follower of the event stream (`lidguard events --follow`).
//!
//! Run: `cargo bench -p lidguard --bench hook_roundtrip` (options after `--`: `--rounds R`,
//! default 9, of `--runs N` each, default 200; `--seconds S` for the concurrent part, default
//! 10; `--cold N`, default 20).
#![allow(clippy::print_stdout, reason = "a benchmark reports on stdout")]
#![allow(
    clippy::disallowed_methods,
    reason = "tests write fixtures and read the environment"
)]

use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_lidguard");
const HOOK_BIN: &str = env!("CARGO_BIN_EXE_lidguard-hook");

const PROMPT: &str = r#"{"session_id":"bench-session","transcript_path":null,"cwd":"/tmp","hook_event_name":"UserPromptSubmit","prompt":"benchmark"}"#;

/// The shape of a real Claude Code PostToolUse payload (see tests/fixtures/claude/).
const POST_TOOL_USE: &str = r#"{"session_id":"bench-session","transcript_path":null,"cwd":"/tmp","permission_mode":"default","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"cargo test --workspace","description":"Run the tests"},"tool_response":{"stdout":"test result: ok. 25 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.40s","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false},"tool_use_id":"toolu_01bench","duration_ms":1400}"#;

fn main() {
    let runs = args::flag("--runs", 200usize);
    let rounds = args::flag("--rounds", 9usize).max(1);
    let seconds = args::flag("--seconds", 10u64);
    let cold_runs = args::flag("--cold", 20usize);
    for (name, path) in [("lidguard", BIN), ("lidguard-hook", HOOK_BIN)] {
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or_default();
        println!("{name}: {:.1} MB ({path})", size as f64 / 1e6);
    }

    let home = tempfile::tempdir().unwrap();
    let payload = home.path().join("post-tool-use.json");
    std::fs::write(&payload, POST_TOOL_USE).unwrap();
    let prompt = home.path().join("prompt.json");
    std::fs::write(&prompt, PROMPT).unwrap();
    let run = |program: &str, args: &[&str], stdin: &Path| {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env("LIDGUARD_HOME", home.path())
            .env("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent")
            .stdin(File::open(stdin).unwrap())
            .stdout(Stdio::null());
        cmd
    };
    let run_with = |exe: &str, stdin: &Path| run(exe, &["claude-hook"], stdin);
    let hook = |stdin: &Path| run_with(HOOK_BIN, stdin);
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
    // Each way an agent runs lidguard's entry, interleaved with the baseline in one loop.
    let hook_line = format!("'{HOOK_BIN}' claude-hook");
    let through = |shell: &'static str| {
        let (run, line, payload) = (&run, &hook_line, &payload);
        move || run(shell, &["-c", line], payload)
    };
    let static_hook = std::env::var("LIDGUARD_BENCH_STATIC_HOOK").ok();
    let mut ways: Vec<(String, Box<dyn Fn() -> Command + '_>)> = vec![
        (
            "lidguard-hook, spawned directly (Claude's exec form; OpenCode's and Kilo's plugin)"
                .to_owned(),
            Box::new(|| hook(&payload)),
        ),
        (
            "lidguard-hook through `sh -c` (a shell-form entry)".to_owned(),
            Box::new(through("/bin/sh")),
        ),
        (
            "lidguard-hook through `bash -c` (Gemini CLI, Qwen Code)".to_owned(),
            Box::new(through("/bin/bash")),
        ),
        (
            "lidguard claude-hook (the full executable)".to_owned(),
            Box::new(|| run_with(BIN, &payload)),
        ),
    ];
    if let Some(path) = &static_hook {
        ways.insert(
            1,
            (
                "static lidguard-hook (musl), spawned directly".to_owned(),
                Box::new(|| run_with(path, &payload)),
            ),
        );
    }
    // Rounds of interleaved runs; each round's ratio is its medians' ratio, and the figure is
    // the median of the rounds' ratios (a round the machine slowed down moves it little).
    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(runs * rounds); ways.len()];
    let mut true_times = Vec::with_capacity(runs * rounds);
    let mut ratios: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); ways.len()];
    for _ in 0..rounds {
        let mut round: Vec<Vec<Duration>> = vec![Vec::with_capacity(runs); ways.len()];
        let mut round_true = Vec::with_capacity(runs);
        for _ in 0..runs {
            for ((_, way), samples) in ways.iter().zip(&mut round) {
                samples.push(time(way()));
            }
            round_true.push(time(baseline()));
        }
        let base = Stats::of(&mut round_true).median.as_secs_f64();
        for (i, samples) in round.iter_mut().enumerate() {
            ratios[i].push(Stats::of(samples).median.as_secs_f64() / base);
            times[i].extend_from_slice(samples);
        }
        true_times.extend(round_true);
    }
    let t = Stats::of(&mut true_times);
    println!(
        "hook round trip (PostToolUse), {rounds} rounds of {runs} runs each, interleaved with the \
         baseline; the ratio is the median of the rounds' ratios (lowest-highest):"
    );
    for (((label, _), samples), ratios) in ways.iter().zip(&mut times).zip(&mut ratios) {
        let s = Stats::of(samples);
        ratios.sort_by(f64::total_cmp);
        let (low, mid, high) = (
            ratios[0],
            ratios[ratios.len() / 2],
            ratios[ratios.len() - 1],
        );
        println!("  {label}: {s} ({mid:.2}x /bin/true, rounds {low:.2}-{high:.2})");
    }
    println!("  /bin/true, same stdin: {t}");

    cold(&home_for_cold(), cold_runs);

    // Concurrent streams: every event must be received, by the daemon and by a follower of
    // the event stream attached meanwhile.
    let mut follower = Command::new(BIN)
        .args(["events", "--follow", "--json", "--since", "now"])
        .env("LIDGUARD_HOME", home.path())
        .env("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let followed = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let reader = {
        let followed = std::sync::Arc::clone(&followed);
        let stdout = follower.stdout.take().unwrap();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                assert!(
                    !line.contains("\"events-lost\""),
                    "the follower lost events"
                );
                if line.contains("\"kind\":\"tool-finished\"") {
                    followed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }
        })
    };
    // The follower is attached once a hook event reaches it.
    while followed.load(std::sync::atomic::Ordering::Relaxed) == 0 {
        time(hook(&payload));
        std::thread::sleep(Duration::from_millis(20));
    }
    let followed_before = followed.load(std::sync::atomic::Ordering::Relaxed);
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

    let wait = Instant::now() + Duration::from_secs(30);
    let got = || followed.load(std::sync::atomic::Ordering::Relaxed) - followed_before;
    while got() < sent && Instant::now() < wait {
        std::thread::sleep(Duration::from_millis(20));
    }
    println!(
        "  the `events --follow` follower received {} of them ({})",
        got(),
        if got() == sent {
            "none lost"
        } else {
            "EVENTS LOST"
        }
    );
    let _ = follower.kill();
    let _ = follower.wait();
    let _ = reader.join();
    assert_eq!(got(), sent, "the follower must receive every event");

    if let Ok(text) = std::fs::read_to_string(home.path().join("run/lidguard.lock"))
        && let Ok(pid) = text.trim().parse::<i32>()
    {
        let _ = Command::new("kill").arg(pid.to_string()).status();
    }
    assert_eq!(sent as u64, received, "every hook event must be counted");
}

/// A fresh home for the cold case (the warm one keeps its daemon).
fn home_for_cold() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// The first hook after the daemon exited: the prompt hook starts the daemon and the session.
/// Timed from spawning the hook to its exit, and (with a private logind, as root) to logind
/// showing lidguard's inhibitors. Stops with a panic when they do not show within 5 s: a figure
/// that is really a timeout must not pass for a measurement.
fn cold(home: &tempfile::TempDir, runs: usize) {
    let logind = lidguard_testbus::PrivateLogind::start().ok();
    let bus = logind.as_ref().map_or_else(
        || "unix:path=/nonexistent".to_owned(),
        |l| l.address().to_owned(),
    );
    let prompt = home.path().join("prompt.json");
    std::fs::write(&prompt, PROMPT).unwrap();
    let mut to_exit = Vec::new();
    let mut to_inhibitor = Vec::new();
    for i in 0..runs {
        let session = format!("cold-{i}");
        std::fs::write(&prompt, PROMPT.replace("bench-session", &session)).unwrap();
        let start = Instant::now();
        let status = Command::new(HOOK_BIN)
            .arg("claude-hook")
            .env("LIDGUARD_HOME", home.path())
            .env("DBUS_SYSTEM_BUS_ADDRESS", &bus)
            .stdin(File::open(&prompt).unwrap())
            .stdout(Stdio::null())
            .status()
            .unwrap();
        to_exit.push(start.elapsed());
        assert!(status.success());
        if let Some(logind) = &logind {
            // The lid is open here, so sleep is held in delay mode (a suspend the user asks
            // for goes through) and the lid switch is blocked.
            let held = logind.wait_for(Duration::from_secs(5), |l| {
                l.delay_inhibited().contains("sleep")
                    && l.block_inhibited().contains("handle-lid-switch")
            });
            assert!(
                held,
                "logind did not show lidguard's inhibitors within 5 s (block {:?}, delay {:?})",
                logind.block_inhibited(),
                logind.delay_inhibited()
            );
            to_inhibitor.push(start.elapsed());
        }
        // Stop the daemon (and wait until it is gone) for the next cold start.
        let lock = home.path().join("run/lidguard.lock");
        if let Ok(text) = std::fs::read_to_string(&lock)
            && let Ok(pid) = text.trim().parse::<i32>()
        {
            let _ = Command::new("kill").arg(pid.to_string()).status();
            let gone = Instant::now() + Duration::from_secs(5);
            while Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < gone {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        if let Some(logind) = &logind {
            let released = logind.wait_for(Duration::from_secs(5), |l| {
                l.block_inhibited().is_empty() && l.delay_inhibited().is_empty()
            });
            assert!(
                released,
                "logind still shows inhibitors 5 s after the daemon was stopped"
            );
        }
    }
    println!("cold start, {runs} runs (hook -> daemon started -> answer):");
    println!("  hook exit:            {}", Stats::of(&mut to_exit));
    match logind {
        Some(_) => println!(
            "  inhibitor in logind:  {} (private systemd-logind)",
            Stats::of(&mut to_inhibitor)
        ),
        None => println!("  inhibitor in logind:  not measured (needs root for a private logind)"),
    }
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

#[path = "common/args.rs"]
mod args;
