//! `lidguard tray`: an icon in the desktop's tray, fed by the event stream. It reads the status
//! when an event arrives (never on a timer, except once a second while a suspend countdown is
//! on show, and every few seconds while no daemon runs, to follow one when it starts).
//!
//! Linux: a StatusNotifierItem (`sni`). Windows: a notification-area icon (`notify_icon`).
//! macOS: a menu-bar item (`status_item`), AppKit on the main thread and the loop beside it.
#![cfg_attr(
    not(any(target_os = "linux", windows, target_os = "macos")),
    allow(dead_code, reason = "the tray runs on Linux, Windows and macOS")
)]

mod menu;
#[cfg(windows)]
mod notify_icon;
#[cfg(target_os = "linux")]
mod sni;
#[cfg(target_os = "macos")]
mod status_item;
mod view;

#[cfg(windows)]
use notify_icon::Tray;
#[cfg(target_os = "linux")]
use sni::Tray;
#[cfg(target_os = "macos")]
use status_item::Tray;

use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

use lidguard_core::settings::ClosedLidPermissionRequestDecision;
use lidguard_ipc::Places;

/// What the user picked in the menu.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// Pause protection for these minutes (`None`: until resumed).
    Pause(Option<u32>),
    Resume,
    CancelSuspend,
    ClosedLid(ClosedLidPermissionRequestDecision),
    OpenLiveStatus,
    StartDaemon,
    Quit,
}

/// What wakes the tray.
pub(crate) enum Wake {
    /// A line of the event stream.
    Event,
    /// The stream ended: the daemon stopped.
    StreamEnded,
    Action(Action),
}

/// How often to look for a daemon while none runs.
const RECONNECT_EVERY: Duration = Duration::from_secs(5);

#[cfg(not(any(target_os = "linux", windows, target_os = "macos")))]
pub(crate) fn run(_places: &Places) -> anyhow::Result<ExitCode> {
    anyhow::bail!(
        "the tray icon is built for Linux, Windows and macOS; `lidguard live-status` shows the \
         same in a terminal"
    )
}

#[cfg(any(target_os = "linux", windows, target_os = "macos"))]
pub(crate) fn run(places: &Places) -> anyhow::Result<ExitCode> {
    let _only_tray = only_tray(places)?;
    let (tx, wakes) = mpsc::channel();
    let mut follower = Follower::default();
    follower.connect(places, &tx, true);
    follower.refresh(places);
    let view = follower.view(jiff::Timestamp::now());
    #[cfg(not(target_os = "macos"))]
    {
        let tray = Tray::spawn(view, tx.clone())?;
        let outcome = follow(places, follower, &tx, &wakes, &tray);
        tray.close();
        outcome
    }
    // AppKit takes the main thread; the loop runs beside it.
    #[cfg(target_os = "macos")]
    {
        let places = places.clone();
        status_item::run(view, tx.clone(), move |tray| {
            follow(&places, follower, &tx, &wakes, tray)
        })
    }
}

/// The tray's loop: shows the view, waits for an event, a menu pick or a timer, and reads the
/// status again; returns when the user quits or every sender is gone.
#[cfg(any(target_os = "linux", windows, target_os = "macos"))]
fn follow(
    places: &Places,
    mut follower: Follower,
    tx: &mpsc::Sender<Wake>,
    wakes: &mpsc::Receiver<Wake>,
    tray: &Tray,
) -> anyhow::Result<ExitCode> {
    use jiff::Timestamp;

    use self::view::View;

    loop {
        let view: View = follower.view(Timestamp::now());
        let timeout = if view.counting_down() {
            Some(Duration::from_secs(1))
        } else if !follower.connected {
            Some(RECONNECT_EVERY)
        } else {
            None
        };
        tray.show(view);
        let wake = match timeout {
            Some(t) => match wakes.recv_timeout(t) {
                Ok(wake) => Some(wake),
                Err(mpsc::RecvTimeoutError::Timeout) => None,
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            },
            None => Some(wakes.recv()?),
        };
        // Without a daemon, look for one when the wait runs out (never start one unasked).
        if wake.is_none() && !follower.connected {
            follower.connect(places, tx, false);
        }
        // Everything already waiting is taken together: one status read.
        let waiting = wake
            .into_iter()
            .chain(std::iter::from_fn(|| wakes.try_recv().ok()));
        for wake in waiting {
            match wake {
                Wake::Event => {}
                Wake::StreamEnded => follower.connected = false,
                Wake::Action(Action::Quit) => return Ok(ExitCode::SUCCESS),
                Wake::Action(Action::StartDaemon) if !follower.connected => {
                    follower.connect(places, tx, true);
                }
                Wake::Action(action) => follower.note = act(places, action).err(),
            }
        }
        follower.refresh(places);
    }
    Ok(ExitCode::SUCCESS)
}

/// One tray per user (a login entry and a hand-started one would show two icons): the lock is
/// held while the tray runs, with its pid in the file for `uninstall`.
#[cfg(any(target_os = "linux", windows, target_os = "macos"))]
fn only_tray(places: &Places) -> anyhow::Result<lidguard_daemon::InstanceLock> {
    places.ensure_runtime_dir()?;
    let path = places.tray_lock_file();
    lidguard_daemon::InstanceLock::acquire(&path).map_err(|_| {
        let pid = std::fs::read_to_string(&path).unwrap_or_default();
        anyhow::anyhow!(
            "lidguard's tray already runs (pid {}): use its icon, or choose Quit there first",
            pid.trim()
        )
    })
}

/// Stops the user's running tray, if one runs (`uninstall`); says so.
#[cfg(any(target_os = "linux", windows, target_os = "macos"))]
pub(crate) fn stop(places: &Places) -> anyhow::Result<Option<String>> {
    let path = places.tray_lock_file();
    if !path.exists() || lidguard_daemon::InstanceLock::acquire(&path).is_ok() {
        // No tray holds the lock (the one just taken is let go at once).
        let _ = std::fs::remove_file(&path);
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path)?;
    let Some(pid) = text.trim().parse::<u32>().ok().filter(|&pid| pid > 0) else {
        anyhow::bail!("a tray runs but {} names no process", path.display());
    };
    let how = ask_to_quit(pid)?;
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while lidguard_daemon::InstanceLock::acquire(&path).is_err() {
        if std::time::Instant::now() > deadline {
            anyhow::bail!("the tray (pid {pid}) did not quit; quit it from its menu");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = std::fs::remove_file(&path);
    Ok(Some(format!("{how} the tray (pid {pid})")))
}

/// SIGTERM, which ends the tray (its item goes with the process).
#[cfg(unix)]
fn ask_to_quit(pid: u32) -> anyhow::Result<&'static str> {
    use rustix::process::{Pid, Signal, kill_process};
    let pid = i32::try_from(pid).ok().and_then(Pid::from_raw);
    let pid = pid.ok_or_else(|| anyhow::anyhow!("no such process"))?;
    kill_process(pid, Signal::TERM)?;
    Ok("stopped")
}

/// The tray's window is told to close, as its menu's Quit does (the icon leaves the
/// notification area with it); a tray on another desktop is ended.
#[cfg(windows)]
fn ask_to_quit(pid: u32) -> anyhow::Result<&'static str> {
    let closed = notify_icon::close_tray_of(pid)?;
    Ok(if closed { "stopped" } else { "ended" })
}

/// The stream followed and the last status read.
#[derive(Default)]
struct Follower {
    connected: bool,
    status: Option<lidguard_ipc::protocol::Status>,
    why: Option<String>,
    note: Option<String>,
}

impl Follower {
    /// Follows the stream on a thread of its own (`start`: starting the daemon when none
    /// runs).
    fn connect(&mut self, places: &Places, tx: &mpsc::Sender<Wake>, start: bool) {
        let tx = tx.clone();
        let followed = super::events::follow_in_background(
            places,
            lidguard_ipc::stream::Replay::Last(0),
            start,
            move |line| {
                tx.send(line.map_or(Wake::StreamEnded, |_| Wake::Event))
                    .is_ok()
            },
        );
        self.connected = followed.is_ok();
        if let Err(e) = followed {
            self.why = Some(e.to_string());
        }
    }

    fn refresh(&mut self, places: &Places) {
        if !self.connected {
            self.status = None;
            return;
        }
        match super::status::read(places) {
            Ok(status) => {
                self.status = Some(status);
                self.why = None;
            }
            Err(e) => {
                self.status = None;
                self.why = Some(e);
            }
        }
    }

    fn view(&self, now: jiff::Timestamp) -> view::View {
        let mut view = view::View::of(self.status.as_ref(), self.why.as_deref(), now);
        view.note.clone_from(&self.note);
        view
    }
}

/// Carries out a menu action; `Err` says what went wrong, for the tooltip.
fn act(places: &Places, action: Action) -> Result<(), String> {
    use lidguard_ipc::client;
    use lidguard_ipc::protocol::Request;

    let request = match action {
        Action::Pause(minutes) => Request::Pause { minutes },
        Action::Resume => Request::Resume,
        Action::CancelSuspend => Request::CancelSuspend,
        Action::ClosedLid(decision) => return closed_lid(decision),
        Action::OpenLiveStatus => return open_live_status(),
        Action::StartDaemon | Action::Quit => return Ok(()),
    };
    match client::request(places, &request, super::session::REQUEST_TIMEOUT) {
        Ok(response) if response.ok => Ok(()),
        Ok(response) => Err(response.message),
        Err(e) => Err(e.to_string()),
    }
}

/// Changes the setting as `lidguard settings` does (the file, then the daemon).
fn closed_lid(decision: ClosedLidPermissionRequestDecision) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let value = serde_json::to_value(decision).map_err(|e| e.to_string())?;
    // The setting's JSON spelling is PascalCase; the flag takes lower case.
    let value = value.as_str().unwrap_or("deny").to_ascii_lowercase();
    let out = std::process::Command::new(exe)
        .args([
            "settings",
            "--closed-lid-permission-request-decision",
            &value,
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    }
}

/// The terminals tried for live-status, in order, with the argument before the command.
#[cfg(not(any(windows, target_os = "macos")))]
const TERMINALS: &[(&str, &str)] = &[
    ("x-terminal-emulator", "-e"),
    ("xdg-terminal-exec", ""),
    ("gnome-terminal", "--"),
    ("konsole", "-e"),
    ("xfce4-terminal", "-x"),
    ("xterm", "-e"),
];

/// Opens `lidguard live-status` in a console window of its own.
#[cfg(windows)]
fn open_live_status() -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    // `start` gives the command a new console; its first quoted argument is the title.
    std::process::Command::new("cmd")
        .args(["/c", "start", "lidguard live-status"])
        .arg(exe)
        .arg("live-status")
        .spawn()
        .map(drop)
        .map_err(|e| e.to_string())
}

/// Opens `lidguard live-status` in a new Terminal window: AppleScript's `do script`, the
/// executable's path handed in as an argument and shell-quoted by `quoted form of` (macOS asks
/// the user once to let lidguard control Terminal).
#[cfg(target_os = "macos")]
fn open_live_status() -> Result<(), String> {
    use lidguard_platform::osascript;

    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let script = [
        "on run argv",
        "set command to (quoted form of (item 2 of argv)) & \" live-status\"",
        "tell application \"Terminal\"",
        "activate",
        "do script command",
        "end tell",
        "end run",
    ];
    std::process::Command::new(osascript::PROGRAM)
        .args(osascript::arguments(&script, [exe.into_os_string()]))
        .spawn()
        .map(drop)
        .map_err(|e| e.to_string())
}

/// Opens `lidguard live-status` in the first terminal found on the PATH.
#[cfg(not(any(windows, target_os = "macos")))]
fn open_live_status() -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let path = lidguard_files::environment::var("PATH").unwrap_or_default();
    let found = TERMINALS.iter().find_map(|(name, flag)| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
            .map(|p| (p, *flag))
    });
    let Some((terminal, flag)) = found else {
        return Err("no terminal found to open live-status in".to_owned());
    };
    let mut cmd = std::process::Command::new(terminal);
    if !flag.is_empty() {
        cmd.arg(flag);
    }
    cmd.arg(exe).arg("live-status");
    cmd.spawn().map(drop).map_err(|e| e.to_string())
}
