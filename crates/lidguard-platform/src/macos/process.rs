//! Waiting for a process to exit with kqueue (`EVFILT_PROC`, `NOTE_EXIT`): no polling.
//!
//! Facts (`man 2 kqueue`): a `NOTE_EXIT` filter on a pid fires once when that process exits;
//! registering it for a pid that no longer exists fails with `ESRCH`. The kqueue descriptor is
//! itself readable when an event is pending, so Tokio waits on it.

use std::os::fd::OwnedFd;
use std::time::Duration;

use rustix::buffer::spare_capacity;
use rustix::event::kqueue::{Event, EventFilter, EventFlags, ProcessEvents, kevent, kqueue};
use rustix::io::Errno;
use rustix::process::Pid;
use tokio::io::unix::AsyncFd;

/// Waits until `pid` exits; `false` when it cannot be watched (the caller polls instead).
pub(crate) async fn wait_exit(pid: u32) -> bool {
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
