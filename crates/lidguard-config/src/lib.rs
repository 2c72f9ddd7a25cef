//! lidguard's entries in the agents' own config files: where they are ([`agents`]), one safe
//! edit of one file ([`file`]), the hooks ([`hooks`]) and the MCP servers ([`mcp`]), with typed
//! results that the CLI prints and the MCP server uses in-process.
//!
//! The edits themselves are pure (`lidguard_providers::install`); this crate adds the files:
//! links, locks, modes, backups, receipts.
// Unit tests write fixtures and set variables directly; the lib build (clippy --all-targets
// checks it without cfg(test)) keeps the one-writer and injected-environment rules.
#![cfg_attr(
    test,
    allow(clippy::disallowed_methods, reason = "tests write fixtures")
)]

pub mod agents;
pub mod choices;
pub mod event_files;
pub mod file;
pub mod hooks;
pub mod mcp;
pub mod receipts;
pub mod report;
pub mod settings;
pub mod wsl;

use std::path::PathBuf;

use lidguard_core::provider::Provider;
use lidguard_files::edit::EditError;
use lidguard_providers::install::InstallError;

pub use agents::{Location, managed};
pub use file::{Action, Options, Outcome};

/// The small executable the agents' hook entries run, installed next to `lidguard`.
pub const HOOK_EXECUTABLE: &str = "lidguard-hook";

/// The absolute path managed hook entries run: [`HOOK_EXECUTABLE`] next to this executable
/// when it is there, else this executable (symlinks resolved).
pub fn hook_exe() -> std::io::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let exe = exe.canonicalize().unwrap_or(exe);
    let hook = exe.with_file_name(format!("{HOOK_EXECUTABLE}{}", std::env::consts::EXE_SUFFIX));
    Ok(if hook.is_file() { hook } else { exe })
}

/// The program managed entries run, always by an absolute path: an agent started from a
/// desktop entry, the Dock or a service does not have the shell's `PATH`, and a bare name would
/// fail on every event there. The file is the `lidguard-hook` next to this executable (what
/// `cargo install` and the packages put there), else this executable. When a `PATH` directory
/// holds that same file (`~/.cargo/bin`, `/usr/bin`, Homebrew's `bin`), that directory's path is
/// written rather than the resolved one: it stays the same across upgrades through the same
/// channel, where a resolved link (Homebrew's versioned `Cellar`) would not.
pub fn hook_program() -> std::io::Result<String> {
    let program = hook_exe()?;
    let stable = program.file_name().and_then(|name| {
        lidguard_files::environment::var("PATH")
            .into_iter()
            .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .filter(|dir| dir.is_absolute())
            .map(|dir| dir.join(name))
            .find(|candidate| {
                candidate.is_file()
                    && candidate.canonicalize().ok().as_deref() == Some(program.as_path())
            })
    });
    Ok(lidguard_files::text::plain_path(
        stable.as_deref().unwrap_or(&program),
    ))
}

/// Why the command lidguard's hook entries run cannot be named: this executable cannot be
/// found (it was deleted or moved while running).
#[derive(Clone, Debug, thiserror::Error)]
#[error("cannot find the lidguard executable: {0}")]
pub struct NoHookProgram(pub String);

/// The command lidguard's hook entries run ([`hook_program`]).
pub fn hook_command() -> Result<lidguard_providers::install::HookCommand, NoHookProgram> {
    hook_program()
        .map(lidguard_providers::install::HookCommand::new)
        .map_err(|e| NoHookProgram(e.to_string()))
}

/// Why a config command could not do its work.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The pure edit refused the file (it does not parse, has another shape, a key twice, an
    /// entry of lidguard's name that is not lidguard's).
    #[error(
        "{}: {source}\nNothing was changed. Fix the file (or move it aside), then try again.",
        .file.display()
    )]
    Refused {
        /// The file.
        file: PathBuf,
        /// Why.
        #[source]
        source: InstallError,
    },
    /// lidguard's entries would make the agent stop running hooks of the user's in another
    /// file (Droid's `settings.json`).
    #[error("{why}\nNothing was changed.")]
    Silences {
        /// The file whose hooks would go quiet.
        file: PathBuf,
        /// What would go quiet and what to do.
        why: String,
    },
    /// The file could not be edited safely (read-only, read-only place, changed meanwhile).
    #[error(transparent)]
    Edit(#[from] EditError),
    /// The file is not UTF-8.
    #[error("{} is not UTF-8 text; lidguard edits only text files. Nothing was changed.", .0.display())]
    NotText(PathBuf),
    /// Any other I/O failure.
    #[error("cannot {action} {}: {source}", .path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// No home directory to find the agents' configs in.
    #[error("cannot find the home directory (HOME is unset)")]
    NoHome,
    /// A provider whose config lidguard does not manage.
    #[error("lidguard manages no config of {0}")]
    NotManaged(Provider),
}

/// Reads a file that may not exist.
pub(crate) fn read_optional(path: &std::path::Path) -> Result<Option<String>, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ConfigError::Io {
            action: "read",
            path: path.to_owned(),
            source,
        }),
    }
}
