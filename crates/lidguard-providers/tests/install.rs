//! Hook installers: install, remove and status against missing, realistic and broken files.
#![allow(
    clippy::disallowed_methods,
    reason = "tests write fixtures and read the environment"
)]

use lidguard_providers::agents::{claude, codex, copilot, opencode::install as opencode};
use lidguard_providers::install::{
    Change, HookCommand, HookShell, HookSource, InstallError, InstallState,
};
use serde_json::{Value, json};

fn posix(program: &str) -> HookCommand {
    HookCommand {
        program: program.to_owned(),
        shell: HookShell::Posix,
    }
}

fn lidguard() -> HookCommand {
    posix("/usr/local/bin/lidguard")
}

fn changed(change: Result<Change, InstallError>) -> String {
    match change {
        Ok(Change::Changed { new_text }) => new_text,
        other => panic!("expected a change, got {other:?}"),
    }
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// A Claude/Codex settings value the way the capture drivers wrote it
/// (tests/e2e/capture/{claude,codex}/capture.py: `{"hooks": [{"type", "command", "timeout": 30}]}`
/// per event, no matcher).
fn capture_shape(events: &[&str], command: &str, timeout: u32) -> Value {
    let hooks: serde_json::Map<String, Value> = events
        .iter()
        .map(|e| {
            let handler = json!({"type": "command", "command": command, "timeout": timeout});
            ((*e).to_owned(), json!([{"hooks": [handler]}]))
        })
        .collect();
    json!({ "hooks": hooks })
}

/// Claude's shape: every event one matcher-less group whose one handler is in exec form.
fn exec_shape(events: &[&str], program: &str, subcommand: &str, timeout: u32) -> Value {
    let hooks: serde_json::Map<String, Value> = events
        .iter()
        .map(|e| {
            let handler = json!({"type": "command", "command": program, "args": [subcommand],
                                 "timeout": timeout});
            ((*e).to_owned(), json!([{"hooks": [handler]}]))
        })
        .collect();
    json!({ "hooks": hooks })
}

// ---- commands and ownership ---------------------------------------------------------------

#[test]
fn the_program_is_read_back_from_every_rendering() {
    use lidguard_providers::install::program_in;
    let programs = [
        "/usr/local/bin/lidguard-hook",
        "/opt/my tools/lidguard-hook",
        "/opt/it's/lidguard-hook",
        "/home/me/$bin/lidguard-hook",
        r"C:\tools\lidguard-hook.exe",
        r"C:\Program Files\lidguard\lidguard-hook.exe",
        "C:\\O\u{2019}Neil's\\lidguard-hook.exe",
        "lidguard",
    ];
    for program in programs {
        for shell in [HookShell::Posix, HookShell::PowerShell, HookShell::Cmd] {
            let cmd = HookCommand {
                program: program.to_owned(),
                shell,
            };
            let line = cmd.render("codex-hook");
            assert_eq!(
                program_in(&line, "codex-hook").as_deref(),
                Some(program),
                "{shell:?}: {line}"
            );
        }
    }
    assert_eq!(
        program_in("#!/usr/bin/lidguard-hook cline-hook --event", "cline-hook").as_deref(),
        Some("/usr/bin/lidguard-hook")
    );
    assert_eq!(
        program_in(
            "exec '/a b/lidguard-hook' cline-hook --event \"$0\"",
            "cline-hook"
        )
        .as_deref(),
        Some("/a b/lidguard-hook")
    );
    assert_eq!(program_in("notify-send done", "claude-hook"), None);
    assert_eq!(program_in("claude-hook", "claude-hook"), None);
}

#[test]
fn commands_are_quoted_only_when_the_shell_needs_it() {
    assert_eq!(
        lidguard().render("claude-hook"),
        "/usr/local/bin/lidguard claude-hook"
    );
    assert_eq!(
        posix("lidguard").render("codex-hook"),
        "lidguard codex-hook"
    );
    assert_eq!(
        posix("/opt/my tools/lidguard").render("claude-hook"),
        "'/opt/my tools/lidguard' claude-hook"
    );
    assert_eq!(
        posix("/opt/it's/lidguard").render("x"),
        r"'/opt/it'\''s/lidguard' x"
    );
    assert_eq!(
        posix("/home/me/$bin/lidguard").render("x"),
        "'/home/me/$bin/lidguard' x"
    );
    let ps = |p: &str| HookCommand {
        program: p.to_owned(),
        shell: HookShell::PowerShell,
    };
    assert_eq!(
        ps(r"C:\tools\lidguard.exe").render("codex-hook"),
        r"C:\tools\lidguard.exe codex-hook"
    );
    assert_eq!(
        ps(r"C:\Program Files\lidguard\lidguard.exe").render("codex-hook"),
        r"& 'C:\Program Files\lidguard\lidguard.exe' codex-hook"
    );
    assert_eq!(
        ps(r"C:\O'Neil\lidguard.exe").render("x"),
        r"& 'C:\O''Neil\lidguard.exe' x"
    );
    // PowerShell also ends a single-quoted string at U+2018–U+201B: each is doubled too.
    assert_eq!(
        ps("C:\\Users\\O\u{2019}Brien\\lidguard.exe").render("x"),
        "& 'C:\\Users\\O\u{2019}\u{2019}Brien\\lidguard.exe' x"
    );
    assert_eq!(
        ps("C:\\a\u{2018}b\u{201a}c\u{201b}\\lg.exe").render("x"),
        "& 'C:\\a\u{2018}\u{2018}b\u{201a}\u{201a}c\u{201b}\u{201b}\\lg.exe' x"
    );
    let cmd = |p: &str| HookCommand {
        program: p.to_owned(),
        shell: HookShell::Cmd,
    };
    assert_eq!(
        cmd(r"C:\tools\lidguard.exe").render("codex-hook"),
        r"C:\tools\lidguard.exe codex-hook"
    );
    assert_eq!(
        cmd(r"C:\Program Files\lidguard\lidguard.exe").render("codex-hook"),
        r#""C:\Program Files\lidguard\lidguard.exe" codex-hook"#
    );
}

#[test]
fn codex_windows_entries_are_quoted_for_cmd() {
    // Codex runs hooks with `%COMSPEC% /C` on Windows, where `& '…'` would not parse.
    let cmd = HookCommand {
        program: r"C:\Program Files\lidguard\lidguard-hook.exe".to_owned(),
        shell: HookShell::PowerShell,
    };
    let value = parse(&changed(codex::AGENT.hooks.install(None, &cmd, 30)));
    assert_eq!(
        value["hooks"]["Stop"][0]["hooks"][0]["command"],
        json!(r#""C:\Program Files\lidguard\lidguard-hook.exe" codex-hook"#)
    );
}

#[test]
fn ownership_needs_lidguard_and_the_subcommand_as_a_word() {
    let cmd = posix("/opt/lg/bin/lg");
    assert!(cmd.is_ours("lidguard claude-hook", "claude-hook"));
    assert!(cmd.is_ours("\"C:\\LidGuard\\LIDGUARD.EXE\" CLAUDE-HOOK", "claude-hook"));
    assert!(
        cmd.is_ours("/opt/lg/bin/lg claude-hook", "claude-hook"),
        "our program path"
    );
    assert!(cmd.is_ours("'/x y/lidguard' claude-hook; true", "claude-hook"));
    assert!(
        !cmd.is_ours("/opt/lg/bin/lg codex-hook", "claude-hook"),
        "another provider's"
    );
    assert!(
        !cmd.is_ours("~/bin/lidguard-claude-hooks.sh", "claude-hook"),
        "not a whole word"
    );
    assert!(
        !cmd.is_ours("my-claude-hook --x", "claude-hook"),
        "no lidguard"
    );
    assert!(!cmd.is_ours("other claude-hook", "claude-hook"));
}

// ---- Claude --------------------------------------------------------------------------------

#[test]
fn claude_fresh_install_is_in_exec_form() {
    let text = changed(claude::AGENT.hooks.install(None, &lidguard(), 30));
    assert_eq!(
        parse(&text),
        exec_shape(
            claude::install::REQUIRED_EVENTS,
            "/usr/local/bin/lidguard",
            "claude-hook",
            30
        )
    );
    assert!(
        text.starts_with("{\n  \"hooks\": {\n    \"UserPromptSubmit\": [\n"),
        "{text}"
    );
    assert!(text.ends_with("}\n"));
    // An empty or blank file is a missing one; the snippet is that same text.
    assert_eq!(
        changed(claude::AGENT.hooks.install(Some(""), &lidguard(), 30)),
        text
    );
    assert_eq!(
        changed(claude::AGENT.hooks.install(Some("  \n"), &lidguard(), 30)),
        text
    );
    assert_eq!(claude::AGENT.hooks.fresh(&lidguard(), 30), text);
    // The ask-before-sleep timeout goes into every entry.
    let long = parse(&changed(claude::AGENT.hooks.install(
        None,
        &lidguard(),
        490,
    )));
    assert_eq!(long["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"], 490);
}

#[test]
fn claude_windows_entries_need_no_shell() {
    let cmd = HookCommand {
        program: r"C:\Program Files\lidguard\lidguard.exe".to_owned(),
        shell: HookShell::PowerShell,
    };
    let value = parse(&changed(claude::AGENT.hooks.install(None, &cmd, 30)));
    assert_eq!(
        value["hooks"]["Stop"][0]["hooks"][0],
        json!({"type": "command", "command": r"C:\Program Files\lidguard\lidguard.exe",
               "args": ["claude-hook"], "timeout": 30})
    );
}

/// A user's settings: comments, 4-space indentation, one-line handlers, unknown keys, a
/// foreign PreToolUse matcher group, and a Stop group where the user's own command sits next
/// to an old lidguard entry.
const CLAUDE_USER: &str = r#"{
    // Claude Code user settings
    "model": "opus",
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    { "type": "command", "command": "~/bin/guard.sh" }
                ]
            }
        ],
        "Stop": [
            {
                "hooks": [
                    { "type": "command", "command": "notify-send done" },
                    { "type": "command", "command": "/old/lidguard claude-hook", "timeout": 10 }
                ]
            }
        ]
    },
    "statusLine": { "type": "command", "command": "echo hi" } // trailing comment
}
"#;

#[test]
fn claude_install_into_a_user_file_edits_only_lidguard_entries() {
    let cmd = lidguard();
    let installed = changed(claude::AGENT.hooks.install(Some(CLAUDE_USER), &cmd, 30));
    // The old entry is corrected in place, next to the user's command, keeping its one line.
    assert!(installed.contains(
        "                    { \"type\": \"command\", \"command\": \"notify-send done\" },\n                    {\n                        \"type\": \"command\",\n                        \"command\": \"/usr/local/bin/lidguard\",\n                        \"timeout\": 30,\n                        \"args\": [\"claude-hook\"]\n                    }\n"
    ), "{installed}");
    // Comments, unknown keys and the foreign group are untouched.
    assert!(installed.starts_with(
        "{\n    // Claude Code user settings\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"PreToolUse\": [\n            {\n                \"matcher\": \"Bash\",\n                \"hooks\": [\n                    { \"type\": \"command\", \"command\": \"~/bin/guard.sh\" }\n                ]\n            },\n            {\n                \"hooks\": [\n                    {\n                        \"type\": \"command\",\n"
    ), "{installed}");
    assert!(installed.ends_with(
        "    },\n    \"statusLine\": { \"type\": \"command\", \"command\": \"echo hi\" } // trailing comment\n}\n"
    ));
    let value = parse(&strip_comments(&installed));
    assert_eq!(value["model"], "opus");
    assert_eq!(
        value["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "~/bin/guard.sh"
    );
    for event in claude::install::REQUIRED_EVENTS {
        let ours: Vec<&Value> = value["hooks"][event]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["hooks"].as_array().unwrap())
            .filter(|h| h["command"] == "/usr/local/bin/lidguard")
            .collect();
        assert_eq!(
            ours,
            [
                &json!({"type": "command", "command": "/usr/local/bin/lidguard",
                     "args": ["claude-hook"], "timeout": 30})
            ],
            "{event}"
        );
    }
    // Install twice = install once; status agrees.
    assert_eq!(
        claude::AGENT.hooks.install(Some(&installed), &cmd, 30),
        Ok(Change::Unchanged)
    );
    let status = claude::AGENT
        .hooks
        .status(Some(&installed), &cmd, 30)
        .unwrap();
    assert_eq!(status.state, InstallState::Installed, "{status:?}");

    // Remove takes out exactly lidguard's entries: the user's Stop group stays, with its command.
    let removed = changed(claude::AGENT.hooks.remove(&installed, &cmd, None));
    assert_eq!(removed, CLAUDE_USER.replace(
        "                    { \"type\": \"command\", \"command\": \"notify-send done\" },\n                    { \"type\": \"command\", \"command\": \"/old/lidguard claude-hook\", \"timeout\": 10 }\n",
        "                    { \"type\": \"command\", \"command\": \"notify-send done\" }\n",
    ));
    assert_eq!(
        claude::AGENT.hooks.remove(&removed, &cmd, None),
        Ok(Change::Unchanged)
    );
}

#[test]
fn claude_install_then_remove_gives_back_the_same_bytes() {
    let without_ours = changed(claude::AGENT.hooks.remove(CLAUDE_USER, &lidguard(), None));
    for original in [
        without_ours.as_str(),
        "{}",
        "{}\n",
        "{\n\t\"theme\": \"dark\",\n}\n",
        "{\r\n  \"hooks\": {\r\n    \"Stop\": [\r\n      { \"hooks\": [ { \"type\": \"command\", \"command\": \"x\" } ] }\r\n    ]\r\n  }\r\n}\r\n",
        "\u{feff}{\n  \"a\": 1\n}\n",
        "// only a comment\n{\n  /* block */ \"hooks\": {\n    \"Stop\": [\n      { \"matcher\": \"\", \"hooks\": [] } // empty\n    ]\n  }\n}",
    ] {
        let installed = changed(claude::AGENT.hooks.install(Some(original), &lidguard(), 30));
        assert_eq!(
            changed(claude::AGENT.hooks.remove(&installed, &lidguard(), None)),
            original,
            "{installed}"
        );
    }
}

#[test]
fn claude_single_line_containers_come_back_expanded_but_equal() {
    // The CST expands a one-line container it inserts into, and removal cannot know it was
    // one line before: the content comes back, the layout does not.
    let original = r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x"}]}]}}"#;
    let installed = changed(claude::AGENT.hooks.install(Some(original), &lidguard(), 30));
    let removed = changed(claude::AGENT.hooks.remove(&installed, &lidguard(), None));
    assert_ne!(removed, original);
    assert_eq!(parse(&removed), parse(original));
}

#[test]
fn claude_keeps_newline_style_and_bom() {
    let crlf = "{\r\n  \"model\": \"opus\"\r\n}\r\n";
    let installed = changed(claude::AGENT.hooks.install(Some(crlf), &lidguard(), 30));
    assert!(
        !installed.replace("\r\n", "").contains('\n'),
        "{installed:?}"
    );
    let bom = changed(
        claude::AGENT
            .hooks
            .install(Some("\u{feff}{}\n"), &lidguard(), 30),
    );
    assert!(bom.starts_with("\u{feff}{\n"));
    assert_eq!(
        claude::AGENT.hooks.install(Some(&bom), &lidguard(), 30),
        Ok(Change::Unchanged)
    );
}

#[test]
fn claude_status_names_each_drift() {
    let cmd = lidguard();
    assert_eq!(
        claude::AGENT.hooks.status(None, &cmd, 30).unwrap().state,
        InstallState::Missing
    );
    let missing = claude::AGENT
        .hooks
        .status(Some(r#"{"model": "x"}"#), &cmd, 30)
        .unwrap();
    assert_eq!(missing.state, InstallState::Missing);
    assert_eq!(
        missing.missing_events.len(),
        claude::install::REQUIRED_EVENTS.len()
    );

    let mut value = exec_shape(
        claude::install::REQUIRED_EVENTS,
        "/usr/local/bin/lidguard",
        "claude-hook",
        30,
    );
    let hooks = value["hooks"].as_object_mut().unwrap();
    hooks["PreToolUse"][0]["hooks"][0]["timeout"] = json!(10);
    hooks["Stop"][0]["hooks"][0]["command"] = json!("/old/path/lidguard");
    hooks["Notification"][0]["hooks"][0]["statusMessage"] = json!("Starting LidGuard");
    hooks["Elicitation"][0]["matcher"] = json!("my-server");
    hooks.remove("SessionEnd");
    hooks["SubagentStop"]
        .as_array_mut()
        .unwrap()
        .push(json!({"hooks": [{"type": "command", "command": "lidguard claude-hook"}]}));
    hooks.insert(
        "SessionStart".into(),
        json!([{"hooks": [{"type": "command", "command": "lidguard claude-hook"}]}]),
    );
    let text = serde_json::to_string_pretty(&value).unwrap();

    let status = claude::AGENT.hooks.status(Some(&text), &cmd, 30).unwrap();
    assert_eq!(status.state, InstallState::Drifted);
    assert_eq!(status.missing_events, ["SessionEnd"]);
    assert_eq!(
        status.drift,
        [
            "PreToolUse: timeout 10, expected 30",
            "SubagentStop: lidguard's hook is there 2 times",
            "Stop: runs /old/path/lidguard, expected /usr/local/bin/lidguard",
            "Elicitation: lidguard's hook runs only for matcher \"my-server\"",
            "Notification: unexpected statusMessage \"Starting LidGuard\"",
            "SessionStart: lidguard's hook on an event lidguard does not use",
        ]
    );
    // Install fixes every one of them, and the result is the capture shape again.
    let fixed = changed(claude::AGENT.hooks.install(Some(&text), &cmd, 30));
    let mut expected = exec_shape(
        claude::install::REQUIRED_EVENTS,
        "/usr/local/bin/lidguard",
        "claude-hook",
        30,
    );
    // The matcher group lidguard's entry left stays only if something else is in it: it was
    // lidguard's alone, so it goes, and a new matcher-less group takes its place.
    expected["hooks"]
        .as_object_mut()
        .unwrap()
        .remove("SessionStart");
    assert_eq!(
        parse(&fixed)["hooks"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>()
            .len(),
        claude::install::REQUIRED_EVENTS.len()
    );
    assert_eq!(parse(&fixed), expected);
    assert_eq!(
        claude::AGENT
            .hooks
            .status(Some(&fixed), &cmd, 30)
            .unwrap()
            .state,
        InstallState::Installed
    );
    // A newer timeout is drift too: install writes the exact value.
    assert_eq!(
        claude::AGENT
            .hooks
            .status(Some(&fixed), &cmd, 490)
            .unwrap()
            .drift
            .len(),
        claude::install::REQUIRED_EVENTS.len()
    );
}

#[test]
fn claude_entry_under_a_matcher_moves_out_and_the_users_handler_stays() {
    let text = r#"{"hooks": {"PermissionRequest": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "lidguard claude-hook", "timeout": 30},
        {"type": "command", "command": "audit.sh"}]}]}}"#;
    let value = parse(&changed(claude::AGENT.hooks.install(
        Some(text),
        &lidguard(),
        30,
    )));
    assert_eq!(
        value["hooks"]["PermissionRequest"],
        json!([{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]},
               {"hooks": [{"type": "command", "command": "/usr/local/bin/lidguard",
                           "args": ["claude-hook"], "timeout": 30}]}])
    );
}

#[test]
fn claude_reports_conflicting_foreign_hooks() {
    let text = r#"{"hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "keep-going.sh"}]}],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "fmt.sh"}]},
            {"matcher": "Edit", "hooks": [{"type": "prompt", "prompt": "Is this edit safe?"}]}],
        "PermissionRequest": [{"hooks": [{"type": "http", "url": "https://approve.example/x"}]}],
        "PostToolUse": [{"hooks": [{"type": "command", "command": "log.sh"}]}]
    }}"#;
    let status = claude::AGENT
        .hooks
        .status(Some(text), &lidguard(), 30)
        .unwrap();
    let found: Vec<(&str, Option<&str>, &str, &str)> = status
        .foreign_hooks
        .iter()
        .map(|f| {
            (
                f.event.as_str(),
                f.matcher.as_deref(),
                f.handler_type.as_str(),
                f.summary.as_str(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("Stop", None, "command", "keep-going.sh"),
            ("PreToolUse", Some("Edit"), "prompt", "Is this edit safe?"),
            (
                "PermissionRequest",
                None,
                "http",
                "https://approve.example/x"
            ),
        ]
    );
    assert!(
        status
            .foreign_hooks
            .iter()
            .all(|f| f.source == HookSource::Config)
    );
    // A hook that only notifies the user cannot block or answer: not listed. One that does
    // anything more is.
    let notifier = r#"{"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "notify-send 'Claude' 'done'"},
        {"type": "command", "command": "afplay /System/Library/Sounds/Glass.aiff && say done"},
        {"type": "command", "command": "osascript -e 'display notification \"done\"'"}]}],
        "PermissionRequest": [{"hooks": [
        {"type": "command", "command": "notify-send ask | my-approver"},
        {"type": "command", "command": "/usr/bin/notify-send x; ./decide.sh"}]}]}}"#;
    let status = claude::AGENT
        .hooks
        .status(Some(notifier), &lidguard(), 30)
        .unwrap();
    let listed: Vec<&str> = status
        .foreign_hooks
        .iter()
        .map(|f| f.summary.as_str())
        .collect();
    assert_eq!(
        listed,
        [
            "notify-send ask | my-approver",
            "/usr/bin/notify-send x; ./decide.sh"
        ]
    );
}

#[test]
fn claude_warns_when_all_hooks_are_disabled() {
    let status = claude::AGENT
        .hooks
        .status(Some(r#"{"disableAllHooks": true}"#), &lidguard(), 30)
        .unwrap();
    assert_eq!(status.warnings.len(), 1, "{status:?}");
    assert!(
        claude::AGENT
            .hooks
            .status(Some(r#"{"disableAllHooks": false}"#), &lidguard(), 30)
            .unwrap()
            .warnings
            .is_empty()
    );
}

#[test]
fn unparsable_files_are_errors_with_a_position() {
    let cmd = lidguard();
    let err = claude::AGENT
        .hooks
        .install(Some("{\n  \"hooks\": {\n    \"Stop\": [\n}\n"), &cmd, 30)
        .unwrap_err();
    let InstallError::Parse {
        what, line, column, ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (what.as_str(), *line, *column),
        ("Claude Code settings", 4, 1)
    );
    assert!(
        err.to_string()
            .starts_with("Claude Code settings does not parse: "),
        "{err}"
    );
    // JSON5 extras are not JSON the agents read.
    for bad in ["{'a': 1}", "{a: 1}", "{\"a\": 0x10}", "{} {}", "{\"a\": 1"] {
        assert!(
            matches!(
                claude::AGENT.hooks.install(Some(bad), &cmd, 30),
                Err(InstallError::Parse { .. })
            ),
            "{bad}"
        );
        assert!(
            matches!(
                claude::AGENT.hooks.remove(bad, &cmd, None),
                Err(InstallError::Parse { .. })
            ),
            "{bad}"
        );
        assert!(
            matches!(
                claude::AGENT.hooks.status(Some(bad), &cmd, 30),
                Err(InstallError::Parse { .. })
            ),
            "{bad}"
        );
        assert!(
            matches!(
                codex::AGENT.hooks.install(Some(bad), &cmd, 30),
                Err(InstallError::Parse { .. })
            ),
            "{bad}"
        );
        assert!(
            matches!(
                copilot::AGENT.hooks.install(Some(bad), &cmd, 30),
                Err(InstallError::Parse { .. })
            ),
            "{bad}"
        );
    }
    // Comments and trailing commas are fine.
    assert!(
        claude::AGENT
            .hooks
            .install(Some("{ // c\n \"a\": [1,],\n}"), &cmd, 30)
            .is_ok()
    );
}

#[test]
fn shape_errors_name_the_path() {
    let cmd = lidguard();
    let shape = |r: Result<Change, InstallError>| match r {
        Err(InstallError::Shape { path, .. }) => path,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        shape(claude::AGENT.hooks.install(Some("[]"), &cmd, 30)),
        "(top level)"
    );
    assert_eq!(
        shape(
            claude::AGENT
                .hooks
                .install(Some(r#"{"hooks": []}"#), &cmd, 30)
        ),
        "hooks"
    );
    assert_eq!(
        shape(
            claude::AGENT
                .hooks
                .install(Some(r#"{"hooks": {"PreToolUse": {}}}"#), &cmd, 30)
        ),
        "hooks.PreToolUse"
    );
    let err = claude::AGENT
        .hooks
        .install(Some(r#"{"hooks": {"Stop": null}}"#), &cmd, 30)
        .unwrap_err();
    assert_eq!(err.to_string(), "hooks.Stop: is not an array");
    // Status reports what install would refuse.
    let status = claude::AGENT
        .hooks
        .status(Some(r#"{"hooks": {"Stop": 1}}"#), &cmd, 30)
        .unwrap();
    assert_eq!(status.drift, ["hooks.Stop: is not an array"]);
    // Remove has nothing to remove from such a file and leaves it alone.
    assert_eq!(
        claude::AGENT.hooks.remove(r#"{"hooks": []}"#, &cmd, None),
        Ok(Change::Unchanged)
    );
}

// ---- Codex ---------------------------------------------------------------------------------

#[test]
fn codex_fresh_install_has_the_shape_codex_accepted_in_the_captures() {
    let text = changed(codex::AGENT.hooks.install(None, &lidguard(), 30));
    let mut expected = capture_shape(
        codex::install::REQUIRED_EVENTS,
        "/usr/local/bin/lidguard codex-hook",
        30,
    );
    // Codex clamps these two to 3 s and warns at every start when asked for more.
    for event in ["SessionEnd", "Interrupt"] {
        expected["hooks"][event][0]["hooks"][0]["timeout"] =
            codex::install::END_EVENT_TIMEOUT_LIMIT.into();
    }
    assert_eq!(parse(&text), expected);
    assert_eq!(codex::AGENT.hooks.fresh(&lidguard(), 30), text);
    assert_eq!(
        codex::AGENT
            .hooks
            .status(Some(&text), &lidguard(), 30)
            .unwrap()
            .state,
        InstallState::Installed
    );
}

#[test]
fn codex_refuses_top_level_keys_codex_refuses() {
    let text = r#"{"$schema": "https://example.invalid/s.json", "hooks": {}}"#;
    let err = codex::AGENT
        .hooks
        .install(Some(text), &lidguard(), 30)
        .unwrap_err();
    assert!(
        matches!(&err, InstallError::Shape { path, .. } if path == "$schema"),
        "{err:?}"
    );
    let status = codex::AGENT
        .hooks
        .status(Some(text), &lidguard(), 30)
        .unwrap();
    assert_eq!(status.drift.len(), 1);
    assert!(status.drift[0].starts_with("$schema: "), "{status:?}");
    // `description` is allowed and kept.
    let text = "{\n  \"description\": \"team hooks\",\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"./ci-check.sh\"\n          }\n        ]\n      }\n    ]\n  }\n}\n";
    let installed = changed(codex::AGENT.hooks.install(Some(text), &lidguard(), 30));
    assert_eq!(parse(&installed)["description"], "team hooks");
    assert_eq!(
        changed(codex::AGENT.hooks.remove(&installed, &lidguard(), None)),
        text
    );
    let status = codex::AGENT
        .hooks
        .status(Some(&installed), &lidguard(), 30)
        .unwrap();
    assert_eq!(status.state, InstallState::Installed);
    assert_eq!(
        status.foreign_hooks.len(),
        1,
        "the Stop hook can keep Codex going"
    );
}

#[test]
fn codex_remove_of_a_fresh_install_leaves_an_empty_object() {
    let text = changed(codex::AGENT.hooks.install(None, &lidguard(), 30));
    assert_eq!(
        changed(codex::AGENT.hooks.remove(&text, &lidguard(), None)),
        "{}\n"
    );
}

// ---- Copilot -------------------------------------------------------------------------------

#[test]
fn copilot_fresh_file_has_the_shape_copilot_accepted_in_the_captures() {
    let text = changed(copilot::AGENT.hooks.install(None, &lidguard(), 30));
    // tests/e2e/capture/copilot/run.sh write_hooks: {"version":1,"hooks":{ev:[{type,bash,timeoutSec}]}}
    let hooks: serde_json::Map<String, Value> = copilot::install::REQUIRED_EVENTS
        .iter()
        .map(|e| {
            let bash = format!("/usr/local/bin/lidguard copilot-hook --event {e}");
            (
                (*e).to_owned(),
                json!([{"type": "command", "bash": bash, "timeoutSec": 30}]),
            )
        })
        .collect();
    assert_eq!(parse(&text), json!({"version": 1, "hooks": hooks}));
    assert!(
        text.starts_with("{\n  \"version\": 1,\n  \"hooks\": {\n"),
        "{text}"
    );
    assert_eq!(copilot::AGENT.hooks.fresh(&lidguard(), 30), text);
    assert_eq!(
        copilot::AGENT.hooks.install(Some(&text), &lidguard(), 30),
        Ok(Change::Unchanged)
    );
    assert_eq!(
        copilot::AGENT.hooks.remove(&text, &lidguard(), None),
        Ok(Change::Delete)
    );
    let status = copilot::AGENT
        .hooks
        .status(Some(&text), &lidguard(), 30)
        .unwrap();
    assert_eq!(status.state, InstallState::Installed);
}

#[test]
fn copilot_windows_uses_the_powershell_key() {
    let cmd = HookCommand {
        program: r"C:\lidguard\lidguard.exe".to_owned(),
        shell: HookShell::PowerShell,
    };
    let value = parse(&changed(copilot::AGENT.hooks.install(None, &cmd, 30)));
    assert_eq!(
        value["hooks"]["agentStop"],
        json!([{"type": "command", "powershell": r"C:\lidguard\lidguard.exe copilot-hook --event agentStop", "timeoutSec": 30}])
    );
}

#[test]
fn copilot_keeps_hand_added_entries_and_fixes_drift() {
    let text = r#"{
  "version": 1,
  "hooks": {
    "agentStop": [
      { "type": "command", "bash": "lidguard copilot-hook --event agentStop", "timeoutSec": 10, "matcher": "x" },
      { "type": "command", "bash": "./my-stop.sh" }
    ]
  }
}
"#;
    let cmd = lidguard();
    let status = copilot::AGENT.hooks.status(Some(text), &cmd, 30).unwrap();
    assert_eq!(status.state, InstallState::Drifted);
    assert_eq!(
        status.drift,
        [
            "agentStop: runs lidguard copilot-hook --event agentStop, expected /usr/local/bin/lidguard copilot-hook --event agentStop",
            "agentStop: timeout 10, expected 30",
            "agentStop: unexpected matcher \"x\"",
        ]
    );
    assert_eq!(status.foreign_hooks.len(), 1);
    assert_eq!(status.foreign_hooks[0].summary, "./my-stop.sh");
    let installed = changed(copilot::AGENT.hooks.install(Some(text), &cmd, 30));
    assert!(installed.contains(
        "      { \"type\": \"command\", \"bash\": \"/usr/local/bin/lidguard copilot-hook --event agentStop\", \"timeoutSec\": 30 },\n      { \"type\": \"command\", \"bash\": \"./my-stop.sh\" }\n"
    ), "{installed}");
    let removed = changed(copilot::AGENT.hooks.remove(&installed, &cmd, None));
    assert_eq!(
        parse(&removed),
        json!({"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": "./my-stop.sh"}]}})
    );
}

#[test]
fn copilot_version_must_be_one() {
    let err = copilot::AGENT
        .hooks
        .install(Some(r#"{"version": 2, "hooks": {}}"#), &lidguard(), 30)
        .unwrap_err();
    assert!(
        matches!(&err, InstallError::Shape { path, .. } if path == "version"),
        "{err:?}"
    );
    // A file without a version gets one, first.
    let text = changed(
        copilot::AGENT
            .hooks
            .install(Some("{\"hooks\": {}}"), &lidguard(), 30),
    );
    assert!(text.starts_with("{\n  \"version\": 1,"), "{text}");
    let status = copilot::AGENT
        .hooks
        .status(Some(r#"{"hooks": {}}"#), &lidguard(), 30)
        .unwrap();
    assert_eq!(status.drift, ["version: missing, expected 1"]);
}

#[test]
fn copilot_inline_settings_hooks_are_reported() {
    let settings = r#"{
        "model": "gpt-5",
        "hooks": {
            "agentStop": [{"type": "command", "bash": "./continue.sh"}],
            "Stop": [{"type": "command", "command": "./pascal-stop.sh"}],
            "postToolUse": [{"type": "command", "bash": "./log.sh"}],
            "preToolUse": [{"type": "command", "bash": "lidguard copilot-hook --event preToolUse"}]
        }
    }"#;
    let (foreign, ours) = copilot::install::scan_other_file(settings, &lidguard()).unwrap();
    let found: Vec<(&str, &str, HookSource)> = foreign
        .iter()
        .map(|f| (f.event.as_str(), f.summary.as_str(), f.source))
        .collect();
    assert_eq!(
        found,
        [
            ("agentStop", "./continue.sh", HookSource::OtherFile),
            ("Stop", "./pascal-stop.sh", HookSource::OtherFile),
        ]
    );
    assert_eq!(ours, ["preToolUse"]);
    assert!(copilot::install::scan_other_file("{", &lidguard()).is_err());
    let off = r#"{"disableAllHooks": true, "hooks": {"agentStop": [{"bash": "./x.sh"}]}}"#;
    assert_eq!(
        copilot::install::scan_other_file(off, &lidguard()).unwrap(),
        Default::default()
    );
}

// ---- OpenCode ------------------------------------------------------------------------------

#[test]
fn opencode_plugin_install_status_remove() {
    let cmd = posix("/opt/lidguard bin/lidguard");
    let text = changed(opencode::install(None, &cmd));
    assert!(text.contains(r#"["/opt/lidguard bin/lidguard","opencode-hook"]"#));
    assert_eq!(text, opencode::plugin_text(&cmd));
    assert_eq!(opencode::install(Some(&text), &cmd), Ok(Change::Unchanged));
    assert_eq!(
        opencode::status(Some(&text), &cmd).state,
        InstallState::Installed
    );
    assert_eq!(opencode::status(None, &cmd).state, InstallState::Missing);
    assert_eq!(opencode::remove(&text), Ok(Change::Delete));
    // An empty file at the path is as good as none.
    assert_eq!(changed(opencode::install(Some(""), &cmd)), text);
}

#[test]
fn opencode_status_compares_version_and_command() {
    let cmd = lidguard();
    let current = opencode::plugin_text(&cmd);
    let other_path = opencode::plugin_text(&posix("/old/lidguard"));
    let status = opencode::status(Some(&other_path), &cmd);
    assert_eq!(status.state, InstallState::Drifted);
    assert_eq!(
        status.drift,
        [
            r#"runs ["/old/lidguard","opencode-hook"], expected ["/usr/local/bin/lidguard","opencode-hook"]"#
        ]
    );

    let old_version: String = current
        .split_inclusive('\n')
        .map(|l| {
            if l.contains("plugin version:") {
                "// lidguard OpenCode plugin version: 0\n"
            } else {
                l
            }
        })
        .collect();
    assert_ne!(old_version, current);
    let status = opencode::status(Some(&old_version), &cmd);
    assert_eq!(status.state, InstallState::Drifted);
    assert!(
        status.drift[0].starts_with("plugin version 0"),
        "{status:?}"
    );
    assert_eq!(
        changed(opencode::install(Some(&old_version), &cmd)),
        current
    );

    let edited = current.replace("windowsHide", "windowsHide ");
    let status = opencode::status(Some(&edited), &cmd);
    assert_eq!(status.drift.len(), 1);
    assert!(
        status.drift[0].starts_with("the plugin differs"),
        "{status:?}"
    );

    // The reference implementation's plugin carries the same marker in other case: it is
    // replaced.
    let reference = "// <LidGuard OpenCode plugin start>\n// LidGuard OpenCode plugin version: 2\nexport default {};\n// <LidGuard OpenCode plugin end>\n";
    assert_eq!(changed(opencode::install(Some(reference), &cmd)), current);
    assert_eq!(opencode::remove(reference), Ok(Change::Delete));
}

#[test]
fn opencode_never_touches_a_users_own_lidguard_js() {
    let cmd = lidguard();
    let mine = "// my own plugin\nexport const Mine = async () => ({});\n";
    assert!(matches!(
        opencode::install(Some(mine), &cmd),
        Err(InstallError::Shape { .. })
    ));
    assert!(matches!(
        opencode::remove(mine),
        Err(InstallError::Shape { .. })
    ));
    let status = opencode::status(Some(mine), &cmd);
    assert_eq!(status.state, InstallState::Missing);
    assert_eq!(status.drift.len(), 1);
}

/// The test files above use `//` comments in JSONC; serde_json needs them gone.
fn strip_comments(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(at) if !l[..at].contains('"') || l[..at].matches('"').count() % 2 == 0 => &l[..at],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn claude_permission_mode_says_whether_the_policy_is_consulted() {
    let auto = claude::install::permission_mode(None).unwrap();
    assert!(auto.starts_with("auto (Claude Code's default"), "{auto}");
    let set = |mode: &str| {
        claude::install::permission_mode(Some(&format!(
            "{{\"permissions\": {{\"defaultMode\": \"{mode}\"}}}}"
        )))
        .unwrap()
    };
    assert!(set("default").contains("answered with the closed-lid policy"));
    assert!(set("acceptEdits").starts_with("acceptEdits:"));
    assert!(set("bypassPermissions").contains("not consulted"));
    assert!(set("auto").contains("not consulted"));
    // A file Claude would not read either says nothing different from the default.
    assert!(
        claude::install::permission_mode(Some("{"))
            .unwrap()
            .starts_with("auto")
    );
}
