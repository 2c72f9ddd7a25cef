//! The battery from IOKit's power sources (see [`super::power_sources`] for the keys), and the
//! notification that it changed.
//!
//! Facts (Apple's `IOPowerSources.h`; `notify(3)`): IOKit posts the notify(3) name
//! `kIOPSNotifyTimeRemaining` ("com.apple.system.powersources.timeremaining") when any power
//! source's time remaining changes and when the active source switches between AC, battery and
//! UPS; `notify_register_file_descriptor` writes the registration's 4-byte token to a
//! descriptor at each post, so Tokio waits on it and nothing polls.

use lidguard_core::suspend::Battery;
use objc2_core_foundation::{CFBoolean, CFDictionary, CFNumber, CFString, CFType};
use objc2_io_kit::{
    IOPSCopyPowerSourcesInfo, IOPSCopyPowerSourcesList, IOPSGetPowerSourceDescription,
    IOPSGetProvidingPowerSourceType,
};

use super::power_sources::{PowerSource, PowerSources};

/// `kIOPSNotifyTimeRemaining`.
const POWER_SOURCES_CHANGED: &std::ffi::CStr = c"com.apple.system.powersources.timeremaining";

unsafe extern "C" {
    /// libnotify (libSystem): registers `name`, returning a descriptor the tokens are written to.
    fn notify_register_file_descriptor(
        name: *const std::ffi::c_char,
        notify_fd: *mut std::ffi::c_int,
        flags: std::ffi::c_int,
        out_token: *mut std::ffi::c_int,
    ) -> u32;
}

/// Sends `()` on `changed` at each power-source change; `false` when it cannot register.
pub(super) fn watch(changed: tokio::sync::mpsc::UnboundedSender<()>) -> bool {
    use std::os::fd::{FromRawFd, OwnedFd};

    let (mut fd, mut token) = (-1, 0);
    // SAFETY: a NUL-terminated name and two out-parameters.
    let status = unsafe {
        notify_register_file_descriptor(POWER_SOURCES_CHANGED.as_ptr(), &mut fd, 0, &mut token)
    };
    if status != 0 || fd < 0 {
        tracing::warn!(
            status,
            "no power-source notifications; the battery is polled"
        );
        return false;
    }
    // SAFETY: libnotify handed this descriptor to us; it is ours to read and close.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: the AsyncFd owns the descriptor, which stays open and the same until dropped.
    let registered = unsafe {
        tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)
    };
    let Ok(fd) = registered else {
        return false;
    };
    tokio::spawn(async move {
        let mut tokens = [0_u8; 64];
        loop {
            let Ok(mut ready) = fd.readable().await else {
                return;
            };
            match rustix::io::read(fd.get_ref(), &mut tokens) {
                Ok(0) => return,
                Ok(_) => {
                    if changed.send(()).is_err() {
                        return;
                    }
                }
                Err(rustix::io::Errno::AGAIN) => ready.clear_ready(),
                Err(_) => return,
            }
        }
    });
    true
}

/// The battery now, or `None` without one.
pub(super) fn battery() -> Option<Battery> {
    snapshot().battery()
}

/// Every power source's description, and what powers the machine.
fn snapshot() -> PowerSources {
    let Some(blob) = IOPSCopyPowerSourcesInfo() else {
        return PowerSources::default();
    };
    // SAFETY: `blob` is the snapshot IOPSCopyPowerSourcesInfo returned.
    let providing = unsafe { IOPSGetProvidingPowerSourceType(Some(&blob)) }.map(|s| s.to_string());
    // SAFETY: as above.
    let Some(list) = (unsafe { IOPSCopyPowerSourcesList(Some(&blob)) }) else {
        return PowerSources {
            providing,
            sources: Vec::new(),
        };
    };
    // SAFETY: the list holds the snapshot's power sources, CF objects.
    let list = unsafe { list.cast_unchecked::<CFType>() };
    let sources = list
        .iter()
        .filter_map(|source| {
            // SAFETY: `source` comes from this snapshot's list.
            let description = unsafe { IOPSGetPowerSourceDescription(Some(&blob), Some(&source)) }?;
            Some(describe(&description))
        })
        .collect();
    PowerSources { providing, sources }
}

/// The keys lidguard reads from one description.
fn describe(description: &CFDictionary) -> PowerSource {
    // SAFETY: IOKit's descriptions map CFString keys to CF objects.
    let description = unsafe { description.cast_unchecked::<CFString, CFType>() };
    let value = |key: &str| description.get(&CFString::from_str(key));
    let text =
        |key: &str| value(key).and_then(|v| v.downcast_ref::<CFString>().map(|s| s.to_string()));
    let number = |key: &str| value(key).and_then(|v| v.downcast_ref::<CFNumber>()?.as_i64());
    PowerSource {
        kind: text("Type"),
        state: text("Power Source State"),
        current_capacity: number("Current Capacity"),
        max_capacity: number("Max Capacity"),
        present: value("Is Present")
            .and_then(|v| v.downcast_ref::<CFBoolean>().map(CFBoolean::as_bool)),
    }
}
