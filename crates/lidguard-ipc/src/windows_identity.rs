//! Who is at the other end of a named pipe, on Windows: the user SID of a process's token.
//!
//! The daemon admits a client only when the client's process runs as the daemon's own user; a
//! client sends nothing to a pipe whose server runs as someone else. The pipe's name is
//! predictable and `FILE_FLAG_FIRST_PIPE_INSTANCE` protects a server, not its clients (Microsoft
//! Learn, "Named Pipe Security and Access Rights"): another user who created the name first would
//! otherwise get every hook's payload and could answer a Stop hook. The server's process comes
//! from `GetNamedPipeServerProcessId`, its user from its token (`TokenUser`).

use std::io;
use std::os::windows::io::AsRawHandle;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, LocalFree};
use windows_sys::Win32::Security::Authorization::ConvertSidToStringSidW;
use windows_sys::Win32::Security::{GetTokenInformation, TOKEN_QUERY, TOKEN_USER, TokenUser};
use windows_sys::Win32::System::Pipes::{GetNamedPipeClientProcessId, GetNamedPipeServerProcessId};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, OpenProcess, OpenProcessToken, PROCESS_QUERY_LIMITED_INFORMATION,
};

/// The SID of the user running this process, as a string (`S-1-5-21-…`).
pub fn own_sid() -> io::Result<String> {
    // SAFETY: the pseudo handle of the current process needs no closing.
    token_sid(unsafe { GetCurrentProcess() })
}

/// The user SID and process id of the client connected to the server end `pipe`.
pub fn client_of(pipe: &impl AsRawHandle) -> io::Result<(String, u32)> {
    let mut pid = 0_u32;
    // SAFETY: the handle belongs to `pipe`, a live server end of a named pipe.
    if unsafe { GetNamedPipeClientProcessId(pipe.as_raw_handle(), &mut pid) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((process_sid(pid)?, pid))
}

/// The user SID and process id of the server of the client end `pipe`.
pub fn server_of(pipe: &impl AsRawHandle) -> io::Result<(String, u32)> {
    let mut pid = 0_u32;
    // SAFETY: the handle belongs to `pipe`, a live client end of a named pipe.
    if unsafe { GetNamedPipeServerProcessId(pipe.as_raw_handle(), &mut pid) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((process_sid(pid)?, pid))
}

/// Checks that the server of the client end `pipe` runs as `expected` (this process's user):
/// an error naming who serves it otherwise, and nothing is to be sent.
pub fn check_server(pipe: &impl AsRawHandle, expected: &str) -> io::Result<()> {
    let (sid, pid) = server_of(pipe).map_err(|e| {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("cannot tell who serves the pipe ({e}); nothing was sent"),
        )
    })?;
    if sid == expected {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "the pipe is served by process {pid} running as {sid}, not as you ({expected}); \
             nothing was sent"
        ),
    ))
}

/// The user SID of process `pid`.
fn process_sid(pid: u32) -> io::Result<String> {
    // SAFETY: plain call; a null result is handled.
    let process = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if process.is_null() {
        return Err(io::Error::last_os_error());
    }
    let sid = token_sid(process);
    // SAFETY: opened above, closed once.
    unsafe { CloseHandle(process) };
    sid
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
