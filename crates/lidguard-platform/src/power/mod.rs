//! Keep-awake protection: turning a [`ProtectionPlan`] into OS locks.
//!
//! [`connect`] finds the platform backend once; [`PowerControl::hold`] then acquires the locks a
//! plan asks for and hands back a [`HeldProtection`] guard that releases them when dropped.
//!
//! - Linux: systemd-logind on the system D-Bus. Each lock group is one `Inhibit(…, "block")`
//!   call returning a file descriptor; closing it (dropping the guard, or the process dying)
//!   releases the lock. No helper processes are spawned.
//! - Windows: power requests (`SetThreadExecutionState` where they are missing) and, for the
//!   lid, the active scheme's lid-close action set to "do nothing" with a durable backup
//!   ([`crate::lid_action`]).
//! - macOS: IOKit power assertions and, for the lid, `SleepDisabled` set through `pmset` with a
//!   durable backup ([`crate::sleep_disabled`]).
//! - Other systems: no backend yet; [`connect`] returns a [`PowerUnavailable`] saying so.
//!
//! The futures returned here run zbus connections on the current Tokio runtime, so call them
//! from inside one.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

pub use lidguard_core::protection::{Inhibit, ProtectionPlan};

#[cfg(target_os = "linux")]
#[path = "linux.rs"]
mod imp;

#[cfg(windows)]
#[path = "windows.rs"]
mod imp;

#[cfg(target_os = "macos")]
#[path = "macos.rs"]
mod imp;

#[cfg(not(any(target_os = "linux", windows, target_os = "macos")))]
#[path = "unsupported.rs"]
mod imp;

/// A boxed, sendable future borrowed for `'a`, as the object-safe [`PowerControl`] returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// How long [`connect`] waits for the backend to answer before giving up.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// How this OS treats a closed lid while an external display is connected: XNU sleeps a
/// closed Mac unless a display *and* AC power keep it awake
/// (`IOPMrootDomain::shouldSleepOnClamshellClosed`); logind's docked state, and lidguard's
/// rule on Windows, keep it awake for the display alone.
pub const CLAMSHELL_RULE: lidguard_core::clamshell::ClamshellRule = if cfg!(target_os = "macos") {
    lidguard_core::clamshell::ClamshellRule::DisplayOnAcKeepsAwake
} else {
    lidguard_core::clamshell::ClamshellRule::DisplayKeepsAwake
};

/// The `why` text of the lid-switch lock (the keep-awake lock uses [`ProtectionPlan::why`]).
pub const LID_SWITCH_WHY: &str = "lidguard is holding lid-close handling while agents work";

/// Something that can hold keep-awake protection.
pub trait PowerControl: Send + Sync {
    /// Acquire every lock in `plan`. The returned guard holds them; dropping it releases them
    /// (for logind: the inhibitor file descriptors are closed).
    ///
    /// All or nothing: when one lock group is refused, the ones already taken are released and
    /// the error names the refused group ([`PowerError::Refused::what`]), so a caller may retry
    /// with a smaller plan (for example without the lid switch).
    ///
    /// A plan with no keep-awake locks and no lid switch yields a guard holding nothing.
    fn hold<'a>(
        &'a self,
        plan: &'a ProtectionPlan,
    ) -> BoxFuture<'a, Result<Box<dyn HeldProtection>, PowerError>>;

    /// Short backend description, e.g. "systemd-logind on the system bus".
    fn describe(&self) -> String;

    /// Whether the backend reports the lid as closed: `Some(true)` closed, `Some(false)` open,
    /// `None` when it cannot tell (no such notion, or the query failed).
    ///
    /// logind answers `false` on machines without a lid switch; combine with
    /// [`crate::sources::has_lid_switch`] (as [`crate::sources::lid_state`] does).
    fn lid_closed(&self) -> BoxFuture<'_, Option<bool>> {
        Box::pin(async { None })
    }

    /// Starts sending `()` on `changed` whenever the lid may have opened or closed (logind's
    /// `PropertiesChanged` for `LidClosed`), for as long as `changed` has a receiver. Returns
    /// whether it could: a backend without such a signal returns `false`, and the caller looks
    /// at the lid some other way.
    fn watch_lid(&self, changed: tokio::sync::mpsc::UnboundedSender<()>) -> BoxFuture<'_, bool> {
        let _ = changed;
        Box::pin(async { false })
    }

    /// The locks the OS itself lists as held by this process right now (logind's inhibitor
    /// list), so `doctor` can see that a hold is real; `None` where the OS cannot be asked.
    fn os_view(&self) -> BoxFuture<'_, Option<Vec<String>>> {
        Box::pin(async { None })
    }

    /// What the OS says about suspending: `(CanSuspend, CanHibernate)` as logind answers them
    /// (`yes`, `no`, `challenge`, `na`), each `None` when it cannot be asked.
    fn capabilities(&self) -> BoxFuture<'_, (Option<String>, Option<String>)> {
        Box::pin(async { (None, None) })
    }

    /// Sends `true` on `changed` when the machine is about to sleep (whoever asked) and
    /// `false` when it woke up or the sleep failed; `false` when there is no such signal.
    fn watch_sleep(
        &self,
        changed: tokio::sync::mpsc::UnboundedSender<bool>,
    ) -> BoxFuture<'_, bool> {
        let _ = changed;
        Box::pin(async { false })
    }

    /// The closed-lid hold ended (not for lidguard's own suspend request, which sleeps by
    /// itself): do what the OS would have done had the lid closed now, with the lid, displays
    /// and power source of `clamshell`. Returns what was done, for the event stream; `None`
    /// when there was nothing to do.
    ///
    /// - Linux: nothing; logind keeps looking at a closed lid (systemd `logind-button.c` checks
    ///   it again after each event while it stays closed) and acts once no inhibitor blocks it.
    /// - macOS: the kernel looks at the clamshell only on lid and display events, so lidguard
    ///   applies its rule and sleeps ([`crate::give_back`]).
    fn give_back_lid(
        &self,
        clamshell: lidguard_core::clamshell::Clamshell,
    ) -> BoxFuture<'_, Result<Option<String>, SuspendError>> {
        let _ = clamshell;
        Box::pin(async { Ok(None) })
    }

    /// Asks the OS to suspend (`hibernate`: to disk) now, after checking that it can. Returns
    /// when the request was accepted (on a real suspend, after the machine wakes up) or with
    /// an error that says why it was not.
    fn suspend(&self, hibernate: bool) -> BoxFuture<'_, Result<(), SuspendError>> {
        let what = if hibernate { "hibernate" } else { "suspend" };
        Box::pin(async move {
            Err(SuspendError::Unsupported(format!(
                "this backend cannot {what}"
            )))
        })
    }
}

/// Protection that is being held. Dropping it releases every lock it holds.
pub trait HeldProtection: Send + Sync + std::fmt::Debug {
    /// The locks held, in a stable order (keep-awake locks first, then the lid switch).
    fn inhibits(&self) -> Vec<Inhibit>;

    /// Those of [`HeldProtection::inhibits`] that give way to an explicit suspend (logind's
    /// delay mode); the rest refuse it.
    fn giving_way(&self) -> Vec<Inhibit> {
        Vec::new()
    }
}

/// Why a [`PowerControl::hold`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PowerError {
    /// The OS refused the lock because this user may not take it (each platform's text names
    /// its own remedy: a polkit rule on Linux, the sudoers rule on macOS; Windows has none).
    #[cfg_attr(
        target_os = "linux",
        error(
            "{backend} refused the {what} lock: {message}. This user is not allowed to take it \
             (polkit actions org.freedesktop.login1.inhibit-block-*); `sudo lidguard \
             linux-permission install` installs a rule that allows it"
        )
    )]
    #[cfg_attr(
        target_os = "macos",
        error(
            "{backend} refused the {what} lock: {message}. `sudo lidguard macos-permission \
             install` installs the rule that lets lidguard disable sleep for a closed lid"
        )
    )]
    #[cfg_attr(
        not(any(target_os = "linux", target_os = "macos")),
        error("{backend} refused the {what} lock: {message}")
    )]
    Refused {
        /// The backend, e.g. "systemd-logind".
        backend: String,
        /// The refused lock group, e.g. "sleep:idle" or "handle-lid-switch".
        what: String,
        /// The OS's own message.
        message: String,
    },
    /// The backend answered with another error, or could not be reached.
    #[error("{backend} could not take the {what} lock: {message}")]
    Backend {
        /// The backend, e.g. "systemd-logind".
        backend: String,
        /// The lock group asked for, e.g. "sleep:idle".
        what: String,
        /// What went wrong.
        message: String,
    },
}

/// Why the OS did not take a suspend request; the message is the OS's, with what it means.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SuspendError {
    /// This machine cannot (no support, no swap for hibernation, a container, Modern Standby).
    #[error("{0}")]
    Unsupported(String),
    /// This user may not (authentication needed, a privilege missing).
    #[error("{0}")]
    NotAllowed(String),
    /// The request failed.
    #[error("{0}")]
    Failed(String),
    /// An OS policy that must change first could not be (macOS: `SleepDisabled`,
    /// `hibernatemode`).
    #[error(transparent)]
    Policy(#[from] crate::policy::PolicyError),
}

/// Why protection cannot be had at all (no system bus, no logind, unsupported OS). Display text
/// is shown verbatim in `lidguard status`.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct PowerUnavailable(pub String);

/// Connects to the platform backend.
///
/// Linux: the system D-Bus (`DBUS_SYSTEM_BUS_ADDRESS` when set, else the standard socket),
/// checking within [`CONNECT_TIMEOUT`] that `org.freedesktop.login1` answers. Other systems:
/// always [`PowerUnavailable`] for now.
pub async fn connect() -> Result<Arc<dyn PowerControl>, PowerUnavailable> {
    connect_keeping(None).await
}

/// Like [`connect`], with a durable place for the backups of OS policy lidguard changes (the
/// daemon's store). Windows needs it to change the lid-close action; without it the lid-switch
/// lock is refused there. Windows also restores, first, a lid-close action a dead daemon left
/// changed.
pub async fn connect_keeping(
    backups: Option<Arc<dyn crate::lid_action::PolicyBackups>>,
) -> Result<Arc<dyn PowerControl>, PowerUnavailable> {
    #[cfg(any(windows, target_os = "macos"))]
    {
        imp::connect(backups).await
    }
    #[cfg(not(any(windows, target_os = "macos")))]
    {
        let _ = backups;
        imp::connect(None).await
    }
}

/// Puts back OS policy a daemon that died left changed (Windows: the lid-close action and the
/// battery sleep timeout; macOS: `SleepDisabled` and `hibernatemode`), when a backup is pending.
/// Returns what came back, for the user ("your lid-close action (AC 1, DC 1)"); Linux changes
/// no such policy and reports nothing. Where tests relocate the system (`LIDGUARD_SYS_ROOT`),
/// the macOS setting files below it are restored on every system, so the restore paths run in
/// Linux tests too.
///
/// This is the daemon's own restore at its start: a daemon started for an agent's hook does not
/// put the Mac to sleep. The commands and the watcher use [`crate::restore::pending_and_settle`].
pub fn restore_pending(
    backups: &dyn crate::lid_action::PolicyBackups,
) -> Result<Option<String>, crate::policy::PolicyError> {
    let roots = crate::roots::Roots::from_env();
    let mut restored: Vec<String> = Vec::new();
    #[cfg(windows)]
    restored.extend(imp::restore_pending(backups)?);
    if cfg!(target_os = "macos") || roots.overridden {
        use crate::{hibernate_mode, pmset, sleep_disabled};
        if sleep_disabled::pending(backups)? {
            let setting = pmset::sleep_setting(&roots);
            let done = sleep_disabled::restore(setting.as_ref(), backups)?;
            restored.extend(sleep_disabled::describe(&done));
        }
        if hibernate_mode::pending(backups)? {
            let setting = pmset::hibernate_setting(&roots);
            let done = hibernate_mode::restore(setting.as_ref(), backups)?;
            restored.extend(hibernate_mode::describe(&done));
        }
    }
    Ok((!restored.is_empty()).then(|| restored.join(" and ")))
}

/// Like [`connect`], but to the D-Bus at `address` (e.g. `unix:path=/tmp/x/system_bus_socket`)
/// instead of the system bus. Meant for tests with a private bus; other systems report
/// [`PowerUnavailable`] as [`connect`] does.
pub async fn connect_with_address(
    address: &str,
) -> Result<Arc<dyn PowerControl>, PowerUnavailable> {
    #[cfg(any(windows, target_os = "macos"))]
    {
        Err(PowerUnavailable(format!(
            "{address}: a D-Bus address means nothing on {}",
            std::env::consts::OS
        )))
    }
    #[cfg(not(any(windows, target_os = "macos")))]
    {
        imp::connect(Some(address)).await
    }
}

/// logind's `LidClosed` on the system bus: `None` when unknown (no bus, no logind, not Linux).
///
/// This opens a short-lived connection; a caller holding a [`PowerControl`] should prefer
/// [`PowerControl::lid_closed`].
pub async fn logind_lid_closed() -> Option<bool> {
    imp::logind_lid_closed().await
}

/// A policy change in place (macOS `SleepDisabled`, the Windows lid-close action): dropping it
/// (the last [`SharedChange`] reference) puts the user's value back and logs what came back.
#[cfg_attr(
    not(any(windows, target_os = "macos")),
    allow(dead_code, reason = "used by the Windows and macOS backends")
)]
struct PolicyHold {
    /// What is changed, for the log.
    what: &'static str,
    /// Puts it back; says what came back.
    restore: Box<dyn Fn() -> Result<String, crate::policy::PolicyError> + Send + Sync>,
}

#[cfg_attr(
    not(any(windows, target_os = "macos")),
    allow(dead_code, reason = "used by the Windows and macOS backends")
)]
impl PolicyHold {
    fn new<R: std::fmt::Debug>(
        what: &'static str,
        restore: impl Fn() -> Result<R, crate::policy::PolicyError> + Send + Sync + 'static,
    ) -> PolicyHold {
        PolicyHold {
            what,
            restore: Box::new(move || restore().map(|restored| format!("{restored:?}"))),
        }
    }
}

impl std::fmt::Debug for PolicyHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PolicyHold({})", self.what)
    }
}

impl Drop for PolicyHold {
    fn drop(&mut self) {
        match (self.restore)() {
            Ok(restored) => tracing::info!(what = self.what, %restored, "the user's value is back"),
            Err(e) => tracing::error!(
                what = self.what,
                error = %e,
                "cannot put the user's value back; it stays backed up and the next lidguard \
                 command tries again"
            ),
        }
    }
}

/// One OS policy change (the Windows lid-close action, macOS's `SleepDisabled`) shared by every
/// guard that wants it: the daemon takes a new plan before it drops the old, so the change stays
/// in place across the swap, and the last guard's drop undoes it.
#[cfg_attr(
    not(any(windows, target_os = "macos")),
    allow(dead_code, reason = "used by the Windows and macOS backends")
)]
struct SharedChange<T>(std::sync::Mutex<std::sync::Weak<T>>);

#[cfg_attr(
    not(any(windows, target_os = "macos")),
    allow(dead_code, reason = "used by the Windows and macOS backends")
)]
impl<T> SharedChange<T> {
    fn new() -> SharedChange<T> {
        SharedChange(std::sync::Mutex::new(std::sync::Weak::new()))
    }

    /// The change in place, or a new one from `make`.
    fn get_or_make<E>(&self, make: impl FnOnce() -> Result<T, E>) -> Result<Arc<T>, E> {
        // Only a weak pointer is kept under the lock: a panic elsewhere cannot leave it torn.
        let mut current = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(change) = current.upgrade() {
            return Ok(change);
        }
        let change = Arc::new(make()?);
        *current = Arc::downgrade(&change);
        Ok(change)
    }
}

/// The keep-awake lock group of `plan`: its distinct non-lid locks in a stable order.
#[cfg_attr(
    not(any(target_os = "linux", windows, target_os = "macos")),
    allow(dead_code, reason = "used by the Linux, Windows and macOS backends")
)]
fn keep_awake_group(plan: &ProtectionPlan) -> Vec<Inhibit> {
    let mut group: Vec<Inhibit> = plan
        .keep_awake
        .iter()
        .copied()
        .filter(|inhibit| *inhibit != Inhibit::HandleLidSwitch)
        .collect();
    group.sort();
    group.dedup();
    group
}

/// Whether `plan` wants the lid switch held (asked for directly or listed among the locks).
#[cfg_attr(
    not(any(target_os = "linux", windows, target_os = "macos")),
    allow(dead_code, reason = "used by the Linux, Windows and macOS backends")
)]
fn wants_lid_switch(plan: &ProtectionPlan) -> bool {
    plan.lid_switch || plan.keep_awake.contains(&Inhibit::HandleLidSwitch)
}

/// Takes the closed-lid hold with `take` when `plan` wants one, and names it in `inhibits`.
#[cfg_attr(
    not(any(windows, target_os = "macos")),
    allow(dead_code, reason = "used by the Windows and macOS backends")
)]
fn lid_hold_if<T>(
    plan: &ProtectionPlan,
    inhibits: &mut Vec<Inhibit>,
    take: impl FnOnce() -> Result<T, PowerError>,
) -> Result<Option<T>, PowerError> {
    if !wants_lid_switch(plan) {
        return Ok(None);
    }
    let hold = take()?;
    inhibits.push(Inhibit::HandleLidSwitch);
    Ok(Some(hold))
}

/// `what` text for a lock group, e.g. "sleep:idle".
#[cfg_attr(
    not(target_os = "linux"),
    allow(dead_code, reason = "used by the Linux backend")
)]
fn what_of(group: &[Inhibit]) -> String {
    group
        .iter()
        .map(|inhibit| inhibit.as_str())
        .collect::<Vec<_>>()
        .join(":")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(keep_awake: Vec<Inhibit>, lid_switch: bool) -> ProtectionPlan {
        ProtectionPlan {
            keep_awake,
            lid_switch,
            who: "lidguard".into(),
            why: "x".into(),
            ..ProtectionPlan::default()
        }
    }

    #[test]
    fn keep_awake_group_is_sorted_distinct_and_without_lid() {
        let p = plan(
            vec![
                Inhibit::Idle,
                Inhibit::HandleLidSwitch,
                Inhibit::Sleep,
                Inhibit::Idle,
            ],
            false,
        );
        assert_eq!(keep_awake_group(&p), vec![Inhibit::Sleep, Inhibit::Idle]);
        assert!(wants_lid_switch(&p));
        assert_eq!(what_of(&keep_awake_group(&p)), "sleep:idle");
    }

    #[test]
    fn lid_switch_flag_alone() {
        let p = plan(vec![], true);
        assert!(keep_awake_group(&p).is_empty());
        assert!(wants_lid_switch(&p));
        assert!(!wants_lid_switch(&plan(vec![Inhibit::Sleep], false)));
    }

    #[test]
    fn refused_mentions_permission_command() {
        let e = PowerError::Refused {
            backend: "systemd-logind".into(),
            what: "sleep:idle".into(),
            message: "Access denied".into(),
        };
        let text = e.to_string();
        assert!(text.contains("sleep:idle"), "{text}");
        assert_eq!(
            text.contains("lidguard linux-permission install"),
            cfg!(target_os = "linux"),
            "{text}"
        );
    }
}
