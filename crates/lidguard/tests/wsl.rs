//! The WSL bridge commands through the real CLI, with `tests/windows/fake-wsl.sh` standing in
//! for `wsl.exe` (`LIDGUARD_WSL_EXE`): the distro side is this machine with its own HOME, so
//! the in-distro scripts, the edits, the backups and the dry runs are the product's own; only
//! wsl.exe itself (and its UTF-16 list and `wslpath`) are imitated.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::util::Home;

struct Wsl {
    home: Home,
    distro_home: tempfile::TempDir,
}

impl Wsl {
    fn new() -> Wsl {
        Wsl {
            home: Home::new(),
            distro_home: tempfile::tempdir().unwrap(),
        }
    }

    fn root(&self) -> &Path {
        self.distro_home.path()
    }

    fn run(&self, args: &[&str]) -> Output {
        let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/windows/fake-wsl.sh");
        self.home
            .cmd(args)
            .env("LIDGUARD_WSL_EXE", fake)
            .env("FAKE_WSL_HOME", self.root())
            .output()
            .unwrap()
    }

    fn file(&self, relative: &str) -> PathBuf {
        self.root().join(relative)
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

const USER_SETTINGS: &str = "{\n  // mine\n  \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"echo mine\"}]}]}\n}\n";

#[test]
fn hooks_install_status_remove_inside_the_distro() {
    let w = Wsl::new();
    std::fs::create_dir_all(w.file(".claude")).unwrap();
    std::fs::write(w.file(".claude/settings.json"), USER_SETTINGS).unwrap();

    let dry = w.run(&["wsl-hook-install", "--provider", "claude", "--dry-run"]);
    let shown = text(&dry);
    assert!(dry.status.success(), "{shown}");
    let file = w.file(".claude/settings.json");
    assert!(
        shown.contains(&format!(
            "would write {} in the default WSL distro",
            file.display()
        )),
        "{shown}"
    );
    assert!(
        shown.contains("+")
            && shown.contains("lidguard-hook\"")
            && shown.contains("\"claude-hook\""),
        "{shown}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), USER_SETTINGS);

    let out = w.run(&[
        "wsl-hook-install",
        "--provider",
        "claude",
        "--distro",
        "Ubuntu",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(
        written.contains("echo mine") && written.contains("// mine"),
        "{written}"
    );
    assert!(
        written.contains("lidguard-hook\"") && written.contains("\"args\": [\"claude-hook\"]"),
        "exec form: {written}"
    );
    assert!(
        !written.contains("powershell"),
        "no shell named in WSL: {written}"
    );
    let backups: Vec<_> = std::fs::read_dir(w.file(".claude"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".bak"))
        .collect();
    assert_eq!(backups.len(), 1, "a backup next to the file");

    let status = w.run(&[
        "wsl-hook-status",
        "--provider",
        "claude",
        "--distro",
        "Ubuntu",
    ]);
    assert!(status.status.success(), "{}", text(&status));
    assert!(text(&status).contains("installed"), "{}", text(&status));

    // The receipt kept at install gives the bytes back (a container on one line included).
    let out = w.run(&[
        "wsl-hook-remove",
        "--provider",
        "claude",
        "--distro",
        "Ubuntu",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), USER_SETTINGS);
    let status = w.run(&["wsl-hook-status", "--provider", "claude"]);
    assert_eq!(status.status.code(), Some(1), "{}", text(&status));
}

#[test]
fn all_takes_the_agents_present_in_the_distro_and_the_snippets_print() {
    let w = Wsl::new();
    std::fs::create_dir_all(w.file(".codex")).unwrap();
    std::fs::create_dir_all(w.file(".copilot")).unwrap();
    let out = w.run(&["wsl-hook-install", "--provider", "all"]);
    let shown = text(&out);
    assert!(out.status.success(), "{shown}");
    assert!(shown.contains("Codex CLI: wrote"), "{shown}");
    assert!(shown.contains("GitHub Copilot CLI: wrote"), "{shown}");
    assert!(!shown.contains("Claude Code"), "{shown}");
    let copilot =
        std::fs::read_to_string(w.file(".copilot/hooks/lidguard-copilot-cli.json")).unwrap();
    assert!(
        copilot.contains("\"bash\":") && !copilot.contains("powershell"),
        "{copilot}"
    );

    let snippet = w.run(&["wsl-claude-hooks"]);
    assert!(snippet.status.success(), "{}", text(&snippet));
    let json: serde_json::Value = serde_json::from_slice(&snippet.stdout).unwrap();
    let stop = &json["hooks"]["Stop"][0]["hooks"][0];
    assert!(
        stop["command"].as_str().unwrap().ends_with("lidguard-hook")
            && stop["args"] == serde_json::json!(["claude-hook"]),
        "{stop}"
    );
}

#[test]
fn mcp_and_provider_mcp_inside_the_distro() {
    let w = Wsl::new();
    std::fs::create_dir_all(w.file(".codex")).unwrap();
    std::fs::write(
        w.file(".codex/config.toml"),
        "[mcp_servers.mine]\ncommand = \"x\"\n",
    )
    .unwrap();
    let dry = w.run(&["wsl-codex-mcp-install", "--dry-run"]);
    assert!(dry.status.success(), "{}", text(&dry));
    assert!(text(&dry).contains("mcp-server"), "{}", text(&dry));
    let out = w.run(&["wsl-mcp-install", "codex"]);
    assert!(out.status.success(), "{}", text(&out));
    let toml = std::fs::read_to_string(w.file(".codex/config.toml")).unwrap();
    assert!(
        toml.contains("[mcp_servers.mine]") && toml.contains("mcp-server"),
        "{toml}"
    );
    let status = w.run(&["wsl-codex-mcp-status"]);
    assert!(status.status.success(), "{}", text(&status));
    let out = w.run(&["wsl-mcp-remove", "codex"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(w.file(".codex/config.toml")).unwrap(),
        "[mcp_servers.mine]\ncommand = \"x\"\n"
    );

    let config = w.file("tool/mcp.json");
    let config = config.to_str().unwrap();
    let out = w.run(&["wsl-provider-mcp-install", "--config", config]);
    assert!(!out.status.success(), "install needs --provider-name");
    let out = w.run(&[
        "wsl-provider-mcp-install",
        "--config",
        config,
        "--provider-name",
        "gemini",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(config).unwrap()).unwrap();
    assert_eq!(
        json["mcpServers"]["lidguard-provider"]["args"],
        serde_json::json!(["provider-mcp-server", "--provider-name", "gemini"])
    );
    let status = w.run(&["wsl-provider-mcp-status", "--config", config]);
    assert!(status.status.success(), "{}", text(&status));
    let out = w.run(&["wsl-provider-mcp-remove", "--config", config]);
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn a_missing_distro_or_wsl_is_a_clear_error() {
    let w = Wsl::new();
    let out = w.run(&[
        "wsl-hook-install",
        "--provider",
        "claude",
        "--distro",
        "Nope",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("WSL distro Nope"), "{}", text(&out));
    let out = w
        .home
        .cmd(&["wsl-hook-status", "--provider", "claude"])
        .env("LIDGUARD_WSL_EXE", "/nonexistent/wsl.exe")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).contains("the WSL bridge runs on Windows"),
        "{}",
        text(&out)
    );
}

/// Cline's hooks are a file per event: each is written inside the distro (a file of the
/// user's by another name in the folder stays), status reads them back, and remove takes
/// lidguard's away and the folder it made, leaving the folder it did not make.
#[test]
fn cline_event_files_inside_the_distro() {
    let w = Wsl::new();
    std::fs::create_dir_all(w.file(".cline")).unwrap();
    let out = w.run(&["wsl-hook-install", "--provider", "all"]);
    let shown = text(&out);
    assert!(out.status.success(), "{shown}");
    let hooks = w.file(".cline/hooks");
    let start = std::fs::read_to_string(hooks.join("TaskStart")).unwrap();
    let first = start.lines().next().unwrap();
    assert!(
        first.starts_with("#!/") && first.ends_with("lidguard-hook cline-hook --event"),
        "{start}"
    );
    let written = std::fs::read_dir(&hooks).unwrap().count();
    assert_eq!(written, 9, "one file per event: {shown}");
    assert!(shown.contains("Cline CLI: wrote"), "{shown}");

    let status = w.run(&["wsl-hook-status", "--provider", "cline"]);
    assert!(status.status.success(), "{}", text(&status));
    assert!(
        text(&status).contains("Cline CLI: installed"),
        "{}",
        text(&status)
    );

    // Again: nothing to change.
    let again = w.run(&["wsl-hook-install", "--provider", "cline"]);
    assert!(
        text(&again).contains("already as they should be"),
        "{}",
        text(&again)
    );

    // A file of the user's by an event's own name: lidguard's takes the next name beside it,
    // and the user's stays through install and remove, as does the folder the user made.
    let out = w.run(&["wsl-hook-remove", "--provider", "cline"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        !hooks.exists(),
        "the folder lidguard made goes with its files"
    );
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::write(hooks.join("PreToolUse"), "#!/bin/sh\necho mine\n").unwrap();
    let out = w.run(&["wsl-hook-install", "--provider", "cline"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("hooks/PreToolUse.sh"), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(hooks.join("PreToolUse")).unwrap(),
        "#!/bin/sh\necho mine\n"
    );
    let status = w.run(&["wsl-hook-status", "--provider", "cline"]);
    assert!(
        text(&status).contains("Cline CLI: installed"),
        "{}",
        text(&status)
    );
    let out = w.run(&["wsl-hook-remove", "--provider", "cline"]);
    assert!(out.status.success(), "{}", text(&out));
    let left: Vec<_> = std::fs::read_dir(&hooks)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| !name.ends_with(".bak"))
        .collect();
    assert_eq!(left, ["PreToolUse"]);
    assert_eq!(
        std::fs::read_to_string(hooks.join("PreToolUse")).unwrap(),
        "#!/bin/sh\necho mine\n"
    );
}
