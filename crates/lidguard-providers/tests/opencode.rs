//! OpenCode: what `opencode-hook` reads from lidguard's plugin for ask before sleep (which stops
//! may continue, `stopHookActive`), the continuation it prints, the plugin file's version, and the
//! plugin itself run under node against a fake OpenCode client and a fake hook command
//! (`tests/opencode_plugin/`).
#![allow(
    clippy::disallowed_methods,
    reason = "tests write fixtures and read the environment"
)]

use std::path::{Path, PathBuf};

use lidguard_core::event::{AgentEvent, EventKind};
use lidguard_core::provider::Provider;
use lidguard_providers::agents::opencode::{self, install};
use lidguard_providers::install::{HookCommand, InstallState};
use lidguard_providers::{HookInput, parse, render_continuation};
use serde_json::{Value, json};

fn events(event: &str, stdin: &Value) -> Vec<AgentEvent> {
    let stdin = stdin.to_string();
    parse(
        Provider::OpenCode,
        &HookInput {
            stdin: stdin.as_bytes(),
            event_arg: Some(event),
            process_cwd: Some("/proj"),
            now: jiff::ZonedDateTime::now,
        },
    )
    .unwrap()
}

/// What lidguard's plugin sends for a bus event, as in `crates/lidguard-providers/src/agents/opencode/lidguard.js`.
fn bus(event: &str, properties: &Value, extra: &Value) -> Value {
    let mut payload = json!({
        "hook": "event",
        "input": {"event": {"id": "evt_1", "type": event, "properties": properties.clone()}},
        "output": null,
        "directory": "/proj",
    });
    payload
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    payload
}

/// `(stop_hook_active, can_continue)` of the only event, when it is a TurnStopped.
fn stop_of(events: &[AgentEvent]) -> Option<(bool, bool)> {
    match events {
        [e] => match &e.kind {
            EventKind::TurnStopped {
                stop_hook_active,
                can_continue,
                running_work: None,
                ..
            } => Some((*stop_hook_active, *can_continue)),
            _ => None,
        },
        _ => None,
    }
}

#[test]
fn session_idle_is_a_continuable_stop_and_carries_stop_hook_active() {
    let sid = json!({"sessionID": "ses_1"});
    for (extra, active) in [
        (json!({}), false),
        (json!({"stopHookActive": false}), false),
        (json!({"stopHookActive": true}), true),
        // The name Claude and Codex use, accepted too.
        (json!({"stop_hook_active": true}), true),
        (json!({"stopHookActive": null}), false),
    ] {
        let evs = events("session.idle", &bus("session.idle", &sid, &extra));
        assert_eq!(stop_of(&evs), Some((active, true)), "{extra}");
        assert_eq!(evs[0].session_id, "ses_1");
        assert_eq!(evs[0].hook_event, "session.idle");
    }
    // OpenCode 2's end of a turn.
    let evs = events(
        "session.execution.succeeded",
        &bus(
            "session.execution.succeeded",
            &sid,
            &json!({"stopHookActive": true}),
        ),
    );
    assert_eq!(stop_of(&evs), Some((true, true)));
}

#[test]
fn only_idle_and_execution_succeeded_can_continue() {
    let sid = json!({"sessionID": "ses_1"});
    let active = json!({"stopHookActive": true, "lastAssistantMessage": "done"});
    // session.status idle also ends the turn, but the plugin never continues after it.
    let status = |kind: &str| {
        let status = json!({"sessionID": "ses_1", "status": {"type": kind}});
        events("session.status", &bus("session.status", &status, &active))
    };
    assert_eq!(stop_of(&status("idle")), Some((false, false)));
    let evs = status("busy");
    assert!(matches!(evs[0].kind, EventKind::Telemetry));
    for ending in [
        "session.error",
        "session.deleted",
        "session.execution.failed",
        "session.execution.interrupted",
    ] {
        let evs = events(ending, &bus(ending, &sid, &active));
        assert!(
            matches!(
                evs.as_slice(),
                [AgentEvent {
                    kind: EventKind::SessionEnded { normal: false, .. },
                    ..
                }]
            ),
            "{ending}: {evs:?}"
        );
    }
    // Hook points and other bus events: never a stop.
    for (event, stdin) in [
        (
            "chat.message",
            json!({"hook": "chat.message", "input": {"sessionID": "ses_1"},
                   "output": {"parts": [{"type": "text", "text": "go"}]}, "stopHookActive": true}),
        ),
        (
            "tool.execute.after",
            json!({"hook": "tool.execute.after", "input": {"sessionID": "ses_1", "tool": "bash"},
                   "output": null, "stopHookActive": true}),
        ),
        (
            "permission.replied",
            bus("permission.replied", &sid, &active),
        ),
    ] {
        let evs = events(event, &stdin);
        assert!(
            evs.iter()
                .all(|e| !matches!(e.kind, EventKind::TurnStopped { .. })),
            "{event}: {evs:?}"
        );
    }
}

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/opencode")
}

/// Every OpenCode fixture: a stop may continue exactly when it is `session.idle`, and says
/// `stopHookActive` exactly when the plugin sent it.
#[test]
fn captured_payloads_continue_only_on_session_idle() {
    let mut seen = 0;
    for entry in std::fs::read_dir(fixtures_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let fixture: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let event = fixture["event"].as_str().unwrap();
        let evs = events(event, &fixture["stdin"]);
        for e in &evs {
            if let EventKind::TurnStopped {
                can_continue,
                stop_hook_active,
                ..
            } = e.kind
            {
                assert_eq!(can_continue, event == "session.idle", "{}", path.display());
                let active = fixture["stdin"]["stopHookActive"] == json!(true);
                assert_eq!(stop_hook_active, active, "{}", path.display());
                seen += 1;
            }
        }
    }
    assert!(seen >= 10, "only {seen} stops among the fixtures");
}

#[test]
fn the_continuation_is_one_json_line_the_plugin_reads_back() {
    for reply in [
        "also update the README",
        "quotes \" and \\ backslashes, a\nnewline, ünïcödé 😀 and </script>",
    ] {
        let out = opencode::render_continuation(reply).unwrap();
        assert_eq!(
            render_continuation(Provider::OpenCode, reply).as_deref(),
            Some(out.as_str())
        );
        assert!(!out.contains('\n'), "one line: {out}");
        let value: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(value, json!({"decision": "block", "reason": reply}));
    }
    assert_eq!(
        opencode::render_continuation("also update the README").unwrap(),
        r#"{"decision":"block","reason":"also update the README"}"#
    );
}

fn cmd() -> HookCommand {
    HookCommand::new("/usr/local/bin/lidguard")
}

#[test]
fn the_plugin_is_version_2_and_a_version_1_file_is_drifted() {
    let text = install::plugin_text(&cmd());
    let first: Vec<&str> = text.lines().take(2).collect();
    assert_eq!(
        first,
        [
            "// <lidguard OpenCode plugin start>",
            "// lidguard OpenCode plugin version: 2"
        ]
    );
    assert_eq!(
        text.lines().last(),
        Some("// <lidguard OpenCode plugin end>")
    );
    assert!(!text.contains("__LIDGUARD_COMMAND__"));
    assert_eq!(
        install::status(Some(&text), &cmd()).state,
        InstallState::Installed
    );
    // The plugin an older lidguard wrote (version 1, no ask before sleep) is to be updated.
    let old = text.replace("plugin version: 2", "plugin version: 1");
    let status = install::status(Some(&old), &cmd());
    assert_eq!(status.state, InstallState::Drifted);
    assert_eq!(status.drift, ["plugin version 1, expected 2"]);
    assert!(matches!(
        install::install(Some(&old), &cmd()),
        Ok(lidguard_providers::install::Change::Changed { new_text }) if new_text == text
    ));
}

/// The plugin's set of continuable events, read from its source, is what `opencode-hook` lets
/// continue: a stop the plugin would never continue must not make lidguard wait, and the other
/// way round.
#[test]
fn the_plugin_continues_after_exactly_the_stops_the_hook_lets_continue() {
    let text = install::plugin_text(&cmd());
    let set_of = |name: &str| -> Vec<String> {
        let start = text
            .find(&format!("const {name} = new Set(["))
            .unwrap_or_else(|| panic!("{name} in the plugin"));
        let body = &text[start..];
        let body = &body[body.find('[').unwrap() + 1..body.find("])").unwrap()];
        body.split(',')
            .map(|s| s.trim().trim_matches('"').to_owned())
            .filter(|s| !s.is_empty())
            .collect()
    };
    let continuable = set_of("CONTINUABLE_EVENTS");
    assert_eq!(continuable, ["session.idle"]);
    let forwarded = set_of("FORWARDED_EVENTS");
    for event in &forwarded {
        let evs = events(
            event,
            &bus(event, &json!({"sessionID": "ses_1", "id": "x"}), &json!({})),
        );
        let can = evs.iter().any(|e| {
            matches!(
                e.kind,
                EventKind::TurnStopped {
                    can_continue: true,
                    ..
                }
            )
        });
        assert_eq!(can, continuable.contains(event), "{event}");
    }
}

/// The plugin under node: `tests/opencode_plugin/harness.mjs` loads the plugin file hook-install
/// writes (running `fake_hook.mjs` instead of lidguard) with a fake OpenCode client, and checks
/// what it does with `session.idle` and lidguard's answers (see the harness). Needs `node`.
#[test]
fn the_plugin_sends_the_reply_back_and_never_holds_up_events() {
    let dir = tempfile::tempdir().unwrap();
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/opencode_plugin");
    let fake_hook = here.join("fake_hook.mjs");
    let plugin = opencode::plugin_js(&["node".into(), fake_hook.display().to_string()]);
    let plugin_path = dir.path().join("lidguard.mjs");
    std::fs::write(&plugin_path, plugin).unwrap();
    let output = std::process::Command::new("node")
        .arg(here.join("harness.mjs"))
        .arg(&plugin_path)
        .arg(dir.path())
        .output()
        .expect("node must be installed to run this test");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "harness failed ({}):\n{stderr}\n{stdout}",
        output.status
    );
    assert!(stdout.contains("harness: all checks passed"), "{stdout}");
}
