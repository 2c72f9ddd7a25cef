//! macOS: a notice is a user notification posted by AppleScript's `display notification`,
//! run by `/usr/bin/osascript` (Notification Center lists it under Script Editor). The
//! UserNotifications framework serves app bundles only, and lidguard is a bare executable
//! (installed by cargo, npm or the archive).
//!
//! The notice's text goes to the script as arguments, never into its source
//! ([`crate::osascript`]), so nothing in a project's or an agent's name can change what runs.

use std::process::{Command, Stdio};
use std::time::Duration;

use wait_timeout::ChildExt;

use super::{Notice, NotifyError};

/// The script's lines: the title is `item 2 of argv`, the body `item 3` (see
/// [`crate::osascript`]). An urgent notice also plays the alert sound.
fn script(urgent: bool) -> [&'static str; 3] {
    [
        "on run argv",
        if urgent {
            "display notification (item 3 of argv) with title (item 2 of argv) sound name \"Sosumi\""
        } else {
            "display notification (item 3 of argv) with title (item 2 of argv)"
        },
        "end run",
    ]
}

/// osascript's arguments for `notice`.
pub(super) fn arguments(notice: &Notice) -> Vec<String> {
    crate::osascript::arguments(
        &script(notice.urgent),
        [notice.summary.clone(), notice.body.clone()],
    )
}

/// Runs `program` (osascript) for `notice`, waiting at most `limit`.
pub(super) fn show(program: &str, notice: &Notice, limit: Duration) -> Result<(), NotifyError> {
    let fail = |e: std::io::Error| NotifyError::Service(format!("{program}: {e}"));
    let mut child = Command::new(program)
        .args(arguments(notice))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| NotifyError::Service(format!("cannot run {program}: {e}")))?;
    let Some(status) = child.wait_timeout(limit).map_err(fail)? else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(NotifyError::Service(format!(
            "{program} did not finish in {:.1} s",
            limit.as_secs_f32()
        )));
    };
    if status.success() {
        return Ok(());
    }
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        use std::io::Read;
        let _ = pipe.read_to_string(&mut stderr);
    }
    Err(NotifyError::Service(format!(
        "{program} failed ({status}): {}",
        stderr.trim()
    )))
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    /// A `#!/bin/sh` stand-in for osascript, written by a child process: a write descriptor of
    /// this process could be inherited by a program another test thread starts, and exec
    /// would then fail with ETXTBSY.
    fn stand_in(dir: &Path, body: &str) -> PathBuf {
        let file = dir.join("osascript");
        let mut writer = Command::new("sh")
            .args(["-c", "cat > \"$1\" && chmod 700 \"$1\"", "sh"])
            .arg(&file)
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut writer.stdin.take().unwrap(), body.as_bytes()).unwrap();
        drop(writer.stdin.take());
        assert!(writer.wait().unwrap().success());
        file
    }

    fn notice(summary: &str, urgent: bool) -> Notice {
        Notice {
            summary: summary.to_owned(),
            body: "-e it waits \"for you\"".to_owned(),
            urgent,
        }
    }

    #[test]
    fn the_text_is_an_argument_after_a_fixed_word_never_part_of_the_script() {
        let args = arguments(&notice("Claude Code in \"x\" & y: needs you", false));
        assert_eq!(
            args,
            [
                "-e",
                "on run argv",
                "-e",
                "display notification (item 3 of argv) with title (item 2 of argv)",
                "-e",
                "end run",
                "lidguard",
                "Claude Code in \"x\" & y: needs you",
                "-e it waits \"for you\"",
            ]
        );
        let urgent = arguments(&notice("s", true));
        assert!(urgent[3].ends_with(" sound name \"Sosumi\""), "{urgent:?}");
    }

    /// The process part, with a stand-in for osascript that writes down its arguments.
    #[test]
    fn runs_the_program_with_those_arguments_and_reports_its_failure() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("args");
        let program = stand_in(
            dir.path(),
            &format!(
                "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\n[ \"$8\" = fail ] && {{ echo 'execution error' >&2; exit 1; }}\nexit 0\n",
                record.display()
            ),
        );
        let program = program.to_str().unwrap();

        show(
            program,
            &notice("Codex in p: needs you", false),
            Duration::from_secs(10),
        )
        .unwrap();
        let written = std::fs::read_to_string(&record).unwrap();
        assert_eq!(
            written.lines().skip(6).collect::<Vec<_>>(),
            [
                "lidguard",
                "Codex in p: needs you",
                "-e it waits \"for you\""
            ]
        );

        let err = show(program, &notice("fail", false), Duration::from_secs(10)).unwrap_err();
        assert!(err.to_string().contains("execution error"), "{err}");

        let missing = show(
            "/nonexistent/osascript",
            &notice("x", false),
            Duration::from_secs(1),
        );
        assert!(missing.unwrap_err().to_string().contains("cannot run"));
    }

    #[test]
    fn a_program_that_hangs_is_stopped_at_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let program = stand_in(dir.path(), "#!/bin/sh\nexec sleep 30\n");
        let started = std::time::Instant::now();
        let err = show(
            program.to_str().unwrap(),
            &notice("x", false),
            Duration::from_millis(300),
        )
        .unwrap_err();
        assert!(err.to_string().contains("did not finish in 0.3 s"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
