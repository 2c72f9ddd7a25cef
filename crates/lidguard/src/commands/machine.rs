//! The diagnostics `current-lid-state`, `current-monitor-count`, `current-temperature` (read
//! exactly as the daemon reads them, `LIDGUARD_PROC_ROOT` / `LIDGUARD_SYS_ROOT` included) and
//! `suspend-history`.

use std::process::ExitCode;

use anyhow::Context;
use lidguard_core::settings::{Os, TemperatureMode};
use lidguard_ipc::protocol::SuspendHistoryEntry;
use lidguard_ipc::{Places, settings_file};
use lidguard_platform::sources::{self, Roots};

use super::status::{current_lid, local};
use crate::output;

pub(crate) fn lid_state(json: bool) -> anyhow::Result<ExitCode> {
    let lid = current_lid(&Roots::from_env())?;
    if json {
        output::json(&serde_json::json!({"lid": lid.to_string()}))?;
    } else {
        output::line(&lid.to_string())?;
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn monitor_count(json: bool) -> anyhow::Result<ExitCode> {
    let roots = Roots::from_env();
    let visible = sources::visible_displays(&roots, false);
    let external = sources::visible_displays(&roots, true);
    if json {
        output::json(
            &serde_json::json!({"visibleDisplays": visible, "externalDisplays": external}),
        )?;
    } else {
        // The first number is the connected displays; the suspend decision uses the second.
        output::line(&format!("{visible} connected ({external} external)"))?;
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn temperature(
    places: &Places,
    mode: Option<&str>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let mode = match mode {
        None | Some("default") => {
            settings_file::load_or_default(&places.settings_file(), Os::current())?
                .emergency_hibernation_temperature_mode
        }
        Some(name) => TemperatureMode::from_name(name).with_context(|| {
            format!("unknown temperature mode `{name}`; use default, low, average or high")
        })?,
    };
    let roots = Roots::from_env();
    let readings = sources::thermal_readings(&roots);
    let zones = readings.as_ref().map_or(0, Vec::len);
    let celsius =
        lidguard_core::suspend::aggregate_temperature(readings.as_deref().unwrap_or(&[]), mode);
    if json {
        output::json(&serde_json::json!({
            "temperatureCelsius": celsius,
            "mode": mode,
            "zones": zones,
            "unavailableReason": readings.as_ref().err().map(ToString::to_string),
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    match (celsius, &readings) {
        (Some(c), _) => output::line(&format!("{c} °C ({} of {zones} zone(s))", mode.as_str()))?,
        (None, Err(why)) => {
            let guard = if Os::current() != Os::MacOs {
                ""
            } else {
                "; emergency hibernation is Linux and Windows only"
            };
            output::line(&format!("unavailable: {why}{guard}"))?;
            return Ok(ExitCode::FAILURE);
        }
        (None, Ok(_)) => {
            output::line("unavailable: no thermal zone reports a temperature above 0 °C")?;
            return Ok(ExitCode::FAILURE);
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn suspend_history(
    places: &Places,
    count: usize,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let path = places.database();
    let entries: Vec<SuspendHistoryEntry> = if path.exists() {
        let store = super::open_store(places)
            .with_context(|| format!("cannot open lidguard's database {}", path.display()))?;
        store
            .suspend_history(count)?
            .into_iter()
            .filter_map(|row| serde_json::from_str(&row.data_json).ok())
            .collect()
    } else {
        Vec::new()
    };
    if !output::listing(&entries, json, "No suspend has been requested yet.")? {
        return Ok(ExitCode::SUCCESS);
    }
    for e in &entries {
        let result = match &e.error {
            None => "requested".to_owned(),
            Some(error) => format!("FAILED: {error}"),
        };
        let mut line = format!(
            "{}  {} ({:?})  {result}",
            local(e.recorded_at),
            e.suspend_mode,
            e.reason
        );
        if let (Some(t), Some(limit)) = (e.temperature_celsius, e.threshold_celsius) {
            line.push_str(&format!("  {t} °C >= {limit} °C"));
        }
        if e.trigger_session_count > 0 {
            line.push_str(&format!("  {} waiting session(s)", e.trigger_session_count));
        }
        output::line(&line)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `webhook-history [COUNT] [--json]`: the webhook attempts from the event log (read directly
/// from the database, so it works whether or not the daemon runs). Ask before sleep shows as
/// one StopFollowUp entry per question, its result the exchange's outcome.
pub(crate) fn webhook_history(
    places: &Places,
    count: usize,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let (rows, entries) =
        super::hook_events::event_log(places, lidguard_daemon::WEBHOOK_ATTEMPT, None, count)?;
    if !output::listing(&entries, json, "No webhook has been sent yet.")? {
        return Ok(ExitCode::SUCCESS);
    }
    for (row, e) in rows.iter().zip(&entries) {
        let text = |key: &str| e[key].as_str().unwrap_or("").to_owned();
        let outcome = if e["succeeded"].as_bool() == Some(true) {
            "ok"
        } else {
            "FAILED"
        };
        output::line(&format!(
            "{}  {} ({})  to {}  {outcome}: {}  {} ms{}",
            local(row.at),
            text("eventType"),
            text("reason"),
            text("host"),
            text("result"),
            e["durationMs"].as_u64().unwrap_or(0),
            row.session_id
                .as_deref()
                .map(|s| format!("  session {s}"))
                .unwrap_or_default()
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `preview-system-sound NAME`: plays one of the named system sounds as the suspend flow would.
pub(crate) fn preview_system_sound(name: &str, volume: Option<u8>) -> anyhow::Result<ExitCode> {
    let Some(sound) = lidguard_core::settings::SystemSound::from_name(name) else {
        let names: Vec<&str> = lidguard_core::settings::SystemSound::ALL
            .iter()
            .map(|s| s.name())
            .collect();
        anyhow::bail!(
            "unknown system sound `{name}`; use one of {}",
            names.join(", ")
        );
    };
    play(sound.name(), volume)
}

/// `preview-current-sound`: plays `post-stop-suspend-sound` with its volume override.
pub(crate) fn preview_current_sound(places: &Places) -> anyhow::Result<ExitCode> {
    let settings = settings_file::load_or_default(&places.settings_file(), Os::current())?;
    if settings.post_stop_suspend_sound.trim().is_empty() {
        output::line(
            "post-stop-suspend-sound is off; set one with `lidguard settings --post-stop-suspend-sound Asterisk` (or a .wav path).",
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    play(
        &settings.post_stop_suspend_sound,
        settings.post_stop_suspend_sound_volume_override_percent,
    )
}

fn play(setting: &str, volume: Option<u8>) -> anyhow::Result<ExitCode> {
    if volume.is_some_and(|v| !(1..=100).contains(&v)) {
        anyhow::bail!("--volume must be from 1 to 100");
    }
    let played =
        lidguard_platform::sound::play(setting, volume, lidguard_platform::sound::DEFAULT_TIMEOUT)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    output::line(&format!(
        "played {} with {}",
        played.file.display(),
        played.player.display()
    ))?;
    Ok(ExitCode::SUCCESS)
}
