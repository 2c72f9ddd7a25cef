//! The daemon's named pipe on Windows: its access list admits the current user's SID alone
//! (`D:P(A;;GA;;;<SID>)`, no inheritance), remote clients are rejected, and each client's user
//! is checked again when it connects (its process token's SID), as the peer uid is on Unix.
//!
//! tokio's documented accept pattern: the next server instance is created before the connected
//! one is handed off, so a client never finds no instance.

use std::ffi::c_void;
use std::io;
use std::path::Path;

use tokio::net::windows::named_pipe::{NamedPipeServer, ServerOptions};
use windows_sys::Win32::Foundation::LocalFree;
use windows_sys::Win32::Security::Authorization::{
    ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
};
use windows_sys::Win32::Security::{PSECURITY_DESCRIPTOR, SECURITY_ATTRIBUTES};

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
    lidguard_ipc::windows_identity::own_sid()
}

/// The connecting client's user SID and process id.
pub(crate) fn client_sid(pipe: &NamedPipeServer) -> io::Result<(String, Option<u32>)> {
    let (sid, pid) = lidguard_ipc::windows_identity::client_of(pipe)?;
    Ok((sid, Some(pid)))
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
