//! The daemon's named pipe on Windows: its access list admits the current user's SID alone
//! (`D:P(A;;GA;;;<SID>)`, no inheritance), remote clients are rejected, and each client's user
//! is checked again when it connects (its process token's SID), as the peer uid is on Unix.
//!
//! tokio's documented accept pattern: the next server instance is created before the connected
//! one is handed off, so a client never finds no instance.

use std::ffi::c_void;
use std::io;
use std::os::windows::io::AsRawHandle;
use std::path::Path;

use tokio::net::windows::named_pipe::{NamedPipeServer, ServerOptions};
use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, LocalFree};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
};
use windows_sys::Win32::Security::{
    GetTokenInformation, PSECURITY_DESCRIPTOR, SECURITY_ATTRIBUTES, TOKEN_QUERY, TOKEN_USER,
    TokenUser,
};
use windows_sys::Win32::System::Pipes::GetNamedPipeClientProcessId;
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, OpenProcess, OpenProcessToken, PROCESS_QUERY_LIMITED_INFORMATION,
};

/// The listening side: the pipe's name, its security and the instance waiting for a client.
pub(crate) struct Listener {
    name: std::ffi::OsString,
    security: Security,
    next: NamedPipeServer,
}

impl Listener {
    /// Creates the first instance (refused when another process already serves the name).
    pub(crate) fn bind(path: &Path) -> io::Result<Listener> {
        let security = Security::for_sid(&own_sid()?)?;
        let name = path.as_os_str().to_owned();
        let next = security.create(&name, true)?;
        Ok(Listener {
            name,
            security,
            next,
        })
    }

    /// Waits for a client; returns its connection once the next instance is listening.
    pub(crate) async fn accept(&mut self) -> io::Result<NamedPipeServer> {
        self.next.connect().await?;
        let fresh = self.security.create(&self.name, false)?;
        Ok(std::mem::replace(&mut self.next, fresh))
    }
}

/// A security descriptor built from SDDL, and the attributes that point at it.
struct Security {
    descriptor: PSECURITY_DESCRIPTOR,
}

// SAFETY: the descriptor is an immutable LocalAlloc'd block owned by this value; Windows only
// reads it, from whichever thread creates the next instance.
unsafe impl Send for Security {}
// SAFETY: as above; nothing mutates it after creation.
unsafe impl Sync for Security {}

impl Security {
    /// Full access for `sid`, nobody else, nothing inherited.
    fn for_sid(sid: &str) -> io::Result<Security> {
        let sddl = wide(&sddl_for(sid));
        let mut descriptor: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
        // SAFETY: `sddl` is a NUL-terminated UTF-16 string that outlives the call; the function
        // allocates the descriptor (freed with LocalFree in Drop).
        let ok = unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                sddl.as_ptr(),
                SDDL_REVISION_1,
                &mut descriptor,
                std::ptr::null_mut(),
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Security { descriptor })
    }

    fn create(&self, name: &std::ffi::OsStr, first: bool) -> io::Result<NamedPipeServer> {
        let mut attributes = SECURITY_ATTRIBUTES {
            nLength: u32::try_from(std::mem::size_of::<SECURITY_ATTRIBUTES>()).unwrap_or(0),
            lpSecurityDescriptor: self.descriptor,
            bInheritHandle: 0,
        };
        let mut options = ServerOptions::new();
        options
            .first_pipe_instance(first)
            .reject_remote_clients(true);
        // SAFETY: `attributes` points at a valid descriptor owned by `self` for the duration
        // of the call, which copies what it needs.
        unsafe {
            options
                .create_with_security_attributes_raw(name, (&raw mut attributes).cast::<c_void>())
        }
    }
}

impl Drop for Security {
    fn drop(&mut self) {
        // SAFETY: allocated by ConvertStringSecurityDescriptorToSecurityDescriptorW.
        unsafe { LocalFree(self.descriptor) };
    }
}

/// The access list that admits `sid` alone: `P` protects it from inheritance, `GA` is full
/// access.
pub(crate) fn sddl_for(sid: &str) -> String {
    format!("D:P(A;;GA;;;{sid})")
}

/// The SID of the user running this process, as a string (`S-1-5-21-…`).
pub(crate) fn own_sid() -> io::Result<String> {
    // SAFETY: the pseudo handle of the current process needs no closing.
    token_sid(unsafe { GetCurrentProcess() })
}

/// The connecting client's user SID and process id.
pub(crate) fn client_sid(pipe: &NamedPipeServer) -> io::Result<(String, Option<u32>)> {
    let mut pid = 0_u32;
    // SAFETY: the handle is the live pipe instance owned by `pipe`.
    if unsafe { GetNamedPipeClientProcessId(pipe.as_raw_handle() as HANDLE, &mut pid) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: plain call; a null result is handled.
    let process = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if process.is_null() {
        return Err(io::Error::last_os_error());
    }
    let sid = token_sid(process);
    // SAFETY: opened above, closed once.
    unsafe { CloseHandle(process) };
    Ok((sid?, Some(pid)))
}

/// The user SID in the token of `process`.
fn token_sid(process: HANDLE) -> io::Result<String> {
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: `process` is a valid process handle; `token` receives a handle closed below.
    if unsafe { OpenProcessToken(process, TOKEN_QUERY, &mut token) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let result = user_of_token(token);
    // SAFETY: opened above, closed once.
    unsafe { CloseHandle(token) };
    result
}

fn user_of_token(token: HANDLE) -> io::Result<String> {
    let mut needed = 0_u32;
    // SAFETY: a size query with no buffer.
    unsafe { GetTokenInformation(token, TokenUser, std::ptr::null_mut(), 0, &mut needed) };
    // u64 elements keep the TOKEN_USER the buffer holds aligned.
    let mut buffer = vec![0_u64; (needed as usize).div_ceil(8).max(1)];
    // SAFETY: `buffer` has at least `needed` bytes.
    let ok = unsafe {
        GetTokenInformation(
            token,
            TokenUser,
            buffer.as_mut_ptr().cast(),
            needed,
            &mut needed,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: on success the buffer starts with a TOKEN_USER whose SID points into it.
    let sid = unsafe { (*buffer.as_ptr().cast::<TOKEN_USER>()).User.Sid };
    let mut text: *mut u16 = std::ptr::null_mut();
    // SAFETY: `sid` is valid while `buffer` lives; the string is LocalAlloc'd and freed below.
    if unsafe { ConvertSidToStringSidW(sid, &mut text) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a NUL-terminated UTF-16 string from ConvertSidToStringSidW.
    let len = (0..).take_while(|&i| unsafe { *text.add(i) } != 0).count();
    // SAFETY: `len` UTF-16 units were just counted.
    let sid = String::from_utf16_lossy(unsafe { std::slice::from_raw_parts(text, len) });
    // SAFETY: allocated by ConvertSidToStringSidW.
    unsafe { LocalFree(text.cast()) };
    Ok(sid)
}

fn wide(text: &str) -> Vec<u16> {
    text.encode_utf16().chain(std::iter::once(0)).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_access_list_names_one_user_and_no_inheritance() {
        assert_eq!(
            super::sddl_for("S-1-5-21-1-2-3-1000"),
            "D:P(A;;GA;;;S-1-5-21-1-2-3-1000)"
        );
    }
}
