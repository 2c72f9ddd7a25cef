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
    let err = home.fails(&[
        "settings",
        "--post-stop-suspend-sound-volume-override-percent",
        "101",
    ]);
    assert!(
        err.contains("post-stop-suspend-sound-volume-override-percent") && err.contains("100"),
        "{err}"
    );
    assert_unchanged(&home, &before);

    // Several flags are all-or-nothing.
    let out = home.run(&[
        "settings",
        "--suspend-mode",
        "sleep",
        "--session-timeout-minutes",
        "0",
    ]);
    assert!(!out.status.success());
    assert_unchanged(&home, &before);

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
    // `--help` is the same overview; plumbing is listed by name only, each still explained.
    assert_eq!(home.ok(&["--help"]), overview);
    assert_eq!(home.ok(&["-h"]), overview);
    assert!(overview.contains("Getting started:\n  setup"), "{overview}");
    assert!(
        !overview.contains("  claude-hook  "),
        "plumbing has no description line in the overview:\n{overview}"
    );
    assert!(overview.lines().count() < 100, "{overview}");
    assert!(home.ok(&["help", "claude-hook"]).contains("stdin"));
    let via_help = home.ok(&["help", "start"]);
    let via_flag = home.ok(&["start", "--help"]);
    assert_eq!(via_help, via_flag);
    assert!(via_flag.contains("--parent-pid"));
    let out = home.run(&["help", "nonsense"]);
    assert!(!out.status.success());
}

#[test]
fn help_fits_an_80_column_terminal_and_help_flag_with_a_command_is_its_help() {
    let home = Home::new();
    let at_80 = |args: &[&str]| {
        let out = home.cmd(args).env("COLUMNS", "80").output().unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let overview = at_80(&["--help"]);
    let mut commands = Vec::new();
    for line in overview.lines() {
        assert!(line.chars().count() <= 80, "overview: {line}");
        if let Some(name) = line
            .strip_prefix("  ")
            .and_then(|l| l.split_whitespace().next())
            && !line.starts_with("   ")
            && !name.ends_with(',')
        {
            commands.push(name.to_owned());
        }
    }
    assert!(commands.len() > 30, "{overview}");
    for command in &commands {
        let help = at_80(&["help", command]);
        for line in help.lines() {
            assert!(line.chars().count() <= 80, "help {command}: {line}");
        }
        assert_eq!(at_80(&["--help", command]), help, "--help {command}");
    }
    let out = home.run(&["--help", "nonsense"]);
    assert_eq!(out.status.code(), Some(2));
    // Every usage mistake exits 2: an unknown command to `help`, a value a setting does not
    // take, as clap's own (an unknown flag).
    for args in [
        &["help", "nonsense"][..],
        &["settings", "--suspend-mode", "bogus"],
        &["settings", "--no-such-setting", "1"],
    ] {
        assert_eq!(home.run(args).status.code(), Some(2), "{args:?}");
    }
    // Completions offer the values a setting takes.
    let bash = home.ok(&["completions", "bash"]);
    assert!(
        bash.contains("\"deny allow ask remote\""),
        "completions offer the choices"
    );
}

#[test]
fn doctor_and_status_colour_a_terminal_unless_no_color_is_set() {
    let home = Home::new();
    home.ok(&["start", "--provider", "custom", "--session", "s"]);
    let doctor = on_terminal(&home, "doctor", "");
    assert!(
        doctor.contains("\u{1b}[32m✓\u{1b}[0m executables"),
        "{doctor:?}"
    );
    assert!(
        doctor.contains("\u{1b}[31m✗\u{1b}[0m"),
        "no power backend here: {doctor:?}"
    );
    let status = on_terminal(&home, "status", "");
    assert!(
        status.contains("\u{1b}[31mProtection:"),
        "wanted, not held (no bus): {status:?}"
    );
    let plain = on_terminal_with(&home, &[("NO_COLOR", "1".into())], "doctor", "");
    assert!(!plain.contains('\u{1b}'), "{plain:?}");
    assert!(plain.contains("✓ executables"), "{plain:?}");
    // Into a pipe: no colour either.
    assert!(!home.run(&["doctor"]).stdout.contains(&0x1b));
}

/// Runs `lidguard <args>` on a pseudo-terminal (util-linux `script`), typing `input`.
fn on_terminal(home: &Home, args: &str, input: &str) -> String {
    on_terminal_with(home, &[], args, input)
}

/// [`on_terminal`] with more environment variables (the agents' config directories).
fn on_terminal_with(
    home: &Home,
    env: &[(&str, std::path::PathBuf)],
    args: &str,
    input: &str,
) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("script")
        .args(["-qec", &format!("{} {args}", crate::util::BIN), "/dev/null"])
        .envs(env.iter().cloned())
        .env("LIDGUARD_HOME", home.path())
        .env("DBUS_SYSTEM_BUS_ADDRESS", &home.bus)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("util-linux `script` runs commands on a pseudo-terminal");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn on_a_terminal_a_missing_provider_is_asked_for() {
    let home = Home::new();
    let screen = on_terminal(&home, "start --session tty", "42\nclaude\n");
    assert!(screen.contains("Which agent is this for?"), "{screen}");
    assert!(
        screen.contains("`42` is not one of the choices."),
        "{screen}"
    );
    assert_eq!(home.session("tty").unwrap()["provider"], "claude");
}

#[test]
fn on_a_terminal_settings_opens_the_editor() {
    let home = Home::new();
    let screen = on_terminal(
        &home,
        "settings",
        "session-timeout-minutes\n0\nsession-timeout-minutes\n30\ns\n",
    );
    assert!(screen.contains("Not changed:"), "{screen}");
    assert!(
        screen.contains("session-timeout-minutes: 12 -> 30"),
        "{screen}"
    );
    let json: serde_json::Value = serde_json::from_str(&home.ok(&["settings", "--json"])).unwrap();
    assert_eq!(json["sessionTimeoutMinutes"], 30);
}

#[test]
fn linux_permission_install_and_remove_leave_foreign_rules_alone() {
    let home = crate::util::Home::new();
    let rules = home.path().join("rules.d");
    std::fs::create_dir_all(&rules).unwrap();
    let neighbour = rules.join("50-default.rules");
    std::fs::write(
        &neighbour,
        "polkit.addAdminRule(function() { return []; });\n",
    )
    .unwrap();
    let dir = rules.to_str().unwrap();

    home.ok(&[
        "linux-permission",
        "install",
        "--rules-dir",
        dir,
        "--user",
        "alice",
    ]);
    let ours = std::fs::read_to_string(rules.join("49-lidguard.rules")).unwrap();
    assert!(ours.contains("\"alice\"") && ours.contains("org.freedesktop.login1.suspend"));
    let status = home.ok(&["linux-permission", "status", "--rules-dir", dir]);
    assert!(status.contains("installed for alice"), "{status}");
    home.ok(&["linux-permission", "remove", "--rules-dir", dir]);
    assert!(!rules.join("49-lidguard.rules").exists());
    assert_eq!(
        std::fs::read_to_string(&neighbour).unwrap(),
        "polkit.addAdminRule(function() { return []; });\n"
    );

    // A file of that name lidguard did not write: never overwritten, never deleted.
    let foreign = "// the admin's own rule\n";
    std::fs::write(rules.join("49-lidguard.rules"), foreign).unwrap();
    for action in ["install", "remove"] {
        let out = home
            .cmd(&[
                "linux-permission",
                action,
                "--rules-dir",
                dir,
                "--user",
                "alice",
            ])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{action} must refuse");
        assert!(!String::from_utf8_lossy(&out.stderr).is_empty());
        assert_eq!(
            std::fs::read_to_string(rules.join("49-lidguard.rules")).unwrap(),
            foreign
        );
    }
    let status = home.ok(&["linux-permission", "status", "--rules-dir", dir]);
    assert!(status.contains("not managed by lidguard"), "{status}");
}

#[test]
fn the_interactive_editor_refreshes_installed_hook_timeouts_too() {
    let home = Home::new();
    let claude = home.path().join("claude");
    std::fs::create_dir_all(&claude).unwrap();
    let agents = [
        ("HOME", home.path().to_path_buf()),
        ("CLAUDE_CONFIG_DIR", claude.clone()),
        ("CODEX_HOME", home.path().join("codex")),
        ("COPILOT_HOME", home.path().join("copilot")),
    ];
    let out = home
        .cmd(&["hook-install", "--provider", "claude"])
        .envs(agents.clone())
        .output()
        .unwrap();
    assert!(out.status.success());
    let screen = on_terminal_with(
        &home,
        &agents,
        "settings",
        "closed-lid-stop-follow-up-webhook-url\nhttp://127.0.0.1:9/x\ns\n",
    );
    assert!(
        screen.contains("refreshed the hook timeout for claude (30 s → 490 s)"),
        "{screen}"
    );
    let text = std::fs::read_to_string(claude.join("settings.json")).unwrap();
    assert!(
        text.contains("\"timeout\": 490") && !text.contains("\"timeout\": 30"),
        "{text}"
    );
    assert!(!home.path().join("codex").exists() && !home.path().join("copilot").exists());
}

#[test]
fn settings_and_status_show_whether_ask_before_sleep_is_on() {
    let home = Home::new();
    assert!(
        home.ok(&["settings"])
            .contains("Ask before sleep: off (hooks wait up to 30 s)")
    );
    home.ok(&[
        "settings",
        "--closed-lid-stop-follow-up-webhook-url",
        "https://n.example/api/webhooks/lidguard/s",
    ]);
    assert!(
        home.ok(&["settings"])
            .contains("Ask before sleep: on (hooks wait up to 490 s)")
    );
    // A change that would be saved but leave ask before sleep silently off is refused, with
    // what is allowed, and nothing is saved.
    let before = std::fs::read_to_string(home.places.settings_file()).unwrap();
    for (flag, value, says) in [
        (
            "--post-stop-suspend-delay-seconds",
            "5",
            "--post-stop-suspend-delay-seconds must be at least 10 while asking before sleep",
        ),
        (
            "--closed-lid-stop-follow-up-delay-seconds",
            "5",
            "expected 0 (do not ask) or 20 to 86400 seconds",
        ),
    ] {
        let out = home.run(&["settings", flag, value]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(says), "{flag}: {err}");
        assert_unchanged(&home, &before);
    }
    // Turning ask before sleep off goes through, as does setting both values in one command.
    home.ok(&[
        "settings",
        "--closed-lid-stop-follow-up-delay-seconds",
        "0",
        "--post-stop-suspend-delay-seconds",
        "5",
    ]);
    home.ok(&[
        "settings",
        "--closed-lid-stop-follow-up-delay-seconds",
        "60",
        "--post-stop-suspend-delay-seconds",
        "10",
    ]);
    // A file that already holds such values (edited by hand, an older lidguard) still loads,
    // and the problem is shown.
    let mut file: serde_json::Value = serde_json::from_str(&before).unwrap();
    file["postStopSuspendDelaySeconds"] = 5.into();
    home.write_settings(&file.to_string());
    let shown = home.ok(&["settings"]);
    assert!(
        shown.contains("Ask before sleep: configuration error: ")
            && shown.contains("post-stop-suspend-delay-seconds"),
        "{shown}"
    );
    home.ok(&["start", "--provider", "claude", "--session", "s1"]);
    let status = home.status();
    assert!(
        crate::util::text(&status["askBeforeSleep"]).starts_with("configuration error"),
        "{status}"
    );
    assert!(
        home.ok(&["status"])
            .contains("Ask before sleep: configuration error")
    );
    home.ok(&["stop", "--provider", "claude", "--session", "s1"]);
}

#[test]
fn completions_man_page_and_the_reference_spellings() {
    let home = Home::new();
    // bash: the real bash parses the script, and completing `lidguard hook-` offers the hook
    // commands (the completion function run as bash runs it on Tab).
    let script = home.ok(&["completions", "bash"]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("lidguard.bash");
    std::fs::write(&file, &script).unwrap();
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(
            "source \"$1\" && complete -p lidguard && COMP_WORDS=(lidguard hook-) && \
             COMP_CWORD=1 && COMP_LINE='lidguard hook-' && COMP_POINT=${#COMP_LINE} && \
             _lidguard lidguard hook- lidguard && printf '%s\\n' \"${COMPREPLY[@]}\"",
        )
        .arg("bash")
        .arg(&file)
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{shown}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(shown.contains("complete -o bashdefault"), "{shown}");
    for offered in ["hook-install", "hook-status", "hook-remove", "hook-events"] {
        assert!(
            shown.lines().any(|l| l == offered),
            "{offered} not offered: {shown}"
        );
    }
    for (shell, marker) in [
        ("zsh", "#compdef lidguard"),
        ("fish", "complete -c lidguard"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let text = home.ok(&["completions", shell]);
        assert!(text.contains(marker), "{shell}: {text}");
        assert!(
            text.contains("hook-install"),
            "{shell} lacks the subcommands"
        );
    }

    let page = home.ok(&["man"]);
    assert!(page.contains(".TH lidguard 1"), "{page}");
    assert!(
        page.contains("hook\\-install"),
        "the page lists the subcommands"
    );

    // The reference's spellings.
    for alias in ["hook-uninstall", "mcp-uninstall", "provider-mcp-uninstall"] {
        let out = home.run(&[alias, "--help"]);
        assert!(out.status.success(), "{alias}");
    }
    let sys = home.path().join("sys");
    for (zone, milli) in [(0, "41000\n"), (1, "79000\n")] {
        let dir = sys.join(format!("class/thermal/thermal_zone{zone}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("temp"), milli).unwrap();
    }
    let t = home
        .cmd(&["current-temperature", "high"])
        .env("LIDGUARD_SYS_ROOT", &sys)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&t.stdout),
        "79 °C (high of 2 zone(s))\n"
    );
    let bad = home.run(&["current-temperature", "hot"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown temperature mode"));
}

/// The settings file still holds `before`.
#[track_caller]
fn assert_unchanged(home: &Home, before: &str) {
    assert_eq!(
        std::fs::read_to_string(home.places.settings_file()).unwrap(),
        before
    );
}
