//! The launchd agent that puts macOS's `SleepDisabled` back when lidguard cannot: at login
//! (a Mac rebooted after a crash keeps `SleepDisabled`, and the daemon may never start again)
//! and, started by the daemon when it disables sleep, as soon as that daemon is gone.
//!
//! Facts (`man launchd.plist`, `man launchctl`): a per-user agent is a property list in
//! `~/Library/LaunchAgents/` with `Label`, `ProgramArguments` and `RunAtLoad` (run when loaded,
//! which is at login); `launchctl bootstrap gui/<uid> FILE` loads it now, `launchctl bootout
//! gui/<uid>/LABEL` unloads it, and `launchctl kickstart gui/<uid>/LABEL` starts it on demand.

use std::path::{Path, PathBuf};

/// The agent's label (and file name without `.plist`).
pub const LABEL: &str = "dev.lidguard.power-restore";

/// The arguments of lidguard the agent runs: restore now if no daemon runs, else wait for it to
/// end and restore then.
pub const ARGS: [&str; 2] = ["power-restore", "--wait-for-daemon"];

/// The marker comment that makes the file lidguard's.
pub const MARKER: &str = "<!-- Managed by lidguard (macos-permission). Do not edit by hand. -->";

/// Where the agent lives for the user whose home is `home`.
pub fn agent_path(home: &Path) -> PathBuf {
    home.join("Library")
        .join("LaunchAgents")
        .join(format!("{LABEL}.plist"))
}

/// The agent's property list running `exe` with [`ARGS`].
pub fn agent_plist(exe: &Path) -> String {
    let mut program = vec![exe.display().to_string()];
    program.extend(ARGS.iter().map(|a| (*a).to_owned()));
    let strings: String = program
        .iter()
        .map(|a| format!("\t\t<string>{}</string>\n", xml_escape(a)))
        .collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \
         \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n\
         {MARKER}\n\
         <plist version=\"1.0\">\n\
         <dict>\n\
         \t<key>Label</key>\n\
         \t<string>{LABEL}</string>\n\
         \t<key>ProgramArguments</key>\n\
         \t<array>\n\
         {strings}\
         \t</array>\n\
         \t<key>RunAtLoad</key>\n\
         \t<true/>\n\
         \t<key>ProcessType</key>\n\
         \t<string>Background</string>\n\
         </dict>\n\
         </plist>\n"
    )
}

/// Whether `text` is an agent lidguard wrote.
pub fn is_ours(text: &str) -> bool {
    text.lines().any(|line| line.trim() == MARKER)
}

/// `launchctl` arguments that load the agent file into the user's GUI domain.
pub fn bootstrap_args(uid: u32, plist: &Path) -> Vec<String> {
    vec![
        "bootstrap".into(),
        format!("gui/{uid}"),
        plist.display().to_string(),
    ]
}

/// `launchctl` arguments that unload it.
pub fn bootout_args(uid: u32) -> Vec<String> {
    vec!["bootout".into(), format!("gui/{uid}/{LABEL}")]
}

/// `launchctl` arguments that start it now.
pub fn kickstart_args(uid: u32) -> Vec<String> {
    vec!["kickstart".into(), format!("gui/{uid}/{LABEL}")]
}

fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plist_runs_the_exe_with_the_restore_arguments() {
        let text = agent_plist(Path::new("/Users/al & bo/.cargo/bin/lidguard"));
        assert!(is_ours(&text));
        assert!(text.contains("<string>/Users/al &amp; bo/.cargo/bin/lidguard</string>"));
        assert!(text.contains("<string>power-restore</string>"));
        assert!(text.contains("<string>--wait-for-daemon</string>"));
        assert_eq!(
            agent_path(Path::new("/Users/alice")),
            Path::new("/Users/alice/Library/LaunchAgents/dev.lidguard.power-restore.plist")
        );
        assert_eq!(
            kickstart_args(501),
            ["kickstart", "gui/501/dev.lidguard.power-restore"]
        );
    }

    /// Python's `plistlib` (a real property-list parser) reads it back as meant.
    #[test]
    fn plistlib_reads_it() {
        let Some(python) = python() else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("agent.plist");
        std::fs::write(&file, agent_plist(Path::new("/opt/<x>/lidguard"))).unwrap();
        let out = crate::test_support::stdout_of(
            std::process::Command::new(python)
                .args([
                    "-c",
                    "import json, plistlib, sys; print(json.dumps(plistlib.load(open(sys.argv[1], 'rb'))))",
                ])
                .arg(&file),
            "python3's plistlib",
        );
        let parsed: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            parsed,
            serde_json::json!({
                "Label": LABEL,
                "ProgramArguments": ["/opt/<x>/lidguard", "power-restore", "--wait-for-daemon"],
                "RunAtLoad": true,
                "ProcessType": "Background",
            })
        );
    }

    fn python() -> Option<PathBuf> {
        let found = std::env::var_os("PATH")
            .iter()
            .flat_map(std::env::split_paths)
            .map(|dir| dir.join("python3"))
            .find(|p| p.is_file());
        crate::test_support::program(found, "python3")
    }
}
