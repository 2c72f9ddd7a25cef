//! Why an OS power policy lidguard changes for a while — the Windows lid-close action, macOS's
//! `SleepDisabled` and `hibernatemode` — or the backup of the user's value could not be read,
//! changed or given back.

use std::path::PathBuf;

/// A policy or its backup failed; the message says which and, where it helps, what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// A program that reads or changes the policy could not be started (`shown`: its command
    /// line).
    #[error("cannot run {shown}: {source}")]
    Spawn {
        /// The command line.
        shown: String,
        /// Why it did not start.
        #[source]
        source: std::io::Error,
    },
    /// The program ran and failed.
    #[error("{shown} failed ({status}): {said}")]
    Command {
        /// The command line.
        shown: String,
        /// How it ended.
        status: String,
        /// What it printed: its stderr, and its stdout where some programs print their errors
        /// (`pmset sleepnow` does: "Unable to sleep system: error 0x…").
        said: String,
    },
    /// Changing it needs root, and `sudo -n` was refused.
    #[error(
        "{0}; `sudo lidguard macos-permission install` lets lidguard run it without a password"
    )]
    NeedsRoot(Box<PolicyError>),
    /// An OS call failed with a status code.
    #[error("{call} failed (error {code})")]
    Call {
        /// The function called.
        call: &'static str,
        /// Its status.
        code: u32,
    },
    /// The OS (or its stand-in) has no such value: `what` says which.
    #[error("{0}")]
    Missing(String),
    /// A text that should name a power scheme does not.
    #[error("not a GUID: {0}")]
    NotGuid(String),
    /// The file standing in for the policy (tests, or `LIDGUARD_SYS_ROOT`) is unusable.
    #[error("{}: {reason}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// lidguard's durable store of backups failed.
    #[error("{0}")]
    Backups(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The saved value cannot be read back; it stays saved, since deleting it would lose the
    /// user's value for good.
    #[error("the saved {kind} value is unreadable ({reason}): {json}")]
    SavedUnreadable {
        /// The backup's kind.
        kind: String,
        /// Why it cannot be read.
        reason: String,
        /// What was saved.
        json: String,
    },
    /// A change failed (`what`: the change, in words) and was undone — or, with `undo`,
    /// putting the saved value back failed too.
    #[error(
        "cannot {what}: {cause}{}",
        undo.as_ref().map(|u| format!("; putting the saved value back failed too: {u}")).unwrap_or_default()
    )]
    Change {
        /// What was being changed.
        what: &'static str,
        /// Why it failed.
        cause: Box<PolicyError>,
        /// Why undoing it failed, if it did.
        undo: Option<Box<PolicyError>>,
    },
}

impl PolicyError {
    /// A stand-in file's problem.
    pub(crate) fn file(path: &std::path::Path, reason: impl std::fmt::Display) -> PolicyError {
        PolicyError::File {
            path: path.to_path_buf(),
            reason: reason.to_string(),
        }
    }
}
