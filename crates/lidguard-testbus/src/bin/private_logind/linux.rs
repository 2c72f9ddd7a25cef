//! The Linux implementation (the only one: logind is Linux's).

use std::io::Write;
use std::process::ExitCode;

const USAGE: &str = "\
usage: lidguard-private-logind

Starts systemd-logind on a private system bus (root only), checks that logind answers `na` to
CanSuspend and CanHibernate, prints one JSON line {\"address\":...} (or {\"error\":...} and
exits 1), then serves until stdin ends or SIGTERM/SIGINT/SIGHUP arrives.";

#[allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a command-line tool: the ready line goes to stdout, logind's log to stderr"
)]
pub(crate) fn main() -> ExitCode {
    if std::env::args().nth(1).is_some() {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    }
    // Listen for the signals first: one that arrives while logind starts is not lost.
    let end = match End::listen() {
        Ok(end) => end,
        Err(error) => {
            print_line(&serde_json::json!({ "error": error.to_string() }));
            return ExitCode::FAILURE;
        }
    };
    let logind = match start() {
        Ok(logind) => logind,
        Err(error) => {
            print_line(&serde_json::json!({ "error": error.to_string() }));
            return ExitCode::FAILURE;
        }
    };
    if !print_line(&serde_json::json!({
        "address": logind.address(),
        "logindPid": logind.logind_pid(),
        "dbusPid": logind.dbus_pid(),
        "canSuspend": "na",
        "canHibernate": "na",
    })) {
        return ExitCode::FAILURE;
    }
    let why = end.wait();
    let log = logind.log();
    drop(logind);
    eprintln!("lidguard-private-logind: stopped ({why}); systemd-logind's output:\n{log}");
    ExitCode::SUCCESS
}

/// Starts logind and checks that it cannot put this machine to sleep.
fn start() -> Result<lidguard_testbus::PrivateLogind, lidguard_testbus::BusError> {
    let logind = lidguard_testbus::PrivateLogind::start()?;
    for method in ["CanSuspend", "CanHibernate"] {
        let answer = logind.can(method)?;
        if answer != "na" {
            return Err(lidguard_testbus::BusError::Failed(format!(
                "refusing to serve: logind answers {method}={answer:?} here, so a suspend request \
                 could really suspend this machine (only `na` is safe)"
            )));
        }
    }
    Ok(logind)
}

/// Prints one JSON line on stdout and flushes; false when stdout is gone.
fn print_line(value: &serde_json::Value) -> bool {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{value}")
        .and_then(|()| stdout.flush())
        .is_ok()
}

/// What ends the service: stdin's end-of-file or SIGTERM, SIGINT, SIGHUP.
#[cfg(unix)]
struct End {
    runtime: tokio::runtime::Runtime,
    signals: [(tokio::signal::unix::Signal, &'static str); 3],
}

#[cfg(unix)]
impl End {
    /// Installs the signal handlers (they hold from now on).
    fn listen() -> Result<End, lidguard_testbus::BusError> {
        use tokio::signal::unix::{SignalKind, signal};

        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("no async runtime for signals: {e}"))?;
        let entered = runtime.enter();
        let listen = |kind: SignalKind, name: &'static str| {
            signal(kind)
                .map(|s| (s, name))
                .map_err(|e| lidguard_testbus::BusError::io(format!("cannot listen for {name}"), e))
        };
        let signals = [
            listen(SignalKind::terminate(), "SIGTERM")?,
            listen(SignalKind::interrupt(), "SIGINT")?,
            listen(SignalKind::hangup(), "SIGHUP")?,
        ];
        drop(entered);
        Ok(End { runtime, signals })
    }

    /// Blocks until stdin reaches end-of-file or one of the signals arrives; says which.
    fn wait(self) -> &'static str {
        let End {
            runtime,
            signals: [(mut term, a), (mut int, b), (mut hup, c)],
        } = self;
        let (sender, receiver) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
            let _ = sender.send(());
        });
        runtime.block_on(async move {
            tokio::select! {
                _ = receiver => "stdin closed",
                _ = term.recv() => a,
                _ = int.recv() => b,
                _ = hup.recv() => c,
            }
        })
    }
}

#[cfg(not(unix))]
struct End;

#[cfg(not(unix))]
impl End {
    fn listen() -> Result<End, lidguard_testbus::BusError> {
        Err("a private systemd-logind needs Linux".to_owned())
    }

    fn wait(self) -> &'static str {
        "not Unix"
    }
}
