//! The battery from the kernel's `power_supply` class — the files UPower reads too: each
//! supply of `type` `Battery` gives its `capacity` (averaged) and `status`; the machine runs on
//! its battery when a `Mains` supply exists and none is `online`, or, without one, when a
//! battery reports `Discharging`.

use std::path::Path;

use lidguard_core::suspend::Battery;

/// The battery below `sys_root`, or `None` without one.
pub(super) fn battery(sys_root: &Path) -> Option<Battery> {
    let entries = std::fs::read_dir(sys_root.join("class/power_supply")).ok()?;
    let read = |path: std::path::PathBuf| {
        std::fs::read_to_string(path)
            .ok()
            .map(|text| text.trim().to_owned())
    };
    let (mut capacities, mut discharging, mut mains, mut mains_online) =
        (Vec::new(), false, false, false);
    for entry in entries.flatten() {
        let supply = entry.path();
        match read(supply.join("type")).as_deref() {
            Some("Battery") => {
                if let Some(percent) =
                    read(supply.join("capacity")).and_then(|c| c.parse::<u32>().ok())
                {
                    capacities.push(percent.min(100));
                }
                discharging |= read(supply.join("status")).as_deref() == Some("Discharging");
            }
            Some("Mains") => {
                mains = true;
                mains_online |= read(supply.join("online")).as_deref() == Some("1");
            }
            _ => {}
        }
    }
    if capacities.is_empty() {
        return None;
    }
    let average = capacities.iter().sum::<u32>() / u32::try_from(capacities.len()).ok()?;
    Some(Battery {
        percent: u8::try_from(average).unwrap_or(100),
        on_battery: if mains { !mains_online } else { discharging },
    })
}
