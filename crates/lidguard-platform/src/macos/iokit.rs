//! IOKit: power assertions and the clamshell (lid) state.
//!
//! Facts (Apple's IOPMLib reference; `IOPMrootDomain` properties in IOKit's `IOPM.h`):
//! - `IOPMAssertionCreateWithName(type, kIOPMAssertionLevelOn, name, &id)` takes an assertion
//!   that lasts until `IOPMAssertionRelease(id)` or the process's exit; types are the strings
//!   `PreventUserIdleSystemSleep` and `PreventUserIdleDisplaySleep`; a name is at most 128
//!   characters;
//! - `IOPMrootDomain` carries `AppleClamshellState` (a boolean, true = closed) on Macs with a
//!   lid; desktops lack it.

use objc2_core_foundation::{CFBoolean, CFDictionary, CFRetained, CFString};
use objc2_io_kit::{
    IOObjectRelease, IOPMAssertionCreateWithName, IOPMAssertionID, IOPMAssertionRelease,
    IORegistryEntryCreateCFProperty, IOServiceGetMatchingService, IOServiceMatching,
    kAppleClamshellStateKey, kIOPMAssertionLevelOn,
};

/// The assertion that keeps the Mac from idle sleep.
pub(crate) const PREVENT_IDLE_SYSTEM_SLEEP: &str = "PreventUserIdleSystemSleep";
/// The assertion that keeps the display on.
pub(crate) const PREVENT_IDLE_DISPLAY_SLEEP: &str = "PreventUserIdleDisplaySleep";

/// A power assertion held until dropped.
#[derive(Debug)]
pub(crate) struct Assertion(IOPMAssertionID);

impl Assertion {
    /// Takes an assertion of `kind` named `name` (cut to 128 characters).
    pub(crate) fn take(kind: &'static str, name: &str) -> Result<Assertion, String> {
        let name: String = name.chars().take(128).collect();
        let kind_cf = CFString::from_static_str(kind);
        let name_cf = CFString::from_str(&name);
        let mut id: IOPMAssertionID = 0;
        // SAFETY: both strings are live CFStrings and `id` is a valid out-pointer.
        let ret = unsafe {
            IOPMAssertionCreateWithName(
                Some(&kind_cf),
                kIOPMAssertionLevelOn,
                Some(&name_cf),
                &mut id,
            )
        };
        if ret == 0 {
            Ok(Assertion(id))
        } else {
            Err(format!(
                "IOPMAssertionCreateWithName({kind}) failed: {ret:#x}"
            ))
        }
    }
}

impl Drop for Assertion {
    fn drop(&mut self) {
        let ret = IOPMAssertionRelease(self.0);
        if ret != 0 {
            tracing::warn!(id = self.0, ret, "IOPMAssertionRelease failed");
        }
    }
}

/// `AppleClamshellState` of `IOPMrootDomain`: `Some(true)` closed, `None` on a Mac without a
/// lid or when the registry cannot be read.
pub(crate) fn clamshell_closed() -> Option<bool> {
    root_domain_flag(kAppleClamshellStateKey.to_str().ok()?)
}

/// `SleepDisabled` as the kernel has it: XNU's `IOPMrootDomain::setProperties` publishes the
/// value the power daemon pushed as the root domain's own property.
pub(crate) fn sleep_disabled() -> Option<bool> {
    root_domain_flag("SleepDisabled")
}

/// `IOPMrootDomain`'s registry entry, for the caller to release (`IOObjectRelease`).
pub(crate) fn root_domain() -> Option<u32> {
    // SAFETY: a NUL-terminated class name.
    let matching = unsafe { IOServiceMatching(c"IOPMrootDomain".as_ptr()) }?;
    let matching: CFRetained<CFDictionary> = CFRetained::from(&*matching);
    // SAFETY: the default main port; the dictionary reference is consumed.
    let service = unsafe { IOServiceGetMatchingService(MAIN_PORT_DEFAULT, Some(matching)) };
    (service != 0).then_some(service)
}

/// A boolean property of `IOPMrootDomain`; `None` when it is missing or cannot be read.
fn root_domain_flag(key: &str) -> Option<bool> {
    let service = root_domain()?;
    let key = CFString::from_str(key);
    // SAFETY: `service` is a live registry entry and `key` a live CFString.
    let value = unsafe { IORegistryEntryCreateCFProperty(service, Some(&key), None, 0) };
    IOObjectRelease(service);
    value?.downcast_ref::<CFBoolean>().map(CFBoolean::value)
}

/// The default main port. Apple's `IOKitLib.h`: "When specifying a main port to IOKit functions,
/// the NULL argument indicates 'use the default'"; `kIOMainPortDefault` is "a synonym for NULL"
/// and exists from macOS 12 only, so a binary that linked it would not load on macOS 11.
const MAIN_PORT_DEFAULT: u32 = 0;
