//! `lidguard status`: human view and the `--json` contract.

use std::process::ExitCode;

use lidguard_ipc::client::ClientError;
use lidguard_ipc::protocol::{SessionState, Status};
use lidguard_ipc::{Daemon, Places};
use lidguard_platform::sources::{self, Roots};

use super::session::daemon_error;
use crate::output;

/// `status --check`'s exit code when sessions want protection that is not held.
const NOT_HELD: u8 = 3;

pub(crate) fn run(
    places: &Places,
    json: bool,
    check: bool,
    verbose: bool,
) -> anyhow::Result<ExitCode> {
    // `--check` is for scripts: its exit code says it all, unless asked for the text too.
    let quiet = check && !verbose && !json;
    let status = match Daemon::new(places).status() {
        Ok(status) => status,
        Err(ClientError::NotRunning { .. }) if quiet => return Ok(ExitCode::SUCCESS),
        Err(ClientError::NotRunning { .. }) => return not_running(json),
        Err(e) => return Err(daemon_error(e)),
    };
    // `quiet`: nothing but the exit code (and the reason, below, when nothing is held).
    if json {
        let mut value = serde_json::to_value(&status)?;
        value["running"] = true.into();
        // Secrets stay in the settings file: printed output ends up in logs and bug reports.
        value["settings"] = status.settings.redacted_json();
        output::json(&value)?;
    } else if !quiet {
        // The protection line in the colour of its state: held, paused, wanted but not held.
        let p = &status.protection;
        let colour = if p.paused.is_some() || (p.wanted && !p.held && p.released_for().is_some()) {
            output::Colour::Note
        } else if p.wanted && !p.held {
            output::Colour::Bad
        } else {
            output::Colour::Good
        };
        output::prompt_painting(&render(&status), "Protection:", colour)?;
    }
    if check && status.protection.wanted && !status.protection.held {
        output::warn(&format!(
            "sessions want the machine kept awake, but nothing is held: {}",
            status.protection.in_words()
        ));
        return Ok(ExitCode::from(NOT_HELD));
    }
    Ok(ExitCode::SUCCESS)
}

/// Without a daemon nothing is held; the lid and displays are still read locally.
fn not_running(json: bool) -> anyhow::Result<ExitCode> {
    let roots = Roots::from_env();
    let lid = current_lid(&roots)?;
    let visible = sources::visible_displays(&roots, false);
    let external = sources::visible_displays(&roots, true);
    let reason = "the lidguard daemon is not running";
    if json {
        output::json(&serde_json::json!({
            "running": false,
            "sessions": [],
            "protection": {"held": false, "inhibitors": [], "unavailableReason": reason, "wanted": false},
            "lid": lid.to_string(),
            "visibleDisplays": visible,
            "externalDisplays": external,
            "daemonPid": null,
        }))?;
    } else {
        output::line(&format!(
            "The lidguard daemon is not running: no session is tracked and nothing is held.\n\
             Lid: {lid} · displays: {visible} connected, {external} external"
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The lid exactly as the daemon reads it (logind, else the files below `roots`), from a
/// command that has no async runtime of its own.
pub(crate) fn current_lid(roots: &Roots) -> anyhow::Result<sources::Lid> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(sources::lid_state(roots)))
}

pub(crate) use lidguard_ipc::words::local_time as local;

fn render(s: &Status) -> String {
    let mut out = String::new();
    let mut line = |text: String| {
        out.push_str(&text);
        out.push('\n');
    };
    line(format!(
        "lidguard daemon {} (pid {}), running since {}",
        s.daemon_version,
        s.daemon_pid,
        local(s.daemon_started_at)
    ));
    line(format!("Protection: {}", s.protection.in_words()));
    line(format!(
        "Lid: {} · displays: {} connected, {} external{}",
        s.lid,
        s.visible_displays.map_or("?".into(), |n| n.to_string()),
        s.external_displays.map_or("?".into(), |n| n.to_string()),
        machine_text(s)
    ));
    if let Some(pending) = &s.pending_suspend {
        line(format!(
            "Suspend pending ({:?}): {:?} phase, due {}",
            pending.reason,
            pending.phase,
            local(pending.due_at)
        ));
        if let Some(ask) = &pending.ask {
            let until = match ask.reply_deadline {
                Some(at) => format!("a reply until {}", local(at)),
                None => "the post-stop delay before asking".to_owned(),
            };
            line(format!(
                "  Ask before sleep ({}): {}'s Stop hook waits for {until}",
                ask.status.as_str(),
                ask.key
            ));
        }
    }
    if s.sessions.is_empty() {
        line("Sessions: none".into());
    } else {
        line(format!("Sessions ({}):", s.sessions.len()));
        for x in &s.sessions {
            let name = match (&x.provider_name, &x.run_by) {
                (Some(n), _) => format!("{}:{}:{}", x.provider, n, x.session_id),
                // Another tool's work through this provider's hook files: named by that tool.
                (None, Some(tool)) => format!(
                    "{tool}:{} (through {}'s hooks)",
                    x.session_id,
                    x.provider.display_name()
                ),
                (None, None) => format!("{}:{}", x.provider, x.session_id),
            };
            let name = match &x.via {
                Some(via) => format!("{name} on {via}"),
                None => name,
            };
            let state = match (x.state, &x.soft_lock_reason) {
                (SessionState::Active, _) => "working".to_owned(),
                (SessionState::SoftLocked, reason) => {
                    format!(
                        "waiting for the user ({})",
                        reason.as_deref().unwrap_or("?")
                    )
                }
            };
            line(format!("  {name}  {state}"));
            if let Some(at) = x.wakes_at {
                line(format!(
                    "      held for its own scheduled wake-up at {} (within the session timeout)",
                    local(at)
                ));
            } else if x.pending_provider_work {
                line(format!(
                    "      background work still running: {}",
                    x.pending_provider_work_reason.as_deref().unwrap_or("")
                ));
            }
            let mut details = format!(
                "      started {}, last activity {}",
                local(x.started_at),
                local(x.last_activity_at)
            );
            if let Some(at) = x.timeout_at {
                details.push_str(&format!(", times out {}", local(at)));
            }
            if let Some(pid) = x.until_process_exits {
                details.push_str(&format!(", held until process {pid} exits"));
            }
            line(details);
            line(format!(
                "      process {} · cwd {}{}",
                x.watched_pid
                    .map_or("not watched".into(), |p| p.to_string()),
                x.cwd.as_deref().unwrap_or("?"),
                x.transcript_path
                    .as_deref()
                    .map(|t| format!(" · transcript {t}"))
                    .unwrap_or_default()
            ));
        }
    }
    for w in &s.released_wake_ups {
        line(format!(
            "Released until its own scheduled wake-up: {}:{} at {} (beyond the session timeout); protected again when it wakes",
            w.provider,
            w.session_id,
            local(w.wakes_at)
        ));
    }
    let st = &s.settings;
    line(format!(
        "Settings: session timeout {}, lid switch {}, suspend {:?} after {} s, closed-lid permission {:?} ({})",
        st.session_timeout_minutes
            .map_or("off".into(), |m| format!("{m} min")),
        if st.change_lid_action {
            "held"
        } else {
            "not held"
        },
        st.suspend_mode,
        st.post_stop_suspend_delay_seconds,
        st.closed_lid_permission_request_decision,
        s.settings_file,
    ));
    if !s.ask_before_sleep.is_empty() {
        line(format!("Ask before sleep: {}", s.ask_before_sleep));
    }
    if s.phone.ntfy {
        let waiting = &s.phone.waiting;
        line(match waiting.len() {
            0 => "Phone (ntfy): on, no question open".to_owned(),
            n => format!("Phone (ntfy): {n} permission request(s) wait for your answer"),
        });
        for w in waiting {
            let on = w
                .via
                .as_deref()
                .map(|v| format!(" on {v}"))
                .unwrap_or_default();
            line(format!(
                "  {} {}{on} asks to use {} (request {}); without an answer by {} the fallback applies",
                w.provider.display_name(),
                w.session_id,
                w.tool.as_deref().unwrap_or("a tool"),
                w.request,
                local(w.until)
            ));
        }
    }
    if let Some(e) = &s.settings_error {
        line(format!(
            "Settings file problem (running with defaults): {e}"
        ));
    }
    let cleanup = match (s.cleanup.delay_minutes, s.cleanup.exit_at) {
        (None, _) => "the daemon stays running (cleanup delay off)".to_owned(),
        (Some(_), Some(at)) => format!("the daemon exits at {} unless a session starts", local(at)),
        (Some(m), None) => format!("the daemon exits {m} min after the last session ends"),
    };
    line(format!("Cleanup: {cleanup}"));
    match &s.store.error {
        None => line(format!("Database: {}", s.store.path)),
        Some(e) => line(format!(
            "Database PROBLEM (sessions and history may not be saved): {e}"
        )),
    }
    if let Some(moved) = &s.store.moved_aside {
        line(format!(
            "  a damaged database was moved aside to {} ({}); a new one was started",
            moved.path, moved.reason
        ));
    }
    out
}

/// The battery and the thermal state for the machine line (` · battery 55% (on battery) ·
/// thermal state fair`); empty without either reading.
pub(crate) fn machine_text(s: &lidguard_ipc::protocol::Status) -> String {
    let thermal = s
        .thermal_state
        .map(|t| format!(" · thermal state {t}"))
        .unwrap_or_default();
    format!("{}{thermal}", battery_text(s.battery.as_ref()))
}

/// ` · battery 55% (on battery)` for the machine line; empty without a battery reading.
pub(crate) fn battery_text(battery: Option<&lidguard_core::suspend::Battery>) -> String {
    match battery {
        Some(b) if b.on_battery => format!(" · battery {}% (on battery)", b.percent),
        Some(b) => format!(" · battery {}% (on AC)", b.percent),
        None => String::new(),
    }
}
