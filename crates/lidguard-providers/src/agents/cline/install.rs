//! Cline CLI: one hook file per event in `$CLINE_DIR/hooks` (else `~/.cline/hooks`), each
//! wholly lidguard's. Cline runs a hook file with the program its first line names
//! (`#!<program> <args>`, split at spaces) and the file's path as the last argument, whatever
//! the platform and the file's mode (3.0.65: `@cline/core`'s hook-file runner), so lidguard's
//! file names the hook executable there and no shell runs: `#!<hook> cline-hook --event`, the
//! path then being the `--event` value. A program path with spaces cannot be split that way;
//! on Linux and macOS the file is then a `sh` script that `exec`s the hook.

use crate::agent::EventFiles;
use crate::install::{HookCommand, HookShell, InstallError};

/// The subcommand that marks lidguard's files.
pub const SUBCOMMAND: &str = "cline-hook";

/// The events lidguard writes a file for: those Cline 3.0.65 fires and the dialect acts on
/// (`PreCompact` is a file name Cline knows but fires no hook for).
pub const EVENTS: &[&str] = &[
    "TaskStart",
    "TaskResume",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "TaskComplete",
    "TaskError",
    "TaskCancel",
    "SessionShutdown",
];

/// lidguard's files: named after the event, or, when the user has a file of that name,
/// `<Event>.sh` or `<Event>.bash` next to it (Cline runs them all; lidguard's first line names
/// the program, so the extension decides nothing).
pub(crate) static FILES: EventFiles = EventFiles {
    events: EVENTS,
    runs_for,
    names: &["{}", "{}.sh", "{}.bash"],
    // Another `PreToolUse` file can stop the run (`cancel`) where lidguard refuses a question.
    deciding: &["PreToolUse"],
    text,
};

/// The extensions with which Cline runs a file for an event: the file's name without its
/// extension, trimmed and in any case, is the event (3.0.65 `@cline/core`, its hook-file
/// listing: `""`, `.sh`, `.bash`, `.zsh`, `.js`, `.mjs`, `.cjs`, `.ts`, `.mts`, `.cts`, `.py`,
/// `.ps1`).
const EXTENSIONS: &[&str] = &[
    "", ".sh", ".bash", ".zsh", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".py", ".ps1",
];

/// Whether Cline runs a file called `name` for `event`.
fn runs_for(name: &str, event: &str) -> bool {
    // Node's `extname`: from the last dot, unless the name starts with it.
    let (stem, ext) = match name.rfind('.') {
        Some(i) if i > 0 => name.split_at(i),
        _ => (name, ""),
    };
    EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
        && stem.trim().eq_ignore_ascii_case(event)
}

/// The comment that says whose file it is.
const NOTE: &str = "# lidguard: keeps this machine awake while Cline works \
                    (`lidguard hook-remove --provider cline` takes it away)";

/// lidguard's hook file (the same for every event: the file's name is the event).
fn text(cmd: &HookCommand, _event: &str) -> Result<String, InstallError> {
    let program = &cmd.program;
    if !program.is_empty() && !program.contains(char::is_whitespace) {
        return Ok(format!("#!{program} {SUBCOMMAND} --event\n{NOTE}\n"));
    }
    // A `sh` script needs a POSIX host: on Windows (PowerShell entries) there is none; a WSL
    // distro or an ssh host, reached from any platform, has one.
    if cmd.shell != HookShell::Posix {
        return Err(InstallError::Shape {
            path: program.clone(),
            message: "Cline reads a hook's program from the file's first line, split at spaces: \
                      install lidguard where its path has no spaces"
                .to_owned(),
        });
    }
    Ok(format!(
        "#!/bin/sh\n{NOTE}\nexec {} --event \"$0\"\n",
        cmd.render(SUBCOMMAND)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cline_runs_a_file_by_its_name_without_the_extension_in_any_case() {
        assert!(runs_for("TaskStart", "TaskStart"));
        assert!(runs_for("taskstart.SH", "TaskStart"));
        assert!(runs_for("TaskStart.py", "TaskStart"));
        assert!(!runs_for("TaskStart.txt", "TaskStart"));
        assert!(!runs_for("TaskStart.sh.bak", "TaskStart"));
        assert!(!runs_for("TaskStarted", "TaskStart"));
        assert!(!runs_for(".TaskStart", "TaskStart"));
    }
}
