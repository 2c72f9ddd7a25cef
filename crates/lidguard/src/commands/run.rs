//! `lidguard run [--reason TEXT] -- CMD [ARGS…]`: keeps the machine awake while a command runs,
//! as a lidguard session (provider `custom`, id `run:<reason or command name>:<pid>`, the
//! command's process watched), so the lid policy,
//! `status`, the webhooks and the suspend flow apply as they do to agents.
//!
//! The command's stdin, stdout and stderr are its own (inherited, never read); its exit code is
//! lidguard's (128 + N when a signal N ended it, as shells report). SIGTERM and SIGHUP sent to
//! lidguard are passed on to the command; so are SIGINT and SIGQUIT, unless lidguard runs in the
//! terminal's foreground, where the terminal already delivers them to the command itself. When
//! the daemon cannot be reached the command still runs, with a warning.

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

use lidguard_core::provider::Provider;
use lidguard_core::session::StopKind;
use lidguard_ipc::Places;
use lidguard_ipc::client;
use lidguard_ipc::protocol::{Request, SessionRef};

use crate::cli::RunArgs;
use crate::output;

use super::session::{REQUEST_TIMEOUT, STARTUP_TIMEOUT};

pub(crate) fn run(places: &Places, args: RunArgs) -> anyhow::Result<ExitCode> {
    let Some((program, rest)) = args.command.split_first() else {
        anyhow::bail!("no command given: `lidguard run -- CMD [ARGS…]`");
    };
    // Handlers first, so no signal meant for the command can end lidguard after the spawn.
    let forward = signals::Forwarder::install();
    let mut child = match std::process::Command::new(program).args(rest).spawn() {
        Ok(child) => child,
        Err(e) => {
            output::error(&format!("cannot run {}: {e}", program.to_string_lossy()));
            // As shells answer: 127 not found, 126 found but not runnable.
            let code = if e.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            };
            return Ok(ExitCode::from(code));
        }
    };
    forward.to(child.id());
    let name = args.reason.unwrap_or_else(|| name_of(program));
    let session = SessionRef {
        provider: Provider::Custom,
        session_id: format!("run:{name}:{}", child.id()),
        provider_name: None,
    };
    let started = start(places, &session, child.id());
    let status = child.wait()?;
    let code = exit_code(&status);
    if started {
        let stop = Request::Stop {
            session,
            kind: StopKind::Manual,
            end_reason: Some(format!("command exited ({code})")),
            pending_work: None,
        };
        // The daemon may have ended it already, watching the process.
        let _ = client::request(places, &stop, REQUEST_TIMEOUT);
    }
    Ok(ExitCode::from(code))
}

/// The command's file name, for `status`.
fn name_of(program: &OsString) -> String {
    Path::new(program)
        .file_name()
        .unwrap_or(program)
        .to_string_lossy()
        .into_owned()
}

/// Starts the session (and the daemon when needed); a warning when that fails.
fn start(places: &Places, session: &SessionRef, pid: u32) -> bool {
    let request = Request::Start {
        session: session.clone(),
        cwd: std::env::current_dir()
            .ok()
            .map(|d| d.display().to_string()),
        transcript_path: None,
        watched_pid: Some(pid),
    };
    let started = places
        .ensure_runtime_dir()
        .map_err(anyhow::Error::from)
        .and_then(|()| Ok(std::env::current_exe()?))
        .and_then(|exe| {
            client::request_starting_daemon(
                places,
                &request,
                std::time::Instant::now() + STARTUP_TIMEOUT + REQUEST_TIMEOUT,
                &exe,
            )
            .map_err(anyhow::Error::from)
        });
    match started {
        Ok(_) => true,
        Err(e) => {
            output::warn(&format!(
                "the machine is not kept awake for this command: {e}"
            ));
            false
        }
    }
}

/// The exit code a shell would report.
fn exit_code(status: &std::process::ExitStatus) -> u8 {
    if let Some(code) = status.code() {
        return u8::try_from(code & 0xff).unwrap_or(1);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return u8::try_from(128 + signal).unwrap_or(255);
        }
    }
    1
}

#[cfg(unix)]
mod signals {
    //! Signal handlers that pass signals on to the command.

    use std::sync::mpsc;

    use rustix::process::{Pid, Signal, kill_process};
    use tokio::signal::unix::{SignalKind, signal};

    /// Handlers installed on a thread of their own; they forward once the command runs.
    pub(super) struct Forwarder {
        child: Option<mpsc::Sender<u32>>,
    }

    impl Forwarder {
        /// Installs the handlers (before the command starts), or nothing when that fails.
        pub(super) fn install() -> Forwarder {
            let (ready_tx, ready_rx) = mpsc::channel::<bool>();
            let (child_tx, child_rx) = mpsc::channel::<u32>();
            let spawned = std::thread::Builder::new()
                .name("signals".into())
                .spawn(move || forward(&ready_tx, &child_rx));
            let ready = spawned.is_ok() && ready_rx.recv().unwrap_or(false);
            Forwarder {
                child: ready.then_some(child_tx),
            }
        }

        /// Starts passing signals on to `pid`.
        pub(super) fn to(&self, pid: u32) {
            if let Some(child) = &self.child {
                let _ = child.send(pid);
            }
        }
    }

    fn forward(ready: &mpsc::Sender<bool>, child: &mpsc::Receiver<u32>) {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            let _ = ready.send(false);
            return;
        };
        runtime.block_on(async {
            let kinds = [
                (SignalKind::terminate(), Signal::TERM, true),
                (SignalKind::hangup(), Signal::HUP, true),
                (SignalKind::interrupt(), Signal::INT, false),
                (SignalKind::quit(), Signal::QUIT, false),
            ];
            let mut streams = Vec::new();
            for (kind, sig, always) in kinds {
                match signal(kind) {
                    Ok(stream) => streams.push((stream, sig, always)),
                    Err(_) => {
                        let _ = ready.send(false);
                        return;
                    }
                }
            }
            let _ = ready.send(true);
            let Some(pid) = child
                .recv()
                .ok()
                .and_then(|p| i32::try_from(p).ok())
                .and_then(Pid::from_raw)
            else {
                return;
            };
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            for (mut stream, sig, always) in streams {
                let tx = tx.clone();
                tokio::spawn(async move {
                    while stream.recv().await.is_some() {
                        if tx.send((sig, always)).is_err() {
                            break;
                        }
                    }
                });
            }
            while let Some((sig, always)) = rx.recv().await {
                if always || !in_terminal_foreground() {
                    let _ = kill_process(pid, sig);
                }
            }
        });
    }

    /// Whether lidguard runs in its terminal's foreground process group: then the terminal sends
    /// Ctrl-C and Ctrl-\ to the command as well.
    fn in_terminal_foreground() -> bool {
        rustix::termios::tcgetpgrp(std::io::stdin())
            .is_ok_and(|group| group == rustix::process::getpgrp())
    }
}

#[cfg(not(unix))]
mod signals {
    //! On Windows Ctrl-C reaches every process of the console, the command included.

    pub(super) struct Forwarder;

    impl Forwarder {
        pub(super) fn install() -> Forwarder {
            Forwarder
        }

        pub(super) fn to(&self, _pid: u32) {}
    }
}
