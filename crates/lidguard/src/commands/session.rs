//! `start`, `stop`, `remove-session`, `cleanup-orphans`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use lidguard_core::session::{StopKind, derived_session_id};
use lidguard_ipc::client::ClientError;
use lidguard_ipc::protocol::{Outcome, Request, Response, SessionRef};
use lidguard_ipc::{Daemon, Places};

use crate::cli::{RemoveArgs, SessionArgs, StartArgs, StopArgs};
use crate::{output, prompt};

pub(crate) use lidguard_ipc::client::REQUEST_TIMEOUT;

pub(crate) fn start(places: &Places, args: StartArgs) -> anyhow::Result<ExitCode> {
    let (session, cwd) = session_ref(&args.session, "start")?;
    let request = Request::Start {
        session,
        cwd: Some(cwd.display().to_string()),
        transcript_path: args.transcript.map(|p| absolute(&p).display().to_string()),
        watched_pid: args.parent_pid,
    };
    let response = send_starting(places, &request)?;
    if let Some(warning) = unprotected_warning(&response) {
        output::warn(&warning);
    }
    finish(&response, args.json)
}

/// What to say at once when a session started but the machine is not kept awake for it.
pub(crate) fn unprotected_warning(response: &Response) -> Option<String> {
    let p = response.protection.as_ref()?;
    if p.held {
        return None;
    }
    if p.paused.is_some() {
        return Some(
            "the machine is not kept awake for now: protection is paused (`lidguard resume` \
             takes it back)"
                .to_owned(),
        );
    }
    if let Some(why) = &p.battery_floor {
        return Some(format!(
            "the machine is not kept awake for now: protection is released for the battery ({why}); \
             it comes back above the floor or on AC"
        ));
    }
    if let Some(why) = &p.thermal_pressure {
        return Some(format!(
            "the machine is not kept awake for now: protection is released for the heat ({why}); \
             it comes back once the machine cools down"
        ));
    }
    p.wanted.then(|| {
        format!(
            "the machine is NOT kept awake: {}. `lidguard status` shows what is held and why",
            p.unavailable_reason
                .as_deref()
                .unwrap_or("the power backend refused")
        )
    })
}

pub(crate) fn stop(places: &Places, args: StopArgs) -> anyhow::Result<ExitCode> {
    let (session, _) = session_ref(&args.session, "stop")?;
    let request = Request::Stop {
        session,
        kind: StopKind::Manual,
        end_reason: args.end_reason.or_else(|| Some("stop".into())),
        pending_work: None,
    };
    send_if_running(places, &request, args.json)
}

pub(crate) fn remove(places: &Places, args: RemoveArgs) -> anyhow::Result<ExitCode> {
    let request = Request::RemoveSession {
        all: args.all,
        session_id: args.session,
        provider: args.provider,
        provider_name: args.provider_name,
    };
    send_if_running(places, &request, args.json)
}

pub(crate) fn cleanup_orphans(places: &Places, json: bool) -> anyhow::Result<ExitCode> {
    send_if_running(places, &Request::CleanupOrphans, json)
}

/// A request that only changes what a running daemon tracks or holds: without a daemon there
/// is nothing to do, which is said and is no failure (exit 0).
pub(crate) fn send_if_running(
    places: &Places,
    request: &Request,
    json: bool,
) -> anyhow::Result<ExitCode> {
    match Daemon::new(places).send(request) {
        Ok(response) => finish(&response, json),
        Err(e @ ClientError::NotRunning { .. }) => {
            let said = format!("{e}: nothing to do");
            if json {
                output::json(&Response::ok(Outcome::Unchanged, said))?;
            } else {
                output::line(&said)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Err(daemon_error(e)),
    }
}

/// Sends a request, starting the daemon first when none runs.
pub(crate) fn send_starting(places: &Places, request: &Request) -> anyhow::Result<Response> {
    places.ensure_runtime_dir()?;
    starting_daemon(places)?.send(request).map_err(daemon_error)
}

/// This user's daemon, started (this executable's `run-server`) when a request finds none.
pub(crate) fn starting_daemon(places: &Places) -> anyhow::Result<Daemon> {
    let exe = std::env::current_exe()
        .context("cannot find the lidguard executable to start the daemon")?;
    Ok(Daemon::new(places).starting_with(exe))
}

/// Turns client errors into sentences that say what to do.
pub(crate) fn daemon_error(e: ClientError) -> anyhow::Error {
    match e {
        ClientError::NotRunning { .. } => anyhow::anyhow!(
            "{e}; nothing to do. (`lidguard start` starts it; `lidguard status` shows its state.)"
        ),
        other => anyhow::Error::new(other),
    }
}

fn finish(response: &Response, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        output::json(response)?;
    } else {
        output::line(&response.message)?;
        for s in response
            .sessions
            .iter()
            .filter(|_| response.outcome == Outcome::Removed)
        {
            output::line(&format!("  {}", describe(s)))?;
        }
    }
    if response.ok {
        Ok(ExitCode::SUCCESS)
    } else {
        if !json {
            bail!("{}", response.message);
        }
        Ok(ExitCode::FAILURE)
    }
}

fn describe(s: &SessionRef) -> String {
    match &s.provider_name {
        Some(name) => format!("{}:{}:{}", s.provider, name, s.session_id),
        None => format!("{}:{}", s.provider, s.session_id),
    }
}

/// The session named on the command line, with the working directory used.
fn session_ref(args: &SessionArgs, command: &str) -> anyhow::Result<(SessionRef, PathBuf)> {
    let provider = prompt::provider(args.provider, command)?;
    let cwd = match &args.cwd {
        Some(dir) => absolute(dir),
        None => std::env::current_dir().context("cannot read the current directory; pass --cwd")?,
    };
    let session_id = match &args.session {
        Some(id) if id.trim().is_empty() => bail!("--session must not be empty"),
        Some(id) => id.clone(),
        None => derived_session_id(provider, &cwd.display().to_string()),
    };
    let provider_name = args.provider_name.clone();
    if provider == lidguard_core::provider::Provider::Mcp
        && provider_name.as_deref().is_none_or(|n| n.trim().is_empty())
    {
        bail!("mcp sessions need --provider-name (the name given to `provider-mcp-server`)");
    }
    Ok((
        SessionRef {
            provider,
            session_id,
            provider_name,
        },
        cwd,
    ))
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}
