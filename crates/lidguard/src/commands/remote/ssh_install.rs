//! `lidguard ssh --install|--remove [SSH OPTIONS…] DESTINATION`: the static `lidguard-hook` and
//! lidguard's hook entries on a Linux host reached by the user's own `ssh`, so an agent there,
//! started in a `lidguard ssh` session, reaches this machine's daemon through the relay.
//!
//! The entries are edited exactly as the WSL bridge edits a distro's (`lidguard_config::wsl`):
//! the same pure edits, a receipt on this machine (so `--remove` gives back the file's bytes
//! while nobody else changed it), a backup next to the file and an atomic rename there. Every
//! command goes through one ssh connection that the first one opens (`ControlMaster`), so the
//! user authenticates once.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Duration;

use anyhow::{Context, bail};
use lidguard_config::wsl::{self, Distro, How, WslExe, stamp};
use lidguard_ipc::Places;

use super::ssh::destination;
use crate::commands::hook_config::setup;
use crate::commands::wsl::{agent_dir_exists, report};
use crate::output;

/// Where the hook goes on the remote host, under its user's home.
const REMOTE_HOOK: &str = ".local/lib/lidguard/lidguard-hook";

/// How long one command over ssh may take (the first one authenticates; putting the hook
/// sends 3 MB).
const SSH_TIMEOUT: Duration = Duration::from_secs(120);

/// `--install` or `--remove`.
pub(crate) fn run(
    places: &Places,
    ssh_args: &[String],
    hook: Option<&Path>,
    remove: bool,
) -> anyhow::Result<ExitCode> {
    let (user, host) = destination(ssh_args)?;
    let connection = Connection::open(places, ssh_args)?;
    let runner = WslExe::at("ssh")
        .with_hint("is OpenSSH's client installed?")
        .with_timeout(SSH_TIMEOUT);
    let remote = Distro::ssh(&runner, connection.args.clone(), format!("{user}@{host}"));
    let env = remote.env().map_err(anyhow::Error::msg)?;
    let home = env
        .var("HOME")
        .context("the remote host has no HOME")?
        .to_string_lossy()
        .into_owned();
    let hook_path = format!("{}/{REMOTE_HOOK}", home.trim_end_matches('/'));
    let cmd = wsl::hook_command(&hook_path);
    let timeout = setup(places)?.timeout;
    let stamp = stamp();
    let how = How {
        dry_run: false,
        stamp: &stamp,
        places,
    };
    let edit = |p: lidguard_core::provider::Provider, remove: bool| {
        let edited =
            wsl::hooks(&remote, &env, p, &cmd, timeout, remove, how).map_err(anyhow::Error::msg)?;
        edited
            .iter()
            .try_for_each(|e| report(p.display_name(), "lidguard's hooks", &remote, e))
    };

    if remove {
        for p in lidguard_config::agents::managed() {
            edit(p, true)?;
        }
        remote
            .remove_executable(&hook_path)
            .map_err(anyhow::Error::msg)?;
        output::line(&format!("removed {hook_path} from {}", remote.label()))?;
        return Ok(ExitCode::SUCCESS);
    }

    let found: Vec<_> = lidguard_config::agents::managed()
        .into_iter()
        .filter(|&p| agent_dir_exists(&remote, &env, p))
        .collect();
    if found.is_empty() {
        bail!(
            "no agent's config directory exists on {}: install an agent there (or run it once), \
             then run this again",
            remote.label()
        );
    }
    let machine = remote.machine().map_err(anyhow::Error::msg)?;
    let (local_hook, bytes) = static_hook(hook, &machine)?;
    remote
        .put_executable(&hook_path, &bytes)
        .map_err(anyhow::Error::msg)?;
    // The hook prints its usage when run bare: proof it runs there (not on a noexec home).
    let said = remote
        .output_of(&hook_path, &[])
        .map_err(anyhow::Error::msg)?;
    if !said.contains("usage: lidguard-hook") {
        bail!(
            "{hook_path} on {} does not run: {}",
            remote.label(),
            said.trim()
        );
    }
    output::line(&format!(
        "put {} at {hook_path} on {} ({machine})",
        local_hook.display(),
        remote.label()
    ))?;
    for p in found {
        edit(p, false)?;
    }
    output::line(&format!(
        "an agent started in `lidguard ssh {}` now keeps this machine awake while it works",
        ssh_args.join(" ")
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// The static hook to put on a `machine` host, and its bytes: `--hook`, else the one beside
/// this lidguard.
fn static_hook(given: Option<&Path>, machine: &str) -> anyhow::Result<(PathBuf, Vec<u8>)> {
    let path = match given {
        Some(path) => path.to_owned(),
        None => crate::commands::hook_config::hook_exe()?,
    };
    let bytes = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let archive = format!("lidguard-<version>-{machine}-unknown-linux-musl.tar.gz");
    match elf_kind(&bytes) {
        Some((built_for, true)) if built_for == machine => Ok((path, bytes)),
        Some((built_for, true)) => bail!(
            "{} is built for {built_for}, the remote host is {machine}: pass --hook with the \
             lidguard-hook from {archive}",
            path.display()
        ),
        Some((_, false)) => bail!(
            "{} is linked against this machine's libraries, which the remote host may not have: \
             pass --hook with the static lidguard-hook from {archive}",
            path.display()
        ),
        None => bail!(
            "{} is not a Linux executable: pass --hook with the lidguard-hook from {archive}",
            path.display()
        ),
    }
}

/// What an ELF executable is built for (`uname -m`'s name) and whether it is static (no
/// program interpreter), from its header; `None` for anything but a 64-bit little-endian ELF
/// for x86_64 or aarch64.
fn elf_kind(bytes: &[u8]) -> Option<(&'static str, bool)> {
    const PT_INTERP: u32 = 3;
    let u16_at = |at: usize| Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?));
    let u32_at = |at: usize| Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    let u64_at = |at: usize| Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?));
    if bytes.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let machine = match u16_at(18)? {
        62 => "x86_64",
        183 => "aarch64",
        _ => return None,
    };
    let table = usize::try_from(u64_at(32)?).ok()?;
    let (size, count) = (usize::from(u16_at(54)?), usize::from(u16_at(56)?));
    let mut interpreted = false;
    for i in 0..count {
        interpreted |= u32_at(table.checked_add(i.checked_mul(size)?)?)? == PT_INTERP;
    }
    Some((machine, !interpreted))
}

/// One ssh connection the commands share: the first opens it (and authenticates), the others
/// ride on it, and it closes when this is dropped. Its socket is in lidguard's private runtime
/// folder.
struct Connection {
    args: Vec<String>,
}

impl Connection {
    fn open(places: &Places, ssh_args: &[String]) -> anyhow::Result<Connection> {
        places
            .ensure_runtime_dir()
            .context("cannot make lidguard's runtime folder")?;
        let folder = places
            .socket()
            .parent()
            .map(Path::to_owned)
            .context("lidguard's socket has no folder")?;
        let control = folder.join(format!("ssh-{}-%C", std::process::id()));
        let mut args: Vec<String> = [
            "-o",
            "ControlMaster=auto",
            "-o",
            &format!("ControlPath={}", control.display()),
            "-o",
            "ControlPersist=30",
        ]
        .map(str::to_owned)
        .to_vec();
        args.extend(ssh_args.iter().cloned());
        Ok(Connection { args })
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // `-O exit` needs the destination after the options; ssh ignores a command after it.
        let _ = Command::new("ssh")
            .args(["-O", "exit"])
            .args(&self.args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 64-bit little-endian ELF header for `machine` with a program header table of a
    /// PT_LOAD entry and, when dynamically linked, a PT_INTERP entry (as a linker writes them).
    fn elf(machine: u16, dynamic: bool) -> Vec<u8> {
        let mut bytes = vec![0u8; 64 + 2 * 56];
        bytes[..6].copy_from_slice(b"\x7fELF\x02\x01");
        bytes[18..20].copy_from_slice(&machine.to_le_bytes());
        bytes[32..40].copy_from_slice(&64u64.to_le_bytes());
        bytes[54..56].copy_from_slice(&56u16.to_le_bytes());
        bytes[56..58].copy_from_slice(&2u16.to_le_bytes());
        bytes[64..68].copy_from_slice(&1u32.to_le_bytes());
        let second: u32 = if dynamic { 3 } else { 1 };
        bytes[120..124].copy_from_slice(&second.to_le_bytes());
        bytes
    }

    #[test]
    fn an_executable_is_read_for_its_machine_and_whether_it_is_static() {
        assert_eq!(elf_kind(&elf(62, false)), Some(("x86_64", true)));
        assert_eq!(elf_kind(&elf(62, true)), Some(("x86_64", false)));
        assert_eq!(elf_kind(&elf(183, false)), Some(("aarch64", true)));
        assert_eq!(
            elf_kind(&elf(40, false)),
            None,
            "32-bit ARM is no machine lidguard ships for"
        );
        assert_eq!(elf_kind(b"#!/bin/sh\n"), None);
        assert_eq!(elf_kind(&elf(62, false)[..40]), None, "a header cut short");
        assert_eq!(
            elf_kind(&elf(62, true)[..100]),
            None,
            "a program header table past the end"
        );
    }
}
