//! The battery from IOKit's power sources (see [`super::power_sources`] for the keys).

use lidguard_core::suspend::Battery;
use objc2_core_foundation::{CFBoolean, CFDictionary, CFNumber, CFString, CFType};
use objc2_io_kit::{
    IOPSCopyPowerSourcesInfo, IOPSCopyPowerSourcesList, IOPSGetPowerSourceDescription,
    IOPSGetProvidingPowerSourceType,
};

use super::power_sources::{PowerSource, PowerSources};

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
