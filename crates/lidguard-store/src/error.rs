//! Errors of the store, each naming the database and saying what to do.

use std::path::{Path, PathBuf};

use rusqlite::ErrorCode;

/// What to do when the database file cannot be read or written.
const CHECK_ACCESS: &str =
    "check that the file and its directory are writable and the disk has free space";

/// An error from the lidguard database.
///
/// Every variant names the database file (`:memory:` for an in-memory store).
/// The message already includes the underlying cause in parentheses; the cause is
/// also available through [`std::error::Error::source`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The directory that should contain the database is missing or is not a directory.
    #[error(
        "cannot open the lidguard database {}: its directory {} is not usable ({source}); \
         create that directory or choose another database location",
        .path.display(), .dir.display()
    )]
    Directory {
        /// The database file.
        path: PathBuf,
        /// Its parent directory, the one that is missing or not a directory.
        dir: PathBuf,
        /// Why the directory is not usable.
        #[source]
        source: std::io::Error,
    },

    /// The file is not an SQLite database, or its content is damaged.
    #[error(
        "the lidguard database {} is not a valid SQLite database ({reason}); \
         move it aside and lidguard will create a new one",
        .path.display()
    )]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// What is wrong (the SQLite error, a truncated file, a failed integrity check).
        reason: String,
    },

    /// Another process held a lock on the database for longer than the busy timeout.
    #[error(
        "the lidguard database {} is locked by another process ({source}); \
         another lidguard daemon may be running: stop it, or try again",
        .path.display()
    )]
    Locked {
        /// The database file.
        path: PathBuf,
        /// The SQLite error (`SQLITE_BUSY` or `SQLITE_LOCKED`).
        #[source]
        source: rusqlite::Error,
    },

    /// The file could not be opened, read or written (permissions, read-only or full disk, I/O).
    #[error("cannot read or write the lidguard database {} ({source}); {}", .path.display(), CHECK_ACCESS)]
    Access {
        /// The database file.
        path: PathBuf,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },

    /// The file could not be opened or read before SQLite got to it.
    #[error("cannot read or write the lidguard database {} ({source}); {}", .path.display(), CHECK_ACCESS)]
    File {
        /// The database file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },

    /// The database has a schema version newer than this binary knows. The file is left
    /// exactly as it was.
    #[error(
        "the lidguard database {} was created by a newer lidguard: it has schema version {found}, \
         and this lidguard reads versions up to {supported}. It was left untouched; upgrade \
         lidguard to a version that knows schema {found}, or move the database aside",
        .path.display()
    )]
    TooNew {
        /// The database file.
        path: PathBuf,
        /// The schema version found in the database.
        found: u32,
        /// The newest schema version this binary knows.
        supported: u32,
    },

    /// A schema migration step failed.
    #[error(
        "could not upgrade the lidguard database {} to schema version {version} ({source}); \
         move it aside and lidguard will create a new one",
        .path.display()
    )]
    Migration {
        /// The database file.
        path: PathBuf,
        /// The schema version the failed step would have produced.
        version: u32,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },

    /// Any other database failure.
    #[error("the lidguard database {} failed to {action} ({source})", .path.display())]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// What the store was doing, e.g. "load sessions".
        action: &'static str,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },
}

impl StoreError {
    /// The database file the error is about (`:memory:` for an in-memory store).
    pub fn path(&self) -> &Path {
        match self {
            Self::Directory { path, .. }
            | Self::Corrupt { path, .. }
            | Self::Locked { path, .. }
            | Self::Access { path, .. }
            | Self::File { path, .. }
            | Self::TooNew { path, .. }
            | Self::Migration { path, .. }
            | Self::Sqlite { path, .. } => path,
        }
    }

    /// An I/O error on the database file itself.
    pub(crate) fn classify_io(path: &Path, source: std::io::Error) -> Self {
        Self::File {
            path: path.to_path_buf(),
            source,
        }
    }

    /// Sorts an SQLite error into the variant that tells the user what to do; errors
    /// without a specific remedy become [`StoreError::Sqlite`] with `action`.
    pub(crate) fn classify(path: &Path, action: &'static str, source: rusqlite::Error) -> Self {
        let path = path.to_path_buf();
        match source.sqlite_error_code() {
            Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => Self::Corrupt {
                path,
                reason: source.to_string(),
            },
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
                Self::Locked { path, source }
            }
            Some(
                ErrorCode::CannotOpen
                | ErrorCode::ReadOnly
                | ErrorCode::PermissionDenied
                | ErrorCode::SystemIoFailure
                | ErrorCode::DiskFull,
            ) => Self::Access { path, source },
            _ => Self::Sqlite {
                path,
                action,
                source,
            },
        }
    }
}
