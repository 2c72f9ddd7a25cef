//! What lidguard writes keeps the user's permissions, links and bytes: the real binary, real
//! files, real processes (the "trust" issue's findings, each reproduced and checked).

use std::os::unix::fs::{FileTypeExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{Value, json};

use crate::util::{BIN, Home, assert_ok};

fn mode(path: &Path) -> u32 {
    lidguard_files::private::mode_of(path).unwrap()
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn user(home: &Home) -> PathBuf {
    home.path().join("user-home")
}

/// Writes an agent file under the user's home with `mode`.
fn agent_file(home: &Home, rel: &str, text: &str, mode: u32) -> PathBuf {
    let path = user(home).join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    chmod(&path, mode);
    path
}

#[track_caller]
fn ok_umask(home: &Home, args: &[&str]) -> String {
    let out = home.cmd_umask("022", args).output().unwrap();
    assert!(
        out.status.success(),
        "lidguard {args:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every file and directory under `dir`, links not followed.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        out.push(path.clone());
        if entry.file_type().unwrap().is_dir() {
            walk(&path, out);
        }
    }
}

#[test]
fn everything_lidguard_creates_or_rewrites_is_private_whatever_the_umask() {
    let home = Home::new();
    // The issue's repro files: private ones with secrets, and one the user keeps 0644.
    let settings = agent_file(
        &home,
        ".claude/settings.json",
        "{\"env\": {\"K\": \"s\"}}\n",
        0o600,
    );
    let claude_json = agent_file(
        &home,
        ".claude.json",
        "{\"oauthAccount\": {\"x\": 1}}\n",
        0o600,
    );
    let codex = agent_file(
        &home,
        ".codex/config.toml",
        "[mcp_servers.o]\ncommand = \"x\"\nenv = { K = \"s\" }\n",
        0o600,
    );
    let copilot = agent_file(
        &home,
        ".copilot/mcp-config.json",
        "{\"mcpServers\": {}}\n",
        0o644,
    );

    ok_umask(&home, &["settings", "--webhook-secret", "s3cr3t"]);
    ok_umask(&home, &["start", "--provider", "claude", "--session", "s"]);
    ok_umask(&home, &["hook-install", "--provider", "claude"]);
    ok_umask(&home, &["hook-install", "--provider", "codex"]);
    for agent in ["codex", "claude", "copilot"] {
        ok_umask(&home, &["mcp-install", agent]);
    }
    ok_umask(&home, &["hook-events", "--provider", "claude"]);

    // Rewritten files keep their mode; a file lidguard creates for an agent is the user's alone.
    assert_eq!(mode(&settings), 0o600);
    assert_eq!(mode(&claude_json), 0o600);
    assert_eq!(
        mode(&codex),
        0o600,
        "the issue's repro: config.toml stays 0600"
    );
    assert_eq!(mode(&copilot), 0o644, "a 0644 file stays 0644");
    assert_eq!(mode(&user(&home).join(".codex/hooks.json")), 0o600);

    // lidguard's own files: directories 0700, files 0600; backups keep their original's mode.
    let mut all = Vec::new();
    for top in ["config", "state", "run"] {
        let dir = home.path().join(top);
        assert!(dir.is_dir(), "{top}");
        all.push(dir.clone());
        walk(&dir, &mut all);
    }
    let mut seen_backups = 0;
    for path in &all {
        let meta = std::fs::symlink_metadata(path).unwrap();
        let rel = path
            .strip_prefix(home.path())
            .unwrap()
            .display()
            .to_string();
        if meta.is_dir() {
            assert_eq!(mode(path), 0o700, "{rel}");
        } else if meta.file_type().is_socket() {
            assert_eq!(mode(path), 0o600, "{rel}");
        } else if rel.starts_with("state/backups/") {
            seen_backups += 1;
            let expected = if rel.starts_with("state/backups/mcp-copilot/") {
                0o644
            } else {
                0o600
            };
            assert_eq!(mode(path), expected, "{rel}");
        } else {
            assert_eq!(mode(path), 0o600, "{rel}");
        }
    }
    assert_eq!(seen_backups, 4, "{all:?}");
    for expected in [
        "config/settings.json",
        "state/lidguard.db",
        "state/lidguard.db-wal",
        "state/lidguard.log",
        "run/lidguard.sock",
        "run/lidguard.lock",
    ] {
        assert!(
            all.contains(&home.path().join(expected)),
            "{expected} was checked: {all:?}"
        );
    }
}

#[test]
fn files_that_are_too_open_are_tightened_at_start_with_a_line_in_the_log() {
    let home = Home::new();
    home.write_settings("{}");
    chmod(&home.places.config_dir, 0o755);
    chmod(&home.places.settings_file(), 0o644);
    std::fs::create_dir_all(&home.places.state_dir).unwrap();
    chmod(&home.places.state_dir, 0o755);
    std::fs::write(home.places.log_file(), "").unwrap();
    chmod(&home.places.log_file(), 0o644);

    home.ok(&["status"]);
    assert_eq!(mode(&home.places.config_dir), 0o700);
    assert_eq!(mode(&home.places.settings_file()), 0o600);
    assert_eq!(mode(&home.places.state_dir), 0o700);
    assert_eq!(mode(&home.places.log_file()), 0o600);
    let log = std::fs::read_to_string(home.places.log_file()).unwrap();
    assert!(
        log.contains("tightened the permissions of")
            && log.contains("settings.json from 0644 to 0600"),
        "{log}"
    );
}

#[test]
fn settings_written_by_many_processes_at_once_lose_nothing() {
    let home = Home::new();
    for round in 0..3u32 {
        // (flag, value, where settings.json keeps it)
        let cli: Vec<(&str, String, &str)> = vec![
            (
                "session-timeout-minutes",
                (20 + round).to_string(),
                "/sessionTimeoutMinutes",
            ),
            (
                "suspend-history-count",
                (5 + round).to_string(),
                "/suspendHistoryEntryCount",
            ),
            (
                "post-stop-suspend-delay-seconds",
                (11 + round).to_string(),
                "/postStopSuspendDelaySeconds",
            ),
            (
                "power-request-reason",
                format!("round {round}"),
                "/powerRequest/reason",
            ),
            (
                "emergency-hibernation-temperature-celsius",
                (80 + round).to_string(),
                "/emergencyHibernationTemperatureCelsius",
            ),
            (
                "webhook-secret",
                format!("secret-{round}"),
                "/webhookSecret",
            ),
            (
                "user-interface-culture",
                if round % 2 == 0 { "ko" } else { "en" }.to_owned(),
                "/userInterfaceCulture",
            ),
            (
                "server-runtime-cleanup-delay-minutes",
                (30 + round).to_string(),
                "/serverRuntimeCleanupDelayMinutes",
            ),
        ];
        // The MCP server's update_settings at the same moment.
        let mut server = crate::mcp::Server::start(&home, &["mcp-server"]);
        let children: Vec<_> = cli
            .iter()
            .map(|(flag, value, _)| {
                home.cmd(&["settings", &format!("--{flag}"), value])
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let volume = 30 + round;
        let result = server.tool(
            10 + u64::from(round),
            "update_settings",
            &json!({"postStopSuspendSoundVolumeOverridePercent": volume, "preventDisplaySleep": round % 2 == 0}),
        );
        assert_ne!(result["isError"], true, "{result}");
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert_ok(&out);
        }
        server.close();
        let saved: Value =
            serde_json::from_str(&std::fs::read_to_string(home.places.settings_file()).unwrap())
                .unwrap();
        for (flag, value, pointer) in &cli {
            let found = saved.pointer(pointer).cloned().unwrap_or(Value::Null);
            let as_text = found
                .as_str()
                .map_or_else(|| found.to_string(), str::to_owned);
            assert_eq!(&as_text, value, "round {round}: --{flag} was lost: {saved}");
        }
        let shown = &saved;
        assert_eq!(shown["postStopSuspendSoundVolumeOverridePercent"], volume);
        assert_eq!(shown["powerRequest"]["preventDisplaySleep"], round % 2 == 0);
    }
}

#[test]
fn agent_configs_edited_by_many_processes_at_once_lose_nothing() {
    let home = Home::new();
    let claude_json = agent_file(&home, ".claude.json", "{\n  \"numStartups\": 1\n}\n", 0o600);
    let mut children = vec![
        home.cmd(&["mcp-install", "claude"])
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    ];
    for i in 0..8 {
        let config = claude_json.display().to_string();
        children.push(
            home.cmd(&[
                "provider-mcp-install",
                "--config",
                &config,
                "--provider-name",
                &format!("p{i}"),
                "--server-name",
                &format!("server-{i}"),
            ])
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
        );
    }
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let value: Value =
        serde_json::from_str(&std::fs::read_to_string(&claude_json).unwrap()).unwrap();
    let servers = value["mcpServers"].as_object().unwrap();
    assert_eq!(servers.len(), 9, "{value}");
    assert!(servers.contains_key("lidguard"));
    assert_eq!(value["numStartups"], 1);
    assert_eq!(mode(&claude_json), 0o600);
}

#[test]
fn a_linked_config_is_edited_where_it_lives_and_stays_a_link() {
    let home = Home::new();
    let repo = home.path().join("dotfiles/claude");
    std::fs::create_dir_all(&repo).unwrap();
    let original = "{\n  \"model\": \"opus\"\n}\n";
    std::fs::write(repo.join("settings.json"), original).unwrap();
    chmod(&repo.join("settings.json"), 0o640);
    std::fs::create_dir_all(user(&home).join(".claude")).unwrap();
    let link = user(&home).join(".claude/settings.json");
    symlink("../../dotfiles/claude/settings.json", &link).unwrap();

    let dry = home.ok(&["hook-install", "--provider", "claude", "--dry-run"]);
    assert!(
        dry.contains("the file edited is") && dry.contains("dotfiles/claude/settings.json"),
        "{dry}"
    );
    home.ok(&["hook-install", "--provider", "claude"]);
    assert!(link.is_symlink());
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        Path::new("../../dotfiles/claude/settings.json")
    );
    assert!(
        std::fs::read_to_string(repo.join("settings.json"))
            .unwrap()
            .contains("claude-hook")
    );
    assert_eq!(mode(&repo.join("settings.json")), 0o640);
    let status = home.ok(&["hook-status", "--provider", "claude"]);
    assert!(
        status.contains("installed") && status.contains("a link to"),
        "{status}"
    );

    home.ok(&["hook-remove", "--provider", "claude"]);
    assert!(link.is_symlink());
    assert_eq!(
        std::fs::read_to_string(repo.join("settings.json")).unwrap(),
        original
    );
}

#[test]
fn a_link_into_a_read_only_place_is_refused_with_a_clear_message() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: mounting a read-only file system needs root (CI runs as root)");
        return;
    }
    let home = Home::new();
    let store = home.path().join("nix-store");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::create_dir_all(user(&home).join(".claude")).unwrap();
    let link = user(&home).join(".claude/settings.json");
    symlink(store.join("settings.json"), &link).unwrap();
    // home-manager's store: a read-only file system, in a mount namespace of this test's own.
    let script = format!(
        "mount -t tmpfs tmpfs {store} && printf '{{}}\\n' > {store}/settings.json && \
         mount -o remount,ro {store} && exec \"$0\" hook-install --provider claude",
        store = store.display()
    );
    let mut cmd = std::process::Command::new("unshare");
    cmd.arg("-m").arg("sh").arg("-c").arg(script).arg(BIN);
    cmd.env("LIDGUARD_HOME", home.path())
        .env("HOME", user(&home))
        .env("DBUS_SYSTEM_BUS_ADDRESS", &home.bus);
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("read-only place")
            && err.contains("a link to")
            && err.contains("home-manager"),
        "{err}"
    );
}

const LIDGUARD_STOP: &str =
    "{\"hooks\": [{\"type\": \"command\", \"command\": \"lidguard claude-hook\"}]}";

#[test]
fn a_key_written_twice_is_refused_and_status_judges_the_copy_the_agent_reads() {
    let home = Home::new();
    // lidguard's entries in the first `hooks`; Claude Code reads the last one (JSON.parse).
    let text = format!(
        "{{\n  \"hooks\": {{\"Stop\": [{LIDGUARD_STOP}]}},\n  \"model\": \"opus\",\n  \"hooks\": {{}}\n}}\n"
    );
    let file = agent_file(&home, ".claude/settings.json", &text, 0o600);
    let out = home.run(&["hook-status", "--provider", "claude", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report[0]["state"], "missing", "{report}");
    assert!(
        crate::util::text(&report[0]["warnings"][0])
            .contains("`hooks` appears 2 times (lines 2, 4)")
    );

    let err = home.fails(&["hook-install", "--provider", "claude"]);
    assert!(
        err.contains(&file.display().to_string())
            && err.contains("`hooks` appears 2 times")
            && err.contains("Merge the copies"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text, "untouched");

    // Codex refuses such a hooks.json as a whole: no hooks run at all.
    let codex = agent_file(
        &home,
        ".codex/hooks.json",
        &format!(
            "{{\"hooks\": {{}}, \"hooks\": {{\"Stop\": [{}]}}}}",
            LIDGUARD_STOP.replace("claude", "codex")
        ),
        0o600,
    );
    let out = home.run(&["hook-status", "--provider", "codex"]);
    assert_eq!(out.status.code(), Some(1));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("missing") && shown.contains("runs none of its hooks"),
        "{shown}"
    );
    assert!(
        home.run(&["hook-install", "--provider", "codex"])
            .status
            .code()
            == Some(1)
    );
    assert!(
        std::fs::read_to_string(&codex)
            .unwrap()
            .starts_with("{\"hooks\": {}, \"hooks\"")
    );

    // An MCP config with the container twice: status reads the last copy.
    agent_file(
        &home,
        ".claude.json",
        "{\"mcpServers\": {\"lidguard\": {\"type\": \"stdio\", \"command\": \"/x/lidguard\", \"args\": [\"mcp-server\"]}}, \"mcpServers\": {}}",
        0o600,
    );
    let out = home.run(&["mcp-status", "claude"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("missing"));
}

#[test]
fn a_read_only_config_is_refused_unless_forced() {
    let home = Home::new();
    let file = agent_file(&home, ".claude/settings.json", "{}\n", 0o444);
    let err = home.fails(&["hook-install", "--provider", "claude"]);
    assert!(
        err.contains(&file.display().to_string())
            && err.contains("read-only")
            && err.contains("--force"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "{}\n");
    home.ok(&["hook-install", "--provider", "claude", "--force"]);
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("claude-hook")
    );
    assert_eq!(mode(&file), 0o444, "it stays read-only");
    home.ok(&["hook-remove", "--provider", "claude", "--force"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "{}\n");
}

#[test]
fn an_mcp_entry_named_lidguard_that_lidguard_did_not_write_is_not_taken_over() {
    let home = Home::new();
    let original = "{\n  \"mcpServers\": {\n    \"lidguard\": {\"command\": \"node\", \"args\": [\"my-lidguard.js\"], \"env\": {\"TOKEN\": \"t\"}}\n  }\n}\n";
    let file = agent_file(&home, ".claude.json", original, 0o600);
    let err = home.fails(&["mcp-install", "claude"]);
    assert!(
        err.contains("is not lidguard's") && err.contains("node my-lidguard.js"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);

    let out = home.run(&["mcp-status", "claude"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("not lidguard's"));
    let removed = home.ok(&["mcp-remove", "claude"]);
    assert!(removed.contains("left as it is"), "{removed}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);

    home.ok(&["mcp-install", "claude", "--force"]);
    let taken: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        taken["mcpServers"]["lidguard"]["args"],
        json!(["mcp-server"])
    );
    assert_eq!(
        taken["mcpServers"]["lidguard"]["env"]["TOKEN"], "t",
        "the user's keys stay"
    );
    home.ok(&["mcp-remove", "claude"]);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        original,
        "put back as it was"
    );
}

#[test]
fn control_characters_from_payloads_never_reach_the_log_raw() {
    let home = Home::new();
    let evil = "s\u{0}\u{1b}[2J\nFORGED 2026-01-01T00:00:00Z ERROR lidguard: you were hacked\r";
    let payload = json!({
        "hook_event_name": "UserPromptSubmit",
        "session_id": evil,
        "prompt": "hi",
        "cwd": "/tmp",
    });
    let out = crate::util::pipe(home.cmd(&["claude-hook"]), payload.to_string().as_bytes());
    assert!(out.status.success());
    // A hook that cannot be read leaves a note too, with the agent's text in it.
    let out = crate::util::pipe(
        home.cmd(&["copilot-hook", "--event", "evil\u{1b}]0;title\u{7}\nFORGED"]),
        b"not json \x1b[31m",
    );
    assert!(out.status.success());
    home.ok(&["status"]);
    crate::util::signal(home.daemon_pid().unwrap(), rustix::process::Signal::TERM);
    assert!(home.wait_daemon_gone(std::time::Duration::from_secs(10)));
    let log = std::fs::read(home.places.log_file()).unwrap();
    let text = String::from_utf8_lossy(&log);
    assert!(
        text.contains("\\u{1b}[2J"),
        "the session id is in the log, escaped:\n{text}"
    );
    for (i, b) in log.iter().enumerate() {
        assert!(
            *b == b'\n' || (*b >= 0x20 && *b != 0x7f),
            "raw control byte {b:#04x} at {i}:\n{text}"
        );
    }
    assert!(
        !text.lines().any(|l| l.starts_with("FORGED")),
        "a payload cannot start a log line:\n{text}"
    );
}

#[test]
fn a_full_disk_shows_in_status_until_a_write_succeeds_again() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: a small private file system needs root (CI runs as root)");
        return;
    }
    let home = Home::new();
    let state = home.places.state_dir.clone();
    std::fs::create_dir_all(&state).unwrap();
    // The daemon's state directory on a 2 MiB file system of its own mount namespace.
    let script = format!(
        "mount -t tmpfs -o size=2m tmpfs {} && exec \"$0\" run-server",
        state.display()
    );
    let mut daemon = std::process::Command::new("unshare");
    daemon.arg("-m").arg("sh").arg("-c").arg(script).arg(BIN);
    daemon
        .env("LIDGUARD_HOME", home.path())
        .env("HOME", user(&home))
        .env("DBUS_SYSTEM_BUS_ADDRESS", &home.bus)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = daemon.spawn().unwrap();
    assert!(crate::util::eventually(
        std::time::Duration::from_secs(10),
        || home.socket().exists()
    ));
    home.ok(&["start", "--provider", "claude", "--session", "s"]);
    assert_eq!(home.status()["store"]["error"], Value::Null);

    // Fill that file system, seen through the daemon's own root.
    let inside =
        PathBuf::from(format!("/proc/{}/root", child.id())).join(state.strip_prefix("/").unwrap());
    let fill = inside.join("fill");
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&fill).unwrap();
        let block = vec![0u8; 64 * 1024];
        while f.write_all(&block).is_ok() {}
    }
    // Every write now fails: hooks still work, and status says why history is not saved.
    for i in 0..20 {
        home.ok(&[
            "start",
            "--provider",
            "claude",
            "--session",
            &format!("t{i}"),
        ]);
    }
    let status = home.status();
    let error = status["store"]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("free space") || error.contains("full"),
        "{status}"
    );
    assert!(home.ok(&["status"]).contains("Database PROBLEM"));

    // Space again: the next write clears it.
    std::fs::remove_file(&fill).unwrap();
    home.ok(&["stop", "--provider", "claude", "--session", "t0"]);
    assert_eq!(home.status()["store"]["error"], Value::Null);
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn run_as_root_for_another_user_a_rewritten_file_stays_theirs() {
    use std::os::unix::fs::MetadataExt;
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: changing a file's owner needs root (CI runs as root)");
        return;
    }
    let home = Home::new();
    let file = agent_file(&home, ".claude/settings.json", "{}\n", 0o640);
    std::os::unix::fs::chown(&file, Some(4321), Some(4322)).unwrap();
    home.ok(&["hook-install", "--provider", "claude"]);
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!((meta.uid(), meta.gid(), mode(&file)), (4321, 4322, 0o640));
    home.ok(&["hook-remove", "--provider", "claude"]);
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (4321, 4322));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "{}\n");
}
