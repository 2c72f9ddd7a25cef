use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use lidguard_ipc::Places;
use lidguard_ipc::protocol::{Request, Response};
use serde_json::Value;
use tempfile::TempDir;

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_lidguard");
/// The small executable the installed hooks run: this build's, or the one
/// `LIDGUARD_TEST_HOOK_BIN` names (CI runs the conformance test again with the static musl build).
pub(crate) fn hook_bin() -> PathBuf {
    std::env::var_os("LIDGUARD_TEST_HOOK_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_lidguard-hook")),
        PathBuf::from,
    )
}

/// A private lidguard home: its own settings, database, socket and daemon. The daemon it
/// starts is killed when the home is dropped.
pub(crate) struct Home {
    pub(crate) dir: TempDir,
    pub(crate) places: Places,
    /// The D-Bus address the daemon sees as its system bus.
    pub(crate) bus: String,
    /// The one it sees as the session bus (desktop notifications): none unless a test gives
    /// one, so no test ever reaches the real desktop.
    pub(crate) session_bus: String,
}

impl Home {
    /// A home whose daemon finds no system bus (protection unavailable).
    pub(crate) fn new() -> Home {
        let dir = tempfile::Builder::new().prefix("lg").tempdir().unwrap();
        let bus = format!("unix:path={}", dir.path().join("no-such-bus").display());
        Home::with_bus_in(dir, bus)
    }

    /// A home whose daemon uses the bus at `address` (a private logind).
    pub(crate) fn with_bus(address: &str) -> Home {
        let dir = tempfile::Builder::new().prefix("lg").tempdir().unwrap();
        Home::with_bus_in(dir, address.to_owned())
    }

    fn with_bus_in(dir: TempDir, bus: String) -> Home {
        let places = Places::under(dir.path());
        let session_bus = format!("unix:path={}", dir.path().join("no-session-bus").display());
        Home {
            dir,
            places,
            bus,
            session_bus,
        }
    }

    /// This home with its daemon on the session bus at `address`.
    pub(crate) fn with_session_bus(mut self, address: &str) -> Home {
        address.clone_into(&mut self.session_bus);
        self
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `lidguard <args>` in this home, with a clean environment for lidguard's variables.
    pub(crate) fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(BIN);
        cmd.args(args);
        self.configure(cmd)
    }

    /// `lidguard-hook <args>` (what the installed hooks run) in this home.
    pub(crate) fn hook_cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(hook_bin());
        cmd.args(args);
        self.configure(cmd)
    }

    /// `lidguard <args>` started under `umask` (through `sh`, which sets it and execs).
    pub(crate) fn cmd_umask(&self, umask: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!("umask {umask}; exec \"$0\" \"$@\""))
            .arg(BIN)
            .args(args);
        self.configure(cmd)
    }

    pub(crate) fn configure(&self, mut cmd: Command) -> Command {
        // HOME too: settings that change the managed hook timeout refresh the agents' configs
        // under it, and a test must never touch the real ones.
        cmd.env("LIDGUARD_HOME", self.path())
            .env("HOME", self.path().join("user-home"))
            .env("DBUS_SYSTEM_BUS_ADDRESS", &self.bus)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.session_bus)
            .env_remove("LIDGUARD_LOG")
            .env_remove("LIDGUARD_PROC_ROOT")
            .env_remove("LIDGUARD_SYS_ROOT")
            .current_dir(self.path())
            .stdin(std::process::Stdio::null());
        cmd
    }

    /// `lidguard <args>` as another uid (setpriv needs no passwd entry), in this home.
    pub(crate) fn cmd_as(&self, uid: u32, args: &[&str]) -> Command {
        let mut cmd = Command::new("setpriv");
        cmd.arg(format!("--reuid={uid}"))
            .arg(format!("--regid={uid}"))
            .arg("--clear-groups")
            .arg(BIN)
            .args(args)
            .env("LIDGUARD_HOME", self.path())
            .env("DBUS_SYSTEM_BUS_ADDRESS", &self.bus)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.session_bus)
            .current_dir(self.path())
            .stdin(std::process::Stdio::null());
        cmd
    }

    /// Gives the whole home to `uid`, so a daemon running as that user can use it.
    pub(crate) fn chown_to(&self, uid: u32) {
        let status = Command::new("chown")
            .arg("-R")
            .arg(format!("{uid}:{uid}"))
            .arg(self.path())
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Runs a command and returns its output.
    pub(crate) fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// Runs a command that must succeed; returns stdout.
    #[track_caller]
    pub(crate) fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "lidguard {args:?} failed with {}:\nstdout: {}\nstderr: {}\nlog: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(self.places.log_file()).unwrap_or_default()
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Runs a command that must fail; returns stderr.
    #[track_caller]
    pub(crate) fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(!out.status.success(), "lidguard {args:?} succeeded");
        String::from_utf8(out.stderr).unwrap()
    }

    /// `lidguard start` of Claude session `id` watching the process `pid`.
    #[track_caller]
    pub(crate) fn start_watched(&self, id: &str, pid: &str) -> String {
        self.ok(&[
            "start",
            "--provider",
            "claude",
            "--session",
            id,
            "--parent-pid",
            pid,
        ])
    }

    /// `status --json`, parsed.
    #[track_caller]
    pub(crate) fn status(&self) -> Value {
        serde_json::from_str(&self.ok(&["status", "--json"])).unwrap()
    }

    /// The ids of the sessions in `status --json`, in its order.
    #[track_caller]
    pub(crate) fn session_ids(&self) -> Vec<String> {
        let status = self.status();
        let sessions = status["sessions"].as_array().unwrap().iter();
        sessions
            .map(|s| s["sessionId"].as_str().unwrap().to_owned())
            .collect()
    }

    /// One session of `status --json`, by id.
    #[track_caller]
    pub(crate) fn session(&self, id: &str) -> Option<Value> {
        self.status()["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["sessionId"] == id)
            .cloned()
    }

    /// A raw request over the socket.
    pub(crate) fn request(&self, request: &Request) -> Response {
        lidguard_ipc::client::request(&self.places, request, Duration::from_secs(10)).unwrap()
    }

    /// Whether a daemon answers on the socket (its lock file is written before it listens).
    pub(crate) fn daemon_answers(&self) -> bool {
        lidguard_ipc::client::request(&self.places, &Request::Ping, Duration::from_secs(2)).is_ok()
    }

    /// The running daemon's pid, from its lock file.
    pub(crate) fn daemon_pid(&self) -> Option<u32> {
        let text = std::fs::read_to_string(self.places.lock_file()).ok()?;
        let pid: u32 = text.trim().parse().ok()?;
        alive(pid).then_some(pid)
    }

    /// Waits until the daemon is gone.
    pub(crate) fn wait_daemon_gone(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if self.daemon_pid().is_none() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    pub(crate) fn socket(&self) -> PathBuf {
        self.places.socket()
    }

    pub(crate) fn write_settings(&self, json: &str) {
        std::fs::create_dir_all(&self.places.config_dir).unwrap();
        std::fs::write(self.places.settings_file(), json).unwrap();
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        if let Some(pid) = self.daemon_pid() {
            signal(pid, rustix::process::Signal::KILL);
        }
    }
}

/// Whether a process is alive and not a zombie.
pub(crate) fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().chars().next());
            !matches!(state, Some(Some('Z' | 'X')))
        }
        Err(_) => false,
    }
}

pub(crate) fn signal(pid: u32, sig: rustix::process::Signal) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
        let _ = rustix::process::kill_process(pid, sig);
    }
}

/// A process's resident memory in KiB, from /proc.
pub(crate) fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Whether a test can run here: `missing` says what this machine lacks, if anything. Without
/// it the test is skipped, saying so; under `CI` (where `.ci/run` installs it) it fails.
pub(crate) fn runs_here(missing: Option<String>) -> bool {
    let Some(missing) = missing else {
        return true;
    };
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set, so this test must run: {missing} (.ci/run installs it)"
    );
    eprintln!("skipped: {missing}");
    false
}

/// The JSON string `v`.
#[track_caller]
pub(crate) fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}"))
}

/// The first row of the JSON array `rows` whose `key` is `value`.
#[track_caller]
pub(crate) fn row_where<'a>(rows: &'a Value, key: &str, value: &str) -> &'a Value {
    let found = rows
        .as_array()
        .and_then(|r| r.iter().find(|row| row[key] == value));
    found.unwrap_or_else(|| panic!("no row with {key} {value:?} in {rows}"))
}

/// Polls `f` until it returns true or `timeout` passes.
pub(crate) fn eventually(timeout: Duration, f: impl FnMut() -> bool) -> bool {
    lidguard_testbus::poll(timeout, Duration::from_millis(20), f)
}

/// A process to watch, killed on drop.
pub(crate) struct Agent(pub(crate) std::process::Child);

impl Agent {
    pub(crate) fn spawn() -> Agent {
        Agent(Command::new("sleep").arg("1000").spawn().unwrap())
    }

    pub(crate) fn pid(&self) -> u32 {
        self.0.id()
    }

    pub(crate) fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The arguments of `lidguard <provider>-hook` for `event` (Copilot and OpenCode name it).
pub(crate) fn hook_args(provider: &str, event: &str) -> Vec<String> {
    let agent = lidguard_providers::AGENTS
        .iter()
        .find(|a| a.provider.as_str() == provider)
        .expect("an agent");
    let mut args = vec![agent.hook_command.to_owned()];
    if agent.event_on_command_line {
        args.extend(["--event".to_owned(), event.to_owned()]);
    }
    args
}

/// Runs `cmd` with `stdin` piped in; stdout and stderr are captured.
pub(crate) fn pipe(mut cmd: Command, stdin: &[u8]) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A hook may exit before reading everything (it fails open on bad input).
    let _ = child.stdin.take().unwrap().write_all(stdin);
    child.wait_with_output().unwrap()
}

/// Writes an executable file from a child process. Written in this process, the file's
/// write descriptor could be inherited by a program another test thread is just starting,
/// and exec of the new file would fail with ETXTBSY ("Text file busy") until that program
/// has exec'd; a child process's descriptor is never inherited by ours.
pub(crate) fn write_executable(path: &Path, contents: &[u8]) {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "cat > \"$1\" && chmod 755 \"$1\"", "sh"])
        .arg(path);
    let out = pipe(cmd, contents);
    assert!(out.status.success(), "writing {}: {out:?}", path.display());
}

/// A fake `/proc` and `/sys` under `home`: the lid in `state` (`open`, `closed`, ...) and only
/// the internal panel connected. Returns `(proc_root, sys_root)` for `LIDGUARD_PROC_ROOT` and
/// `LIDGUARD_SYS_ROOT`.
pub(crate) fn fake_roots(home: &Home, state: &str) -> (PathBuf, PathBuf) {
    let proc_root = home.path().join("proc");
    let sys_root = home.path().join("sys");
    set_lid(&proc_root, state);
    let panel = sys_root.join("class/drm/card0-eDP-1");
    std::fs::create_dir_all(&panel).unwrap();
    std::fs::write(panel.join("status"), "connected\n").unwrap();
    (proc_root, sys_root)
}

/// Rewrites the fake lid's state below `proc_root`.
pub(crate) fn set_lid(proc_root: &Path, state: &str) {
    let dir = proc_root.join("acpi/button/lid/LID0");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("state"), format!("state:      {state}\n")).unwrap();
}

/// The signature header a receiver expects: `sha256=` and the hex HMAC-SHA256 of
/// `<timestamp>.<raw body>` under `secret` (computed here independently of lidguard's code).
pub(crate) fn expected_signature(secret: &str, timestamp: &str, body: &[u8]) -> String {
    use hmac::{KeyInit, Mac};
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{timestamp}.").as_bytes());
    mac.update(body);
    let hex: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256={hex}")
}

/// Fails the test with the command's stderr unless it succeeded.
#[track_caller]
pub(crate) fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `cmd` to its end; fails the test with its stderr unless it succeeded.
#[track_caller]
pub(crate) fn succeeded(mut cmd: Command) -> Output {
    let out = cmd.output().unwrap();
    assert_ok(&out);
    out
}

/// `suspend-history --json` of `home`, oldest first.
pub(crate) fn suspend_history(home: &Home) -> Vec<Value> {
    serde_json::from_str::<Value>(&home.ok(&["suspend-history", "--json"]))
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// The fields a webhook body carries about the ended Claude session `id` that the tests start
/// (one prompt and one Stop in `/home/u/proj`), with no other session active.
pub(crate) fn assert_ended_claude_session(body: &Value, id: &str) {
    assert_eq!(body["provider"], "Claude");
    assert_eq!(body["sessionIdentifier"], id);
    assert_eq!(body["endReason"], "Stop");
    assert_eq!(body["activeSessionCount"], 0);
    assert_eq!(
        body["inputPromptPreview"],
        "Please refactor the storage layer and add tests..."
    );
    assert_eq!(body["lastAssistantMessage"], "Refactored; 12 tests added.");
    assert_eq!(body["workingDirectory"], "/home/u/proj");
    assert_eq!(
        body["transcriptPath"],
        format!("/home/u/.claude/projects/p/{id}.jsonl")
    );
}

/// A session as requests name it.
pub(crate) fn session_ref(
    provider: lidguard_core::provider::Provider,
    id: &str,
) -> lidguard_ipc::protocol::SessionRef {
    lidguard_ipc::protocol::SessionRef {
        provider,
        session_id: id.to_owned(),
        provider_name: None,
    }
}
