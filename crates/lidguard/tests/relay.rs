//! `lidguard ssh` against a real OpenSSH server on loopback, with the local account `lgremote`
//! standing for the remote host (`.ci/run` creates it): a Claude hook run on the far side
//! reaches this machine's daemon through the forwarded relay, holds the real logind inhibitor
//! on the private bus, and ends when the ssh client is killed. As root (CI) with sshd and that
//! account present they always run; elsewhere they are skipped with a message.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::util::{Home, eventually};

const REMOTE_USER: &str = "lgremote";

/// The id of the agent's session `r1` that came over ssh from `lgremote@127.0.0.1`.
const PLACE_R1: &str = "ssh:lgremote@127.0.0.1/r1";
const SSHD: &str = "/usr/sbin/sshd";

/// Why the relay tests cannot run here, if they cannot (in CI that is a failure).
fn missing() -> Option<String> {
    if !rustix::process::getuid().is_root() {
        return Some("sshd must start as root to log another user in".into());
    }
    if !Path::new(SSHD).exists() {
        return Some(format!(
            "{SSHD} is missing (apt-get install openssh-server)"
        ));
    }
    let account = Command::new("id").arg(REMOTE_USER).output();
    if !account.is_ok_and(|o| o.status.success()) {
        return Some(format!("no account {REMOTE_USER} (see .ci/run)"));
    }
    None
}

/// A private sshd on a loopback port, its keys and a client key in a world-readable folder
/// (sshd reads the authorized keys as `lgremote`).
struct Sshd {
    dir: PathBuf,
    port: u16,
    child: Child,
}

impl Sshd {
    fn start() -> Sshd {
        let dir = std::env::temp_dir().join(format!("lidguard-sshd-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        for key in ["host", "client"] {
            let status = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(dir.join(key))
                .status()
                .unwrap();
            assert!(status.success());
        }
        std::fs::copy(dir.join("client.pub"), dir.join("authorized_keys")).unwrap();
        std::fs::set_permissions(
            dir.join("authorized_keys"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {dir}/host\nPidFile none\n\
             AuthorizedKeysFile {dir}/authorized_keys\nStrictModes no\nUsePAM no\n\
             PasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             AllowStreamLocalForwarding yes\n",
            dir = dir.display()
        );
        std::fs::write(dir.join("sshd_config"), config).unwrap();
        // sshd's privilege separation directory.
        std::fs::create_dir_all("/run/sshd").unwrap();
        let child = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(dir.join("sshd_config"))
            .stderr(std::fs::File::create(dir.join("sshd.log")).unwrap())
            .spawn()
            .unwrap();
        assert!(
            eventually(Duration::from_secs(10), || {
                std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
            }),
            "sshd did not listen"
        );
        Sshd { dir, port, child }
    }

    /// The ssh options and destination that reach `lgremote@127.0.0.1` here.
    fn destination(&self) -> Vec<String> {
        let key = self.dir.join("client").display().to_string();
        let port = self.port.to_string();
        let options = [
            "-p",
            &port,
            "-i",
            &key,
            "-o",
            "UserKnownHostsFile=/dev/null",
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "BatchMode=yes",
            "-o",
            "LogLevel=ERROR",
        ];
        let mut args: Vec<String> = options.iter().map(|s| (*s).to_owned()).collect();
        args.push(format!("{REMOTE_USER}@127.0.0.1"));
        args
    }

    /// `lidguard ssh` to `lgremote@127.0.0.1` running `remote` there.
    fn lidguard_ssh(&self, home: &Home, remote: &str) -> Child {
        let mut args = vec!["ssh".to_owned()];
        args.extend(self.destination());
        args.push(remote.to_owned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        home.cmd(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The `ssh` client `lidguard ssh` (pid `parent`) started.
fn ssh_client(parent: u32) -> Option<u32> {
    child_named(parent, "ssh")
}

/// The child of `parent` running the program `name`.
fn child_named(parent: u32, name: &str) -> Option<u32> {
    let children =
        std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children")).ok()?;
    children.split_whitespace().find_map(|pid| {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
        (comm.trim() == name).then(|| pid.parse().ok())?
    })
}

/// The relay sockets sshd made for the remote user (live or left behind).
fn remote_relays() -> Vec<PathBuf> {
    let prefix = format!("lidguard-relay-{REMOTE_USER}-");
    let entries = std::fs::read_dir("/tmp").unwrap();
    let names = entries.filter_map(Result::ok).map(|e| e.path());
    names
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&prefix)
        })
        .collect()
}

/// The session that came through a relay whose `via` starts with `prefix`.
fn relayed(home: &Home, prefix: &str) -> Option<serde_json::Value> {
    home.status()["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["via"].as_str().is_some_and(|v| v.starts_with(prefix)))
        .cloned()
}

/// What the remote or container side runs: one Claude prompt through the hook, its exit code,
/// then a long wait (the agent still working).
fn claude_prompt_then_wait(hook: &str) -> String {
    let payload = r#"{"session_id":"r1","cwd":"/srv/project","transcript_path":"/etc/shadow","hook_event_name":"UserPromptSubmit","prompt":"go"}"#;
    format!("echo '{payload}' | {hook} claude-hook; echo hook-exit $?; sleep 600")
}

/// One request line on the relay socket, as a guest on the far side would send it; its answer
/// (`null` when the relay closed without one).
fn as_guest(relay: &Path, line: &str) -> serde_json::Value {
    let mut stream = std::os::unix::net::UnixStream::connect(relay).unwrap();
    // A relay with too many guests answers and closes before it reads: the write may then
    // fail, and the answer is read all the same.
    let _ = stream.write_all(format!("{line}\n").as_bytes());
    let mut answer = String::new();
    let _ = BufReader::new(&stream).read_line(&mut answer);
    serde_json::from_str(&answer).unwrap_or(serde_json::Value::Null)
}

#[test]
fn a_claude_hook_over_lidguard_ssh_holds_logind_until_the_ssh_client_dies() {
    if !crate::util::runs_here(missing()) {
        return;
    }
    let serial = lidguard_testbus::serial();
    let Some(logind) = lidguard_testbus::logind_or_skip() else {
        return;
    };
    let home = Home::with_bus(logind.address());
    for socket in remote_relays() {
        let _ = std::fs::remove_file(socket);
    }
    let sshd = Sshd::start();
    // A local session, which no guest may touch.
    home.ok(&["start", "--provider", "claude", "--session", "local"]);

    let remote = claude_prompt_then_wait(&crate::util::hook_bin().display().to_string());
    let mut client = sshd.lidguard_ssh(&home, &remote);
    let relayed = |home: &Home| relayed(home, "ssh ");
    assert!(
        eventually(Duration::from_secs(20), || relayed(&home).is_some()),
        "no relayed session; sshd log:\n{}",
        std::fs::read_to_string(sshd.dir.join("sshd.log")).unwrap_or_default()
    );
    let session = relayed(&home).unwrap();
    let via = session["via"].as_str().unwrap();
    assert_eq!(via, "ssh lgremote@127.0.0.1", "{session}");
    // The other machine's process and files are never this machine's to watch or read.
    assert!(session["watchedPid"].is_null(), "{session}");
    assert!(session["transcriptPath"].is_null(), "{session}");
    assert_eq!(session["sessionId"], PLACE_R1);
    assert!(home.ok(&["status"]).contains(&format!("on {via}")));
    assert_eq!(logind.block_inhibited(), "idle:handle-lid-switch");

    // A guest may send hook events for its own sessions only.
    let guest = home
        .socket()
        .parent()
        .unwrap()
        .join(format!("relay-ssh-{}.sock", client.id()));
    let refused = as_guest(&guest, r#"{"v":1,"command":"remove-session","all":true}"#);
    assert_eq!(refused["ok"], false, "{refused}");
    assert!(
        crate::util::text(&refused["message"]).contains("hook events only"),
        "{refused}"
    );
    let end_local = lidguard_core::event::AgentEvent::new(
        lidguard_core::provider::Provider::Claude,
        "local",
        "SessionEnd",
        lidguard_core::event::EventKind::SessionEnded {
            normal: true,
            defer_for_work: false,
        },
    );
    let line = serde_json::json!({"v": 1, "command": "hook", "events": [end_local]});
    let answer = as_guest(&guest, &line.to_string());
    assert_eq!(
        answer["ok"], true,
        "the daemon took it, as its own relay's: {answer}"
    );
    assert!(
        home.session("local").is_some(),
        "a guest ended a local session"
    );
    assert!(relayed(&home).is_some());

    // Malformed, oversized and flooding guests are cut off at the relay.
    let malformed = as_guest(&guest, "{not json");
    assert!(
        malformed["message"].as_str().unwrap().contains("malformed"),
        "{malformed}"
    );
    let mut huge = std::os::unix::net::UnixStream::connect(&guest).unwrap();
    // The relay stops reading past the limit, so the rest of this write may be refused.
    let _ = huge.write_all(&vec![b' '; 2 << 20]);
    let mut oversized = String::new();
    BufReader::new(&huge).read_line(&mut oversized).unwrap();
    assert!(oversized.contains("too large"), "{oversized}");
    let flood: Vec<_> = (0..40)
        .map(|_| std::os::unix::net::UnixStream::connect(&guest).unwrap())
        .collect();
    // The relay serves 32 guests at once (these wait, silent); the rest are refused at once.
    for stream in &flood[32..] {
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut answer = String::new();
        BufReader::new(stream).read_line(&mut answer).unwrap();
        assert!(answer.contains("too many"), "{answer}");
    }
    drop(flood);
    assert!(
        eventually(Duration::from_secs(10), || {
            as_guest(&guest, &line.to_string())["ok"] == true
        }),
        "the relay did not serve again after the flood"
    );
    assert!(home.session("local").is_some());
    assert!(relayed(&home).is_some());

    // The ssh client dies: the lease ends, and with it the relayed session.
    let lidguard_ssh = client.id();
    let ssh = ssh_client(lidguard_ssh).expect("the ssh client of lidguard ssh");
    crate::util::signal(ssh, rustix::process::Signal::KILL);
    let started = std::time::Instant::now();
    assert!(
        eventually(Duration::from_secs(10), || relayed(&home).is_none()),
        "the relayed session outlived its ssh connection by 10 s"
    );
    let ended_in = started.elapsed();
    assert!(client.wait().unwrap().code().is_some_and(|c| c != 0));
    let mut out = String::new();
    std::io::Read::read_to_string(&mut client.stdout.take().unwrap(), &mut out).unwrap();
    assert!(out.contains("hook-exit 0"), "{out}");
    assert!(!guest.exists(), "the relay socket stays behind");

    // sshd leaves the dead connection's socket on the remote host and (by default) would not
    // bind over it: the next connection takes its own, and its hook finds the live one.
    let stale = remote_relays();
    assert_eq!(stale.len(), 1, "{stale:?}");
    let mut again = sshd.lidguard_ssh(&home, &remote);
    assert!(
        eventually(Duration::from_secs(20), || relayed(&home).is_some()),
        "no relayed session on the second connection; sshd log:\n{}",
        std::fs::read_to_string(sshd.dir.join("sshd.log")).unwrap_or_default()
    );
    // The local session was never touched by a guest; it stops here (a restarted daemon drops
    // local sessions without a process to watch, as the daemon tests show).
    assert!(home.session("local").is_some());
    home.ok(&["stop", "--provider", "claude", "--session", "local"]);

    // The daemon dies: the relay takes its lease on a new one, which keeps the session it
    // finds stored (and the lock) since the session's place is held again.
    let first = home.daemon_pid().unwrap();
    crate::util::signal(first, rustix::process::Signal::KILL);
    assert!(eventually(Duration::from_secs(10), || {
        home.daemon_pid().is_some_and(|pid| pid != first)
    }));
    std::thread::sleep(lidguard_daemon::RELAY_GRACE + Duration::from_secs(2));
    let kept = relayed(&home).expect("the restarted daemon dropped a held relay's session");
    assert_eq!(kept["sessionId"], PLACE_R1);
    assert_eq!(
        logind.wait_block_inhibited(Duration::from_secs(5), |s| !s.is_empty()),
        "idle:handle-lid-switch"
    );
    // One lease on each daemon, held: a relay that took it again and again (it once read the
    // answer's end as the daemon going away) left grace times running that ended its place's
    // sessions the moment it went, with no grace at all.
    let log = std::fs::read_to_string(home.places.log_file()).unwrap_or_default();
    let this_relay = format!("relay lease held relay=ssh-{} ", again.id());
    let holds = log.lines().filter(|l| l.contains(&this_relay)).count();
    assert_eq!(holds, 2, "{}", lease_lines(&log));

    // The connection drops and another to the same account is back within the grace time
    // (the agent there, under tmux, never stopped): the session goes on and stays held; it
    // ends once the last connection ends and none comes back.
    let ssh = ssh_client(again.id()).expect("the ssh client of the second lidguard ssh");
    crate::util::signal(ssh, rustix::process::Signal::KILL);
    let _ = again.wait();
    let mut back = sshd.lidguard_ssh(&home, "sleep 600");
    std::thread::sleep(lidguard_daemon::RELAY_GRACE + Duration::from_secs(2));
    let Some(kept) = relayed(&home) else {
        // Said in full: the third connection's fate and what the daemon logged.
        let ended = back.try_wait().unwrap();
        let mut said = String::new();
        if ended.is_some() {
            let stderr = back.stderr.as_mut().unwrap();
            std::io::Read::read_to_string(stderr, &mut said).unwrap();
        }
        let events = home.ok(&["events", "--since", "all"]);
        let log = std::fs::read_to_string(home.places.log_file()).unwrap_or_default();
        panic!(
            "the session ended though its connection came back: third lidguard ssh {ended:?} \
             {said}\nevents:\n{events}\nlog:\n{}\nsshd log:\n{}",
            lease_lines(&log),
            std::fs::read_to_string(sshd.dir.join("sshd.log")).unwrap_or_default()
        );
    };
    assert_eq!(kept["sessionId"], PLACE_R1);
    assert_eq!(logind.block_inhibited(), "idle:handle-lid-switch");
    let ssh = ssh_client(back.id()).expect("the ssh client of the third lidguard ssh");
    crate::util::signal(ssh, rustix::process::Signal::KILL);
    assert!(eventually(Duration::from_secs(10), || relayed(&home).is_none()));
    let _ = back.wait();
    for socket in remote_relays() {
        let _ = std::fs::remove_file(socket);
    }
    // Nothing is held any more.
    assert_eq!(
        logind.wait_block_inhibited(Duration::from_secs(5), str::is_empty),
        ""
    );
    eprintln!("relayed session ended {ended_in:?} after kill -9 of ssh");
    drop(serial);
}

/// The static hook the container test puts in its image (`.ci/run` builds it with zig and
/// names it here); without it the test is skipped.
const STATIC_HOOK_ENV: &str = "LIDGUARD_TEST_STATIC_HOOK";

/// A `FROM scratch` image with static busybox and the static hook, built offline.
struct Image(String);

impl Image {
    fn build(hook: &Path) -> Image {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy("/usr/bin/busybox", dir.path().join("busybox")).unwrap();
        std::fs::copy(hook, dir.path().join("lidguard-hook")).unwrap();
        std::fs::write(
            dir.path().join("Containerfile"),
            "FROM scratch\nCOPY busybox /bin/busybox\nCOPY lidguard-hook /bin/lidguard-hook\n",
        )
        .unwrap();
        let tag = format!("localhost/lidguard-relay-test:{}", std::process::id());
        let out = Command::new("podman")
            .args(["build", "--runtime", "runc", "-q", "-t", &tag])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "podman build: {out:?}");
        Image(tag)
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        let _ = Command::new("podman").args(["rmi", "-f", &self.0]).output();
    }
}

#[test]
fn a_claude_hook_in_a_podman_container_holds_logind_until_the_container_stops() {
    container_session_lasts_as_long_as_the_container(false);
}

/// The same through a TCP relay (`--tcp`, as for Docker Desktop): the container reaches it on
/// the host's loopback (`--network host` stands for Docker Desktop's `host.docker.internal`),
/// the secret is in the engine's environment but never on its command line, and a connection
/// without the secret gets no answer and starts nothing.
#[test]
fn a_claude_hook_in_a_podman_container_over_a_tcp_relay_with_its_secret() {
    container_session_lasts_as_long_as_the_container(true);
}

/// What a container test needs: the test lock, a private logind, a home on it and the image
/// with the static hook; `None` (said) without the static hook.
fn container_test() -> Option<(
    std::sync::MutexGuard<'static, ()>,
    lidguard_testbus::PrivateLogind,
    Home,
    Image,
)> {
    let Some(hook) = std::env::var_os(STATIC_HOOK_ENV) else {
        eprintln!("skipping the container test: {STATIC_HOOK_ENV} names no static lidguard-hook");
        return None;
    };
    // Asked for by name, so whatever is missing is a failure.
    assert!(
        rustix::process::getuid().is_root(),
        "podman with runc runs as root here"
    );
    for tool in ["/usr/bin/podman", "/usr/sbin/runc", "/usr/bin/busybox"] {
        assert!(Path::new(tool).exists(), "{tool} is missing (see .ci/run)");
    }
    let serial = lidguard_testbus::serial();
    let logind = lidguard_testbus::logind_or_skip()?;
    let home = Home::with_bus(logind.address());
    let image = Image::build(Path::new(&hook));
    Some((serial, logind, home, image))
}

fn container_session_lasts_as_long_as_the_container(tcp: bool) {
    let Some((serial, logind, home, image)) = container_test() else {
        return;
    };
    let name = format!("lidguard-relay-test-{}-{tcp}", std::process::id());
    // The prompt, then a permission request, answered by the laptop's policy for its lid.
    let permission = r#"{"session_id":"r1","cwd":"/srv/project","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"touch x"}}"#;
    let script = claude_prompt_then_wait("/bin/lidguard-hook").replace(
        "; sleep 600",
        &format!(
            "; echo '{permission}' | /bin/lidguard-hook claude-hook; echo; \
             echo permission-exit $?; sleep 600"
        ),
    );
    // The laptop's lid is closed (the daemon the relay starts reads it there).
    let (proc_root, sys_root) = crate::util::fake_roots(&home, "closed");
    let mut args = vec!["container"];
    args.extend(if tcp {
        ["--tcp", "127.0.0.1"].as_slice()
    } else {
        &[]
    });
    args.extend(["podman", "run", "--rm", "--runtime", "runc", "--network"]);
    args.push(if tcp { "host" } else { "none" });
    args.extend([
        "--ulimit",
        "nofile=1024:1024",
        "--ulimit",
        "nproc=1024:1024",
    ]);
    args.extend([
        "--name",
        &name,
        &image.0,
        "/bin/busybox",
        "sh",
        "-c",
        &script,
    ]);
    let run = home
        .cmd(&args)
        .env("LIDGUARD_PROC_ROOT", &proc_root)
        .env("LIDGUARD_SYS_ROOT", &sys_root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (prefix, session) = container_session(&home, &name);
    assert!(session["watchedPid"].is_null(), "{session}");
    assert!(session["transcriptPath"].is_null(), "{session}");
    // With the lid closed, sleep itself is held too.
    assert_eq!(logind.block_inhibited(), "sleep:idle:handle-lid-switch");
    assert_eq!(home.status()["lid"], "Closed");
    // The closed-lid decision went back into the container: denied, as the policy says.
    assert!(
        eventually(Duration::from_secs(20), || {
            home.ok(&["events", "--since", "all"])
                .contains("permission-requested")
        }),
        "no permission request came through the relay"
    );
    // The lid opens again (or the container's end would put this machine to sleep).
    crate::util::set_lid(&proc_root, "open");
    assert!(
        eventually(Duration::from_secs(20), || home.status()["lid"] == "Open"),
        "the daemon did not see the lid open"
    );
    if tcp {
        tcp_relay_keeps_its_secret(&home, run.id(), &prefix);
    }

    // The container stops: its relay's lease ends, and with it the session.
    let ended_in = kill_ends_its_session(&home, &name, &prefix);
    assert_eq!(
        logind.wait_block_inhibited(Duration::from_secs(5), str::is_empty),
        "",
        "{}",
        home.ok(&["events", "--since", "all"])
    );
    let out = run.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("hook-exit 0"), "{stdout}");
    assert!(stdout.contains("permission-exit 0"), "{stdout}");
    let decision = stdout
        .lines()
        .find(|l| l.contains("hookSpecificOutput"))
        .unwrap_or_else(|| panic!("no decision printed in the container: {stdout}"));
    let decision: serde_json::Value = serde_json::from_str(decision).unwrap();
    let decision = &decision["hookSpecificOutput"]["decision"];
    assert_eq!(decision["behavior"], "deny", "{decision}");
    assert!(
        crate::util::text(&decision["message"]).contains("lid is closed"),
        "{decision}"
    );
    eprintln!("the container's session ended {ended_in:?} after podman kill (tcp: {tcp})");
    drop(serial);
}

/// The session that came from container `name` (within 60 s), and the start of its `via`.
fn container_session(home: &Home, name: &str) -> (String, serde_json::Value) {
    let prefix = format!("container {name} (podman)");
    let mut session = None;
    assert!(
        eventually(Duration::from_secs(60), || {
            session = relayed(home, &prefix);
            session.is_some()
        }),
        "no session from container {name}: {:?}",
        home.status()
    );
    (prefix, session.unwrap())
}

/// `podman kill` of container `name`: the session that came from it (`via` starting with
/// `prefix`) ends within 10 s; returns how long it took.
fn kill_ends_its_session(home: &Home, name: &str, prefix: &str) -> Duration {
    let stop = Command::new("podman")
        .args(["kill", name])
        .output()
        .unwrap();
    assert!(stop.status.success(), "podman kill: {stop:?}");
    let started = std::time::Instant::now();
    assert!(
        eventually(Duration::from_secs(10), || relayed(home, prefix).is_none()),
        "the session of container {name} outlived it"
    );
    started.elapsed()
}

/// The engine `lidguard container` (pid `parent`) runs has the secret in its environment and
/// not on its command line; the relay's port answers nothing without the secret.
fn tcp_relay_keeps_its_secret(home: &Home, parent: u32, prefix: &str) {
    let engine = child_named(parent, "podman").expect("podman runs");
    let cmdline = std::fs::read(format!("/proc/{engine}/cmdline")).unwrap();
    let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
    let environ = std::fs::read(format!("/proc/{engine}/environ")).unwrap();
    let environ = String::from_utf8_lossy(&environ).into_owned();
    let secret = environ
        .split('\0')
        .find_map(|v| v.strip_prefix("LIDGUARD_RELAY_SECRET="))
        .expect("the secret is in the engine's environment");
    assert_eq!(secret.len(), 64, "{secret}");
    assert!(!cmdline.contains(secret), "{cmdline}");
    assert!(cmdline.contains(" -e LIDGUARD_RELAY_SECRET "), "{cmdline}");
    let port = cmdline
        .split_whitespace()
        .find_map(|w| w.strip_prefix("LIDGUARD_RELAY=tcp://127.0.0.1:"))
        .expect("the relay's address on the command line");

    // With the secret the relay reads the request (and refuses a ping); without, nothing.
    let ping = r#"{"v":1,"command":"ping"}"#;
    for (first, answers) in [("not-the-secret", false), ("", false), (secret, true)] {
        let mut guest = std::net::TcpStream::connect(format!("127.0.0.1:{port}")).unwrap();
        guest
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        guest
            .write_all(format!("{first}\n{ping}\n").as_bytes())
            .unwrap();
        let mut answer = String::new();
        let read = BufReader::new(&guest).read_line(&mut answer).unwrap();
        assert_eq!(read > 0, answers, "{first:?}: {answer:?}");
        if answers {
            assert!(
                answer.contains("a relay carries hook events only"),
                "{answer}"
            );
        }
    }
    let sessions = home.status()["sessions"].as_array().unwrap().clone();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert!(sessions[0]["via"].as_str().unwrap().starts_with(prefix));
}

/// A container another tool starts (a devcontainer): `--devcontainer` prints the config, its
/// `initializeCommand` (`--watch`) returns at once with the relay's folder ready, the
/// container created detached with the printed name, mount and environment reaches the daemon,
/// and its session ends once the container stops, as does the watch (its socket goes).
#[test]
fn a_devcontainer_is_watched_by_name_until_it_stops() {
    let Some((serial, logind, home, image)) = container_test() else {
        return;
    };
    let name = format!("lidguard-watch-test-{}", std::process::id());
    let engine = ["podman", "--runtime", "runc"];
    let mut args = vec!["container", "--devcontainer", &name];
    args.extend(engine);
    let config: serde_json::Value = serde_json::from_str(&home.ok(&args)).unwrap();
    let init: Vec<&str> = config["initializeCommand"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(init[0].ends_with("lidguard"), "{config}");
    assert_eq!(init[1..4], ["container", "--watch", &name], "{config}");
    assert_eq!(init[4..], engine, "{config}");
    assert_eq!(config["runArgs"], serde_json::json!(["--name", name]));
    let mount = config["mounts"][0].as_str().unwrap();
    let relay = config["containerEnv"]["LIDGUARD_RELAY"].as_str().unwrap();
    assert_eq!(relay, "/run/lidguard/relay.sock");

    // The tool runs initializeCommand, then creates and starts the container detached.
    let said = home.ok(&init[1..]);
    assert!(
        said.contains(&format!("watching container {name}")),
        "{said}"
    );
    let source = mount
        .strip_prefix("source=")
        .unwrap()
        .split(',')
        .next()
        .unwrap();
    let socket = Path::new(source).join("relay.sock");
    assert!(socket.exists(), "{said}");
    let again = home.ok(&init[1..]);
    assert!(again.contains("already watched"), "{again}");
    let script = claude_prompt_then_wait("/bin/lidguard-hook");
    let run = Command::new("podman")
        .args(["--runtime", "runc", "run", "-d", "--network", "none"])
        .args([
            "--ulimit",
            "nofile=1024:1024",
            "--ulimit",
            "nproc=1024:1024",
        ])
        .args(["--name", &name, "--mount", mount, "-e"])
        .arg(format!("LIDGUARD_RELAY={relay}"))
        .args([&image.0, "/bin/busybox", "sh", "-c", &script])
        .output()
        .unwrap();
    assert!(run.status.success(), "podman run -d: {run:?}");
    let (prefix, _) = container_session(&home, &name);
    assert_eq!(logind.block_inhibited(), "idle:handle-lid-switch");

    let ended_in = kill_ends_its_session(&home, &name, &prefix);
    eprintln!("the watched container's session ended {ended_in:?} after podman kill");
    assert!(
        eventually(Duration::from_secs(5), || !socket.exists()),
        "the watch goes"
    );
    let _ = Command::new("podman").args(["rm", "-f", &name]).output();
    drop(serial);
}

/// `lidguard ssh --install` puts the static hook and Claude's entries on the remote account
/// (its settings edited in place, the user's entries kept), a hook run there by that path
/// reaches this machine's daemon through `lidguard ssh`, and `--remove` gives the settings
/// file its bytes back and takes the hook away. The hook is the one Cargo built next to this
/// `lidguard` (static on Linux with glibc, as `cargo install` builds it: build.rs), or the one
/// `LIDGUARD_TEST_STATIC_HOOK` names (the musl archive's), passed with `--hook`.
#[test]
fn ssh_install_puts_the_hook_and_entries_there_and_remove_takes_them_back() {
    if let Some(why) = missing() {
        eprintln!("skipping the ssh install test: {why}");
        return;
    }
    let static_hook = std::env::var_os(STATIC_HOOK_ENV);
    let serial = lidguard_testbus::serial();
    let Some(logind) = lidguard_testbus::logind_or_skip() else {
        return;
    };
    let home = Home::with_bus(logind.address());
    let sshd = Sshd::start();
    let remote_home = PathBuf::from(format!("/home/{REMOTE_USER}"));
    let owner = |path: &Path| {
        let status = Command::new("chown")
            .args(["-R", &format!("{REMOTE_USER}:{REMOTE_USER}")])
            .arg(path)
            .status()
            .unwrap();
        assert!(status.success());
    };
    for gone in [
        ".claude",
        ".cline",
        ".codex",
        ".gemini",
        ".qwen",
        ".local/lib/lidguard",
    ] {
        let _ = std::fs::remove_dir_all(remote_home.join(gone));
    }
    let settings = remote_home.join(".claude/settings.json");
    let original = "{\n  // the user's own\n  \"model\": \"opus\",\n  \"hooks\": {\"PostToolUse\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"echo mine\"}]}]}\n}\n";
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, original).unwrap();
    std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o600)).unwrap();
    owner(&remote_home.join(".claude"));
    // Cline is there too: its hooks are a file per event, in a folder lidguard makes.
    std::fs::create_dir_all(remote_home.join(".cline")).unwrap();
    owner(&remote_home.join(".cline"));
    let cline_hooks = remote_home.join(".cline/hooks");

    let mut install = vec!["ssh", "--install"];
    let static_hook = static_hook.map(|h| h.to_string_lossy().into_owned());
    if let Some(hook) = &static_hook {
        install.extend(["--hook", hook]);
    }
    let destination = sshd.destination();
    install.extend(destination.iter().map(String::as_str));
    let said = home.ok(&install);
    let hook = remote_home.join(".local/lib/lidguard/lidguard-hook");
    assert!(
        said.contains(&format!(
            "at {} on lgremote@127.0.0.1 (over ssh)",
            hook.display()
        )),
        "{said}"
    );
    assert!(
        said.contains("Claude Code: updated lidguard's hooks"),
        "{said}"
    );
    assert!(said.contains("Cline CLI: wrote"), "{said}");
    let task_start = std::fs::read_to_string(cline_hooks.join("TaskStart")).unwrap();
    assert_eq!(
        task_start.lines().next(),
        Some(format!("#!{} cline-hook --event", hook.display()).as_str()),
        "{task_start}"
    );
    assert_eq!(std::fs::read_dir(&cline_hooks).unwrap().count(), 9);

    // The hook is there, the remote user's alone; the entries run it in exec form, and the
    // user's model and own hook are kept.
    let meta = std::fs::metadata(&hook).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o700);
    let text = std::fs::read_to_string(&settings).unwrap();
    assert!(
        text.contains("// the user's own") && text.contains("echo mine"),
        "{text}"
    );
    let without_comment: String = text.lines().filter(|l| !l.contains("//")).collect();
    let json: serde_json::Value = serde_json::from_str(&without_comment).unwrap();
    let entry = &json["hooks"]["UserPromptSubmit"][0]["hooks"][0];
    assert_eq!(entry["command"], hook.display().to_string(), "{json}");
    assert_eq!(entry["args"], serde_json::json!(["claude-hook"]), "{json}");
    assert_eq!(json["model"], "opus");
    // Installing again changes nothing.
    let again = home.ok(&install);
    assert!(again.contains("already as they should be"), "{again}");

    // The entry's program, run on the remote side of `lidguard ssh`, reaches the daemon here.
    let remote = claude_prompt_then_wait(&hook.display().to_string());
    let mut client = sshd.lidguard_ssh(&home, &remote);
    assert!(
        eventually(Duration::from_secs(20), || relayed(&home, "ssh ").is_some()),
        "no relayed session from the installed hook"
    );
    assert_eq!(logind.block_inhibited(), "idle:handle-lid-switch");
    let _ = client.kill();
    let _ = client.wait();

    let mut remove = vec!["ssh", "--remove"];
    remove.extend(destination.iter().map(String::as_str));
    let said = home.ok(&remove);
    assert!(
        said.contains("Claude Code: updated lidguard's hooks"),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), original);
    assert!(!hook.exists() && !hook.parent().unwrap().exists());
    assert!(
        !cline_hooks.exists() && remote_home.join(".cline").is_dir(),
        "Cline's hooks folder, made by lidguard, goes; Cline's own stays"
    );
    drop(serial);
}

/// The daemons' account of the relays' leases (held, ended, back) and of their own starts.
fn lease_lines(log: &str) -> String {
    let about_leases = |l: &&str| {
        ["relay lease", "a relay to the place", "daemon started"]
            .iter()
            .any(|what| l.contains(what))
    };
    log.lines()
        .filter(about_leases)
        .collect::<Vec<_>>()
        .join("\n")
}
