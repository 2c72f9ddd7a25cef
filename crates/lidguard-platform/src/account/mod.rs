//! A user account by name: its home and ids (for root acting on a user's behalf, as
//! `macos-permission install --user NAME` does). Unix reads the user database (`unix`); there
//! is no such account elsewhere (`windows`).

#[cfg(unix)]
mod unix;
#[cfg(not(unix))]
mod windows;

#[cfg(unix)]
pub use unix::by_name;
#[cfg(not(unix))]
pub use windows::by_name;

/// An account's home folder and its user and group ids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Account {
    /// The home folder.
    pub home: std::path::PathBuf,
    /// The user id.
    pub uid: u32,
    /// The primary group id.
    pub gid: u32,
}
