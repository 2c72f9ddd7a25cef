//! `lidguard container ENGINE run [OPTIONS…] IMAGE [COMMAND…]`: the user's own container
//! engine (Podman, Docker) running a container with a relay to this machine's daemon
//! bind-mounted at [`CONTAINER_SOCKET`] and named in `LIDGUARD_RELAY`, so an agent in the
//! container (with the static `lidguard-hook` and lidguard's entries there) keeps this machine
//! awake. With `--tcp HOST`, for a container in a VM no socket crosses (Docker Desktop), the
//! relay is a TCP port instead, named `tcp://HOST:PORT`, whose secret goes with it. The relay's
//! lease is the engine's `run` in the foreground: when the container stops, its sessions end.

use std::process::{Command, ExitCode};

use anyhow::{Context, bail};
use lidguard_ipc::Places;
use lidguard_ipc::relay::{RELAY_ENV, RELAY_SECRET_ENV};

use super::relay::{Place, Relay, exit_code};
use crate::cli::ContainerArgs;

/// Where the relay is in the container.
pub(crate) const CONTAINER_SOCKET: &str = "/run/lidguard-relay.sock";

pub(crate) fn run(places: &Places, container: &ContainerArgs) -> anyhow::Result<ExitCode> {
    let args = &container.engine_args;
    if let Some(name) = &container.watch {
        return super::container_watch::watch(places, name, args);
    }
    if let Some(name) = &container.devcontainer {
        return super::container_watch::devcontainer(places, name, args);
    }
    let usage = "give the engine and its `run` command: \
                 `lidguard container podman run [OPTIONS…] IMAGE [COMMAND…]`";
    let Some((engine, rest)) = args.split_first() else {
        bail!("{usage}");
    };
    // The engine's global options (`--runtime runc`) and `container` come before `run`.
    let run_at = rest.iter().position(|a| a == "run").context(usage)?;
    let (before, after) = (&rest[..=run_at], &rest[run_at + 1..]);
    if after.iter().any(|a| detaches(a)) {
        bail!(
            "a detached container outlives `lidguard container`, whose life is the relay's \
             lease: run it in the foreground (or leave `-d` out and put `&` after the command)"
        );
    }
    let name = after.iter().enumerate().find_map(|(i, a)| {
        a.strip_prefix("--name=")
            .map(str::to_owned)
            .or_else(|| (a == "--name").then(|| after.get(i + 1).cloned()).flatten())
    });
    let engine_name = std::path::Path::new(engine)
        .file_name()
        .map_or_else(|| engine.clone(), |n| n.to_string_lossy().into_owned());
    let id = format!("container-{}", std::process::id());
    // A named container is one place across its runs; an unnamed one is this run alone.
    let place = match name {
        Some(name) => Place {
            key: format!("container:{name}").replace('/', "_"),
            via: format!("container {name} ({engine_name})"),
        },
        None => Place {
            key: id.clone(),
            via: format!("a container ({engine_name})"),
        },
    };
    let mut engine_run = Command::new(engine);
    engine_run.args(before);
    let relay = match &container.tcp {
        None => {
            let (relay, socket) = Relay::open(places, &id, place)?;
            let mount = format!("{}:{CONTAINER_SOCKET}", socket.display());
            let named = format!("{RELAY_ENV}={CONTAINER_SOCKET}");
            engine_run.args(["-v", &mount, "-e", &named]);
            relay
        }
        Some(host) => {
            let (relay, address, secret) =
                Relay::open_tcp(places, &id, place, container.tcp_listen)?;
            let named = format!("{RELAY_ENV}=tcp://{host}:{}", address.port());
            // `-e NAME` alone: the engine takes the value from its own environment, which
            // other users cannot read (a command line they can).
            engine_run.args(["-e", &named, "-e", RELAY_SECRET_ENV]);
            engine_run.env(RELAY_SECRET_ENV, secret);
            relay
        }
    };
    let status = engine_run
        .args(after)
        .status()
        .with_context(|| format!("cannot run {engine}"));
    drop(relay);
    Ok(exit_code(status?))
}

/// Whether a `run` argument detaches the container: `-d`, `--detach`, or a group of short
/// flags with `d` (`-dit`).
fn detaches(arg: &str) -> bool {
    if arg == "--detach" || arg == "--detach=true" {
        return true;
    }
    arg.strip_prefix('-').is_some_and(|flags| {
        !flags.starts_with('-')
            && flags.contains('d')
            && flags.chars().all(|c| matches!(c, 'd' | 'i' | 't'))
    })
}

#[cfg(test)]
mod tests {
    use super::detaches;

    #[test]
    fn detached_runs_are_recognized() {
        for arg in ["-d", "--detach", "-dit", "-itd", "--detach=true"] {
            assert!(detaches(arg), "{arg}");
        }
        for arg in ["-it", "--rm", "--detach=false", "-v", "--device"] {
            assert!(!detaches(arg), "{arg}");
        }
    }
}
