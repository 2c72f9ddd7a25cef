//! The power-plan values lidguard changes while it protects a Windows laptop, and how the user's
//! own values come back ([`PlanSetting`]):
//!
//! - the lid-close action: a power request ends when the lid closes (Microsoft's
//!   `PowerSetRequest` documentation: requests end at user-initiated sleep, lid close included),
//!   so closed-lid protection sets the active scheme's `LIDACTION` (AC and DC) to "do nothing";
//! - the sleep timeout on battery: on a Modern Standby machine on battery, system and execution
//!   requests end 5 minutes after the system sleep timeout (same page, Remarks), so while it
//!   holds there lidguard sets `STANDBYIDLE`'s DC value to 0 (never); the AC value stays.
//!
//! The order is what makes it safe:
//!
//! 1. read the active scheme and both values;
//! 2. save them durably ([`PolicyBackups`], lidguard's store) — an existing backup is kept, since
//!    it holds the user's original and the current value may already be lidguard's;
//! 3. write the new values and re-apply the scheme; when that fails, restore at once.
//!
//! [`restore`] writes the saved values into the *saved* scheme, re-applies it only if it is still
//! the active one (a plan switch the user made meanwhile is not undone) and deletes the backup.
//! It runs on release, on daemon exit, at daemon start and from any CLI command that finds a
//! backup while no daemon runs (after a crash).
//!
//! The OS calls sit behind [`LidActionPolicy`]: powrprof on Windows, or [`FilePolicy`] — a JSON
//! file per setting below the `LIDGUARD_SYS_ROOT` seam — where tests need values Wine does not
//! have.

use crate::policy::PolicyError;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The store's backup kind for the lid action.
pub const BACKUP_KIND: &str = "windows-lid-action";

/// `LIDACTION` value "do nothing" (Microsoft, "Lid switch close action": 0 do nothing, 1 sleep,
/// 2 hibernate, 3 shut down).
pub const DO_NOTHING: u32 = 0;

/// A power-plan value lidguard changes for a while.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanSetting {
    /// `SUB_BUTTONS` / `LIDACTION`: set to "do nothing" on AC and DC.
    LidAction,
    /// `SUB_SLEEP` / `STANDBYIDLE` (seconds; 0 never): set to 0 on DC (battery) only, on a
    /// Modern Standby machine.
    BatterySleepTimeout,
}

impl PlanSetting {
    /// Both settings, in the order they are restored.
    pub const ALL: [PlanSetting; 2] = [PlanSetting::LidAction, PlanSetting::BatterySleepTimeout];

    /// The store's backup kind.
    pub fn backup_kind(self) -> &'static str {
        match self {
            PlanSetting::LidAction => BACKUP_KIND,
            PlanSetting::BatterySleepTimeout => "windows-battery-sleep-timeout",
        }
    }

    /// What it is, for the user.
    pub fn name(self) -> &'static str {
        match self {
            PlanSetting::LidAction => "lid-close action",
            PlanSetting::BatterySleepTimeout => "sleep timeout on battery",
        }
    }

    /// The values lidguard holds, from the user's `(ac, dc)`.
    fn held(self, (ac, _dc): (u32, u32)) -> (u32, u32) {
        match self {
            PlanSetting::LidAction => (DO_NOTHING, DO_NOTHING),
            PlanSetting::BatterySleepTimeout => (ac, 0),
        }
    }

    /// What [`change`] does, for its error.
    fn change_text(self) -> &'static str {
        match self {
            PlanSetting::LidAction => "set the lid-close action to do nothing",
            PlanSetting::BatterySleepTimeout => "set the sleep timeout on battery to never",
        }
    }

    /// The file standing in for it below the sys root.
    fn file_name(self) -> &'static str {
        match self {
            PlanSetting::LidAction => "lid-action.json",
            PlanSetting::BatterySleepTimeout => "standby-idle.json",
        }
    }
}

/// The user's lid-close action, as saved before lidguard changed it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LidActionBackup {
    /// The power scheme GUID the values belong to.
    pub scheme: String,
    /// `LIDACTION` on AC power.
    pub ac: u32,
    /// `LIDACTION` on battery.
    pub dc: u32,
}

/// The OS side: the active power scheme and its values.
pub trait LidActionPolicy: Send + Sync {
    /// The active scheme's GUID.
    fn active_scheme(&self) -> Result<String, PolicyError>;
    /// `(AC, DC)` value of `setting` in `scheme`.
    fn read(&self, scheme: &str, setting: PlanSetting) -> Result<(u32, u32), PolicyError>;
    /// Writes both values of `setting` into `scheme` (not yet in effect for the active scheme).
    fn write(
        &self,
        scheme: &str,
        setting: PlanSetting,
        ac: u32,
        dc: u32,
    ) -> Result<(), PolicyError>;
    /// Makes `scheme` active again, which puts written values into effect.
    fn apply(&self, scheme: &str) -> Result<(), PolicyError>;
}

/// Durable storage of policy backups (lidguard's store).
pub trait PolicyBackups: Send + Sync {
    /// Saves `json` under `kind` unless a backup of that kind exists; `Ok(false)` when one did.
    /// Returns after the write is on disk.
    fn save_if_absent(&self, kind: &str, json: &str) -> Result<bool, PolicyError>;
    /// The backup of `kind`, if any.
    fn load(&self, kind: &str) -> Result<Option<String>, PolicyError>;
    /// Deletes the backup of `kind`.
    fn delete(&self, kind: &str) -> Result<(), PolicyError>;
    /// Called once lidguard changed the policy backed up as `kind`: the daemon starts a watcher
    /// that restores it should the daemon die (macOS). Does nothing by default.
    fn changed(&self, kind: &str) {
        let _ = kind;
    }
}

/// Sets `setting` to lidguard's values after backing up the user's; returns the backup in force
/// (an older one when it existed).
pub fn change(
    policy: &dyn LidActionPolicy,
    backups: &dyn PolicyBackups,
    setting: PlanSetting,
) -> Result<LidActionBackup, PolicyError> {
    let scheme = policy.active_scheme()?;
    let (ac, dc) = policy.read(&scheme, setting)?;
    let current = LidActionBackup { scheme, ac, dc };
    let json = serde_json::to_string(&current).expect("a backup always serializes");
    let saved = if backups.save_if_absent(setting.backup_kind(), &json)? {
        current.clone()
    } else {
        load(backups, setting)?.unwrap_or_else(|| current.clone())
    };
    let (new_ac, new_dc) = setting.held((ac, dc));
    let changed = policy
        .write(&current.scheme, setting, new_ac, new_dc)
        .and_then(|()| policy.apply(&current.scheme));
    if let Err(e) = changed {
        return Err(PolicyError::Change {
            what: setting.change_text(),
            cause: Box::new(e),
            undo: restore(policy, backups, setting).err().map(Box::new),
        });
    }
    Ok(saved)
}

/// What [`restore`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Restored {
    /// No backup was pending.
    Nothing,
    /// The saved values were written back; `applied` tells whether their scheme was still the
    /// active one (and so was re-applied).
    Values {
        /// Which setting.
        setting: PlanSetting,
        /// The values written back.
        backup: LidActionBackup,
        /// Whether the scheme was re-applied.
        applied: bool,
    },
}

impl Restored {
    /// What came back, for the user; `None` when nothing was pending.
    pub fn describe(&self) -> Option<String> {
        match self {
            Restored::Nothing => None,
            Restored::Values {
                setting, backup, ..
            } => Some(format!(
                "your {} (AC {}, DC {})",
                setting.name(),
                backup.ac,
                backup.dc
            )),
        }
    }
}

/// Writes the backed-up values of `setting` back and deletes the backup.
///
/// An unreadable backup is left in place (and reported): deleting it would lose the user's
/// values for good.
pub fn restore(
    policy: &dyn LidActionPolicy,
    backups: &dyn PolicyBackups,
    setting: PlanSetting,
) -> Result<Restored, PolicyError> {
    let Some(backup) = load(backups, setting)? else {
        return Ok(Restored::Nothing);
    };
    policy.write(&backup.scheme, setting, backup.ac, backup.dc)?;
    let applied = match policy.active_scheme() {
        Ok(active) if active.eq_ignore_ascii_case(&backup.scheme) => {
            policy.apply(&backup.scheme)?;
            true
        }
        // The user switched plans meanwhile: the values are back in their scheme, which takes
        // effect when it is activated again.
        Ok(_) => false,
        Err(e) => return Err(e),
    };
    backups.delete(setting.backup_kind())?;
    Ok(Restored::Values {
        setting,
        backup,
        applied,
    })
}

fn load(
    backups: &dyn PolicyBackups,
    setting: PlanSetting,
) -> Result<Option<LidActionBackup>, PolicyError> {
    match backups.load(setting.backup_kind())? {
        None => Ok(None),
        Some(json) => match serde_json::from_str(&json) {
            Ok(backup) => Ok(Some(backup)),
            Err(e) => Err(PolicyError::SavedUnreadable {
                kind: setting.name().to_owned(),
                reason: e.to_string(),
                json,
            }),
        },
    }
}

/// A GUID's fields as `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (lowercase, as `powercfg` prints).
pub fn guid_to_string(data1: u32, data2: u16, data3: u16, data4: [u8; 8]) -> String {
    format!(
        "{data1:08x}-{data2:04x}-{data3:04x}-{:02x}{:02x}-{}",
        data4[0],
        data4[1],
        data4[2..]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    )
}

/// The fields of a GUID written as [`guid_to_string`] does (either case, braces allowed).
pub fn parse_guid(text: &str) -> Result<(u32, u16, u16, [u8; 8]), PolicyError> {
    let bad = || PolicyError::NotGuid(text.to_owned());
    let hex: String = text
        .trim()
        .trim_start_matches('{')
        .trim_end_matches('}')
        .split('-')
        .collect();
    let groups: Vec<&str> = text.trim().trim_matches(['{', '}']).split('-').collect();
    if hex.len() != 32
        || groups.iter().map(|g| g.len()).collect::<Vec<_>>() != [8, 4, 4, 4, 12]
        || !hex.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return Err(bad());
    }
    let data1 = u32::from_str_radix(&hex[0..8], 16).map_err(|_| bad())?;
    let data2 = u16::from_str_radix(&hex[8..12], 16).map_err(|_| bad())?;
    let data3 = u16::from_str_radix(&hex[12..16], 16).map_err(|_| bad())?;
    let mut data4 = [0u8; 8];
    for (i, byte) in data4.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[16 + 2 * i..18 + 2 * i], 16).map_err(|_| bad())?;
    }
    Ok((data1, data2, data3, data4))
}

/// The plan's values kept in JSON files, for tests: `<root>/power/lid-action.json` and
/// `<root>/power/standby-idle.json`, each `{"activeScheme": GUID, "schemes": {GUID: {"ac": N,
/// "dc": N}}}` (the active scheme is the lid action file's). Used instead of powrprof when
/// `LIDGUARD_SYS_ROOT` is set, the same seam that relocates `/sys` on Linux.
#[derive(Clone, Debug)]
pub struct FilePolicy {
    dir: PathBuf,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PolicyFile {
    active_scheme: String,
    schemes: std::collections::BTreeMap<String, AcDc>,
}

#[derive(Debug, Default, Clone, Copy, Serialize, Deserialize)]
struct AcDc {
    ac: u32,
    dc: u32,
}

impl FilePolicy {
    /// The files below `sys_root`.
    pub fn below(sys_root: &Path) -> FilePolicy {
        FilePolicy {
            dir: sys_root.join("power"),
        }
    }

    fn path(&self, setting: PlanSetting) -> PathBuf {
        self.dir.join(setting.file_name())
    }

    fn read_file(&self, setting: PlanSetting) -> Result<PolicyFile, PolicyError> {
        let path = self.path(setting);
        let text = std::fs::read_to_string(&path).map_err(|e| PolicyError::file(&path, e))?;
        serde_json::from_str(&text).map_err(|e| PolicyError::file(&path, e))
    }
}

impl LidActionPolicy for FilePolicy {
    fn active_scheme(&self) -> Result<String, PolicyError> {
        Ok(self.read_file(PlanSetting::LidAction)?.active_scheme)
    }

    fn read(&self, scheme: &str, setting: PlanSetting) -> Result<(u32, u32), PolicyError> {
        let file = self.read_file(setting)?;
        let values = file
            .schemes
            .get(scheme)
            .ok_or_else(|| PolicyError::file(&self.path(setting), format!("no scheme {scheme}")))?;
        Ok((values.ac, values.dc))
    }

    fn write(
        &self,
        scheme: &str,
        setting: PlanSetting,
        ac: u32,
        dc: u32,
    ) -> Result<(), PolicyError> {
        let path = self.path(setting);
        let mut file = self.read_file(setting)?;
        file.schemes.insert(scheme.to_owned(), AcDc { ac, dc });
        let text = serde_json::to_string_pretty(&file).expect("the policy file always serializes");
        lidguard_files::atomic::write(&path, text.as_bytes(), 0o600)
            .map_err(|e| PolicyError::file(&path, e))
    }

    fn apply(&self, scheme: &str) -> Result<(), PolicyError> {
        // Only checks the scheme exists: the file has no "in effect" state of its own.
        self.read(scheme, PlanSetting::LidAction).map(drop)
    }
}

/// Backups kept in memory, for the state machines' unit tests.
#[cfg(test)]
pub(crate) mod memory {
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    use super::PolicyBackups;
    use crate::policy::PolicyError;

    #[derive(Default)]
    pub(crate) struct MemoryBackups(Mutex<BTreeMap<String, String>>);

    impl PolicyBackups for MemoryBackups {
        fn save_if_absent(&self, kind: &str, json: &str) -> Result<bool, PolicyError> {
            let mut map = self.0.lock().unwrap();
            if map.contains_key(kind) {
                return Ok(false);
            }
            map.insert(kind.to_owned(), json.to_owned());
            Ok(true)
        }
        fn load(&self, kind: &str) -> Result<Option<String>, PolicyError> {
            Ok(self.0.lock().unwrap().get(kind).cloned())
        }
        fn delete(&self, kind: &str) -> Result<(), PolicyError> {
            self.0.lock().unwrap().remove(kind);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    use super::*;

    const BALANCED: &str = "381b4222-f694-41f0-9685-ff5bb260df2e";
    const LID: PlanSetting = PlanSetting::LidAction;
    const SAVER: &str = "a1841308-3541-4fab-bc81-f71556f20b4a";

    /// The OS's schemes, with what is in effect, and calls to fail on purpose.
    #[derive(Default)]
    struct Os {
        state: Mutex<OsState>,
    }

    #[derive(Default)]
    struct OsState {
        active: String,
        written: BTreeMap<String, (u32, u32)>,
        in_effect: (u32, u32),
        fail_write_of: Option<u32>,
        applies: usize,
    }

    impl Os {
        fn with(scheme: &str, ac: u32, dc: u32) -> Os {
            let os = Os::default();
            {
                let mut s = os.state.lock().unwrap();
                s.active = scheme.to_owned();
                s.written.insert(scheme.to_owned(), (ac, dc));
                s.in_effect = (ac, dc);
            }
            os
        }
        fn in_effect(&self) -> (u32, u32) {
            self.state.lock().unwrap().in_effect
        }
        fn stored(&self, scheme: &str) -> (u32, u32) {
            self.state.lock().unwrap().written[scheme]
        }
    }

    impl LidActionPolicy for Os {
        fn active_scheme(&self) -> Result<String, PolicyError> {
            Ok(self.state.lock().unwrap().active.clone())
        }
        fn read(&self, scheme: &str, _setting: PlanSetting) -> Result<(u32, u32), PolicyError> {
            Ok(self.stored(scheme))
        }
        fn write(
            &self,
            scheme: &str,
            _setting: PlanSetting,
            ac: u32,
            dc: u32,
        ) -> Result<(), PolicyError> {
            let mut s = self.state.lock().unwrap();
            if s.fail_write_of == Some(ac) {
                return Err(PolicyError::Call {
                    call: "PowerWriteACValueIndex",
                    code: 5,
                });
            }
            s.written.insert(scheme.to_owned(), (ac, dc));
            Ok(())
        }
        fn apply(&self, scheme: &str) -> Result<(), PolicyError> {
            let mut s = self.state.lock().unwrap();
            s.applies += 1;
            if s.active == scheme {
                s.in_effect = s.written[scheme];
            }
            Ok(())
        }
    }

    use super::memory::MemoryBackups as Store;

    #[test]
    fn change_backs_up_first_then_sets_do_nothing_and_restore_brings_the_values_back() {
        let os = Os::with(BALANCED, 1, 2);
        let store = Store::default();
        let saved = change(&os, &store, LID).unwrap();
        assert_eq!(
            saved,
            LidActionBackup {
                scheme: BALANCED.into(),
                ac: 1,
                dc: 2
            }
        );
        assert_eq!(os.in_effect(), (0, 0), "both AC and DC are changed");
        assert!(store.load(BACKUP_KIND).unwrap().is_some());

        let restored = restore(&os, &store, LID).unwrap();
        assert_eq!(
            restored,
            Restored::Values {
                setting: LID,
                backup: saved,
                applied: true
            }
        );
        assert_eq!(os.in_effect(), (1, 2));
        assert_eq!(store.load(BACKUP_KIND).unwrap(), None);
        assert_eq!(restore(&os, &store, LID).unwrap(), Restored::Nothing);
    }

    #[test]
    fn a_second_change_keeps_the_users_original_backup() {
        let os = Os::with(BALANCED, 1, 1);
        let store = Store::default();
        change(&os, &store, LID).unwrap();
        // The daemon died here; a new one changes again while the old backup is pending: the
        // current values (0, lidguard's) must not replace the user's.
        let saved = change(&os, &store, LID).unwrap();
        assert_eq!((saved.ac, saved.dc), (1, 1));
        restore(&os, &store, LID).unwrap();
        assert_eq!(os.in_effect(), (1, 1));
    }

    #[test]
    fn a_user_who_already_had_do_nothing_keeps_it() {
        let os = Os::with(BALANCED, 0, 0);
        let store = Store::default();
        change(&os, &store, LID).unwrap();
        restore(&os, &store, LID).unwrap();
        assert_eq!(os.in_effect(), (0, 0));
    }

    #[test]
    fn a_refused_change_restores_at_once_and_leaves_no_backup() {
        let os = Os::with(BALANCED, 1, 1);
        os.state.lock().unwrap().fail_write_of = Some(DO_NOTHING);
        let store = Store::default();
        let error = change(&os, &store, LID).unwrap_err();
        let error = error.to_string();
        assert!(
            error.starts_with("cannot set the lid-close action to do nothing")
                && error.contains("PowerWriteACValueIndex failed (error 5)"),
            "{error}"
        );
        assert_eq!(os.in_effect(), (1, 1));
        assert_eq!(store.load(BACKUP_KIND).unwrap(), None);
    }

    #[test]
    fn restore_writes_into_the_saved_scheme_and_leaves_a_plan_switch_alone() {
        let os = Os::with(BALANCED, 1, 1);
        os.state
            .lock()
            .unwrap()
            .written
            .insert(SAVER.to_owned(), (2, 2));
        let store = Store::default();
        change(&os, &store, LID).unwrap();
        // The user switches to another plan while protected.
        {
            let mut s = os.state.lock().unwrap();
            s.active = SAVER.to_owned();
            s.in_effect = (2, 2);
        }
        let restored = restore(&os, &store, LID).unwrap();
        assert!(matches!(restored, Restored::Values { applied: false, .. }));
        assert_eq!(
            os.stored(BALANCED),
            (1, 1),
            "values back in their own scheme"
        );
        assert_eq!(
            os.in_effect(),
            (2, 2),
            "the user's new plan stays in effect"
        );
        assert_eq!(os.state.lock().unwrap().active, SAVER);
    }

    #[test]
    fn an_unreadable_backup_is_kept() {
        let os = Os::with(BALANCED, 0, 0);
        let store = Store::default();
        store.save_if_absent(BACKUP_KIND, "{not json").unwrap();
        let error = restore(&os, &store, LID).unwrap_err();
        assert!(error.to_string().contains("unreadable"), "{error}");
        assert!(store.load(BACKUP_KIND).unwrap().is_some());
    }

    #[test]
    fn guids_round_trip_in_powercfg_form() {
        // GUID_LIDCLOSE_ACTION, from Microsoft's power-setting GUID list.
        let fields = parse_guid("5CA83367-6E45-459F-A27B-476B1D01C936").unwrap();
        assert_eq!(fields.0, 0x5ca8_3367);
        assert_eq!(fields.3, [0xa2, 0x7b, 0x47, 0x6b, 0x1d, 0x01, 0xc9, 0x36]);
        assert_eq!(
            guid_to_string(fields.0, fields.1, fields.2, fields.3),
            "5ca83367-6e45-459f-a27b-476b1d01c936"
        );
        assert_eq!(
            parse_guid(&format!("{{{BALANCED}}}")).unwrap().0,
            0x381b_4222
        );
        for bad in [
            "",
            "5ca83367",
            "5ca83367-6e45-459f-a27b-476b1d01c93",
            "zca83367-6e45-459f-a27b-476b1d01c936",
            "5ca833676-e45-459f-a27b-476b1d01c936",
        ] {
            assert!(parse_guid(bad).is_err(), "{bad}");
        }
    }

    /// The battery's sleep timeout: only its DC value goes to 0 (never), the AC one stays, and
    /// both come back exactly; a backup of its own next to the lid action's.
    #[test]
    fn the_battery_sleep_timeout_is_zeroed_on_dc_only_and_comes_back() {
        let timeout = PlanSetting::BatterySleepTimeout;
        let os = Os::with(BALANCED, 1800, 300);
        let store = Store::default();
        let saved = change(&os, &store, timeout).unwrap();
        assert_eq!((saved.ac, saved.dc), (1800, 300));
        assert_eq!(os.in_effect(), (1800, 0));
        assert!(store.load(timeout.backup_kind()).unwrap().is_some());
        assert!(store.load(BACKUP_KIND).unwrap().is_none(), "not the lid's");
        let restored = restore(&os, &store, timeout).unwrap();
        assert_eq!(
            restored.describe().as_deref(),
            Some("your sleep timeout on battery (AC 1800, DC 300)")
        );
        assert_eq!(os.in_effect(), (1800, 300));
    }

    #[test]
    fn file_policy_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("power")).unwrap();
        std::fs::write(
            dir.path().join("power/lid-action.json"),
            format!(
                r#"{{"activeScheme":"{BALANCED}","schemes":{{"{BALANCED}":{{"ac":1,"dc":3}}}}}}"#
            ),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("power/standby-idle.json"),
            format!(
                r#"{{"activeScheme":"{BALANCED}","schemes":{{"{BALANCED}":{{"ac":0,"dc":600}}}}}}"#
            ),
        )
        .unwrap();
        let policy = FilePolicy::below(dir.path());
        let store = Store::default();
        let timeout = PlanSetting::BatterySleepTimeout;
        change(&policy, &store, LID).unwrap();
        change(&policy, &store, timeout).unwrap();
        assert_eq!(policy.read(BALANCED, LID).unwrap(), (0, 0));
        assert_eq!(policy.read(BALANCED, timeout).unwrap(), (0, 0));
        restore(&policy, &store, LID).unwrap();
        restore(&policy, &store, timeout).unwrap();
        assert_eq!(policy.read(BALANCED, LID).unwrap(), (1, 3));
        assert_eq!(policy.read(BALANCED, timeout).unwrap(), (0, 600));
        assert!(
            FilePolicy::below(&dir.path().join("none"))
                .active_scheme()
                .is_err()
        );
    }
}
