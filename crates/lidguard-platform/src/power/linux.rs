//! Linux keep-awake: systemd-logind inhibitors over the system D-Bus.
//!
//! Each lock group is one `Inhibit(what, who, why, mode)` call. logind answers with the
//! write end of a FIFO; the inhibitor lasts exactly as long as that file descriptor is open in
//! some process, so the guard only has to own the descriptors, and a crash releases them too.
//!
//! `sleep` is held in delay mode while the plan lets an explicit suspend through (the lid is
//! open): logind then suspends when the user asks, after telling lidguard (`PrepareForSleep`),
//! instead of refusing; `systemctl suspend` only refuses over block-mode locks. Idle handling
//! and the lid switch stay in block mode.

use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::{Instant, timeout_at};
use zbus::proxy::CacheProperties;
use zbus::{Connection, DBusError, connection};

use super::{
    BoxFuture, CONNECT_TIMEOUT, HeldProtection, Inhibit, LID_SWITCH_WHY, PowerControl, PowerError,
    PowerUnavailable, ProtectionPlan, SuspendError, keep_awake_group, wants_lid_switch, what_of,
};

/// The address zbus uses for the system bus when `DBUS_SYSTEM_BUS_ADDRESS` is unset.
const DEFAULT_SYSTEM_BUS: &str = "unix:path=/var/run/dbus/system_bus_socket";

/// Upper bound for any single logind call once connected (an `Inhibit` waits for polkit).
const METHOD_TIMEOUT: Duration = Duration::from_secs(5);

/// How the backend names itself in errors.
const BACKEND: &str = "systemd-logind";

/// What the caller gets to do when protection is unavailable.
const CONSEQUENCE: &str = "lidguard keeps tracking sessions but cannot keep the machine awake";

/// The part of `org.freedesktop.login1.Manager` lidguard uses.
#[zbus::proxy(
    interface = "org.freedesktop.login1.Manager",
    default_service = "org.freedesktop.login1",
    default_path = "/org/freedesktop/login1"
)]
trait LoginManager {
    /// Takes an inhibitor lock; it lasts while the returned descriptor is open.
    fn inhibit(&self, what: &str, who: &str, why: &str, mode: &str) -> zbus::Result<zbus::OwnedFd>;

    /// "yes", "no", "challenge" or "na".
    fn can_suspend(&self) -> zbus::Result<String>;

    /// "yes", "no", "challenge" or "na".
    fn can_hibernate(&self) -> zbus::Result<String>;

    /// Suspends to RAM; `interactive` lets polkit ask for a password (never here).
    fn suspend(&self, interactive: bool) -> zbus::Result<()>;

    /// Suspends to disk.
    fn hibernate(&self, interactive: bool) -> zbus::Result<()>;

    /// Whether the lid is closed (`false` on machines without a lid switch).
    #[zbus(property)]
    fn lid_closed(&self) -> zbus::Result<bool>;

    /// Every inhibitor lock held: (what, who, why, mode, uid, pid).
    #[allow(
        clippy::type_complexity,
        reason = "logind's a(ssssuu), as it is on the bus"
    )]
    fn list_inhibitors(&self) -> zbus::Result<Vec<(String, String, String, String, u32, u32)>>;

    /// The colon-joined block-mode locks currently held by anyone, e.g. "sleep:idle".
    #[zbus(property)]
    fn block_inhibited(&self) -> zbus::Result<String>;

    /// `true` right before the machine sleeps, `false` after it woke up (or failed to sleep).
    #[zbus(signal)]
    fn prepare_for_sleep(&self, start: bool) -> zbus::Result<()>;
}

/// Keep-awake through logind.
struct LogindPower {
    /// Keeps the connection (and its reader task) alive alongside the proxy.
    _connection: Connection,
    proxy: LoginManagerProxy<'static>,
    /// "the system bus" or "the bus at …".
    bus: String,
}

/// logind's inhibitor modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// The operation is refused while the lock is held.
    Block,
    /// The operation waits (at most `InhibitDelayMaxSec`) until the lock is released.
    Delay,
}

impl Mode {
    fn as_str(self) -> &'static str {
        match self {
            Mode::Block => "block",
            Mode::Delay => "delay",
        }
    }
}

/// Inhibitor descriptors held for one plan.
#[derive(Debug)]
struct LogindHold {
    /// One descriptor per lock group, with the locks it stands for and its mode.
    locks: Vec<(Vec<Inhibit>, Mode, OwnedFd)>,
}

impl HeldProtection for LogindHold {
    fn inhibits(&self) -> Vec<Inhibit> {
        self.locks
            .iter()
            .flat_map(|(group, _, _)| group.iter().copied())
            .collect()
    }

    fn giving_way(&self) -> Vec<Inhibit> {
        self.locks
            .iter()
            .filter(|(_, mode, _)| *mode == Mode::Delay)
            .flat_map(|(group, _, _)| group.iter().copied())
            .collect()
    }
}

impl Drop for LogindHold {
    fn drop(&mut self) {
        if !self.locks.is_empty() {
            tracing::debug!(locks = ?self.inhibits(), "releasing logind inhibitors");
        }
        // The descriptors close as the vector drops, which ends the inhibitors.
    }
}

impl LogindPower {
    async fn inhibit(
        &self,
        group: Vec<Inhibit>,
        mode: Mode,
        who: &str,
        why: &str,
    ) -> Result<(Vec<Inhibit>, Mode, OwnedFd), PowerError> {
        let what = what_of(&group);
        match self.proxy.inhibit(&what, who, why, mode.as_str()).await {
            Ok(fd) => {
                tracing::debug!(%what, mode = mode.as_str(), %who, %why, "took logind inhibitor");
                Ok((group, mode, OwnedFd::from(fd)))
            }
            Err(error) => Err(hold_error(what, &error)),
        }
    }
}

impl PowerControl for LogindPower {
    fn hold<'a>(
        &'a self,
        plan: &'a ProtectionPlan,
    ) -> BoxFuture<'a, Result<Box<dyn HeldProtection>, PowerError>> {
        Box::pin(async move {
            let who = if plan.who.trim().is_empty() {
                "lidguard"
            } else {
                plan.who.as_str()
            };
            let mut locks = Vec::new();
            let mut keep_awake = keep_awake_group(plan);
            let gives_way = plan.sleep_gives_way && keep_awake.contains(&Inhibit::Sleep);
            if gives_way {
                keep_awake.retain(|i| *i != Inhibit::Sleep);
            }
            if gives_way {
                locks.push(
                    self.inhibit(vec![Inhibit::Sleep], Mode::Delay, who, &plan.why)
                        .await?,
                );
            }
            if !keep_awake.is_empty() {
                // On error `locks` drops here, releasing what was taken: all or nothing.
                locks.push(
                    self.inhibit(keep_awake, Mode::Block, who, &plan.why)
                        .await?,
                );
            }
            if wants_lid_switch(plan) {
                locks.push(
                    self.inhibit(
                        vec![Inhibit::HandleLidSwitch],
                        Mode::Block,
                        who,
                        LID_SWITCH_WHY,
                    )
                    .await?,
                );
            }
            Ok(Box::new(LogindHold { locks }) as Box<dyn HeldProtection>)
        })
    }

    fn os_view(&self) -> BoxFuture<'_, Option<Vec<String>>> {
        Box::pin(async {
            let me = std::process::id();
            let locks = self.proxy.list_inhibitors().await.ok()?;
            Some(
                locks
                    .into_iter()
                    .filter(|(.., pid)| *pid == me)
                    .flat_map(|(what, ..)| what.split(':').map(str::to_owned).collect::<Vec<_>>())
                    .collect(),
            )
        })
    }

    fn describe(&self) -> String {
        format!("{BACKEND} on {}", self.bus)
    }

    fn capabilities(&self) -> BoxFuture<'_, (Option<String>, Option<String>)> {
        Box::pin(async move {
            (
                self.proxy.can_suspend().await.ok(),
                self.proxy.can_hibernate().await.ok(),
            )
        })
    }

    fn suspend(&self, hibernate: bool) -> BoxFuture<'_, Result<(), SuspendError>> {
        Box::pin(async move {
            let (verb, can) = if hibernate {
                ("Hibernate", self.proxy.can_hibernate().await)
            } else {
                ("Suspend", self.proxy.can_suspend().await)
            };
            let can = can.map_err(|e| {
                SuspendError::Failed(format!(
                    "{BACKEND} Can{verb} failed: {}",
                    logind_problem(&e)
                ))
            })?;
            // "challenge" needs interactive authentication, which a background daemon cannot
            // give; "na" means the system cannot do it at all.
            match can.as_str() {
                "yes" => {}
                "na" => {
                    return Err(SuspendError::Unsupported(format!(
                        "{BACKEND} reports Can{verb}=na: this system cannot {} (no support, no swap for hibernation, or a container)",
                        verb.to_ascii_lowercase()
                    )));
                }
                other => {
                    return Err(SuspendError::NotAllowed(format!(
                        "{BACKEND} reports Can{verb}={other}: this user may not {} without authentication (polkit org.freedesktop.login1.{})",
                        verb.to_ascii_lowercase(),
                        verb.to_ascii_lowercase()
                    )));
                }
            }
            let call = if hibernate {
                self.proxy.hibernate(false).await
            } else {
                self.proxy.suspend(false).await
            };
            call.map_err(|e| {
                SuspendError::Failed(format!("{BACKEND} {verb} failed: {}", logind_problem(&e)))
            })
        })
    }

    fn watch_lid(&self, changed: tokio::sync::mpsc::UnboundedSender<()>) -> BoxFuture<'_, bool> {
        Box::pin(async move {
            let connection = self.proxy.inner().connection().clone();
            let subscribed = async move {
                let properties = zbus::fdo::PropertiesProxy::builder(&connection)
                    .destination("org.freedesktop.login1")
                    .path("/org/freedesktop/login1")
                    .cache_properties(CacheProperties::No)
                    .build()
                    .await?;
                properties.receive_properties_changed().await
            };
            forward_signals(subscribed.await, "property changes", changed, |signal| {
                let args = signal.args().ok()?;
                let about_lid = args.changed_properties().contains_key("LidClosed")
                    || args.invalidated_properties().contains(&"LidClosed");
                about_lid.then_some(())
            })
        })
    }

    fn watch_sleep(
        &self,
        changed: tokio::sync::mpsc::UnboundedSender<bool>,
    ) -> BoxFuture<'_, bool> {
        Box::pin(async move {
            let subscribed = self.proxy.receive_prepare_for_sleep().await;
            forward_signals(subscribed, "PrepareForSleep", changed, |signal| {
                Some(signal.args().ok()?.start)
            })
        })
    }

    fn lid_closed(&self) -> BoxFuture<'_, Option<bool>> {
        Box::pin(async move {
            match self.proxy.lid_closed().await {
                Ok(closed) => Some(closed),
                Err(error) => {
                    tracing::debug!(%error, "could not read logind LidClosed");
                    None
                }
            }
        })
    }
}

/// Sends what `map` makes of each of logind's signals to `changed` until nobody listens;
/// `false` when the subscription failed (the caller then reads instead of listening).
fn forward_signals<S, T>(
    subscribed: zbus::Result<S>,
    what: &'static str,
    changed: tokio::sync::mpsc::UnboundedSender<T>,
    mut map: impl FnMut(S::Item) -> Option<T> + Send + 'static,
) -> bool
where
    S: futures_util::Stream + Send + 'static,
    T: Send + 'static,
{
    use futures_util::StreamExt;
    let signals = match subscribed {
        Ok(signals) => signals,
        Err(error) => {
            tracing::debug!(%error, what, "cannot subscribe to a logind signal");
            return false;
        }
    };
    tokio::spawn(async move {
        let mut signals = std::pin::pin!(signals);
        while let Some(signal) = signals.next().await {
            if let Some(value) = map(signal)
                && changed.send(value).is_err()
            {
                break;
            }
        }
    });
    true
}

/// Maps a failed `Inhibit` call to a [`PowerError`], recognising permission refusals.
fn hold_error(what: String, error: &zbus::Error) -> PowerError {
    let (name, description) = match error {
        zbus::Error::FDO(fdo) => (
            Some(fdo.name().to_string()),
            fdo.description().map(str::to_owned),
        ),
        zbus::Error::MethodError(name, description, _) => {
            (Some(name.to_string()), description.clone())
        }
        _ => (None, None),
    };
    let message = description.unwrap_or_else(|| error.to_string());
    let denied = matches!(
        name.as_deref(),
        Some("org.freedesktop.DBus.Error.AccessDenied")
            | Some("org.freedesktop.DBus.Error.InteractiveAuthorizationRequired")
    );
    if denied {
        PowerError::Refused {
            backend: BACKEND.to_owned(),
            what,
            message,
        }
    } else {
        PowerError::Backend {
            backend: BACKEND.to_owned(),
            what,
            message,
        }
    }
}

/// Connects to logind on the system bus (`address` `None`) or on the bus at `address`.
pub(super) async fn connect(
    address: Option<&str>,
) -> Result<Arc<dyn PowerControl>, PowerUnavailable> {
    let power = connect_logind(address).await?;
    Ok(Arc::new(power))
}

async fn connect_logind(address: Option<&str>) -> Result<LogindPower, PowerUnavailable> {
    let (bus, shown_address) = match address {
        None => {
            let shown = lidguard_files::environment::text("DBUS_SYSTEM_BUS_ADDRESS")
                .filter(|value| !value.trim().is_empty())
                .unwrap_or_else(|| DEFAULT_SYSTEM_BUS.to_owned());
            ("the system bus".to_owned(), shown)
        }
        Some(address) => (format!("the bus at {address}"), address.to_owned()),
    };
    let bus_kind = if address.is_none() {
        "the system D-Bus"
    } else {
        "the D-Bus"
    };
    let seconds = CONNECT_TIMEOUT.as_secs_f32();
    let deadline = Instant::now() + CONNECT_TIMEOUT;

    let builder = match address {
        None => connection::Builder::system(),
        Some(address) => connection::Builder::address(address),
    };
    let connection = match timeout_at(deadline, builder.method_timeout(METHOD_TIMEOUT).build())
        .await
    {
        Ok(Ok(connection)) => connection,
        Ok(Err(error)) => {
            // zbus usually names the address itself ("failed to connect to `…`: …").
            let error = error.to_string();
            let detail = if error.contains(&shown_address) {
                error
            } else {
                format!("{shown_address}: {error}")
            };
            return Err(PowerUnavailable(format!(
                "{bus_kind} is not reachable ({detail}): {CONSEQUENCE}"
            )));
        }
        Err(_) => {
            return Err(PowerUnavailable(format!(
                "{bus_kind} is not reachable ({shown_address} did not answer within {seconds} s): \
                 {CONSEQUENCE}"
            )));
        }
    };

    let check = async {
        let proxy = LoginManagerProxy::builder(&connection)
            .cache_properties(CacheProperties::No)
            .build()
            .await?;
        let blocked = proxy.block_inhibited().await?;
        Ok::<_, zbus::Error>((proxy, blocked))
    };
    let proxy = match timeout_at(deadline, check).await {
        Ok(Ok((proxy, blocked))) => {
            tracing::debug!(%bus, %blocked, "systemd-logind answers");
            proxy
        }
        Ok(Err(error)) => {
            return Err(PowerUnavailable(format!(
                "systemd-logind is not reachable on {bus} ({}): {CONSEQUENCE}",
                logind_problem(&error)
            )));
        }
        Err(_) => {
            return Err(PowerUnavailable(format!(
                "systemd-logind is not reachable on {bus} (no answer within {seconds} s): \
                 {CONSEQUENCE}"
            )));
        }
    };
    Ok(LogindPower {
        _connection: connection,
        proxy,
        bus,
    })
}

/// A short reason why logind did not answer.
fn logind_problem(error: &zbus::Error) -> String {
    match error {
        zbus::Error::FDO(fdo) => match fdo.as_ref() {
            zbus::fdo::Error::ServiceUnknown(_) | zbus::fdo::Error::NameHasNoOwner(_) => {
                "no process owns org.freedesktop.login1".to_owned()
            }
            other => other.to_string(),
        },
        other => other.to_string(),
    }
}

/// logind's `LidClosed` on the system bus, or `None`.
pub(super) async fn logind_lid_closed() -> Option<bool> {
    let power = connect_logind(None).await.ok()?;
    tokio::time::timeout(CONNECT_TIMEOUT, power.lid_closed())
        .await
        .ok()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_denied_is_a_refusal() {
        for fdo in [
            zbus::fdo::Error::AccessDenied("Permission denied".into()),
            zbus::fdo::Error::InteractiveAuthorizationRequired(
                "Interactive authentication required.".into(),
            ),
        ] {
            let error = hold_error("sleep:idle".into(), &zbus::Error::FDO(Box::new(fdo)));
            let PowerError::Refused { what, message, .. } = &error else {
                panic!("not a refusal: {error:?}");
            };
            assert_eq!(what, "sleep:idle");
            assert!(!message.is_empty());
            assert!(
                error.to_string().contains("linux-permission install"),
                "{error}"
            );
        }
    }

    #[test]
    fn other_errors_are_backend_errors() {
        let error = hold_error(
            "handle-lid-switch".into(),
            &zbus::Error::FDO(Box::new(zbus::fdo::Error::InvalidArgs(
                "Invalid what specification".into(),
            ))),
        );
        assert!(
            matches!(&error, PowerError::Backend { what, .. } if what == "handle-lid-switch"),
            "{error:?}"
        );
        assert!(
            error.to_string().contains("Invalid what specification"),
            "{error}"
        );
    }
}
