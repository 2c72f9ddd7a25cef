//! These run the real systemd-logind on a private system bus (see lidguard-testbus). As root
//! (CI) they always run; elsewhere they are skipped with a message.

use std::time::Duration;

use crate::util::{Home, alive, eventually, signal};

const WAIT: Duration = Duration::from_secs(5);

#[test]
fn start_holds_logind_inhibitors_and_stop_releases_them() {
    let _serial = lidguard_testbus::serial();
    let Some(logind) = lidguard_testbus::logind_or_skip() else {
        return;
    };
    let home = Home::with_bus(logind.address());
    assert_eq!(logind.block_inhibited(), "");

    home.ok(&["start", "--provider", "claude", "--session", "s1"]);
    let held = logind.block_inhibited();
    for what in ["sleep", "idle", "handle-lid-switch"] {
        assert!(
            held.split(':').any(|w| w == what),
            "{what} missing from {held:?}"
        );
    }
    let daemon = home.daemon_pid().unwrap();
    let ours: Vec<_> = logind
        .list_inhibitors()
        .into_iter()
        .filter(|i| i.1 == "lidguard")
        .collect();
    assert_eq!(ours.len(), 2, "{ours:?}");
    assert!(ours.iter().all(|i| i.3 == "block" && i.5 == daemon));
    assert!(
        ours.iter()
            .any(|i| i.0 == "sleep:idle" && i.2 == "1 agent session working"),
        "{ours:?}"
    );

    let status = home.status();
    assert_eq!(status["protection"]["held"], true);
    assert_eq!(
        status["protection"]["inhibitors"],
        serde_json::json!(["sleep", "idle", "handle-lid-switch"])
    );
    assert_eq!(
        status["protection"]["unavailableReason"],
        serde_json::Value::Null
    );

    // A second session updates the summary without a gap.
    home.ok(&["start", "--provider", "codex", "--session", "s2"]);
    let whys: Vec<_> = logind.list_inhibitors().into_iter().map(|i| i.2).collect();
    assert!(
        whys.contains(&"2 agent sessions working".to_owned()),
        "{whys:?}"
    );
    home.ok(&["stop", "--provider", "codex", "--session", "s2"]);
    assert!(logind.block_inhibited().contains("sleep"));

    home.ok(&["stop", "--provider", "claude", "--session", "s1"]);
    assert_eq!(logind.wait_block_inhibited(WAIT, str::is_empty), "");
    assert_eq!(home.status()["protection"]["held"], false);
}

#[test]
fn a_soft_locked_session_releases_and_activity_reacquires() {
    use lidguard_core::provider::Provider;
    use lidguard_ipc::protocol::{Request, SessionRef};

    let _serial = lidguard_testbus::serial();
    let Some(logind) = lidguard_testbus::logind_or_skip() else {
        return;
    };
    let home = Home::with_bus(logind.address());
    home.ok(&["start", "--provider", "claude", "--session", "s1"]);
    let session = SessionRef {
        provider: Provider::Claude,
        session_id: "s1".into(),
        provider_name: None,
    };
    home.request(&Request::SoftLock {
        session: session.clone(),
        reason: "elicitation_dialog".into(),
    });
    assert_eq!(logind.wait_block_inhibited(WAIT, str::is_empty), "");
    home.request(&Request::Activity {
        session,
        reason: "PreToolUse:Bash".into(),
    });
    assert!(
        logind
            .wait_block_inhibited(WAIT, |s| s.contains("sleep"))
            .contains("idle")
    );
}

#[test]
fn lid_switch_is_held_only_when_change_lid_action_is_on() {
    let _serial = lidguard_testbus::serial();
    let Some(logind) = lidguard_testbus::logind_or_skip() else {
        return;
    };
    let home = Home::with_bus(logind.address());
    home.write_settings(r#"{ "changeLidAction": false }"#);
    home.ok(&["start", "--provider", "claude", "--session", "s1"]);
    assert_eq!(logind.block_inhibited(), "sleep:idle");

    // Turning it on takes effect on the running daemon at once.
    home.ok(&["settings", "--change-lid-action", "on"]);
    let held = logind.wait_block_inhibited(WAIT, |s| s.contains("handle-lid-switch"));
    assert!(held.contains("handle-lid-switch"), "{held}");
}

#[test]
fn kill_9_of_the_daemon_releases_everything() {
    let _serial = lidguard_testbus::serial();
    let Some(logind) = lidguard_testbus::logind_or_skip() else {
        return;
    };
    let home = Home::with_bus(logind.address());
    home.ok(&["start", "--provider", "claude", "--session", "s1"]);
    assert!(!logind.block_inhibited().is_empty());
    let pid = home.daemon_pid().unwrap();
    signal(pid, rustix::process::Signal::KILL);
    assert!(eventually(WAIT, || !alive(pid)));
    assert_eq!(logind.wait_block_inhibited(WAIT, str::is_empty), "");
}

#[test]
fn sigterm_releases_everything() {
    let _serial = lidguard_testbus::serial();
    let Some(logind) = lidguard_testbus::logind_or_skip() else {
        return;
    };
    let home = Home::with_bus(logind.address());
    home.ok(&["start", "--provider", "claude", "--session", "s1"]);
    let pid = home.daemon_pid().unwrap();
    signal(pid, rustix::process::Signal::TERM);
    assert!(home.wait_daemon_gone(WAIT));
    assert_eq!(logind.wait_block_inhibited(WAIT, str::is_empty), "");
}

#[test]
fn when_logind_refuses_the_user_status_says_why_and_sessions_are_still_tracked() {
    if !rustix::process::getuid().is_root() {
        eprintln!("skipping: switching uid needs root");
        return;
    }
    let _serial = lidguard_testbus::serial();
    let Some(logind) = lidguard_testbus::logind_or_skip() else {
        return;
    };
    let home = Home::with_bus(logind.address());
    // `nobody` has a passwd entry, which dbus-daemon needs to authenticate a client.
    home.chown_to(65534);
    // Without polkit, logind lets only root block sleep: an ordinary user is refused.
    let out = home
        .cmd_as(65534, &["start", "--provider", "claude", "--session", "s1"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = home.cmd_as(65534, &["status", "--json"]).output().unwrap();
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["sessions"][0]["sessionId"], "s1");
    assert_eq!(status["protection"]["wanted"], true);
    assert_eq!(status["protection"]["held"], false);
    let reason = status["protection"]["unavailableReason"].as_str().unwrap();
    assert!(reason.contains("refused"), "{reason}");
    assert_eq!(logind.block_inhibited(), "");
}

/// Safety first: a test that makes the daemon ask logind to suspend must never suspend the
/// machine running it. In a container logind answers `na`; anywhere else the test skips.
fn only_where_logind_says_na(logind: &lidguard_testbus::PrivateLogind, method: &str) -> bool {
    let can = logind
        .bus()
        .busctl(&[
            "call",
            "org.freedesktop.login1",
            "/org/freedesktop/login1",
            "org.freedesktop.login1.Manager",
            method,
        ])
        .unwrap();
    let na = can.contains("\"na\"");
    if !na {
        eprintln!(
            "skipped: logind here answers {method} {can:?}; this test only runs where it is na"
        );
    }
    na
}

#[test]
fn a_closed_lid_suspend_reaches_logind_and_its_refusal_is_recorded() {
    let _serial = lidguard_testbus::serial();
    let Some(logind) = lidguard_testbus::logind_or_skip() else {
        return;
    };
    if !only_where_logind_says_na(&logind, "CanSuspend") {
        return;
    }
    let home = Home::with_bus(logind.address());
    home.ok(&["settings", "--post-stop-suspend-delay-seconds", "0"]);
    let (proc_root, sys_root) = crate::util::fake_roots(&home, "closed");
    let out = home
        .cmd(&["start", "--provider", "claude", "--session", "s1"])
        .env("LIDGUARD_PROC_ROOT", &proc_root)
        .env("LIDGUARD_SYS_ROOT", &sys_root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(logind.block_inhibited().contains("sleep"));
    // The daemon sees the closed lid on its next machine reading.
    assert!(eventually(WAIT, || home.status()["lid"] == "Closed"));
    std::thread::sleep(Duration::from_millis(2500));

    home.ok(&["stop", "--provider", "claude", "--session", "s1"]);
    let history = || -> serde_json::Value {
        serde_json::from_str(&home.ok(&["suspend-history", "--json"])).unwrap()
    };
    assert!(
        eventually(WAIT, || history().as_array().is_some_and(|h| !h.is_empty())),
        "no suspend was recorded; log:\n{}",
        logind.log()
    );
    let entry = &history()[0];
    assert_eq!(entry["suspendMode"], "Sleep");
    assert_eq!(entry["reason"], "Completed");
    assert_eq!(entry["succeeded"], false);
    let error = entry["error"].as_str().unwrap();
    assert!(error.contains("CanSuspend=na"), "{error}");
    // Protection was released for the request and stays released.
    assert_eq!(logind.wait_block_inhibited(WAIT, str::is_empty), "");
    let text = home.ok(&["suspend-history"]);
    assert!(
        text.contains("Sleep (Completed)  FAILED: systemd-logind reports CanSuspend=na"),
        "{text}"
    );
}

#[test]
fn emergency_hibernation_falls_back_to_sleep_and_records_both_attempts() {
    let _serial = lidguard_testbus::serial();
    let Some(logind) = lidguard_testbus::logind_or_skip() else {
        return;
    };
    if !only_where_logind_says_na(&logind, "CanHibernate") {
        return;
    }
    let home = Home::with_bus(logind.address());
    home.ok(&[
        "settings",
        "--emergency-hibernation-temperature-celsius",
        "70",
    ]);
    let (proc_root, sys_root) = crate::util::fake_roots(&home, "closed");
    let zone = sys_root.join("class/thermal/thermal_zone0");
    std::fs::create_dir_all(&zone).unwrap();
    std::fs::write(zone.join("temp"), "95000\n").unwrap();
    let out = home
        .cmd(&["start", "--provider", "codex", "--session", "hot"])
        .env("LIDGUARD_PROC_ROOT", &proc_root)
        .env("LIDGUARD_SYS_ROOT", &sys_root)
        .output()
        .unwrap();
    assert!(out.status.success());
    let history = || -> serde_json::Value {
        serde_json::from_str(&home.ok(&["suspend-history", "--json"])).unwrap()
    };
    assert!(
        eventually(Duration::from_secs(15), || history()
            .as_array()
            .is_some_and(|h| h.len() >= 2)),
        "{}",
        history()
    );
    let h = history();
    assert_eq!(h[0]["suspendMode"], "Hibernate");
    assert_eq!(h[0]["reason"], "EmergencyHibernation");
    assert_eq!(h[0]["temperatureCelsius"], 95);
    assert_eq!(h[0]["thresholdCelsius"], 70);
    assert_eq!(h[1]["suspendMode"], "Sleep", "falls back to sleep");
    assert_eq!(h[1]["succeeded"], false);
    // The session still works, so protection is held again afterwards.
    assert!(eventually(WAIT, || logind
        .block_inhibited()
        .contains("sleep")));
    assert!(home.session("hot").is_some());
}

#[test]
fn linux_permission_check_and_status_against_the_real_logind() {
    let _serial = lidguard_testbus::serial();
    let Some(logind) = lidguard_testbus::logind_or_skip() else {
        return;
    };
    let home = Home::with_bus(logind.address());
    let out = home
        .cmd(&["linux-permission", "check", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["inhibitors"], "sleep:idle:handle-lid-switch");
    assert!(v["canSuspend"].is_string(), "{v}");
    // The test inhibitor is gone again.
    assert_eq!(logind.wait_block_inhibited(WAIT, str::is_empty), "");

    let rules = home.path().join("rules.d");
    std::fs::create_dir_all(&rules).unwrap();
    let dir = rules.to_str().unwrap();
    let out = home
        .cmd(&["linux-permission", "status", "--rules-dir", dir, "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["rule"]["state"], "notInstalled");
    assert!(v["canSuspend"].is_string(), "{v}");
    assert_eq!(
        v["backend"]
            .as_str()
            .map(|b| b.starts_with("systemd-logind")),
        Some(true)
    );
}

#[test]
fn run_holds_the_inhibitor_while_the_command_runs() {
    let _serial = lidguard_testbus::serial();
    let Some(logind) = lidguard_testbus::logind_or_skip() else {
        return;
    };
    let home = Home::with_bus(logind.address());
    let release = home.path().join("release");
    let script = format!(
        "while [ ! -e '{}' ]; do sleep 0.05; done; exit 3",
        release.display()
    );
    let mut run = home
        .cmd(&["run", "--reason", "build", "--", "sh", "-c", &script])
        .stdin(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let held = logind.wait_block_inhibited(WAIT, |held| held.contains("sleep"));
    assert!(held.split(':').any(|w| w == "sleep"), "{held:?}");
    let ours: Vec<_> = logind
        .list_inhibitors()
        .into_iter()
        .filter(|i| i.1 == "lidguard")
        .collect();
    assert!(
        ours.iter().any(|i| i.0 == "sleep:idle" && i.3 == "block"),
        "{ours:?}"
    );
    std::fs::write(&release, "").unwrap();
    assert_eq!(run.wait().unwrap().code(), Some(3));
    assert_eq!(logind.wait_block_inhibited(WAIT, str::is_empty), "");
}
