//! The tray at login on Windows: the value `lidguard tray` of the user's Run key
//! (`HKCU\Software\Microsoft\Windows\CurrentVersion\Run`), a command line Explorer runs at each
//! login of this user. It names `lidguard-tray.exe`, a GUI-subsystem program that starts the tray
//! with no console window (see its source); an entry an earlier lidguard wrote (`lidguard.exe`
//! then `tray`, which opened one) is lidguard's too and is replaced. A value of that name that
//! runs anything else is the user's, and stays.

use std::path::Path;

use super::AutostartError;
use super::run_key_entry::{LAUNCHER, command, ours};
use windows_sys::Win32::Foundation::{ERROR_FILE_NOT_FOUND, ERROR_SUCCESS};
use windows_sys::Win32::System::Registry::{
    HKEY_CURRENT_USER, REG_SZ, RRF_RT_REG_SZ, RegDeleteKeyValueW, RegGetValueW, RegSetKeyValueW,
};

const KEY: &str = r"Software\Microsoft\Windows\CurrentVersion\Run";
const VALUE: &str = "lidguard tray";

/// What lets the place be found, when it cannot be.
pub const FIND_IT: &str = "check that your user can read its registry (HKCU)";

/// Where the entry is, as the user reads it (and finds it in `regedit`).
pub fn place() -> Result<String, AutostartError> {
    Ok(format!(r"HKCU\{KEY} ({VALUE})"))
}

/// Windows always has a desktop for the user who runs `setup`.
pub fn wanted() -> bool {
    true
}

/// Whether lidguard's value is there.
pub fn installed() -> Result<bool, AutostartError> {
    Ok(read()?.is_some_and(|command| ours(&command)))
}

/// Whether a value of that name is there that runs something else (the user's).
pub fn foreign() -> Result<bool, AutostartError> {
    Ok(read()?.is_some_and(|command| !ours(&command)))
}

/// Sets the value to the `lidguard-tray.exe` next to this executable; returns where it is.
pub fn install(exe: &Path) -> Result<String, AutostartError> {
    let launcher = exe.with_file_name(LAUNCHER);
    if !launcher.is_file() {
        return Err(AutostartError::NoLauncher {
            launcher: launcher.display().to_string(),
            exe: exe.display().to_string(),
        });
    }
    let data = wide(&command(&launcher));
    let too_long = || failed("set", std::io::ErrorKind::InvalidInput.into());
    let bytes = u32::try_from(data.len() * 2).map_err(|_| too_long())?;
    // SAFETY: NUL-terminated strings and a buffer of `bytes` bytes, all living through the call.
    let status = unsafe {
        RegSetKeyValueW(
            HKEY_CURRENT_USER,
            wide(KEY).as_ptr(),
            wide(VALUE).as_ptr(),
            REG_SZ,
            data.as_ptr().cast(),
            bytes,
        )
    };
    checked(status).map_err(|e| failed("set", e))?;
    place()
}

/// Deletes lidguard's value (never the user's own of that name); returns where it was, `None`
/// when there was none.
pub fn remove() -> Result<Option<String>, AutostartError> {
    if !installed()? {
        return Ok(None);
    }
    // SAFETY: NUL-terminated strings living through the call.
    let status =
        unsafe { RegDeleteKeyValueW(HKEY_CURRENT_USER, wide(KEY).as_ptr(), wide(VALUE).as_ptr()) };
    checked(status).map_err(|e| failed("delete", e))?;
    place().map(Some)
}

/// The value's text; `None` when there is no such value.
fn read() -> Result<Option<String>, AutostartError> {
    let mut bytes = 0_u32;
    // A size query first (no buffer), then the text.
    let status = get(std::ptr::null_mut(), &mut bytes);
    if status == ERROR_FILE_NOT_FOUND {
        return Ok(None);
    }
    checked(status).map_err(|e| failed("read", e))?;
    let mut text = vec![0_u16; (bytes as usize).div_ceil(2)];
    checked(get(text.as_mut_ptr().cast(), &mut bytes)).map_err(|e| failed("read", e))?;
    let end = text.iter().position(|&c| c == 0).unwrap_or(text.len());
    Ok(Some(String::from_utf16_lossy(&text[..end])))
}

/// `RegGetValueW` of the value into `buffer`, which holds `bytes` bytes (none when null).
fn get(buffer: *mut std::ffi::c_void, bytes: &mut u32) -> u32 {
    let (key, value) = (wide(KEY), wide(VALUE));
    // SAFETY: NUL-terminated strings living through the call; `buffer` is null or holds
    // `bytes` bytes, as the callers give it.
    unsafe {
        RegGetValueW(
            HKEY_CURRENT_USER,
            key.as_ptr(),
            value.as_ptr(),
            RRF_RT_REG_SZ,
            std::ptr::null_mut(),
            buffer,
            bytes,
        )
    }
}

fn failed(what: &'static str, source: std::io::Error) -> AutostartError {
    AutostartError::Io {
        what,
        place: format!(r"HKCU\{KEY} ({VALUE})"),
        source,
    }
}

fn checked(status: u32) -> std::io::Result<()> {
    match status {
        ERROR_SUCCESS => Ok(()),
        // Registry calls return their error instead of setting the thread's last error.
        error => Err(std::io::Error::from_raw_os_error(error as i32)),
    }
}

fn wide(text: &str) -> Vec<u16> {
    text.encode_utf16().chain(Some(0)).collect()
}
