//! Poll, then one unbuffered read.

use std::time::Instant;

/// Whether stdin has something to read (data or its end) before `deadline`.
pub fn wait_readable(deadline: Instant) -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let stdin = std::io::stdin();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        let timeout = Timespec::try_from(left).ok();
        let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
        match poll(&mut fds, timeout.as_ref()) {
            Ok(0) => {}
            Ok(_) => return true,
            Err(rustix::io::Errno::INTR) => {}
            // Not pollable (a regular file): reads never block.
            Err(_) => return true,
        }
    }
}

/// One read of stdin, unbuffered (the poll above looks at the descriptor, so no bytes may sit
/// in a buffer it cannot see).
pub fn read_some(buf: &mut [u8]) -> std::io::Result<usize> {
    Ok(rustix::io::read(std::io::stdin(), buf)?)
}
