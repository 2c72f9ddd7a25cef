//! What a command run under lidguard leaves running. Linux: lidguard becomes the parent of the
//! command's orphans (`PR_SET_CHILD_SUBREAPER`) and waits while they stay in its process group
//! (`linux`). Elsewhere the session ends with the command itself (`other`).

#[cfg(target_os = "linux")]
mod linux;
#[cfg(not(target_os = "linux"))]
mod other;

#[cfg(target_os = "linux")]
pub use linux::{adopt_orphans, left_running, wait_for_group};
#[cfg(not(target_os = "linux"))]
pub use other::{adopt_orphans, left_running, wait_for_group};
