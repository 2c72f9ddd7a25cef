//! A relay for a container some other tool starts (a devcontainer): `lidguard container
//! --watch NAME ENGINE` puts the relay's socket in a folder of its own, which the container
//! bind-mounts (a folder, so it can be mounted before the socket is there), and holds the
//! relay's lease until the container named NAME has run and stopped. `--devcontainer NAME`
//! prints the `devcontainer.json` part that does all of it.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use lidguard_ipc::Places;
use lidguard_ipc::relay::RELAY_ENV;

use super::relay::{Place, Relay};
use crate::output;

/// Where the folder with the relay is mounted in the container.
const MOUNTED_AT: &str = "/run/lidguard";

/// The relay's socket in that folder.
const SOCKET: &str = "relay.sock";

/// Set for the background process the watch leaves running.
const BACKGROUND_ENV: &str = "LIDGUARD_CONTAINER_WATCH_BACKGROUND";

/// How long a watch waits for its container to start (a devcontainer's image may be built
/// first).
const TO_START: Duration = Duration::from_secs(30 * 60);

/// How often a watch looks for a container that has not started yet.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// `--devcontainer NAME ENGINE…`: the `devcontainer.json` part, as JSON.
pub(crate) fn devcontainer(
    places: &Places,
    name: &str,
    engine: &[String],
) -> anyhow::Result<ExitCode> {
    let folder = folder(places, name)?;
    let exe = std::env::current_exe().context("cannot find the lidguard executable")?;
    let mut watch = vec![exe.display().to_string(), "container".into()];
    watch.extend(["--watch".into(), name.to_owned()]);
    watch.extend(engine.iter().cloned());
    let config = serde_json::json!({
        "initializeCommand": watch,
        "runArgs": ["--name", name],
        "mounts": [format!("source={},target={MOUNTED_AT},type=bind", folder.display())],
        "containerEnv": { RELAY_ENV: format!("{MOUNTED_AT}/{SOCKET}") },
    });
    output::line(&serde_json::to_string_pretty(&config)?)?;
    Ok(ExitCode::SUCCESS)
}

/// `--watch NAME ENGINE…`: starts the watch in the background once the relay's socket is
/// there, or says that one already watches.
pub(crate) fn watch(places: &Places, name: &str, engine: &[String]) -> anyhow::Result<ExitCode> {
    let Some((program, globals)) = engine.split_first() else {
        bail!("name the engine: `lidguard container --watch {name} docker`");
    };
    let folder = folder(places, name)?;
    let socket = folder.join(SOCKET);
    if lidguard_files::environment::var(BACKGROUND_ENV).is_some() {
        return hold(places, name, program, globals, &socket);
    }
    if std::os::unix::net::UnixStream::connect(&socket).is_ok() {
        output::line(&format!("container {name} is already watched"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let _ = std::fs::remove_file(&socket);
    let exe = std::env::current_exe().context("cannot find the lidguard executable")?;
    // A group of its own: the tool that ran this may end its command's group.
    let mut background = Command::new(exe)
        .process_group(0)
        .args(["container", "--watch", name])
        .args(engine)
        .env(BACKGROUND_ENV, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot start the watch")?;
    // The caller (a devcontainer tool) creates the container next: the socket is there first.
    let deadline = Instant::now() + lidguard_ipc::client::STARTUP_TIMEOUT;
    while !socket.exists() {
        if let Some(status) = background.try_wait()? {
            bail!("the watch of container {name} ended at once ({status}); see lidguard's log");
        }
        if Instant::now() > deadline {
            bail!("the watch of container {name} made no relay in time; see lidguard's log");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    output::line(&format!(
        "watching container {name} (pid {}): its agents reach this machine through {}",
        background.id(),
        socket.display()
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// The background part: the relay and its lease, until the container has run and stopped (or
/// never started within [`TO_START`]).
fn hold(
    places: &Places,
    name: &str,
    program: &str,
    globals: &[String],
    socket: &Path,
) -> anyhow::Result<ExitCode> {
    let engine_name = Path::new(program)
        .file_name()
        .map_or_else(|| program.to_owned(), |n| n.to_string_lossy().into_owned());
    let place = Place {
        key: format!("container:{name}"),
        via: format!("container {name} ({engine_name})"),
    };
    let id = format!("container-watch-{}", std::process::id());
    let _relay = Relay::open_at(places, &id, place, socket)?;
    let engine = |verb: &[&str]| {
        let mut cmd = Command::new(program);
        cmd.args(globals).arg("container").args(verb).arg(name);
        cmd.stdin(Stdio::null()).stderr(Stdio::null());
        cmd
    };
    let started_by = Instant::now() + TO_START;
    let mut has_run = false;
    loop {
        let state = engine(&["inspect", "--format", "{{.State.Status}}"])
            .output()
            .ok()
            .filter(|out| out.status.success())
            .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned());
        match state.as_deref() {
            Some("running" | "paused" | "restarting") => {
                has_run = true;
                // Blocks until the container is no longer running.
                let _ = engine(&["wait"]).stdout(Stdio::null()).status();
            }
            // Not created or not started yet: the tool is still at it.
            None | Some("created" | "configured") if !has_run && Instant::now() < started_by => {
                std::thread::sleep(LOOK_EVERY);
            }
            _ => break,
        }
    }
    tracing::info!(container = name, has_run, "the watched container stopped");
    Ok(ExitCode::SUCCESS)
}

/// The folder for container `name`'s relay, made private (the container's root still reaches
/// it through the mount).
fn folder(places: &Places, name: &str) -> anyhow::Result<PathBuf> {
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if !valid {
        bail!(
            "{name:?} is not a container name (letters, digits, `_`, `.`, `-`, starting with a \
             letter or digit)"
        );
    }
    places.ensure_runtime_dir()?;
    let folder = places.runtime_dir.join("containers").join(name);
    lidguard_files::private::ensure_dir(&folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    Ok(folder)
}
