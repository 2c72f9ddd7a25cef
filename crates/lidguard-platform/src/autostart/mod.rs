//! The tray at login: each platform's place for it, each backend with the same six functions
//! (`place`, `wanted`, `installed`, `foreign`, `install`, `remove`). `setup` adds the entry,
//! `uninstall` takes it out, `doctor` says whether it is there; an entry of that name that
//! lidguard did not write is the user's and stays, and `doctor` says so.
//!
//! Linux: an XDG autostart entry (`xdg`). macOS: a per-user launchd agent (`launch_agent`).
//! Windows: a value of the user's Run key (`run_key`).

#[cfg(any(target_os = "macos", all(test, unix)))]
mod launch_agent;
#[cfg(windows)]
mod run_key;
#[cfg(any(windows, test))]
mod run_key_entry;
#[cfg(not(any(target_os = "linux", windows, target_os = "macos")))]
mod unsupported;
#[cfg(target_os = "linux")]
mod xdg;

#[cfg(target_os = "macos")]
pub use launch_agent::{FIND_IT, foreign, install, installed, place, remove, wanted};
#[cfg(windows)]
pub use run_key::{FIND_IT, foreign, install, installed, place, remove, wanted};
#[cfg(not(any(target_os = "linux", windows, target_os = "macos")))]
pub use unsupported::{FIND_IT, foreign, install, installed, place, remove, wanted};
#[cfg(target_os = "linux")]
pub use xdg::{FIND_IT, foreign, install, installed, place, remove, wanted};

/// Why the login entry could not be read, written or taken away.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AutostartError {
    /// An entry of lidguard's name is the user's own.
    #[error(
        "{0} is there and lidguard did not write it; it is left alone. Move it away and run \
         setup again, or pass --no-tray"
    )]
    Foreign(String),
    /// Reading, writing or deleting it failed.
    #[error("cannot {what} {place}: {source}")]
    Io {
        /// `read`, `write`, `create`, `delete`, `set`.
        what: &'static str,
        /// The file or registry value.
        place: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// No home directory to find the place in.
    #[error("cannot find the home directory (HOME is unset)")]
    NoHome,
    /// The program the entry names is not installed next to `lidguard`.
    #[error(
        "{launcher} is missing next to {exe}: install them together (the Windows zip and \
         `cargo install` both do)"
    )]
    NoLauncher {
        /// The program the entry would run.
        launcher: String,
        /// The lidguard executable.
        exe: String,
    },
}

impl AutostartError {
    #[cfg_attr(
        windows,
        allow(dead_code, reason = "the Run key reports its own errors")
    )]
    fn io(what: &'static str, place: &std::path::Path) -> impl FnOnce(std::io::Error) -> Self {
        let place = place.display().to_string();
        move |source| AutostartError::Io {
            what,
            place,
            source,
        }
    }
}
