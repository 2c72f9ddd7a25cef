//! The far side of `lidguard ssh` and `lidguard container`: a hook there reaches the daemon of
//! the machine the user sits at through a relay — a Unix socket sshd or the container engine
//! puts in place, or a TCP port (`tcp://HOST:PORT`, for a container VM no socket crosses).
//! Unix only (`unix`); elsewhere there is no relay to ask (`other`).

#[cfg(not(unix))]
mod other;
#[cfg(unix)]
mod unix;

#[cfg(not(unix))]
pub use other::ask;
#[cfg(unix)]
pub use unix::ask;

/// The variable that names a relay explicitly: a container's bind-mounted socket, or
/// `tcp://HOST:PORT` ([`RELAY_SECRET_ENV`] then holds the relay's secret).
pub const RELAY_ENV: &str = "LIDGUARD_RELAY";

/// The secret a TCP relay wants first on each connection.
pub const RELAY_SECRET_ENV: &str = "LIDGUARD_RELAY_SECRET";

/// Where `lidguard ssh` has sshd put a connection's relay on the remote host:
/// `<dir>/<prefix><user>-<connection>.sock`.
pub const SSH_RELAY_DIR: &str = "/tmp";
/// See [`SSH_RELAY_DIR`].
pub const SSH_RELAY_PREFIX: &str = "lidguard-relay-";
