//! An OS setting lidguard changes for a while and must give back, whatever happens in between:
//! the value is saved durably *before* the change, the saved value wins over the current one
//! when a change is made again (the current one may be lidguard's own, left by a dead daemon),
//! a setting already at the wanted value is not written (and so never undone), and a restore
//! writes only when the value differs, then forgets the backup.
//!
//! macOS's `SleepDisabled` ([`crate::sleep_disabled`]) and `hibernatemode`
//! ([`crate::hibernate_mode`]) are kept this way; the backups live in lidguard's store
//! ([`PolicyBackups`]).

use crate::policy::PolicyError;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::lid_action::PolicyBackups;

/// A setting, read and written.
pub trait Setting<T>: Send + Sync {
    /// Its value now.
    fn read(&self) -> Result<T, PolicyError>;
    /// Sets it.
    fn write(&self, value: T) -> Result<(), PolicyError>;
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
/// (an older backup's when one existed). When setting fails, the saved value is put back (the
/// error says `what` could not be done).
pub fn change<T>(
    setting: &dyn Setting<T>,
    backups: &dyn PolicyBackups,
    (kind, what): (&str, &'static str),
    wanted: T,
) -> Result<T, PolicyError>
where
    T: Copy + PartialEq + Serialize + DeserializeOwned,
{
    let current = setting.read()?;
    let json = serde_json::to_string(&current).expect("a saved value always serializes");
    let saved = if backups.save_if_absent(kind, &json)? {
        current
    } else {
        load(backups, kind)?.unwrap_or(current)
    };
    if current == wanted {
        return Ok(saved);
    }
    if let Err(e) = setting.write(wanted) {
        return Err(PolicyError::Change {
            what,
            cause: Box::new(e),
            undo: restore(setting, backups, kind).err().map(Box::new),
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
) -> Result<Restored<T>, PolicyError>
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
pub fn pending(backups: &dyn PolicyBackups, kind: &str) -> Result<bool, PolicyError> {
    Ok(backups.load(kind)?.is_some())
}

fn load<T: DeserializeOwned>(
    backups: &dyn PolicyBackups,
    kind: &str,
) -> Result<Option<T>, PolicyError> {
    match backups.load(kind)? {
        None => Ok(None),
        Some(json) => match serde_json::from_str(&json) {
            Ok(value) => Ok(Some(value)),
            Err(e) => Err(PolicyError::SavedUnreadable {
                kind: kind.to_owned(),
                reason: e.to_string(),
                json,
            }),
        },
    }
}
