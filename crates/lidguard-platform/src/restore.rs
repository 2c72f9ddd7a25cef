//! Putting back what a daemon that died left changed, from outside a daemon (the watcher that
//! outlives it, `power-restore`, every command that finds a backup left behind), and then what
//! the OS would have done for a lid closed meanwhile.
//!
//! `SleepDisabled` is restored first, on its own: when it goes back to 0, a Mac whose lid is
//! closed is put to sleep by the kernel's rule ([`crate::give_back::settle`]); the rest
//! ([`crate::power::restore_pending`]) follows.

use crate::lid_action::PolicyBackups;
use crate::policy::PolicyError;
use crate::saved_setting::Restored;
use crate::{give_back, pmset, power, sleep_disabled, sources};

/// What came back, and, when the lid was settled, what became of the Mac.
pub fn pending_and_settle(
    backups: &dyn PolicyBackups,
) -> Result<Option<(String, Option<String>)>, PolicyError> {
    let roots = crate::roots::Roots::from_env();
    let mut restored: Vec<String> = Vec::new();
    let mut settled = None;
    if (cfg!(target_os = "macos") || roots.overridden) && sleep_disabled::pending(backups)? {
        let setting = pmset::sleep_setting(&roots);
        let done = sleep_disabled::restore(setting.as_ref(), backups)?;
        restored.extend(sleep_disabled::describe(&done));
        let returned = Restored::Value {
            value: false,
            written: true,
        };
        if done == returned {
            let clamshell = sources::clamshell_now(&roots);
            let kernel = give_back::kernel(&roots);
            let done = give_back::settle(kernel.as_ref(), &clamshell, give_back::Timing::DEFAULT)?;
            settled = Some(done.describe());
        }
    }
    restored.extend(power::restore_pending(backups)?);
    Ok((!restored.is_empty()).then(|| (restored.join(" and "), settled)))
}
