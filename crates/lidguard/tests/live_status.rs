//! `lidguard live-status` in a real terminal: tmux runs it, `send-keys` types, `capture-pane`
//! reads the screen.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::util::{BIN, Home, eventually, fake_roots, set_lid};

/// A tmux server of its own (its own socket name), killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn available() -> bool {
        Command::new("tmux").arg("-V").output().is_ok()
    }

    /// Runs `command` (a shell line) in a detached 150×40 session.
    fn start(home: &Home, command: &str) -> Tmux {
        let socket = format!("lidguard-test-{}", std::process::id());
        let tmux = Tmux { socket };
        let status = Command::new("tmux")
            .args(["-L", &tmux.socket, "-f", "/dev/null"])
            .args(["new-session", "-d", "-s", "lg", "-x", "150", "-y", "40"])
            .arg(command)
            .current_dir(home.path())
            .status()
            .unwrap();
        assert!(status.success());
        tmux
    }

    fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-t", "lg"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-t", "lg"])
            .args(keys)
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits until the screen satisfies `pred`; says what was on it otherwise.
    #[track_caller]
    fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let mut last = String::new();
        let ok = eventually(Duration::from_secs(15), || {
            last = self.screen();
            pred(&last)
        });
        assert!(ok, "waited for {what}; the screen shows:\n{last}");
        last
    }

    fn alive(&self) -> bool {
        Command::new("tmux")
            .args(["-L", &self.socket, "has-session", "-t", "lg"])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .stderr(std::process::Stdio::null())
            .status();
    }
}

/// The seconds left in the screen's "Suspend in N s".
fn countdown(screen: &str) -> Option<u64> {
    let rest = &screen[screen.find("Suspend in ")? + "Suspend in ".len()..];
    rest.split_whitespace().next()?.parse().ok()
}

fn hook(home: &Home, roots: &[(&str, &Path)], stdin: &str) {
    let mut cmd = home.hook_cmd(&["claude-hook"]);
    for (k, v) in roots {
        cmd.env(k, v);
    }
    assert!(crate::util::pipe(cmd, stdin.as_bytes()).status.success());
}

#[test]
fn live_status_shows_a_session_a_closed_lid_countdown_and_the_end_under_tmux() {
    if !Tmux::available() {
        assert!(
            std::env::var_os("CI").is_none(),
            "tmux is missing (.ci/run installs it)"
        );
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let home = Home::new();
    let (proc_root, sys_root): (PathBuf, PathBuf) = fake_roots(&home, "open");
    let roots = [
        ("LIDGUARD_PROC_ROOT", proc_root.as_path()),
        ("LIDGUARD_SYS_ROOT", sys_root.as_path()),
    ];
    home.ok(&["settings", "--post-stop-suspend-delay-seconds", "40"]);
    let env = format!(
        "env LIDGUARD_HOME={} HOME={} DBUS_SYSTEM_BUS_ADDRESS={} LIDGUARD_PROC_ROOT={} \
         LIDGUARD_SYS_ROOT={}",
        home.path().display(),
        home.path().join("user-home").display(),
        home.bus,
        proc_root.display(),
        sys_root.display()
    );
    let tmux = Tmux::start(&home, &format!("{env} {BIN} live-status"));
    tmux.wait_for("the dashboard", |s| {
        s.contains("lidguard live-status") && s.contains("Lid: Open") && s.contains("sessions (0)")
    });
    assert!(home.daemon_pid().is_some(), "live-status starts the daemon");

    // A session appears.
    hook(
        &home,
        &roots,
        r#"{"session_id":"tmux-s1","hook_event_name":"UserPromptSubmit","prompt":"go","cwd":"/tmp"}"#,
    );
    home.ok(&["start", "--provider", "custom", "--session", "by-hand"]);
    let screen = tmux.wait_for("both sessions", |s| {
        s.contains("tmux-s1") && s.contains("by-hand") && s.contains("sessions (2)")
    });
    assert!(screen.contains("prompt-submitted"), "{screen}");
    assert!(screen.contains("No suspend pending"), "{screen}");

    // Select the second row (custom by-hand, after claude tmux-s1) and remove it.
    tmux.keys(&["Down"]);
    tmux.keys(&["d"]);
    let screen = tmux.wait_for("the removal", |s| {
        s.contains("sessions (1)") && s.contains("removed 1 session")
    });
    assert!(screen.contains("tmux-s1"), "{screen}");

    // The lid closes and the turn ends: a suspend is scheduled and counts down.
    set_lid(&proc_root, "closed");
    hook(
        &home,
        &roots,
        r#"{"session_id":"tmux-s1","hook_event_name":"Stop","cwd":"/tmp"}"#,
    );
    let screen = tmux.wait_for("the countdown", |s| {
        countdown(s).is_some() && s.contains("Lid: Closed") && s.contains("sessions (0)")
    });
    assert!(screen.contains("phase Delay"), "{screen}");
    assert!(screen.contains("session-stopped"), "{screen}");
    let first = countdown(&screen).unwrap();
    assert!((30..=40).contains(&first), "{screen}");
    tmux.wait_for("the countdown to move", |s| {
        countdown(s).is_some_and(|n| n + 2 <= first)
    });

    // q quits and gives the terminal back.
    tmux.keys(&["q"]);
    assert!(
        eventually(Duration::from_secs(5), || !tmux.alive()),
        "{}",
        tmux.screen()
    );
}
