//! Starting the daemon for a request that found none, and saying at once why it did not start.
//!
//! The daemon is started detached, its stderr a pipe to this client until it listens (then it
//! puts `/dev/null` there, [`REPORT_START`]): a daemon that cannot start says why on that pipe
//! and exits, and the client names that cause instead of waiting for its deadline. A daemon that
//! exits at once without a word found another one holding the lock: when that one does not
//! answer on the socket either, the client says so, with its pid and what is in the socket's
//! place.

use std::io::{self, Read};
use std::path::Path;
use std::process::{Child, ExitStatus};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::{ClientError, request_by};
use crate::places::Places;
use crate::protocol::{Request, Response};

/// The `run-server` flag a client starts the daemon with: report a failed start on stderr,
/// and once listening, put `/dev/null` in stderr's place so the client's reader ends.
pub const REPORT_START: &str = "--report-start";

/// How long a daemon that holds the lock is given to answer (it may be binding its socket
/// again, `socket_keeper`) before the client says it does not.
const HELD_GRACE: Duration = Duration::from_secs(1);

/// How often a daemon is started again when the one holding the lock ended meanwhile.
const MAX_RESPAWNS: u32 = 2;

/// The most of a failing daemon's stderr kept for the message.
const MAX_SAID: u64 = 4096;

/// Sends `request`, starting the daemon first (`exe run-server`, detached) when none answers;
/// everything, the daemon's start included, by `deadline`.
pub fn request_starting_daemon(
    places: &Places,
    request: &Request,
    deadline: Instant,
    exe: &Path,
) -> Result<Response, ClientError> {
    match gone_or(request_by(places, request, deadline)) {
        Err(ClientError::NotRunning { .. }) => {}
        other => return other,
    }
    let mut spawned = Spawned::watch(spawn_daemon(exe)?);
    let mut respawns = 0;
    let started = Instant::now();
    let mut ended: Option<(String, ExitStatus)> = None;
    let mut held_since: Option<Instant> = None;
    let mut pause = Duration::from_millis(2);
    loop {
        let socket = match gone_or(request_by(places, request, deadline)) {
            Err(ClientError::NotRunning { socket }) => socket,
            other => return other,
        };
        if ended.is_none() {
            ended = spawned.ended();
        }
        match &ended {
            Some((said, status)) if !status.success() => {
                return Err(ClientError::Spawn(failed(said, *status, places)));
            }
            // The lock's holder ended meanwhile (it was shutting down): start one again.
            Some(_) if !lock_held(places) && respawns < MAX_RESPAWNS => {
                spawned = Spawned::watch(spawn_daemon(exe)?);
                respawns += 1;
                (ended, held_since) = (None, None);
            }
            Some(_) => {
                let since = *held_since.get_or_insert_with(Instant::now);
                if since.elapsed() >= HELD_GRACE {
                    return Err(ClientError::Spawn(unanswered(places)));
                }
            }
            None => {}
        }
        if Instant::now() >= deadline {
            return Err(ClientError::Spawn(format!(
                "it did not open {socket} within {:?}; see the log in {}",
                started.elapsed(),
                places.log_file().display()
            )));
        }
        std::thread::sleep(pause.min(deadline.saturating_duration_since(Instant::now())));
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// A connection reset before any answer counts as no daemon: one was ending (killed, or
/// leaving after its idle time) as this client connected, and the next one is started.
fn gone_or(result: Result<Response, ClientError>) -> Result<Response, ClientError> {
    match result {
        Err(ClientError::Io { socket, source })
            if source.kind() == io::ErrorKind::ConnectionReset =>
        {
            Err(ClientError::NotRunning { socket })
        }
        other => other,
    }
}

/// Whether a daemon holds the instance lock (the daemon's own `InstanceLock`).
fn lock_held(places: &Places) -> bool {
    std::fs::File::open(places.lock_file())
        .is_ok_and(|f| matches!(f.try_lock(), Err(std::fs::TryLockError::WouldBlock)))
}

/// A daemon this client started: what it said on stderr and how it ended, once it has.
struct Spawned {
    ended: mpsc::Receiver<(String, ExitStatus)>,
}

impl Spawned {
    /// Reads the child's stderr to its end (it ends when the daemon listens or exits), then
    /// waits for the child, on a thread of its own: the daemon is reaped whenever it ends, and
    /// a long-lived caller (an MCP server) keeps no zombie.
    fn watch(mut child: Child) -> Spawned {
        let (to, ended) = mpsc::channel();
        std::thread::spawn(move || {
            let mut said = Vec::new();
            if let Some(stderr) = child.stderr.take() {
                let mut stderr = stderr.take(MAX_SAID);
                let _ = stderr.read_to_end(&mut said);
                let _ = io::copy(&mut stderr.into_inner(), &mut io::sink());
            }
            if let Ok(status) = child.wait() {
                let _ = to.send((String::from_utf8_lossy(&said).into_owned(), status));
            }
        });
        Spawned { ended }
    }

    /// How the daemon ended, when it has.
    fn ended(&self) -> Option<(String, ExitStatus)> {
        self.ended.try_recv().ok()
    }
}

/// A daemon that exited with an error: its own words (its last error line, less the program's
/// prefix, else the last line it wrote), else its status and where its log is.
fn failed(said: &str, status: ExitStatus, places: &Places) -> String {
    let lines = || said.lines().map(str::trim);
    let last = lines()
        .rev()
        .find_map(|line| line.strip_prefix("lidguard: error: "))
        .or_else(|| lines().rfind(|line| !line.is_empty()));
    match last {
        Some(line) => line.to_owned(),
        None => format!(
            "it exited ({status}) without a word; see the log in {}",
            places.log_file().display()
        ),
    }
}

/// Another daemon holds the lock but does not answer: which one, and what is in the socket's
/// place.
fn unanswered(places: &Places) -> String {
    let socket = places.socket();
    let pid = std::fs::read_to_string(places.lock_file())
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok());
    let (who, what_to_do) = match pid {
        Some(pid) => (
            format!("a lidguard daemon (pid {pid})"),
            format!("stop it (`kill {pid}`) and try again"),
        ),
        None => (
            "a lidguard daemon".to_owned(),
            "stop it and try again".to_owned(),
        ),
    };
    format!(
        "{who} holds {} but does not answer on {} ({}); it may be stopped or stuck: {what_to_do}",
        places.lock_file().display(),
        socket.display(),
        found_at(&socket)
    )
}

/// What is at the socket's path, for people.
fn found_at(socket: &Path) -> &'static str {
    let Ok(meta) = std::fs::symlink_metadata(socket) else {
        return "nothing is there";
    };
    let kind = meta.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_socket() {
            return "the socket there refuses connections";
        }
    }
    if kind.is_symlink() {
        "a link is in the socket's place"
    } else if kind.is_dir() {
        "a folder is in the socket's place"
    } else if kind.is_file() {
        "a file is in the socket's place"
    } else {
        "something else is in the socket's place"
    }
}

/// Starts `exe run-server` in its own session, stdin and stdout on /dev/null and stderr on a
/// pipe to this client until the daemon listens, so hook callers never wait on pipes the
/// daemon holds, and the daemon outlives the terminal that started it. It inherits our
/// environment, so it resolves the same places.
#[cfg(unix)]
fn spawn_daemon(exe: &Path) -> Result<Child, ClientError> {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    let mut cmd = Command::new(exe);
    cmd.args(["run-server", REPORT_START])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            rustix::process::setsid().map_err(io::Error::from)?;
            Ok(())
        });
    }
    cmd.spawn()
        .map_err(|e| ClientError::Spawn(format!("{}: {e}", exe.display())))
}

/// Starts `exe run-server` detached from the caller's console, in its own process group,
/// stdin and stdout on NUL and stderr on a pipe to this client until the daemon listens. The
/// caller's own standard handles are made non-inheritable first: std creates children with
/// handle inheritance on, and a daemon holding a hook's stdout pipe would keep the agent
/// waiting for end-of-file.
#[cfg(windows)]
fn spawn_daemon(exe: &Path) -> Result<Child, ClientError> {
    use std::os::windows::process::CommandExt;
    use std::process::{Command, Stdio};
    use windows_sys::Win32::Foundation::{HANDLE_FLAG_INHERIT, SetHandleInformation};
    use windows_sys::Win32::System::Console::{
        GetStdHandle, STD_ERROR_HANDLE, STD_INPUT_HANDLE, STD_OUTPUT_HANDLE,
    };
    use windows_sys::Win32::System::Threading::{
        CREATE_BREAKAWAY_FROM_JOB, CREATE_NEW_PROCESS_GROUP, DETACHED_PROCESS,
    };

    for which in [STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE] {
        // SAFETY: plain handle-table calls on our own standard handles; a null or invalid
        // handle only makes SetHandleInformation fail, which is harmless here.
        unsafe {
            let handle = GetStdHandle(which);
            if !handle.is_null() {
                SetHandleInformation(handle, HANDLE_FLAG_INHERIT, 0);
            }
        }
    }
    let spawn = |flags: u32| {
        Command::new(exe)
            .args(["run-server", REPORT_START])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .creation_flags(flags)
            .spawn()
    };
    let detached = DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP;
    // Leave the caller's job when allowed, so an agent that kills its job on exit does not take
    // the daemon (and with it the lid-action restore) down mid-way; a job that forbids
    // breakaway refuses the flag with access denied, and then the daemon stays in it.
    spawn(detached | CREATE_BREAKAWAY_FROM_JOB)
        .or_else(|_| spawn(detached))
        .map_err(|e| ClientError::Spawn(format!("{}: {e}", exe.display())))
}

#[cfg(not(any(unix, windows)))]
fn spawn_daemon(exe: &Path) -> Result<Child, ClientError> {
    Err(ClientError::Spawn(format!(
        "{}: starting the daemon is not supported on this platform in this build",
        exe.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn status(code: i32) -> ExitStatus {
        use std::os::unix::process::ExitStatusExt;
        ExitStatus::from_raw(code << 8)
    }

    #[cfg(unix)]
    #[test]
    fn a_failed_start_is_told_in_the_daemons_last_words() {
        let places = Places::under(Path::new("/nowhere"));
        let said = "lidguard: warning: something minor\n\
                    lidguard: error: cannot listen on /x/lidguard.sock: Permission denied\n\
                    a line after\n";
        assert_eq!(
            failed(said, status(1), &places),
            "cannot listen on /x/lidguard.sock: Permission denied"
        );
        let silent = failed("", status(1), &places);
        assert!(
            silent.contains("without a word") && silent.contains("/nowhere/state/lidguard.log"),
            "{silent}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_daemon_that_does_not_answer_is_named_with_what_is_in_the_sockets_place() {
        let dir = tempfile::tempdir().unwrap();
        let places = Places::under(dir.path());
        std::fs::create_dir_all(&places.runtime_dir).unwrap();
        lidguard_files::atomic::write(&places.lock_file(), b"4321\n", 0o600).unwrap();
        lidguard_files::atomic::write(&places.socket(), b"x", 0o600).unwrap();
        let said = unanswered(&places);
        assert!(said.contains("(pid 4321)"), "{said}");
        assert!(said.contains("`kill 4321`"), "{said}");
        assert!(said.contains("a file is in the socket's place"), "{said}");
    }
}
