//! The WSL bridge's plain parts: reading `wsl.exe`'s distro list, the command lines that run
//! inside a distro, and the paths lidguard's entries carry there.
//!
//! Facts (Microsoft's WSL command reference and issues microsoft/WSL#4607, #10177):
//! - `wsl.exe --list --quiet` writes UTF-16LE (NUL bytes when read as bytes) unless `WSL_UTF8=1`;
//! - `wsl.exe --distribution NAME --exec PROGRAM ARGS…` runs a program without a shell, and
//!   with no `--distribution` in the default distro;
//! - `wslpath -a -u 'C:\…'` prints the Linux form (`/mnt/c/…`) of a Windows path.
//!
//! Configuration inside a distro is read and written by small `sh` scripts. Over ssh they run as
//! `sh -c SCRIPT lidguard-wsl ARGS…`, the file paths passed as positional parameters, so nothing
//! is quoted into the script. Through `wsl.exe` nothing but plain words goes on its command line:
//! `wsl.exe` reads its command line with rules of its own, which a script full of quotes and
//! newlines would not survive, so the script, its arguments and its input reach the distro's
//! `sh` on stdin as one program ([`stdin_program`]).
//!
//! The same edits reach a Linux host over the user's own `ssh` (`lidguard ssh --install`): the
//! command line ssh hands to the remote login shell is each word single-quoted, which every
//! POSIX shell (sh, bash, dash, zsh, ksh) reads back as the same words.

use std::io;

use lidguard_providers::install::InstallError;

mod event_files;

mod agents;
mod command;
mod distro;
mod edit;
mod exe;

pub use agents::{
    agent_root, hook_command, hook_file, hooks, hooks_status, mcp, mcp_file, mcp_status,
    provider_mcp, provider_mcp_status, refresh_timeouts,
};
pub use command::{
    DELETE_SCRIPT, ENV_SCRIPT, MAX_CONFIG_BYTES, MAX_OUTPUT_BYTES, PUT_EXECUTABLE_SCRIPT,
    READ_SCRIPT, REMOVE_EXECUTABLE_SCRIPT, WRITE_SCRIPT, decode_distro_list, exec_args, parse_env,
    stdin_program, wslpath_args,
};
pub use distro::{Distro, DistroEnv};
pub use edit::{Edited, How, edit, stamp};
pub use exe::{WSL_EXE_ENV, WSL_TIMEOUT, Wsl, WslExe, distros};

/// Why something inside a WSL distro could not be read or changed; the message names the
/// distro (or the agent) and what failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WslError {
    /// `wsl.exe` could not be run, or took too long.
    #[error("{distro}: {source}")]
    Unreachable {
        /// The distro, for messages ("WSL distro NAME").
        distro: String,
        /// What went wrong.
        #[source]
        source: io::Error,
    },
    /// A command inside the distro (or `wsl.exe` itself) failed.
    #[error("{distro}: {what} failed (exit {code}): {stderr}")]
    Failed {
        /// The distro, or `wsl.exe`.
        distro: String,
        /// What was run, in words.
        what: String,
        /// Its exit code (-1: none).
        code: i32,
        /// What it said.
        stderr: String,
    },
    /// What the distro holds cannot be used as it is.
    #[error("{distro}: {problem}")]
    Unusable {
        /// The distro.
        distro: String,
        /// What is wrong.
        problem: String,
    },
    /// The agent has no such config there (or is not lidguard's to manage).
    #[error("{agent}: {problem}")]
    Agent {
        /// The agent's name.
        agent: String,
        /// What is missing.
        problem: String,
    },
    /// An agent's config file there could not be read or edited as planned.
    #[error("{distro} {file}: {source}{}", if *.changed_nothing { "; nothing was changed" } else { "" })]
    Config {
        /// The distro.
        distro: String,
        /// The file.
        file: String,
        /// What is wrong with it.
        #[source]
        source: InstallError,
        /// Whether an edit was refused before it changed anything.
        changed_nothing: bool,
    },
    /// What lidguard changed could not be recorded (so a remove could not give back its bytes).
    #[error("cannot record what lidguard changed in {file}: {source}")]
    Receipt {
        /// The file changed.
        file: String,
        /// Why the receipt was not written.
        #[source]
        source: io::Error,
    },
}

#[cfg(test)]
mod tests;
