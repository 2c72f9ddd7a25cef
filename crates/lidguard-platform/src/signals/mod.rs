//! A command run under lidguard (`lidguard run`): the signals a terminal or a supervisor sends
//! lidguard are passed on to it, and its end is reported as a shell would.
//!
//! Unix: handlers forward TERM, HUP, USR1/2, ALRM, and INT/QUIT when lidguard is not in the
//! terminal's foreground group (`unix`). Windows: Ctrl-C reaches every process of the console,
//! the command included, so nothing is forwarded (`windows`).

#[cfg(unix)]
mod unix;
#[cfg(not(unix))]
mod windows;

#[cfg(unix)]
pub use unix::{Forwarder, killed_by};
#[cfg(not(unix))]
pub use windows::{Forwarder, killed_by};

/// The exit code a shell would report.
pub fn shell_exit_code(status: &std::process::ExitStatus) -> u8 {
    if let Some(code) = status.code() {
        return u8::try_from(code & 0xff).unwrap_or(1);
    }
    killed_by(status).map_or(1, |signal| u8::try_from(128 + signal).unwrap_or(255))
}
