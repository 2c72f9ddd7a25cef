//! What a command leaves running: adopted as it is orphaned (a child subreaper), waited
//! for while it stays in lidguard's process group. A daemon that starts a session of its own
//! (`setsid`) has left the group and is not waited for; nor is lidguard's own daemon.

use rustix::io::Errno;
use rustix::process::{WaitOptions, getpgrp, getpid, set_child_subreaper, waitpgid};

/// Makes lidguard the parent of the command's orphans; false when the kernel refuses.
pub fn adopt_orphans() -> bool {
    set_child_subreaper(Some(getpid())).is_ok()
}

/// Whether processes of lidguard's group are left among its children (the command's
/// background work, adopted as its parents exit); reaps those that have exited.
pub fn left_running() -> bool {
    loop {
        match waitpgid(getpgrp(), WaitOptions::NOHANG) {
            Ok(Some(_)) | Err(Errno::INTR) => {}
            Ok(None) => return true,
            // ECHILD: nothing of the command's is left.
            Err(_) => return false,
        }
    }
}

/// Waits until none of them is left.
pub fn wait_for_group() {
    loop {
        match waitpgid(getpgrp(), WaitOptions::empty()) {
            Ok(_) | Err(Errno::INTR) => {}
            Err(_) => return,
        }
    }
}
