//! Letting go of the starting client's stderr pipe once the daemon listens
//! ([`crate::StartedBy::Client`]): the null device takes its place.

/// Puts the null device in stderr's place. Failing leaves the pipe, which only keeps the
/// client's reader thread waiting; it is logged.
pub(crate) fn let_go() {
    if let Err(e) = put_null() {
        tracing::warn!(error = %e, "cannot let go of the starting client's stderr");
    }
}

#[cfg(unix)]
fn put_null() -> std::io::Result<()> {
    let null = std::fs::OpenOptions::new().write(true).open("/dev/null")?;
    rustix::stdio::dup2_stderr(&null)?;
    Ok(())
}

#[cfg(windows)]
fn put_null() -> std::io::Result<()> {
    use std::os::windows::io::IntoRawHandle;
    use windows_sys::Win32::Foundation::CloseHandle;
    use windows_sys::Win32::System::Console::{GetStdHandle, STD_ERROR_HANDLE, SetStdHandle};

    let null = std::fs::OpenOptions::new()
        .write(true)
        .open("NUL")?
        .into_raw_handle();
    // SAFETY: plain handle-table calls: the old handle is read, replaced (Rust's stderr asks
    // for the standard handle at every write) and then closed, which ends the client's pipe;
    // `null` stays open as the new standard error for the rest of the process.
    unsafe {
        let old = GetStdHandle(STD_ERROR_HANDLE);
        if SetStdHandle(STD_ERROR_HANDLE, null) == 0 {
            return Err(std::io::Error::last_os_error());
        }
        if !old.is_null() {
            CloseHandle(old);
        }
    }
    Ok(())
}
