//! Temperature units the OS reports in, converted to millidegrees Celsius.

/// Kelvin (WMI's `ThermalZoneInformation.Temperature`) in millidegrees Celsius.
pub fn kelvin_to_millidegrees(kelvin: u32) -> i64 {
    i64::from(kelvin) * 1000 - 273_150
}

/// Tenths of a kelvin (WMI's `MSAcpi_ThermalZoneTemperature.CurrentTemperature`) in
/// millidegrees Celsius.
pub fn decikelvin_to_millidegrees(decikelvin: u32) -> i64 {
    i64::from(decikelvin) * 100 - 273_150
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wmi_units_in_millidegrees() {
        // 3232 dK and 323 K are both about 50 °C.
        assert_eq!(decikelvin_to_millidegrees(3232), 50_050);
        assert_eq!(kelvin_to_millidegrees(323), 49_850);
        assert_eq!(kelvin_to_millidegrees(0), -273_150);
    }
}
