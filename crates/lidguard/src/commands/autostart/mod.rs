//! The tray at login: each platform's place for it, each backend with the same five
//! functions. `setup` adds the entry, `uninstall` takes it out, `doctor` says whether it is
//! there.

#[cfg(any(target_os = "macos", all(test, unix)))]
mod launch_agent;
#[cfg(windows)]
mod run_key;
#[cfg(any(windows, test))]
mod run_key_entry;
#[cfg(target_os = "linux")]
mod xdg;

#[cfg(target_os = "macos")]
pub(crate) use launch_agent::{install, installed, place, remove, wanted};
#[cfg(windows)]
pub(crate) use run_key::{install, installed, place, remove, wanted};
#[cfg(target_os = "linux")]
pub(crate) use xdg::{install, installed, place, remove, wanted};
