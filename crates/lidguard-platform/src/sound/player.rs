//! Playing the file: the first player on `PATH`, waited for with a timeout and killed when it
//! overruns.

use std::ffi::OsStr;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use super::files::has_extension;
use super::{PLAYERS, POLL, SoundError};

pub(super) fn no_player_message(looked_for: &[&str]) -> String {
    let mut message = format!(
        "no sound player found (looked for {} on PATH",
        looked_for.join(", ")
    );
    let packages = if looked_for.contains(&"aplay") {
        "pipewire-bin, pulseaudio-utils or alsa-utils"
    } else {
        message.push_str("; aplay plays only .wav files");
        "pipewire-bin or pulseaudio-utils"
    };
    message.push_str("); install ");
    message.push_str(packages);
    message
}

/// The first executable file called `name` in the directories of `path` (a `PATH` value).
///
/// Empty and relative entries are skipped, so the current directory is never searched. `None`
/// when `path` is `None` or nothing matches.
pub fn find_program(name: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

pub(super) fn is_executable(path: &Path) -> bool {
    let Ok(metadata) = fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        metadata.is_file() && metadata.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        metadata.is_file()
    }
}

/// The player for `file`: the first of [`PLAYERS`] found on `path` (a `PATH` value), leaving out
/// `aplay` unless `file` is a `.wav` file.
pub fn choose_player(file: &Path, path: Option<&OsStr>) -> Result<PathBuf, SoundError> {
    let wav = has_extension(file, "wav");
    let looked_for: Vec<&'static str> = PLAYERS
        .into_iter()
        .filter(|player| wav || *player != "aplay")
        .collect();
    looked_for
        .iter()
        .find_map(|player| find_program(player, path))
        .ok_or(SoundError::NoPlayer { looked_for })
}

pub(super) fn run_player(player: &Path, file: &Path, timeout: Duration) -> Result<(), SoundError> {
    let mut command = Command::new(player);
    command
        .arg(file)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let child = spawn(&mut command).map_err(|source| SoundError::Spawn {
        player: player.to_owned(),
        source,
    })?;
    match wait_with_timeout(child, timeout) {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(SoundError::Failed {
            player: player.to_owned(),
            file: file.to_owned(),
            status,
        }),
        Err(WaitError::TimedOut) => Err(SoundError::TimedOut {
            player: player.to_owned(),
            file: file.to_owned(),
            timeout,
        }),
        Err(WaitError::Io(source)) => Err(SoundError::Wait {
            player: player.to_owned(),
            source,
        }),
    }
}

/// Starts `command`, retrying briefly while the program is "busy": a program that was just
/// written (by an installer, or a test) can be reported busy for a moment when another thread
/// forks meanwhile.
pub(super) fn spawn(command: &mut Command) -> io::Result<Child> {
    let mut attempts = 0;
    loop {
        match command.spawn() {
            Err(error) if error.kind() == io::ErrorKind::ExecutableFileBusy && attempts < 10 => {
                attempts += 1;
                thread::sleep(Duration::from_millis(20));
            }
            result => return result,
        }
    }
}

pub(super) enum WaitError {
    TimedOut,
    Io(io::Error),
}

/// Waits for `child` to exit, at most `timeout`; then kills it. A killed child is reaped on a
/// background thread so that this never hangs on a process that will not die.
pub(super) fn wait_with_timeout(
    mut child: Child,
    timeout: Duration,
) -> Result<ExitStatus, WaitError> {
    let deadline = Instant::now().checked_add(timeout);
    loop {
        let error = match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) => {
                let now = Instant::now();
                match deadline {
                    Some(deadline) if now >= deadline => WaitError::TimedOut,
                    Some(deadline) => {
                        thread::sleep(POLL.min(deadline - now));
                        continue;
                    }
                    None => {
                        thread::sleep(POLL);
                        continue;
                    }
                }
            }
            Err(error) => WaitError::Io(error),
        };
        if let Err(error) = child.kill() {
            tracing::debug!(%error, pid = child.id(), "could not kill a child process");
        }
        thread::spawn(move || {
            let _ = child.wait();
        });
        return Err(error);
    }
}

/// Reads `pipe` to its end on a background thread; the text arrives on the returned channel.
pub(super) fn read_in_background(
    pipe: Option<impl Read + Send + 'static>,
) -> mpsc::Receiver<String> {
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        let _ = sender.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    receiver
}
