//! The tray at login, where the platform has a place for it: each backend has the same four
//! functions. `setup` adds the entry, `uninstall` takes it out, `doctor` says whether it is
//! there. (macOS has none: the tray does not run there yet, and a login item that fails at
//! every login would only be noise.)

#[cfg(windows)]
mod run_key;
#[cfg(target_os = "linux")]
mod xdg;

#[cfg(windows)]
pub(crate) use run_key::{install, installed, place, remove, wanted};
#[cfg(target_os = "linux")]
pub(crate) use xdg::{install, installed, place, remove, wanted};
