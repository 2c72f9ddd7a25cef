//! macOS: IOKit power assertions, `SleepDisabled` for the closed lid, the clamshell state from
//! the IORegistry and `pmset sleepnow`.
//!
//! A Mac sleeps when its lid closes whatever assertions are held (unless it drives an external
//! display on power), so closed-lid protection sets `SleepDisabled` through `pmset` with a
//! durable backup ([`crate::sleep_disabled`]), and sleep is enabled again before lidguard asks
//! the Mac to sleep. Assertions belong to the process: a killed daemon releases them.

use std::sync::{Arc, Mutex, Weak};

use lidguard_core::protection::{Inhibit, ProtectionPlan};

use super::{BoxFuture, HeldProtection, PowerControl, PowerError, PowerUnavailable};
use crate::lid_action::PolicyBackups;
use crate::macos::iokit::{self, Assertion};
use crate::pmset::{self, FileSleepSetting, Pmset, SleepSetting};
use crate::sleep_disabled;
use crate::sources::Roots;

const BACKEND: &str = "macOS power management";

pub(super) struct MacPower {
    roots: Roots,
    setting: Arc<dyn SleepSetting>,
    backups: Option<Arc<dyn PolicyBackups>>,
    /// The `SleepDisabled` change shared by every guard that wants it, as on Windows.
    lid_hold: Mutex<Weak<SleepHold>>,
}

/// `pmset`, or the file below `LIDGUARD_SYS_ROOT` when tests relocate the system.
fn setting(roots: &Roots) -> Arc<dyn SleepSetting> {
    if roots.overridden {
        Arc::new(FileSleepSetting::below(&roots.sys_root))
    } else {
        Arc::new(Pmset::new(rustix::process::geteuid().as_raw()))
    }
}

pub(super) async fn connect(
    backups: Option<Arc<dyn PolicyBackups>>,
) -> Result<Arc<dyn PowerControl>, PowerUnavailable> {
    let roots = Roots::from_env();
    let setting = setting(&roots);
    // A daemon that died with sleep disabled left a backup: put the user's value back first.
    if let Some(backups) = &backups {
        match sleep_disabled::restore(setting.as_ref(), backups.as_ref()) {
            Ok(sleep_disabled::Restored::Nothing) => {}
            Ok(restored) => {
                tracing::warn!(
                    ?restored,
                    "restored SleepDisabled a previous daemon left set"
                )
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot restore SleepDisabled a previous daemon left set")
            }
        }
    }
    Ok(Arc::new(MacPower {
        roots,
        setting,
        backups,
        lid_hold: Mutex::new(Weak::new()),
    }))
}

/// Restores a `SleepDisabled` left set by a dead daemon.
pub(super) fn restore_pending(
    backups: &dyn PolicyBackups,
) -> Result<sleep_disabled::Restored, String> {
    if !sleep_disabled::pending(backups)? {
        return Ok(sleep_disabled::Restored::Nothing);
    }
    sleep_disabled::restore(setting(&Roots::from_env()).as_ref(), backups)
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
            let lid = if super::wants_lid_switch(plan) {
                let lid = self.sleep_hold()?;
                inhibits.push(Inhibit::HandleLidSwitch);
                Some(lid)
            } else {
                None
            };
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

    fn capabilities(&self) -> BoxFuture<'_, (Option<String>, Option<String>)> {
        // Every Mac can sleep; lidguard does not hibernate Macs yet.
        Box::pin(async { (Some("yes".to_owned()), Some("na".to_owned())) })
    }

    fn suspend(&self, hibernate: bool) -> BoxFuture<'_, Result<(), String>> {
        let setting = self.setting.clone();
        let backups = self.backups.clone();
        Box::pin(async move {
            if hibernate {
                return Err(
                    "lidguard does not hibernate Macs yet (it would need hibernatemode 25)".into(),
                );
            }
            tokio::task::spawn_blocking(move || {
                // With SleepDisabled set the Mac would not sleep: put the user's value back
                // first (a later release finds nothing left to restore).
                if let Some(backups) = &backups {
                    sleep_disabled::restore(setting.as_ref(), backups.as_ref())?;
                }
                sleep_now()
            })
            .await
            .map_err(|e| e.to_string())?
        })
    }
}

/// `pmset sleepnow` (no root needed).
fn sleep_now() -> Result<(), String> {
    let out = std::process::Command::new(pmset::PMSET)
        .arg("sleepnow")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {} sleepnow: {e}", pmset::PMSET))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{} sleepnow failed: {}",
            pmset::PMSET,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

impl MacPower {
    fn sleep_hold(&self) -> Result<Arc<SleepHold>, PowerError> {
        let refused = |message: String| PowerError::Refused {
            backend: BACKEND.to_owned(),
            what: Inhibit::HandleLidSwitch.as_str().to_owned(),
            message,
        };
        let mut current = self
            .lid_hold
            .lock()
            .map_err(|_| refused("internal lock poisoned".into()))?;
        if let Some(hold) = current.upgrade() {
            return Ok(hold);
        }
        let Some(backups) = self.backups.clone() else {
            return Err(refused(
                "there is no durable place to back up SleepDisabled".into(),
            ));
        };
        let saved =
            sleep_disabled::change(self.setting.as_ref(), backups.as_ref()).map_err(refused)?;
        tracing::info!(
            previous = saved.sleep_disabled,
            "sleep disabled for the closed lid; the user's value is backed up"
        );
        let hold = Arc::new(SleepHold {
            setting: self.setting.clone(),
            backups,
        });
        *current = Arc::downgrade(&hold);
        Ok(hold)
    }
}

#[derive(Debug)]
struct MacHeld {
    inhibits: Vec<Inhibit>,
    _assertions: Vec<Assertion>,
    _lid: Option<Arc<SleepHold>>,
}

impl HeldProtection for MacHeld {
    fn inhibits(&self) -> Vec<Inhibit> {
        self.inhibits.clone()
    }
}

/// `SleepDisabled` changed; dropping the last reference puts the user's value back.
struct SleepHold {
    setting: Arc<dyn SleepSetting>,
    backups: Arc<dyn PolicyBackups>,
}

impl std::fmt::Debug for SleepHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SleepHold")
    }
}

impl Drop for SleepHold {
    fn drop(&mut self) {
        match sleep_disabled::restore(self.setting.as_ref(), self.backups.as_ref()) {
            Ok(restored) => tracing::info!(?restored, "SleepDisabled restored"),
            Err(e) => tracing::error!(
                error = %e,
                "cannot restore SleepDisabled; it stays backed up and the next lidguard command \
                 tries again"
            ),
        }
    }
}
