//! Every captured payload in `tests/fixtures/<provider>/` through the real hook binary against
//! a real daemon, with the lid open and with the lid closed (through the documented
//! `LIDGUARD_PROC_ROOT` / `LIDGUARD_SYS_ROOT` source override): the normalized events the daemon
//! recorded and the exact stdout must match the fixture's `expect`, and the event stream's
//! `visibility.stdout` must be exactly what the hook printed.
//!
//! `LIDGUARD_BLESS=1 cargo test -p lidguard --test integration conformance` writes what was
//! observed into fixtures that have no `expect` yet; review the diff before committing.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::util::{Home, hook_args, pipe, succeeded};

fn at(event: &Value) -> jiff::Timestamp {
    event["at"].as_str().unwrap().parse().unwrap()
}

/// A wake-up time the hook computed from the agent's schedule and the clock: checked to lie
/// ahead of the event (within the year Claude looks ahead), then written as `"ahead"` so the
/// fixture does not depend on when it runs.
fn wake_up_ahead(mut event: Value, at: jiff::Timestamp) -> Value {
    if let Some(wakes) = event.get_mut("wakesAt") {
        let when: jiff::Timestamp = wakes.as_str().unwrap().parse().unwrap();
        let ahead = when.duration_since(at);
        assert!(
            ahead > jiff::SignedDuration::ZERO && ahead.as_hours() <= 366 * 24,
            "a wake-up lies ahead of its Stop: {when} vs {at}"
        );
        *wakes = json!("ahead");
    }
    event
}

fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

/// All fixture files, sorted (`LIDGUARD_FIXTURES=claude,codex` narrows the providers).
fn fixtures() -> Vec<PathBuf> {
    let only = std::env::var("LIDGUARD_FIXTURES").ok();
    let mut files = Vec::new();
    for provider in lidguard_providers::AGENTS
        .iter()
        .map(|a| a.provider.as_str())
    {
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|p| p == provider))
        {
            continue;
        }
        let dir = fixtures_root().join(provider);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "json") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Which executable runs a hook.
#[derive(Clone, Copy)]
enum Exe {
    /// `lidguard-hook`, which the installed hooks run.
    Hook,
    /// `lidguard <agent>-hook`.
    Full,
}

/// A daemon whose lid reads as `lid`, kept alive by a session of its own.
struct LidHome {
    home: Home,
    proc_root: PathBuf,
    sys_root: PathBuf,
}

impl LidHome {
    fn new(lid: &str) -> LidHome {
        let home = Home::new();
        let (proc_root, sys_root) = crate::util::fake_roots(&home, lid);
        let lh = LidHome {
            home,
            proc_root,
            sys_root,
        };
        succeeded(lh.cmd(&["start", "--provider", "custom", "--session", "keepalive"]));
        lh
    }

    fn cmd(&self, args: &[&str]) -> std::process::Command {
        self.with_roots(self.home.cmd(args))
    }

    fn with_roots(&self, mut cmd: std::process::Command) -> std::process::Command {
        cmd.env("LIDGUARD_PROC_ROOT", &self.proc_root)
            .env("LIDGUARD_SYS_ROOT", &self.sys_root);
        cmd
    }

    /// Runs one hook through `exe` (`lidguard-hook`, what the installed hooks run, or the full
    /// `lidguard`); returns its stdout and the normalized events the daemon recorded for it.
    fn run_hook(&self, exe: Exe, provider: &str, event: &str, stdin: &str) -> (String, Vec<Value>) {
        let before = self.latest();
        let args = hook_args(provider, event);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut cmd = match exe {
            Exe::Hook => self.with_roots(self.home.hook_cmd(&args)),
            Exe::Full => self.cmd(&args),
        };
        // A fixed working directory: payloads without a session id derive one from it.
        cmd.current_dir("/");
        let out = pipe(cmd, stdin.as_bytes());
        assert!(out.status.success(), "hooks always exit 0");
        assert!(
            out.stderr.is_empty(),
            "hooks print nothing on stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let events = self
            .recorded()
            .into_iter()
            .filter(|e| before.is_none_or(|b| at(e) > b))
            .map(|e| wake_up_ahead(e["event"].clone(), at(&e)))
            .collect();
        (String::from_utf8(out.stdout).unwrap(), events)
    }

    /// What the event stream says the agents were told since stream id `since`: the stdout
    /// of every hook line after it, in order, and the newest id.
    fn told(&self, since: u64) -> (String, u64) {
        let out = self.cmd(&["events", "--json"]).output().unwrap();
        assert!(out.status.success());
        let mut told = String::new();
        let mut newest = since;
        for line in String::from_utf8(out.stdout).unwrap().lines() {
            let event: Value = serde_json::from_str(line).unwrap();
            let id = event["observation"]["id"].as_u64().unwrap();
            newest = newest.max(id);
            if id > since && event["observation"]["source"] == "hook" {
                told.push_str(event["visibility"]["stdout"].as_str().unwrap_or(""));
            }
        }
        (told, newest)
    }

    /// When the newest recorded event arrived.
    fn latest(&self) -> Option<jiff::Timestamp> {
        self.recorded().last().map(at)
    }

    /// The newest recorded events (a hook records at most a few).
    fn recorded(&self) -> Vec<Value> {
        let out = self
            .cmd(&["hook-events", "--json", "--count", "8"])
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    }
}

#[test]
fn every_fixture_normalizes_and_answers_as_expected() {
    let files = fixtures();
    if files.is_empty() {
        panic!("no fixtures under {}", fixtures_root().display());
    }
    // Two halves, each a provider's fixtures in order, checked side by side against their own
    // daemons: the suite's longest single test, halved on two cores.
    let mut halves: [Vec<PathBuf>; 2] = [Vec::new(), Vec::new()];
    let mut by_provider: Vec<Vec<PathBuf>> = Vec::new();
    for file in files.iter().cloned() {
        match by_provider.last_mut() {
            Some(group) if group[0].parent() == file.parent() => group.push(file),
            _ => by_provider.push(vec![file]),
        }
    }
    by_provider.sort_by_key(|g| std::cmp::Reverse(g.len()));
    for group in by_provider {
        let lighter = usize::from(halves[1].len() < halves[0].len());
        halves[lighter].extend(group);
    }
    let bless = std::env::var_os("LIDGUARD_BLESS").is_some();
    let (failures, checked) = std::thread::scope(|scope| {
        let runs: Vec<_> = halves
            .iter()
            .map(|half| scope.spawn(|| check_fixtures(half, bless)))
            .collect();
        runs.into_iter().map(|run| run.join().unwrap()).fold(
            (Vec::new(), 0),
            |(mut failures, checked), (f, c)| {
                failures.extend(f);
                (failures, checked + c)
            },
        )
    });
    assert!(
        failures.is_empty(),
        "{} of {} fixtures differ:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    assert!(checked > 0 || bless);
}

/// Runs `files` through the hook with the lid open and closed; returns what differed from each
/// fixture's `expect` and how many were checked (with `bless`, writes the missing `expect`s).
fn check_fixtures(files: &[PathBuf], bless: bool) -> (Vec<String>, usize) {
    let open = LidHome::new("open");
    let closed = LidHome::new("closed");
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut open_seen = open.told(0).1;
    let mut closed_seen = closed.told(0).1;
    for path in files {
        let text = std::fs::read_to_string(path).unwrap();
        let mut fixture: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let provider = fixture["provider"].as_str().unwrap().to_owned();
        let event = fixture["event"].as_str().unwrap().to_owned();
        let stdin = match &fixture["stdin"] {
            Value::String(s) => s.clone(),
            other => serde_json::to_string(other).unwrap(),
        };
        let (open_out, open_events) = open.run_hook(Exe::Hook, &provider, &event, &stdin);
        let (told, newest) = open.told(open_seen);
        open_seen = newest;
        let (closed_out, closed_events) = closed.run_hook(Exe::Hook, &provider, &event, &stdin);
        let (closed_told, newest) = closed.told(closed_seen);
        closed_seen = newest;
        assert_eq!(
            (&told, &closed_told),
            (&open_out, &closed_out),
            "{}: the stream's visibility.stdout is exactly what the hook printed (lid open, \
             lid closed)",
            path.display()
        );
        let (full_out, full_events) = open.run_hook(Exe::Full, &provider, &event, &stdin);
        open_seen = open.told(open_seen).1;
        assert_eq!(
            (&full_out, &full_events),
            (&open_out, &open_events),
            "{}: `lidguard {provider}-hook` and `lidguard-hook {provider}-hook` answer alike",
            path.display()
        );
        assert_eq!(
            open_events,
            closed_events,
            "{}: the lid never changes what was observed",
            path.display()
        );
        let observed = json!({
            "events": open_events,
            "stdoutOpenLid": open_out,
            "stdoutClosedLid": closed_out,
        });
        match fixture.get("expect") {
            Some(expect) => {
                checked += 1;
                if *expect != observed {
                    failures.push(format!(
                        "{}:\n  expected {expect}\n  observed {observed}",
                        path.display()
                    ));
                }
            }
            None if bless => {
                fixture["expect"] = observed;
                std::fs::write(path, serde_json::to_string_pretty(&fixture).unwrap() + "\n")
                    .unwrap();
            }
            None => failures.push(format!(
                "{}: no `expect` (run with LIDGUARD_BLESS=1 and review)",
                path.display()
            )),
        }
    }
    (failures, checked)
}
