//! The `lidguard-private-logind` bin as the e2e drivers use it: one JSON line, logind on the
//! printed bus, and everything stopped when stdin closes or SIGTERM arrives.
#![allow(
    clippy::disallowed_methods,
    reason = "test support: fixtures are written and the environment read directly"
)]
#![cfg(unix)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Starts the bin; returns it with its ready line, or `None` (after saying why) where it
/// cannot serve and `CI` is not set.
#[allow(clippy::print_stderr, reason = "a skipped test says why")]
fn start() -> Option<(Child, serde_json::Value)> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lidguard-private-logind"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let ready: serde_json::Value = serde_json::from_str(&line).unwrap();
    if let Some(error) = ready["error"].as_str() {
        assert!(
            !child.wait().unwrap().success(),
            "an error line means exit 1"
        );
        let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
        assert!(
            !ci || error.contains("refusing to serve"),
            "CI must run a private logind: {error}"
        );
        eprintln!("skipping: {error}");
        return None;
    }
    Some((child, ready))
}

fn gone(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_err()
}

fn exits_cleanly(mut child: Child, ready: &serde_json::Value, why: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "still running 10 s after {why}");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(stderr.contains(&format!("stopped ({why})")), "{stderr}");
    for key in ["logindPid", "dbusPid"] {
        let pid = ready[key].as_u64().unwrap();
        assert!(gone(pid), "{key} {pid} still exists");
    }
    let socket = ready["address"]
        .as_str()
        .unwrap()
        .trim_start_matches("unix:path=");
    assert!(
        !std::path::Path::new(socket).exists(),
        "{socket} is removed"
    );
}

#[test]
fn serves_logind_until_stdin_closes_and_only_where_it_cannot_suspend() {
    let Some((mut child, ready)) = start() else {
        return;
    };
    assert_eq!(ready["canSuspend"], "na");
    assert_eq!(ready["canHibernate"], "na");
    let address = ready["address"].as_str().unwrap();
    let out = Command::new("busctl")
        .env("DBUS_SYSTEM_BUS_ADDRESS", address)
        .args(["--system", "--timeout=2", "call", "org.freedesktop.login1"])
        .args([
            "/org/freedesktop/login1",
            "org.freedesktop.login1.Manager",
            "CanSuspend",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "s \"na\"");
    drop(child.stdin.take());
    exits_cleanly(child, &ready, "stdin closed");
}

#[test]
fn sigterm_stops_it() {
    let Some((child, ready)) = start() else {
        return;
    };
    let pid = rustix::process::Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    exits_cleanly(child, &ready, "SIGTERM");
}
