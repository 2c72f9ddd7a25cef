//! The default output's volume raised (and unmuted) for the sound with `pactl`, and put back.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::player::{WaitError, find_program, read_in_background, spawn, wait_with_timeout};
use super::{OUTPUT_GRACE, PACTL_TIMEOUT, SINK};

/// Runs `pactl args…` with [`PACTL_TIMEOUT`] in the C locale; its standard output, or a
/// description of the failure.
pub(super) fn run_pactl(pactl: &Path, args: &[&str]) -> Result<String, String> {
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
pub(super) fn pactl_or_warn(pactl: &Path, args: &[&str]) -> Option<String> {
    match run_pactl(pactl, args) {
        Ok(output) => Some(output),
        Err(error) => {
            tracing::warn!(command = %args.join(" "), %error, "pactl failed");
            None
        }
    }
}

/// The first percentage (`NN%`) in `pactl get-sink-volume` output.
pub(super) fn parse_volume_percent(output: &str) -> Option<u32> {
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
pub(super) fn parse_mute(output: &str) -> Option<bool> {
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
pub(super) struct VolumeOverride {
    pactl: PathBuf,
    volume: Option<u32>,
    muted: Option<bool>,
}

impl VolumeOverride {
    /// Records the volume and mute state, then unmutes and sets `percent`. `None` when `pactl`
    /// is not on `path`.
    pub(super) fn apply(percent: u8, path: Option<&OsStr>) -> Option<VolumeOverride> {
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
