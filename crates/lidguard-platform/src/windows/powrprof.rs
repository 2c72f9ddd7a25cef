//! The lid-close action through powrprof, resolved at run time.
//!
//! `PowerReadACValueIndex` and friends are looked up with `GetProcAddress` instead of imported:
//! Wine 8.0 does not export them, and a hard import there aborts the process at the first call;
//! a missing function becomes an error that says so.

use crate::policy::PolicyError;
use std::ffi::c_void;

use windows_sys::Win32::Foundation::{HLOCAL, LocalFree};
use windows_sys::Win32::System::LibraryLoader::{GetProcAddress, LoadLibraryW};
use windows_sys::Win32::System::SystemServices::{
    GUID_LIDCLOSE_ACTION, GUID_SLEEP_SUBGROUP, GUID_STANDBY_TIMEOUT, GUID_SYSTEM_BUTTON_SUBGROUP,
};
use windows_sys::core::GUID;

use crate::lid_action::{LidActionPolicy, PlanSetting};

/// A setting's subgroup and setting GUIDs (Microsoft's power-setting GUID list).
fn guids(setting: PlanSetting) -> (&'static GUID, &'static GUID) {
    match setting {
        PlanSetting::LidAction => (&GUID_SYSTEM_BUTTON_SUBGROUP, &GUID_LIDCLOSE_ACTION),
        PlanSetting::BatterySleepTimeout => (&GUID_SLEEP_SUBGROUP, &GUID_STANDBY_TIMEOUT),
    }
}

type GetActive = unsafe extern "system" fn(*mut c_void, *mut *mut GUID) -> u32;
type ReadIndex =
    unsafe extern "system" fn(*mut c_void, *const GUID, *const GUID, *const GUID, *mut u32) -> u32;
type WriteIndex =
    unsafe extern "system" fn(*mut c_void, *const GUID, *const GUID, *const GUID, u32) -> u32;
type SetActive = unsafe extern "system" fn(*mut c_void, *const GUID) -> u32;
type Found = unsafe extern "system" fn() -> isize;

/// The five powrprof functions the lid action needs.
pub(crate) struct Powrprof {
    get_active: GetActive,
    read_ac: ReadIndex,
    read_dc: ReadIndex,
    write_ac: WriteIndex,
    write_dc: WriteIndex,
    set_active: SetActive,
}

impl Powrprof {
    /// Loads powrprof.dll and finds the functions; an error names the first one missing.
    pub(crate) fn load() -> Result<Powrprof, PolicyError> {
        let name: Vec<u16> = "powrprof.dll".encode_utf16().chain(Some(0)).collect();
        // SAFETY: loads a system DLL by name; it stays loaded for the process's lifetime.
        let module = unsafe { LoadLibraryW(name.as_ptr()) };
        if module.is_null() {
            return Err(PolicyError::Missing(
                "powrprof.dll cannot be loaded".to_owned(),
            ));
        }
        let find = |symbol: &[u8]| {
            // SAFETY: `symbol` is NUL-terminated ASCII; `module` is loaded.
            unsafe { GetProcAddress(module, symbol.as_ptr()) }.ok_or_else(|| {
                PolicyError::Missing(format!(
                    "powrprof.dll has no {}",
                    String::from_utf8_lossy(&symbol[..symbol.len() - 1])
                ))
            })
        };
        // SAFETY: each pointer comes from GetProcAddress for the named function, whose
        // documented signature the target type spells out.
        unsafe {
            Ok(Powrprof {
                get_active: std::mem::transmute::<Found, GetActive>(find(
                    b"PowerGetActiveScheme\0",
                )?),
                read_ac: std::mem::transmute::<Found, ReadIndex>(find(b"PowerReadACValueIndex\0")?),
                read_dc: std::mem::transmute::<Found, ReadIndex>(find(b"PowerReadDCValueIndex\0")?),
                write_ac: std::mem::transmute::<Found, WriteIndex>(find(
                    b"PowerWriteACValueIndex\0",
                )?),
                write_dc: std::mem::transmute::<Found, WriteIndex>(find(
                    b"PowerWriteDCValueIndex\0",
                )?),
                set_active: std::mem::transmute::<Found, SetActive>(find(
                    b"PowerSetActiveScheme\0",
                )?),
            })
        }
    }
}

fn check(call: &'static str, code: u32) -> Result<(), PolicyError> {
    if code == 0 {
        Ok(())
    } else {
        Err(PolicyError::Call { call, code })
    }
}

impl LidActionPolicy for Powrprof {
    fn active_scheme(&self) -> Result<String, PolicyError> {
        let mut guid: *mut GUID = std::ptr::null_mut();
        // SAFETY: the function allocates the GUID, which is freed with LocalFree below.
        check("PowerGetActiveScheme", unsafe {
            (self.get_active)(std::ptr::null_mut(), &mut guid)
        })?;
        if guid.is_null() {
            return Err(PolicyError::Missing(
                "PowerGetActiveScheme returned no scheme".to_owned(),
            ));
        }
        // SAFETY: `guid` points to the GUID allocated above.
        let text = guid_text(unsafe { &*guid });
        // SAFETY: frees the allocation PowerGetActiveScheme made.
        unsafe { LocalFree(guid as HLOCAL) };
        Ok(text)
    }

    fn read(&self, scheme: &str, setting: PlanSetting) -> Result<(u32, u32), PolicyError> {
        let scheme = parse_guid(scheme)?;
        let (subgroup, setting) = guids(setting);
        let (mut ac, mut dc) = (0u32, 0u32);
        // SAFETY: the GUIDs live across the calls; the outputs are ours.
        unsafe {
            check(
                "PowerReadACValueIndex",
                (self.read_ac)(std::ptr::null_mut(), &scheme, subgroup, setting, &mut ac),
            )?;
            check(
                "PowerReadDCValueIndex",
                (self.read_dc)(std::ptr::null_mut(), &scheme, subgroup, setting, &mut dc),
            )?;
        }
        Ok((ac, dc))
    }

    fn write(
        &self,
        scheme: &str,
        setting: PlanSetting,
        ac: u32,
        dc: u32,
    ) -> Result<(), PolicyError> {
        let scheme = parse_guid(scheme)?;
        let (subgroup, setting) = guids(setting);
        // SAFETY: the GUIDs live across the calls.
        unsafe {
            check(
                "PowerWriteACValueIndex",
                (self.write_ac)(std::ptr::null_mut(), &scheme, subgroup, setting, ac),
            )?;
            check(
                "PowerWriteDCValueIndex",
                (self.write_dc)(std::ptr::null_mut(), &scheme, subgroup, setting, dc),
            )
        }
    }

    fn apply(&self, scheme: &str) -> Result<(), PolicyError> {
        let scheme = parse_guid(scheme)?;
        // SAFETY: the GUID lives across the call.
        check("PowerSetActiveScheme", unsafe {
            (self.set_active)(std::ptr::null_mut(), &scheme)
        })
    }
}

fn guid_text(guid: &GUID) -> String {
    crate::lid_action::guid_to_string(guid.data1, guid.data2, guid.data3, guid.data4)
}

fn parse_guid(text: &str) -> Result<GUID, PolicyError> {
    let (data1, data2, data3, data4) = crate::lid_action::parse_guid(text)?;
    Ok(GUID {
        data1,
        data2,
        data3,
        data4,
    })
}
