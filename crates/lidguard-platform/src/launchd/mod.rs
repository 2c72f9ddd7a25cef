//! The launchd agent that puts macOS's `SleepDisabled` back when lidguard cannot: at login
//! (a Mac rebooted after a crash keeps `SleepDisabled`, and the daemon may never start again)
//! and, started by the daemon when it disables sleep, as soon as that daemon is gone.
//!
//! Facts (`man launchd.plist`, `man launchctl`): a per-user agent is a property list in
//! `~/Library/LaunchAgents/` with `Label`, `ProgramArguments` and `RunAtLoad` (run when loaded,
//! which is at login); `launchctl bootstrap gui/<uid> FILE` loads it now, `launchctl bootout
//! gui/<uid>/LABEL` unloads it, and `launchctl kickstart gui/<uid>/LABEL` starts it on demand.

use std::path::{Path, PathBuf};

#[cfg(not(unix))]
#[path = "job_other.rs"]
pub mod job;
/// The power-restore job file itself, read and written below the account's home.
#[cfg(unix)]
#[path = "job_unix.rs"]
pub mod job;

/// The agent's label (and file name without `.plist`).
pub const LABEL: &str = "dev.lidguard.power-restore";

/// The arguments of lidguard the agent runs: restore now if no daemon runs, else wait for it to
/// end and restore then.
pub const ARGS: [&str; 2] = ["power-restore", "--wait-for-daemon"];

/// The marker comment that makes the file lidguard's.
pub const MARKER: &str = "<!-- Managed by lidguard (macos-permission). Do not edit by hand. -->";

/// Where the agent lives for the user whose home is `home`.
pub fn agent_path(home: &Path) -> PathBuf {
    path_of(home, LABEL)
}

/// The agent's property list running `exe` with [`ARGS`].
pub fn agent_plist(exe: &Path) -> String {
    let mut program = vec![exe.display().to_string()];
    program.extend(ARGS.iter().map(|a| (*a).to_owned()));
    plist(
        MARKER,
        LABEL,
        &program,
        "\t<key>ProcessType</key>\n\t<string>Background</string>\n",
    )
}

/// The label of the agent that starts `lidguard tray` at login (`setup` writes it).
pub const TRAY_LABEL: &str = "dev.lidguard.tray";

/// The marker comment of the tray's agent.
pub const TRAY_MARKER: &str =
    "<!-- Managed by lidguard (setup): the tray at login. Do not edit by hand. -->";

/// Where the tray's agent lives for the user whose home is `home`.
pub fn tray_agent_path(home: &Path) -> PathBuf {
    path_of(home, TRAY_LABEL)
}

/// The tray's agent: `exe tray` at login, in the graphical (Aqua) session only (an ssh login
/// has no menu bar), as an interactive process (a menu-bar item answers the user).
pub fn tray_agent_plist(exe: &Path) -> String {
    let program = [exe.display().to_string(), "tray".to_owned()];
    plist(
        TRAY_MARKER,
        TRAY_LABEL,
        &program,
        "\t<key>ProcessType</key>\n\t<string>Interactive</string>\n\
         \t<key>LimitLoadToSessionType</key>\n\t<string>Aqua</string>\n",
    )
}

/// Whether `text` is the tray's agent as lidguard wrote it.
pub fn is_tray_agent(text: &str) -> bool {
    marked(text, TRAY_MARKER)
}

/// `launchctl` arguments that unload the tray's agent (and end the tray it started).
pub fn bootout_tray_args(uid: u32) -> Vec<String> {
    job_args("bootout", uid, TRAY_LABEL)
}

/// A user's agent labelled `label` below `home`.
fn path_of(home: &Path, label: &str) -> PathBuf {
    home.join("Library")
        .join("LaunchAgents")
        .join(format!("{label}.plist"))
}

/// Whether `text` has the line `marker`.
fn marked(text: &str, marker: &str) -> bool {
    text.lines().any(|line| line.trim() == marker)
}

/// `launchctl <verb> gui/<uid>/<label>`'s arguments.
fn job_args(verb: &str, uid: u32, label: &str) -> Vec<String> {
    vec![verb.into(), format!("gui/{uid}/{label}")]
}

/// A per-user agent marked by `marker`: `label`, `program` (the executable, then its
/// arguments), run at load (which is at login), then the `more` keys, already indented.
fn plist(marker: &str, label: &str, program: &[String], more: &str) -> String {
    let strings: String = program
        .iter()
        .map(|a| format!("\t\t<string>{}</string>\n", xml_escape(a)))
        .collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \
         \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n\
         {marker}\n\
         <plist version=\"1.0\">\n\
         <dict>\n\
         \t<key>Label</key>\n\
         \t<string>{label}</string>\n\
         \t<key>ProgramArguments</key>\n\
         \t<array>\n\
         {strings}\
         \t</array>\n\
         \t<key>RunAtLoad</key>\n\
         \t<true/>\n\
         {more}\
         </dict>\n\
         </plist>\n"
    )
}

/// Whether `text` is an agent lidguard wrote.
pub fn is_ours(text: &str) -> bool {
    marked(text, MARKER)
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
    job_args("bootout", uid, LABEL)
}

/// `launchctl` arguments that start it now.
pub fn kickstart_args(uid: u32) -> Vec<String> {
    job_args("kickstart", uid, LABEL)
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
        let Some(parsed) = plistlib(&agent_plist(Path::new("/opt/<x>/lidguard"))) else {
            return;
        };
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

    #[test]
    fn the_tray_agent_starts_the_tray_at_a_graphical_login_only() {
        let text = tray_agent_plist(Path::new("/Users/al & bo/bin/lidguard"));
        assert!(is_tray_agent(&text) && !is_ours(&text));
        assert!(!is_tray_agent(&agent_plist(Path::new("/x"))));
        assert_eq!(
            tray_agent_path(Path::new("/Users/alice")),
            Path::new("/Users/alice/Library/LaunchAgents/dev.lidguard.tray.plist")
        );
        assert_eq!(
            bootout_tray_args(501),
            ["bootout", "gui/501/dev.lidguard.tray"]
        );
        let Some(parsed) = plistlib(&text) else {
            return;
        };
        assert_eq!(
            parsed,
            serde_json::json!({
                "Label": "dev.lidguard.tray",
                "ProgramArguments": ["/Users/al & bo/bin/lidguard", "tray"],
                "RunAtLoad": true,
                "ProcessType": "Interactive",
                "LimitLoadToSessionType": "Aqua",
            })
        );
    }

    /// `text` as python3's plistlib reads it, as JSON (`None` where python3 is not there and
    /// that is allowed).
    fn plistlib(text: &str) -> Option<serde_json::Value> {
        let python = python()?;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("agent.plist");
        std::fs::write(&file, text).unwrap();
        let out = crate::test_support::stdout_of(
            std::process::Command::new(python)
                .args([
                    "-c",
                    "import json, plistlib, sys; print(json.dumps(plistlib.load(open(sys.argv[1], 'rb'))))",
                ])
                .arg(&file),
            "python3's plistlib",
        );
        Some(serde_json::from_str(&out).unwrap())
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
