//! `lidguard-private-logind`: the real systemd-logind on a private system bus
//! ([`lidguard_testbus::PrivateLogind`]) for end-to-end drivers in other languages, which point
//! lidguard's `DBUS_SYSTEM_BUS_ADDRESS` at it so a suspend request reaches logind (and is
//! refused) instead of failing for want of a bus.
//!
//! Safety first: it refuses to serve unless logind answers `na` to both `CanSuspend` and
//! `CanHibernate` (a container or VM without power management), because anything that asks this
//! logind to suspend would suspend the machine running it.
//!
//! On start it prints exactly one JSON line to stdout and flushes:
//! `{"address":"unix:path=…","logindPid":N,"dbusPid":N,"canSuspend":"na","canHibernate":"na"}`,
//! or `{"error":"…"}` and exits 1 when logind cannot run here or the machine could suspend.
//! It then serves until its stdin reaches end-of-file (the driver closed it or died) or it gets
//! SIGTERM, SIGINT or SIGHUP; then it stops logind and the bus (by pid), removes their temporary
//! directory, writes logind's own output to stderr and exits 0.
//!
//! Only one private logind runs on a machine at a time (they share `/run/systemd/`): a second
//! one, or a `cargo test` of the logind tests, waits for the first (at most 120 s).
#![allow(
    clippy::disallowed_methods,
    reason = "test support: fixtures are written and the environment read directly"
)]

use std::process::ExitCode;

#[cfg(target_os = "linux")]
#[path = "private_logind/linux.rs"]
mod linux;

fn main() -> ExitCode {
    #[cfg(target_os = "linux")]
    return linux::main();
    #[cfg(not(target_os = "linux"))]
    {
        #[allow(clippy::print_stderr, reason = "a command-line tool's one message")]
        {
            eprintln!("lidguard-private-logind runs on Linux only (systemd-logind)");
        }
        ExitCode::from(2)
    }
}
