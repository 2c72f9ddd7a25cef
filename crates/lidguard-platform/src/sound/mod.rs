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

use std::ffi::OsStr;
use std::io;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

use lidguard_core::settings::{SoundSetting, SystemSound};

mod files;
mod player;
mod volume;

use files::join_paths_for_display;
pub use files::{data_dirs, data_dirs_from_env, resolve, theme_names};
pub use player::{choose_player, find_program};
use player::{no_player_message, run_player};
use volume::VolumeOverride;

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

#[cfg(test)]
mod tests;
