//! The socket side: accept connections, check the peer, read one request, hand it to the
//! runtime, write one response — or two, for a Stop hook told to wait for ask before sleep
//! (the first says until when; the second carries the outcome). The transport is a Unix socket,
//! or on Windows a named pipe (`pipe.rs`); everything after the peer check is the same.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use lidguard_ipc::protocol::{MAX_REQUEST_BYTES, Outcome, Request, Response};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

use crate::leases::{Leases, RELAY_GRACE};
use crate::socket_keeper::{Keeper, Kept};

mod connection;
#[cfg(windows)]
mod pipe;

use connection::{Connection, IN_ORDER, parse_request};

/// What the daemon listens on.
#[cfg(unix)]
pub(crate) type Listener = tokio::net::UnixListener;
/// What the daemon listens on.
#[cfg(windows)]
pub(crate) type Listener = pipe::Listener;

/// A request on its way to the runtime, with the channel for its answer.
pub(crate) type Job = (Request, oneshot::Sender<Answer>);

/// The runtime's answer: a response, and what follows it on the same connection.
pub(crate) type Answer = (Response, Option<Then>);

/// What follows the first answer on a connection.
pub(crate) enum Then {
    /// A Stop hook waits for its second answer (ask before sleep).
    Wait(Waiting),
    /// A follower reads the event stream.
    Follow(crate::stream::Following),
}

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

/// The listening socket: the one systemd passed (socket activation; `true`, and the socket file
/// is systemd's to keep), else a fresh one bound at `path` (`false`).
#[cfg(unix)]
pub(crate) fn listen(path: &Path) -> std::io::Result<(Listener, bool)> {
    if let Some(listener) = activated() {
        listener.set_nonblocking(true)?;
        tracing::info!(socket = %path.display(), "listening on the socket systemd passed");
        return Ok((tokio::net::UnixListener::from_std(listener)?, true));
    }
    crate::socket_keeper::bind(path).map(|listener| (listener, false))
}

/// The named pipe (Windows has no socket activation).
#[cfg(windows)]
pub(crate) fn listen(path: &Path) -> std::io::Result<(Listener, bool)> {
    pipe::Listener::bind(path).map(|listener| (listener, false))
}

/// The first descriptor systemd passed, when this process was socket-activated (systemd's
/// `sd_listen_fds` protocol: `LISTEN_PID` is this process, `LISTEN_FDS` at least 1, the
/// descriptors start at 3) and it is a listening Unix stream socket.
#[cfg(unix)]
fn activated() -> Option<std::os::unix::net::UnixListener> {
    use std::os::fd::{BorrowedFd, FromRawFd, OwnedFd};

    const FIRST_FD: i32 = 3;
    let pid: u32 = lidguard_files::environment::text("LISTEN_PID")?
        .trim()
        .parse()
        .ok()?;
    let count: u32 = lidguard_files::environment::text("LISTEN_FDS")?
        .trim()
        .parse()
        .ok()?;
    if pid != std::process::id() || count == 0 {
        return None;
    }
    // SAFETY: descriptor 3 was passed to this very process (LISTEN_PID) and stays open for the
    // duration of this borrow; nothing else in lidguard uses it.
    let borrowed = unsafe { BorrowedFd::borrow_raw(FIRST_FD) };
    let stream = rustix::net::sockopt::socket_type(borrowed)
        .is_ok_and(|t| t == rustix::net::SocketType::STREAM);
    let unix = rustix::net::getsockname(borrowed)
        .is_ok_and(|a| a.address_family() == rustix::net::AddressFamily::UNIX);
    if !(stream && unix) {
        tracing::warn!("LISTEN_FDS names no Unix stream socket; binding our own");
        return None;
    }
    // SAFETY: as above; from here on this listener owns the descriptor.
    let owned = unsafe { OwnedFd::from_raw_fd(FIRST_FD) };
    Some(std::os::unix::net::UnixListener::from(owned))
}

/// Waits (2 s at most) until the connections of `alive`'s clones have written their answers.
pub(crate) async fn answers_written(alive: &Arc<()>) {
    let written = async {
        while Arc::strong_count(alive) > 1 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    };
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), written).await;
}

/// Accepts connections until aborted. Every connection task holds a clone of `alive`, so the
/// runtime can wait for answers still being written before it exits. With a `keeper`, a socket
/// that stops being the daemon's is bound again, or the reason it cannot be goes to `lost`.
pub(crate) async fn accept_loop(
    mut listener: Listener,
    mut keeper: Option<Keeper>,
    jobs: mpsc::Sender<Job>,
    alive: Arc<()>,
    lost: mpsc::UnboundedSender<String>,
) {
    let me = Peer::current();
    let leases = Leases::default();
    tokio::spawn(end_unheld_relayed(jobs.clone(), leases.clone()));
    loop {
        let accepted = tokio::select! {
            accepted = accept(&mut listener) => accepted,
            () = changed(&mut keeper) => {
                match keeper.as_mut().map(Keeper::check) {
                    Some(Kept::Rebound(fresh)) => listener = fresh,
                    Some(Kept::Lost(why)) => {
                        let _ = lost.send(why);
                        return;
                    }
                    Some(Kept::Ours) | None => {}
                }
                continue;
            }
        };
        let stream = match accepted {
            Ok(stream) => stream,
            Err(e) => {
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        take_in(stream, &me, &jobs, &leases, &alive).await;
    }
}

/// Waits for a change the keeper sees; without one, for ever.
async fn changed(keeper: &mut Option<Keeper>) {
    match keeper {
        Some(keeper) => keeper.changed().await,
        None => std::future::pending().await,
    }
}

#[cfg(unix)]
async fn accept(listener: &mut Listener) -> std::io::Result<tokio::net::UnixStream> {
    listener.accept().await.map(|(stream, _)| stream)
}

#[cfg(windows)]
async fn accept(
    listener: &mut Listener,
) -> std::io::Result<tokio::net::windows::named_pipe::NamedPipeServer> {
    listener.accept().await
}

/// Who may talk to this daemon: the user running it (uid on Unix, SID on Windows).
#[derive(Clone, Debug)]
struct Peer(String);

impl Peer {
    #[cfg(unix)]
    fn current() -> Peer {
        Peer(format!("uid {}", rustix::process::getuid().as_raw()))
    }

    #[cfg(windows)]
    fn current() -> Peer {
        Peer(pipe::own_sid().unwrap_or_else(|e| {
            tracing::warn!(error = %e, "cannot read this process's SID; every client is refused");
            String::new()
        }))
    }

    /// The connecting user, and a process id for the log.
    #[cfg(unix)]
    fn of(stream: &tokio::net::UnixStream) -> std::io::Result<(String, Option<u32>)> {
        let cred = stream.peer_cred()?;
        Ok((
            format!("uid {}", cred.uid()),
            cred.pid().and_then(|p| u32::try_from(p).ok()),
        ))
    }

    #[cfg(windows)]
    fn of(
        stream: &tokio::net::windows::named_pipe::NamedPipeServer,
    ) -> std::io::Result<(String, Option<u32>)> {
        pipe::client_sid(stream)
    }
}

#[cfg(unix)]
type Stream = tokio::net::UnixStream;
#[cfg(windows)]
type Stream = tokio::net::windows::named_pipe::NamedPipeServer;

/// Takes in one accepted connection, in the order connections come: checks the peer, reads its
/// request line ([`IN_ORDER`]), queues a hook's events that await no answer right here, and
/// leaves everything else to a task of its own.
async fn take_in(
    stream: Stream,
    me: &Peer,
    jobs: &mpsc::Sender<Job>,
    leases: &Leases,
    alive: &Arc<()>,
) {
    // The socket directory (the pipe's access list) is private already; this check is the
    // second wall, and the one that holds if someone loosens the first.
    let peer = Peer::of(&stream);
    let mut connection = Connection::new(stream);
    let refused = match &peer {
        Ok((peer, pid)) if me.0.is_empty() || *peer != me.0 => {
            tracing::warn!(%peer, peer_pid = ?pid, "refused a connection from another user");
            Some(Response::error(format!(
                "connection refused: this lidguard daemon belongs to {}, and you are {peer}",
                me.0
            )))
        }
        Ok(_) => None,
        Err(e) => {
            tracing::debug!(error = %e, "cannot read the peer of a connection");
            return;
        }
    };
    if refused.is_none()
        && connection.read_line(IN_ORDER).await
        && let Some(mut request) = connection.queued_hook()
    {
        if let Request::Hook {
            events,
            payload_follows: Some(length),
            ..
        } = &mut request
        {
            let payload = connection.read_payload(*length).await;
            let digest = payload.map(|p| lidguard_ipc::protocol::payload_digest(&p));
            for event in events.iter_mut() {
                event.payload_digest.clone_from(&digest);
            }
        }
        let (answer, _nobody_reads) = oneshot::channel();
        if jobs.send((request, answer)).await.is_err() {
            tracing::warn!("a hook's events came as the daemon stopped; not applied");
        }
        return;
    }
    let (jobs, leases, alive) = (jobs.clone(), leases.clone(), Arc::clone(alive));
    tokio::spawn(async move {
        let _alive = alive;
        let served = match refused {
            Some(answer) => write_response(&mut connection.writer, &answer).await,
            None => exchange(connection, jobs, &leases).await,
        };
        if let Err(e) = served {
            tracing::debug!(error = %e, "connection ended with an error");
        }
    });
}

/// One request and its answer (or two) on an accepted, checked connection.
async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(
    mut connection: Connection<S>,
    jobs: mpsc::Sender<Job>,
    leases: &Leases,
) -> std::io::Result<()> {
    let read = match connection.read_line(READ_TIMEOUT).await {
        true => connection.read.take(),
        false => None,
    };
    let Connection {
        mut reader,
        writer: mut write_half,
        line,
        parsed,
        ..
    } = connection;
    let (answer, then) = match read {
        None => (Response::error("no request received in time"), None),
        Some(Err(e)) => return Err(e),
        Some(Ok(_)) if line.len() > MAX_REQUEST_BYTES => (
            Response::error(format!(
                "request too large (limit {MAX_REQUEST_BYTES} bytes)"
            )),
            None,
        ),
        Some(Ok(0)) => return Ok(()),
        Some(Ok(_)) => match parsed.unwrap_or_else(|| parse_request(&line)) {
            Ok(Request::HoldRelay { relay, place }) => {
                let lease = Lease { relay, place };
                return hold_relay(lease, leases, reader.get_mut(), write_half, &jobs).await;
            }
            Ok(request) => dispatch(request, &jobs).await,
            Err(bad) => {
                tracing::warn!(message = %bad, "malformed request");
                (Response::error(bad.to_string()), None)
            }
        },
    };
    let wait_until = answer.wait_until;
    write_half.write_all(&response_line(&answer)).await?;
    if let Some(Then::Follow(following)) = then {
        return follow(following, reader.get_mut(), write_half).await;
    }
    if let (Some(Then::Wait(then)), Some(until)) = (then, wait_until) {
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
        write_half.write_all(&response_line(&second)).await?;
    }
    write_half.shutdown().await
}

/// A relay's request for a lease: the relay (for the log) and its place.
struct Lease {
    relay: String,
    place: String,
}

/// A relay's lease: answered at once, then held until the holder closes its end (or the
/// connection breaks). Then, when no relay holds the place again within [`RELAY_GRACE`], the
/// sessions that came through the place's relays end.
async fn hold_relay<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
    Lease { relay, place }: Lease,
    leases: &Leases,
    reader: &mut R,
    mut writer: W,
    jobs: &mpsc::Sender<Job>,
) -> std::io::Result<()> {
    // The answer only, without closing this end: the relay reads the end of the connection
    // as this daemon going away, and would take its lease again and again.
    let answer = Response::ok(Outcome::Done, format!("relay {relay} held"));
    writer.write_all(&response_line(&answer)).await?;
    writer.flush().await?;
    let held = leases.hold(&place);
    tracing::info!(%relay, %place, "relay lease held");
    // Whatever the holder sends is ignored: only the end of the connection means something.
    let mut sink = [0_u8; 64];
    while matches!(reader.read(&mut sink).await, Ok(n) if n > 0) {}
    drop(held);
    tracing::info!(%relay, %place, "relay lease ended");
    tokio::time::sleep(RELAY_GRACE).await;
    if leases.held(&place) {
        tracing::info!(%place, "a relay to the place is back: its sessions go on");
    } else {
        let gone = Request::RelayGone {
            place: Some(place),
            held: Vec::new(),
        };
        let _ = dispatch(gone, jobs).await;
    }
    Ok(())
}

/// Once the relays of a daemon that restarted had [`RELAY_GRACE`] to take their leases
/// again, the relayed sessions it found stored whose place no relay held in that time end.
/// (A place held and left since has its own grace time.)
async fn end_unheld_relayed(jobs: mpsc::Sender<Job>, leases: Leases) {
    tokio::time::sleep(RELAY_GRACE).await;
    let gone = Request::RelayGone {
        place: None,
        held: leases.known(),
    };
    let _ = dispatch(gone, &jobs).await;
}

/// Writes the replay, then every new event the follower admits, until it closes its end or
/// the daemon stops. Events waiting together go out in one write.
async fn follow<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
    following: crate::stream::Following,
    reader: &mut R,
    mut writer: W,
) -> std::io::Result<()> {
    use tokio::sync::broadcast::error::{RecvError, TryRecvError};

    let crate::stream::Following {
        replay,
        live,
        filter,
        _present,
    } = following;
    let mut out = String::new();
    for item in &replay {
        out.push_str(&item.line);
    }
    writer.write_all(out.as_bytes()).await?;
    let Some(mut live) = live else {
        return writer.shutdown().await;
    };
    let mut probe = [0_u8; 1];
    loop {
        out.clear();
        let first = tokio::select! {
            received = live.recv() => received,
            // The follower closed its end (or wrote something, which it must not).
            _ = reader.read(&mut probe) => return Ok(()),
        };
        let mut next = Ok(first);
        loop {
            match next {
                Ok(Ok(item)) => {
                    if item.admitted_by(&filter) {
                        out.push_str(&item.line);
                    }
                }
                Ok(Err(RecvError::Lagged(missed))) | Err(TryRecvError::Lagged(missed)) => {
                    out.push_str(&crate::stream::lost_line(missed));
                }
                Ok(Err(RecvError::Closed)) | Err(TryRecvError::Closed) => {
                    writer.write_all(out.as_bytes()).await?;
                    return writer.shutdown().await;
                }
                Err(TryRecvError::Empty) => break,
            }
            if out.len() > 64 * 1024 {
                break;
            }
            next = live.try_recv().map(Ok);
        }
        writer.write_all(out.as_bytes()).await?;
    }
}

async fn dispatch(request: Request, jobs: &mpsc::Sender<Job>) -> Answer {
    let (tx, rx) = oneshot::channel();
    if jobs.send((request, tx)).await.is_err() {
        return (Response::error("the daemon is shutting down"), None);
    }
    rx.await
        .unwrap_or_else(|_| (Response::error("the daemon is shutting down"), None))
}

/// Writes `answer` and closes this end: the last word on the connection.
async fn write_response<S: AsyncWrite + Unpin>(
    stream: &mut S,
    answer: &Response,
) -> std::io::Result<()> {
    stream.write_all(&response_line(answer)).await?;
    stream.shutdown().await
}

/// `answer` as the line the protocol sends.
fn response_line(answer: &Response) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(answer).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lease is the open connection: the answer must not close the daemon's end, or the
    /// relay reads the end at once, takes a new lease every half second, and the grace times of
    /// the leases it let go end its place's sessions the moment it goes.
    #[tokio::test]
    async fn a_relay_lease_stays_open_after_its_answer_until_the_relay_lets_go() {
        use tokio::io::AsyncBufReadExt;
        let (relay, daemon) = tokio::io::duplex(4096);
        let (jobs, _queue) = mpsc::channel(1);
        let leases = Leases::default();
        let served = tokio::spawn({
            let leases = leases.clone();
            async move { exchange(Connection::new(daemon), jobs, &leases).await }
        });
        let (read, mut write) = tokio::io::split(relay);
        let request = Request::HoldRelay {
            relay: "ssh-1".into(),
            place: "ssh:a@b".into(),
        };
        let envelope = lidguard_ipc::protocol::RequestEnvelope {
            v: lidguard_ipc::protocol::PROTOCOL_VERSION,
            request,
        };
        let mut line = serde_json::to_vec(&envelope).unwrap();
        line.push(b'\n');
        write.write_all(&line).await.unwrap();
        let mut reader = tokio::io::BufReader::new(read);
        let mut answer = String::new();
        reader.read_line(&mut answer).await.unwrap();
        assert!(answer.contains("relay ssh-1 held"), "{answer}");
        assert!(leases.held("ssh:a@b"));
        // Nothing more comes, and not the end either.
        let mut more = [0_u8; 1];
        let read = tokio::time::timeout(Duration::from_millis(300), reader.read(&mut more)).await;
        assert!(read.is_err(), "the daemon closed the lease: {read:?}");
        assert!(leases.held("ssh:a@b"));
        // The relay lets go: so does the daemon.
        drop((reader, write));
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while leases.held("ssh:a@b") && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(!leases.held("ssh:a@b"));
        served.abort();
    }

    #[test]
    fn parse_rejects_garbage_and_other_versions_clearly() {
        assert!(
            parse_request(b"not json")
                .unwrap_err()
                .to_string()
                .starts_with("malformed request")
        );
        assert!(
            parse_request(b"{}")
                .unwrap_err()
                .to_string()
                .contains("missing protocol version")
        );
        assert!(
            parse_request(br#"{"v":99,"command":"status"}"#)
                .unwrap_err()
                .to_string()
                .contains("version 99")
        );
        assert!(
            parse_request(br#"{"v":1,"command":"explode"}"#)
                .unwrap_err()
                .to_string()
                .contains("malformed request")
        );
        assert_eq!(
            parse_request(br#"{"v":1,"command":"status"}"#).unwrap(),
            Request::Status
        );
    }
}
