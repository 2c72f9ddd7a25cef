//! `lidguard run [--reason TEXT] [--command-only] -- CMD [ARGS…]`: keeps the machine awake while
//! a command runs, as a lidguard session (provider `custom`, id `run:<reason or command name>:<pid
//! of lidguard>`, lidguard's own process watched), so the lid policy, `status`, the webhooks and
//! the suspend flow apply as they do to agents.
//!
//! The session is taken (and protection held, or its failure said) before the command starts,
//! and it lasts as long as the work: a command's session has no inactivity timeout, and on Linux
//! lidguard adopts what the command leaves running in the background (as a child subreaper) and
//! holds until the last process of its process group exits. The command's stdin, stdout and
//! stderr are its own (inherited, never read); its exit code is lidguard's (128 + N when a signal
//! N ended it, as shells report). SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 and SIGALRM sent to
//! lidguard are passed on to the command; so are SIGINT and SIGQUIT, unless lidguard runs in the
//! terminal's foreground, where the terminal already delivers them to the command itself. Once the command has exited, any of
//! them ends the wait for its background processes. When the daemon cannot be reached the
//! command still runs, with a warning.

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

use super::session::{REQUEST_TIMEOUT, STARTUP_TIMEOUT, unprotected_warning};

pub(crate) fn run(places: &Places, args: RunArgs) -> anyhow::Result<ExitCode> {
    let Some((program, rest)) = args.command.split_first() else {
        anyhow::bail!("no command given: `lidguard run -- CMD [ARGS…]`");
    };
    // Handlers first, so no signal meant for the command can end lidguard after the spawn.
    let forward = signals::Forwarder::install();
    let name = args.reason.unwrap_or_else(|| name_of(program));
    let session = SessionRef {
        provider: Provider::Custom,
        session_id: format!("run:{name}:{}", std::process::id()),
        provider_name: None,
    };
    // The session before the command: it never runs unprotected.
    let started = start(places, &session);
    // After the start, so a daemon lidguard launched is not adopted (it has left the group
    // anyway, but would be waited for as a child).
    let follow = !args.command_only && background::adopt_orphans();
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
            if started {
                stop(places, &session, format!("cannot run the command: {e}"));
            }
            return Ok(ExitCode::from(code));
        }
    };
    forward.to(child.id());
    let status = child.wait()?;
    let code = exit_code(&status);
    // A signal while the command ran asked the work to stop: its leftovers are not waited for.
    if follow && !forward.signalled() && background::left_running() {
        let leave = {
            let places = places.clone();
            let session = session.clone();
            move || {
                if started {
                    stop(
                        &places,
                        &session,
                        format!(
                            "command exited ({code}); stopped waiting for its background processes"
                        ),
                    );
                }
                std::process::exit(i32::from(code));
            }
        };
        forward.on_signal_leave(Box::new(leave));
        output::note(&format!(
            "{} exited ({code}); its session lasts until the processes it left running in the \
             background exit (a signal, or Ctrl-C, stops waiting; --command-only does not wait)",
            name_of(program)
        ));
        background::wait_for_group();
    }
    if started {
        stop(places, &session, format!("command exited ({code})"));
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

/// Starts the session (and the daemon when needed), watching lidguard's own process; a warning
/// when that fails or when protection cannot be held.
fn start(places: &Places, session: &SessionRef) -> bool {
    let request = Request::Start {
        session: session.clone(),
        cwd: std::env::current_dir()
            .ok()
            .map(|d| d.display().to_string()),
        transcript_path: None,
        watched_pid: Some(std::process::id()),
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
        Ok(response) if response.ok => {
            if let Some(warning) = unprotected_warning(&response) {
                output::warn(&format!("{warning} (the command runs all the same)"));
            }
            true
        }
        Ok(response) => {
            output::warn(&format!(
                "the machine is not kept awake for this command: {}",
                response.message
            ));
            false
        }
        Err(e) => {
            output::warn(&format!(
                "the machine is not kept awake for this command: {e}"
            ));
            false
        }
    }
}

/// Ends the session; the daemon may have ended it already, watching lidguard's process.
fn stop(places: &Places, session: &SessionRef, end_reason: String) {
    let stop = Request::Stop {
        session: session.clone(),
        kind: StopKind::Manual,
        end_reason: Some(end_reason),
        pending_work: None,
    };
    let _ = client::request(places, &stop, REQUEST_TIMEOUT);
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

    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, mpsc};

    use rustix::process::{Pid, Signal, kill_process};
    use tokio::signal::unix::{SignalKind, signal};

    /// What a signal does.
    enum Target {
        /// Passed on to the running command.
        Command(Pid),
        /// The command has exited: the signal ends lidguard's wait for its background processes.
        Leave(Box<dyn FnOnce() + Send>),
    }

    /// Handlers installed on a thread of their own; they forward once the command runs.
    pub(super) struct Forwarder {
        target: Option<tokio::sync::mpsc::UnboundedSender<Target>>,
        /// Set once a signal came while the command ran (passed on, or sent to it by the
        /// terminal too).
        signalled: Arc<AtomicBool>,
    }

    impl Forwarder {
        /// Installs the handlers (before the command starts), or nothing when that fails.
        pub(super) fn install() -> Forwarder {
            let (ready_tx, ready_rx) = mpsc::channel::<bool>();
            let (target_tx, target_rx) = tokio::sync::mpsc::unbounded_channel::<Target>();
            let signalled = Arc::new(AtomicBool::new(false));
            let flag = Arc::clone(&signalled);
            let spawned = std::thread::Builder::new()
                .name("signals".into())
                .spawn(move || forward(&ready_tx, target_rx, &flag));
            let ready = spawned.is_ok() && ready_rx.recv().unwrap_or(false);
            Forwarder {
                target: ready.then_some(target_tx),
                signalled,
            }
        }

        /// Whether a signal came while the command ran.
        pub(super) fn signalled(&self) -> bool {
            self.signalled.load(Ordering::SeqCst)
        }

        /// Starts passing signals on to `pid`.
        pub(super) fn to(&self, pid: u32) {
            if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
                self.send(Target::Command(pid));
            }
        }

        /// From now on a signal runs `leave` (which ends lidguard) instead of passing it on.
        pub(super) fn on_signal_leave(&self, leave: Box<dyn FnOnce() + Send>) {
            self.send(Target::Leave(leave));
        }

        fn send(&self, target: Target) {
            if let Some(tx) = &self.target {
                let _ = tx.send(target);
            }
        }
    }

    fn forward(
        ready: &mpsc::Sender<bool>,
        mut targets: tokio::sync::mpsc::UnboundedReceiver<Target>,
        signalled: &AtomicBool,
    ) {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            let _ = ready.send(false);
            return;
        };
        runtime.block_on(async {
            // Every signal a terminal or a supervisor sends whose default would end lidguard
            // without the command; INT and QUIT come from the terminal to the whole foreground
            // group, so they are passed on only when lidguard is not in it.
            let kinds = [
                (SignalKind::terminate(), Signal::TERM, true),
                (SignalKind::hangup(), Signal::HUP, true),
                (SignalKind::interrupt(), Signal::INT, false),
                (SignalKind::quit(), Signal::QUIT, false),
                (SignalKind::user_defined1(), Signal::USR1, true),
                (SignalKind::user_defined2(), Signal::USR2, true),
                (SignalKind::alarm(), Signal::ALARM, true),
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
            let mut target = None;
            loop {
                tokio::select! {
                    next = targets.recv() => match next {
                        Some(next) => target = Some(next),
                        None => return,
                    },
                    Some((sig, always)) = rx.recv() => match target.take() {
                        Some(Target::Command(pid)) => {
                            // Asked to stop, whether the terminal or lidguard delivers it.
                            signalled.store(true, Ordering::SeqCst);
                            if always || !in_terminal_foreground() {
                                let _ = kill_process(pid, sig);
                            }
                            target = Some(Target::Command(pid));
                        }
                        Some(Target::Leave(leave)) => leave(),
                        // Before the command runs a signal changes nothing.
                        None => {}
                    },
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

        pub(super) fn on_signal_leave(&self, _leave: Box<dyn FnOnce() + Send>) {}

        pub(super) fn signalled(&self) -> bool {
            false
        }
    }
}

#[cfg(target_os = "linux")]
mod background {
    //! What a command leaves running: adopted as it is orphaned (a child subreaper), waited
    //! for while it stays in lidguard's process group. A daemon that starts a session of its own
    //! (`setsid`) has left the group and is not waited for; nor is lidguard's own daemon.

    use rustix::io::Errno;
    use rustix::process::{WaitOptions, getpgrp, getpid, set_child_subreaper, waitpgid};

    /// Makes lidguard the parent of the command's orphans; false when the kernel refuses.
    pub(super) fn adopt_orphans() -> bool {
        set_child_subreaper(Some(getpid())).is_ok()
    }

    /// Whether processes of lidguard's group are left among its children (the command's
    /// background work, adopted as its parents exit); reaps those that have exited.
    pub(super) fn left_running() -> bool {
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
    pub(super) fn wait_for_group() {
        loop {
            match waitpgid(getpgrp(), WaitOptions::empty()) {
                Ok(_) | Err(Errno::INTR) => {}
                Err(_) => return,
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod background {
    //! Elsewhere the session ends with the command itself (no child subreaper).

    pub(super) fn adopt_orphans() -> bool {
        false
    }

    pub(super) fn left_running() -> bool {
        false
    }

    pub(super) fn wait_for_group() {}
}
