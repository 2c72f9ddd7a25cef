//! Each agent's entries inside a distro: hooks, MCP entries, Provider MCP entries, their status,
//! and the hooks' timeouts refreshed.

use lidguard_core::provider::Provider;
use lidguard_providers::install::mcp::{self as mcp_edits, McpStatus};
use lidguard_providers::install::{HookCommand, HookShell, HookStatus, InstallState};

use super::WslError;
use super::distro::{Distro, DistroEnv, linux_path_text};
use super::edit::{Edited, How, install_or_remove, stamp};
use super::event_files;
use super::exe::{Wsl, distros};

/// What WSL entries run: the Windows executable by its Linux path, through `bash`/`sh`.
pub fn hook_command(linux_exe: &str) -> HookCommand {
    HookCommand {
        program: linux_exe.to_owned(),
        shell: HookShell::Posix,
    }
}

pub(super) fn agent_of(p: Provider) -> Result<&'static lidguard_providers::agent::Agent, WslError> {
    lidguard_providers::agent(p).ok_or_else(|| WslError::Agent {
        agent: p.to_string(),
        problem: "is not managed by lidguard".to_owned(),
    })
}

pub(super) fn mcp_of(p: Provider) -> Result<&'static lidguard_providers::agent::McpFile, WslError> {
    agent_of(p)?.mcp.ok_or_else(|| WslError::Agent {
        agent: p.display_name().to_owned(),
        problem: "has no MCP config lidguard manages".to_owned(),
    })
}

/// The agent's hook file inside the distro.
pub fn hook_file(env: &DistroEnv, p: Provider) -> Result<String, WslError> {
    let a = agent_of(p)?;
    env.file(a.hooks.locate).ok_or_else(|| WslError::Agent {
        agent: p.display_name().to_owned(),
        problem: "no home directory to find its hooks in".to_owned(),
    })
}

/// The agent's config directory inside the distro (`all` takes agents whose directory exists).
pub fn agent_root(env: &DistroEnv, p: Provider) -> Option<String> {
    let a = agent_of(p).ok()?;
    let var = |name: &str| env.var(name);
    (a.hooks.locate)(&var).map(|l| linux_path_text(&l.root))
}

/// The agent's MCP file inside the distro.
pub fn mcp_file(env: &DistroEnv, p: Provider) -> Result<String, WslError> {
    env.file(mcp_of(p)?.locate).ok_or_else(|| WslError::Agent {
        agent: p.display_name().to_owned(),
        problem: "no home directory to find its MCP config in".to_owned(),
    })
}

/// `wsl-hook-install` (or remove) for one agent: one edit, or one per event file for an agent
/// whose hooks are a file per event.
pub fn hooks(
    distro: &Distro<'_>,
    env: &DistroEnv,
    p: Provider,
    cmd: &HookCommand,
    timeout: u32,
    remove: bool,
    how: How<'_>,
) -> Result<Vec<Edited>, WslError> {
    let a = agent_of(p)?;
    let file = hook_file(env, p)?;
    if let Some(dir) = event_files::RemoteEventDir::of(distro, a, &file, cmd) {
        return if remove {
            dir.remove(how)
        } else {
            dir.install(how)
        };
    }
    if !remove {
        refuse_silencing(distro, env, a)?;
    }
    install_or_remove(
        distro,
        &file,
        p.as_str(),
        remove,
        how,
        |existing| {
            a.hooks
                .status(existing, cmd, timeout)
                .is_ok_and(|s| s.state != InstallState::Missing)
        },
        |existing| a.hooks.install(existing, cmd, timeout),
        |text, before| a.hooks.remove(text, cmd, before),
    )
    .map(|edited| vec![edited])
}

/// Refuses an install that would make the agent stop running hooks of the user's in another
/// file of the distro ([`lidguard_providers::agent::Shadows`]).
pub(super) fn refuse_silencing(
    distro: &Distro<'_>,
    env: &DistroEnv,
    a: &lidguard_providers::agent::Agent,
) -> Result<(), WslError> {
    let var = |name: &str| env.var(name);
    let (Some(shadows), Some(location)) = (&a.hooks.shadows, (a.hooks.locate)(&var)) else {
        return Ok(());
    };
    let hooks = distro.read(&linux_path_text(&location.file))?;
    for path in (shadows.files)(&location) {
        let text = distro.read(&linux_path_text(&path))?;
        if let Some(why) = text.and_then(|t| (shadows.check)(hooks.as_deref(), &path, &t)) {
            return Err(WslError::Agent {
                agent: a.provider.display_name().to_owned(),
                problem: format!("{why}; nothing was changed"),
            });
        }
    }
    Ok(())
}

/// `wsl-hook-status` for one agent: the file (or the folder of event files) and what it holds.
pub fn hooks_status(
    distro: &Distro<'_>,
    env: &DistroEnv,
    p: Provider,
    cmd: &HookCommand,
    timeout: u32,
) -> Result<(String, HookStatus), WslError> {
    let a = agent_of(p)?;
    let file = hook_file(env, p)?;
    if let Some(dir) = event_files::RemoteEventDir::of(distro, a, &file, cmd) {
        return Ok((file.clone(), dir.status()?));
    }
    let status = distro.status_of(&file, |existing| a.hooks.status(existing, cmd, timeout))?;
    Ok((file, status))
}

/// `wsl-mcp-install` (or remove) for one agent; `exe` is the Linux path of `lidguard.exe`.
pub fn mcp(
    distro: &Distro<'_>,
    env: &DistroEnv,
    p: Provider,
    exe: &str,
    remove: bool,
    how: How<'_>,
) -> Result<Edited, WslError> {
    let mcp = mcp_of(p)?;
    let file = mcp_file(env, p)?;
    install_or_remove(
        distro,
        &file,
        &format!("mcp-{}", p.as_str()),
        remove,
        how,
        |existing| {
            mcp.status(existing, exe)
                .is_ok_and(|s| s.state != InstallState::Missing && !s.foreign)
        },
        |existing| mcp.install(existing, exe, false),
        |text, before| mcp.remove(text, exe, before),
    )
}

/// `wsl-mcp-status` for one agent.
pub fn mcp_status(
    distro: &Distro<'_>,
    env: &DistroEnv,
    p: Provider,
    exe: &str,
) -> Result<(String, McpStatus), WslError> {
    let mcp = mcp_of(p)?;
    let file = mcp_file(env, p)?;
    let status = distro.status_of(&file, |existing| mcp.status(existing, exe))?;
    Ok((file, status))
}

/// `wsl-provider-mcp-install` (or remove) into a JSON file inside the distro.
pub fn provider_mcp(
    distro: &Distro<'_>,
    file: &str,
    entry: &crate::mcp::ProviderEntry,
    exe: &str,
    remove: bool,
    how: How<'_>,
) -> Result<Edited, WslError> {
    let json = |existing: Option<&str>| crate::mcp::provider_json(entry, existing, exe);
    install_or_remove(
        distro,
        file,
        "provider-mcp",
        remove,
        how,
        |existing| {
            mcp_edits::status_json(existing, &json(existing))
                .is_ok_and(|s| s.state != InstallState::Missing && !s.foreign)
        },
        |existing| mcp_edits::install_json(existing, &json(existing), false),
        |text, before| mcp_edits::remove_json(text, &json(Some(text)), before),
    )
}

/// `wsl-provider-mcp-status` of a JSON file inside the distro.
pub fn provider_mcp_status(
    distro: &Distro<'_>,
    file: &str,
    entry: &crate::mcp::ProviderEntry,
    exe: &str,
) -> Result<McpStatus, WslError> {
    distro.status_of(file, |existing| {
        mcp_edits::status_json(existing, &crate::mcp::provider_json(entry, existing, exe))
    })
}

/// After the managed hook timeout changed to `timeout` seconds: in every installed distro,
/// rewrites the timeouts of lidguard's entries where an agent config already holds them (as
/// native configs are refreshed); agents without lidguard's entries are left alone. Returns a
/// line per change or failure. `windows_hook_exe` is the Windows path the entries run.
pub fn refresh_timeouts(
    places: &lidguard_ipc::Places,
    wsl: &dyn Wsl,
    windows_hook_exe: &str,
    timeout: u32,
) -> Vec<String> {
    let names = match distros(wsl) {
        Ok(names) => names,
        Err(e) => return vec![format!("WSL: cannot list the distros: {e}")],
    };
    let stamp = stamp();
    let how = How {
        dry_run: false,
        stamp: &stamp,
        places,
    };
    let mut lines = Vec::new();
    for name in names {
        let distro = Distro::new(wsl, Some(&name));
        let prepared = distro.env().and_then(|env| {
            let exe = distro.linux_path(windows_hook_exe)?;
            Ok((env, hook_command(&exe)))
        });
        let (env, cmd) = match prepared {
            Ok(prepared) => prepared,
            Err(e) => {
                lines.push(e.to_string());
                continue;
            }
        };
        for a in lidguard_providers::AGENTS
            .iter()
            .filter(|a| a.hooks.timeouts)
        {
            let p = a.provider;
            let Ok(file) = hook_file(&env, p) else {
                continue;
            };
            let Ok(Some(existing)) = distro.read(&file) else {
                continue;
            };
            let holds_ours = a
                .hooks
                .status(Some(&existing), &cmd, timeout)
                .is_ok_and(|s| s.state == InstallState::Drifted);
            if !holds_ours {
                continue;
            }
            match hooks(&distro, &env, p, &cmd, timeout, false, how) {
                Ok(_) => lines.push(format!(
                    "{}: {}: hook timeouts set to {timeout} s in {file}",
                    distro.label(),
                    p.display_name()
                )),
                Err(e) => lines.push(e.to_string()),
            }
        }
    }
    lines
}
