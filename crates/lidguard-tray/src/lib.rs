//! The tray (`lidguard tray`): an icon in the desktop's tray, fed by the event stream. It reads the status
//! when an event arrives (never on a timer, except once a second while a suspend countdown is
//! on show, and every few seconds while no daemon runs, to follow one when it starts).
//!
//! Linux: a StatusNotifierItem (`sni`). Windows: a notification-area icon (`notify_icon`).
//! macOS: a menu-bar item (`status_item`), AppKit on the main thread and the loop beside it.
//!
//! The loop (follow → view → backend) is here; what the menu offers is `menu`, what it shows is
//! `view`, and each backend draws them its platform's way. `launcher` starts the tray at login
//! without a terminal.
#![cfg_attr(
    not(any(target_os = "linux", windows, target_os = "macos")),
    allow(dead_code, reason = "the tray runs on Linux, Windows and macOS")
)]

mod launcher;
mod live_status;
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
use lidguard_ipc::{Daemon, Places};

pub use launcher::launch;

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

/// There is no tray here: says so, pointing at the terminal's view.
#[cfg(not(any(target_os = "linux", windows, target_os = "macos")))]
pub fn run(_places: &Places) -> anyhow::Result<ExitCode> {
    anyhow::bail!(
        "the tray icon is built for Linux, Windows and macOS; `lidguard live-status` shows the \
         same in a terminal"
    )
}

/// Runs the tray until the user quits it: one per user (a second says the first's pid).
#[cfg(any(target_os = "linux", windows, target_os = "macos"))]
pub fn run(places: &Places) -> anyhow::Result<ExitCode> {
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
                Wake::Action(action) => {
                    follower.note = act(places, action).err().map(|e| e.to_string());
                }
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
pub fn stop(places: &Places) -> anyhow::Result<Option<String>> {
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
        let daemon = match (start, std::env::current_exe()) {
            (true, Ok(exe)) => Daemon::new(places).starting_with(exe),
            _ => Daemon::new(places),
        };
        let followed =
            daemon.follow_in_background(lidguard_ipc::stream::Replay::Last(0), move |line| {
                tx.send(line.map_or(Wake::StreamEnded, |_| Wake::Event))
                    .is_ok()
            });
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
        match Daemon::new(places).status() {
            Ok(status) => {
                self.status = Some(status);
                self.why = None;
            }
            Err(e) => {
                self.status = None;
                self.why = Some(e.to_string());
            }
        }
    }

    fn view(&self, now: jiff::Timestamp) -> view::View {
        let mut view = view::View::of(self.status.as_ref(), self.why.as_deref(), now);
        view.note.clone_from(&self.note);
        view
    }
}

/// Why a menu action did not do what it says (shown in the tooltip).
#[derive(Debug, thiserror::Error)]
enum ActionError {
    /// The daemon could not be asked, or refused.
    #[error(transparent)]
    Daemon(#[from] lidguard_ipc::client::ClientError),
    /// The setting was not saved.
    #[error(transparent)]
    Setting(#[from] lidguard_config::settings::Rejected),
    /// Saved, and the running daemon did not take it (it reads the file when it restarts).
    #[error("saved; the daemon did not take it: {0}")]
    NotTaken(String),
    /// No terminal could be opened for live-status.
    #[error("cannot open live-status: {0}")]
    Terminal(#[from] std::io::Error),
}

/// Carries out a menu action; `Err` says what went wrong, for the tooltip.
fn act(places: &Places, action: Action) -> Result<(), ActionError> {
    let daemon = Daemon::new(places);
    let done = match action {
        Action::Pause(minutes) => daemon.pause(minutes),
        Action::Resume => daemon.resume(),
        Action::CancelSuspend => daemon.cancel_suspend(),
        Action::ClosedLid(decision) => return closed_lid(places, decision),
        Action::OpenLiveStatus => return Ok(live_status::open()?),
        Action::StartDaemon | Action::Quit => return Ok(()),
    };
    done?;
    Ok(())
}

/// Changes the setting as `lidguard settings` does — the file, then the running daemon — in
/// this process.
fn closed_lid(
    places: &Places,
    decision: ClosedLidPermissionRequestDecision,
) -> Result<(), ActionError> {
    use lidguard_config::settings::{Changes, Pushed, apply};
    use lidguard_core::settings::Os;

    // The setting's JSON spelling is PascalCase; the flag takes lower case.
    let value = serde_json::to_value(decision)
        .ok()
        .and_then(|v| v.as_str().map(str::to_ascii_lowercase))
        .unwrap_or_else(|| "deny".to_owned());
    let changes = Changes {
        reset: false,
        fields: vec![("closed-lid-permission-request-decision", value)],
    };
    let applied = apply(
        places,
        Os::current(),
        &changes,
        lidguard_config::hook_command,
        &lidguard_files::environment::var,
    )?;
    match applied.pushed {
        Pushed::Refused(why) | Pushed::Unreachable(why) => Err(ActionError::NotTaken(why)),
        _ => Ok(()),
    }
}

/// No tray runs where there is none to ask.
#[cfg(not(any(unix, windows)))]
fn ask_to_quit(_pid: u32) -> anyhow::Result<&'static str> {
    anyhow::bail!("no tray runs here")
}
