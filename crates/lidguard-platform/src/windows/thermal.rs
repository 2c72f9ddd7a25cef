//! Temperatures from WMI.
//!
//! Facts (Microsoft's WMI class references): `Win32_PerfFormattedData_Counters_ThermalZoneInformation`
//! (namespace `ROOT\CIMV2`, readable by users) has `Temperature` in kelvin;
//! `MSAcpi_ThermalZoneTemperature` (namespace `ROOT\WMI`, usually administrators only) has
//! `CurrentTemperature` in tenths of a kelvin. Many machines expose neither.

use serde::Deserialize;
use wmi::WMIConnection;

use crate::no_thermal::NoThermal;
use crate::units::{decikelvin_to_millidegrees, kelvin_to_millidegrees};

const PERF_QUERY: &str =
    "SELECT Temperature FROM Win32_PerfFormattedData_Counters_ThermalZoneInformation";
const ACPI_QUERY: &str = "SELECT CurrentTemperature FROM MSAcpi_ThermalZoneTemperature";

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct PerfZone {
    temperature: u32,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct AcpiZone {
    current_temperature: u32,
}

/// Every thermal zone WMI reports, in millidegrees Celsius; an error saying why when none can be
/// read.
pub(crate) fn zones() -> Result<Vec<i64>, NoThermal> {
    // A WMI connection belongs to the thread that made it (COM): query on a thread of its own.
    std::thread::spawn(query)
        .join()
        .map_err(|_| NoThermal::WmiPanicked)?
}

fn query() -> Result<Vec<i64>, NoThermal> {
    let perf = WMIConnection::new().and_then(|c| c.raw_query::<PerfZone>(PERF_QUERY));
    let perf = match readings(perf, |z| kelvin_to_millidegrees(z.temperature)) {
        Ok(zones) => return Ok(zones),
        Err(e) => e,
    };
    let acpi = WMIConnection::with_namespace_path("ROOT\\WMI")
        .and_then(|c| c.raw_query::<AcpiZone>(ACPI_QUERY));
    match readings(acpi, |z| decikelvin_to_millidegrees(z.current_temperature)) {
        Ok(zones) => Ok(zones),
        Err(acpi) => Err(NoThermal::Wmi { perf, acpi }),
    }
}

/// The zones' temperatures in millidegrees; why there are none otherwise.
fn readings<Z>(
    zones: Result<Vec<Z>, wmi::WMIError>,
    millidegrees: impl Fn(&Z) -> i64,
) -> Result<Vec<i64>, String> {
    match zones {
        Ok(zones) if !zones.is_empty() => Ok(zones.iter().map(millidegrees).collect()),
        Ok(_) => Err("no zone".to_owned()),
        Err(e) => Err(e.to_string()),
    }
}
