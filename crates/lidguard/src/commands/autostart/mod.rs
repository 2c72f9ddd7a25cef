//! The tray at login: each platform's place for it, each backend with the same six
//! functions. `setup` adds the entry, `uninstall` takes it out, `doctor` says whether it is
//! there; an entry of that name that lidguard did not write is the user's and stays, and
//! `doctor` says so.

#[cfg(any(target_os = "macos", all(test, unix)))]
mod launch_agent;
#[cfg(windows)]
mod run_key;
#[cfg(any(windows, test))]
mod run_key_entry;
#[cfg(target_os = "linux")]
mod xdg;

#[cfg(target_os = "macos")]
pub(crate) use launch_agent::{foreign, install, installed, place, remove, wanted};
#[cfg(windows)]
pub(crate) use run_key::{foreign, install, installed, place, remove, wanted};
#[cfg(target_os = "linux")]
pub(crate) use xdg::{foreign, install, installed, place, remove, wanted};
