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
#![deny(missing_docs)]

#[cfg(unix)]
pub mod below;
pub mod edit;
pub mod lock;
pub mod private;
pub mod text;

mod atomic;
