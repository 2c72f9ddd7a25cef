//! The requests to stop the daemon from outside.

/// The requests to stop from outside: SIGTERM and SIGINT on Unix; Ctrl+C, Ctrl+Break and the
/// console closing on Windows.
pub(super) struct StopSignals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
    #[cfg(windows)]
    ctrl_c: tokio::signal::windows::CtrlC,
    #[cfg(windows)]
    ctrl_break: tokio::signal::windows::CtrlBreak,
    #[cfg(windows)]
    close: tokio::signal::windows::CtrlClose,
}

impl StopSignals {
    pub(super) fn new() -> std::io::Result<StopSignals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(StopSignals {
                term: signal(SignalKind::terminate())?,
                int: signal(SignalKind::interrupt())?,
            })
        }
        #[cfg(windows)]
        {
            use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close};
            Ok(StopSignals {
                ctrl_c: ctrl_c()?,
                ctrl_break: ctrl_break()?,
                close: ctrl_close()?,
            })
        }
    }

    /// Waits for one; says which.
    pub(super) async fn recv(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.term.recv() => "SIGTERM",
                _ = self.int.recv() => "SIGINT",
            }
        }
        #[cfg(windows)]
        {
            tokio::select! {
                _ = self.ctrl_c.recv() => "Ctrl+C",
                _ = self.ctrl_break.recv() => "Ctrl+Break",
                _ = self.close.recv() => "console closed",
            }
        }
    }
}
