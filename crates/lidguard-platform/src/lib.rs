//! Operating-system backends of lidguard.
//!
//! - [`power`]: keep-awake protection (logind inhibitors on Linux) behind the
//!   [`power::PowerControl`] trait.
//! - [`sources`]: file-based sensing of the lid and the connected displays.
//! - [`battery`] and [`thermal_state`]: the charge, the power source and the thermal state, for
//!   the battery floor and the temperature guard.
//! - [`process`]: whether a watched process is still alive.
//! - [`lid_action`]: the Windows lid-close action, changed with a durable backup and restored.
//! - [`sleep_disabled`] and [`pmset`]: macOS's `SleepDisabled`, the same way; [`sudoers`]: the
//!   rule that lets lidguard change it; [`launchd`]: the agent that restores it when lidguard
//!   cannot (and the tray's at login); [`osascript`]: AppleScript command lines.
//!
//! Callers never write `cfg`: every function exists on every target and reports clearly when a
//! platform has no backend yet.
// Unit tests write fixtures and set variables directly; the lib build (clippy --all-targets
// checks it without cfg(test)) keeps the one-writer and injected-environment rules.
#![cfg_attr(
    test,
    allow(clippy::disallowed_methods, reason = "tests write fixtures")
)]

pub mod account;
pub mod autostart;
pub mod battery;
pub mod give_back;
pub mod hibernate_mode;
#[cfg(windows)]
pub mod hidden_window;
pub mod launchd;
pub mod lid_action;
#[cfg(target_os = "macos")]
mod macos;
mod no_thermal;
pub mod notify;
pub mod orphans;
pub mod osascript;
pub mod pmset;
pub mod policy;
pub mod polkit;
pub mod power;
pub mod process;
pub mod restore;
mod root_file;
mod roots;
pub mod saved_setting;
pub mod signals;
pub mod sleep_disabled;
pub mod sound;
pub mod sources;
pub mod stdin;
pub mod sudoers;
pub mod tail;
#[cfg(test)]
mod test_support;
pub mod thermal_state;
#[cfg(target_os = "linux")]
pub mod uevents;
mod units;
#[cfg(windows)]
mod windows;
