//! An OS setting lidguard changes for a while and must give back, whatever happens in between:
//! the value is saved durably *before* the change, the saved value wins over the current one
//! when a change is made again (the current one may be lidguard's own, left by a dead daemon),
//! a setting already at the wanted value is not written (and so never undone), and a restore
//! writes only when the value differs, then forgets the backup.
//!
//! macOS's `SleepDisabled` ([`crate::sleep_disabled`]) and `hibernatemode`
//! ([`crate::hibernate_mode`]) are kept this way; the backups live in lidguard's store
//! ([`PolicyBackups`]).

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::lid_action::PolicyBackups;

/// A setting, read and written.
pub trait Setting<T>: Send + Sync {
    /// Its value now.
    fn read(&self) -> Result<T, String>;
    /// Sets it.
    fn write(&self, value: T) -> Result<(), String>;
}

/// What [`restore`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Restored<T> {
    /// No backup was pending.
    Nothing,
    /// The backup was settled: `written` tells whether the value had to be written back (it had
    /// not when the setting already held it).
    Value {
        /// The user's value, now in place.
        value: T,
        /// Whether the setting was written.
        written: bool,
    },
}

/// Sets `wanted` after saving the current value under `kind`; returns the saved value in force
/// (an older backup's when one existed). When setting fails, the saved value is put back.
pub fn change<T>(
    setting: &dyn Setting<T>,
    backups: &dyn PolicyBackups,
    kind: &str,
    wanted: T,
) -> Result<T, String>
where
    T: Copy + PartialEq + Serialize + DeserializeOwned,
{
    let current = setting.read()?;
    let json = serde_json::to_string(&current).map_err(|e| e.to_string())?;
    let saved = if backups.save_if_absent(kind, &json)? {
        current
    } else {
        load(backups, kind)?.unwrap_or(current)
    };
    if current == wanted {
        return Ok(saved);
    }
    if let Err(e) = setting.write(wanted) {
        return Err(match restore(setting, backups, kind) {
            Ok(_) => e,
            Err(undo) => format!("{e}; putting the saved value back failed too: {undo}"),
        });
    }
    Ok(saved)
}

/// Puts the value saved under `kind` back and deletes the backup. An unreadable backup is left in
/// place (and reported): deleting it would lose the user's value for good.
pub fn restore<T>(
    setting: &dyn Setting<T>,
    backups: &dyn PolicyBackups,
    kind: &str,
) -> Result<Restored<T>, String>
where
    T: Copy + PartialEq + DeserializeOwned,
{
    let Some(value) = load(backups, kind)? else {
        return Ok(Restored::Nothing);
    };
    let written = setting.read()? != value;
    if written {
        setting.write(value)?;
    }
    backups.delete(kind)?;
    Ok(Restored::Value { value, written })
}

/// Whether a backup of `kind` is pending (a change is in place, or a dead daemon left one).
pub fn pending(backups: &dyn PolicyBackups, kind: &str) -> Result<bool, String> {
    Ok(backups.load(kind)?.is_some())
}

fn load<T: DeserializeOwned>(backups: &dyn PolicyBackups, kind: &str) -> Result<Option<T>, String> {
    match backups.load(kind)? {
        None => Ok(None),
        Some(json) => serde_json::from_str(&json)
            .map(Some)
            .map_err(|e| format!("the saved {kind} value is unreadable ({e}): {json}")),
    }
}
