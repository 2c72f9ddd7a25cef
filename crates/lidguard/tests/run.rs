//! `lidguard run -- CMD`: the command's exit code and output pass through untouched, signals sent
//! to lidguard reach it, and it is a session while it runs.

use std::path::PathBuf;
use std::process::{Child, Stdio};
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
    // This home has no power backend: said at once, before the command's own output.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(
            "lidguard: warning: the machine is NOT kept awake: the system D-Bus is not reachable"
        ),
        "{stderr}"
    );
    assert!(
        stderr.ends_with("(the command runs all the same)\nerr"),
        "{stderr}"
    );

    let missing = home.run(&["run", "--", "/nonexistent/command"]);
    assert_eq!(missing.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot run /nonexistent/command"));
    let refused = home.run(&["run", "--", "/etc/passwd"]);
    assert_eq!(refused.status.code(), Some(126));
}

#[test]
fn signals_reach_the_command_and_the_session_ends_with_it() {
    let home = Home::new();
    use rustix::process::Signal;
    for (sig, code) in [
        (Signal::TERM, 7),
        (Signal::HUP, 8),
        (Signal::INT, 9),
        (Signal::USR1, 10),
        (Signal::USR2, 11),
        (Signal::ALARM, 12),
    ] {
        let ready = home.path().join(format!("ready-{code}"));
        let script = format!(
            "trap 'exit 7' TERM; trap 'exit 8' HUP; trap 'exit 9' INT; trap 'exit 10' USR1; \
             trap 'exit 11' USR2; trap 'exit 12' ALRM; : > '{}'; sleep 30 & wait; exit 1",
            ready.display()
        );
        let mut run = home
            .cmd(&["run", "--reason", "long job", "--", "sh", "-c", &script])
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        assert!(
            eventually(Duration::from_secs(10), || ready.exists()
                && home
                    .session_ids()
                    .iter()
                    .any(|id| id.starts_with("run:long job:"))),
            "the command is a session while it runs: {:?}",
            home.session_ids()
        );
        // Not in a terminal's foreground: even SIGINT is passed on.
        signal(run.id(), sig);
        let status = run.wait().unwrap();
        assert_eq!(status.code(), Some(code), "{sig:?}");
        assert!(
            eventually(Duration::from_secs(10), || home.session_ids().is_empty()),
            "the session ended with the command: {:?}",
            home.session_ids()
        );
    }
}

/// The session exists, and its start was answered, before the command runs: the command itself
/// finds it in `status`, watching lidguard's own process and with no inactivity timeout.
#[test]
fn the_session_is_taken_before_the_command_starts() {
    let home = Home::new();
    let out = home
        .cmd(&[
            "run",
            "--reason",
            "job",
            "--",
            crate::util::BIN,
            "status",
            "--json",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let sessions = status["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{status}");
    let session = &sessions[0];
    let run_pid = session["watchedPid"].as_u64().unwrap();
    assert_eq!(session["sessionId"], format!("run:job:{run_pid}"));
    assert_eq!(session["untilProcessExits"], run_pid);
    assert_eq!(session["timeoutAt"], serde_json::Value::Null);
}

/// A command that leaves work running in the background (`cmd &`, a shell that exits early) is
/// covered until its last process ends; `--command-only` ends with the command.
/// `lidguard run` of a shell script that exits with `code` and leaves work in the background
/// until the returned file exists; also returns the script.
fn leaving_background_work(home: &Home, code: u8, stderr: Stdio) -> (Child, PathBuf, String) {
    let release = home.path().join("release");
    let script = format!(
        "(while [ ! -e '{}' ]; do sleep 0.05; done) >/dev/null 2>&1 & exit {code}",
        release.display()
    );
    let run = home
        .cmd(&["run", "--reason", "bg", "--", "sh", "-c", &script])
        .stdin(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap();
    (run, release, script)
}

#[test]
fn background_work_the_command_leaves_is_waited_for() {
    let home = Home::new();
    let (mut run, release, script) = leaving_background_work(&home, 4, Stdio::piped());
    assert!(
        eventually(Duration::from_secs(10), || home
            .session_ids()
            .iter()
            .any(|id| id.starts_with("run:bg:"))),
        "{:?}",
        home.session_ids()
    );
    // The shell exited at once; lidguard waits for what it left running.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        run.try_wait().unwrap().is_none(),
        "run returned with work left"
    );
    assert_eq!(home.session_ids().len(), 1);
    std::fs::write(&release, "").unwrap();
    let status = run.wait().unwrap();
    assert_eq!(status.code(), Some(4), "the command's own exit code");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut run.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(
        stderr.contains("sh exited (4); its session lasts until the processes it left running in the background exit"),
        "{stderr}"
    );
    assert!(eventually(Duration::from_secs(10), || home
        .session_ids()
        .is_empty()));

    // --command-only: the session ends with the shell, the background loop still runs.
    std::fs::remove_file(&release).unwrap();
    let out = home
        .cmd(&["run", "--command-only", "--", "sh", "-c", &script])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(out.code(), Some(4));
    assert!(eventually(Duration::from_secs(10), || home
        .session_ids()
        .is_empty()));
    std::fs::write(&release, "").unwrap();
}

/// A signal while lidguard waits for background work stops the wait (the work goes on).
#[test]
fn a_signal_stops_waiting_for_background_work() {
    let home = Home::new();
    let (mut run, release, _) = leaving_background_work(&home, 0, Stdio::null());
    assert!(eventually(Duration::from_secs(10), || !home
        .session_ids()
        .is_empty()));
    std::thread::sleep(Duration::from_millis(500));
    signal(run.id(), rustix::process::Signal::TERM);
    assert_eq!(run.wait().unwrap().code(), Some(0));
    assert!(eventually(Duration::from_secs(10), || home
        .session_ids()
        .is_empty()));
    std::fs::write(&release, "").unwrap();
}

/// lidguard's own flags come before `--`; a mistyped one is an error, not a program to run.
#[test]
fn a_mistyped_flag_is_an_error() {
    let home = Home::new();
    let out = home.run(&["run", "--resaon", "x", "--", "true"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unexpected argument '--resaon'"),
        "{stderr}"
    );
    assert!(home.daemon_pid().is_none(), "nothing was started");
}
