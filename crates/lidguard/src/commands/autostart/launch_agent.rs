//! The tray at login on macOS: a per-user launchd agent, `dev.lidguard.tray.plist` in
//! `~/Library/LaunchAgents/`, that runs `lidguard tray` when the user logs in to the desktop
//! (`LimitLoadToSessionType` Aqua: not for an ssh login). A file of that name that lidguard did
//! not write is the user's: `setup` stops rather than replace it, and `uninstall` leaves it.

use std::path::PathBuf;

use anyhow::Context;
use lidguard_platform::launchd;

/// Where the agent goes.
fn path() -> anyhow::Result<PathBuf> {
    let home = std::env::home_dir().context("cannot find the home directory (HOME is unset)")?;
    Ok(launchd::tray_agent_path(&home))
}

/// The agent's path, as the user reads it.
pub(crate) fn place() -> anyhow::Result<String> {
    Ok(path()?.display().to_string())
}

/// A Mac always has a desktop for its users (the agent itself waits for a graphical login).
pub(crate) fn wanted() -> bool {
    true
}

/// Whether lidguard's agent is there.
pub(crate) fn installed() -> anyhow::Result<bool> {
    Ok(std::fs::read_to_string(path()?).is_ok_and(|text| launchd::is_tray_agent(&text)))
}

/// Writes the agent (readable by the user alone; loaded at the next login); returns its path.
pub(crate) fn install() -> anyhow::Result<String> {
    let path = path()?;
    if path.symlink_metadata().is_ok() && !installed()? {
        anyhow::bail!(
            "{} is there and lidguard did not write it; it is left alone. Move it away and run \
             setup again, or pass --no-tray",
            path.display()
        );
    }
    let dir = path.parent().context("the LaunchAgents folder")?;
    // Every account has this folder; one made here stays, as any login item's would.
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let exe = std::env::current_exe().context("cannot find the lidguard executable")?;
    lidguard_files::atomic::write(&path, launchd::tray_agent_plist(&exe).as_bytes(), 0o600)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path.display().to_string())
}

/// Unloads and deletes lidguard's agent (never a file it did not write); returns its path,
/// `None` when there was none.
pub(crate) fn remove() -> anyhow::Result<Option<String>> {
    if !installed()? {
        return Ok(None);
    }
    let path = path()?;
    // Loaded since the last login: unloaded too (not loaded: launchctl says so, and that is
    // fine). A tray it started ends with it.
    let uid = rustix::process::getuid().as_raw();
    let _ = std::process::Command::new("/bin/launchctl")
        .args(launchd::bootout_tray_args(uid))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    std::fs::remove_file(&path).with_context(|| format!("cannot delete {}", path.display()))?;
    Ok(Some(path.display().to_string()))
}
