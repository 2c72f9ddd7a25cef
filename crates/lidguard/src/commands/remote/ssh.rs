//! `lidguard ssh [SSH OPTIONS…] DESTINATION [COMMAND…]`: the user's own `ssh`, with a relay
//! to this machine's daemon forwarded for this connection, so an agent working on the other
//! side keeps this machine awake.
//!
//! The relay ([`super::relay`]) is a socket of this process's that sshd forwards to
//! `/tmp/lidguard-relay-<remote user>-<connection>.sock` on the remote host (`RemoteForward` of
//! a Unix socket), where the remote `lidguard-hook` looks first; its lease ends with `ssh`.
//! Each connection takes a new name because sshd leaves the socket behind when the connection
//! ends and, by default (`StreamLocalBindUnlink no` on the server), refuses to bind over it.

use std::process::{Command, ExitCode};

use anyhow::{Context, bail};
use lidguard_ipc::Places;

use super::relay::{Place, Relay, exit_code};

/// Where sshd puts relay `relay` on the remote host for `user` (the remote hook finds it there).
fn remote_socket(user: &str, relay: &str) -> String {
    use lidguard_ipc::relay::{SSH_RELAY_DIR, SSH_RELAY_PREFIX};
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("{SSH_RELAY_DIR}/{SSH_RELAY_PREFIX}{user}-{relay}-{millis}.sock")
}

pub(crate) fn run(places: &Places, ssh_args: &[String]) -> anyhow::Result<ExitCode> {
    let (user, host) = destination(ssh_args)?;
    let relay = format!("ssh-{}", std::process::id());
    // A connection to the same account that comes back continues its sessions.
    let place = Place {
        key: format!("ssh:{user}@{host}").replace('/', "_"),
        via: format!("ssh {user}@{host}"),
    };

    let forward = remote_socket(&user, &relay);
    let (relay, socket) = Relay::open(places, &relay, place)?;

    let forward = format!("{forward}:{}", socket.display());
    let status = Command::new("ssh")
        .args(["-o", "ExitOnForwardFailure=yes"])
        .args(["-R", &forward])
        .args(ssh_args)
        .status()
        .context("cannot run ssh (is OpenSSH's client installed?)");
    drop(relay);
    Ok(exit_code(status?))
}

/// The remote user and host, as the user's ssh configuration resolves them (`ssh -G`).
pub(crate) fn destination(ssh_args: &[String]) -> anyhow::Result<(String, String)> {
    let out = Command::new("ssh")
        .arg("-G")
        .args(ssh_args)
        .output()
        .context("cannot run ssh (is OpenSSH's client installed?)")?;
    if !out.status.success() {
        bail!(
            "ssh -G could not read the destination: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ').map(str::to_owned))
    };
    let user = field("user").context("ssh -G names no user")?;
    let host = field("hostname").context("ssh -G names no host")?;
    // The user names a path on the remote host: nothing that could leave /tmp.
    if user.is_empty() || user.contains(['/', ':', '\0']) || user.starts_with('.') {
        bail!("the remote user name {user:?} cannot name a relay socket");
    }
    Ok((user, host))
}
