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

use super::session::{STARTUP_TIMEOUT, daemon_error};

/// Guests served at once; more are refused (a flood never reaches the daemon).
const MAX_GUESTS: usize = 32;

/// How long a guest has to send its request line.
const GUEST_READ: Duration = Duration::from_secs(5);

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
/// at once; with `secret` (its digest), a guest's first line must be the secret.
fn serve<G: Guest>(
    places: &Places,
    place: Place,
    secret: Option<[u8; 32]>,
    mut accept: impl FnMut() -> std::io::Result<G> + Send + 'static,
) {
    let daemon = places.socket();
    let place = Arc::new(place);
    let guests = Arc::new(AtomicUsize::new(0));
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
            if guests.fetch_add(1, Ordering::SeqCst) >= MAX_GUESTS {
                guests.fetch_sub(1, Ordering::SeqCst);
                refuse(guest, "too many relayed requests at once");
                continue;
            }
            let (daemon, place, guests) = (daemon.clone(), Arc::clone(&place), Arc::clone(&guests));
            std::thread::spawn(move || {
                if let Err(e) = serve_guest(guest, &daemon, &place, secret) {
                    tracing::debug!(error = %e, "relayed request failed");
                }
                guests.fetch_sub(1, Ordering::SeqCst);
            });
        }
    });
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
/// without the secret gets no answer at all.
fn serve_guest(
    guest: impl Guest,
    daemon: &Path,
    place: &Place,
    secret: Option<[u8; 32]>,
) -> anyhow::Result<()> {
    guest.read_timeout(Some(GUEST_READ))?;
    let mut reader = BufReader::new(guest.again()?);
    if let Some(secret) = secret {
        let mut given = Vec::new();
        (&mut reader).take(256).read_until(b'\n', &mut given)?;
        if secret_digest(given.strip_suffix(b"\n").unwrap_or(&given)) != secret {
            tracing::warn!(place = %place.key, "refused a relay connection without the secret");
            return Ok(());
        }
    }
    let mut first = Vec::new();
    (&mut reader)
        .take(MAX_REQUEST_BYTES as u64 + 1)
        .read_until(b'\n', &mut first)?;
    let request = match relayable(&first, place) {
        Ok(request) => request,
        Err(why) => {
            tracing::warn!(place = %place.key, %why, "refused a relayed request");
            refuse(guest, &why);
            return Ok(());
        }
    };
    guest.read_timeout(None)?;
    let mut to_daemon = UnixStream::connect(daemon)?;
    to_daemon.write_all(&line(&request)?)?;
    // What the hook sends afterwards (nothing, or its close while it waits for a second
    // answer) reaches the daemon; the daemon's answers reach the hook.
    let mut upstream = to_daemon.try_clone()?;
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut reader, &mut upstream);
        let _ = upstream.shutdown(std::net::Shutdown::Write);
    });
    let mut downstream = guest;
    std::io::copy(&mut to_daemon, &mut downstream)?;
    downstream.close_write();
    Ok(())
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
    let Request::Hook { mut events } = envelope.request else {
        return Err("a relay carries hook events only".into());
    };
    for event in &mut events {
        event.session_id = format!("{}/{}", place.key, event.session_id);
        // The other machine's processes and files mean nothing here, and must never be read.
        event.owner_pid = None;
        event.transcript_path = None;
        event.via = Some(place.via.clone());
    }
    Ok(Request::Hook { events })
}
