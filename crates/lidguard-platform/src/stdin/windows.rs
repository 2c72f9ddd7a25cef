//! Reads that block until the agent closes stdin.

use std::time::Instant;

/// Always: reads block here, and the agent closes stdin after writing.
pub fn wait_readable(_deadline: Instant) -> bool {
    true
}

/// One read of stdin.
pub fn read_some(buf: &mut [u8]) -> std::io::Result<usize> {
    use std::io::Read;
    std::io::stdin().read(buf)
}
