//! The socket side: accept connections, check the peer, read one request, hand it to the
//! runtime, write one response — or two, for a Stop hook told to wait for ask before sleep
//! (the first says until when; the second carries the outcome).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use lidguard_ipc::protocol::{MAX_REQUEST_BYTES, Outcome, PROTOCOL_VERSION, Request, Response};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{mpsc, oneshot};

/// A request on its way to the runtime, with the channel for its answer.
pub(crate) type Job = (Request, oneshot::Sender<Answer>);

/// The runtime's answer: a response, and for a waiting hook the channel of the second one.
pub(crate) type Answer = (Response, Option<Waiting>);

/// A hook that waits for a second answer (ask before sleep).
pub(crate) struct Waiting {
    /// Where the second answer comes from.
    pub(crate) answer: oneshot::Receiver<Response>,
    /// Held while the connection lives: dropping it tells the runtime the hook is gone.
    pub(crate) present: oneshot::Sender<()>,
}

/// How long past the promised time a waiting connection is kept before it is answered anyway.
const WAIT_GRACE: Duration = Duration::from_secs(5);

/// How long a client may take to send its request line.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Binds the socket, replacing a stale one. Only the lock holder calls this, so a socket file
/// that exists is left over from a daemon that died.
pub(crate) fn bind(path: &Path) -> std::io::Result<UnixListener> {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::remove_file(path) {
        Ok(()) => tracing::info!(socket = %path.display(), "removed a stale socket"),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let listener = UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

/// Accepts connections until aborted. Every connection task holds a clone of `alive`, so the
/// runtime can wait for answers still being written before it exits.
pub(crate) async fn accept_loop(listener: UnixListener, jobs: mpsc::Sender<Job>, alive: Arc<()>) {
    let own_uid = rustix::process::getuid().as_raw();
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let jobs = jobs.clone();
        let alive = Arc::clone(&alive);
        tokio::spawn(async move {
            let _alive = alive;
            if let Err(e) = serve_connection(stream, own_uid, jobs).await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
        });
    }
}

async fn serve_connection(
    mut stream: UnixStream,
    own_uid: u32,
    jobs: mpsc::Sender<Job>,
) -> std::io::Result<()> {
    // The socket directory is private already; the uid check is the second wall, and the one
    // that holds if someone loosens the directory's permissions.
    let peer = stream.peer_cred()?;
    if peer.uid() != own_uid {
        tracing::warn!(peer_uid = peer.uid(), peer_pid = ?peer.pid(), "refused a connection from another user");
        let answer = Response::error(format!(
            "connection refused: this lidguard daemon belongs to uid {own_uid}, and you are uid {}",
            peer.uid()
        ));
        return write_response(&mut stream, &answer).await;
    }
    let (read_half, mut write_half) = stream.split();
    let mut reader = BufReader::new(read_half).take(MAX_REQUEST_BYTES as u64 + 1);
    let mut line = Vec::new();
    let read = tokio::time::timeout(READ_TIMEOUT, reader.read_until(b'\n', &mut line)).await;
    let (answer, then) = match read {
        Err(_) => (Response::error("no request received in time"), None),
        Ok(Err(e)) => return Err(e),
        Ok(Ok(_)) if line.len() > MAX_REQUEST_BYTES => (
            Response::error(format!(
                "request too large (limit {MAX_REQUEST_BYTES} bytes)"
            )),
            None,
        ),
        Ok(Ok(0)) => return Ok(()),
        Ok(Ok(_)) => match parse_request(&line) {
            Ok(request) => dispatch(request, &jobs).await,
            Err(message) => {
                tracing::warn!(%message, "malformed request");
                (Response::error(message), None)
            }
        },
    };
    let wait_until = answer.wait_until;
    let mut bytes = serde_json::to_vec(&answer).unwrap_or_default();
    bytes.push(b'\n');
    write_half.write_all(&bytes).await?;
    if let (Some(then), Some(until)) = (then, wait_until) {
        let left = until.duration_since(jiff::Timestamp::now()).unsigned_abs();
        let mut probe = [0_u8; 1];
        let _present = then.present;
        let second = tokio::select! {
            answer = tokio::time::timeout(left + WAIT_GRACE, then.answer) => match answer {
                Ok(Ok(second)) => second,
                // The daemon stopped, or broke its promise: the hook goes on without a reply.
                _ => Response::ok(
                    Outcome::Stopped,
                    "no reply: the wait ended without an answer",
                ),
            },
            // The hook closed its end (its agent stopped waiting): dropping `_present` tells
            // the runtime, which drops the question.
            _ = reader.get_mut().read(&mut probe) => return Ok(()),
        };
        let mut bytes = serde_json::to_vec(&second).unwrap_or_default();
        bytes.push(b'\n');
        write_half.write_all(&bytes).await?;
    }
    write_half.shutdown().await
}

async fn dispatch(request: Request, jobs: &mpsc::Sender<Job>) -> Answer {
    let (tx, rx) = oneshot::channel();
    if jobs.send((request, tx)).await.is_err() {
        return (Response::error("the daemon is shutting down"), None);
    }
    rx.await
        .unwrap_or_else(|_| (Response::error("the daemon is shutting down"), None))
}

async fn write_response(stream: &mut UnixStream, answer: &Response) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec(answer).unwrap_or_default();
    bytes.push(b'\n');
    stream.write_all(&bytes).await?;
    stream.shutdown().await
}

/// Checks the version first, so an old or new client gets a clear answer instead of a
/// confusing field error.
fn parse_request(line: &[u8]) -> Result<Request, String> {
    let value: serde_json::Value =
        serde_json::from_slice(line).map_err(|e| format!("malformed request: {e}"))?;
    let version = value.get("v").and_then(serde_json::Value::as_u64);
    match version {
        Some(v) if v == u64::from(PROTOCOL_VERSION) => {}
        Some(v) => {
            return Err(format!(
                "protocol version {v} is not supported: this daemon speaks version {PROTOCOL_VERSION}. \
                 Stop the running daemon (its pid is in the lock file next to the socket); the next `lidguard start` runs the current one."
            ));
        }
        None => return Err("malformed request: missing protocol version `v`".into()),
    }
    let envelope: lidguard_ipc::protocol::RequestEnvelope =
        serde_json::from_value(value).map_err(|e| format!("malformed request: {e}"))?;
    Ok(envelope.request)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_rejects_garbage_and_other_versions_clearly() {
        assert!(
            parse_request(b"not json")
                .unwrap_err()
                .starts_with("malformed request")
        );
        assert!(
            parse_request(b"{}")
                .unwrap_err()
                .contains("missing protocol version")
        );
        assert!(
            parse_request(br#"{"v":99,"command":"status"}"#)
                .unwrap_err()
                .contains("version 99")
        );
        assert!(
            parse_request(br#"{"v":1,"command":"explode"}"#)
                .unwrap_err()
                .contains("malformed request")
        );
        assert_eq!(
            parse_request(br#"{"v":1,"command":"status"}"#).unwrap(),
            Request::Status
        );
    }
}
