//! A hook's stdin, read with a deadline: the agent writes the payload and closes it, and a
//! payload that stops coming must not hold the agent. Unix polls the descriptor and reads it
//! unbuffered (`unix`); Windows reads block until the agent closes stdin (`windows`).

#[cfg(unix)]
mod unix;
#[cfg(not(unix))]
mod windows;

#[cfg(unix)]
pub use unix::{read_some, wait_readable};
#[cfg(not(unix))]
pub use windows::{read_some, wait_readable};
