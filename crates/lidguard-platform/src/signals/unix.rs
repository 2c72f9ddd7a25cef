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
pub struct Forwarder {
    target: Option<tokio::sync::mpsc::UnboundedSender<Target>>,
    /// Set once a signal came while the command ran (passed on, or sent to it by the
    /// terminal too).
    signalled: Arc<AtomicBool>,
}

impl Forwarder {
    /// Installs the handlers (before the command starts), or nothing when that fails.
    pub fn install() -> Forwarder {
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
    pub fn signalled(&self) -> bool {
        self.signalled.load(Ordering::SeqCst)
    }

    /// Starts passing signals on to `pid`.
    pub fn to(&self, pid: u32) {
        if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
            self.send(Target::Command(pid));
        }
    }

    /// From now on a signal runs `leave` (which ends lidguard) instead of passing it on.
    pub fn on_signal_leave(&self, leave: Box<dyn FnOnce() + Send>) {
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

/// The signal that ended the process, if one did.
pub fn killed_by(status: &std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}
