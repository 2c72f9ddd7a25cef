//! `lidguard run [--reason TEXT] [--command-only] -- CMD [ARGS…]`: keeps the machine awake while
//! a command runs, as a lidguard session (provider `custom`, id `run:<reason or command name>:<pid
//! of lidguard>`, lidguard's own process watched), so the lid policy, `status`, the webhooks and
//! the suspend flow apply as they do to agents.
//!
//! The session is taken (and protection held, or its failure said) before the command starts,
//! and it lasts as long as the work: a command's session has no inactivity timeout, and on Linux
//! lidguard adopts what the command leaves running in the background (as a child subreaper) and
//! holds until the last process of its process group exits. The command's stdin, stdout and
//! stderr are its own (inherited, never read); its exit code is lidguard's (128 + N when a signal
//! N ended it, as shells report). SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 and SIGALRM sent to
//! lidguard are passed on to the command; so are SIGINT and SIGQUIT, unless lidguard runs in the
//! terminal's foreground, where the terminal already delivers them to the command itself. Once the command has exited, any of
//! them ends the wait for its background processes. When the daemon cannot be reached the
//! command still runs, with a warning.

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

use lidguard_core::provider::Provider;
use lidguard_core::session::StopKind;
use lidguard_ipc::protocol::{Request, SessionRef};
use lidguard_ipc::{Daemon, Places};
use lidguard_platform::orphans;
use lidguard_platform::signals::{Forwarder, shell_exit_code};

use crate::cli::RunArgs;
use crate::output;

use super::session::unprotected_warning;

pub(crate) fn run(places: &Places, args: RunArgs) -> anyhow::Result<ExitCode> {
    let Some((program, rest)) = args.command.split_first() else {
        anyhow::bail!("no command given: `lidguard run -- CMD [ARGS…]`");
    };
    // Handlers first, so no signal meant for the command can end lidguard after the spawn.
    let forward = Forwarder::install();
    let name = args.reason.unwrap_or_else(|| name_of(program));
    let session = SessionRef {
        provider: Provider::Custom,
        session_id: format!("run:{name}:{}", std::process::id()),
        provider_name: None,
    };
    // The session before the command: it never runs unprotected.
    let started = start(places, &session);
    // After the start, so a daemon lidguard launched is not adopted (it has left the group
    // anyway, but would be waited for as a child).
    let follow = !args.command_only && orphans::adopt_orphans();
    let mut child = match std::process::Command::new(program).args(rest).spawn() {
        Ok(child) => child,
        Err(e) => {
            output::error(&format!("cannot run {}: {e}", program.to_string_lossy()));
            // As shells answer: 127 not found, 126 found but not runnable.
            let code = if e.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            };
            if started {
                stop(places, &session, format!("cannot run the command: {e}"));
            }
            return Ok(ExitCode::from(code));
        }
    };
    forward.to(child.id());
    let status = child.wait()?;
    let code = shell_exit_code(&status);
    // A signal while the command ran asked the work to stop: its leftovers are not waited for.
    if follow && !forward.signalled() && orphans::left_running() {
        let leave = {
            let places = places.clone();
            let session = session.clone();
            move || {
                if started {
                    stop(
                        &places,
                        &session,
                        format!(
                            "command exited ({code}); stopped waiting for its background processes"
                        ),
                    );
                }
                std::process::exit(i32::from(code));
            }
        };
        forward.on_signal_leave(Box::new(leave));
        output::note(&format!(
            "{} exited ({code}); its session lasts until the processes it left running in the \
             background exit (a signal, or Ctrl-C, stops waiting; --command-only does not wait)",
            name_of(program)
        ));
        orphans::wait_for_group();
    }
    if started {
        stop(places, &session, format!("command exited ({code})"));
    }
    Ok(ExitCode::from(code))
}

/// The command's file name, for `status`.
fn name_of(program: &OsString) -> String {
    Path::new(program)
        .file_name()
        .unwrap_or(program)
        .to_string_lossy()
        .into_owned()
}

/// Starts the session (and the daemon when needed), watching lidguard's own process; a warning
/// when that fails or when protection cannot be held.
fn start(places: &Places, session: &SessionRef) -> bool {
    let request = Request::Start {
        session: session.clone(),
        cwd: std::env::current_dir()
            .ok()
            .map(|d| d.display().to_string()),
        transcript_path: None,
        watched_pid: Some(std::process::id()),
    };
    let started = super::session::starting_daemon(places)
        .and_then(|daemon| daemon.send(&request).map_err(anyhow::Error::from));
    match started {
        Ok(response) if response.ok => {
            if let Some(warning) = unprotected_warning(&response) {
                output::warn(&format!("{warning} (the command runs all the same)"));
            }
            true
        }
        Ok(response) => {
            output::warn(&format!(
                "the machine is not kept awake for this command: {}",
                response.message
            ));
            false
        }
        Err(e) => {
            output::warn(&format!(
                "the machine is not kept awake for this command: {e}"
            ));
            false
        }
    }
}

/// Ends the session; the daemon may have ended it already, watching lidguard's process.
fn stop(places: &Places, session: &SessionRef, end_reason: String) {
    let stop = Request::Stop {
        session: session.clone(),
        kind: StopKind::Manual,
        end_reason: Some(end_reason),
        pending_work: None,
    };
    let _ = Daemon::new(places).send(&stop);
}
