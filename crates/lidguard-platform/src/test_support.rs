//! What the unit tests share.

use std::path::PathBuf;
use std::process::Command;

/// The program a test needs, when this machine has it. Without it the test is skipped, except
/// under `CI`, where `.ci/run` installs `package` and its absence fails the test.
pub(crate) fn program(found: Option<PathBuf>, package: &str) -> Option<PathBuf> {
    assert!(
        found.is_some() || std::env::var_os("CI").is_none(),
        "the {package} package is missing (.ci/run installs it)"
    );
    found
}

/// Runs `command`, which must succeed (`what` names it when it does not); returns its stdout.
#[track_caller]
pub(crate) fn stdout_of(command: &mut Command, what: &str) -> String {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{what} did not start: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}\n{stdout}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}
