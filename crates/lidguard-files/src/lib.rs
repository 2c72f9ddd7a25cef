//! How lidguard writes files.
//!
//! - [`private`]: lidguard's own files (settings, database, log, backups, locks): directories
//!   0700 and files 0600 whatever the umask, written atomically.
//! - [`edit`]: the agents' config files, which belong to the user: edited where the agent reads
//!   them (through a symlink, into its target), atomically, keeping mode and owner, refusing
//!   read-only files and read-only places, and never over a change someone made meanwhile.
//! - [`lock`]: an advisory lock so two lidguard processes never interleave a
//!   read-modify-write of the same file.
//! - [`text`]: what may reach the log from outside (control characters escaped).
//! - [`below`] (Unix): files root writes in a directory a user controls, every step relative to
//!   a descriptor opened without following links.
//! - [`atomic`]: the one atomic replace every writer above goes through, for files that are
//!   none of those (a unit file, a file in a system directory root owns).
//! - [`environment`]: the process environment, read in this one place; everything else takes
//!   an injected lookup.
//!
//! `clippy.toml` disallows `std::fs::write`, `std::fs::rename` and `std::env::var(_os)`
//! everywhere else.
// Unit tests write fixtures and set variables directly; the lib build (clippy --all-targets
// checks it without cfg(test)) keeps the one-writer and injected-environment rules.
#![cfg_attr(
    test,
    allow(clippy::disallowed_methods, reason = "tests write fixtures")
)]

#[cfg(unix)]
pub mod below;
pub mod edit;
pub mod lock;
pub mod private;
pub mod text;

pub mod atomic;
pub mod environment;
