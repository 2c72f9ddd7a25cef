//! Idle benchmark: what the daemon costs a laptop on battery while agents work but write
//! nothing, and how fast it then notices a write.
//!
//! 50 sessions, each with a watched process (`sleep`) and a transcript, first all transcripts in
//! one folder (as Claude Code keeps a project's sessions and Codex a day's), then one folder
//! each. For `--seconds` (default 60) with nothing appended it measures the daemon's CPU time
//! (all threads, from `/proc`), its resident memory, and its wake-ups (voluntary context
//! switches of all its threads: each return from a blocking wait is one). Then one record is
//! appended to one transcript, 20 times per way the agents write, and the time until the daemon
//! has read it is measured.
//!
//! Run: `cargo bench -p lidguard --bench idle` (options after `--`: `--seconds S`,
//! `--sessions N`).
#![allow(clippy::print_stdout, reason = "a benchmark reports on stdout")]
#![allow(
    clippy::disallowed_methods,
    reason = "tests write fixtures and read the environment"
)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_lidguard");

fn main() {
    let seconds = args::flag("--seconds", 60u64);
    let sessions = args::flag("--sessions", 50usize);
    for one_folder in [true, false] {
        let layout = if one_folder {
            "all transcripts in one folder"
        } else {
            "one folder per transcript"
        };
        println!("{sessions} sessions with watched processes, {layout}:");
        let run = Run::start(sessions, one_folder);
        let idle = run.idle(Duration::from_secs(seconds));
        println!(
            "  idle {seconds} s: daemon CPU {:.3} s, RSS {:.1} MiB, {} wake-ups ({:.2}/s), {} transcript reads",
            idle.cpu_seconds,
            idle.rss_kib as f64 / 1024.0,
            idle.wakeups,
            idle.wakeups as f64 / seconds as f64,
            idle.reads
        );
        if one_folder {
            for pattern in Pattern::ALL {
                let mut times = run.detections(pattern, 20);
                times.sort();
                println!(
                    "  a record written by {:<38} detected: median {:.1} ms, max {:.1} ms (20 appends)",
                    pattern.describe(),
                    ms(times[times.len() / 2]),
                    ms(*times.last().unwrap())
                );
            }
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// How the agents write their transcripts.
#[derive(Clone, Copy)]
enum Pattern {
    /// Open for appending, write, close (Claude Code's and Copilot's appends).
    Append,
    /// One file kept open and written to (Codex's rollout file).
    OpenFile,
    /// A new folder, then a new file in it (a project's or a day's first session).
    NewFolder,
    /// Written elsewhere, then renamed into place.
    Rename,
}

impl Pattern {
    const ALL: [Pattern; 4] = [
        Pattern::Append,
        Pattern::OpenFile,
        Pattern::NewFolder,
        Pattern::Rename,
    ];

    fn describe(self) -> &'static str {
        match self {
            Pattern::Append => "appending (open, write, close)",
            Pattern::OpenFile => "writing to a file kept open",
            Pattern::NewFolder => "a new folder and file",
            Pattern::Rename => "a rename into place",
        }
    }
}

struct Idle {
    cpu_seconds: f64,
    rss_kib: u64,
    wakeups: u64,
    reads: u64,
}

struct Run {
    home: tempfile::TempDir,
    agents: Vec<Child>,
    transcripts: Vec<PathBuf>,
    daemon: u32,
}

const RECORD: &str = "{\"type\":\"assistant\",\"message\":{\"content\":[]}}\n";

impl Run {
    fn start(sessions: usize, one_folder: bool) -> Run {
        let home = tempfile::tempdir().unwrap();
        let mut agents = Vec::new();
        let mut transcripts = Vec::new();
        for i in 0..sessions {
            let dir = if one_folder {
                home.path().join("projects/-tmp-project")
            } else {
                home.path().join(format!("projects/-tmp-project-{i}"))
            };
            std::fs::create_dir_all(&dir).unwrap();
            let transcript = dir.join(format!("session-{i}.jsonl"));
            std::fs::write(&transcript, "{\"type\":\"user\"}\n").unwrap();
            let agent = Command::new("sleep").arg("100000").spawn().unwrap();
            let out = lidguard(home.path())
                .args(["start", "--provider", "claude", "--session"])
                .arg(format!("s{i}"))
                .arg("--transcript")
                .arg(&transcript)
                .arg("--parent-pid")
                .arg(agent.id().to_string())
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
            agents.push(agent);
            transcripts.push(transcript);
        }
        let lock = std::fs::read_to_string(home.path().join("run/lidguard.lock")).unwrap();
        let daemon = lock.trim().parse().unwrap();
        // Let the start-up work (following each transcript) settle.
        std::thread::sleep(Duration::from_secs(2));
        Run {
            home,
            agents,
            transcripts,
            daemon,
        }
    }

    fn idle(&self, how_long: Duration) -> Idle {
        let (cpu0, wake0) = (self.cpu_ticks(), self.wakeups());
        let reads0 = self.reads();
        std::thread::sleep(how_long);
        let (cpu1, wake1) = (self.cpu_ticks(), self.wakeups());
        let reads1 = self.reads();
        Idle {
            cpu_seconds: (cpu1 - cpu0) as f64 / clock_ticks_per_second(),
            rss_kib: self.rss_kib(),
            wakeups: wake1 - wake0,
            reads: reads1 - reads0,
        }
    }

    /// `count` writes of `pattern` to the first session's transcript, each timed until the
    /// daemon has read it (its read counter moved).
    fn detections(&self, pattern: Pattern, count: usize) -> Vec<Duration> {
        let path = &self.transcripts[0];
        let mut open = std::fs::OpenOptions::new().append(true).open(path).unwrap();
        let mut times = Vec::new();
        for n in 0..count {
            let before = self.reads_of("s0");
            let started = Instant::now();
            match pattern {
                Pattern::Append => {
                    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
                    f.write_all(RECORD.as_bytes()).unwrap();
                }
                Pattern::OpenFile => open.write_all(RECORD.as_bytes()).unwrap(),
                Pattern::NewFolder => {
                    // The followed transcript moves into a folder that does not exist yet.
                    let fresh = self
                        .home
                        .path()
                        .join(format!("projects/-tmp-new-{n}/session-0.jsonl"));
                    self.follow("s0", &fresh);
                    let before = self.reads_of("s0");
                    let started = Instant::now();
                    std::fs::create_dir_all(fresh.parent().unwrap()).unwrap();
                    std::fs::write(&fresh, RECORD).unwrap();
                    self.wait_read("s0", before);
                    times.push(started.elapsed());
                    self.follow("s0", path);
                    continue;
                }
                Pattern::Rename => {
                    let tmp = path.with_extension("tmp");
                    let mut text = std::fs::read(path).unwrap();
                    text.extend_from_slice(RECORD.as_bytes());
                    std::fs::write(&tmp, text).unwrap();
                    std::fs::rename(&tmp, path).unwrap();
                    open = std::fs::OpenOptions::new().append(true).open(path).unwrap();
                }
            }
            self.wait_read("s0", before);
            times.push(started.elapsed());
        }
        times
    }

    /// Points session `id` at another transcript and waits until the daemon follows it.
    fn follow(&self, id: &str, transcript: &Path) {
        let out = lidguard(self.home.path())
            .args([
                "start",
                "--provider",
                "claude",
                "--session",
                id,
                "--transcript",
            ])
            .arg(transcript)
            .output()
            .unwrap();
        assert!(out.status.success());
        std::thread::sleep(Duration::from_millis(100));
    }

    fn wait_read(&self, id: &str, before: u64) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.reads_of(id) <= before {
            assert!(Instant::now() < deadline, "the write was never read");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn status(&self) -> serde_json::Value {
        let out = lidguard(self.home.path())
            .args(["status", "--json"])
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    }

    fn reads(&self) -> u64 {
        self.status()["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s["transcriptReads"].as_u64())
            .sum()
    }

    fn reads_of(&self, id: &str) -> u64 {
        self.status()["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["sessionId"] == id)
            .and_then(|s| s["transcriptReads"].as_u64())
            .unwrap_or(0)
    }

    /// User + system CPU of the daemon, in clock ticks.
    fn cpu_ticks(&self) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.daemon)).unwrap();
        // After the command name in parentheses: fields 14 and 15 (utime, stime) overall.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
    }

    /// Voluntary context switches of all the daemon's threads.
    fn wakeups(&self) -> u64 {
        std::fs::read_dir(format!("/proc/{}/task", self.daemon))
            .unwrap()
            .flatten()
            .filter_map(|t| std::fs::read_to_string(t.path().join("status")).ok())
            .filter_map(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
                    .and_then(|v| v.trim().parse::<u64>().ok())
            })
            .sum()
    }

    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.daemon)).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        for agent in &mut self.agents {
            let _ = agent.kill();
            let _ = agent.wait();
        }
        let _ = Command::new("kill").arg(self.daemon.to_string()).status();
    }
}

fn lidguard(home: &Path) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.env("LIDGUARD_HOME", home)
        .env("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent")
        .stdin(Stdio::null());
    cmd
}

fn clock_ticks_per_second() -> f64 {
    // Linux's USER_HZ is 100 on every architecture lidguard runs on.
    100.0
}

#[path = "common/args.rs"]
mod args;
