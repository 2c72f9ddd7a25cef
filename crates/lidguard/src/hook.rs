//! `lidguard <provider>-hook`: the hot path, run on every hook event of every agent.
//!
//! It does only this: read stdin, parse it with the provider's dialect, make one socket round
//! trip, print what the daemon rendered for the agent, if anything. (A continuable Stop the daemon asks to wait for
//! ask before sleep keeps the same connection open for a second answer, and prints the user's
//! reply as the agent's continuation.) No async runtime, no database, no settings file,
//! no log subscriber. And it fails open: whatever goes wrong — malformed JSON, an unknown
//! event, no daemon, a slow daemon, a full disk — it exits 0 with empty stdout, so the agent's
//! normal flow continues, and leaves one line in lidguard's log.
// Dispatch on agents is exhaustive: a new agent must be a compile error here, never a fallback.
#![deny(clippy::wildcard_enum_match_arm)]

use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use lidguard_core::event::EventKind;
use lidguard_core::provider::Provider;
use lidguard_ipc::Places;
use lidguard_ipc::client::{self, ClientError};
use lidguard_ipc::protocol::Request;
use lidguard_ipc::relay::{self, RELAY_ENV};
use lidguard_platform::process::ancestry;
use lidguard_platform::sources::Roots;
use lidguard_platform::stdin;
use lidguard_providers::{HookInput, owner};

/// Largest payload read; Claude tool responses can be large, but never this large. More is
/// read and thrown away, so the agent's write never fails.
const MAX_STDIN: usize = 32 << 20;

/// The whole hook, from the first byte of its payload to its exit — reading, parsing, starting
/// the daemon if need be, and the socket round trip — gives up after this (a hung daemon costs
/// the agent at most this per event). Only the ask-before-sleep wait is longer, and documented.
pub const DEADLINE: Duration = Duration::from_secs(2);

/// An agent's hook subcommand: `claude-hook`, or `copilot-hook --event E` for agents whose
/// payloads do not name their event (also `--event=E` and `--event-name`). Anything else — `--help`, a typo, an extra argument — is
/// `None`: the full CLI parses it (help and errors stay those of its definitions), and the hook
/// executable says how it is called.
pub fn parse_args(
    mut args: impl Iterator<Item = std::ffi::OsString>,
) -> Option<(Provider, Option<String>)> {
    let command = args.next()?;
    let rest: Vec<String> = args.map(|a| a.into_string().ok()).collect::<Option<_>>()?;
    let agent = lidguard_providers::by_hook_command(command.to_str()?)?;
    let event = match rest.as_slice() {
        [] => None,
        [flag, value] if flag == "--event" || flag == "--event-name" => Some(value.clone()),
        [flag] => Some(
            flag.strip_prefix("--event=")
                .or_else(|| flag.strip_prefix("--event-name="))?
                .to_owned(),
        ),
        _ => return None,
    };
    (agent.event_on_command_line == event.is_some()
        && !event.as_deref().is_some_and(|e| e.starts_with('-')))
    .then_some((agent.provider, event))
}

/// Runs one hook invocation. Always exits 0.
pub fn run(provider: Provider, event_arg: Option<&str>) -> ExitCode {
    let places = Places::from_env().ok();
    if let Err(skipped) = handle(provider, event_arg, places.as_ref()) {
        note(places.as_ref(), provider, &skipped.to_string());
    }
    ExitCode::SUCCESS
}

/// Why an event did not reach a daemon, or its answer the agent: one line in lidguard's log
/// (the agent sees a hook that printed nothing and exited 0).
#[derive(Debug, thiserror::Error)]
enum Skipped {
    /// The agent runs elsewhere (another machine's agent, a relay's business).
    #[error("event ignored: {0}")]
    Elsewhere(String),
    /// The payload did not come, or not all of it.
    #[error(
        "the agent did not finish writing the payload within {DEADLINE:?} ({0} bytes read); \
         event ignored"
    )]
    SlowPayload(usize),
    /// stdin could not be read.
    #[error("cannot read stdin: {0}")]
    Stdin(std::io::Error),
    /// More than lidguard reads.
    #[error("the payload is {0} bytes, more than the {MAX_STDIN} lidguard reads; event ignored")]
    TooLarge(usize),
    /// Not a payload of this agent.
    #[error(transparent)]
    Parse(#[from] lidguard_providers::ParseError),
    /// No `HOME` (or the like) to find the daemon by.
    #[error("cannot resolve lidguard's directories (is HOME set?){relay}")]
    NoPlaces {
        /// `" and the relay failed: …"` when one was tried.
        relay: String,
    },
    /// No daemon runs (and, for a session's start, why none could be started).
    #[error("{event}: the daemon is not running; event ignored{}", .cannot_start.as_ref().map_or_else(String::new, |why| format!(" ({why})")))]
    NotRunning {
        /// The hook event.
        event: String,
        /// Why the daemon could not be started, when it was to be.
        cannot_start: Option<CannotStart>,
    },
    /// The daemon could not be reached or answered nothing readable.
    #[error("{event}: {source}")]
    Daemon {
        /// The hook event.
        event: String,
        /// Why.
        source: ClientError,
    },
    /// The daemon answered that it did not take the event.
    #[error("{event}: the daemon refused the event: {message}")]
    Refused {
        /// The hook event.
        event: String,
        /// Its words.
        message: String,
    },
    /// The answer could not be printed for the agent.
    #[error("cannot write the hook output: {0}")]
    Output(std::io::Error),
}

/// Why the daemon cannot be started from here.
#[derive(Debug, thiserror::Error)]
enum CannotStart {
    /// This executable cannot be found.
    #[error("cannot find the lidguard executable: {0}")]
    NoExe(std::io::Error),
    /// The small hook executable without the full `lidguard` beside it.
    #[error("{full} is not next to {exe}: install both (cargo install puts them together)")]
    NotBeside {
        /// Where `lidguard` would be.
        full: String,
        /// This executable.
        exe: String,
    },
}

impl Skipped {
    /// What a client error means for `event`.
    fn daemon(event: &str, e: ClientError, cannot_start: Option<CannotStart>) -> Skipped {
        if matches!(e, ClientError::NotRunning { .. }) {
            Skipped::NotRunning {
                event: event.to_owned(),
                cannot_start,
            }
        } else {
            Skipped::Daemon {
                event: event.to_owned(),
                source: e,
            }
        }
    }
}

fn handle(
    provider: Provider,
    event_arg: Option<&str>,
    places: Option<&Places>,
) -> Result<(), Skipped> {
    let (stdin, deadline) = read_stdin()?;
    // Read first all the same: the agent's write must not fail on a closed pipe.
    let elsewhere = lidguard_providers::agent(provider)
        .and_then(|a| a.runs_elsewhere)
        .and_then(|runs_elsewhere| runs_elsewhere(&lidguard_files::environment::var));
    if let Some(why) = elsewhere {
        return Err(Skipped::Elsewhere(why.to_string()));
    }
    let cwd = std::env::current_dir()
        .ok()
        .map(|d| d.display().to_string());
    let input = HookInput {
        stdin: &stdin,
        event_arg,
        process_cwd: cwd.as_deref(),
        now: jiff::ZonedDateTime::now,
    };
    let mut events = lidguard_providers::parse(provider, &input)?;
    // An agent run with its prompt on the command line (`droid exec "…"`) fires no prompt
    // event: its launch is the first sign of work.
    let launched = events
        .iter()
        .any(|e| matches!(e.kind, EventKind::SessionStarted))
        && lidguard_providers::agent(provider).is_some_and(|a| a.works_from_launch.is_some());
    let mut starts = events.iter().any(|e| e.kind.starts_session());
    if starts || launched {
        let runner = find_runner(provider);
        let from_launch = runner.as_ref().is_some_and(|r| r.works_from_launch);
        for event in &mut events {
            if from_launch && matches!(event.kind, EventKind::SessionStarted) {
                event.kind = EventKind::PromptSubmitted;
            }
            event.owner_pid = runner.as_ref().map(|r| r.pid);
            event.run_by = runner.as_ref().and_then(|r| r.other).map(str::to_owned);
        }
        starts = events.iter().any(|e| e.kind.starts_session());
    }
    let hook_event = events
        .first()
        .map(|e| e.hook_event.clone())
        .unwrap_or_default();
    // Nothing to print unless an event awaits an answer: otherwise the hook hands this host's
    // daemon the events (no relay in the way) and exits, and the agent goes on while the
    // daemon applies them. An event that starts a session takes the answered way, which starts
    // the daemon when it is not running.
    if !starts
        && !events.iter().any(|e| e.kind.awaits_answer())
        && lidguard_files::environment::var(RELAY_ENV).is_none()
        && lidguard_files::environment::var("SSH_CONNECTION").is_none()
        && let Some(places) = places
    {
        return client::hand_over(places, events, &stdin, deadline)
            .map_err(|e| Skipped::daemon(&hook_event, e, None));
    }
    client::set_digest(&mut events, &stdin);
    let request = Request::Hook {
        events,
        queued: false,
        payload_follows: None,
    };
    let (response, cannot_start) = match relay::ask(&request, deadline) {
        Some(Ok(response)) => (Ok(response), None),
        // No relay, or a stale one (its ssh connection ended): this host's own daemon.
        relayed => {
            let Some(places) = places else {
                let relay = relayed.map_or_else(String::new, |e| {
                    format!(
                        " and the relay failed: {}",
                        e.err().map(|e| e.to_string()).unwrap_or_default()
                    )
                });
                return Err(Skipped::NoPlaces { relay });
            };
            // Without the full `lidguard` beside it (a copy of the static hook alone), the
            // hook still reaches a running daemon; it only cannot start one.
            match starts.then(daemon_executable) {
                Some(Ok(exe)) => {
                    let _ = places.ensure_runtime_dir();
                    let response =
                        client::request_starting_daemon(places, &request, deadline, &exe);
                    (response, None)
                }
                Some(Err(why)) => (client::request_by(places, &request, deadline), Some(why)),
                None => (client::request_by(places, &request, deadline), None),
            }
        }
    };
    let response = response.map_err(|e| Skipped::daemon(&hook_event, e, cannot_start))?;
    if !response.ok {
        return Err(Skipped::Refused {
            event: hook_event,
            message: response.message,
        });
    }
    // The daemon rendered the decision (or the continuation) in the agent's dialect: what it
    // logged and streamed as told is exactly what is printed here.
    if let Some(out) = &response.stdout {
        let mut stdout = std::io::stdout().lock();
        stdout
            .write_all(out.as_bytes())
            .and_then(|()| stdout.flush())
            .map_err(Skipped::Output)?;
    }
    Ok(())
}

/// Reads the payload: up to [`MAX_STDIN`] bytes kept, the rest read and dropped, until the
/// agent closes stdin or [`DEADLINE`] after its first byte (which has as long to come). Returns
/// the payload and the deadline of the whole hook.
fn read_stdin() -> Result<(Vec<u8>, Instant), Skipped> {
    // Read straight into the payload, which grows as it fills: a payload of a few kilobytes
    // touches a few pages, not a large zeroed buffer (each first touch is a page fault).
    let mut kept: Vec<u8> = Vec::with_capacity(FIRST_READ);
    let mut dropped: Vec<u8> = Vec::new();
    let mut deadline = Instant::now() + DEADLINE;
    let mut first = true;
    let mut over = 0usize;
    loop {
        if !stdin::wait_readable(deadline) {
            return Err(Skipped::SlowPayload(kept.len() + over));
        }
        let start = kept.len();
        let room = MAX_STDIN - start;
        let read = if room == 0 {
            dropped.resize(64 * 1024, 0);
            stdin::read_some(&mut dropped)
        } else {
            // A pipe hands over at most its buffer (64 KiB) per read.
            let want = room.min(if start == 0 { FIRST_READ } else { 64 * 1024 });
            kept.resize(start + want, 0);
            let read = stdin::read_some(&mut kept[start..]);
            kept.truncate(start + *read.as_ref().unwrap_or(&0));
            read
        };
        let n = match read {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Skipped::Stdin(e)),
        };
        if first {
            first = false;
            deadline = Instant::now() + DEADLINE;
        }
        if room == 0 {
            over += n;
        }
    }
    if over > 0 {
        return Err(Skipped::TooLarge(kept.len() + over));
    }
    Ok((kept, deadline))
}

/// The first read's size (and the least any later read asks for).
const FIRST_READ: usize = 4 * 1024;

/// The full `lidguard` executable, which runs the daemon: this one, or the `lidguard` next to
/// the small hook executable.
fn daemon_executable() -> Result<std::path::PathBuf, CannotStart> {
    let exe = std::env::current_exe().map_err(CannotStart::NoExe)?;
    let is_hook_exe = exe.file_stem().is_some_and(|stem| stem == HOOK_EXECUTABLE);
    if !is_hook_exe {
        return Ok(exe);
    }
    let full = exe.with_file_name(format!("lidguard{}", std::env::consts::EXE_SUFFIX));
    if full.is_file() {
        Ok(full)
    } else {
        Err(CannotStart::NotBeside {
            full: full.display().to_string(),
            exe: exe.display().to_string(),
        })
    }
}

/// The name of the small hook executable.
pub const HOOK_EXECUTABLE: &str = lidguard_config::HOOK_EXECUTABLE;

/// The agent process, or the tool that runs its hook files: the first ancestor of this hook
/// that the provider's rules accept.
fn find_runner(provider: Provider) -> Option<owner::Runner> {
    // Always the real /proc: LIDGUARD_PROC_ROOT only relocates the lid, display and thermal
    // sources, never the process tree the hook runs in.
    let chain = ancestry(&Roots::system(), std::process::id(), owner::MAX_DEPTH);
    owner::find_runner(
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
