use crate::util::Home;

#[test]
fn settings_set_print_and_reject_with_clear_messages() {
    let home = Home::new();
    let out = home.ok(&[
        "settings",
        "--session-timeout-minutes",
        "off",
        "--suspend-mode=hibernate",
    ]);
    assert!(out.contains("session-timeout-minutes: 12 -> off"), "{out}");
    let json: serde_json::Value = serde_json::from_str(&home.ok(&["settings", "--json"])).unwrap();
    assert_eq!(json["sessionTimeoutMinutes"], serde_json::Value::Null);
    assert_eq!(json["suspendMode"], "Hibernate");
    assert!(
        json.get("skipSuspendWhenLidCloseDoesNothing").is_none(),
        "Windows-only field hidden"
    );

    // Out of range: rejected, named, and nothing saved.
    let before = std::fs::read_to_string(home.places.settings_file()).unwrap();
    let out = home.run(&[
        "settings",
        "--post-stop-suspend-sound-volume-override-percent",
        "101",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("post-stop-suspend-sound-volume-override-percent") && err.contains("100"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(home.places.settings_file()).unwrap(),
        before
    );

    // Several flags are all-or-nothing.
    let out = home.run(&[
        "settings",
        "--suspend-mode",
        "sleep",
        "--session-timeout-minutes",
        "0",
    ]);
    assert!(!out.status.success());
    assert_eq!(
        std::fs::read_to_string(home.places.settings_file()).unwrap(),
        before
    );

    // Windows-only settings say so.
    let out = home.run(&[
        "settings",
        "--skip-suspend-when-lid-close-does-nothing",
        "true",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("Windows"));

    let text = home.ok(&["settings"]);
    assert!(
        text.contains("suspend-mode") && text.contains("hibernate"),
        "{text}"
    );
}

#[test]
fn settings_reach_a_running_daemon() {
    let home = Home::new();
    home.ok(&["start", "--provider", "claude", "--session", "s"]);
    let out = home.ok(&["settings", "--session-timeout-minutes", "30"]);
    assert!(out.contains("The running daemon uses them now"), "{out}");
    assert_eq!(home.status()["settings"]["sessionTimeoutMinutes"], 30);
}

#[test]
fn help_overview_and_per_command_help_share_one_source() {
    let home = Home::new();
    let overview = home.ok(&["help"]);
    for word in [
        "Sessions:",
        "Settings:",
        "start",
        "remove-session",
        "cleanup-orphans",
        "run-server",
    ] {
        assert!(overview.contains(word), "{word} missing:\n{overview}");
    }
    let via_help = home.ok(&["help", "start"]);
    let via_flag = home.ok(&["start", "--help"]);
    assert_eq!(via_help, via_flag);
    assert!(via_flag.contains("--parent-pid"));
    let out = home.run(&["help", "nonsense"]);
    assert!(!out.status.success());
}
