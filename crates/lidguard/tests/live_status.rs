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
    /// Whether tmux runs here; a test skips without it (CI installs it, so there it fails).
    fn available() -> bool {
        let present = Command::new("tmux").arg("-V").output().is_ok();
        crate::util::runs_here((!present).then(|| "tmux is not installed".to_owned()))
    }

    /// Runs `command` (a shell line) in a detached 150×40 session.
    fn start(home: &Home, command: &str) -> Tmux {
        Tmux::start_sized(home, command, (150, 40), "")
    }

    /// Runs `command` in a detached `width`×`height` session; `tag` keeps sockets apart.
    fn start_sized(home: &Home, command: &str, (width, height): (u16, u16), tag: &str) -> Tmux {
        let socket = format!("lidguard-test-{}{tag}", std::process::id());
        let tmux = Tmux { socket };
        let (width, height) = (width.to_string(), height.to_string());
        let status = Command::new("tmux")
            .args(["-L", &tmux.socket, "-f", "/dev/null"])
            .args(["new-session", "-d", "-s", "lg", "-x", &width, "-y", &height])
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

    /// The screen with its colours and attributes as escape sequences.
    fn screen_escaped(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-e", "-p", "-t", "lg"])
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
    // The status's rows and the stream's lines reach the screen on separate reads: the screen
    // is awaited with both.
    tmux.wait_for("both sessions and the prompt's event", |s| {
        s.contains("tmux-s1")
            && s.contains("by-hand")
            && s.contains("sessions (2)")
            && s.contains("prompt-submitted")
            && s.contains("No suspend pending")
    });

    // Select the second row (custom by-hand, after claude tmux-s1): `d` asks first, any other
    // key keeps it, `y` removes it.
    tmux.keys(&["Down"]);
    tmux.keys(&["d"]);
    tmux.wait_for("the question", |s| {
        s.contains("Remove custom by-hand? y removes it")
    });
    tmux.keys(&["n"]);
    tmux.wait_for("the session kept", |s| {
        s.contains("kept") && s.contains("sessions (2)")
    });
    tmux.keys(&["d"]);
    tmux.wait_for("the question again", |s| s.contains("y removes it"));
    tmux.keys(&["y"]);
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
    let screen = tmux.wait_for("the countdown and the stop's event", |s| {
        countdown(s).is_some()
            && s.contains("Lid: Closed")
            && s.contains("sessions (0)")
            && s.contains("phase Delay")
            && s.contains("session-stopped")
    });
    let first = countdown(&screen).unwrap();
    assert!((30..=40).contains(&first), "{screen}");
    tmux.wait_for("the countdown to move", |s| {
        countdown(s).is_some_and(|n| n + 2 <= first)
    });

    // c cancels the suspend on its way.
    tmux.keys(&["c"]);
    tmux.wait_for("the suspend canceled", |s| {
        s.contains("the pending suspend was canceled") && s.contains("No suspend pending")
    });

    // Tab and Enter show an event whole; Esc closes it.
    tmux.keys(&["Tab"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("an event's detail", |s| {
        s.contains("event (Esc closes)") && s.contains("\"observation\"")
    });
    tmux.keys(&["Escape"]);
    tmux.wait_for("the detail closed", |s| !s.contains("event (Esc closes)"));

    // q quits and gives the terminal back.
    tmux.keys(&["q"]);
    assert!(
        eventually(Duration::from_secs(5), || !tmux.alive()),
        "{}",
        tmux.screen()
    );
}

/// Whether `screen` (with escapes) sets a foreground colour anywhere.
fn coloured(screen: &str) -> bool {
    screen.split("\x1b[").skip(1).any(|seq| {
        let params = seq.split('m').next().unwrap_or_default();
        params.split(';').any(|p| {
            p.parse::<u16>()
                .is_ok_and(|n| (30..=38).contains(&n) || (90..=97).contains(&n))
        })
    })
}

/// At 80×24 the protection line is whole (it wraps, the events give way), in red when
/// protection is wanted and not held; with `NO_COLOR` the same screen has no colour.
#[test]
fn live_status_at_80_by_24_keeps_the_protection_line_whole_and_colours_unless_no_color() {
    if !Tmux::available() {
        return;
    }
    // No system bus: protection is wanted and cannot be held, with a long reason.
    let home = Home::new();
    home.ok(&[
        "start",
        "--provider",
        "claude",
        "--session",
        "a-very-long-session-id-0123456789-abcdefghij",
    ]);
    let status = home.ok(&["status"]);
    let line = status
        .lines()
        .find(|l| l.contains("WANTED BUT NOT HELD"))
        .unwrap_or_else(|| panic!("{status}"));
    let last_word = line.split_whitespace().last().unwrap().to_owned();
    let env = format!(
        "env LIDGUARD_HOME={} HOME={} DBUS_SYSTEM_BUS_ADDRESS={}",
        home.path().display(),
        home.path().join("user-home").display(),
        home.bus,
    );
    for (tag, no_color) in [("c", ""), ("n", "NO_COLOR=1 ")] {
        let tmux = Tmux::start_sized(
            &home,
            &format!("{env} {no_color}TERM=xterm-256color {BIN} live-status"),
            (80, 24),
            tag,
        );
        let screen = tmux.wait_for("the dashboard", |s| {
            s.contains("WANTED BUT NOT HELD") && s.contains("sessions (1)")
        });
        assert!(
            screen.contains(&last_word),
            "{last_word:?} cut off:\n{screen}"
        );
        assert!(
            screen.contains('…'),
            "the long id is cut with an ellipsis:\n{screen}"
        );
        let escaped = tmux.screen_escaped();
        assert_eq!(
            coloured(&escaped),
            no_color.is_empty(),
            "NO_COLOR={no_color:?}:\n{escaped:?}"
        );
        tmux.keys(&["q"]);
        assert!(eventually(Duration::from_secs(5), || !tmux.alive()));
    }
}
