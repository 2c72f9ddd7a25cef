//! `hook-install`, `hook-status`, `hook-remove` and the snippets, on real files.

use crate::util::{Home, assert_ok, succeeded};

/// A home whose agent config directories live inside it.
fn agent_home() -> Home {
    Home::new()
}

fn with_agents(home: &Home, args: &[&str]) -> std::process::Output {
    home.cmd(args)
        .env("HOME", home.path())
        .env("CLAUDE_CONFIG_DIR", home.path().join("claude"))
        .env("CODEX_HOME", home.path().join("codex"))
        .env("COPILOT_HOME", home.path().join("copilot"))
        .env("OPENCODE_CONFIG_DIR", home.path().join("opencode"))
        .env("GEMINI_CLI_HOME", home.path().join("gemini"))
        .env("QWEN_HOME", home.path().join("qwen"))
        .env("KILO_CONFIG_DIR", home.path().join("kilo"))
        .env("CLINE_DIR", home.path().join("cline"))
        .output()
        .unwrap()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const USER_SETTINGS: &str = "{\n  // my settings\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          { \"type\": \"command\", \"command\": \"notify-send done\" }\n        ]\n      }\n    ]\n  }\n}\n";

#[test]
fn dry_run_changes_nothing_install_backs_up_and_remove_restores() {
    let home = agent_home();
    let dir = home.path().join("claude");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("settings.json");
    std::fs::write(&file, USER_SETTINGS).unwrap();

    let out = with_agents(
        &home,
        &["hook-install", "--provider", "claude", "--dry-run"],
    );
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(
        text.contains("would change") && text.contains("+") && text.contains("claude-hook"),
        "{text}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), USER_SETTINGS);

    let out = with_agents(&home, &["hook-status", "--provider", "claude"]);
    assert_eq!(out.status.code(), Some(1), "missing hooks: exit 1");

    let out = with_agents(&home, &["hook-install", "--provider", "claude"]);
    assert_ok(&out);
    let installed = std::fs::read_to_string(&file).unwrap();
    assert!(installed.contains("// my settings") && installed.contains("notify-send done"));
    assert!(installed.contains("claude-hook"));
    let backups: Vec<_> = std::fs::read_dir(home.path().join("state/backups/claude"))
        .unwrap()
        .collect();
    assert_eq!(backups.len(), 1);

    let out = with_agents(&home, &["hook-install", "--provider", "claude"]);
    assert!(stdout(&out).contains("already up to date"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), installed);

    let out = with_agents(&home, &["hook-status", "--provider", "claude", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status[0]["state"], "installed");
    // The user's own `notify-send done` on Stop only notifies: not flagged.
    assert_eq!(status[0]["foreignHooks"], serde_json::json!([]), "{status}");
    assert_eq!(status[0]["evidence"][0]["observed"], false);
    assert!(
        status[0]["needs"]
            .as_str()
            .is_some_and(|n| n.starts_with("Claude Code 2.1.139 or newer")),
        "exec form needs Claude Code 2.1.139: {status}"
    );
    let out = with_agents(&home, &["hook-status", "--provider", "claude"]);
    assert!(stdout(&out).contains("  needs: Claude Code 2.1.139 or newer"));

    let out = with_agents(&home, &["hook-remove", "--provider", "claude"]);
    assert!(out.status.success());
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        USER_SETTINGS,
        "remove restores the bytes"
    );
}

/// The files of a directory with their bytes and modes.
fn files_of(dir: &std::path::Path) -> Vec<(String, Vec<u8>, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&path).unwrap(),
                mode,
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn cline_hook_files_go_next_to_the_users_own_and_remove_leaves_them_exactly() {
    let home = agent_home();
    let hooks = home.path().join("cline/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    // The user's own hooks: another file for PreToolUse (Cline runs both) and one for an event
    // lidguard does not use.
    std::fs::write(hooks.join("PreToolUse.sh"), "#!/bin/bash\necho mine\n").unwrap();
    std::fs::write(hooks.join("PreCompact"), "#!/bin/sh\nexit 0\n").unwrap();
    let before = files_of(&hooks);

    let out = with_agents(&home, &["hook-install", "--provider", "cline"]);
    assert_ok(&out);
    let expected = format!(
        "#!{} cline-hook --event\n# lidguard: keeps this machine awake while Cline works \
         (`lidguard hook-remove --provider cline` takes it away)\n",
        env!("CARGO_BIN_EXE_lidguard-hook")
    );
    for event in ["TaskStart", "PreToolUse", "TaskComplete", "SessionShutdown"] {
        let path = hooks.join(event);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), expected, "{event}");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{event}: readable by the user alone");
    }
    let out = with_agents(&home, &["hook-status", "--provider", "cline", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status[0]["state"], "installed", "{status}");
    assert_eq!(status[0]["foreignHooks"][0]["summary"], "PreToolUse.sh");
    let out = with_agents(&home, &["hook-install", "--provider", "cline"]);
    assert!(stdout(&out).contains("already up to date"));

    let out = with_agents(&home, &["hook-remove", "--provider", "cline"]);
    assert_ok(&out);
    assert_eq!(
        files_of(&hooks),
        before,
        "remove leaves exactly the user's files"
    );

    // A file of the user's by an event's own name (their logger): lidguard's takes the next
    // name, `TaskStart.sh`, both run, and remove leaves the user's byte for byte.
    std::fs::write(hooks.join("TaskStart"), "#!/bin/sh\necho mine >> log\n").unwrap();
    let before = files_of(&hooks);
    assert_ok(&with_agents(
        &home,
        &["hook-install", "--provider", "cline"],
    ));
    assert_eq!(
        std::fs::read_to_string(hooks.join("TaskStart.sh")).unwrap(),
        expected
    );
    assert_eq!(
        std::fs::read_to_string(hooks.join("TaskStart")).unwrap(),
        "#!/bin/sh\necho mine >> log\n"
    );
    let out = with_agents(&home, &["hook-status", "--provider", "cline", "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status[0]["state"], "installed", "{status}");
    let out = with_agents(&home, &["hook-install", "--provider", "cline"]);
    assert!(
        stdout(&out).contains("already up to date"),
        "{}",
        stdout(&out)
    );
    assert_ok(&with_agents(&home, &["hook-remove", "--provider", "cline"]));
    assert_eq!(
        files_of(&hooks),
        before,
        "remove leaves the user's files exactly"
    );
}

#[test]
fn cline_hooks_directory_lidguard_created_goes_on_remove() {
    let home = agent_home();
    std::fs::create_dir_all(home.path().join("cline")).unwrap();
    let out = with_agents(&home, &["hook-install", "--provider", "cline"]);
    assert_ok(&out);
    assert!(home.path().join("cline/hooks/TaskStart").is_file());
    let out = with_agents(&home, &["hook-remove", "--provider", "cline"]);
    assert_ok(&out);
    assert!(
        !home.path().join("cline/hooks").exists(),
        "{}",
        stdout(&out)
    );
    assert!(home.path().join("cline").is_dir());
}

#[test]
fn an_unparsable_file_is_refused_and_left_alone() {
    let home = agent_home();
    let dir = home.path().join("codex");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("hooks.json");
    std::fs::write(&file, "{ \"hooks\": [ oops").unwrap();
    for args in [
        &["hook-install", "--provider", "codex"][..],
        &["hook-remove", "--provider", "codex"],
    ] {
        let out = with_agents(&home, args);
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("hooks.json") && err.contains("Nothing was changed"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "{ \"hooks\": [ oops"
        );
    }
    let out = with_agents(&home, &["hook-status", "--provider", "codex"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn all_covers_only_agents_that_are_there_and_receipts_show_in_status() {
    let home = agent_home();
    std::fs::create_dir_all(home.path().join("copilot")).unwrap();
    std::fs::create_dir_all(home.path().join("opencode")).unwrap();
    let out = with_agents(&home, &["hook-install", "--provider", "all"]);
    assert_ok(&out);
    let text = stdout(&out);
    assert!(
        text.contains("Claude Code: skipped") && text.contains("Codex CLI: skipped"),
        "{text}"
    );
    let copilot_file = home.path().join("copilot/hooks/lidguard-copilot-cli.json");
    let plugin = home.path().join("opencode/plugins/lidguard.js");
    assert!(copilot_file.is_file() && plugin.is_file());
    let plugin_text = std::fs::read_to_string(&plugin).unwrap();
    assert!(plugin_text.contains("opencode-hook") && !plugin_text.contains("__LIDGUARD_COMMAND__"));

    // An event arrives through the installed command: status shows it as observed.
    let installed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&copilot_file).unwrap()).unwrap();
    let command = installed["hooks"]["userPromptSubmitted"][0]["bash"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut child = home
        .cmd(&[])
        .env("HOME", home.path())
        .stdin(std::process::Stdio::piped())
        .spawn_shell(&command);
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"sessionId":"p1","cwd":"/tmp","prompt":"go"}"#)
        .unwrap();
    assert!(child.wait().unwrap().success());
    let out = with_agents(&home, &["hook-status", "--provider", "copilot", "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let observed =
        crate::util::row_where(&status[0]["evidence"], "event", "userPromptSubmitted").clone();
    assert_eq!(observed["observed"], true, "{status}");

    let out = with_agents(&home, &["hook-remove", "--provider", "all"]);
    assert!(out.status.success());
    assert!(
        !copilot_file.exists() && !plugin.exists(),
        "files lidguard owns are deleted"
    );
}

#[test]
fn snippets_print_what_install_writes() {
    let home = agent_home();
    let out = with_agents(&home, &["claude-hooks", "settings-json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(command_line(&v["hooks"]["PreToolUse"][0]["hooks"][0]).ends_with("claude-hook"));
    let out = with_agents(&home, &["copilot-hooks", "config-json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["version"], 1);
    let out = with_agents(&home, &["opencode-hooks", "plugin-js"]);
    assert!(stdout(&out).contains("<lidguard OpenCode plugin start>"));
    let out = with_agents(&home, &["codex-hooks", "nonsense"]);
    assert!(!out.status.success());
}

/// Runs a shell command line (as an agent runs its hook command) from a prepared `Command`'s
/// environment.
trait SpawnShell {
    fn spawn_shell(&mut self, line: &str) -> std::process::Child;
}

impl SpawnShell for std::process::Command {
    fn spawn_shell(&mut self, line: &str) -> std::process::Child {
        let mut sh = std::process::Command::new("sh");
        sh.args(["-c", line]);
        for (k, v) in self.get_envs() {
            match v {
                Some(v) => sh.env(k, v),
                None => sh.env_remove(k),
            };
        }
        sh.stdin(std::process::Stdio::piped()).spawn().unwrap()
    }
}

#[test]
fn codex_hooks_are_reported_untrusted_until_trusted_on_request() {
    let home = agent_home();
    let dir = home.path().join("codex");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), "# mine\nmodel = \"o4\"\n").unwrap();
    let out = with_agents(&home, &["hook-install", "--provider", "codex"]);
    assert!(out.status.success());
    assert!(
        stdout(&out).contains("Codex skips hooks nobody trusted"),
        "{}",
        stdout(&out)
    );
    let out = with_agents(&home, &["hook-status", "--provider", "codex", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "untrusted hooks do not run: not healthy"
    );
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status[0]["state"], "installed");
    assert!(
        status[0]["codexTrust"]["untrusted"]
            .as_array()
            .unwrap()
            .len()
            >= 7,
        "{status}"
    );

    let out = with_agents(
        &home,
        &[
            "hook-install",
            "--provider",
            "codex",
            "--trust-codex-hooks",
            "--dry-run",
        ],
    );
    assert!(stdout(&out).contains("trusted_hash"));
    assert!(
        !std::fs::read_to_string(dir.join("config.toml"))
            .unwrap()
            .contains("trusted_hash")
    );
    let out = with_agents(
        &home,
        &["hook-install", "--provider", "codex", "--trust-codex-hooks"],
    );
    assert!(out.status.success());
    let config = std::fs::read_to_string(dir.join("config.toml")).unwrap();
    assert!(
        config.starts_with("# mine\nmodel = \"o4\"\n")
            && config.contains("trusted_hash = \"sha256:")
    );
    let out = with_agents(&home, &["hook-status", "--provider", "codex"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let out = with_agents(
        &home,
        &["hook-remove", "--provider", "codex", "--trust-codex-hooks"],
    );
    assert!(!out.status.success());
}

#[test]
fn mcp_install_status_remove_round_trip_for_every_agent() {
    let home = agent_home();
    // Every agent's config directory (Cursor's is `~/.cursor`).
    for dir in [
        "claude",
        "codex",
        "copilot",
        "opencode",
        "gemini/.gemini",
        ".cursor",
        "qwen",
        "kilo",
        "cline",
        ".factory",
    ] {
        std::fs::create_dir_all(home.path().join(dir)).unwrap();
    }
    let agents = lidguard_providers::AGENTS.len();
    assert_eq!(agents, 10, "a new agent: give it a directory above");
    let codex = home.path().join("codex/config.toml");
    let codex_before = "# mine\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n";
    std::fs::write(&codex, codex_before).unwrap();
    let claude = home.path().join("claude/.claude.json");
    let claude_before = "{\n  \"numStartups\": 1,\n  \"mcpServers\": {\n    \"mine\": {\"command\": \"y\"}\n  }\n}\n";
    std::fs::write(&claude, claude_before).unwrap();

    let dry = with_agents(&home, &["mcp-install", "all", "--dry-run"]);
    assert!(dry.status.success());
    assert_eq!(
        stdout(&dry).matches("would change").count(),
        agents,
        "{}",
        stdout(&dry)
    );
    assert_eq!(std::fs::read_to_string(&codex).unwrap(), codex_before);
    assert!(!home.path().join("copilot/mcp-config.json").exists());

    assert_eq!(
        with_agents(&home, &["mcp-status", "all"]).status.code(),
        Some(1)
    );
    let out = with_agents(&home, &["mcp-install", "--provider", "all"]);
    assert_ok(&out);
    let status = with_agents(&home, &["mcp-status", "all", "--json"]);
    assert!(status.status.success(), "{}", stdout(&status));
    let reports: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert!(
        reports
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["state"] == "installed"),
        "{reports}"
    );

    let exe = std::fs::canonicalize(crate::util::BIN).unwrap();
    let copilot: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(home.path().join("copilot/mcp-config.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        copilot["mcpServers"]["lidguard"]["command"],
        exe.display().to_string()
    );
    let opencode = std::fs::read_to_string(home.path().join("opencode/opencode.json")).unwrap();
    assert!(opencode.contains("\"mcp-server\"") && opencode.contains("\"enabled\": true"));
    assert!(
        std::fs::read_to_string(&claude)
            .unwrap()
            .contains("\"mine\": {\"command\": \"y\"}")
    );

    let again = with_agents(&home, &["mcp-install", "all"]);
    assert_eq!(stdout(&again).matches("already up to date").count(), agents);

    let out = with_agents(&home, &["mcp-remove", "all"]);
    assert!(out.status.success());
    assert_eq!(std::fs::read_to_string(&codex).unwrap(), codex_before);
    assert_eq!(std::fs::read_to_string(&claude).unwrap(), claude_before);
    assert_eq!(
        with_agents(&home, &["mcp-status", "codex"]).status.code(),
        Some(1)
    );
}

#[test]
fn mcp_install_refuses_a_broken_file_and_all_skips_missing_agents() {
    let home = agent_home();
    std::fs::create_dir_all(home.path().join("copilot")).unwrap();
    let file = home.path().join("copilot/mcp-config.json");
    std::fs::write(&file, "{ \"mcpServers\": { \"a\": ").unwrap();
    let out = with_agents(&home, &["mcp-install", "copilot"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("does not parse") && err.contains("Nothing was changed"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "{ \"mcpServers\": { \"a\": "
    );

    std::fs::write(&file, "{}").unwrap();
    let out = with_agents(&home, &["mcp-install", "all"]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert_eq!(
        text.matches("skipped:").count(),
        lidguard_providers::AGENTS.len() - 1,
        "{text}"
    );
    let status = with_agents(&home, &["mcp-status", "all"]);
    assert!(
        status.status.success(),
        "skipped agents do not fail status: {}",
        stdout(&status)
    );

    let out = home.cmd(&["mcp-install"]).output().unwrap();
    assert!(
        !out.status.success(),
        "no agent and no terminal: a clear error"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("needs an agent (or `all`): one of claude, codex, copilot, opencode")
    );
}

#[test]
fn provider_mcp_entries_in_any_json_config() {
    let home = agent_home();
    let config = home.path().join("agent.json");
    let before =
        "{\n  \"mcpServers\": {\n    \"x\": {\"command\": \"x\"}\n  },\n  \"theme\": \"dark\"\n}\n";
    std::fs::write(&config, before).unwrap();
    let path = config.to_str().unwrap();
    let out = home
        .cmd(&["provider-mcp-install", "--config", path])
        .output()
        .unwrap();
    assert!(!out.status.success(), "install needs --provider-name");
    succeeded(home.cmd(&[
        "provider-mcp-install",
        "--config",
        path,
        "--provider-name",
        "gemini",
    ]));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    assert_eq!(
        v["mcpServers"]["lidguard-provider"]["args"],
        serde_json::json!(["provider-mcp-server", "--provider-name", "gemini"])
    );
    let status = home
        .cmd(&["provider-mcp-status", "--config", path, "--json"])
        .output()
        .unwrap();
    assert!(status.status.success(), "{}", stdout(&status));
    let other = home
        .cmd(&[
            "provider-mcp-status",
            "--config",
            path,
            "--provider-name",
            "other",
        ])
        .output()
        .unwrap();
    assert_eq!(
        other.status.code(),
        Some(1),
        "another provider name is drift"
    );
    let out = home
        .cmd(&["provider-mcp-remove", "--config", path])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);
}

#[test]
fn copilot_status_reports_conflicting_hooks_in_other_files_and_the_repository() {
    let home = agent_home();
    std::fs::create_dir_all(home.path().join("copilot/hooks")).unwrap();
    let out = with_agents(&home, &["hook-install", "--provider", "copilot"]);
    assert!(out.status.success());
    // Another user hooks file, and the repository the command runs in (the home is its root).
    std::fs::write(
        home.path().join("copilot/hooks/other.json"),
        r#"{"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": "./keep-going.sh"}]}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(home.path().join(".git")).unwrap();
    std::fs::create_dir_all(home.path().join(".github/hooks")).unwrap();
    std::fs::write(
        home.path().join(".github/hooks/team.json"),
        r#"{"version": 1, "hooks": {"permissionRequest": [{"type": "command", "bash": "./approve.sh"}], "postToolUse": [{"type": "command", "bash": "./log.sh"}]}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(home.path().join(".github/copilot")).unwrap();
    std::fs::write(
        home.path().join(".github/copilot/settings.json"),
        r#"{"disableAllHooks": true, "hooks": {"agentStop": [{"type": "command", "bash": "./ignored.sh"}]}}"#,
    )
    .unwrap();
    std::fs::write(home.path().join(".github/hooks/broken.json"), "{").unwrap();

    let out = with_agents(&home, &["hook-status", "--provider", "copilot", "--json"]);
    let reports: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let report = &reports[0];
    let foreign = report["foreignHooks"].as_array().unwrap();
    let summaries: Vec<&str> = foreign
        .iter()
        .map(|f| f["summary"].as_str().unwrap())
        .collect();
    assert_eq!(summaries, ["./keep-going.sh", "./approve.sh"], "{report}");
    assert!(crate::util::text(&foreign[1]["file"]).ends_with(".github/hooks/team.json"));
    let warnings = report["warnings"].to_string();
    assert!(warnings.contains("broken.json not checked"), "{warnings}");

    let text = stdout(&with_agents(
        &home,
        &["hook-status", "--provider", "copilot"],
    ));
    assert!(text.contains("./approve.sh (in "), "{text}");
}

/// lidguard's Claude handlers and Codex's, with their timeouts (Codex caps `SessionEnd` and
/// `Interrupt` at 3 s).
/// A handler's command line: `command`, then the exec form's `args`.
fn command_line(handler: &serde_json::Value) -> String {
    let args = handler["args"].as_array().into_iter().flatten();
    std::iter::once(&handler["command"])
        .chain(args)
        .filter_map(serde_json::Value::as_str)
        .collect::<Vec<_>>()
        .join(" ")
}

fn lidguard_timeouts(text: &str, subcommand: &str) -> Vec<(String, u64)> {
    // The files hold comments: keep only what serde_json reads.
    let json: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let mut out = Vec::new();
    for (event, groups) in v["hooks"].as_object().unwrap() {
        for group in groups.as_array().unwrap() {
            for h in group["hooks"].as_array().unwrap() {
                if command_line(h).contains(subcommand) {
                    out.push((event.clone(), h["timeout"].as_u64().unwrap()));
                }
            }
        }
    }
    out
}

const USER_CODEX_HOOKS: &str = "{\n  \"hooks\": {\n    \"PostToolUse\": [\n      {\n        \"matcher\": \"Bash\",\n        \"hooks\": [\n          { \"type\": \"command\", \"command\": \"./audit.sh\", \"timeout\": 30 }\n        ]\n      }\n    ]\n  }\n}\n";

#[test]
fn settings_that_change_the_hook_timeout_refresh_installed_hooks_only() {
    let home = agent_home();
    for dir in ["claude", "codex", "copilot", "opencode"] {
        std::fs::create_dir_all(home.path().join(dir)).unwrap();
    }
    let claude = home.path().join("claude/settings.json");
    let codex = home.path().join("codex/hooks.json");
    std::fs::write(&claude, USER_SETTINGS).unwrap();
    std::fs::write(&codex, USER_CODEX_HOOKS).unwrap();
    for args in [
        &["hook-install", "--provider", "claude"][..],
        &["hook-install", "--provider", "codex", "--trust-codex-hooks"],
    ] {
        let out = with_agents(&home, args);
        assert_ok(&out);
    }
    let claude_30 = std::fs::read_to_string(&claude).unwrap();
    let codex_30 = std::fs::read_to_string(&codex).unwrap();
    let with_timeout = |text: &str, seconds: u32| {
        text.replace("\"timeout\": 30\n", &format!("\"timeout\": {seconds}\n"))
    };
    let settings = |args: &[&str]| {
        let out = with_agents(&home, args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout(&out)
    };

    // Ask-before-sleep on with the default delays: 10 + 180 + 300 = 490.
    let text = settings(&[
        "settings",
        "--closed-lid-stop-follow-up-webhook-url",
        "http://127.0.0.1:9/x",
    ]);
    for (provider, file) in [("claude", &claude), ("codex", &codex)] {
        let line = format!(
            "refreshed the hook timeout for {provider} (30 s → 490 s): {}",
            file.display()
        );
        assert!(text.contains(&line), "{text}");
    }
    assert!(
        !text.contains("copilot") && !text.contains("opencode"),
        "{text}"
    );
    // Only the timeouts of lidguard's entries changed: the user's entries (the Codex one has a
    // `"timeout": 30` of its own, on the same line as its command), comments and layout keep
    // their bytes.
    let claude_490 = std::fs::read_to_string(&claude).unwrap();
    let codex_490 = std::fs::read_to_string(&codex).unwrap();
    assert_eq!(claude_490, with_timeout(&claude_30, 490));
    assert_eq!(codex_490, with_timeout(&codex_30, 490));
    assert!(
        claude_490.contains("// my settings")
            && claude_490.contains("{ \"type\": \"command\", \"command\": \"notify-send done\" }")
    );
    assert!(
        codex_490
            .contains("{ \"type\": \"command\", \"command\": \"./audit.sh\", \"timeout\": 30 }")
    );
    let claude_timeouts = lidguard_timeouts(&claude_490, "claude-hook");
    assert_eq!(claude_timeouts.len(), 15);
    assert!(
        claude_timeouts.iter().all(|(_, t)| *t == 490),
        "{claude_timeouts:?}"
    );
    for (event, timeout) in lidguard_timeouts(&codex_490, "codex-hook") {
        let want = if matches!(event.as_str(), "SessionEnd" | "Interrupt") {
            3
        } else {
            490
        };
        assert_eq!(timeout, want, "{event}");
    }
    // Agents without lidguard's hooks get none.
    assert!(!home.path().join("copilot/hooks").exists());
    assert!(!home.path().join("opencode/plugins").exists());
    // The refreshed hooks are what hook-status expects, and Codex still trusts them.
    for provider in ["claude", "codex"] {
        let out = with_agents(&home, &["hook-status", "--provider", provider]);
        assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    }

    // Either delay moves the timeout too.
    let text = settings(&["settings", "--post-stop-suspend-delay-seconds", "20"]);
    assert!(
        text.contains("refreshed the hook timeout for claude (490 s → 500 s)"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(&claude).unwrap(),
        with_timeout(&claude_30, 500)
    );
    let text = settings(&[
        "settings",
        "--closed-lid-stop-follow-up-delay-seconds",
        "200",
    ]);
    assert!(
        text.contains("refreshed the hook timeout for codex (500 s → 520 s)"),
        "{text}"
    );

    // A change that keeps the timeout touches no agent config.
    let before = std::fs::read_to_string(&claude).unwrap();
    let text = settings(&["settings", "--session-timeout-minutes", "30"]);
    assert!(!text.contains("refreshed"), "{text}");
    assert_eq!(std::fs::read_to_string(&claude).unwrap(), before);

    // Turning ask-before-sleep off (remove-… or an empty URL) brings back 30 s, byte for byte.
    let text = settings(&["remove-closed-lid-stop-follow-up-webhook"]);
    assert!(
        text.contains("refreshed the hook timeout for claude (520 s → 30 s)")
            && text.contains("refreshed the hook timeout for codex (520 s → 30 s)"),
        "{text}"
    );
    assert_eq!(std::fs::read_to_string(&claude).unwrap(), claude_30);
    assert_eq!(std::fs::read_to_string(&codex).unwrap(), codex_30);
    settings(&[
        "settings",
        "--closed-lid-stop-follow-up-webhook-url",
        "http://127.0.0.1:9/x",
    ]);
    let text = settings(&["settings", "--closed-lid-stop-follow-up-webhook-url", ""]);
    assert!(
        text.contains("refreshed the hook timeout for claude (520 s → 30 s)"),
        "{text}"
    );
    assert_eq!(std::fs::read_to_string(&claude).unwrap(), claude_30);
    for provider in ["claude", "codex"] {
        let out = with_agents(&home, &["hook-status", "--provider", provider]);
        assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    }

    // Removing lidguard's hooks gives back the user's files: the refreshes touched nothing else.
    for provider in ["claude", "codex"] {
        assert!(
            with_agents(&home, &["hook-remove", "--provider", provider])
                .status
                .success()
        );
    }
    assert_eq!(std::fs::read_to_string(&claude).unwrap(), USER_SETTINGS);
    assert_eq!(std::fs::read_to_string(&codex).unwrap(), USER_CODEX_HOOKS);
    assert!(!home.path().join("copilot/hooks").exists());
}

#[test]
fn a_refresh_that_fails_is_a_warning_and_untrusted_codex_hooks_stay_for_the_user() {
    let home = agent_home();
    for dir in ["claude", "codex", "copilot/hooks"] {
        std::fs::create_dir_all(home.path().join(dir)).unwrap();
    }
    let out = with_agents(&home, &["hook-install", "--provider", "codex"]);
    assert!(out.status.success());
    // Claude's file holds lidguard's hook but no longer parses; Copilot's does not parse and
    // holds none of lidguard's (nothing to refresh there, nothing to warn about).
    let claude = home.path().join("claude/settings.json");
    let broken =
        "{ \"hooks\": { \"Stop\": [ { \"hooks\": [ { \"command\": \"lidguard claude-hook\"";
    std::fs::write(&claude, broken).unwrap();
    let copilot = home.path().join("copilot/hooks/lidguard-copilot-cli.json");
    std::fs::write(&copilot, "{ oops").unwrap();

    let out = with_agents(
        &home,
        &[
            "settings",
            "--closed-lid-stop-follow-up-webhook-url",
            "http://127.0.0.1:9/x",
        ],
    );
    assert!(
        out.status.success(),
        "a failed refresh does not fail the settings"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: could not refresh the hook timeout for claude")
            && err.contains("hook-install --provider claude"),
        "{err}"
    );
    assert!(!err.contains("copilot"), "{err}");
    let text = stdout(&out);
    assert!(text.contains("Saved to"), "{text}");
    assert!(
        text.contains("refreshed the hook timeout for codex (30 s → 490 s)"),
        "{text}"
    );
    // Codex never trusted them: lidguard does not trust them on the user's behalf.
    assert!(text.contains("Codex skips hooks nobody trusted"), "{text}");
    assert!(!home.path().join("codex/config.toml").exists());
    assert_eq!(std::fs::read_to_string(&claude).unwrap(), broken);
    assert_eq!(std::fs::read_to_string(&copilot).unwrap(), "{ oops");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(home.places.settings_file()).unwrap())
            .unwrap();
    assert_eq!(
        saved["closedLidStopFollowUpWebhookUrl"],
        "http://127.0.0.1:9/x"
    );
}

#[test]
fn hook_status_reports_a_timeout_lower_than_the_settings_need_as_drift() {
    let home = agent_home();
    std::fs::create_dir_all(home.path().join("claude")).unwrap();
    assert!(
        with_agents(&home, &["hook-install", "--provider", "claude"])
            .status
            .success()
    );
    // Settings written behind lidguard's back (no refresh): the hooks' 30 s is too short.
    home.write_settings(r#"{"closedLidStopFollowUpWebhookUrl": "http://127.0.0.1:9/x"}"#);
    let out = with_agents(&home, &["hook-status", "--provider", "claude", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status[0]["state"], "drifted", "{status}");
    assert!(
        status[0]["drift"]
            .to_string()
            .contains("Stop: timeout 30, expected 490"),
        "{status}"
    );
    // hook-install writes the exact value.
    assert!(
        with_agents(&home, &["hook-install", "--provider", "claude"])
            .status
            .success()
    );
    let text = std::fs::read_to_string(home.path().join("claude/settings.json")).unwrap();
    assert!(
        lidguard_timeouts(&text, "claude-hook")
            .iter()
            .all(|(_, t)| *t == 490)
    );
    let out = with_agents(&home, &["hook-status", "--provider", "claude"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

/// Reference §1.4: "Installed-status check accepts a timeout >= the expected value".
#[test]
fn hook_status_accepts_a_timeout_above_the_expected_one() {
    let home = agent_home();
    std::fs::create_dir_all(home.path().join("claude")).unwrap();
    home.write_settings(r#"{"closedLidStopFollowUpWebhookUrl": "http://127.0.0.1:9/x"}"#);
    assert!(
        with_agents(&home, &["hook-install", "--provider", "claude"])
            .status
            .success()
    );
    // Ask-before-sleep turned off behind lidguard's back: 490 s still outlives every hook.
    home.write_settings("{}");
    let out = with_agents(&home, &["hook-status", "--provider", "claude"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

/// Policy `remote`: a permission hook may wait for the phone, so the installed hooks' timeout
/// becomes the remote wait + 20 s, refreshed when either setting changes.
#[test]
fn the_remote_policy_refreshes_the_hook_timeout_past_the_remote_wait() {
    let home = agent_home();
    std::fs::create_dir_all(home.path().join("claude")).unwrap();
    let claude = home.path().join("claude/settings.json");
    assert!(
        with_agents(&home, &["hook-install", "--provider", "claude"])
            .status
            .success()
    );
    let timeouts = || lidguard_timeouts(&std::fs::read_to_string(&claude).unwrap(), "claude-hook");
    assert!(timeouts().iter().all(|(_, t)| *t == 30));
    let out = with_agents(
        &home,
        &[
            "settings",
            "--ntfy-url",
            "http://127.0.0.1:9/lg-topic",
            "--closed-lid-permission-request-decision",
            "remote",
        ],
    );
    assert!(out.status.success());
    assert!(
        stdout(&out).contains("refreshed the hook timeout for claude (30 s → 80 s)"),
        "{}",
        stdout(&out)
    );
    assert!(timeouts().iter().all(|(_, t)| *t == 80), "{:?}", timeouts());
    let out = with_agents(
        &home,
        &["settings", "--remote-decision-timeout-seconds", "200"],
    );
    assert!(stdout(&out).contains("(80 s → 220 s)"), "{}", stdout(&out));
    let out = with_agents(&home, &["hook-status", "--provider", "claude"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

/// Installed entries name the hook by its absolute path, so an agent started without the
/// user's shell `PATH` (a desktop entry, the Dock, a service) still reaches lidguard; when that
/// executable is moved or removed, `hook-status` says so and `hook-install` points the entries
/// at the lidguard that runs it.
#[cfg(unix)]
#[test]
fn entries_run_an_absolute_path_and_status_flags_one_that_is_gone() {
    let home = agent_home();
    let bin = home.path().join("installed bin");
    std::fs::create_dir_all(&bin).unwrap();
    for (from, to) in [
        (std::path::PathBuf::from(crate::util::BIN), "lidguard"),
        (crate::util::hook_bin(), "lidguard-hook"),
    ] {
        crate::util::write_executable(&bin.join(to), &std::fs::read(from).unwrap());
    }
    let agents = [
        "claude", "codex", "copilot", "opencode", "gemini", "qwen", "kilo", "cline",
    ];
    for dir in agents
        .iter()
        .chain(&["gemini/.gemini", ".cursor", ".factory"])
    {
        std::fs::create_dir_all(home.path().join(dir)).unwrap();
    }
    let hook = bin.join("lidguard-hook").display().to_string();
    let installed_lidguard = |args: &[&str]| {
        let mut cmd = std::process::Command::new(bin.join("lidguard"));
        cmd.args(args);
        let mut cmd = home.configure(cmd);
        cmd.env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .env("HOME", home.path());
        for (k, dir) in [
            ("CLAUDE_CONFIG_DIR", "claude"),
            ("CODEX_HOME", "codex"),
            ("COPILOT_HOME", "copilot"),
            ("OPENCODE_CONFIG_DIR", "opencode"),
            ("GEMINI_CLI_HOME", "gemini"),
            ("QWEN_HOME", "qwen"),
            ("KILO_CONFIG_DIR", "kilo"),
            ("CLINE_DIR", "cline"),
        ] {
            cmd.env(k, home.path().join(dir));
        }
        cmd.output().unwrap()
    };
    assert_ok(&installed_lidguard(&["hook-install", "--provider", "all"]));

    // Every agent's entries run the installed copy by its full path, even though its
    // directory is on PATH (quoted where the shell needs it: the path has a space).
    let mut texts = String::new();
    for dir in agents.iter().chain(&[".cursor"]) {
        for entry in walkdir(&home.path().join(dir)) {
            texts.push_str(&std::fs::read_to_string(entry).unwrap());
        }
    }
    for agent in agents.iter().chain(&["cursor"]) {
        let sub = format!("{agent}-hook");
        assert!(texts.contains(&sub), "{agent} installed");
    }
    let bare = texts
        .lines()
        .filter(|l| l.contains("-hook") && !l.contains(&hook) && !l.contains("<lidguard"))
        .filter(|l| l.contains("lidguard-hook"))
        .collect::<Vec<_>>();
    assert!(bare.is_empty(), "entries without the full path: {bare:?}");

    // Claude's entry, run as a desktop-started Claude would: PATH without the install.
    let settings: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(home.path().join("claude/settings.json")).unwrap(),
    )
    .unwrap();
    let entry = &settings["hooks"]["UserPromptSubmit"][0]["hooks"][0];
    assert_eq!(entry["command"], hook.as_str(), "{entry}");
    let mut agent = std::process::Command::new(entry["command"].as_str().unwrap());
    agent
        .args(
            entry["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap()),
        )
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LIDGUARD_HOME", home.path())
        .env("HOME", home.path().join("user-home"))
        .env("DBUS_SYSTEM_BUS_ADDRESS", &home.bus)
        .current_dir(home.path());
    let out = crate::util::pipe(
        agent,
        br#"{"session_id":"desk","cwd":"/tmp","hook_event_name":"UserPromptSubmit","prompt":"go"}"#,
    );
    assert!(out.status.success(), "{out:?}");
    assert!(
        crate::util::eventually(std::time::Duration::from_secs(10), || home
            .session("desk")
            .is_some()),
        "the hook run with PATH=/usr/bin:/bin reached the daemon: {}",
        home.ok(&["status"])
    );

    // The install goes away: every agent is reported broken, by name and with the fix.
    std::fs::remove_dir_all(&bin).unwrap();
    let out = with_agents(&home, &["hook-status", "--provider", "all", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let reports: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Cursor and Droid have no directory variable: their folders are in the home.
    assert_eq!(reports.as_array().unwrap().len(), agents.len() + 2);
    for r in reports.as_array().unwrap() {
        assert_eq!(r["gonePrograms"], serde_json::json!([hook]), "{r}");
        assert_eq!(r["state"], "broken", "{r}");
    }
    let doctor = stdout(&with_agents(&home, &["doctor"]));
    assert!(
        doctor.contains(&format!(
            "✗ hooks: Codex CLI: broken ({})",
            home.path().join("codex").join("hooks.json").display()
        )) && doctor.contains("the program its entries run is gone"),
        "{doctor}"
    );
    let text = stdout(&with_agents(&home, &["hook-status", "--provider", "codex"]));
    assert!(
        text.contains(&format!(
            "broken: the entries run {hook}, which is not there"
        )) && text.contains("lidguard hook-install --provider codex"),
        "{text}"
    );

    // hook-install from the lidguard that runs now refreshes them all.
    assert_ok(&with_agents(&home, &["hook-install", "--provider", "all"]));
    let out = with_agents(&home, &["hook-status", "--provider", "all", "--json"]);
    let reports: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for r in reports.as_array().unwrap() {
        assert_eq!(r["gonePrograms"], serde_json::json!([]), "{r}");
        assert_ne!(r["state"], "drifted", "{r}");
    }
}

/// Every file under `dir`.
fn walkdir(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walkdir(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// Every file and directory under the agents' folders: path, bytes (files), mode.
#[cfg(unix)]
fn agent_tree(home: &Home) -> Vec<(String, Vec<u8>, u32)> {
    use std::os::unix::fs::PermissionsExt;
    fn walk(dir: &std::path::Path, out: &mut Vec<(String, Vec<u8>, u32)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let bytes = if meta.is_file() {
                std::fs::read(&path).unwrap()
            } else {
                Vec::new()
            };
            out.push((path.display().to_string(), bytes, meta.permissions().mode()));
            if meta.is_dir() {
                walk(&path, out);
            }
        }
    }
    let mut out = Vec::new();
    for dir in [
        "claude", "codex", "copilot", "opencode", "gemini", "qwen", "kilo", "cline", ".cursor",
    ] {
        let dir = home.path().join(dir);
        if dir.exists() {
            walk(&dir, &mut out);
        }
    }
    out.sort();
    out
}

/// `setup --yes --mcp` then `uninstall --yes` on a home with six agents' own configs: every
/// agent file comes back byte for byte with its mode, the daemon is stopped, and none of
/// lidguard's files is left.
#[cfg(unix)]
#[test]
fn setup_then_uninstall_gives_every_agent_file_back_and_leaves_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let home = agent_home();
    let write = |rel: &str, text: &str, mode: u32| {
        let path = home.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    write("claude/settings.json", USER_SETTINGS, 0o640);
    write(
        "codex/config.toml",
        "# mine\nmodel = \"o3\"\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n",
        0o600,
    );
    write(
        "gemini/.gemini/settings.json",
        "{\r\n  \"theme\": \"dark\"\r\n}\r\n",
        0o644,
    );
    write(
        "cline/hooks/PreCompact",
        "#!/bin/sh\nnotify-send compacting\n",
        0o755,
    );
    // One line, and both the hooks and the MCP server go into it.
    write("qwen/settings.json", "{\"theme\": \"dark\"}\n", 0o600);
    std::fs::create_dir_all(home.path().join("opencode")).unwrap();
    let before = agent_tree(&home);

    // Not on a terminal and without --yes: refused, nothing changed.
    let out = with_agents(&home, &["setup"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--yes"),
        "{out:?}"
    );
    assert_eq!(agent_tree(&home), before);

    let out = with_agents(&home, &["setup", "--yes", "--mcp"]);
    let text = stdout(&out);
    assert!(
        text.contains("Claude Code") && text.contains("lidguard doctor"),
        "{text}"
    );
    let settings = std::fs::read_to_string(home.path().join("claude/settings.json")).unwrap();
    assert!(settings.contains("claude-hook") && settings.contains("notify-send done"));
    assert!(
        std::fs::read_to_string(home.path().join("codex/config.toml"))
            .unwrap()
            .contains("mcp-server")
    );
    assert!(home.path().join("cline/hooks/TaskStart").exists());
    assert!(home.path().join("opencode/plugins/lidguard.js").exists());

    // A session, so there is a daemon to stop.
    let out = crate::util::pipe(
        home.hook_cmd(&["claude-hook"]),
        br#"{"session_id":"s","cwd":"/tmp","hook_event_name":"UserPromptSubmit","prompt":"go"}"#,
    );
    assert!(out.status.success());
    assert!(crate::util::eventually(
        std::time::Duration::from_secs(10),
        || home.daemon_pid().is_some()
    ));
    let daemon = home.daemon_pid().unwrap();

    let out = with_agents(&home, &["uninstall", "--yes"]);
    assert_ok(&out);
    let text = stdout(&out);
    assert!(
        text.contains(&format!("stopped the daemon (pid {daemon})")),
        "{text}"
    );
    assert!(!crate::util::alive(daemon), "the daemon is gone");
    assert_eq!(
        agent_tree(&home),
        before,
        "every agent file and folder as it was"
    );
    for dir in ["config", "state", "run"] {
        assert!(!home.path().join(dir).exists(), "{dir} left behind: {text}");
    }
    // Again, with nothing left to remove: the edits' own lock files go too.
    let out = with_agents(&home, &["uninstall", "--yes"]);
    assert_ok(&out);
    for dir in ["config", "state", "run"] {
        assert!(
            !home.path().join(dir).exists(),
            "{dir} left by a second uninstall: {}",
            stdout(&out)
        );
    }
    assert_eq!(agent_tree(&home), before);
}

/// `setup --json` and `uninstall --json`: with `--yes` only, and then one JSON document each
/// that says what was done (the hooks per agent, the doctor's checks, what was removed).
#[cfg(unix)]
#[test]
fn setup_and_uninstall_say_what_they_did_in_json() {
    let home = agent_home();
    let settings = home.path().join("claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, USER_SETTINGS).unwrap();

    let out = with_agents(&home, &["setup", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("add --yes"),
        "{out:?}"
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), USER_SETTINGS);

    let out = with_agents(&home, &["setup", "--yes", "--json", "--no-tray"]);
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)));
    assert_eq!(
        doc["agentsFound"],
        serde_json::json!(["Claude Code"]),
        "{doc}"
    );
    let claude = doc["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["provider"] == "claude")
        .unwrap_or_else(|| panic!("{doc}"));
    assert!(claude["outcomes"].is_array(), "{doc}");
    assert!(
        doc["doctor"]["checks"]
            .as_array()
            .is_some_and(|c| !c.is_empty())
    );
    let ok = doc["ok"].as_bool().unwrap();
    assert_eq!(ok, doc["doctor"]["ok"], "{doc}");
    assert_eq!(out.status.success(), ok, "{doc}");
    assert!(
        std::fs::read_to_string(&settings)
            .unwrap()
            .contains("claude-hook")
    );

    let out = with_agents(&home, &["uninstall", "--yes", "--json"]);
    assert_ok(&out);
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)));
    assert_eq!(doc["ok"], true, "{doc}");
    assert_eq!(doc["leftBehind"], serde_json::json!([]), "{doc}");
    assert!(
        doc["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["provider"] == "claude")
    );
    assert!(
        doc["removed"].as_array().is_some_and(|r| !r.is_empty()),
        "{doc}"
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), USER_SETTINGS);
}

#[test]
fn setup_without_any_agent_says_where_it_looked() {
    let home = agent_home();
    let out = with_agents(&home, &["setup", "--yes"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains("No agent found") && text.contains("run `lidguard setup` again"),
        "{text}"
    );
}

/// Backups of an agent's config (which can hold API keys) do not pile up: the newest five of
/// each file stay.
#[test]
fn backups_keep_the_newest_five_per_file() {
    let home = agent_home();
    let file = home.path().join("claude/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, USER_SETTINGS).unwrap();
    for _ in 0..4 {
        assert_ok(&with_agents(
            &home,
            &["hook-install", "--provider", "claude"],
        ));
        assert_ok(&with_agents(
            &home,
            &["hook-remove", "--provider", "claude"],
        ));
    }
    let dir = home.path().join("state/backups/claude");
    let mut backups: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    backups.sort();
    assert_eq!(backups.len(), 5, "{backups:?}");
    assert!(backups.iter().all(|b| b.starts_with("settings.json.")));
    // The last one saved is the file with lidguard's entries, just before the last remove.
    let newest = std::fs::read_to_string(dir.join(backups.last().unwrap())).unwrap();
    assert!(newest.contains("claude-hook"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), USER_SETTINGS);
}

/// `setup --hook-new-agents`: an agent whose config folder appears later is hooked when the
/// daemon starts, once; after the user unhooks it, it stays unhooked.
#[test]
fn an_agent_installed_after_setup_is_hooked_once_when_opted_in() {
    let home = agent_home();
    std::fs::create_dir_all(home.path().join("claude")).unwrap();
    let out = with_agents(&home, &["setup", "--yes", "--hook-new-agents"]);
    assert!(
        stdout(&out).contains("hook an agent you install later"),
        "{out:?}"
    );
    let codex = home.path().join("codex/hooks.json");
    // Codex is installed (its folder appears); the next daemon start hooks it.
    std::fs::create_dir_all(home.path().join("codex")).unwrap();
    let start = |id: &str| {
        let mut cmd = home.cmd(&["start", "--provider", "custom", "--session", id]);
        cmd.env("CODEX_HOME", home.path().join("codex"))
            .env("CLAUDE_CONFIG_DIR", home.path().join("claude"))
            .env("HOME", home.path());
        assert_ok(&cmd.output().unwrap());
    };
    start("a");
    // The daemon writes the hooks, then the trust records, then its log line: each is waited
    // for (a busy machine may show the first before the others).
    let shows = |path: &std::path::Path, text: &str| {
        crate::util::eventually(std::time::Duration::from_secs(10), || {
            std::fs::read_to_string(path).is_ok_and(|t| t.contains(text))
        })
    };
    assert!(
        shows(&codex, "codex-hook"),
        "Codex hooked at the daemon's start"
    );
    assert!(
        shows(&home.path().join("codex/config.toml"), "trusted_hash"),
        "and trusted, as setup does"
    );
    assert!(shows(
        &home.places.log_file(),
        "hooked an agent installed after setup"
    ));
    // Unhooked by the user: a later daemon start leaves it so.
    assert_ok(&with_agents(&home, &["hook-remove", "--provider", "codex"]));
    assert!(!codex.exists());
    home.ok(&["daemon-stop"]);
    start("b");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!codex.exists(), "an agent the user unhooked stays unhooked");
}

#[test]
fn installers_report_as_json_for_scripts() {
    let home = agent_home();
    std::fs::create_dir_all(home.path().join("claude")).unwrap();
    let json = |args: &[&str]| -> serde_json::Value {
        let out = with_agents(&home, args);
        assert_ok(&out);
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let dry = json(&[
        "hook-install",
        "--provider",
        "claude",
        "--dry-run",
        "--json",
    ]);
    assert_eq!(dry[0]["provider"], "claude");
    assert_eq!(dry[0]["outcomes"][0]["action"], "wouldChange", "{dry}");
    assert!(!home.path().join("claude/settings.json").exists());
    let done = json(&["hook-install", "--provider", "all", "--json"]);
    let claude = crate::util::row_where(&done, "provider", "claude");
    assert_eq!(claude["outcomes"][0]["action"], "written");
    assert!(
        done.as_array()
            .unwrap()
            .iter()
            .any(|r| r["provider"] == "codex" && r["skipped"].is_string()),
        "{done}"
    );
    let mcp = json(&["mcp-install", "--provider", "claude", "--json"]);
    assert_eq!(mcp[0]["outcome"]["action"], "written", "{mcp}");
    let removed = json(&["hook-remove", "--provider", "claude", "--json"]);
    assert_eq!(removed[0]["outcomes"][0]["action"], "deleted", "{removed}");
    let removed = json(&["mcp-remove", "--provider", "claude", "--json"]);
    assert!(removed[0]["outcome"]["action"].is_string(), "{removed}");
}

/// Where a desktop session runs, `setup` starts the tray at login (an XDG autostart entry,
/// readable by the user alone) and `uninstall` deletes it with the folders it created; without
/// a desktop, or with `--no-tray`, there is no entry.
#[cfg(target_os = "linux")]
#[test]
fn setup_starts_the_tray_at_login_where_a_desktop_runs_and_uninstall_takes_it_away() {
    use std::os::unix::fs::PermissionsExt;
    let home = agent_home();
    std::fs::create_dir_all(home.path().join("claude")).unwrap();
    let entry = home.path().join(".config/autostart/lidguard-tray.desktop");
    let run = |args: &[&str], desktop: Option<&str>| {
        let mut cmd = home.cmd(args);
        cmd.env("HOME", home.path())
            .env("CLAUDE_CONFIG_DIR", home.path().join("claude"))
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("XDG_CURRENT_DESKTOP");
        if let Some(desktop) = desktop {
            cmd.env("XDG_CURRENT_DESKTOP", desktop);
        }
        cmd.output().unwrap()
    };
    let out = run(&["setup", "--yes"], None);
    assert!(out.status.code().is_some(), "{out:?}");
    assert!(!entry.exists(), "no desktop, no entry");
    let out = run(&["setup", "--yes", "--no-tray"], Some("XFCE"));
    assert!(out.status.code().is_some(), "{out:?}");
    assert!(!entry.exists(), "--no-tray");

    let out = run(&["setup", "--yes"], Some("XFCE"));
    let text = stdout(&out);
    assert!(text.contains("start the tray icon at login"), "{text}");
    assert!(
        text.contains("✓ tray: starts at login"),
        "doctor says so: {text}"
    );
    let written = std::fs::read_to_string(&entry).unwrap();
    assert!(
        written.contains(&format!("\nExec={} tray\n", crate::util::BIN)),
        "{written}"
    );
    assert_eq!(
        std::fs::metadata(&entry).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // A file of the user's in the same folder stays.
    let mine = home.path().join(".config/autostart/mine.desktop");
    std::fs::write(&mine, "[Desktop Entry]\n").unwrap();

    let out = run(&["uninstall", "--yes"], Some("XFCE"));
    assert_ok(&out);
    assert!(stdout(&out).contains("lidguard-tray.desktop"), "{out:?}");
    assert!(!entry.exists());
    assert!(mine.exists(), "the user's entry and its folder stay");
    std::fs::remove_file(&mine).unwrap();
    std::fs::remove_dir(home.path().join(".config/autostart")).unwrap();
    std::fs::remove_dir(home.path().join(".config")).unwrap();

    // Written again into folders it creates, which go with it.
    run(&["setup", "--yes"], Some("XFCE"));
    std::fs::remove_dir(home.path().join(".config/autostart"))
        .expect_err("the folder holds the entry");
    let out = run(&["uninstall", "--yes"], Some("XFCE"));
    assert_ok(&out);
    assert!(
        !home.path().join(".config").exists(),
        "the folders lidguard created are gone"
    );
}

/// A `lidguard-tray.desktop` lidguard did not write (the user's own, or another tool's) is
/// never rewritten or deleted: `setup` and `uninstall` leave it byte for byte and say so, and
/// `doctor` names it.
#[cfg(target_os = "linux")]
#[test]
fn a_foreign_autostart_entry_survives_setup_and_uninstall_byte_for_byte() {
    let home = agent_home();
    std::fs::create_dir_all(home.path().join("claude")).unwrap();
    let entry = home.path().join(".config/autostart/lidguard-tray.desktop");
    std::fs::create_dir_all(entry.parent().unwrap()).unwrap();
    let foreign = "[Desktop Entry]\nType=Application\nExec=/opt/mine/tray --quiet\n# mine\n";
    std::fs::write(&entry, foreign).unwrap();
    let run = |args: &[&str]| {
        let mut cmd = home.cmd(args);
        cmd.env("HOME", home.path())
            .env("CLAUDE_CONFIG_DIR", home.path().join("claude"))
            .env_remove("XDG_CONFIG_HOME")
            .env("XDG_CURRENT_DESKTOP", "XFCE");
        cmd.output().unwrap()
    };
    let out = run(&["setup", "--yes"]);
    let said = format!("{}{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(&entry).unwrap(), foreign);
    assert!(said.contains("lidguard-tray.desktop"), "{said}");
    let out = run(&["doctor"]);
    let doctor = stdout(&out);
    assert!(
        doctor
            .lines()
            .any(|l| l.contains("✗") && l.contains("lidguard-tray.desktop")),
        "{doctor}"
    );
    let out = run(&["uninstall", "--yes"]);
    assert_ok(&out);
    assert_eq!(std::fs::read_to_string(&entry).unwrap(), foreign);
}

#[test]
fn droid_install_refuses_to_silence_the_users_settings_hooks_and_keeps_its_hooks_json() {
    let home = agent_home();
    let dir = home.path().join(".factory");
    std::fs::create_dir_all(&dir).unwrap();
    // Droid runs settings.json's hooks only for events hooks.json does not name.
    let settings = dir.join("settings.json");
    let settings_text = "{\n  \"hooks\": {\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}]\n  }\n}\n";
    std::fs::write(&settings, settings_text).unwrap();
    let out = with_agents(&home, &["hook-install", "--provider", "droid"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("settings.json") && err.contains("for Stop") && err.contains("/hooks"),
        "{err}"
    );
    assert!(!dir.join("hooks.json").exists(), "nothing written");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), settings_text);

    // The user's hooks in hooks.json (where Droid's /hooks keeps them): installed next to them,
    // and removed to the byte.
    std::fs::write(&settings, "{}\n").unwrap();
    let hooks = dir.join("hooks.json");
    let theirs = "{\n  \"Stop\": [\n    {\n      \"hooks\": [\n        {\n          \"type\": \"command\",\n          \"command\": \"say done\"\n        }\n      ]\n    }\n  ],\n  \"showHookOutput\": true\n}";
    std::fs::write(&hooks, theirs).unwrap();
    assert_ok(&with_agents(
        &home,
        &["hook-install", "--provider", "droid"],
    ));
    let installed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&hooks).unwrap()).unwrap();
    assert_eq!(
        installed["Stop"].as_array().unwrap().len(),
        2,
        "{installed}"
    );
    assert!(installed["Stop"][0].to_string().contains("say done"));
    assert!(installed["SessionStart"].to_string().contains("droid-hook"));
    assert!(
        installed.get("hooks").is_none(),
        "events at the top level: {installed}"
    );
    let out = with_agents(&home, &["hook-status", "--provider", "droid"]);
    assert!(stdout(&out).contains("installed"), "{}", stdout(&out));
    assert_ok(&with_agents(&home, &["hook-remove", "--provider", "droid"]));
    assert_eq!(std::fs::read_to_string(&hooks).unwrap(), theirs);
}

#[test]
fn doctor_names_the_agents_that_keep_the_machine_awake_themselves_and_what_they_cover() {
    let home = agent_home();
    let codex = home.path().join("codex");
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::write(
        codex.join("config.toml"),
        "model = \"gpt-5\"\n\n[features]\nprevent_idle_sleep = true\n",
    )
    .unwrap();
    let qwen = home.path().join("qwen");
    std::fs::create_dir_all(&qwen).unwrap();
    std::fs::write(
        qwen.join("settings.json"),
        "{\n  \"general\": {\n    \"preventSystemSleep\": true\n  }\n}\n",
    )
    .unwrap();
    // Copilot's folder exists, its keepAlive is off: not named.
    let copilot = home.path().join("copilot");
    std::fs::create_dir_all(&copilot).unwrap();
    std::fs::write(copilot.join("settings.json"), "{\"keepAlive\": \"off\"}\n").unwrap();
    let out = with_agents(&home, &["doctor", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let own: Vec<(&str, &str, bool)> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["area"].as_str().unwrap().starts_with("own keep-awake"))
        .map(|c| {
            (
                c["area"].as_str().unwrap(),
                c["detail"].as_str().unwrap(),
                c["ok"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(own.len(), 2, "{own:?}");
    let (area, detail, ok) = own[0];
    assert_eq!(area, "own keep-awake: Codex CLI");
    assert!(ok, "information, not a failure");
    assert!(
        detail.contains("[features] prevent_idle_sleep = true")
            && detail.contains("idle sleep")
            && detail.contains("lidguard holds the lid"),
        "{detail}"
    );
    let (area, detail, _) = own[1];
    assert_eq!(area, "own keep-awake: Qwen Code");
    assert!(
        detail.contains("general.preventSystemSleep = true"),
        "{detail}"
    );
    // Turned off, Qwen is no longer named; left unset, it is (on by default).
    std::fs::write(
        qwen.join("settings.json"),
        "{\"general\": {\"preventSystemSleep\": false}}\n",
    )
    .unwrap();
    let text = stdout(&with_agents(&home, &["doctor"]));
    assert!(!text.contains("own keep-awake: Qwen Code"), "{text}");
    assert!(text.contains("✓ own keep-awake: Codex CLI"), "{text}");
    std::fs::write(qwen.join("settings.json"), "{}\n").unwrap();
    let text = stdout(&with_agents(&home, &["doctor"]));
    assert!(
        text.contains("general.preventSystemSleep, on by default"),
        "{text}"
    );
}
