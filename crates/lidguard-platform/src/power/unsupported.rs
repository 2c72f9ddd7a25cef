//! Systems without a keep-awake backend in this build (macOS for now).

use std::sync::Arc;

use super::{PowerControl, PowerUnavailable};

/// A readable name for the operating system this build targets.
fn os_name() -> &'static str {
    match std::env::consts::OS {
        "windows" => "Windows",
        "macos" => "macOS",
        "freebsd" => "FreeBSD",
        "openbsd" => "OpenBSD",
        "netbsd" => "NetBSD",
        other => other,
    }
}

/// Always unavailable: there is no backend to connect to.
pub(super) async fn connect(
    _address: Option<&str>,
) -> Result<Arc<dyn PowerControl>, PowerUnavailable> {
    Err(PowerUnavailable(format!(
        "keep-awake for {} is not implemented in this build yet: lidguard keeps tracking \
         sessions but cannot keep the machine awake",
        os_name()
    )))
}

/// There is no logind here.
pub(super) async fn logind_lid_closed() -> Option<bool> {
    None
}
