//! `lidguard service`: the systemd user units, checked by the real `systemd-analyze verify`, and
//! the daemon started through socket activation by the real `systemd-socket-activate`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::util::{BIN, Home, assert_ok, eventually, succeeded};

fn tool(name: &str) -> Option<String> {
    let found = ["/usr/bin", "/bin"]
        .iter()
        .map(|dir| Path::new(dir).join(name))
        .find(|p| p.exists())
        .map(|p| p.display().to_string());
    let missing = found
        .is_none()
        .then(|| format!("{name} (the systemd package) is missing"));
    crate::util::runs_here(missing).then_some(found).flatten()
}

#[test]
fn service_units_are_written_verified_and_removed() {
    let Some(analyze) = tool("systemd-analyze") else {
        return;
    };
    let home = Home::new();
    let config = home.path().join("xdg-config");
    let units = config.join("systemd/user");
    let run = |args: &[&str]| {
        home.cmd(args)
            .env("XDG_CONFIG_HOME", &config)
            .output()
            .unwrap()
    };
    let dry = run(&["service", "install", "--dry-run"]);
    let shown = String::from_utf8_lossy(&dry.stdout);
    assert!(dry.status.success(), "{shown}");
    let socket = home.path().join("run/lidguard.sock");
    assert!(
        shown.contains(&format!("ListenStream={}", socket.display())),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("ExecStart={BIN} run-server")),
        "{shown}"
    );
    assert!(!units.exists(), "a dry run writes nothing");

    let out = run(&["service", "install"]);
    assert_ok(&out);
    let files = [
        units.join("lidguard.socket"),
        units.join("lidguard.service"),
    ];
    use std::os::unix::fs::PermissionsExt;
    for file in &files {
        let mode = std::fs::metadata(file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", file.display());
    }
    let service = std::fs::read_to_string(&files[1]).unwrap();
    assert!(
        service.contains(&format!(
            "Environment=LIDGUARD_HOME={}",
            home.path().display()
        )),
        "{service}"
    );
    let mut verify = Command::new(&analyze);
    verify.arg("verify").args(&files);
    succeeded(verify);
    let status = run(&["service", "status"]);
    assert!(String::from_utf8_lossy(&status.stdout).contains("lidguard.socket: installed"));

    let out = run(&["service", "remove"]);
    assert!(out.status.success());
    assert!(files.iter().all(|f| !f.exists()));

    // A unit lidguard did not write is never replaced.
    std::fs::create_dir_all(&units).unwrap();
    std::fs::write(
        units.join("lidguard.service"),
        "[Service]\nExecStart=/bin/true\n",
    )
    .unwrap();
    let out = run(&["service", "install"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not written by lidguard"));
    assert!(!units.join("lidguard.socket").exists());
}

#[test]
fn socket_activation_starts_the_daemon_on_the_first_request() {
    let Some(activate) = tool("systemd-socket-activate") else {
        return;
    };
    let home = Home::new();
    let run_dir = home.path().join("run");
    std::fs::create_dir_all(&run_dir).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&run_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let socket = run_dir.join("lidguard.sock");
    // systemd's own stand-in for a .socket unit: it listens, and on the first connection execs
    // the daemon with the socket as descriptor 3 (LISTEN_FDS/LISTEN_PID).
    let mut activator = Command::new(activate)
        .arg("-l")
        .arg(&socket)
        .arg("-E")
        .arg(format!("LIDGUARD_HOME={}", home.path().display()))
        .args([BIN, "run-server"])
        .env("LIDGUARD_HOME", home.path())
        .env("HOME", home.path().join("user-home"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(eventually(Duration::from_secs(10), || socket.exists()));

    // The first request starts the daemon in the activator's process.
    let status = home.status();
    assert_eq!(status["running"], true, "{status}");
    assert_eq!(status["daemonPid"], activator.id(), "{status}");
    home.ok(&["start", "--provider", "custom", "--session", "activated"]);
    assert_eq!(home.status()["sessions"][0]["sessionId"], "activated");
    let log = std::fs::read_to_string(home.path().join("state/lidguard.log")).unwrap();
    assert!(
        log.contains("listening on the socket systemd passed"),
        "{log}"
    );

    // Ended, the daemon leaves the socket to systemd (it starts the daemon again on the next
    // request).
    crate::util::signal(activator.id(), rustix::process::Signal::TERM);
    assert!(eventually(Duration::from_secs(10), || activator
        .try_wait()
        .unwrap()
        .is_some()));
    assert!(socket.exists(), "the socket stays systemd's");
}
