//! The far side is less trusted: a relay (here `lidguard container` with a stand-in engine that
//! only waits, since the relay is what is tested; the real Podman runs in `relay.rs`) carries
//! what one hook sends, lets a flood delay nobody's hooks here beyond their budget, and a TCP
//! relay answers nothing before its secret, whatever other connections do.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use lidguard_core::event::{AgentEvent, EventKind};
use lidguard_core::provider::Provider;
use lidguard_ipc::protocol::{PROTOCOL_VERSION, Request, RequestEnvelope};

use crate::util::{Home, eventually, pipe, write_executable};

/// A `lidguard container` whose engine is a stand-in: it writes its arguments and the secret it
/// was given to `dir`, then waits; the relay lives as long as it does.
pub(crate) struct Container {
    child: Child,
    dir: PathBuf,
}

impl Container {
    pub(crate) fn start(home: &Home, tcp: bool) -> Container {
        let dir = home.path().join("engine");
        std::fs::create_dir_all(&dir).unwrap();
        let engine = dir.join("engine");
        write_executable(
            &engine,
            format!(
                "#!/bin/sh\nprintf '%s\\n' \"$@\" > {d}/args.tmp\nprintf '%s' \
                 \"$LIDGUARD_RELAY_SECRET\" > {d}/secret\nmv {d}/args.tmp {d}/args\nexec sleep 600\n",
                d = dir.display()
            )
            .as_bytes(),
        );
        let engine = engine.to_str().unwrap().to_owned();
        let mut args = vec!["container"];
        if tcp {
            args.extend(["--tcp", "127.0.0.1"]);
        }
        args.extend([engine.as_str(), "run", "image"]);
        let child = home
            .cmd(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let container = Container { child, dir };
        assert!(
            eventually(Duration::from_secs(20), || container
                .dir
                .join("args")
                .exists()),
            "the stand-in engine never ran"
        );
        container
    }

    fn args(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.join("args"))
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// The relay's socket (`-v SOCKET:/run/lidguard-relay.sock`).
    pub(crate) fn socket(&self) -> PathBuf {
        let mount = self
            .args()
            .into_iter()
            .find(|a| a.ends_with(":/run/lidguard-relay.sock"))
            .expect("the relay mounted");
        PathBuf::from(mount.trim_end_matches(":/run/lidguard-relay.sock"))
    }

    /// The TCP relay's port and secret.
    fn tcp(&self) -> (u16, String) {
        let port = self
            .args()
            .into_iter()
            .find_map(|a| {
                a.strip_prefix("LIDGUARD_RELAY=tcp://127.0.0.1:")
                    .map(|p| p.parse().unwrap())
            })
            .expect("the relay's address");
        let secret = std::fs::read_to_string(self.dir.join("secret")).unwrap();
        (port, secret)
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A Claude `UserPromptSubmit` event for session `id`, as a hook sends it.
fn prompt_event(id: &str) -> AgentEvent {
    let mut event = AgentEvent::new(
        Provider::Claude,
        id,
        "UserPromptSubmit",
        EventKind::PromptSubmitted,
    );
    event.prompt = Some("go".into());
    event
}

/// One request line carrying `events`, as a hook writes it.
fn hook_request(events: Vec<AgentEvent>) -> String {
    serde_json::to_string(&RequestEnvelope {
        v: PROTOCOL_VERSION,
        request: Request::Hook {
            events,
            queued: false,
            payload_follows: None,
        },
    })
    .unwrap()
}

/// Sends `line` to the relay at `socket`; the first answer line.
fn relayed(socket: &Path, line: &str) -> String {
    let mut guest = std::os::unix::net::UnixStream::connect(socket).unwrap();
    guest
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    guest.write_all(format!("{line}\n").as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = BufReader::new(&guest).read_line(&mut answer);
    answer
}

/// A request of many events is refused; a place flooding its relay with requests of the most
/// events a hook sends keeps only so many sessions here, and meanwhile hooks here answer within
/// their 2 s budget (p99 of 40) and `status` answers.
#[test]
fn a_relay_carries_one_hooks_events_and_a_flood_delays_no_hook_here() {
    let home = Home::new();
    let container = Container::start(&home, false);
    let socket = container.socket();

    let many: Vec<_> = (0..100).map(|n| prompt_event(&format!("m{n}"))).collect();
    let answer = relayed(&socket, &hook_request(many));
    assert!(
        answer.contains("100 events in one request") && answer.contains("at most 8"),
        "{answer}"
    );

    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flooders: Vec<_> = (0..12)
        .map(|t| {
            let (socket, stop) = (socket.clone(), std::sync::Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut sent = 0_u64;
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    let events = (0..8)
                        .map(|e| prompt_event(&format!("f{t}-{sent}-{e}")))
                        .collect();
                    let _ = relayed(&socket, &hook_request(events));
                    sent += 1;
                }
                sent
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let mut took = Vec::new();
    for n in 0..40 {
        let payload = format!(
            r#"{{"hook_event_name":"UserPromptSubmit","session_id":"here{n}","cwd":"/tmp","prompt":"p"}}"#
        );
        let started = Instant::now();
        let out = pipe(home.hook_cmd(&["claude-hook"]), payload.as_bytes());
        took.push(started.elapsed());
        assert!(out.status.success() && out.stdout.is_empty(), "{out:?}");
    }
    let started = Instant::now();
    let status = home.status();
    let status_took = started.elapsed();
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let sent: u64 = flooders.into_iter().map(|f| f.join().unwrap()).sum();
    took.sort();
    let p99 = took[took.len() * 99 / 100 - 1];
    eprintln!(
        "under a flood of {sent} relayed requests of 8 events: local hooks p50 {:?}, p99 {p99:?}; \
         status {status_took:?}",
        took[took.len() / 2]
    );
    assert!(p99 < Duration::from_secs(2), "p99 {p99:?}: {took:?}");
    let sessions = status["sessions"].as_array().unwrap();
    let relayed_here = sessions.iter().filter(|s| s["via"].is_string()).count();
    assert!(relayed_here <= 32, "{relayed_here} sessions from one place");
    for n in 0..40 {
        assert!(
            home.session(&format!("here{n}")).is_some(),
            "the local session here{n} was heard"
        );
    }
}

/// With 40 slow connections that never show the secret (a byte every 2 s), a guest with the
/// secret is answered; a guest without it reads nothing, and a connection that dribbles its
/// line is closed when the whole line's time is up.
#[test]
fn a_tcp_relay_answers_nothing_before_its_secret_and_slow_strangers_crowd_out_nobody() {
    let home = Home::new();
    let container = Container::start(&home, true);
    let (port, secret) = container.tcp();
    let address = format!("127.0.0.1:{port}");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let strangers: Vec<_> = (0..40)
        .map(|_| {
            let (address, stop) = (address.clone(), std::sync::Arc::clone(&stop));
            std::thread::spawn(move || {
                let Ok(mut conn) = std::net::TcpStream::connect(&address) else {
                    return Duration::ZERO;
                };
                let opened = Instant::now();
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    if conn.write_all(b"x").is_err() {
                        break;
                    }
                    std::thread::sleep(Duration::from_secs(2));
                }
                // How long the relay kept it open.
                conn.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
                let mut rest = Vec::new();
                let _ = conn.read_to_end(&mut rest);
                assert!(rest.is_empty(), "a stranger was told {rest:?}");
                opened.elapsed()
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let ping = r#"{"v":1,"command":"ping"}"#;
    for (first, answers) in [(secret.as_str(), true), ("not-the-secret", false)] {
        let mut guest = std::net::TcpStream::connect(&address).unwrap();
        guest
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        guest
            .write_all(format!("{first}\n{ping}\n").as_bytes())
            .unwrap();
        let mut answer = String::new();
        let _ = BufReader::new(&guest).read_line(&mut answer);
        assert_eq!(!answer.is_empty(), answers, "{first:?}: {answer:?}");
        if answers {
            assert!(
                answer.contains("a relay carries hook events only"),
                "{answer}"
            );
        }
    }
    // The strangers' connections end at the secret line's deadline (5 s), not after it.
    std::thread::sleep(Duration::from_secs(8));
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for stranger in strangers {
        let kept = stranger.join().unwrap();
        assert!(kept < Duration::from_secs(12), "kept open {kept:?}");
    }
}

/// Links planted where lidguard keeps its own files are not followed: a link at the daemon's
/// lock file makes the daemon refuse to start instead of writing through it; a link at the
/// backups folder makes an install fail instead of copying the agent's config (keys and all)
/// wherever it points.
#[test]
fn links_planted_at_the_lock_and_the_backups_folder_are_not_followed() {
    let home = Home::new();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "untouched\n").unwrap();
    let run = home.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::os::unix::fs::symlink(&victim, run.join("lidguard.lock")).unwrap();
    let out = home.run(&["run-server"]);
    assert!(!out.status.success(), "{out:?}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched\n");
    std::fs::remove_file(run.join("lidguard.lock")).unwrap();

    let user = home.path().join("user-home/.claude");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(
        user.join("settings.json"),
        "{\"apiKeyHelper\": \"secret\"}\n",
    )
    .unwrap();
    let state = home.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let elsewhere = outside.path().join("copies");
    std::fs::create_dir(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, state.join("backups")).unwrap();
    let out = home.run(&["hook-install", "--provider", "claude"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && said.contains("is a link"),
        "{said}"
    );
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    assert_eq!(
        std::fs::read_to_string(user.join("settings.json")).unwrap(),
        "{\"apiKeyHelper\": \"secret\"}\n",
        "nothing was changed without its backup"
    );
}
