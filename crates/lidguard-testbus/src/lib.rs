//! Dev-only test helper: a private system D-Bus running the real systemd-logind.
//!
//! Integration tests that need logind start a [`PrivateLogind`] and connect to
//! [`PrivateLogind::address`] explicitly (with zbus: `zbus::connection::Builder::address`; for a
//! child process: `DBUS_SYSTEM_BUS_ADDRESS` set on that `Command` only). Nothing here changes
//! the test process's own environment, because tests run on parallel threads.
//!
//! ```no_run
//! let _serial = lidguard_testbus::serial();
//! let Some(logind) = lidguard_testbus::logind_or_skip() else { return };
//! assert_eq!(logind.block_inhibited(), "");
//! ```
//!
//! Drivers in other languages (the e2e suite) use the `lidguard-private-logind` bin instead: it
//! runs a [`PrivateLogind`] only where logind answers `CanSuspend`/`CanHibernate` with `na`,
//! prints the bus address as one JSON line and stops everything when its stdin closes.
//!
//! logind keeps its state under `/run/systemd/` (seats, users, inhibitor FIFOs), so only one
//! may run at a time: [`serial`] orders the tests of one process, and [`PrivateLogind::start`]
//! also takes a file lock so test binaries of different crates running at the same time wait
//! for each other.
#![cfg(target_os = "linux")]
#![allow(
    clippy::disallowed_methods,
    reason = "test support: fixtures are written and the environment read directly"
)]

use std::fs::{self, File};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use tempfile::TempDir;

mod error;
pub use error::BusError;

#[cfg(unix)]
mod served;
#[cfg(unix)]
mod stand_in_notifications;
#[cfg(unix)]
mod stand_in_systemd;

#[cfg(unix)]
pub use stand_in_notifications::{NotificationService, Received};

/// Where Debian and most distributions install logind.
pub const LOGIND_PATH: &str = "/lib/systemd/systemd-logind";

/// How long [`PrivateBus::start`] and [`PrivateLogind::start`] wait for readiness.
const START_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a stopped daemon gets between SIGTERM and SIGKILL.
#[cfg_attr(not(unix), allow(dead_code, reason = "SIGTERM is Unix-only"))]
const STOP_GRACE: Duration = Duration::from_secs(2);

/// How long [`PrivateLogind::start`] waits for another process's private logind to finish.
const LOCK_TIMEOUT: Duration = Duration::from_secs(120);

/// File locked while a private logind runs, shared by every process on the machine.
const LOCK_FILE: &str = "/run/lidguard-testbus.lock";

/// One row of logind's `ListInhibitors`: (what, who, why, mode, uid, pid).
pub type InhibitorRow = (String, String, String, String, u32, u32);

/// A private `dbus-daemon` configured as a system bus, with a permissive policy.
#[derive(Debug)]
pub struct PrivateBus {
    daemon: Child,
    address: String,
    dir: TempDir,
}

impl PrivateBus {
    /// Starts `dbus-daemon --nofork --print-address` with a `<type>system</type>` config that
    /// listens on `<tmp>/system_bus_socket`, uses EXTERNAL auth and allows every send, receive
    /// and own. Returns once the daemon has printed its address (it is listening by then).
    ///
    /// The daemon stays this process's child (rather than `--fork`ing away), so stopping it can
    /// reap it and its PID can never be reused by another process before that.
    pub fn start() -> Result<PrivateBus, BusError> {
        let dbus_daemon = find_program("dbus-daemon")?;
        let dir = tempfile::Builder::new()
            .prefix("lidguard-testbus-")
            .tempdir()
            .map_err(|e| BusError::io("cannot create a temporary directory", e))?;
        // Like the real system bus, reachable by every user (tests run clients as other uids).
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755))
                .map_err(|e| BusError::io(format!("cannot open up {}", dir.path().display()), e))?;
        }
        let socket = dir.path().join("system_bus_socket");
        let config = dir.path().join("bus.conf");
        fs::write(&config, bus_config(&socket))
            .map_err(|e| BusError::io(format!("cannot write {}", config.display()), e))?;
        let log_path = dir.path().join("dbus-daemon.log");
        let log = File::create(&log_path)
            .map_err(|e| BusError::io(format!("cannot create {}", log_path.display()), e))?;

        let mut daemon = Command::new(dbus_daemon)
            .arg(format!("--config-file={}", config.display()))
            .arg("--nofork")
            .arg("--print-address")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .map_err(|e| BusError::io("cannot start dbus-daemon", e))?;

        // Read the address line on a thread so a silent daemon cannot block us forever.
        let stdout = daemon.stdout.take();
        let (sender, receiver) = mpsc::channel();
        thread::spawn(move || {
            let mut line = String::new();
            if let Some(stdout) = stdout {
                let _ = BufReader::new(stdout).read_line(&mut line);
            }
            let _ = sender.send(line);
        });
        let printed = receiver.recv_timeout(START_TIMEOUT).unwrap_or_default();
        let address = format!("unix:path={}", socket.display());
        let bus = PrivateBus {
            daemon,
            address,
            dir,
        };
        if printed.trim().is_empty() {
            return Err(BusError::Failed(format!(
                "dbus-daemon did not start listening within {} s: {}",
                START_TIMEOUT.as_secs(),
                read_log(&log_path)
            )));
        }
        if !socket.exists() {
            return Err(BusError::Failed(format!(
                "dbus-daemon printed {printed:?} but {} does not exist",
                socket.display()
            )));
        }
        Ok(bus)
    }

    /// The bus address, `unix:path=<tmp>/system_bus_socket`.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The `dbus-daemon` process id.
    pub fn pid(&self) -> u32 {
        self.daemon.id()
    }

    /// The temporary directory holding the config, socket and logs.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Runs `busctl --system <args>` against this bus (the address is set on the child only)
    /// and returns its stdout, or its stderr and exit status on failure.
    pub fn busctl(&self, args: &[&str]) -> Result<String, BusError> {
        let output = Command::new("busctl")
            .env("DBUS_SYSTEM_BUS_ADDRESS", &self.address)
            .arg("--system")
            .arg("--timeout=2")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| BusError::io("cannot run busctl", e))?;
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).into_owned())
        } else {
            Err(BusError::Failed(format!(
                "busctl {} failed ({}): {}",
                args.join(" "),
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            )))
        }
    }
}

impl Drop for PrivateBus {
    fn drop(&mut self) {
        stop(&mut self.daemon);
        // `dir` is removed as the field drops.
    }
}

/// The real systemd-logind on a [`PrivateBus`].
#[derive(Debug)]
pub struct PrivateLogind {
    logind: Child,
    log_path: PathBuf,
    /// Dropped after `logind` is stopped (see `Drop`), then the bus and its directory go.
    bus: PrivateBus,
    /// Held while this logind runs; released when the struct drops.
    _machine_lock: File,
    /// The stand-in for PID 1's manager, when this logind may sleep (see
    /// [`PrivateLogind::start_able_to_sleep`]).
    #[cfg(unix)]
    stand_in: Option<stand_in_systemd::StandInSystemd>,
}

impl PrivateLogind {
    /// Starts a [`PrivateBus`], then `/lib/systemd/systemd-logind` with
    /// `DBUS_SYSTEM_BUS_ADDRESS` pointing at it, and waits (at most about 5 s) until
    /// `org.freedesktop.login1` answers.
    ///
    /// Returns `Err(reason)` when not root, when a binary is missing, or when logind does not
    /// come up. Waits first for any other private logind on this machine to be dropped.
    pub fn start() -> Result<PrivateLogind, BusError> {
        PrivateLogind::start_with(false)
    }

    /// A [`PrivateLogind`] that can carry out a suspend without touching the machine: logind
    /// runs in a mount namespace of its own where `/sys/power/state` offers `mem` (so its
    /// `CanSuspend` check passes whatever this machine supports), and the units it starts go
    /// to a stand-in for PID 1's manager on the private bus, which records them and reports
    /// their jobs done. logind then goes through the whole sleep sequence — `PrepareForSleep`,
    /// waiting for delay inhibitors, `StartUnit("suspend.target")`, `PrepareForSleep(false)`.
    pub fn start_able_to_sleep() -> Result<PrivateLogind, BusError> {
        PrivateLogind::start_with(true)
    }

    /// The units logind asked PID 1 (the stand-in) to start, with when; empty unless started
    /// with [`PrivateLogind::start_able_to_sleep`].
    pub fn started_units(&self) -> Vec<(String, Instant)> {
        self.stand_in
            .as_ref()
            .map(|s| {
                s.started
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .clone()
            })
            .unwrap_or_default()
    }

    fn start_with(able_to_sleep: bool) -> Result<PrivateLogind, BusError> {
        if !cfg!(target_os = "linux") {
            return Err(BusError::Unavailable(
                "a private systemd-logind needs Linux".to_owned(),
            ));
        }
        if !is_root() {
            return Err(BusError::Unavailable(
                "systemd-logind must run as root (these tests run it on a private bus)".to_owned(),
            ));
        }
        if !Path::new(LOGIND_PATH).is_file() {
            return Err(BusError::Unavailable(format!(
                "{LOGIND_PATH} is not installed"
            )));
        }
        find_program("busctl")?;
        let machine_lock = lock_machine()?;
        let bus = PrivateBus::start()?;

        let log_path = bus.dir().join("systemd-logind.log");
        let log = File::create(&log_path)
            .map_err(|e| BusError::io(format!("cannot create {}", log_path.display()), e))?;
        let log_err = log
            .try_clone()
            .map_err(|e| BusError::io("cannot duplicate the log file", e))?;
        let stand_in = if able_to_sleep {
            Some(stand_in_systemd::StandInSystemd::start(bus.address())?)
        } else {
            None
        };
        let mut command = if able_to_sleep {
            let state = bus.dir().join("power-state");
            fs::write(&state, "freeze mem disk\n")
                .map_err(|e| BusError::io(format!("cannot write {}", state.display()), e))?;
            let mut command = Command::new("unshare");
            command
                .args(["--mount", "--propagation", "private", "sh", "-c"])
                .arg("mount --bind \"$1\" /sys/power/state && exec \"$2\"")
                .arg("sh")
                .arg(&state)
                .arg(LOGIND_PATH);
            command
        } else {
            Command::new(LOGIND_PATH)
        };
        let logind = command
            .env("DBUS_SYSTEM_BUS_ADDRESS", bus.address())
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .spawn()
            .map_err(|e| BusError::io(format!("cannot start {LOGIND_PATH}"), e))?;
        let mut private = PrivateLogind {
            logind,
            log_path,
            bus,
            _machine_lock: machine_lock,
            stand_in,
        };

        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            let Err(last_error) = private.try_block_inhibited() else {
                return Ok(private);
            };
            if let Ok(Some(status)) = private.logind.try_wait() {
                return Err(BusError::Failed(format!(
                    "systemd-logind exited ({status}): {}",
                    read_log(&private.log_path)
                )));
            }
            if Instant::now() >= deadline {
                return Err(BusError::Failed(format!(
                    "systemd-logind did not answer within {} s ({last_error}); its log: {}",
                    START_TIMEOUT.as_secs(),
                    read_log(&private.log_path)
                )));
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// The bus address, `unix:path=<tmp>/system_bus_socket`.
    pub fn address(&self) -> &str {
        self.bus.address()
    }

    /// The private bus logind runs on.
    pub fn bus(&self) -> &PrivateBus {
        &self.bus
    }

    /// The `systemd-logind` process id.
    pub fn logind_pid(&self) -> u32 {
        self.logind.id()
    }

    /// The `dbus-daemon` process id.
    pub fn dbus_pid(&self) -> u32 {
        self.bus.pid()
    }

    /// What logind has written to stdout and stderr so far.
    pub fn log(&self) -> String {
        read_log(&self.log_path)
    }

    /// logind's `BlockInhibited` property, or why it could not be read.
    pub fn try_block_inhibited(&self) -> Result<String, BusError> {
        self.try_inhibited("BlockInhibited")
    }

    /// logind's `DelayInhibited` property: the locks held in delay mode ("" when none).
    ///
    /// # Panics
    ///
    /// When logind cannot be asked.
    pub fn delay_inhibited(&self) -> String {
        self.try_inhibited("DelayInhibited")
            .unwrap_or_else(|error| panic!("{error}; logind log: {}", self.log()))
    }

    fn try_inhibited(&self, property: &str) -> Result<String, BusError> {
        let (json, value) = self.manager("get-property", property)?;
        value["data"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| BusError::Failed(format!("busctl printed {json:?}")))
    }

    /// `busctl --json=short VERB` on logind's manager object and `member`: what busctl printed
    /// and its JSON.
    fn manager(&self, verb: &str, member: &str) -> Result<(String, serde_json::Value), BusError> {
        let json = self.bus.busctl(&[
            "--json=short",
            verb,
            "org.freedesktop.login1",
            "/org/freedesktop/login1",
            "org.freedesktop.login1.Manager",
            member,
        ])?;
        let value =
            serde_json::from_str(&json).map_err(|e| format!("busctl printed {json:?}: {e}"))?;
        Ok((json, value))
    }

    /// logind's `BlockInhibited` property, e.g. "sleep:idle:handle-lid-switch" ("" when none).
    ///
    /// # Panics
    ///
    /// When logind cannot be asked: a test must not mistake that for "nothing inhibited".
    pub fn block_inhibited(&self) -> String {
        self.try_block_inhibited()
            .unwrap_or_else(|error| panic!("{error}; logind log: {}", self.log()))
    }

    /// What logind answers to a `Can*` method of its manager (`CanSuspend`, `CanHibernate`,
    /// ...): `"yes"`, `"no"`, `"challenge"` or `"na"`, or why it could not be asked.
    ///
    /// A test that makes anything ask this logind to suspend must first see `"na"` here: the
    /// private logind drives the real machine's power management.
    pub fn can(&self, method: &str) -> Result<String, BusError> {
        let (json, value) = self.manager("call", method)?;
        value["data"][0].as_str().map(str::to_owned).ok_or_else(|| {
            BusError::Failed(format!("unexpected {method} reply from busctl: {json:?}"))
        })
    }

    /// logind `ListInhibitors` as (what, who, why, mode, uid, pid) tuples.
    ///
    /// # Panics
    ///
    /// When logind cannot be asked or answers something unexpected.
    pub fn list_inhibitors(&self) -> Vec<InhibitorRow> {
        let (json, _) = self
            .manager("call", "ListInhibitors")
            .unwrap_or_else(|error| panic!("{error}; logind log: {}", self.log()));
        parse_inhibitors(&json).unwrap_or_else(|error| panic!("{error}"))
    }

    /// Polls until `pred(block_inhibited())` is true or `timeout` passes; returns the last value.
    pub fn wait_block_inhibited(&self, timeout: Duration, pred: impl Fn(&str) -> bool) -> String {
        let mut last = String::new();
        poll(timeout, Duration::from_millis(25), || {
            last = self.block_inhibited();
            pred(&last)
        });
        last
    }

    /// Polls every 5 ms until `held(self)` is true; false when `timeout` passed first. For
    /// timing how soon logind shows something (the benchmark's cold start).
    pub fn wait_for(&self, timeout: Duration, held: impl Fn(&Self) -> bool) -> bool {
        poll(timeout, Duration::from_millis(5), || held(self))
    }
}

/// Calls `done` every `every` until it returns true (then true) or `timeout` has passed (then
/// false).
pub fn poll(timeout: Duration, every: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        thread::sleep(every);
    }
}

impl Drop for PrivateLogind {
    fn drop(&mut self) {
        // logind first, while its bus is still there; then the fields drop: the bus daemon is
        // stopped, its directory removed and the machine lock released.
        stop(&mut self.logind);
    }
}

/// Parses busctl's JSON for a `ListInhibitors` reply.
fn parse_inhibitors(json: &str) -> Result<Vec<InhibitorRow>, BusError> {
    let bad = || format!("unexpected ListInhibitors reply from busctl: {json:?}");
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("{}: {e}", bad()))?;
    let rows = value["data"][0].as_array().ok_or_else(bad)?;
    rows.iter()
        .map(|row| {
            let text = |i: usize| row[i].as_str().map(str::to_owned).ok_or_else(bad);
            let number = |i: usize| {
                row[i]
                    .as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(bad)
            };
            Ok((
                text(0)?,
                text(1)?,
                text(2)?,
                text(3)?,
                number(4)?,
                number(5)?,
            ))
        })
        .collect()
}

/// Only one logind may run on the machine at a time (it uses /run/systemd/...): a process-wide
/// lock each test takes first. A test that panicked while holding it does not poison it.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Whether logind tests must run: returns the started [`PrivateLogind`] or, when that is
/// impossible, panics if the environment variable `CI` is set (CI must run them) and otherwise
/// returns `None` after printing to stderr why they are skipped.
#[allow(
    clippy::print_stderr,
    reason = "a skipped test says why on the test's stderr"
)]
pub fn logind_or_skip() -> Option<PrivateLogind> {
    or_skip(PrivateLogind::start())
}

/// [`logind_or_skip`] for a logind that can carry out a suspend against the stand-in for PID 1
/// ([`PrivateLogind::start_able_to_sleep`]).
pub fn logind_able_to_sleep_or_skip() -> Option<PrivateLogind> {
    or_skip(PrivateLogind::start_able_to_sleep())
}

#[allow(
    clippy::print_stderr,
    reason = "a skipped test says why on the test's stderr"
)]
fn or_skip(started: Result<PrivateLogind, BusError>) -> Option<PrivateLogind> {
    match started {
        Ok(logind) => Some(logind),
        Err(reason) => {
            if std::env::var_os("CI").is_some_and(|value| !value.is_empty()) {
                panic!(
                    "CI is set, so the logind tests must run, but a private logind failed: {reason}"
                );
            }
            eprintln!("skipping a logind test: {reason}");
            None
        }
    }
}

/// A [`PrivateBus`] for tests that need a bus but no logind, or `None` (after printing why to
/// stderr) when `dbus-daemon` cannot run; with `CI` set, that panics instead.
#[allow(
    clippy::print_stderr,
    reason = "a skipped test says why on the test's stderr"
)]
pub fn bus_or_skip() -> Option<PrivateBus> {
    match PrivateBus::start() {
        Ok(bus) => Some(bus),
        Err(reason) => {
            if std::env::var_os("CI").is_some_and(|value| !value.is_empty()) {
                panic!(
                    "CI is set, so the D-Bus tests must run, but a private bus failed: {reason}"
                );
            }
            eprintln!("skipping a D-Bus test: {reason}");
            None
        }
    }
}

/// The bus configuration: a system bus on `socket`, EXTERNAL auth, everything allowed.
fn bus_config(socket: &Path) -> String {
    format!(
        r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_type="method_return"/>
    <allow send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="signal"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
  </policy>
</busconfig>
"#,
        xml_escape(&socket.display().to_string())
    )
}

fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The first `name` on `PATH`.
fn find_program(name: &str) -> Result<PathBuf, BusError> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| {
            BusError::Unavailable(format!("{name} is not installed (not found on PATH)"))
        })
}

/// The tail of a log file, for error messages.
fn read_log(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    let text = text.trim();
    if text.is_empty() {
        return "(empty log)".to_owned();
    }
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// Takes the machine-wide lock, waiting for another process's private logind.
fn lock_machine() -> Result<File, BusError> {
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(LOCK_FILE)
        .map_err(|e| BusError::io(format!("cannot open {LOCK_FILE}"), e))?;
    let deadline = Instant::now() + LOCK_TIMEOUT;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                thread::sleep(Duration::from_millis(100));
            }
            Err(fs::TryLockError::WouldBlock) => {
                return Err(BusError::Failed(format!(
                    "another process has held {LOCK_FILE} (a private logind) for {} s",
                    LOCK_TIMEOUT.as_secs()
                )));
            }
            Err(fs::TryLockError::Error(e)) => {
                return Err(BusError::Failed(format!("cannot lock {LOCK_FILE}: {e}")));
            }
        }
    }
}

#[cfg(unix)]
fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

#[cfg(not(unix))]
fn is_root() -> bool {
    false
}

/// Stops a child daemon by its PID: SIGTERM, then SIGKILL after [`STOP_GRACE`]; always reaps.
fn stop(child: &mut Child) {
    if matches!(child.try_wait(), Ok(Some(_))) {
        return;
    }
    #[cfg(unix)]
    {
        // The child is not reaped yet, so its PID cannot belong to another process.
        let pid = i32::try_from(child.id())
            .ok()
            .and_then(rustix::process::Pid::from_raw);
        if let Some(pid) = pid {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
            let deadline = Instant::now() + STOP_GRACE;
            while Instant::now() < deadline {
                if matches!(child.try_wait(), Ok(Some(_))) {
                    return;
                }
                thread::sleep(Duration::from_millis(20));
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_inhibitor_list() {
        let json = r#"{"type":"a(ssssuu)","data":[[["sleep:idle","x","a b","block",0,6566],["handle-lid-switch","lidguard","why","block",1000,7]]]}"#;
        let rows = parse_inhibitors(json).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[0],
            (
                "sleep:idle".into(),
                "x".into(),
                "a b".into(),
                "block".into(),
                0,
                6566
            )
        );
        assert_eq!(rows[1].1, "lidguard");
        assert!(
            parse_inhibitors(r#"{"type":"a(ssssuu)","data":[[]]}"#)
                .unwrap()
                .is_empty()
        );
        assert!(parse_inhibitors("nonsense").is_err());
        assert!(parse_inhibitors(r#"{"data":[[["x"]]]}"#).is_err());
    }

    #[test]
    fn config_mentions_socket_and_system_type() {
        let config = bus_config(Path::new("/tmp/a&b/system_bus_socket"));
        assert!(config.contains("<type>system</type>"));
        assert!(config.contains("<listen>unix:path=/tmp/a&amp;b/system_bus_socket</listen>"));
        assert!(config.contains("<auth>EXTERNAL</auth>"));
    }

    #[test]
    fn serial_survives_poisoning() {
        let _ = thread::spawn(|| {
            let _guard = serial();
            panic!("poison it");
        })
        .join();
        drop(serial());
    }

    #[test]
    fn private_logind_round_trip() {
        let _serial = serial();
        let Some(logind) = logind_or_skip() else {
            return;
        };
        assert_eq!(logind.block_inhibited(), "");
        assert!(logind.list_inhibitors().is_empty());
        let logind_pid = logind.logind_pid();
        let dbus_pid = logind.dbus_pid();
        let dir = logind.bus().dir().to_path_buf();
        assert!(dir.join("system_bus_socket").exists());
        drop(logind);
        assert!(!dir.exists(), "the temporary directory is removed");
        for pid in [logind_pid, dbus_pid] {
            let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            assert!(
                stat.is_empty(),
                "process {pid} is gone (and reaped): {stat}"
            );
        }
    }
}
