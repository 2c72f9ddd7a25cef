//! Relays as Unix sockets (and the TCP relay named in the environment).

use std::time::Instant;

use super::{RELAY_ENV, RELAY_SECRET_ENV, SSH_RELAY_DIR, SSH_RELAY_PREFIX};
use crate::client::{self, ClientError};
use crate::protocol::{Request, Response};

/// The request through the first relay that answers, if there is one: a TCP relay named in
/// [`RELAY_ENV`], else the sockets of [`relays`]. A socket nobody listens on any more (its ssh
/// connection ended) is removed, so the next event does not try it again.
pub fn ask(request: &Request, deadline: Instant) -> Option<Result<Response, ClientError>> {
    let named = lidguard_files::environment::var(RELAY_ENV);
    if let Some(address) = named
        .as_ref()
        .and_then(|v| v.to_str()?.strip_prefix("tcp://"))
    {
        let secret = lidguard_files::environment::text(RELAY_SECRET_ENV).unwrap_or_default();
        return Some(client::request_tcp(address, &secret, request, deadline));
    }
    let (paths, shared) = relays(named);
    let mut last = None;
    for path in paths {
        match client::request_at(&path, request, deadline) {
            Err(ClientError::NotRunning { .. }) if shared => {
                let _ = std::fs::remove_file(&path);
            }
            Err(e) => last = Some(Err(e)),
            answer => return Some(answer),
        }
    }
    last
}

/// The relays to the daemon of the machine the user sits at, when this hook runs on the far
/// side of `lidguard ssh` (or in a container given one), best first: `LIDGUARD_RELAY`, else
/// the sockets `/tmp/lidguard-relay-<user>-*.sock` where each `lidguard ssh` connection has
/// sshd put its own (sshd leaves them behind when the connection ends, so each connection
/// takes a new name), newest first. At that shared place only a socket of this user's counts:
/// another user's file there is ignored (sshd, running as this user, creates the real ones).
/// `/tmp` is read only under an ssh session (`SSH_CONNECTION`, which sshd sets and tmux or
/// screen started from it pass on): a local agent's event never pays for the listing. The flag
/// says whether the paths are the shared place's, where a dead socket may be removed.
/// `named` is [`RELAY_ENV`]'s value.
fn relays(named: Option<std::ffi::OsString>) -> (Vec<std::path::PathBuf>, bool) {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    // A socket named by the user's own environment is theirs, whoever owns it inside a
    // container (Docker runs as root there; the socket is the laptop user's).
    if let Some(path) = named.filter(|v| !v.is_empty()) {
        let path = std::path::PathBuf::from(path);
        let socket = std::fs::metadata(&path).is_ok_and(|m| m.file_type().is_socket());
        return (if socket { vec![path] } else { Vec::new() }, false);
    }
    if lidguard_files::environment::var("SSH_CONNECTION").is_none() {
        return (Vec::new(), false);
    }
    let Some(user) = lidguard_files::environment::text("USER")
        .or_else(|| lidguard_files::environment::text("LOGNAME"))
        .filter(|u| !u.is_empty() && !u.contains('/'))
    else {
        return (Vec::new(), false);
    };
    let prefix = format!("{SSH_RELAY_PREFIX}{user}-");
    let Ok(entries) = std::fs::read_dir(SSH_RELAY_DIR) else {
        return (Vec::new(), false);
    };
    let me = rustix::process::getuid().as_raw();
    let mut found: Vec<(std::time::SystemTime, std::path::PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with(&prefix) && name.ends_with(".sock")
        })
        .filter_map(|e| {
            let meta = std::fs::symlink_metadata(e.path()).ok()?;
            let ours = meta.file_type().is_socket() && meta.uid() == me;
            ours.then(|| (meta.modified().unwrap_or(std::time::UNIX_EPOCH), e.path()))
        })
        .collect();
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    (found.into_iter().map(|(_, path)| path).collect(), true)
}
