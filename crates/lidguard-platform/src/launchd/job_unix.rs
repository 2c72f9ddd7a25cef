//! The launchd job in `~/Library/LaunchAgents`, which `macos-permission install` runs as root:
//! every step is taken below the account's home without following a link the user could plant.

use std::path::Path;

use super as launchd;
use lidguard_files::below::{Dir, Owner};

const DIR: [&str; 2] = ["Library", "LaunchAgents"];

fn name() -> String {
    format!("{}.plist", launchd::LABEL)
}

/// The job's text; `None` when there is none.
pub fn read(home: &Path) -> std::io::Result<Option<String>> {
    let dir = match Dir::open(home, &DIR, None) {
        Ok(dir) => dir,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    Ok(dir
        .read(&name())?
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
}

/// Writes the job as the user's own 0644 file (launchd refuses a job in a user's folder
/// that others can write), creating the folders as the user's.
pub fn write(home: &Path, text: &str, ids: Option<(u32, u32)>) -> std::io::Result<()> {
    let owner = ids
        .filter(|_| rustix::process::geteuid().is_root())
        .map(|(uid, gid)| Owner { uid, gid });
    let create = owner.or(Some(Owner {
        uid: rustix::process::geteuid().as_raw(),
        gid: rustix::process::getegid().as_raw(),
    }));
    Dir::open(home, &DIR, create)?.replace(&name(), text.as_bytes(), 0o644, owner)
}

/// Deletes the job; whether there was one.
pub fn remove(home: &Path) -> std::io::Result<bool> {
    Dir::open(home, &DIR, None)?.remove(&name())
}
