//! `lidguard <provider>-hook`: the hot path, run on every hook event of every agent.
//!
//! It does only this: read stdin, parse it with the provider's dialect, make one socket round
//! trip, print the decision if there is one. (A continuable Stop the daemon asks to wait for
//! ask before sleep keeps the same connection open for a second answer, and prints the user's
//! reply as the agent's continuation.) No async runtime, no database, no settings file,
//! no log subscriber. And it fails open: whatever goes wrong — malformed JSON, an unknown
//! event, no daemon, a slow daemon, a full disk — it exits 0 with empty stdout, so the agent's
//! normal flow continues, and leaves one line in lidguard's log.

use std::io::{Read, Write};
use std::process::ExitCode;
use std::time::Duration;

use lidguard_core::provider::Provider;
use lidguard_ipc::Places;
use lidguard_ipc::client::{self, ClientError};
use lidguard_ipc::protocol::Request;
use lidguard_platform::process::ancestry;
use lidguard_platform::sources::Roots;
use lidguard_providers::{HookInput, owner};

/// Largest payload read; Claude tool responses can be large, but never this large.
const MAX_STDIN: u64 = 32 << 20;

/// How long a hook waits for the daemon's answer: bounded, so a hung daemon costs the agent
/// at most this per event.
const TIMEOUT: Duration = Duration::from_secs(2);

/// How long a start event waits for a daemon it launched.
const STARTUP: Duration = Duration::from_secs(5);

/// Runs one hook invocation. Always exits 0.
pub(crate) fn run(provider: Provider, event_arg: Option<&str>) -> ExitCode {
    let places = Places::from_env().ok();
    if let Err(message) = handle(provider, event_arg, places.as_ref()) {
        note(places.as_ref(), provider, &message);
    }
    ExitCode::SUCCESS
}

fn handle(
    provider: Provider,
    event_arg: Option<&str>,
    places: Option<&Places>,
) -> Result<(), String> {
    let mut stdin = Vec::new();
    std::io::stdin()
        .take(MAX_STDIN)
        .read_to_end(&mut stdin)
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    let cwd = std::env::current_dir()
        .ok()
        .map(|d| d.display().to_string());
    let input = HookInput {
        stdin: &stdin,
        event_arg,
        process_cwd: cwd.as_deref(),
    };
    let mut events = lidguard_providers::parse(provider, &input).map_err(|e| e.to_string())?;
    let starts = events.iter().any(|e| e.kind.starts_session());
    if starts {
        let owner = find_owner(provider);
        for event in &mut events {
            event.owner_pid = owner;
        }
    }
    let decision_event = events
        .iter()
        .find(|e| e.kind.wants_decision())
        .map(|e| e.hook_event.clone());
    let hook_event = events
        .first()
        .map(|e| e.hook_event.clone())
        .unwrap_or_default();
    let places = places.ok_or("cannot resolve lidguard's directories (is HOME set?)")?;
    let request = Request::Hook { events };
    let response = if starts {
        let exe = std::env::current_exe()
            .map_err(|e| format!("cannot find the lidguard executable: {e}"))?;
        let _ = places.ensure_runtime_dir();
        client::request_starting_daemon(places, &request, TIMEOUT, &exe, STARTUP)
    } else {
        client::request(places, &request, TIMEOUT)
    };
    let response = match response {
        Ok(response) => response,
        Err(ClientError::NotRunning { .. }) => {
            return Err(format!(
                "{hook_event}: the daemon is not running; event ignored"
            ));
        }
        Err(e) => return Err(format!("{hook_event}: {e}")),
    };
    if !response.ok {
        return Err(format!(
            "{hook_event}: the daemon refused the event: {}",
            response.message
        ));
    }
    let out = match (&response.decision, decision_event, &response.continuation) {
        (Some(decision), Some(event), _) => lidguard_providers::render(provider, &event, decision),
        // Ask before sleep: the user's reply continues the turn.
        (_, _, Some(reply)) => lidguard_providers::render_continuation(provider, reply),
        _ => None,
    };
    if let Some(out) = out {
        let mut stdout = std::io::stdout().lock();
        stdout
            .write_all(out.as_bytes())
            .and_then(|()| stdout.write_all(b"\n"))
            .and_then(|()| stdout.flush())
            .map_err(|e| format!("cannot write the hook output: {e}"))?;
    }
    Ok(())
}

/// The agent process: the first ancestor of this hook that the provider's rules accept.
fn find_owner(provider: Provider) -> Option<u32> {
    // Always the real /proc: LIDGUARD_PROC_ROOT only relocates the lid, display and thermal
    // sources, never the process tree the hook runs in.
    let chain = ancestry(&Roots::system(), std::process::id(), owner::MAX_DEPTH);
    owner::find_owner(
        provider,
        chain
            .iter()
            .map(|p| (p.pid, p.name.as_str(), p.cmdline.as_str())),
    )
}

/// One line in lidguard's log. Best effort: a hook never fails because it cannot log.
fn note(places: Option<&Places>, provider: Provider, message: &str) {
    let Some(places) = places else { return };
    let line = format!(
        "{} WARN lidguard::hook: {provider}-hook: {message}",
        jiff::Timestamp::now(),
    );
    if let Ok(mut file) = lidguard_files::private::open_append(&places.log_file()) {
        let _ = file.write_all(&lidguard_files::text::log_record(line.as_bytes()));
    }
}
