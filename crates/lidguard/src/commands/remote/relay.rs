//! A relay to this machine's daemon for an agent that runs elsewhere (over `lidguard ssh`, in
//! a container of `lidguard container`): a socket of the calling process's, which the other
//! side reaches (sshd forwards it, the container has it bind-mounted), and a lease.
//!
//! Everything a guest sends passes through here: only hook events, each session id put under
//! this relay's place (a guest can neither name a local session nor one of another place), no
//! process id or transcript path of the other machine, and `via` saying where the session runs.
//! The lease is this process's connection to the daemon: when the process ends (ssh or the
//! container exited, or it was killed), the daemon ends the relay's sessions, unless another
//! relay to the same place holds it again within the daemon's grace time (a reconnected SSH
//! connection). When the daemon restarts, the relay takes its lease on the new one.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use lidguard_ipc::Places;
use lidguard_ipc::client;
use lidguard_ipc::protocol::{
    MAX_REQUEST_BYTES, PROTOCOL_VERSION, Request, RequestEnvelope, Response,
};

use crate::commands::session::daemon_error;
use lidguard_ipc::client::STARTUP_TIMEOUT;

/// Guests served at once (on a TCP relay: once they showed the secret); more are refused (a
/// flood never reaches the daemon).
const MAX_GUESTS: usize = 32;

/// TCP connections still to show the secret; more are closed at once, unanswered. A pool of
/// their own: connections without the secret never take the places of those with it.
const MAX_UNPROVEN: usize = 64;

/// How long a guest has for its secret line and its request line, each as a whole: a byte now
/// and then does not keep a connection open.
const GUEST_READ: Duration = Duration::from_secs(5);

/// The most hook events one relayed request may carry: what one hook sends (an event, and the
/// few a transcript adds), not a batch.
pub(crate) const MAX_RELAYED_EVENTS: usize = 8;

/// Relayed requests handed to the daemon at once, until each has its first answer: a place that
/// floods its relay waits behind its own requests, and the daemon serves local hooks between
/// them. A Stop hook waiting for a second answer (ask before sleep) no longer counts.
const MAX_FORWARDED: usize = 2;

/// How often a relay whose daemon went away tries to take its lease on a new one.
const LEASE_RETRY: Duration = Duration::from_millis(500);

/// An open relay: its lease, and its socket (removed on drop) if it has one.
pub(crate) struct Relay {
    socket: Option<PathBuf>,
    _lease: Lease,
}

/// Where the other side runs: the prefix of its sessions' ids (`ssh:alice@build`), which a
/// reconnecting relay shares, and the words `status` shows (`ssh alice@build`).
pub(crate) struct Place {
    pub(crate) key: String,
    pub(crate) via: String,
}

impl Relay {
    /// Starts the daemon if need be, takes the lease on relay `id` for `place` and serves a
    /// socket in the runtime directory, which it returns.
    pub(crate) fn open(
        places: &Places,
        id: &str,
        place: Place,
    ) -> anyhow::Result<(Relay, PathBuf)> {
        places.ensure_runtime_dir()?;
        let socket = places.runtime_dir.join(format!("relay-{id}.sock"));
        let relay = Relay::open_at(places, id, place, &socket)?;
        Ok((relay, socket))
    }

    /// [`Relay::open`] with its socket at `socket` (in a folder of lidguard's that a container
    /// has bind-mounted).
    pub(crate) fn open_at(
        places: &Places,
        id: &str,
        place: Place,
        socket: &Path,
    ) -> anyhow::Result<Relay> {
        let lease = Lease::take(places, id, &place.key)?;
        let _ = std::fs::remove_file(socket);
        let listener = UnixListener::bind(socket)
            .with_context(|| format!("cannot create the relay socket {}", socket.display()))?;
        serve(places, place, None, move || {
            listener.accept().map(|(s, _)| s)
        });
        Ok(Relay {
            socket: Some(socket.to_owned()),
            _lease: lease,
        })
    }

    /// [`Relay::open`] on a TCP port of `bind` (port 0: any free one), for a container in a VM
    /// no socket crosses (Docker Desktop); returns the address and the new secret, which must
    /// be the first line of every connection.
    pub(crate) fn open_tcp(
        places: &Places,
        id: &str,
        place: Place,
        bind: std::net::SocketAddr,
    ) -> anyhow::Result<(Relay, std::net::SocketAddr, String)> {
        let lease = Lease::take(places, id, &place.key)?;
        let listener = std::net::TcpListener::bind(bind)
            .with_context(|| format!("cannot listen for the relay on {bind}"))?;
        let address = listener.local_addr()?;
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no random secret: {e}"))?;
        let secret: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let digest = secret_digest(secret.as_bytes());
        serve(places, place, Some(digest), move || {
            listener.accept().map(|(s, _)| s)
        });
        let relay = Relay {
            socket: None,
            _lease: lease,
        };
        Ok((relay, address, secret))
    }
}

/// A guest's connection: a Unix socket or a TCP one.
trait Guest: Read + Write + Send + Sized + 'static {
    fn again(&self) -> std::io::Result<Self>;
    fn read_timeout(&self, timeout: Option<Duration>) -> std::io::Result<()>;
    fn close_write(&self);
}

/// Both kinds of stream have these as inherent methods of the same names.
macro_rules! guest {
    ($($stream:ty),*) => {$(
        impl Guest for $stream {
            fn again(&self) -> std::io::Result<Self> {
                self.try_clone()
            }
            fn read_timeout(&self, timeout: Option<Duration>) -> std::io::Result<()> {
                self.set_read_timeout(timeout)
            }
            fn close_write(&self) {
                let _ = self.shutdown(std::net::Shutdown::Write);
            }
        }
    )*};
}
guest!(UnixStream, std::net::TcpStream);

/// Serves the guests `accept` hands over, each on a thread of its own, at most [`MAX_GUESTS`]
/// at once; with `secret` (its digest), a guest's first line must be the secret, shown within
/// [`GUEST_READ`], and until it is the guest is one of at most [`MAX_UNPROVEN`] others and is
/// told nothing.
fn serve<G: Guest>(
    places: &Places,
    place: Place,
    secret: Option<[u8; 32]>,
    mut accept: impl FnMut() -> std::io::Result<G> + Send + 'static,
) {
    let relay = Arc::new(Served {
        daemon: places.socket(),
        place,
        secret,
        guests: AtomicUsize::new(0),
        unproven: AtomicUsize::new(0),
        forwarding: Slots::new(MAX_FORWARDED),
    });
    std::thread::spawn(move || {
        loop {
            // One failed accept (a guest that hung up first, a moment out of descriptors)
            // must not end the relay: the next guest is served.
            let guest = match accept() {
                Ok(guest) => guest,
                Err(e) => {
                    tracing::debug!(error = %e, "a relay guest could not be accepted");
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                }
            };
            let pool = if relay.secret.is_some() {
                Pool::Unproven
            } else {
                Pool::Guests
            };
            let Some(taken) = Taken::from(&relay, pool) else {
                // Over the limit: a guest without the secret is told nothing at all.
                if relay.secret.is_none() {
                    refuse(guest, "too many relayed requests at once");
                }
                continue;
            };
            std::thread::spawn(move || {
                if let Err(e) = serve_guest(guest, taken) {
                    tracing::debug!(error = %e, "relayed request failed");
                }
            });
        }
    });
}

/// What a relay's guests share: where the daemon is, the place, the secret's digest, how many
/// guests are being served or are still to show the secret, and the daemon's slots.
struct Served {
    daemon: PathBuf,
    place: Place,
    secret: Option<[u8; 32]>,
    guests: AtomicUsize,
    unproven: AtomicUsize,
    forwarding: Slots,
}

/// The two pools of a relay's guests.
#[derive(Clone, Copy)]
enum Pool {
    /// Being served.
    Guests,
    /// Still to show the secret (TCP).
    Unproven,
}

impl Served {
    fn pool(&self, pool: Pool) -> (&AtomicUsize, usize) {
        match pool {
            Pool::Guests => (&self.guests, MAX_GUESTS),
            Pool::Unproven => (&self.unproven, MAX_UNPROVEN),
        }
    }
}

/// One place in a pool of a relay's guests, given back when dropped.
struct Taken {
    relay: Arc<Served>,
    pool: Pool,
}

impl Taken {
    /// A place in `pool` when not all are taken.
    fn from(relay: &Arc<Served>, pool: Pool) -> Option<Taken> {
        let (count, limit) = relay.pool(pool);
        if count.fetch_add(1, Ordering::SeqCst) >= limit {
            count.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        Some(Taken {
            relay: Arc::clone(relay),
            pool,
        })
    }
}

impl Drop for Taken {
    fn drop(&mut self) {
        self.relay.pool(self.pool).0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A counting semaphore: at most `n` holders at once, the others wait.
struct Slots {
    free: Mutex<usize>,
    freed: std::sync::Condvar,
}

impl Slots {
    fn new(n: usize) -> Slots {
        Slots {
            free: Mutex::new(n),
            freed: std::sync::Condvar::new(),
        }
    }

    /// Waits for a slot; it is given back when the guard drops.
    fn take(&self) -> SlotGuard<'_> {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        while *free == 0 {
            free = self
                .freed
                .wait(free)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *free -= 1;
        SlotGuard(self)
    }
}

struct SlotGuard<'a>(&'a Slots);

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        self.0.freed.notify_one();
    }
}

/// The secret's digest: compared instead of the secret, so the time a comparison takes says
/// nothing about how much of a wrong secret was right.
fn secret_digest(secret: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(secret).into()
}

/// A relay's lease on the daemon: held by a thread that takes it again on a new daemon when
/// the one it held ends; let go on drop.
struct Lease {
    current: Arc<Mutex<Option<UnixStream>>>,
    closing: Arc<AtomicBool>,
}

impl Lease {
    fn take(places: &Places, relay: &str, place: &str) -> anyhow::Result<Lease> {
        let exe = std::env::current_exe().context("cannot find the lidguard executable")?;
        let held = hold_starting(places, &exe, relay, place)?;
        let current = Arc::new(Mutex::new(Some(held.try_clone()?)));
        let closing = Arc::new(AtomicBool::new(false));
        let (places, relay, place) = (places.clone(), relay.to_owned(), place.to_owned());
        let (slot, stop) = (Arc::clone(&current), Arc::clone(&closing));
        std::thread::spawn(move || {
            let mut held = held;
            loop {
                // Only the end of the connection means something: the daemon went away.
                let _ = std::io::copy(&mut held, &mut std::io::sink());
                held = loop {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    std::thread::sleep(LEASE_RETRY);
                    if let Ok(again) = hold_starting(&places, &exe, &relay, &place) {
                        tracing::info!(%relay, "relay lease taken again on a new daemon");
                        break again;
                    }
                };
                let clone = held.try_clone().ok();
                *slot.lock().unwrap_or_else(PoisonError::into_inner) = clone;
            }
        });
        Ok(Lease { current, closing })
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.closing.store(true, Ordering::SeqCst);
        let current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(lease) = current.as_ref() {
            let _ = lease.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// Starts the daemon if need be and takes the lease.
fn hold_starting(
    places: &Places,
    exe: &Path,
    relay: &str,
    place: &str,
) -> anyhow::Result<UnixStream> {
    client::request_starting_daemon(
        places,
        &Request::Ping,
        Instant::now() + STARTUP_TIMEOUT,
        exe,
    )
    .map_err(daemon_error)?;
    hold(&places.socket(), relay, place)
}

/// The exit code a wrapped command (ssh, the container engine) ended with; 255 for a signal.
pub(crate) fn exit_code(status: std::process::ExitStatus) -> std::process::ExitCode {
    match status.code() {
        Some(code) => std::process::ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => std::process::ExitCode::from(255),
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        // The lease goes after this, with the fields: no guest arrives on a relay let go.
        if let Some(socket) = &self.socket {
            let _ = std::fs::remove_file(socket);
        }
    }
}

/// Opens the relay's lease on the daemon; the returned connection is the lease.
fn hold(socket: &Path, relay: &str, place: &str) -> anyhow::Result<UnixStream> {
    let mut lease = UnixStream::connect(socket)
        .with_context(|| format!("cannot reach the daemon at {}", socket.display()))?;
    lease.write_all(&line(&Request::HoldRelay {
        relay: relay.to_owned(),
        place: place.to_owned(),
    })?)?;
    lease.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut answer = String::new();
    BufReader::new(&lease).read_line(&mut answer)?;
    lease.set_read_timeout(None)?;
    let answer: Response = serde_json::from_str(&answer)
        .with_context(|| format!("the daemon answered the relay lease with {answer:?}"))?;
    if !answer.ok {
        bail!("the daemon refused the relay: {}", answer.message);
    }
    Ok(lease)
}

fn line(request: &Request) -> anyhow::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec(&RequestEnvelope {
        v: PROTOCOL_VERSION,
        request: request.clone(),
    })?;
    bytes.push(b'\n');
    Ok(bytes)
}

fn refuse(mut guest: impl Write, why: &str) {
    if let Ok(mut bytes) = serde_json::to_vec(&Response::error(why)) {
        bytes.push(b'\n');
        let _ = guest.write_all(&bytes);
    }
}

/// One relayed request: checked and rewritten here, then passed to the daemon, whose answer
/// (and, for ask before sleep, its second answer) goes back as it is. A guest of a TCP relay
/// without the secret gets no answer at all. `taken` is the guest's place in its pool.
fn serve_guest(guest: impl Guest, taken: Taken) -> anyhow::Result<()> {
    let relay = Arc::clone(&taken.relay);
    let place = &relay.place;
    let deadline = Instant::now() + GUEST_READ;
    let mut reader = BufReader::new(guest.again()?);
    let _taken = match relay.secret {
        Some(secret) => {
            let given = read_line_by(&guest, &mut reader, 256, deadline)?;
            if secret_digest(given.strip_suffix(b"\n").unwrap_or(&given)) != secret {
                tracing::warn!(place = %place.key, "refused a relay connection without the secret");
                return Ok(());
            }
            // Proven: from the pool of those still to show it to the guests'.
            drop(taken);
            let Some(guest_place) = Taken::from(&relay, Pool::Guests) else {
                refuse(guest, "too many relayed requests at once");
                return Ok(());
            };
            guest_place
        }
        None => taken,
    };
    let first = read_line_by(&guest, &mut reader, MAX_REQUEST_BYTES + 1, deadline)?;
    let request = match relayable(&first, place) {
        Ok(request) => request,
        Err(why) => {
            tracing::warn!(place = %place.key, %why, "refused a relayed request");
            refuse(guest, &why);
            return Ok(());
        }
    };
    guest.read_timeout(None)?;
    let slot = relay.forwarding.take();
    let to_daemon = UnixStream::connect(&relay.daemon)?;
    (&to_daemon).write_all(&line(&request)?)?;
    // What the hook sends afterwards (nothing, or its close while it waits for a second
    // answer) reaches the daemon; the daemon's answers reach the hook.
    let mut upstream = to_daemon.try_clone()?;
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut reader, &mut upstream);
        let _ = upstream.shutdown(std::net::Shutdown::Write);
    });
    let mut answers = BufReader::new(to_daemon);
    let mut downstream = guest;
    let mut answer = Vec::new();
    answers.read_until(b'\n', &mut answer)?;
    // The daemon has answered: a second answer, if one comes, waits without a slot.
    drop(slot);
    downstream.write_all(&answer)?;
    std::io::copy(&mut answers, &mut downstream)?;
    downstream.close_write();
    Ok(())
}

/// A line of at most `limit` bytes from `reader`, all of it by `deadline` (each read waits only
/// what is left of it, so a byte now and then does not keep the connection open).
fn read_line_by(
    guest: &impl Guest,
    reader: &mut BufReader<impl Read>,
    limit: usize,
    deadline: Instant,
) -> std::io::Result<Vec<u8>> {
    let mut line = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        guest.read_timeout(Some(left))?;
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(line);
        }
        let room = limit.saturating_sub(line.len());
        let (take, done) = match buffer.iter().position(|&b| b == b'\n') {
            Some(end) if end < room => (end + 1, true),
            _ if buffer.len() >= room => (room, true),
            _ => (buffer.len(), false),
        };
        line.extend_from_slice(&buffer[..take]);
        reader.consume(take);
        if done {
            return Ok(line);
        }
    }
}

/// The guest's request as the daemon may see it: hook events only, each under this relay's
/// place.
fn relayable(first: &[u8], place: &Place) -> Result<Request, String> {
    if first.len() > MAX_REQUEST_BYTES {
        return Err(format!(
            "request too large (limit {MAX_REQUEST_BYTES} bytes)"
        ));
    }
    let envelope: RequestEnvelope =
        serde_json::from_slice(first).map_err(|e| format!("malformed request: {e}"))?;
    if envelope.v != PROTOCOL_VERSION {
        return Err(format!(
            "protocol version {} is not supported (this relay speaks {PROTOCOL_VERSION})",
            envelope.v
        ));
    }
    let Request::Hook { mut events, .. } = envelope.request else {
        return Err("a relay carries hook events only".into());
    };
    if events.len() > MAX_RELAYED_EVENTS {
        return Err(format!(
            "{} events in one request: a relay carries what one hook sends, at most \
             {MAX_RELAYED_EVENTS}",
            events.len()
        ));
    }
    for event in &mut events {
        event.session_id = format!("{}/{}", place.key, event.session_id);
        // The other machine's processes and files mean nothing here, and must never be read.
        event.owner_pid = None;
        event.transcript_path = None;
        event.via = Some(place.via.clone());
    }
    // The relay passes the daemon's answer back: the daemon must give one.
    Ok(Request::Hook {
        events,
        queued: false,
        payload_follows: None,
    })
}
