//! `lidguard run -- CMD`: the command's exit code and output pass through untouched, signals sent
//! to lidguard reach it, and it is a session while it runs.

use std::process::Stdio;
use std::time::Duration;

use crate::util::{Home, eventually, signal};

#[test]
fn exit_code_and_output_pass_through() {
    let home = Home::new();
    let out = home
        .cmd(&[
            "run",
            "--",
            "sh",
            "-c",
            "printf out; printf err >&2; exit 3",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(out.stdout, b"out");
    assert_eq!(out.stderr, b"err");

    let missing = home.run(&["run", "--", "/nonexistent/command"]);
    assert_eq!(missing.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot run /nonexistent/command"));
    let refused = home.run(&["run", "--", "/etc/passwd"]);
    assert_eq!(refused.status.code(), Some(126));
}

fn session_ids(home: &Home) -> Vec<String> {
    home.status()["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn signals_reach_the_command_and_the_session_ends_with_it() {
    let home = Home::new();
    for (sig, code) in [
        (rustix::process::Signal::TERM, 7),
        (rustix::process::Signal::HUP, 8),
        (rustix::process::Signal::INT, 9),
    ] {
        let ready = home.path().join(format!("ready-{code}"));
        let script = format!(
            "trap 'exit 7' TERM; trap 'exit 8' HUP; trap 'exit 9' INT; : > '{}'; \
             sleep 30 & wait; exit 1",
            ready.display()
        );
        let mut run = home
            .cmd(&["run", "--reason", "long job", "--", "sh", "-c", &script])
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        assert!(
            eventually(Duration::from_secs(10), || ready.exists()
                && session_ids(&home)
                    .iter()
                    .any(|id| id.starts_with("run:long job:"))),
            "the command is a session while it runs: {:?}",
            session_ids(&home)
        );
        // Not in a terminal's foreground: even SIGINT is passed on.
        signal(run.id(), sig);
        let status = run.wait().unwrap();
        assert_eq!(status.code(), Some(code), "{sig:?}");
        assert!(
            eventually(Duration::from_secs(10), || session_ids(&home).is_empty()),
            "the session ended with the command: {:?}",
            session_ids(&home)
        );
    }
}
