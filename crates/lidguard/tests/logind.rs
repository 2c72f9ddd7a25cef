//! These run the real systemd-logind on a private system bus (see lidguard-testbus). As root
//! (CI) they always run; elsewhere they are skipped with a message.

use std::path::Path;
use std::time::Duration;

use crate::util::{Agent, Home, alive, eventually, signal, succeeded};

const WAIT: Duration = Duration::from_secs(5);

/// A home whose daemon talks to a private systemd-logind, with the guard that runs the logind
/// tests one at a time (keep it for the whole test); `None` (the test skips) where none runs.
fn private_logind() -> Option<(
    std::sync::MutexGuard<'static, ()>,
    lidguard_testbus::PrivateLogind,
    Home,
)> {
    let serial = lidguard_testbus::serial();
    let logind = lidguard_testbus::logind_or_skip()?;
    let home = Home::with_bus(logind.address());
    Some((serial, logind, home))
}

#[test]
fn start_holds_logind_inhibitors_and_stop_releases_them() {
    let Some((_serial, logind, home)) = private_logind() else {
        return;
    };
    assert_eq!(logind.block_inhibited(), "");

    let started = home.run(&["start", "--provider", "claude", "--session", "s1", "--json"]);
    assert!(
        started.status.success() && started.stderr.is_empty(),
        "{started:?}"
    );
    let started: serde_json::Value = serde_json::from_slice(&started.stdout).unwrap();
    assert_eq!(started["protection"]["held"], true, "{started}");
    home.ok(&["status", "--check"]);
    // No lid is closed here: idle handling and the lid switch are blocked, and sleep is held
    // in delay mode, so a suspend the user asks for goes through.
    assert_eq!(logind.block_inhibited(), "idle:handle-lid-switch");
    assert_eq!(logind.delay_inhibited(), "sleep");
    let daemon = home.daemon_pid().unwrap();
    let mut ours: Vec<_> = logind
        .list_inhibitors()
        .into_iter()
        .filter(|i| i.1 == "lidguard")
        .map(|i| {
            assert_eq!(i.5, daemon);
            (i.0, i.3, i.2)
        })
        .collect();
    ours.sort();
    let working = "1 agent session working".to_owned();
    assert_eq!(
        ours,
        [
            (
                "handle-lid-switch".into(),
                "block".into(),
                ours[0].2.clone()
            ),
            ("idle".into(), "block".into(), working.clone()),
            ("sleep".into(), "delay".into(), working),
        ],
    );

    let status = home.status();
    assert_eq!(status["protection"]["held"], true);
    assert_eq!(
        status["protection"]["inhibitors"],
        serde_json::json!(["sleep", "idle", "handle-lid-switch"])
    );
    assert_eq!(
        status["protection"]["delayInhibitors"],
        serde_json::json!(["sleep"])
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
    assert_eq!(logind.delay_inhibited(), "sleep");

    home.ok(&["stop", "--provider", "claude", "--session", "s1"]);
    assert_eq!(logind.wait_block_inhibited(WAIT, str::is_empty), "");
    assert_eq!(logind.delay_inhibited(), "");
    assert_eq!(home.status()["protection"]["held"], false);
}

#[test]
fn a_soft_locked_session_releases_and_activity_reacquires() {
    use lidguard_core::provider::Provider;
    use lidguard_ipc::protocol::Request;

    let Some((_serial, logind, home)) = private_logind() else {
        return;
    };
    home.ok(&["start", "--provider", "claude", "--session", "s1"]);
    let session = crate::util::session_ref(Provider::Claude, "s1");
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
            .wait_block_inhibited(WAIT, |s| s.contains("idle"))
            .contains("idle")
    );
    assert_eq!(logind.delay_inhibited(), "sleep");
}

/// The user's pause lets go of every lock while the session goes on; resume takes them back.
/// `pause` and `resume` say what they did and what is held.
#[test]
fn pause_releases_the_locks_and_resume_takes_them_back() {
    let Some((_serial, logind, home)) = private_logind() else {
        return;
    };
    home.ok(&["start", "--provider", "claude", "--session", "s1"]);
    assert_eq!(logind.block_inhibited(), "idle:handle-lid-switch");
    let said = home.ok(&["pause", "--for", "1h"]);
    assert!(said.contains("protection paused for 1 h"), "{said}");
    assert!(said.contains("Protection: paused until "), "{said}");
    assert_eq!(logind.wait_block_inhibited(WAIT, str::is_empty), "");
    assert!(eventually(WAIT, || logind.delay_inhibited().is_empty()));
    let status = home.status();
    assert_eq!(status["sessions"][0]["state"], "active", "{status}");
    assert!(
        status["protection"]["paused"]["until"].is_string(),
        "{status}"
    );
    let text = home.ok(&["status"]);
    assert!(text.contains("paused until"), "{text}");
    // Work goes on: still nothing held.
    home.ok(&["start", "--provider", "claude", "--session", "s1"]);
    assert_eq!(logind.block_inhibited(), "");
    let said = home.ok(&["resume"]);
    assert!(said.contains("protection resumed"), "{said}");
    assert_eq!(
        logind.wait_block_inhibited(WAIT, |s| s == "idle:handle-lid-switch"),
        "idle:handle-lid-switch"
    );
    let said = home.ok(&["resume"]);
    assert!(said.contains("protection was not paused"), "{said}");
    let said = home.ok(&["cancel-suspend"]);
    assert!(said.contains("no suspend was pending"), "{said}");
    let events = home.ok(&["events", "--since", "all"]);
    assert!(
        events.contains("protection-paused") && events.contains("protection-resumed"),
        "{events}"
    );
    let refused = home.run(&["pause", "--for", "soon"]);
    assert_eq!(refused.status.code(), Some(2), "a usage error");
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("write e.g. 90s, 30m, 1h30m or 2d"),
        "{refused:?}"
    );
    // Seconds are rounded up to whole minutes, and it says so; days are taken; too long says
    // why.
    let said = home.ok(&["pause", "--for", "90s"]);
    assert!(
        said.contains("rounded up to 2 min") && said.contains("paused for 2 min"),
        "{said}"
    );
    let said = home.ok(&["pause", "--for", "2d"]);
    assert!(said.contains("paused for 2 d"), "{said}");
    let refused = home.run(&["pause", "--for", "31d"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("longer than the longest pause, 30 days"),
        "{refused:?}"
    );
    home.ok(&["resume"]);
}

/// A pause outlives its daemon: after a kill -9 the next daemon holds nothing for the session
/// it finds until the pause ends, and says until when.
#[test]
fn a_pause_outlives_a_killed_daemon() {
    let Some((_serial, logind, home)) = private_logind() else {
        return;
    };
    let agent = Agent::spawn();
    let pid = agent.pid().to_string();
    home.start_watched("s1", &pid);
    home.ok(&["pause", "--for", "1h"]);
    let until = home.status()["protection"]["paused"]["until"].clone();
    assert!(until.is_string(), "{until}");
    assert_eq!(logind.wait_block_inhibited(WAIT, str::is_empty), "");
    signal(home.daemon_pid().unwrap(), rustix::process::Signal::KILL);
    assert!(home.wait_daemon_gone(WAIT));
    // The next daemon (started by the next session) finds the first session and the pause.
    home.start_watched("s2", &pid);
    assert!(home.session("s1").is_some());
    let status = home.status();
    assert_eq!(status["protection"]["paused"]["until"], until, "{status}");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(logind.block_inhibited(), "", "nothing held while paused");
    let events = home.ok(&["events", "--since", "all"]);
    assert!(events.contains("protection-pause-restored"), "{events}");
    home.ok(&["resume"]);
    assert_eq!(
        logind.wait_block_inhibited(WAIT, |s| s == "idle:handle-lid-switch"),
        "idle:handle-lid-switch"
    );
    drop(agent);
}

#[test]
fn lid_switch_is_held_only_when_change_lid_action_is_on() {
    let Some((_serial, logind, home)) = private_logind() else {
        return;
    };
    home.write_settings(r#"{ "changeLidAction": false }"#);
    home.ok(&["start", "--provider", "claude", "--session", "s1"]);
    assert_eq!(logind.block_inhibited(), "idle");
    assert_eq!(logind.delay_inhibited(), "sleep");

    // Turning it on takes effect on the running daemon at once.
    home.ok(&["settings", "--change-lid-action", "on"]);
    let held = logind.wait_block_inhibited(WAIT, |s| s.contains("handle-lid-switch"));
    assert!(held.contains("handle-lid-switch"), "{held}");
}

#[test]
fn kill_9_of_the_daemon_releases_everything() {
    let Some((_serial, logind, home)) = private_logind() else {
        return;
    };
    home.ok(&["start", "--provider", "claude", "--session", "s1"]);
    assert!(!logind.block_inhibited().is_empty());
    let pid = home.daemon_pid().unwrap();
    signal(pid, rustix::process::Signal::KILL);
    assert!(eventually(WAIT, || !alive(pid)));
    assert_eq!(logind.wait_block_inhibited(WAIT, str::is_empty), "");
}

#[test]
fn sigterm_releases_everything() {
    let Some((_serial, logind, home)) = private_logind() else {
        return;
    };
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
    let Some((_serial, logind, home)) = private_logind() else {
        return;
    };
    // `nobody` has a passwd entry, which dbus-daemon needs to authenticate a client.
    home.chown_to(65534);
    // Without polkit, logind lets only root block sleep: an ordinary user is refused.
    succeeded(home.cmd_as(65534, &["start", "--provider", "claude", "--session", "s1"]));
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
    let Some((_serial, logind, home)) = private_logind() else {
        return;
    };
    if !only_where_logind_says_na(&logind, "CanSuspend") {
        return;
    }
    home.ok(&["settings", "--post-stop-suspend-delay-seconds", "0"]);
    let (proc_root, sys_root) = crate::util::fake_roots(&home, "closed");
    ok_with_roots(
        &home,
        (&proc_root, &sys_root),
        &["start", "--provider", "claude", "--session", "s1"],
    );
    // The daemon sees the closed lid on its next machine reading; with the lid closed sleep
    // is blocked outright.
    assert!(eventually(WAIT, || home.status()["lid"] == "Closed"));
    let held = logind.wait_block_inhibited(WAIT, |s| s.contains("sleep"));
    assert!(held.split(':').any(|w| w == "sleep"), "{held:?}");
    assert_eq!(logind.delay_inhibited(), "");
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
    let Some((_serial, logind, home)) = private_logind() else {
        return;
    };
    if !only_where_logind_says_na(&logind, "CanHibernate") {
        return;
    }
    home.ok(&[
        "settings",
        "--emergency-hibernation-temperature-celsius",
        "70",
    ]);
    let (proc_root, sys_root) = crate::util::fake_roots(&home, "closed");
    let zone = sys_root.join("class/thermal/thermal_zone0");
    std::fs::create_dir_all(&zone).unwrap();
    std::fs::write(zone.join("temp"), "95000\n").unwrap();
    ok_with_roots(
        &home,
        (&proc_root, &sys_root),
        &["start", "--provider", "codex", "--session", "hot"],
    );
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
    let Some((_serial, logind, home)) = private_logind() else {
        return;
    };
    let out = succeeded(home.cmd(&["linux-permission", "check", "--json"]));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["inhibitors"], "sleep:idle:handle-lid-switch");
    assert_eq!(v["delayInhibitors"], "sleep", "{v}");
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
fn doctor_is_all_ok_under_logind_and_without_a_bus_names_the_bus_not_polkit() {
    let Some((_serial, logind, home)) = private_logind() else {
        return;
    };
    // An agent with lidguard's hooks, a lid and a panel: every check has something to look at.
    std::fs::create_dir_all(home.path().join("user-home/.claude")).unwrap();
    home.ok(&["hook-install", "--provider", "claude"]);
    let (proc_root, sys_root) = crate::util::fake_roots(&home, "open");
    let report = ok_with_roots(&home, (&proc_root, &sys_root), &["doctor"]);
    for area in [
        "executables",
        "hooks: Claude Code: installed",
        "daemon",
        "power: systemd-logind",
        "closed lid: the lid-switch lock was granted and released",
        "permission rule: ",
        "service: not installed; the daemon starts on demand",
        "phone: off",
        "lid: Open",
        "displays: 1 connected (0 external)",
    ] {
        assert!(report.contains(&format!("✓ {area}")), "{area}:\n{report}");
    }
    assert!(!report.contains('✗'), "{report}");
    assert!(
        report.contains("granted and released sleep:idle:handle-lid-switch")
            && report.contains("the OS listed each while held"),
        "doctor checks logind's own inhibitor list:\n{report}"
    );
    // The test lock is gone again.
    assert_eq!(logind.wait_block_inhibited(WAIT, str::is_empty), "");

    // The user unhooks Claude on purpose: their choice, shown and not failed, and `setup`
    // leaves it so; `hook-install` hooks it again.
    home.ok(&["hook-remove", "--provider", "claude"]);
    let report = ok_with_roots(&home, (&proc_root, &sys_root), &["doctor"]);
    assert!(
        report.contains("✓ hooks: Claude Code: unhooked, as you chose"),
        "{report}"
    );
    assert!(!report.contains('✗'), "{report}");
    let setup = ok_with_roots(
        &home,
        (&proc_root, &sys_root),
        &["setup", "--yes", "--no-tray"],
    );
    assert!(
        setup.contains("Claude Code: left unhooked, as you chose"),
        "{setup}"
    );
    home.ok(&["hook-install", "--provider", "claude"]);
    let report = ok_with_roots(&home, (&proc_root, &sys_root), &["doctor"]);
    assert!(
        report.contains("✓ hooks: Claude Code: installed"),
        "{report}"
    );

    // The phone: a server that answers is ✓; one nothing listens on, and `remote` decisions
    // without a phone, are ✗ with what to do (doctor exits 1).
    // doctor's exit code, and its phone line: ok or not, its detail holding each of `says`, and
    // (when not ok) a fix naming --ntfy-url.
    let doctor_phone = |code: i32, ok: bool, says: &[&str]| {
        let out = home
            .cmd(&["doctor", "--json"])
            .env("LIDGUARD_PROC_ROOT", &proc_root)
            .env("LIDGUARD_SYS_ROOT", &sys_root)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let phone = crate::util::row_where(&v["checks"], "area", "phone");
        assert_eq!(
            (out.status.code(), &phone["ok"]),
            (Some(code), &serde_json::json!(ok)),
            "{phone}"
        );
        let detail = crate::util::text(&phone["detail"]);
        assert!(says.iter().all(|s| detail.contains(s)), "{phone}");
        assert!(
            ok || crate::util::text(&phone["fix"]).contains("--ntfy-url"),
            "{phone}"
        );
    };
    let ntfy = lidguard_testreceiver::ntfy::NtfyServer::start(0, None).unwrap();
    home.ok(&[
        "settings",
        "--ntfy-url",
        &format!("{}/lidguard-doctor", ntfy.url()),
    ]);
    doctor_phone(0, true, &["the server answers"]);
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let refusing = format!("http://{}/lidguard-doctor", closed.local_addr().unwrap());
    drop(closed);
    home.ok(&["settings", "--ntfy-url", &refusing]);
    doctor_phone(1, false, &["cannot be used"]);
    home.ok(&["settings", "--ntfy-url", ""]);
    home.ok(&[
        "settings",
        "--closed-lid-permission-request-decision",
        "remote",
    ]);
    doctor_phone(1, false, &["no phone is set", "falls back to `deny`"]);
    home.ok(&[
        "settings",
        "--closed-lid-permission-request-decision",
        "deny",
    ]);

    // No system bus: the power line says so, and its fix is not the polkit rule (which cannot
    // bring a bus back).
    let out = home
        .cmd(&["doctor", "--json"])
        .env(
            "DBUS_SYSTEM_BUS_ADDRESS",
            format!("unix:path={}", home.path().join("no-bus").display()),
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], false);
    let power = crate::util::row_where(&v["checks"], "area", "power");
    assert_eq!(power["ok"], false, "{power}");
    assert!(
        power["detail"].as_str().unwrap().contains("D-Bus"),
        "{power}"
    );
    let fix = power["fix"].as_str().unwrap();
    assert!(
        fix.contains("system bus") && !fix.contains("polkit"),
        "{fix}"
    );
    let check = home
        .cmd(&["linux-permission", "check"])
        .env("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&check.stderr);
    assert!(
        !check.status.success() && !said.contains("polkit"),
        "{said}"
    );
}

#[test]
fn run_holds_the_inhibitor_while_the_command_runs() {
    let Some((_serial, logind, home)) = private_logind() else {
        return;
    };
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
    let held = logind.wait_block_inhibited(WAIT, |held| held.contains("idle"));
    assert!(held.split(':').any(|w| w == "idle"), "{held:?}");
    let ours: Vec<_> = logind
        .list_inhibitors()
        .into_iter()
        .filter(|i| i.1 == "lidguard")
        .collect();
    assert!(
        ours.iter().any(|i| i.0 == "idle" && i.3 == "block"),
        "{ours:?}"
    );
    assert!(
        ours.iter().any(|i| i.0 == "sleep" && i.3 == "delay"),
        "{ours:?}"
    );
    std::fs::write(&release, "").unwrap();
    assert_eq!(run.wait().unwrap().code(), Some(3));
    assert_eq!(logind.wait_block_inhibited(WAIT, str::is_empty), "");
}

/// A command's session lasts as long as the work, past the inactivity timeout: with a 1-minute
/// timeout and the lid closed, a command that leaves its work running in the background (the
/// shell exits at once) keeps sleep blocked in logind for 75 s, with no suspend requested, until
/// its last process exits; then the closed lid's suspend follows (refused here: CanSuspend=na).
#[test]
fn run_holds_past_the_inactivity_timeout_until_its_last_process_exits() {
    let Some((_serial, logind, home)) = private_logind() else {
        return;
    };
    if !only_where_logind_says_na(&logind, "CanSuspend") {
        return;
    }
    home.ok(&[
        "settings",
        "--session-timeout-minutes",
        "1",
        "--post-stop-suspend-delay-seconds",
        "0",
    ]);
    let (proc_root, sys_root) = crate::util::fake_roots(&home, "closed");
    let release = home.path().join("release");
    let script = format!(
        "(while [ ! -e '{}' ]; do sleep 0.1; done) >/dev/null 2>&1 & exit 0",
        release.display()
    );
    let started = std::time::Instant::now();
    let mut run = home
        .cmd(&["run", "--reason", "long", "--", "sh", "-c", &script])
        .env("LIDGUARD_PROC_ROOT", &proc_root)
        .env("LIDGUARD_SYS_ROOT", &sys_root)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(eventually(WAIT, || home.status()["lid"] == "Closed"));
    // `run` registers its session before the command starts; the loop checks from then on.
    assert!(eventually(WAIT, || home.status()["sessions"][0]["state"] == "active"));
    let history = || -> serde_json::Value {
        serde_json::from_str(&home.ok(&["suspend-history", "--json"])).unwrap()
    };
    while started.elapsed() < Duration::from_secs(75) {
        let held = logind.block_inhibited();
        assert!(
            held.split(':').any(|w| w == "sleep"),
            "sleep not blocked after {:?}: {held:?}",
            started.elapsed()
        );
        let status = home.status();
        assert_eq!(status["sessions"][0]["state"], "active", "{status}");
        assert_eq!(history(), serde_json::json!([]), "a suspend was requested");
        assert!(run.try_wait().unwrap().is_none());
        std::thread::sleep(Duration::from_secs(1));
    }
    std::fs::write(&release, "").unwrap();
    assert_eq!(run.wait().unwrap().code(), Some(0));
    assert!(
        eventually(WAIT, || history().as_array().is_some_and(|h| !h.is_empty())),
        "no suspend followed the end of the work; log:\n{}",
        logind.log()
    );
    assert_eq!(history()[0]["reason"], "Completed");
}

/// Acknowledged means durable: a start or a stop with the daemon killed (`kill -9`) at a random
/// moment around it (before the request, while it is handled, right after the answer), until
/// 100 were acknowledged; the moments are drawn around this machine's answer time, so a loaded
/// machine tests the same. Every change the daemon acknowledged is there after the restart, and no inhibitor
/// outlives a killed daemon in the real logind.
#[test]
fn acknowledged_starts_and_stops_survive_kill_9_at_random_moments() {
    use lidguard_core::provider::Provider;
    use lidguard_core::session::StopKind;
    use lidguard_ipc::protocol::{Request, SessionRef};

    let Some((_serial, logind, home)) = private_logind() else {
        return;
    };
    let agent = crate::util::Agent::spawn();
    let pid = agent.pid().to_string();
    let ensure_daemon = || {
        if home.daemon_pid().is_none() {
            let out = home.run(&[
                "start",
                "--provider",
                "custom",
                "--session",
                "anchor",
                "--parent-pid",
                &pid,
            ]);
            assert!(out.status.success(), "{out:?}");
        }
        home.daemon_pid().expect("the daemon started")
    };
    // xorshift: reproducible moments without a random-number crate.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut acknowledged, mut lost) = (0, Vec::new());
    let mut present = std::collections::BTreeSet::new();
    // How long answers take here, from the answered trials: the kills are drawn around it, so
    // about half the trials are answered on a fast machine and on a loaded one alike.
    let mut answer_times: Vec<Duration> = Vec::new();
    let mut trials = 0;
    while acknowledged < 100 && trials < 600 {
        let trial = trials;
        trials += 1;
        let daemon = ensure_daemon();
        let id = format!("s{}", next() % 4);
        let session = SessionRef {
            provider: Provider::Custom,
            session_id: id.clone(),
            provider_name: None,
        };
        let starting = !present.contains(&id);
        let request = if starting {
            Request::Start {
                session,
                cwd: None,
                transcript_path: None,
                watched_pid: Some(agent.pid()),
            }
        } else {
            Request::Stop {
                session,
                kind: StopKind::Manual,
                end_reason: None,
                pending_work: None,
            }
        };
        // Most kills fall within a few answer times; some before the request arrives.
        answer_times.sort();
        let typical = answer_times
            .get(answer_times.len() / 2)
            .copied()
            .unwrap_or(Duration::from_millis(4));
        let range = u64::try_from(typical.as_micros() * 3)
            .unwrap_or(u64::MAX)
            .max(1000);
        let delay = Duration::from_micros(next() % range);
        let answered = std::thread::scope(|scope| {
            let killer = scope.spawn(|| {
                std::thread::sleep(delay);
                signal(daemon, rustix::process::Signal::KILL);
            });
            let asked = std::time::Instant::now();
            let answer =
                lidguard_ipc::client::request(&home.places, &request, Duration::from_secs(5));
            let took = asked.elapsed();
            killer.join().unwrap();
            let answered = answer.is_ok_and(|r| r.ok);
            if answered {
                answer_times.push(took);
            }
            answered
        });
        // Gone for good, not only its main thread: the others may still hold the socket open
        // while /proc shows the main thread as a zombie.
        let gone = || {
            !alive(daemon)
                && std::fs::read_dir(format!("/proc/{daemon}/task"))
                    .map_or(true, |t| t.count() <= 1)
        };
        assert!(eventually(WAIT, gone), "trial {trial}");
        ensure_daemon();
        let now = home.session_ids();
        let there = now.contains(&id);
        if answered {
            acknowledged += 1;
            if there != starting {
                lost.push(format!(
                    "trial {trial}: acknowledged {} of {id} lost",
                    if starting { "start" } else { "stop" }
                ));
            }
        }
        if there {
            present.insert(id);
        } else {
            present.remove(&id);
        }
    }
    assert!(
        lost.is_empty(),
        "{} of {acknowledged} lost: {lost:#?}",
        lost.len()
    );
    // With the kills drawn around this machine's answer time, 600 trials without 100 answers
    // mean answers stopped coming, not that the machine is slow.
    assert!(
        acknowledged >= 100,
        "only {acknowledged} of {trials} trials were answered before the kill"
    );
    let last = home.daemon_pid().unwrap();
    signal(last, rustix::process::Signal::KILL);
    assert!(eventually(WAIT, || !alive(last)));
    assert!(
        eventually(WAIT, || logind
            .list_inhibitors()
            .iter()
            .all(|i| i.1 != "lidguard")),
        "inhibitors outlived the daemon: {:?}",
        logind.list_inhibitors()
    );
    eprintln!("200 kill -9 trials: {acknowledged} acknowledged, 0 lost");
}

/// `lidguard <args>` with the fake `/proc` and `/sys` roots (the daemon it starts reads the lid,
/// displays and battery there); must succeed; returns stdout.
#[track_caller]
fn ok_with_roots(home: &Home, (proc_root, sys_root): (&Path, &Path), args: &[&str]) -> String {
    let out = home
        .cmd(args)
        .env("LIDGUARD_PROC_ROOT", proc_root)
        .env("LIDGUARD_SYS_ROOT", sys_root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `systemctl --check-inhibitors=yes suspend` against the private logind, as a user on a
/// terminal runs it (the flag makes systemctl check inhibitors as it does for them). systemctl
/// refuses to run unless `/run/systemd/system` exists, so it runs in a mount namespace of its
/// own where a private tmpfs provides that directory; it reaches logind through
/// `DBUS_SYSTEM_BUS_ADDRESS`. Returns its exit status and what it printed.
fn systemctl_suspend(logind: &lidguard_testbus::PrivateLogind) -> (bool, String) {
    let out = std::process::Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(
            "mount -t tmpfs none /run/systemd && mkdir /run/systemd/system && \
             exec systemctl --check-inhibitors=yes suspend",
        )
        .env("DBUS_SYSTEM_BUS_ADDRESS", logind.address())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn a_users_suspend_goes_through_with_the_lid_open_and_is_refused_with_it_closed() {
    let Some((_serial, logind, home)) = private_logind() else {
        return;
    };
    // systemctl will ask this logind to suspend: only where it cannot.
    if !only_where_logind_says_na(&logind, "CanSuspend") {
        return;
    }
    let (proc_root, sys_root) = crate::util::fake_roots(&home, "open");
    let lidguard = |args: &[&str]| ok_with_roots(&home, (&proc_root, &sys_root), args);
    lidguard(&["start", "--provider", "claude", "--session", "s1"]);
    assert!(eventually(WAIT, || home.status()["lid"] == "Open"));
    // An agent works with the lid open: idle handling and the lid switch are refused, sleep
    // gives way.
    assert_eq!(logind.block_inhibited(), "idle:handle-lid-switch");
    assert_eq!(logind.delay_inhibited(), "sleep");
    let (ok, said) = systemctl_suspend(&logind);
    eprintln!("lid open, an agent working: systemctl suspend said: {said}");
    assert!(!ok);
    assert!(!said.contains("inhibited"), "{said}");
    // Past the inhibitor check, logind itself answers: this machine cannot sleep at all.
    assert!(
        said.contains("Call to Suspend failed: Sleep verb \"suspend\" not supported"),
        "{said}"
    );

    // The lid closes (the daemon looks when a session stops): now sleep is refused too.
    crate::util::set_lid(&proc_root, "closed");
    lidguard(&["start", "--provider", "custom", "--session", "s2"]);
    lidguard(&["stop", "--provider", "custom", "--session", "s2"]);
    assert_eq!(
        logind.wait_block_inhibited(WAIT, |s| s.contains("sleep")),
        "sleep:idle:handle-lid-switch"
    );
    assert_eq!(logind.delay_inhibited(), "");
    let (ok, said) = systemctl_suspend(&logind);
    eprintln!("lid closed, an agent working: systemctl suspend said: {said}");
    assert!(!ok);
    assert!(
        said.contains("Operation inhibited by \"lidguard\"")
            && said.contains("1 agent session working"),
        "{said}"
    );
}

/// The whole sequence with logind able to sleep (a stand-in for PID 1 takes the unit it
/// starts): the user suspends while an agent works with the lid open; logind announces it,
/// lidguard lets go at once (logind would otherwise wait `InhibitDelayMaxSec`, 5 s), records
/// the suspend, and holds protection again once logind says the machine is back.
#[test]
fn a_suspend_the_user_asks_for_is_let_through_recorded_and_protection_comes_back() {
    let _serial = lidguard_testbus::serial();
    let Some(logind) = lidguard_testbus::logind_able_to_sleep_or_skip() else {
        return;
    };
    let home = Home::with_bus(logind.address());
    home.ok(&["start", "--provider", "claude", "--session", "s1"]);
    assert_eq!(logind.delay_inhibited(), "sleep");
    assert_eq!(logind.block_inhibited(), "idle:handle-lid-switch");
    let asked = std::time::Instant::now();
    let answer = logind.bus().busctl(&[
        "call",
        "org.freedesktop.login1",
        "/org/freedesktop/login1",
        "org.freedesktop.login1.Manager",
        "Suspend",
        "b",
        "false",
    ]);
    eprintln!("logind answered the user's Suspend with {answer:?}");
    assert!(answer.is_ok(), "{answer:?}; logind log:\n{}", logind.log());
    assert!(
        eventually(WAIT, || !logind.started_units().is_empty()),
        "logind never started the sleep unit; its log:\n{}",
        logind.log()
    );
    let (unit, at) = logind.started_units()[0].clone();
    assert_eq!(unit, "suspend.target");
    let waited = at.duration_since(asked);
    eprintln!("suspend.target started {waited:?} after the user's Suspend");
    assert!(
        waited < Duration::from_secs(2),
        "logind waited {waited:?}: lidguard did not let go of its delay lock"
    );
    let history = || -> serde_json::Value {
        serde_json::from_str(&home.ok(&["suspend-history", "--json"])).unwrap()
    };
    assert!(eventually(WAIT, || history()
        .as_array()
        .is_some_and(|h| !h.is_empty())));
    let entry = &history()[0];
    assert_eq!(entry["reason"], "UserRequested", "{entry}");
    assert_eq!(entry["succeeded"], true);
    assert_eq!(entry["activeSessionCount"], 1);
    // Back from sleep (the job is done): the session still works, protection is held again.
    // Each lock is its own Inhibit call: wait for the whole set, not the first one back.
    assert_eq!(
        logind.wait_block_inhibited(WAIT, |s| s == "idle:handle-lid-switch"),
        "idle:handle-lid-switch"
    );
    assert!(
        eventually(WAIT, || logind.delay_inhibited() == "sleep"),
        "{}",
        logind.delay_inhibited()
    );
    let events = home.ok(&["events", "--since", "all"]);
    let order: Vec<usize> = ["suspend-by-user", "resumed", "protection-taken"]
        .iter()
        .map(|k| {
            events
                .rfind(&format!("  {k}"))
                .unwrap_or_else(|| panic!("{k} missing:\n{events}"))
        })
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{events}");
    let text = home.ok(&["suspend-history"]);
    assert!(text.contains("UserRequested"), "{text}");
}

/// A simulated battery (the kernel's `power_supply` files below a fake sys root): `percent`
/// charge, AC plugged in or not.
fn set_battery(sys_root: &std::path::Path, percent: u32, ac_online: bool) {
    let supplies = sys_root.join("class/power_supply");
    let battery = supplies.join("BAT0");
    let ac = supplies.join("AC");
    std::fs::create_dir_all(&battery).unwrap();
    std::fs::create_dir_all(&ac).unwrap();
    std::fs::write(battery.join("type"), "Battery\n").unwrap();
    std::fs::write(battery.join("capacity"), format!("{percent}\n")).unwrap();
    let status = if ac_online { "Charging" } else { "Discharging" };
    std::fs::write(battery.join("status"), format!("{status}\n")).unwrap();
    std::fs::write(ac.join("type"), "Mains\n").unwrap();
    std::fs::write(ac.join("online"), if ac_online { "1\n" } else { "0\n" }).unwrap();
}

#[test]
fn the_battery_floor_releases_and_retakes_protection_from_a_simulated_battery() {
    let Some((_serial, logind, home)) = private_logind() else {
        return;
    };
    let (proc_root, sys_root) = crate::util::fake_roots(&home, "open");
    set_battery(&sys_root, 50, false);
    let lidguard = |args: &[&str]| ok_with_roots(&home, (&proc_root, &sys_root), args);
    // The daemon reads the machine when a session stops.
    let look = || {
        lidguard(&["start", "--provider", "custom", "--session", "look"]);
        lidguard(&["stop", "--provider", "custom", "--session", "look"]);
    };
    lidguard(&["start", "--provider", "claude", "--session", "s1"]);
    look();
    assert_eq!(
        home.status()["battery"],
        serde_json::json!({"percent": 50, "onBattery": true})
    );
    assert_eq!(logind.block_inhibited(), "idle:handle-lid-switch");

    // Below the default floor of 10%: everything is released, the session stays tracked.
    set_battery(&sys_root, 8, false);
    look();
    assert_eq!(logind.wait_block_inhibited(WAIT, str::is_empty), "");
    assert_eq!(logind.delay_inhibited(), "");
    let status = home.status();
    assert_eq!(status["protection"]["held"], false);
    let why = status["protection"]["batteryFloor"].as_str().unwrap();
    assert_eq!(why, "on battery at 8%, below the battery floor of 10%");
    assert_eq!(status["sessions"][0]["sessionId"], "s1");
    let text = lidguard(&["status"]);
    assert!(text.contains("released for the battery"), "{text}");
    assert!(text.contains("battery 8% (on battery)"), "{text}");

    // AC power comes back: protection too.
    set_battery(&sys_root, 8, true);
    look();
    // Each lock is its own Inhibit call: wait for the whole set, not the first one back.
    assert_eq!(
        logind.wait_block_inhibited(WAIT, |s| s == "idle:handle-lid-switch"),
        "idle:handle-lid-switch"
    );
    assert!(
        eventually(WAIT, || logind.delay_inhibited() == "sleep"),
        "{}",
        logind.delay_inhibited()
    );
    assert_eq!(
        home.status()["protection"]["batteryFloor"],
        serde_json::Value::Null
    );
    let events = lidguard(&["events", "--since", "all"]);
    for line in [
        "battery-floor-reached  on battery at 8%, below the battery floor of 10%",
        "protection-released",
        "battery-floor-cleared  on AC power at 8%",
    ] {
        assert!(events.contains(line), "{line} missing:\n{events}");
    }
    // `off`: never released.
    set_battery(&sys_root, 3, false);
    lidguard(&["settings", "--battery-floor-percent", "off"]);
    look();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(logind.block_inhibited(), "idle:handle-lid-switch");
}

/// A Mac's power sources as IOKit describes them, recorded below a fake sys root (the reader the
/// macOS backend runs on IOKit's answer reads this file where the system is relocated).
fn set_mac_power(sys_root: &std::path::Path, percent: u32, on_battery: bool) {
    let state = if on_battery {
        "Battery Power"
    } else {
        "AC Power"
    };
    let snapshot = serde_json::json!({
        "providing": state,
        "sources": [{
            "Type": "InternalBattery",
            "Name": "InternalBattery-0",
            "Power Source State": state,
            "Current Capacity": percent,
            "Max Capacity": 100,
            "Is Present": true,
            "Is Charging": !on_battery,
        }],
    });
    let power = sys_root.join("power");
    std::fs::create_dir_all(&power).unwrap();
    replace(&power.join("power-sources.json"), &snapshot.to_string());
}

/// `NSProcessInfo.thermalState`'s number (0 nominal … 3 critical), recorded the same way.
fn set_thermal_state(sys_root: &std::path::Path, state: u8) {
    replace(&sys_root.join("power/thermal-state"), &format!("{state}\n"));
}

/// Writes `path` whole at once, as the OS hands over a reading: the daemon, woken by the
/// write, never reads it half written.
fn replace(path: &std::path::Path, text: &str) {
    let partial = path.with_extension("partial");
    std::fs::write(&partial, text).unwrap();
    std::fs::rename(&partial, path).unwrap();
}

/// The daemon with a closed lid held while an agent works, its power source and thermal state
/// scripted as a Mac reports them: at the battery floor the hold ends and lidguard asks for
/// sleep (refused here: CanSuspend=na, and recorded), AC power brings it back; at a serious
/// thermal state the same, until the machine cools down. Each says why in `status` and in the
/// event stream.
#[test]
fn a_closed_lid_hold_ends_with_sleep_at_the_battery_floor_and_in_the_heat() {
    let Some((_serial, logind, home)) = private_logind() else {
        return;
    };
    if !only_where_logind_says_na(&logind, "CanSuspend") {
        return;
    }
    let (proc_root, sys_root) = crate::util::fake_roots(&home, "closed");
    set_mac_power(&sys_root, 50, true);
    set_thermal_state(&sys_root, 0);
    let lidguard = |args: &[&str]| ok_with_roots(&home, (&proc_root, &sys_root), args);
    lidguard(&["start", "--provider", "claude", "--session", "s1"]);
    assert!(eventually(WAIT, || home.status()["lid"] == "Closed"));
    let held = logind.wait_block_inhibited(WAIT, |s| s.contains("sleep"));
    assert!(held.split(':').any(|w| w == "sleep"), "{held:?}");
    let status = home.status();
    assert_eq!(
        status["battery"],
        serde_json::json!({"percent": 50, "onBattery": true})
    );
    assert_eq!(status["thermalState"], "nominal");
    let history = || -> Vec<serde_json::Value> {
        serde_json::from_str(&home.ok(&["suspend-history", "--json"])).unwrap()
    };

    // Below the floor (10% by default): released, and a sleep asked for, once.
    set_mac_power(&sys_root, 8, true);
    assert!(
        eventually(WAIT, || !history().is_empty()),
        "no sleep was asked for; log:\n{}",
        logind.log()
    );
    let entry = &history()[0];
    assert_eq!(entry["reason"], "BatteryFloor", "{entry}");
    assert_eq!(entry["suspendMode"], "Sleep");
    assert_eq!(entry["activeSessionCount"], 1);
    assert!(
        entry["error"].as_str().unwrap().contains("CanSuspend=na"),
        "{entry}"
    );
    assert_eq!(logind.wait_block_inhibited(WAIT, str::is_empty), "");
    let status = home.status();
    assert_eq!(status["protection"]["held"], false);
    assert_eq!(
        status["protection"]["batteryFloor"],
        "on battery at 8%, below the battery floor of 10%"
    );
    assert_eq!(status["sessions"][0]["sessionId"], "s1", "still tracked");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(history().len(), 1, "asked once");

    // On AC power: held again.
    set_mac_power(&sys_root, 8, false);
    let held = logind.wait_block_inhibited(WAIT, |s| s.contains("sleep"));
    assert!(held.split(':').any(|w| w == "sleep"), "{held:?}");

    // Serious heat: released and a sleep asked for; cooler again, held again.
    set_thermal_state(&sys_root, 2);
    assert!(
        eventually(WAIT, || history().len() == 2),
        "no sleep for the heat; log:\n{}",
        logind.log()
    );
    assert_eq!(history()[1]["reason"], "ThermalPressure");
    assert_eq!(logind.wait_block_inhibited(WAIT, str::is_empty), "");
    let status = home.status();
    assert_eq!(
        status["protection"]["thermalPressure"],
        "the thermal state is serious"
    );
    assert_eq!(status["thermalState"], "serious");
    let text = lidguard(&["status"]);
    assert!(
        text.contains("released for the heat: the thermal state is serious"),
        "{text}"
    );
    assert!(text.contains("thermal state serious"), "{text}");
    set_thermal_state(&sys_root, 1);
    let held = logind.wait_block_inhibited(WAIT, |s| s.contains("sleep"));
    assert!(held.split(':').any(|w| w == "sleep"), "{held:?}");

    let events = lidguard(&["events", "--since", "all"]);
    for line in [
        "battery-floor-reached  on battery at 8%, below the battery floor of 10%",
        "suspend-requested  Sleep (BatteryFloor): on battery at 8%, below the battery floor of 10%",
        "battery-floor-cleared  on AC power at 8%",
        "thermal-pressure-reached  the thermal state is serious",
        "suspend-requested  Sleep (ThermalPressure): the thermal state is serious",
        "thermal-pressure-cleared  the thermal state is fair",
    ] {
        assert!(events.contains(line), "{line} missing:\n{events}");
    }
}
