//! Processes on macOS: a process's parent, name and arguments, and an exit wait with kqueue.
//!
//! Facts: `proc_pidinfo(pid, PROC_PIDTBSDINFO, …)` fills a `proc_bsdinfo` with the parent
//! (`pbi_ppid`) and the names (`pbi_name`, up to 32 bytes, else `pbi_comm`, up to 16) for any
//! process of this user (libproc, `sys/proc_info.h`); `sysctl` `{CTL_KERN, KERN_PROCARGS2, pid}`
//! gives its arguments ([`super::procargs`]). A `NOTE_EXIT` kqueue filter on a pid fires once
//! when that process exits; registering it for a pid that no longer exists fails with `ESRCH`
//! (`man 2 kqueue`). The kqueue descriptor is itself readable when an event is pending, so Tokio
//! waits on it.

use std::os::fd::OwnedFd;
use std::time::Duration;

use rustix::buffer::spare_capacity;
use rustix::event::kqueue::{Event, EventFilter, EventFlags, ProcessEvents, kevent, kqueue};
use rustix::io::Errno;
use rustix::process::Pid;
use tokio::io::unix::AsyncFd;

use super::ProcessInfo;

/// The most argument bytes read (`kern.argmax` is 1 MiB on current macOS; agents' command lines
/// are short, and a longer one is cut, not an error).
const ARGS_MAX: usize = 256 * 1024;

/// `pid`'s parent, name and command line; `None` when it is gone or may not be read.
pub(super) fn read_process(pid: u32) -> Option<ProcessInfo> {
    let raw = i32::try_from(pid).ok()?;
    // SAFETY: a zeroed plain-data struct the call fills; its size is passed.
    let mut info: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
    let size = i32::try_from(std::mem::size_of::<libc::proc_bsdinfo>()).ok()?;
    // SAFETY: `info` is `size` bytes long and lives through the call.
    let got =
        unsafe { libc::proc_pidinfo(raw, libc::PROC_PIDTBSDINFO, 0, (&raw mut info).cast(), size) };
    if got != size {
        return None;
    }
    let name = text(&info.pbi_name)
        .or_else(|| text(&info.pbi_comm))
        .unwrap_or_default();
    let cmdline = arguments(raw)
        .map(|args| args.argv.join(" "))
        .unwrap_or_default();
    Some(ProcessInfo {
        pid,
        ppid: info.pbi_ppid,
        name,
        cmdline,
    })
}

/// A NUL-terminated name in a fixed array; `None` when empty.
fn text(chars: &[libc::c_char]) -> Option<String> {
    let bytes: Vec<u8> = chars
        .iter()
        .map(|&c| c.cast_unsigned())
        .take_while(|&b| b != 0)
        .collect();
    (!bytes.is_empty()).then(|| String::from_utf8_lossy(&bytes).into_owned())
}

/// `KERN_PROCARGS2` for `pid`, read.
fn arguments(pid: i32) -> Option<super::procargs::ProcArgs> {
    let mut mib = [libc::CTL_KERN, libc::KERN_PROCARGS2, pid];
    let mut buffer = vec![0_u8; ARGS_MAX];
    let mut len = buffer.len();
    // SAFETY: `mib` names three levels; `buffer` holds `len` bytes, which the call updates.
    let status = unsafe {
        libc::sysctl(
            mib.as_mut_ptr(),
            3,
            buffer.as_mut_ptr().cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if status != 0 {
        return None;
    }
    buffer.truncate(len);
    super::procargs::parse(&buffer)
}

/// Waits until `pid` exits; `false` when it cannot be watched (the caller polls instead).
pub(super) async fn wait_exit(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return false;
    };
    let Ok(queue) = kqueue() else {
        return false;
    };
    match exchange(&queue, Some(pid)) {
        Ok(true) | Err(Errno::SRCH) => return true,
        Ok(false) => {}
        Err(_) => return false,
    }
    // SAFETY: the AsyncFd owns the kqueue descriptor, which stays open and the same until it
    // is dropped.
    let registered =
        unsafe { AsyncFd::register_with_interest(queue, tokio::io::Interest::READABLE) };
    let Ok(queue) = registered else {
        return false;
    };
    loop {
        let Ok(mut ready) = queue.readable().await else {
            return false;
        };
        match exchange(queue.get_ref(), None) {
            Ok(true) => return true,
            Ok(false) => ready.clear_ready(),
            Err(_) => return false,
        }
    }
}

/// Registers the exit filter for `pid` (when given) and collects a pending event without
/// waiting: `Ok(true)` when the process has exited. `ESRCH`: there is no such process.
fn exchange(queue: &OwnedFd, pid: Option<Pid>) -> Result<bool, Errno> {
    let changes: Vec<Event> = pid
        .map(|pid| {
            Event::new(
                EventFilter::Proc {
                    pid,
                    flags: ProcessEvents::EXIT,
                },
                EventFlags::ADD | EventFlags::ONESHOT,
                std::ptr::null_mut(),
            )
        })
        .into_iter()
        .collect();
    let mut fired: Vec<Event> = Vec::with_capacity(1);
    // SAFETY: the events carry no user data pointer.
    unsafe {
        kevent(
            queue,
            &changes,
            spare_capacity(&mut fired),
            Some(Duration::ZERO),
        )
    }?;
    Ok(!fired.is_empty())
}
