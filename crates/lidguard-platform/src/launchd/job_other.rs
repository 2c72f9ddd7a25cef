//! No launchd where there are no Unix accounts.

use std::path::Path;

fn unsupported() -> std::io::Error {
    std::io::Error::other("the launchd job exists only on macOS")
}

/// The job's text; `None` when there is none.
pub fn read(_home: &Path) -> std::io::Result<Option<String>> {
    Ok(None)
}

/// Refused: there is no launchd here.
pub fn write(_home: &Path, _text: &str, _ids: Option<(u32, u32)>) -> std::io::Result<()> {
    Err(unsupported())
}

/// Deletes the job; whether there was one.
pub fn remove(_home: &Path) -> std::io::Result<bool> {
    Err(unsupported())
}
