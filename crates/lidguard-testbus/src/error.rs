//! Why a private bus, logind or stand-in could not be had.

/// Why a private bus, logind or stand-in could not be had.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BusError {
    /// It cannot run here at all (not Linux, not root, a program missing): the tests that
    /// need it are skipped outside CI.
    #[error("{0}")]
    Unavailable(String),
    /// A file, a directory or a process could not be made.
    #[error("{what}: {source}")]
    Io {
        /// What was tried (`cannot start dbus-daemon`).
        what: String,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// It ran and failed, did not come up in time, or answered what cannot be read.
    #[error("{0}")]
    Failed(String),
}

/// What failed, said in words: a program's answer that cannot be read, a thread that ended.
impl From<String> for BusError {
    fn from(said: String) -> BusError {
        BusError::Failed(said)
    }
}

impl BusError {
    /// `what` failed for `source`.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> BusError {
        BusError::Io {
            what: what.into(),
            source,
        }
    }
}
