//! Playing the post-stop suspend sound before the machine is suspended.
//!
//! [`play`] turns the user's sound setting into a file, plays it with the first sound player
//! found on `PATH` and waits until it has finished, so the whole sound is heard before the
//! machine goes to sleep. On request it first raises the default output's volume (and unmutes
//! it) with `pactl`, and puts both back afterwards.
//!
//! - System sounds (`Asterisk`, `Beep`, …) are looked up in the freedesktop sound themes below
//!   `<data dir>/sounds` ([`theme_names`], [`data_dirs_from_env`]); a custom sound must be an
//!   existing `.wav` file.
//! - Players, first found wins: `pw-play`, `paplay`, `aplay` (`aplay` only for `.wav` files).
//! - Every external program runs with a timeout and is killed when it overruns.
//!
//! A failure never blocks a suspend: a missing player, sound file or audio device, a player
//! that hangs or a `pactl` that fails is logged and reported as a [`SoundError`]; nothing here
//! panics or waits longer than the timeout it was given (plus a few `pactl` calls of at most
//! [`PACTL_TIMEOUT`] each). The functions block; call them from
//! `tokio::task::spawn_blocking`.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use lidguard_core::settings::{SoundSetting, SystemSound};

/// The sound players tried, in order; the first found on `PATH` plays the sound.
pub const PLAYERS: [&str; 3] = ["pw-play", "paplay", "aplay"];

/// The longest a single `pactl` call may take before it is killed.
pub const PACTL_TIMEOUT: Duration = Duration::from_secs(5);

/// A sensible overall timeout for playing a sound (a suspend sound is a few seconds long).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// File extensions a theme sound may have.
const THEME_EXTENSIONS: [&str; 3] = ["oga", "ogg", "wav"];

/// How deep below `<data dir>/sounds` the search goes (guards against symlink loops).
const MAX_DEPTH: usize = 8;

/// How often a running child is checked.
const POLL: Duration = Duration::from_millis(50);

/// The `pactl` name of the default output.
const SINK: &str = "@DEFAULT_SINK@";

/// How long to wait for a finished child's output to be collected.
const OUTPUT_GRACE: Duration = Duration::from_secs(1);

/// Which file was played, and by which player.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayedSound {
    /// The sound file.
    pub file: PathBuf,
    /// The player program that played it (full path, e.g. `/usr/bin/pw-play`).
    pub player: PathBuf,
}

/// Why a sound was not played. Each message says what to do about it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SoundError {
    /// The setting is off: there is nothing to play (not a fault).
    #[error("the suspend sound is off; nothing to play")]
    Off,
    /// The setting text is not a sound setting.
    #[error(
        "invalid sound setting {0:?}; use off, a system sound name (Asterisk, Beep, \
         Exclamation, Hand, Question) or the path of a .wav file"
    )]
    InvalidSetting(String),
    /// A custom sound that is not a `.wav` file.
    #[error(
        "sound file {} is not a .wav file; pick a .wav file or a system sound name",
        .0.display()
    )]
    NotWav(PathBuf),
    /// A custom sound file that cannot be found or read.
    #[error(
        "sound file {} cannot be used ({source}); check the path or pick a system sound name",
        .path.display()
    )]
    FileNotFound {
        /// The path as set.
        path: PathBuf,
        /// What the file system said.
        source: io::Error,
    },
    /// A custom sound path that is a directory or another non-file.
    #[error("sound file {} is not a regular file; pick a .wav file", .0.display())]
    NotAFile(PathBuf),
    /// No theme file for a system sound.
    #[error(
        "system sound {sound} not found (looked for {} as .oga, .ogg or .wav files below {}); \
         install a sound theme such as sound-theme-freedesktop, or pick a .wav file",
        .names.join(", "),
        join_paths_for_display(.searched)
    )]
    SystemSoundNotFound {
        /// The sound asked for.
        sound: SystemSound,
        /// The theme names tried, in order.
        names: &'static [&'static str],
        /// The directories searched (`<data dir>/sounds`).
        searched: Vec<PathBuf>,
    },
    /// None of the players is on `PATH`.
    #[error("{}", no_player_message(.looked_for))]
    NoPlayer {
        /// The players looked for (`aplay` is left out for files it cannot play).
        looked_for: Vec<&'static str>,
    },
    /// The player could not be started.
    #[error(
        "could not start sound player {} ({source}); check that it is installed and executable",
        .player.display()
    )]
    Spawn {
        /// The player program.
        player: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
    /// The player could not be waited for.
    #[error("could not wait for sound player {} ({source})", .player.display())]
    Wait {
        /// The player program.
        player: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
    /// The player ran but reported a failure.
    #[error(
        "sound player {} failed ({status}) playing {}; check that a sound server and an audio \
         device are available (try running the player by hand)",
        .player.display(),
        .file.display()
    )]
    Failed {
        /// The player program.
        player: PathBuf,
        /// The sound file.
        file: PathBuf,
        /// How the player exited.
        status: ExitStatus,
    },
    /// The player did not finish in time and was killed.
    #[error(
        "sound player {} did not finish playing {} within {timeout:?} and was stopped; use a \
         shorter sound or check the audio device",
        .player.display(),
        .file.display()
    )]
    TimedOut {
        /// The player program.
        player: PathBuf,
        /// The sound file.
        file: PathBuf,
        /// The timeout that ran out.
        timeout: Duration,
    },
}

fn join_paths_for_display(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return "no data directory".to_owned();
    }
    paths
        .iter()
        .map(|path| path.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn no_player_message(looked_for: &[&str]) -> String {
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

/// The freedesktop sound-theme names tried for a system sound, in order of preference.
pub fn theme_names(sound: SystemSound) -> &'static [&'static str] {
    match sound {
        SystemSound::Asterisk => &["dialog-information", "message", "bell"],
        SystemSound::Beep => &["bell", "audio-volume-change", "message"],
        SystemSound::Exclamation => &["dialog-warning", "bell"],
        SystemSound::Hand => &["dialog-error", "dialog-warning"],
        SystemSound::Question => &["dialog-question", "dialog-information"],
    }
}

/// The XDG data directories of this process's environment, most important first; see
/// [`data_dirs`].
pub fn data_dirs_from_env() -> Vec<PathBuf> {
    data_dirs(lidguard_files::environment::var)
}

/// The XDG data directories, most important first, with environment variables looked up through
/// `var`: `$XDG_DATA_HOME` (default `$HOME/.local/share`), then each entry of `$XDG_DATA_DIRS`
/// (default `/usr/local/share:/usr/share`).
///
/// Empty variables count as unset; relative paths are ignored (as the XDG specification asks)
/// and a directory listed twice is kept only the first time.
pub fn data_dirs(var: impl Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    let lookup = |name: &str| var(name).filter(|value| !value.is_empty());
    let mut dirs: Vec<PathBuf> = Vec::new();
    let home = lookup("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .or_else(|| {
            lookup("HOME")
                .map(PathBuf::from)
                .filter(|dir| dir.is_absolute())
                .map(|home| home.join(".local").join("share"))
        });
    dirs.extend(home);
    let system = lookup("XDG_DATA_DIRS").unwrap_or_else(|| "/usr/local/share:/usr/share".into());
    for dir in std::env::split_paths(&system) {
        if dir.is_absolute() && !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    dirs
}

/// The file a sound setting plays.
///
/// - [`SoundSetting::System`] gives the first theme name of [`theme_names`] that has a file;
///   for that name the data directories are tried in order and, within one, the matching files
///   below `<data dir>/sounds` (searched recursively) in sorted path order. A file matches when
///   its stem is the name and its extension is `oga`, `ogg` or `wav`.
/// - [`SoundSetting::WavFile`] gives the path itself, which must have a `.wav` extension (any
///   case) and be an existing regular file. A relative path is relative to the current
///   directory.
/// - [`SoundSetting::Off`] gives [`SoundError::Off`].
pub fn resolve(setting: &SoundSetting, data_dirs: &[PathBuf]) -> Result<PathBuf, SoundError> {
    match setting {
        SoundSetting::Off => Err(SoundError::Off),
        SoundSetting::System(sound) => resolve_system(*sound, data_dirs),
        SoundSetting::WavFile(path) => resolve_wav(Path::new(path)),
    }
}

fn resolve_wav(path: &Path) -> Result<PathBuf, SoundError> {
    if !has_extension(path, "wav") {
        return Err(SoundError::NotWav(path.to_owned()));
    }
    match fs::metadata(path) {
        Ok(metadata) if metadata.is_file() => Ok(path.to_owned()),
        Ok(_) => Err(SoundError::NotAFile(path.to_owned())),
        Err(source) => Err(SoundError::FileNotFound {
            path: path.to_owned(),
            source,
        }),
    }
}

fn resolve_system(sound: SystemSound, data_dirs: &[PathBuf]) -> Result<PathBuf, SoundError> {
    let names = theme_names(sound);
    let searched: Vec<PathBuf> = data_dirs.iter().map(|dir| dir.join("sounds")).collect();
    let found: Vec<Vec<PathBuf>> = searched
        .iter()
        .map(|root| {
            let mut files = Vec::new();
            collect_theme_files(root, names, 0, &mut files);
            files.sort();
            files
        })
        .collect();
    for name in names {
        for files in &found {
            if let Some(file) = files
                .iter()
                .find(|file| file.file_stem() == Some(OsStr::new(name)))
            {
                return Ok(file.clone());
            }
        }
    }
    Err(SoundError::SystemSoundNotFound {
        sound,
        names,
        searched,
    })
}

/// Adds the files below `dir` whose stem is one of `names` and whose extension is a theme
/// extension. Unreadable directories are skipped.
fn collect_theme_files(dir: &Path, names: &[&str], depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        // Follows symbolic links: themes often link to each other's files.
        let Ok(metadata) = fs::metadata(&path) else {
            continue;
        };
        if metadata.is_dir() {
            if depth < MAX_DEPTH {
                collect_theme_files(&path, names, depth + 1, out);
            }
        } else if metadata.is_file() {
            let stem_matches = path
                .file_stem()
                .and_then(OsStr::to_str)
                .is_some_and(|stem| names.contains(&stem));
            let extension_matches = THEME_EXTENSIONS
                .iter()
                .any(|extension| has_extension(&path, extension));
            if stem_matches && extension_matches {
                out.push(path);
            }
        }
    }
}

/// Whether `path`'s extension is `extension`, ignoring ASCII case.
fn has_extension(path: &Path, extension: &str) -> bool {
    path.extension()
        .and_then(OsStr::to_str)
        .is_some_and(|actual| actual.eq_ignore_ascii_case(extension))
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

fn is_executable(path: &Path) -> bool {
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

/// Plays the sound `setting_text` asks for (a [`SoundSetting`] as stored) to completion, with the
/// data directories of this process's environment and its `PATH`; see [`play_with`].
pub fn play(
    setting_text: &str,
    volume_percent: Option<u8>,
    timeout: Duration,
) -> Result<PlayedSound, SoundError> {
    let path = lidguard_files::environment::var("PATH");
    play_with(
        setting_text,
        volume_percent,
        timeout,
        &data_dirs_from_env(),
        path.as_deref(),
    )
}

/// Plays the sound `setting_text` asks for to completion and returns which file and player were
/// used. Blocking: call it from `tokio::task::spawn_blocking`.
///
/// 1. The setting is parsed and resolved with `data_dirs` ([`resolve`]) and a player is
///    chosen from `path`, a `PATH` value ([`choose_player`]); nothing else happens when either
///    fails.
/// 2. With `volume_percent` (clamped to 1..=100), `pactl` (also looked up on `path`) records the
///    default output's volume and mute state, unmutes it and sets the volume; when `pactl` is
///    missing or fails, the sound plays at the current volume and a warning is logged.
/// 3. The player runs with stdin, stdout and stderr closed; after `timeout` it is killed and
///    [`SoundError::TimedOut`] returned.
/// 4. The recorded volume and mute state are put back, whether or not the sound played.
///
/// Failures are logged here (at `warn`; [`SoundError::Off`] at `debug`), so a caller need not
/// log them again.
pub fn play_with(
    setting_text: &str,
    volume_percent: Option<u8>,
    timeout: Duration,
    data_dirs: &[PathBuf],
    path: Option<&OsStr>,
) -> Result<PlayedSound, SoundError> {
    // Everything that can fail, so that each outcome is logged once below.
    let result = (|| -> Result<PlayedSound, SoundError> {
        let setting = SoundSetting::parse(setting_text)
            .ok_or_else(|| SoundError::InvalidSetting(setting_text.trim().to_owned()))?;
        let file = resolve(&setting, data_dirs)?;
        let player = choose_player(&file, path)?;
        tracing::debug!(
            file = %file.display(),
            player = %player.display(),
            "playing the suspend sound"
        );
        let volume = volume_percent.and_then(|percent| {
            let clamped = percent.clamp(1, 100);
            if clamped != percent {
                tracing::warn!(percent, clamped, "sound volume out of range 1..=100");
            }
            VolumeOverride::apply(clamped, path)
        });
        let result = run_player(&player, &file, timeout);
        // Puts the volume back, also when playing failed.
        drop(volume);
        result.map(|()| PlayedSound { file, player })
    })();
    match &result {
        Ok(played) => tracing::info!(
            file = %played.file.display(),
            player = %played.player.display(),
            "played the suspend sound"
        ),
        Err(SoundError::Off) => tracing::debug!("the suspend sound is off"),
        Err(error) => tracing::warn!(%error, "suspend sound not played"),
    }
    result
}

fn run_player(player: &Path, file: &Path, timeout: Duration) -> Result<(), SoundError> {
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
fn spawn(command: &mut Command) -> io::Result<Child> {
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

enum WaitError {
    TimedOut,
    Io(io::Error),
}

/// Waits for `child` to exit, at most `timeout`; then kills it. A killed child is reaped on a
/// background thread so that this never hangs on a process that will not die.
fn wait_with_timeout(mut child: Child, timeout: Duration) -> Result<ExitStatus, WaitError> {
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
fn read_in_background(pipe: Option<impl Read + Send + 'static>) -> mpsc::Receiver<String> {
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

/// Runs `pactl args…` with [`PACTL_TIMEOUT`] in the C locale; its standard output, or a
/// description of the failure.
fn run_pactl(pactl: &Path, args: &[&str]) -> Result<String, String> {
    let mut command = Command::new(pactl);
    command
        .args(args)
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = spawn(&mut command).map_err(|error| format!("could not start: {error}"))?;
    let stdout = read_in_background(child.stdout.take());
    let stderr = read_in_background(child.stderr.take());
    match wait_with_timeout(child, PACTL_TIMEOUT) {
        Ok(status) if status.success() => Ok(stdout.recv_timeout(OUTPUT_GRACE).unwrap_or_default()),
        Ok(status) => {
            let stderr = stderr.recv_timeout(OUTPUT_GRACE).unwrap_or_default();
            Err(format!("{status}: {}", stderr.trim()))
        }
        Err(WaitError::TimedOut) => Err(format!(
            "did not answer within {PACTL_TIMEOUT:?} and was stopped"
        )),
        Err(WaitError::Io(error)) => Err(format!("could not wait: {error}")),
    }
}

/// Runs `pactl args…`, logging a failure.
fn pactl_or_warn(pactl: &Path, args: &[&str]) -> Option<String> {
    match run_pactl(pactl, args) {
        Ok(output) => Some(output),
        Err(error) => {
            tracing::warn!(command = %args.join(" "), %error, "pactl failed");
            None
        }
    }
}

/// The first percentage (`NN%`) in `pactl get-sink-volume` output.
fn parse_volume_percent(output: &str) -> Option<u32> {
    let bytes = output.as_bytes();
    bytes.iter().enumerate().find_map(|(index, byte)| {
        if *byte != b'%' {
            return None;
        }
        let digits = bytes[..index]
            .iter()
            .rev()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits == 0 {
            return None;
        }
        output[index - digits..index].parse().ok()
    })
}

/// The state in `pactl get-sink-mute` output (`Mute: yes` / `Mute: no`).
fn parse_mute(output: &str) -> Option<bool> {
    output
        .lines()
        .find_map(|line| match line.trim().strip_prefix("Mute:")?.trim() {
            "yes" => Some(true),
            "no" => Some(false),
            _ => None,
        })
}

/// A raised volume of the default output; dropping it puts back what was recorded.
///
/// Only what could be recorded is changed: an unreadable volume is left alone, and so is an
/// unreadable mute state.
struct VolumeOverride {
    pactl: PathBuf,
    volume: Option<u32>,
    muted: Option<bool>,
}

impl VolumeOverride {
    /// Records the volume and mute state, then unmutes and sets `percent`. `None` when `pactl`
    /// is not on `path`.
    fn apply(percent: u8, path: Option<&OsStr>) -> Option<VolumeOverride> {
        let Some(pactl) = find_program("pactl", path) else {
            tracing::warn!(
                "pactl not found on PATH; playing the suspend sound at the current volume \
                 (install pulseaudio-utils to set it)"
            );
            return None;
        };
        let volume = pactl_or_warn(&pactl, &["get-sink-volume", SINK]).and_then(|output| {
            let volume = parse_volume_percent(&output);
            if volume.is_none() {
                tracing::warn!(output = %output.trim(), "could not read the volume from pactl");
            }
            volume
        });
        let muted = pactl_or_warn(&pactl, &["get-sink-mute", SINK]).and_then(|output| {
            let muted = parse_mute(&output);
            if muted.is_none() {
                tracing::warn!(output = %output.trim(), "could not read the mute state from pactl");
            }
            muted
        });
        if muted.is_some() {
            pactl_or_warn(&pactl, &["set-sink-mute", SINK, "0"]);
        }
        if volume.is_some() {
            pactl_or_warn(&pactl, &["set-sink-volume", SINK, &format!("{percent}%")]);
        }
        Some(VolumeOverride {
            pactl,
            volume,
            muted,
        })
    }
}

impl Drop for VolumeOverride {
    fn drop(&mut self) {
        if let Some(volume) = self.volume {
            pactl_or_warn(
                &self.pactl,
                &["set-sink-volume", SINK, &format!("{volume}%")],
            );
        }
        if let Some(muted) = self.muted {
            let state = if muted { "1" } else { "0" };
            pactl_or_warn(&self.pactl, &["set-sink-mute", SINK, state]);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::{OsStr, OsString};
    use std::fs;
    use std::path::{Path, PathBuf};
    use std::time::{Duration, Instant};

    use lidguard_core::settings::{SoundSetting, SystemSound};

    use super::{
        PlayedSound, SoundError, choose_player, data_dirs, find_program, parse_mute,
        parse_volume_percent, play_with, resolve, theme_names,
    };

    fn touch(path: &Path) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, b"RIFF").unwrap();
    }

    fn system(sound: SystemSound) -> SoundSetting {
        SoundSetting::System(sound)
    }

    #[test]
    fn every_system_sound_resolves_through_each_of_its_theme_names() {
        for sound in SystemSound::ALL {
            for (index, name) in theme_names(sound).iter().enumerate() {
                let dir = tempfile::tempdir().unwrap();
                let file = dir
                    .path()
                    .join("sounds/freedesktop/stereo")
                    .join(format!("{name}.oga"));
                touch(&file);
                let found = resolve(&system(sound), &[dir.path().to_owned()]);
                assert_eq!(found.unwrap(), file, "{sound} via name #{index} {name}");
            }
        }
    }

    #[test]
    fn theme_names_match_the_reference() {
        let names = |sound| theme_names(sound).to_vec();
        assert_eq!(
            names(SystemSound::Asterisk),
            ["dialog-information", "message", "bell"]
        );
        assert_eq!(
            names(SystemSound::Beep),
            ["bell", "audio-volume-change", "message"]
        );
        assert_eq!(names(SystemSound::Exclamation), ["dialog-warning", "bell"]);
        assert_eq!(names(SystemSound::Hand), ["dialog-error", "dialog-warning"]);
        assert_eq!(
            names(SystemSound::Question),
            ["dialog-question", "dialog-information"]
        );
    }

    #[test]
    fn earlier_theme_name_wins_over_later_one() {
        let dir = tempfile::tempdir().unwrap();
        let sounds = dir.path().join("sounds");
        let bell = sounds.join("a/bell.oga");
        let message = sounds.join("b/deep/message.ogg");
        let info = sounds.join("z/stereo/dialog-information.wav");
        touch(&bell);
        touch(&message);
        touch(&info);
        let dirs = [dir.path().to_owned()];
        assert_eq!(
            resolve(&system(SystemSound::Asterisk), &dirs).unwrap(),
            info
        );
        fs::remove_file(&info).unwrap();
        assert_eq!(
            resolve(&system(SystemSound::Asterisk), &dirs).unwrap(),
            message
        );
        fs::remove_file(&message).unwrap();
        assert_eq!(
            resolve(&system(SystemSound::Asterisk), &dirs).unwrap(),
            bell
        );
        // Beep prefers bell over message.
        touch(&message);
        assert_eq!(resolve(&system(SystemSound::Beep), &dirs).unwrap(), bell);
    }

    #[test]
    fn data_home_before_data_dirs_and_name_before_directory() {
        let home = tempfile::tempdir().unwrap();
        let shared = tempfile::tempdir().unwrap();
        let dirs = [home.path().to_owned(), shared.path().to_owned()];
        let shared_warning = shared
            .path()
            .join("sounds/freedesktop/stereo/dialog-warning.oga");
        touch(&shared_warning);
        let home_warning = home.path().join("sounds/mine/dialog-warning.wav");
        touch(&home_warning);
        assert_eq!(
            resolve(&system(SystemSound::Exclamation), &dirs).unwrap(),
            home_warning
        );
        // A later name in the first directory loses to an earlier name in a later one.
        fs::remove_file(&home_warning).unwrap();
        touch(&home.path().join("sounds/mine/bell.oga"));
        assert_eq!(
            resolve(&system(SystemSound::Exclamation), &dirs).unwrap(),
            shared_warning
        );
    }

    #[test]
    fn within_one_name_sorted_paths_decide() {
        let dir = tempfile::tempdir().unwrap();
        let first = dir.path().join("sounds/a/bell.ogg");
        touch(&dir.path().join("sounds/b/bell.oga"));
        touch(&first);
        touch(&dir.path().join("sounds/c/bell.wav"));
        let dirs = [dir.path().to_owned()];
        assert_eq!(resolve(&system(SystemSound::Beep), &dirs).unwrap(), first);
    }

    #[test]
    fn missing_system_sound_says_what_was_searched_and_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        // Near misses: wrong extension, wrong stem, a directory with the right name.
        touch(&dir.path().join("sounds/x/dialog-error.mp3"));
        touch(&dir.path().join("sounds/x/dialog-error-2.oga"));
        touch(&dir.path().join("sounds/x/my-dialog-warning.oga"));
        fs::create_dir_all(dir.path().join("sounds/x/dialog-error.oga")).unwrap();
        let missing = dir.path().join("missing");
        let dirs = [dir.path().to_owned(), missing.clone()];
        let error = resolve(&system(SystemSound::Hand), &dirs).unwrap_err();
        assert!(
            matches!(error, SoundError::SystemSoundNotFound { .. }),
            "{error:?}"
        );
        let message = error.to_string();
        assert!(message.contains("system sound Hand not found"), "{message}");
        assert!(
            message.contains("dialog-error, dialog-warning"),
            "{message}"
        );
        assert!(
            message.contains(&dir.path().join("sounds").display().to_string()),
            "{message}"
        );
        assert!(
            message.contains(&missing.join("sounds").display().to_string()),
            "{message}"
        );
        assert!(message.contains("sound-theme-freedesktop"), "{message}");
        assert!(resolve(&system(SystemSound::Hand), &[]).is_err());
    }

    #[test]
    fn wav_files_must_exist_and_be_wav() {
        let dir = tempfile::tempdir().unwrap();
        let wav = dir.path().join("done.WAV");
        touch(&wav);
        let setting = SoundSetting::WavFile(wav.display().to_string());
        assert_eq!(resolve(&setting, &[]).unwrap(), wav);

        let missing = SoundSetting::WavFile(dir.path().join("gone.wav").display().to_string());
        let error = resolve(&missing, &[]).unwrap_err();
        assert!(
            matches!(error, SoundError::FileNotFound { .. }),
            "{error:?}"
        );
        assert!(error.to_string().contains("gone.wav"), "{error}");

        let mp3 = dir.path().join("done.mp3");
        touch(&mp3);
        let error = resolve(&SoundSetting::WavFile(mp3.display().to_string()), &[]).unwrap_err();
        assert!(matches!(error, SoundError::NotWav(_)), "{error:?}");

        let folder = dir.path().join("folder.wav");
        fs::create_dir(&folder).unwrap();
        let error = resolve(&SoundSetting::WavFile(folder.display().to_string()), &[]).unwrap_err();
        assert!(matches!(error, SoundError::NotAFile(_)), "{error:?}");

        assert!(matches!(
            resolve(&SoundSetting::Off, &[]),
            Err(SoundError::Off)
        ));
    }

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| OsString::from(value))
        }
    }

    fn paths(list: &[&str]) -> Vec<PathBuf> {
        list.iter().map(PathBuf::from).collect()
    }

    #[cfg(unix)]
    #[test]
    fn data_dirs_follow_xdg_rules() {
        assert_eq!(
            data_dirs(env(&[("HOME", "/home/u")])),
            paths(&["/home/u/.local/share", "/usr/local/share", "/usr/share"])
        );
        assert_eq!(
            data_dirs(env(&[
                ("HOME", "/home/u"),
                ("XDG_DATA_HOME", "/data/home"),
                ("XDG_DATA_DIRS", "/a:relative::/b:/a"),
            ])),
            paths(&["/data/home", "/a", "/b"])
        );
        // Empty means unset; a relative XDG_DATA_HOME falls back to HOME.
        assert_eq!(
            data_dirs(env(&[
                ("HOME", "/home/u"),
                ("XDG_DATA_HOME", "rel"),
                ("XDG_DATA_DIRS", ""),
            ])),
            paths(&["/home/u/.local/share", "/usr/local/share", "/usr/share"])
        );
        assert_eq!(
            data_dirs(env(&[])),
            paths(&["/usr/local/share", "/usr/share"])
        );
    }

    #[test]
    fn pactl_output_parsing() {
        let volume = "Volume: front-left: 32768 /  50% / -18.06 dB,   \
                      front-right: 32768 /  50% / -18.06 dB\n        balance 0.00\n";
        assert_eq!(parse_volume_percent(volume), Some(50));
        assert_eq!(
            parse_volume_percent("Volume: mono: 98304 / 150% / 10.57 dB"),
            Some(150)
        );
        assert_eq!(parse_volume_percent("100% then 20%"), Some(100));
        assert_eq!(parse_volume_percent("% no digits"), None);
        assert_eq!(parse_volume_percent("Connection failure"), None);
        assert_eq!(parse_mute("Mute: yes\n"), Some(true));
        assert_eq!(parse_mute("  Mute: no"), Some(false));
        assert_eq!(parse_mute("Stumm: ja"), None);
    }

    #[test]
    fn invalid_and_off_settings() {
        let error = play_with("trumpet", None, Duration::from_secs(1), &[], None).unwrap_err();
        assert!(matches!(error, SoundError::InvalidSetting(_)), "{error:?}");
        assert!(error.to_string().contains(".wav"), "{error}");
        let error = play_with(" off ", None, Duration::from_secs(1), &[], None).unwrap_err();
        assert!(matches!(error, SoundError::Off), "{error:?}");
    }

    #[cfg(unix)]
    mod with_programs {

        use super::*;

        const PACTL: &str = "\
            case \"$1\" in\n\
              get-sink-volume) echo 'Volume: front-left: 32768 /  50% / -18.06 dB,   \
                front-right: 32768 /  50% / -18.06 dB'; echo '        balance 0.00' ;;\n\
              get-sink-mute) echo 'Mute: yes' ;;\n\
            esac";

        /// A temporary `PATH` directory, a log the fake programs append to, and a sound file.
        struct Fixture {
            dir: tempfile::TempDir,
        }

        impl Fixture {
            fn new() -> Fixture {
                let fixture = Fixture {
                    dir: tempfile::tempdir().unwrap(),
                };
                fs::create_dir(fixture.bin()).unwrap();
                fixture
            }

            /// A fixture with these programs (name, shell script) on its `PATH`.
            fn with(programs: &[(&str, &str)]) -> Fixture {
                let fixture = Fixture::new();
                for (name, script) in programs {
                    fixture.program(name, script);
                }
                fixture
            }

            fn bin(&self) -> PathBuf {
                self.dir.path().join("bin")
            }

            fn path(&self) -> OsString {
                self.bin().into_os_string()
            }

            fn log(&self) -> PathBuf {
                self.dir.path().join("log")
            }

            fn log_lines(&self) -> Vec<String> {
                fs::read_to_string(self.log())
                    .unwrap_or_default()
                    .lines()
                    .map(str::to_owned)
                    .collect()
            }

            /// A `#!/bin/sh` program `name` that logs `name args…`, then runs `body`.
            fn program(&self, name: &str, body: &str) -> PathBuf {
                let file = self.bin().join(name);
                let script = format!(
                    "#!/bin/sh\necho \"{name} $*\" >> '{}'\n{body}\n",
                    self.log().display()
                );
                // Written by a child process: a write descriptor of ours could be inherited by
                // a program another test thread is starting, and exec would then fail with
                // ETXTBSY ("Text file busy").
                let mut writer = std::process::Command::new("sh")
                    .args(["-c", "cat > \"$1\" && chmod 755 \"$1\"", "sh"])
                    .arg(&file)
                    .stdin(std::process::Stdio::piped())
                    .spawn()
                    .unwrap();
                std::io::Write::write_all(&mut writer.stdin.take().unwrap(), script.as_bytes())
                    .unwrap();
                assert!(writer.wait().unwrap().success());
                file
            }

            fn wav(&self) -> PathBuf {
                let file = self.dir.path().join("sounds in here/done.wav");
                touch(&file);
                file
            }

            fn play(&self, text: &str, volume: Option<u8>) -> Result<PlayedSound, SoundError> {
                let data = [self.dir.path().join("data")];
                play_with(
                    text,
                    volume,
                    Duration::from_secs(10),
                    &data,
                    Some(&self.path()),
                )
            }
        }

        #[test]
        fn find_program_needs_an_executable_file() {
            let fixture = Fixture::new();
            let other = fixture.dir.path().join("other");
            fs::create_dir(&other).unwrap();
            fs::write(fixture.bin().join("plain"), "#!/bin/sh\n").unwrap();
            fs::create_dir(fixture.bin().join("folder")).unwrap();
            fixture.program("tool", "");
            let tool = fixture.program("both", "");
            fs::copy(&tool, other.join("both")).unwrap();
            let path = std::env::join_paths([other.clone(), fixture.bin()]).unwrap();
            assert_eq!(find_program("plain", Some(&path)), None);
            assert_eq!(find_program("folder", Some(&path)), None);
            assert_eq!(
                find_program("tool", Some(&path)),
                Some(fixture.bin().join("tool"))
            );
            assert_eq!(find_program("both", Some(&path)), Some(other.join("both")));
            assert_eq!(find_program("tool", None), None);
            assert_eq!(find_program("tool", Some(OsStr::new(""))), None);
        }

        #[test]
        fn plays_with_paplay_and_passes_the_file() {
            let fixture = Fixture::new();
            let paplay = fixture.program("paplay", "exit 0");
            fixture.program("aplay", "exit 0");
            let wav = fixture.wav();
            let played = fixture.play(&wav.display().to_string(), None).unwrap();
            assert_eq!(played.player, paplay);
            assert_eq!(played.file, wav);
            assert_eq!(fixture.log_lines(), [format!("paplay {}", wav.display())]);
        }

        #[test]
        fn pw_play_comes_first() {
            let fixture = Fixture::new();
            fixture.program("paplay", "exit 0");
            let pw_play = fixture.program("pw-play", "exit 0");
            let wav = fixture.wav();
            let played = fixture.play(&wav.display().to_string(), None).unwrap();
            assert_eq!(played.player, pw_play);
            assert_eq!(fixture.log_lines(), [format!("pw-play {}", wav.display())]);
        }

        #[test]
        fn aplay_plays_only_wav_files() {
            let fixture = Fixture::new();
            let aplay = fixture.program("aplay", "exit 0");
            let oga = fixture
                .dir
                .path()
                .join("data/sounds/freedesktop/stereo/bell.oga");
            touch(&oga);
            let error = fixture.play("Beep", None).unwrap_err();
            assert!(matches!(error, SoundError::NoPlayer { .. }), "{error:?}");
            let message = error.to_string();
            assert!(
                message.contains("looked for pw-play, paplay on PATH; aplay plays only .wav"),
                "{message}"
            );
            assert!(fixture.log_lines().is_empty());
            assert_eq!(
                choose_player(&fixture.wav(), Some(&fixture.path())).unwrap(),
                aplay
            );
            // A system sound that is a .wav file is fine for aplay.
            let wav = fixture
                .dir
                .path()
                .join("data/sounds/freedesktop/stereo/bell.wav");
            touch(&wav);
            fs::remove_file(&oga).unwrap();
            let played = fixture.play("beep", None).unwrap();
            assert_eq!((played.player, played.file), (aplay, wav));
        }

        #[test]
        fn no_player_on_path() {
            let fixture = Fixture::new();
            let wav = fixture.wav();
            let text = wav.display().to_string();
            let data = [fixture.dir.path().join("data")];
            for path in [Some(OsStr::new("")), Some(fixture.path().as_os_str()), None] {
                let error =
                    play_with(&text, None, Duration::from_secs(1), &data, path).unwrap_err();
                assert_eq!(
                    error.to_string(),
                    "no sound player found (looked for pw-play, paplay, aplay on PATH); \
                     install pipewire-bin, pulseaudio-utils or alsa-utils"
                );
            }
        }

        #[test]
        fn hanging_player_is_killed() {
            let fixture = Fixture::new();
            fixture.program("paplay", "exec sleep 10");
            let wav = fixture.wav();
            let data = [fixture.dir.path().join("data")];
            let start = Instant::now();
            let error = play_with(
                &wav.display().to_string(),
                None,
                Duration::from_millis(300),
                &data,
                Some(&fixture.path()),
            )
            .unwrap_err();
            let elapsed = start.elapsed();
            assert!(matches!(error, SoundError::TimedOut { .. }), "{error:?}");
            assert!(error.to_string().contains("did not finish"), "{error}");
            assert!(elapsed >= Duration::from_millis(300), "{elapsed:?}");
            assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
        }

        #[test]
        fn failing_player_is_an_error() {
            let fixture = Fixture::new();
            fixture.program("paplay", "exit 1");
            let error = fixture
                .play(&fixture.wav().display().to_string(), None)
                .unwrap_err();
            assert!(matches!(error, SoundError::Failed { .. }), "{error:?}");
            assert!(error.to_string().contains("audio"), "{error}");
        }

        fn override_sequence(wav: &Path) -> Vec<String> {
            [
                "pactl get-sink-volume @DEFAULT_SINK@".to_owned(),
                "pactl get-sink-mute @DEFAULT_SINK@".to_owned(),
                "pactl set-sink-mute @DEFAULT_SINK@ 0".to_owned(),
                "pactl set-sink-volume @DEFAULT_SINK@ 30%".to_owned(),
                format!("paplay {}", wav.display()),
                "pactl set-sink-volume @DEFAULT_SINK@ 50%".to_owned(),
                "pactl set-sink-mute @DEFAULT_SINK@ 1".to_owned(),
            ]
            .into()
        }

        #[test]
        fn volume_is_raised_and_put_back() {
            let fixture = Fixture::with(&[("pactl", PACTL), ("paplay", "exit 0")]);
            let wav = fixture.wav();
            fixture.play(&wav.display().to_string(), Some(30)).unwrap();
            assert_eq!(fixture.log_lines(), override_sequence(&wav));
        }

        #[test]
        fn volume_is_put_back_when_playing_fails() {
            let fixture = Fixture::with(&[("pactl", PACTL), ("paplay", "exit 3")]);
            let wav = fixture.wav();
            let error = fixture
                .play(&wav.display().to_string(), Some(30))
                .unwrap_err();
            assert!(matches!(error, SoundError::Failed { .. }), "{error:?}");
            assert_eq!(fixture.log_lines(), override_sequence(&wav));
        }

        #[test]
        fn volume_out_of_range_is_clamped() {
            let fixture = Fixture::with(&[("pactl", PACTL), ("paplay", "exit 0")]);
            let wav = fixture.wav();
            fixture.play(&wav.display().to_string(), Some(250)).unwrap();
            assert!(
                fixture
                    .log_lines()
                    .contains(&"pactl set-sink-volume @DEFAULT_SINK@ 100%".to_owned())
            );
        }

        #[test]
        fn failing_pactl_changes_nothing_and_the_sound_still_plays() {
            let fixture = Fixture::new();
            fixture.program("pactl", "echo 'Connection failure' >&2; exit 1");
            fixture.program("paplay", "exit 0");
            let wav = fixture.wav();
            fixture.play(&wav.display().to_string(), Some(30)).unwrap();
            assert_eq!(
                fixture.log_lines(),
                [
                    "pactl get-sink-volume @DEFAULT_SINK@".to_owned(),
                    "pactl get-sink-mute @DEFAULT_SINK@".to_owned(),
                    format!("paplay {}", wav.display()),
                ]
            );
        }

        #[test]
        fn missing_pactl_still_plays() {
            let fixture = Fixture::new();
            fixture.program("paplay", "exit 0");
            let wav = fixture.wav();
            fixture.play(&wav.display().to_string(), Some(30)).unwrap();
            assert_eq!(fixture.log_lines(), [format!("paplay {}", wav.display())]);
        }
    }
}
