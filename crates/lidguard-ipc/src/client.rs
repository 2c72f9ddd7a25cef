//! The synchronous client: one request, one response, over the daemon's socket.
//!
//! Plain `std` and blocking with timeouts, so hooks can use it without an async runtime.

use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

use lidguard_core::event::AgentEvent;

use crate::places::Places;
use crate::protocol::{Request, Response, payload_digest};

mod daemon;
mod starting;

pub use daemon::{Daemon, REQUEST_TIMEOUT, STARTUP_TIMEOUT};
pub use starting::{REPORT_START, request_starting_daemon};

/// Why a request did not get an answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// Nothing listens on the socket.
    #[error("the lidguard daemon is not running (no socket at {socket})")]
    NotRunning {
        /// The socket path tried.
        socket: String,
    },
    /// The daemon did not answer in time.
    #[error("the lidguard daemon did not answer within {0:?}")]
    Timeout(Duration),
    /// The daemon refused us or answered something unreadable.
    #[error("unexpected answer from the lidguard daemon: {0}")]
    Protocol(String),
    /// Any other socket error.
    #[error("cannot talk to the lidguard daemon at {socket}: {source}")]
    Io {
        /// The socket path.
        socket: String,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// The daemon could not be started.
    #[error("cannot start the lidguard daemon: {0}")]
    Spawn(String),
    /// The daemon answered that it did not carry the request out.
    #[error("the lidguard daemon refused: {0}")]
    Refused(String),
}

/// Sends `request` and waits at most `timeout` for the answer. When the answer says a second
/// one follows (`waitUntil`, ask before sleep), waits for that one until the promised time
/// (plus a little) and returns it instead.
pub fn request(
    places: &Places,
    request: &Request,
    timeout: Duration,
) -> Result<Response, ClientError> {
    request_by(places, request, Instant::now() + timeout)
}

/// [`request`] with one deadline for everything — connecting (a daemon whose backlog is full
/// makes a plain connect wait), writing and reading: a hook gives up by `deadline` whatever the
/// daemon does. Only the promised second answer of ask before sleep may come later.
#[cfg(unix)]
pub fn request_by(
    places: &Places,
    request: &Request,
    deadline: Instant,
) -> Result<Response, ClientError> {
    request_at(&places.socket(), request, deadline)
}

/// [`request_by`] through the socket at `socket`: the daemon's, or a relay to a daemon on
/// another machine (`lidguard ssh`'s forwarded socket).
#[cfg(unix)]
pub fn request_at(
    socket: &Path,
    request: &Request,
    deadline: Instant,
) -> Result<Response, ClientError> {
    let timeout = deadline.saturating_duration_since(Instant::now());
    let stream = connect_by(socket, deadline).map_err(|e| classify(socket, e, timeout))?;
    exchange(stream, socket, b"", request, deadline)
}

/// Hands a hook's events that await no answer to this host's daemon ([`Request::Hook`]'s
/// `queued`): the request line, then `payload` when it is small enough for the daemon to digest
/// (else the digest is computed here), written and closed by `deadline`, without waiting for the
/// daemon's work — it reads request lines in the order connections come, so these events are
/// queued ahead of whatever connects after.
#[cfg(unix)]
pub fn hand_over(
    places: &Places,
    mut events: Vec<AgentEvent>,
    payload: &[u8],
    deadline: Instant,
) -> Result<(), ClientError> {
    use std::io::Write;

    let follows = payload.len() <= crate::protocol::MAX_FOLLOWING_PAYLOAD;
    if !follows {
        set_digest(&mut events, payload);
    }
    let request = Request::Hook {
        events,
        queued: true,
        payload_follows: follows.then_some(payload.len()),
    };
    let socket = places.socket();
    let timeout = deadline.saturating_duration_since(Instant::now());
    let io_err = |e| classify(&socket, e, timeout);
    let mut stream = connect_by(&socket, deadline).map_err(io_err)?;
    let left = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1));
    stream.set_write_timeout(Some(left)).map_err(io_err)?;
    let mut line = request_line(b"", &request)?;
    if follows {
        line.extend_from_slice(payload);
    }
    stream.write_all(&line).map_err(io_err)
}

/// [`hand_over`] where the daemon listens on a named pipe (Windows): the events with their
/// digest, and the daemon's answer waited for.
#[cfg(not(unix))]
pub fn hand_over(
    places: &Places,
    mut events: Vec<AgentEvent>,
    payload: &[u8],
    deadline: Instant,
) -> Result<(), ClientError> {
    set_digest(&mut events, payload);
    let request = Request::Hook {
        events,
        queued: false,
        payload_follows: None,
    };
    let response = request_by(places, &request, deadline)?;
    if response.ok {
        Ok(())
    } else {
        Err(ClientError::Refused(response.message))
    }
}

/// Every event gets the digest of the payload they came in.
pub fn set_digest(events: &mut [AgentEvent], payload: &[u8]) {
    let digest = payload_digest(payload);
    for event in events {
        event.payload_digest = Some(digest.clone());
    }
}

/// [`request_by`] through a relay's TCP port (`lidguard container --tcp`, where no socket
/// crosses into the container's VM): `address` is `host:port`; the relay's `secret` goes first,
/// on a line of its own, and a relay given another one answers nothing.
pub fn request_tcp(
    address: &str,
    secret: &str,
    request: &Request,
    deadline: Instant,
) -> Result<Response, ClientError> {
    use std::net::ToSocketAddrs;

    let label = Path::new(address);
    let timeout = deadline.saturating_duration_since(Instant::now());
    let io_err = |e| classify(label, e, timeout);
    let mut last = io::Error::new(io::ErrorKind::NotFound, "the name has no address");
    for addr in address.to_socket_addrs().map_err(io_err)? {
        let left = deadline.saturating_duration_since(Instant::now());
        match std::net::TcpStream::connect_timeout(&addr, left.max(Duration::from_millis(1))) {
            Ok(stream) => {
                let secret = format!("{secret}\n");
                return exchange(stream, label, secret.as_bytes(), request, deadline);
            }
            Err(e) => last = e,
        }
    }
    Err(io_err(last))
}

/// A connection a request goes over: a Unix socket or a relay's TCP port.
trait Conn: io::Read + io::Write {
    fn timeouts(&self, read: Option<Duration>, write: Option<Duration>) -> io::Result<()>;
}

#[cfg(unix)]
impl Conn for std::os::unix::net::UnixStream {
    fn timeouts(&self, read: Option<Duration>, write: Option<Duration>) -> io::Result<()> {
        self.set_read_timeout(read)?;
        self.set_write_timeout(write)
    }
}

impl Conn for std::net::TcpStream {
    fn timeouts(&self, read: Option<Duration>, write: Option<Duration>) -> io::Result<()> {
        self.set_read_timeout(read)?;
        self.set_write_timeout(write)
    }
}

/// Writes `preamble` and `request` on `stream` and reads the answer (and the promised second
/// one), all by `deadline` but the second.
fn exchange(
    mut stream: impl Conn,
    socket: &Path,
    preamble: &[u8],
    request: &Request,
    deadline: Instant,
) -> Result<Response, ClientError> {
    use std::io::{BufRead, BufReader};

    let timeout = deadline.saturating_duration_since(Instant::now());
    let io_err = |source: io::Error| classify(socket, source, timeout);
    let left = || {
        deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1))
    };
    stream.timeouts(None, Some(left())).map_err(io_err)?;
    let line = request_line(preamble, request)?;
    // A daemon that refuses us (another user's, say) answers and closes without reading: the
    // write then fails, but its explanation is waiting to be read.
    let written = stream.write_all(&line);
    if let Err(e) = &written
        && !matches!(
            e.kind(),
            io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
        )
    {
        return Err(classify(socket, written.unwrap_err(), timeout));
    }
    stream.timeouts(Some(left()), None).map_err(io_err)?;
    let mut reader = BufReader::new(stream);
    let mut answer = String::new();
    let read = reader.read_line(&mut answer);
    if answer.is_empty() {
        written.map_err(io_err)?;
        read.map_err(io_err)?;
        return Err(ClientError::Protocol(
            "the daemon closed the connection without answering".into(),
        ));
    }
    let first: Response = serde_json::from_str(&answer)
        .map_err(|e| ClientError::Protocol(format!("{e}: {}", answer.trim())))?;
    let Some(until) = first.wait_until else {
        return Ok(first);
    };
    // Ask before sleep: the daemon promised a second answer by `until`.
    let left = until.duration_since(jiff::Timestamp::now()).unsigned_abs() + WAIT_GRACE;
    (reader.get_ref())
        .timeouts(Some(left), None)
        .map_err(|e| classify(socket, e, left))?;
    answer.clear();
    reader
        .read_line(&mut answer)
        .map_err(|e| classify(socket, e, left))?;
    if answer.is_empty() {
        return Err(ClientError::Protocol(
            "the daemon closed the connection before the promised second answer".into(),
        ));
    }
    serde_json::from_str(&answer)
        .map_err(|e| ClientError::Protocol(format!("{e}: {}", answer.trim())))
}

/// `request` as the line a client writes, after `preamble` (a TCP relay's secret): the
/// versioned envelope, then a newline. Written in place, so a large payload is not copied again.
fn request_line(preamble: &[u8], request: &Request) -> Result<Vec<u8>, ClientError> {
    use crate::protocol::{PROTOCOL_VERSION, RequestEnvelope};
    let envelope = RequestEnvelope {
        v: PROTOCOL_VERSION,
        request: request.clone(),
    };
    let mut line = preamble.to_vec();
    serde_json::to_writer(&mut line, &envelope)
        .map_err(|e| ClientError::Protocol(e.to_string()))?;
    line.push(b'\n');
    Ok(line)
}

/// Connects to `socket` without waiting past `deadline`: the socket is non-blocking while it
/// connects (a Unix socket whose listener's backlog is full answers "try again"), blocking
/// afterwards.
#[cfg(unix)]
fn connect_by(socket: &Path, deadline: Instant) -> io::Result<std::os::unix::net::UnixStream> {
    use rustix::net::{AddressFamily, SocketAddrUnix, SocketType};

    #[cfg(any(target_os = "linux", target_os = "android"))]
    let fd = rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::STREAM,
        rustix::net::SocketFlags::NONBLOCK | rustix::net::SocketFlags::CLOEXEC,
        None,
    )?;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let fd = {
        let fd = rustix::net::socket(AddressFamily::UNIX, SocketType::STREAM, None)?;
        rustix::io::fcntl_setfd(&fd, rustix::io::FdFlags::CLOEXEC)?;
        rustix::io::ioctl_fionbio(&fd, true)?;
        fd
    };
    let addr = SocketAddrUnix::new(socket)?;
    loop {
        match rustix::net::connect(&fd, &addr) {
            Ok(()) => break,
            Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR)
                if Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(rustix::io::Errno::AGAIN) => {
                return Err(io::Error::from(io::ErrorKind::TimedOut));
            }
            Err(e) => return Err(e.into()),
        }
    }
    let stream = std::os::unix::net::UnixStream::from(fd);
    stream.set_nonblocking(false)?;
    Ok(stream)
}

/// How long past its promised time a second answer is still awaited.
const WAIT_GRACE: Duration = Duration::from_secs(8);

/// [`request`] with one deadline, over the daemon's named pipe (Windows). A pipe opened as a
/// file has no read timeout, so the exchange runs on a thread of its own and this waits for it
/// until the deadline; a thread left behind ends with the process (hooks exit right away).
#[cfg(windows)]
pub fn request_by(
    places: &Places,
    request: &Request,
    deadline: Instant,
) -> Result<Response, ClientError> {
    use std::io::{BufRead, BufReader, Write};
    use std::sync::mpsc;

    let pipe = places.socket();
    let timeout = deadline.saturating_duration_since(Instant::now());
    let line = request_line(b"", request)?;
    let (tx, rx) = mpsc::channel::<io::Result<String>>();
    let path = pipe.clone();
    std::thread::spawn(move || {
        let exchange = || -> io::Result<()> {
            let mut stream = open_pipe(&path, deadline)?;
            stream.write_all(&line)?;
            let mut reader = BufReader::new(stream);
            // First answer, then (ask before sleep) the promised second one.
            for _ in 0..2 {
                let mut answer = String::new();
                reader.read_line(&mut answer)?;
                let done = serde_json::from_str::<Response>(&answer)
                    .map_or(true, |r| r.wait_until.is_none());
                if tx.send(Ok(answer)).is_err() || done {
                    return Ok(());
                }
            }
            Ok(())
        };
        if let Err(e) = exchange() {
            let _ = tx.send(Err(e));
        }
    });
    let receive = |wait: Duration| match rx.recv_timeout(wait) {
        Ok(Ok(answer)) if answer.is_empty() => Err(ClientError::Protocol(
            "the daemon closed the connection without answering".into(),
        )),
        Ok(Ok(answer)) => serde_json::from_str::<Response>(&answer)
            .map_err(|e| ClientError::Protocol(format!("{e}: {}", answer.trim()))),
        Ok(Err(e)) => Err(classify(&pipe, e, timeout)),
        Err(_) => Err(ClientError::Timeout(wait)),
    };
    let first = receive(deadline.saturating_duration_since(Instant::now()))?;
    let Some(until) = first.wait_until else {
        return Ok(first);
    };
    receive(until.duration_since(jiff::Timestamp::now()).unsigned_abs() + WAIT_GRACE)
}

/// Opens the daemon's pipe; while every instance is busy (`ERROR_PIPE_BUSY`), tries again until
/// `deadline`. A pipe whose server runs as another user is refused before anything is written
/// ([`crate::windows_identity`]).
#[cfg(windows)]
fn open_pipe(path: &Path, deadline: Instant) -> io::Result<std::fs::File> {
    /// `ERROR_PIPE_BUSY`: all instances of the pipe are connected.
    const PIPE_BUSY: i32 = 231;
    let pipe = loop {
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
        {
            Err(e) if e.raw_os_error() == Some(PIPE_BUSY) && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(e) if e.raw_os_error() == Some(PIPE_BUSY) => {
                return Err(io::Error::from(io::ErrorKind::TimedOut));
            }
            other => break other?,
        }
    };
    crate::windows_identity::check_server(&pipe, &expected_server()?)?;
    Ok(pipe)
}

/// The user the pipe's server must run as: this process's own. Debug builds (what the Wine suite
/// runs) take another from `LIDGUARD_TEST_PIPE_SERVER_SID`: Wine runs every process as one user,
/// so a server of another user cannot be made there. Release builds never read it.
#[cfg(windows)]
fn expected_server() -> io::Result<String> {
    #[cfg(debug_assertions)]
    if let Some(sid) = lidguard_files::environment::text("LIDGUARD_TEST_PIPE_SERVER_SID") {
        return Ok(sid);
    }
    static OWN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    if let Some(sid) = OWN.get() {
        return Ok(sid.clone());
    }
    let sid = crate::windows_identity::own_sid()?;
    Ok(OWN.get_or_init(|| sid).clone())
}

/// Sends `request` (builds for other platforms have no daemon transport).
#[cfg(not(any(unix, windows)))]
pub fn request_by(
    places: &Places,
    _request: &Request,
    _deadline: Instant,
) -> Result<Response, ClientError> {
    Err(ClientError::NotRunning {
        socket: format!(
            "{} (this platform has no daemon transport in this build)",
            places.socket().display()
        ),
    })
}

#[cfg(any(unix, windows))]
fn classify(socket: &Path, source: io::Error, timeout: Duration) -> ClientError {
    match source.kind() {
        io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused => ClientError::NotRunning {
            socket: socket.display().to_string(),
        },
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => ClientError::Timeout(timeout),
        _ => ClientError::Io {
            socket: socket.display().to_string(),
            source,
        },
    }
}

/// The event stream's lines after the daemon's first answer, as they arrive
/// ([`crate::stream::StreamEvent`] JSON, newline removed). Dropping it closes the connection.
pub struct EventLines {
    reader: Box<dyn io::BufRead + Send>,
}

impl Iterator for EventLines {
    type Item = io::Result<String>;

    fn next(&mut self) -> Option<io::Result<String>> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => None,
            Ok(_) => {
                line.truncate(line.trim_end_matches(['\r', '\n']).len());
                Some(Ok(line))
            }
            Err(e) => Some(Err(e)),
        }
    }
}

/// Sends an `events` request and returns the daemon's first answer and the stream that follows.
/// Connecting and the first answer take at most `timeout`; the stream then waits as long as
/// it must (it ends when the daemon stops or, without `follow`, after the replay).
#[cfg(any(unix, windows))]
pub fn follow(
    places: &Places,
    request: &Request,
    timeout: Duration,
) -> Result<(Response, EventLines), ClientError> {
    use std::io::{BufRead, BufReader, Write};

    let socket = places.socket();
    let deadline = Instant::now() + timeout;
    let io_err = |source: io::Error| classify(&socket, source, timeout);
    let line = request_line(b"", request)?;
    #[cfg(unix)]
    let (mut writer, mut reader) = {
        let stream = connect_by(&socket, deadline).map_err(io_err)?;
        stream.set_read_timeout(Some(timeout)).map_err(io_err)?;
        (stream.try_clone().map_err(io_err)?, BufReader::new(stream))
    };
    #[cfg(windows)]
    let (mut writer, mut reader) = {
        let pipe = open_pipe(&socket, deadline).map_err(io_err)?;
        (pipe.try_clone().map_err(io_err)?, BufReader::new(pipe))
    };
    writer.write_all(&line).map_err(io_err)?;
    let mut answer = String::new();
    reader.read_line(&mut answer).map_err(io_err)?;
    if answer.is_empty() {
        return Err(ClientError::Protocol(
            "the daemon closed the connection without answering".into(),
        ));
    }
    let first: Response = serde_json::from_str(&answer)
        .map_err(|e| ClientError::Protocol(format!("{e}: {}", answer.trim())))?;
    #[cfg(unix)]
    reader.get_ref().set_read_timeout(None).map_err(io_err)?;
    // Our write half stays open (closing it would tell the daemon we left).
    let reader = KeepOpen {
        reader,
        _writer: writer,
    };
    Ok((
        first,
        EventLines {
            reader: Box::new(reader),
        },
    ))
}

/// A reader that keeps the connection's write half alive with it.
#[cfg(any(unix, windows))]
struct KeepOpen<R, W> {
    reader: R,
    _writer: W,
}

#[cfg(any(unix, windows))]
impl<R: io::Read, W> io::Read for KeepOpen<R, W> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reader.read(buf)
    }
}

#[cfg(any(unix, windows))]
impl<R: io::BufRead, W> io::BufRead for KeepOpen<R, W> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.reader.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        self.reader.consume(amount);
    }
}
