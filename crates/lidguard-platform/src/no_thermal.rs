//! Why no temperature can be read (see [`crate::sources::thermal_readings`]).

/// Why there is no temperature to read.
#[derive(Debug, thiserror::Error)]
pub enum NoThermal {
    /// macOS keeps its sensors from users.
    #[error(
        "macOS has no temperature reading a user may take without root (only the private SMC \
         and HID sensor interfaces, or powermetrics as root)"
    )]
    MacOs,
    /// No zone file could be read in this folder.
    #[error("no readable thermal zone ({}/thermal_zone*/temp)", .0.display())]
    NoZone(std::path::PathBuf),
    /// Neither of WMI's thermal classes gave a reading.
    #[error(
        "WMI reports no readable thermal zone (ThermalZoneInformation: {perf}; \
         MSAcpi_ThermalZoneTemperature: {acpi})"
    )]
    Wmi {
        /// Why `Win32_PerfFormattedData_Counters_ThermalZoneInformation` gave none.
        perf: String,
        /// Why `MSAcpi_ThermalZoneTemperature` gave none.
        acpi: String,
    },
    /// The thread that queried WMI panicked.
    #[error("the WMI query panicked")]
    WmiPanicked,
}
