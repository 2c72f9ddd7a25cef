//! No login entry where there is no tray: not wanted, never there.

use std::path::Path;

use super::AutostartError;

/// What would let the place be found (nothing can here).
pub const FIND_IT: &str = "the tray runs on Linux, Windows and macOS";

/// There is no place for it here.
pub fn place() -> Result<String, AutostartError> {
    Err(AutostartError::NoHome)
}

/// No tray runs here.
pub fn wanted() -> bool {
    false
}

/// Never there.
pub fn installed() -> Result<bool, AutostartError> {
    Ok(false)
}

/// Never there.
pub fn foreign() -> Result<bool, AutostartError> {
    Ok(false)
}

/// Refused: no tray runs here.
pub fn install(_exe: &Path) -> Result<String, AutostartError> {
    Err(AutostartError::NoHome)
}

/// Nothing to take away.
pub fn remove() -> Result<Option<String>, AutostartError> {
    Ok(None)
}
