//! The closed-lid suspend flow through the real daemon with fake `/proc` and `/sys` trees
//! (no lid switch or thermal sensor exists here), and the diagnostics that read them. The
//! daemon has no power backend in these tests (no system bus), so every suspend request is
//! refused and recorded as such; `logind.rs` takes the request to the real logind.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::util::{Home, eventually, suspend_history};

const WAIT: Duration = Duration::from_secs(8);

struct Trees {
    proc_root: PathBuf,
    sys_root: PathBuf,
}

impl Trees {
    fn new(home: &Home, lid: &str) -> Trees {
        let (proc_root, sys_root) = crate::util::fake_roots(home, lid);
        Trees {
            proc_root,
            sys_root,
        }
    }

    fn set_lid(&self, lid: &str) {
        crate::util::set_lid(&self.proc_root, lid);
    }

    fn zone(&self, n: u32, content: &str) {
        let dir = self.sys_root.join(format!("class/thermal/thermal_zone{n}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("temp"), content).unwrap();
    }

    fn run(&self, home: &Home, args: &[&str], path: Option<&Path>) -> std::process::Output {
        let mut cmd = home.cmd(args);
        cmd.env("LIDGUARD_PROC_ROOT", &self.proc_root)
            .env("LIDGUARD_SYS_ROOT", &self.sys_root);
        if let Some(dir) = path {
            let old = std::env::var_os("PATH").unwrap_or_default();
            let mut paths = vec![dir.to_path_buf()];
            paths.extend(std::env::split_paths(&old));
            cmd.env("PATH", std::env::join_paths(paths).unwrap());
        }
        cmd.output().unwrap()
    }

    fn ok(&self, home: &Home, args: &[&str]) -> String {
        let out = self.run(home, args, None);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }
}

#[test]
fn diagnostics_read_the_same_trees_as_the_daemon() {
    let home = Home::new();
    let t = Trees::new(&home, "closed");
    assert_eq!(t.ok(&home, &["current-lid-state"]).trim(), "Closed");
    t.set_lid("open");
    assert_eq!(t.ok(&home, &["current-lid-state"]).trim(), "Open");
    t.set_lid("\u{fffd}garbage");
    assert_eq!(t.ok(&home, &["current-lid-state"]).trim(), "Unknown");

    let hdmi = t.sys_root.join("class/drm/card0-HDMI-A-1");
    std::fs::create_dir_all(&hdmi).unwrap();
    std::fs::write(hdmi.join("status"), "connected").unwrap();
    let counts: Value =
        serde_json::from_str(&t.ok(&home, &["current-monitor-count", "--json"])).unwrap();
    assert_eq!(counts["visibleDisplays"], 2);
    assert_eq!(counts["externalDisplays"], 1);

    let out = t.run(&home, &["current-temperature"], None);
    assert!(!out.status.success(), "no zone: unavailable, exit 1");
    t.zone(0, "41000\n");
    t.zone(1, "not a number");
    t.zone(2, "79000\n");
    assert_eq!(
        t.ok(&home, &["current-temperature"]).trim(),
        "60 °C (average of 2 zone(s))"
    );
    assert!(
        t.ok(
            &home,
            &["current-temperature", "--temperature-mode", "high"]
        )
        .starts_with("79 °C")
    );
    home.ok(&[
        "settings",
        "--emergency-hibernation-temperature-mode",
        "low",
    ]);
    assert!(t.ok(&home, &["current-temperature"]).starts_with("41 °C"));
    let out = t.run(
        &home,
        &["current-temperature", "--temperature-mode", "hot"],
        None,
    );
    assert!(!out.status.success());
}

#[test]
fn the_sound_plays_before_the_suspend_request_is_recorded() {
    let home = Home::new();
    let t = Trees::new(&home, "closed");
    // A fake player on PATH that logs what it plays.
    let bin = home.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = home.path().join("played.log");
    let player = bin.join("paplay");
    crate::util::write_executable(
        &player,
        format!("#!/bin/sh\necho \"$@\" >> '{}'\n", log.display()).as_bytes(),
    );
    let wav = home.path().join("done.wav");
    std::fs::write(&wav, b"RIFF").unwrap();
    home.ok(&["settings", "--post-stop-suspend-delay-seconds", "0"]);
    home.ok(&[
        "settings",
        "--post-stop-suspend-sound",
        wav.to_str().unwrap(),
    ]);

    let out = t.run(
        &home,
        &["start", "--provider", "claude", "--session", "s1"],
        Some(&bin),
    );
    assert!(out.status.success());
    assert!(eventually(WAIT, || home.status()["lid"] == "Closed"));
    // Let the daemon's 2 s machine reading see the closed lid before the stop.
    std::thread::sleep(Duration::from_millis(2500));
    home.ok(&["stop", "--provider", "claude", "--session", "s1"]);
    assert!(
        eventually(WAIT, || !suspend_history(&home).is_empty()),
        "no suspend recorded"
    );
    let played = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(played.contains("done.wav"), "{played:?}");
    let entry = &suspend_history(&home)[0];
    assert_eq!(entry["reason"], "Completed");
    assert_eq!(entry["succeeded"], false);
    assert!(
        crate::util::text(&entry["error"]).contains("no power backend"),
        "{entry}"
    );
}

#[test]
fn opening_the_lid_cancels_a_pending_suspend() {
    let home = Home::new();
    let t = Trees::new(&home, "closed");
    home.ok(&["settings", "--post-stop-suspend-delay-seconds", "60"]);
    let out = t.run(
        &home,
        &["start", "--provider", "codex", "--session", "c1"],
        None,
    );
    assert!(out.status.success());
    std::thread::sleep(Duration::from_millis(2500));
    home.ok(&["stop", "--provider", "codex", "--session", "c1"]);
    let pending = home.status()["pendingSuspend"].clone();
    assert_eq!(pending["reason"], "Completed", "{pending}");
    assert_eq!(pending["phase"], "delay");

    t.set_lid("open");
    assert!(
        eventually(WAIT, || home.status()["pendingSuspend"].is_null()),
        "the lid opening cancels it"
    );
    assert!(suspend_history(&home).is_empty());
}

/// A stop decides its suspend on the lid as it is at that moment, not as the last 2 s poll saw
/// it: the lid closed a moment before the session ended still puts the machine to sleep (here:
/// the refused request is recorded).
#[test]
fn a_stop_right_after_the_start_sees_the_closed_lid() {
    let home = Home::new();
    home.ok(&["settings", "--post-stop-suspend-delay-seconds", "0"]);
    let trees = Trees::new(&home, "open");
    trees.ok(
        &home,
        &["start", "--provider", "claude", "--session", "quick"],
    );
    // The daemon's poll has seen the lid open; it closes, and the session ends at once.
    std::thread::sleep(Duration::from_millis(300));
    trees.set_lid("closed");
    trees.ok(
        &home,
        &["stop", "--provider", "claude", "--session", "quick"],
    );
    assert!(
        eventually(WAIT, || !suspend_history(&home).is_empty()),
        "the suspend was requested"
    );
}
