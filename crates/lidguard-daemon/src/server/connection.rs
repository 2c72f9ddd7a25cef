//! One accepted connection on the daemon's side: its halves and its request line, read in the
//! order connections come ([`IN_ORDER`]), and the payload a queued hook sends after it.

use std::time::Duration;

use lidguard_ipc::protocol::{MAX_REQUEST_BYTES, PROTOCOL_VERSION, Request};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, BufReader};

/// How long the accept loop waits for a connection's request line before it takes the next
/// connection. Clients write it as soon as they connect, so requests are read in the order
/// their connections came: a hook that reads no answer writes and exits, and its events are
/// queued ahead of whatever connects after it (the agent's next event, a `status`). A client
/// slower than this gets the rest of [`READ_TIMEOUT`](super::READ_TIMEOUT) on its own, without that order.
pub(super) const IN_ORDER: Duration = Duration::from_millis(100);

/// An accepted connection: its two halves and the request line as far as it was read.
pub(super) struct Connection<S> {
    pub(super) reader: tokio::io::Take<BufReader<tokio::io::ReadHalf<S>>>,
    pub(super) writer: tokio::io::WriteHalf<S>,
    pub(super) line: Vec<u8>,
    /// How the read of the line ended, once it did.
    pub(super) read: Option<std::io::Result<usize>>,
    /// The line parsed, once it was (by [`Connection::queued_hook`]).
    pub(super) parsed: Option<Result<Request, BadRequest>>,
}

impl<S: AsyncRead + AsyncWrite> Connection<S> {
    pub(super) fn new(stream: S) -> Connection<S> {
        let (read_half, writer) = tokio::io::split(stream);
        Connection {
            reader: BufReader::new(read_half).take(MAX_REQUEST_BYTES as u64 + 1),
            writer,
            line: Vec::new(),
            read: None,
            parsed: None,
        }
    }

    /// Reads on the request line for `within` at most; whether its read ended (a partly read
    /// line is kept, and the next call goes on with it).
    pub(super) async fn read_line(&mut self, within: Duration) -> bool {
        if self.read.is_none()
            && let Ok(read) =
                tokio::time::timeout(within, self.reader.read_until(b'\n', &mut self.line)).await
        {
            self.read = Some(read);
        }
        self.read.is_some()
    }

    /// The `length` bytes that follow the line (a queued hook's payload), read within
    /// [`IN_ORDER`]; `None` when they do not all come.
    pub(super) async fn read_payload(&mut self, length: usize) -> Option<Vec<u8>> {
        if length > lidguard_ipc::protocol::MAX_FOLLOWING_PAYLOAD {
            return None;
        }
        let mut payload = vec![0; length];
        let read = self.reader.read_exact(&mut payload);
        matches!(tokio::time::timeout(IN_ORDER, read).await, Ok(Ok(_))).then_some(payload)
    }

    /// The request, when it is a hook's that reads no answer. Any other request parsed here
    /// is kept in `parsed` for the exchange, which parses nothing twice.
    pub(super) fn queued_hook(&mut self) -> Option<Request> {
        let complete =
            matches!(self.read, Some(Ok(n)) if n > 0 && self.line.len() <= MAX_REQUEST_BYTES);
        if !complete {
            return None;
        }
        match parse_request(&self.line) {
            Ok(request @ Request::Hook { queued: true, .. }) => Some(request),
            other => {
                self.parsed = Some(other);
                None
            }
        }
    }
}

/// Why a request line is not taken; the text is the client's answer.
#[derive(Debug, thiserror::Error)]
pub(super) enum BadRequest {
    /// Not JSON, or not a request of this protocol.
    #[error("malformed request: {0}")]
    Malformed(serde_json::Error),
    /// No protocol version.
    #[error("malformed request: missing protocol version `v`")]
    NoVersion,
    /// Another protocol version.
    #[error(
        "protocol version {0} is not supported: this daemon speaks version {PROTOCOL_VERSION}. \
         Stop the running daemon (its pid is in the lock file next to the socket); the next \
         `lidguard start` runs the current one."
    )]
    OtherVersion(u64),
}

/// Checks the version first, so an old or new client gets a clear answer instead of a
/// confusing field error.
pub(super) fn parse_request(line: &[u8]) -> Result<Request, BadRequest> {
    let value: serde_json::Value = serde_json::from_slice(line).map_err(BadRequest::Malformed)?;
    match value.get("v").and_then(serde_json::Value::as_u64) {
        Some(v) if v == u64::from(PROTOCOL_VERSION) => {}
        Some(v) => return Err(BadRequest::OtherVersion(v)),
        None => return Err(BadRequest::NoVersion),
    }
    let envelope: lidguard_ipc::protocol::RequestEnvelope =
        serde_json::from_value(value).map_err(BadRequest::Malformed)?;
    Ok(envelope.request)
}
