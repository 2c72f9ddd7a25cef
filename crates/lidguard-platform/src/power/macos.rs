//! macOS: IOKit power assertions, `SleepDisabled` for the closed lid, the clamshell state from
//! the IORegistry and `pmset sleepnow`.
//!
//! A Mac sleeps when its lid closes whatever assertions are held (unless it drives an external
//! display on power), so closed-lid protection sets `SleepDisabled` through `pmset` with a
//! durable backup ([`crate::sleep_disabled`]), and sleep is enabled again before lidguard asks
//! the Mac to sleep. Assertions belong to the process: a killed daemon releases them.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use lidguard_core::clamshell::Clamshell;
use lidguard_core::protection::{Inhibit, ProtectionPlan};

use super::{
    BoxFuture, HeldProtection, PolicyHold, PowerControl, PowerError, PowerUnavailable, SuspendError,
};
use crate::give_back::{self, Kernel};
use crate::lid_action::PolicyBackups;
use crate::macos::iokit::{self, Assertion};
use crate::pmset::{self, PerSource, Setting};
use crate::policy::PolicyError;
use crate::roots::Roots;
use crate::saved_setting::Restored;
use crate::{hibernate_mode, sleep_disabled};

const BACKEND: &str = "macOS power management";

pub(super) struct MacPower {
    roots: Roots,
    setting: Arc<dyn Setting<bool>>,
    hibernate: Arc<dyn Setting<PerSource>>,
    backups: Option<Arc<dyn PolicyBackups>>,
    /// What the kernel applies, and its sleep.
    kernel: Arc<dyn Kernel>,
    /// The `SleepDisabled` change, shared by every guard that wants it.
    lid_hold: super::SharedChange<PolicyHold>,
    /// Set when the end of a hold wrote `SleepDisabled` back to 0: the lid is the kernel's
    /// again, and [`PowerControl::give_back_lid`] has its closed lid to settle.
    lid_returned: Arc<AtomicBool>,
}

pub(super) async fn connect(
    backups: Option<Arc<dyn PolicyBackups>>,
) -> Result<Arc<dyn PowerControl>, PowerUnavailable> {
    let roots = Roots::from_env();
    let setting = pmset::sleep_setting(&roots);
    let hibernate = pmset::hibernate_setting(&roots);
    let kernel = give_back::kernel(&roots);
    // A daemon that died with sleep disabled (or hibernating to disk) left a backup: put the
    // user's values back first.
    if let Some(backups) = &backups {
        match super::restore_pending(backups.as_ref()) {
            Ok(None) => {}
            Ok(Some(what)) => tracing::warn!(%what, "restored what a previous daemon left changed"),
            Err(e) => {
                tracing::error!(error = %e, "cannot restore what a previous daemon left changed")
            }
        }
    }
    Ok(Arc::new(MacPower {
        roots,
        setting,
        hibernate,
        backups,
        kernel,
        lid_hold: super::SharedChange::new(),
        lid_returned: Arc::new(AtomicBool::new(false)),
    }))
}

pub(super) async fn logind_lid_closed() -> Option<bool> {
    None
}

impl PowerControl for MacPower {
    fn hold<'a>(
        &'a self,
        plan: &'a ProtectionPlan,
    ) -> BoxFuture<'a, Result<Box<dyn HeldProtection>, PowerError>> {
        Box::pin(async move {
            let group = super::keep_awake_group(plan);
            let mut inhibits = group.clone();
            let mut assertions = Vec::new();
            if !group.is_empty() {
                let name = if plan.reason.is_empty() {
                    plan.why.as_str()
                } else {
                    plan.reason.as_str()
                };
                let mut kinds = vec![iokit::PREVENT_IDLE_SYSTEM_SLEEP];
                if plan.display {
                    kinds.push(iokit::PREVENT_IDLE_DISPLAY_SLEEP);
                }
                for kind in kinds {
                    assertions.push(Assertion::take(kind, name).map_err(|message| {
                        PowerError::Backend {
                            backend: BACKEND.to_owned(),
                            what: "power assertion".to_owned(),
                            message,
                        }
                    })?);
                }
            }
            let lid = super::lid_hold_if(plan, &mut inhibits, || self.sleep_hold())?;
            Ok(Box::new(MacHeld {
                inhibits,
                _assertions: assertions,
                _lid: lid,
            }) as Box<dyn HeldProtection>)
        })
    }

    fn describe(&self) -> String {
        format!("{BACKEND}: IOKit power assertions; SleepDisabled through pmset for a closed lid")
    }

    fn lid_closed(&self) -> BoxFuture<'_, Option<bool>> {
        // With the roots relocated, callers read the lid from the files below them instead.
        let closed = if self.roots.overridden {
            None
        } else {
            iokit::clamshell_closed()
        };
        Box::pin(async move { closed })
    }

    fn watch_lid(&self, changed: tokio::sync::mpsc::UnboundedSender<()>) -> BoxFuture<'_, bool> {
        // With the roots relocated, the files below them are watched instead.
        let watching = !self.roots.overridden && clamshell_notifications(changed);
        Box::pin(async move { watching })
    }

    fn capabilities(&self) -> BoxFuture<'_, (Option<String>, Option<String>)> {
        // Every Mac can sleep; hibernating needs hibernatemode 25 through the sudoers rule.
        Box::pin(async { (Some("yes".to_owned()), Some("yes".to_owned())) })
    }

    fn give_back_lid(
        &self,
        clamshell: Clamshell,
    ) -> BoxFuture<'_, Result<Option<String>, SuspendError>> {
        // Only when the end of the hold wrote SleepDisabled back (not when the user had it set
        // already, and not twice).
        let returned = self.lid_returned.swap(false, Ordering::AcqRel);
        let kernel = self.kernel.clone();
        Box::pin(async move {
            if !returned {
                return Ok(None);
            }
            let settled = tokio::task::spawn_blocking(move || {
                give_back::settle(kernel.as_ref(), &clamshell, give_back::Timing::DEFAULT)
            })
            .await
            .map_err(|e| SuspendError::Failed(e.to_string()))??;
            Ok(Some(settled.describe()))
        })
    }

    fn suspend(&self, hibernate: bool) -> BoxFuture<'_, Result<(), SuspendError>> {
        // lidguard's own request sleeps the Mac itself: the hold it ended needs no settling.
        self.lid_returned.store(false, Ordering::Release);
        let setting = self.setting.clone();
        let modes = self.hibernate.clone();
        let backups = self.backups.clone();
        let kernel = self.kernel.clone();
        Box::pin(async move {
            let asked = tokio::task::spawn_blocking({
                let modes = modes.clone();
                let backups = backups.clone();
                move || {
                    sleep_now(
                        setting.as_ref(),
                        modes.as_ref(),
                        backups.as_deref(),
                        kernel.as_ref(),
                        hibernate,
                    )
                }
            })
            .await
            .map_err(|e| SuspendError::Failed(e.to_string()))?;
            if asked.is_ok()
                && hibernate
                && let Some(backups) = backups
            {
                // `pmset sleepnow` returns at once. Tokio's clock (macOS's uptime clock) stands
                // still while the Mac is asleep, so this runs a minute after it wakes; a daemon
                // that dies first leaves the backup for the next start or command.
                tokio::spawn(async move {
                    tokio::time::sleep(std::time::Duration::from_secs(60)).await;
                    match hibernate_mode::restore(modes.as_ref(), backups.as_ref()) {
                        Ok(restored) => tracing::info!(?restored, "hibernatemode restored"),
                        Err(e) => tracing::error!(error = %e, "cannot restore hibernatemode"),
                    }
                });
            }
            asked.map_err(SuspendError::from)
        })
    }
}

/// Puts `SleepDisabled` back (with it set the Mac would not sleep; a later release then finds
/// nothing left to restore), sets `hibernatemode 25` when hibernating, and asks the kernel to
/// sleep once it has sleep enabled ([`give_back::sleep_after_restore`]); a refused sleep puts
/// the hibernate mode back at once.
fn sleep_now(
    setting: &dyn Setting<bool>,
    modes: &dyn Setting<PerSource>,
    backups: Option<&dyn PolicyBackups>,
    kernel: &dyn Kernel,
    hibernate: bool,
) -> Result<(), PolicyError> {
    if let Some(backups) = backups {
        sleep_disabled::restore(setting, backups)?;
    }
    let timing = give_back::Timing::DEFAULT;
    if hibernate {
        let Some(backups) = backups else {
            return Err(PolicyError::Missing(
                "there is no durable place to back up hibernatemode".to_owned(),
            ));
        };
        hibernate_mode::prepare(modes, backups)?;
        let slept = give_back::sleep_after_restore(kernel, timing);
        if slept.is_err() {
            let _ = hibernate_mode::restore(modes, backups);
        }
        return slept;
    }
    give_back::sleep_after_restore(kernel, timing)
}

impl MacPower {
    fn sleep_hold(&self) -> Result<Arc<PolicyHold>, PowerError> {
        self.lid_hold
            .get_or_make(|| {
                let Some(backups) = self.backups.clone() else {
                    return Err(PolicyError::Missing(
                        "there is no durable place to back up SleepDisabled".to_owned(),
                    ));
                };
                let saved = sleep_disabled::change(self.setting.as_ref(), backups.as_ref())?;
                // SleepDisabled outlives a dead daemon: a watcher restores it if this one dies.
                backups.changed(sleep_disabled::BACKUP_KIND);
                tracing::info!(
                    previous = saved,
                    "sleep disabled for the closed lid; the user's value is backed up"
                );
                let setting = self.setting.clone();
                let returned = self.lid_returned.clone();
                Ok(PolicyHold::new("SleepDisabled", move || {
                    let restored = sleep_disabled::restore(setting.as_ref(), backups.as_ref())?;
                    if restored
                        == (Restored::Value {
                            value: false,
                            written: true,
                        })
                    {
                        returned.store(true, Ordering::Release);
                    }
                    Ok(restored)
                }))
            })
            .map_err(|e| PowerError::Refused {
                backend: BACKEND.to_owned(),
                what: Inhibit::HandleLidSwitch.as_str().to_owned(),
                message: e.to_string(),
            })
    }
}

#[derive(Debug)]
struct MacHeld {
    inhibits: Vec<Inhibit>,
    _assertions: Vec<Assertion>,
    _lid: Option<Arc<PolicyHold>>,
}

impl HeldProtection for MacHeld {
    fn inhibits(&self) -> Vec<Inhibit> {
        self.inhibits.clone()
    }
}

/// IOKit's interest notifications on `IOPMrootDomain`, delivered on a dispatch queue (no run
/// loop): XNU's `sendClientClamshellNotification` messages its clients with
/// `kIOPMMessageClamshellStateChange` at each lid change and when an external display appears or
/// goes (the clamshell enabled or disabled), so the lid and what a closed lid means are heard of
/// without polling. The registration lives as long as the process. `false` when it cannot be made.
fn clamshell_notifications(changed: tokio::sync::mpsc::UnboundedSender<()>) -> bool {
    use objc2_io_kit::{
        IONotificationPort, IOObjectRelease, IOServiceAddInterestNotification, kIOGeneralInterest,
    };

    let Some(service) = crate::macos::iokit::root_domain() else {
        return false;
    };
    let port = IONotificationPort::create(0);
    if port.is_null() {
        IOObjectRelease(service);
        return false;
    }
    let queue: &'static dispatch2::DispatchQueue = Box::leak(Box::new(
        dispatch2::DispatchQueue::new("dev.lidguard.clamshell", None),
    ));
    // SAFETY: `port` was just created; the queue lives for the rest of the process.
    unsafe { IONotificationPort::set_dispatch_queue(port, Some(queue)) };
    let mut interest = [0 as std::ffi::c_char; 128];
    for (slot, byte) in interest.iter_mut().zip(kIOGeneralInterest.to_bytes()) {
        *slot = byte.cast_signed();
    }
    let context: *mut std::ffi::c_void = Box::into_raw(Box::new(changed)).cast();
    let mut notification = 0;
    // SAFETY: the port and service are live; `interest` is a NUL-terminated io_name_t; the
    // context is a leaked sender the callback only reads; `notification` is an out-parameter.
    let status = unsafe {
        IOServiceAddInterestNotification(
            port,
            service,
            &mut interest,
            Some(clamshell_changed),
            context,
            &mut notification,
        )
    };
    IOObjectRelease(service);
    if status != 0 {
        tracing::warn!(status, "no clamshell notifications; the lid is polled");
        return false;
    }
    true
}

/// Called on the dispatch queue for each message of the root domain.
unsafe extern "C-unwind" fn clamshell_changed(
    context: *mut std::ffi::c_void,
    _service: u32,
    message: u32,
    _argument: *mut std::ffi::c_void,
) {
    if message != objc2_io_kit::kIOPMMessageClamshellStateChange || context.is_null() {
        return;
    }
    // SAFETY: the context is the sender leaked in `clamshell_notifications`, never freed.
    let changed = unsafe { &*context.cast::<tokio::sync::mpsc::UnboundedSender<()>>() };
    let _ = changed.send(());
}
