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
