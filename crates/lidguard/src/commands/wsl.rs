//! The WSL bridge (Windows): lidguard's hook and MCP entries in agents' configs inside a WSL
//! distro, running this `lidguard.exe` through its `wslpath` path. Edits go through
//! `lidguard_config::wsl`, the same pure edits as native installs.

use std::process::ExitCode;

use anyhow::{Context, bail};
use lidguard_config::wsl::{self, Distro, DistroEnv, Edited, How, WslExe, stamp};
use lidguard_core::provider::Provider;
use lidguard_ipc::Places;
use lidguard_providers::agent::Agent;
use lidguard_providers::install::InstallState;

use super::hook_config::{hook_exe, setup};
use super::mcp_config::{ProviderAction, exit, server_program};
use crate::cli::{WslHookArgs, WslMcpArgs, WslProviderMcpArgs};
use crate::output;

/// The agents a `--provider`/`AGENT` value names; `all`: those whose config directory exists
/// inside the distro.
fn providers(
    value: Option<&str>,
    command: &str,
    env: &DistroEnv,
    distro: &Distro<'_>,
    has_file: impl Fn(Provider) -> bool,
) -> anyhow::Result<Vec<Provider>> {
    let managed = lidguard_config::agents::managed();
    match value {
        None => bail!(
            "{command} needs an agent: one of {}, or all",
            managed
                .iter()
                .map(|p| p.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Some("all") => {
            let found: Vec<Provider> = managed
                .into_iter()
                .filter(|&p| has_file(p) && agent_dir_exists(distro, env, p))
                .collect();
            if found.is_empty() {
                bail!("no agent's config directory exists in {}", distro.label());
            }
            Ok(found)
        }
        Some(name) => Ok(vec![name.parse::<Provider>().map_err(anyhow::Error::msg)?]),
    }
}

pub(crate) fn agent_dir_exists(distro: &Distro<'_>, env: &DistroEnv, p: Provider) -> bool {
    wsl::agent_root(env, p).is_some_and(|root| distro.is_dir(&root).unwrap_or(false))
}

pub(crate) fn report(
    label: &str,
    what: &str,
    distro: &Distro<'_>,
    edited: &Edited,
) -> anyhow::Result<()> {
    use lidguard_config::file::Action;
    let backup = edited
        .backup
        .as_deref()
        .map(|b| format!(" (backup {b})"))
        .unwrap_or_default();
    let line = match &edited.action {
        Action::Unchanged => format!(
            "{label}: {what} already as they should be in {} ({})",
            edited.file,
            distro.label()
        ),
        Action::WouldChange { diff, delete } => format!(
            "{label}: would {} {} in {}:\n{diff}",
            if *delete { "delete" } else { "write" },
            edited.file,
            distro.label()
        ),
        Action::Written { created } => format!(
            "{label}: {} {what} in {} ({}){backup}",
            if *created { "wrote" } else { "updated" },
            edited.file,
            distro.label()
        ),
        Action::Deleted { .. } => format!(
            "{label}: deleted {} ({}), which held only lidguard's entries{backup}",
            edited.file,
            distro.label()
        ),
    };
    Ok(output::line(&line)?)
}

/// `wsl-hook-install`, `wsl-hook-status`, `wsl-hook-remove`.
pub(crate) fn hooks(
    places: &Places,
    args: &WslHookArgs,
    action: ProviderAction,
) -> anyhow::Result<ExitCode> {
    let wsl = WslExe::from_env();
    let distro = Distro::new(&wsl, args.distro.as_deref());
    let env = distro.env().map_err(anyhow::Error::msg)?;
    let windows_exe = lidguard_files::text::plain_path(&hook_exe()?);
    let exe = distro
        .linux_path(&windows_exe)
        .map_err(anyhow::Error::msg)?;
    let cmd = wsl::hook_command(&exe);
    let timeout = setup(places)?.timeout;
    let command = match action {
        ProviderAction::Install => "wsl-hook-install",
        ProviderAction::Status => "wsl-hook-status",
        ProviderAction::Remove => "wsl-hook-remove",
    };
    let stamp = stamp();
    let how = How {
        dry_run: args.dry_run,
        stamp: &stamp,
        places,
    };
    let mut healthy = true;
    for p in providers(args.provider.as_deref(), command, &env, &distro, |_| true)? {
        let label = p.display_name();
        match action {
            ProviderAction::Status => {
                let (file, status) = wsl::hooks_status(&distro, &env, p, &cmd, timeout)
                    .map_err(anyhow::Error::msg)?;
                healthy &= status.state == InstallState::Installed;
                output::line(&format!(
                    "{label}: {} ({file} in {})",
                    status.state.as_str(),
                    distro.label()
                ))?;
                for line in &status.drift {
                    output::line(&format!("  drift: {line}"))?;
                }
                match status.state {
                    InstallState::Drifted => {
                        for event in &status.missing_events {
                            output::line(&format!("  no lidguard entry for {event}"))?;
                        }
                    }
                    InstallState::Missing => output::line(&format!(
                        "  install with: lidguard wsl-hook-install --provider {p}{}",
                        args.distro
                            .as_deref()
                            .map(|d| format!(" --distro {d}"))
                            .unwrap_or_default()
                    ))?,
                    InstallState::Installed => {}
                }
            }
            ProviderAction::Install | ProviderAction::Remove => {
                let remove = action == ProviderAction::Remove;
                for edited in wsl::hooks(&distro, &env, p, &cmd, timeout, remove, how)
                    .map_err(anyhow::Error::msg)?
                {
                    report(label, "lidguard's hooks", &distro, &edited)?;
                }
            }
        }
    }
    Ok(exit(healthy))
}

/// `wsl-<agent>-hooks`: what `wsl-hook-install` writes into a file that has none yet.
pub(crate) fn snippet(
    places: &Places,
    agent: &'static Agent,
    distro: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let wsl = WslExe::from_env();
    let distro = Distro::new(&wsl, distro);
    let windows_exe = lidguard_files::text::plain_path(&hook_exe()?);
    let exe = distro
        .linux_path(&windows_exe)
        .map_err(anyhow::Error::msg)?;
    let timeout = setup(places)?.timeout;
    let change = agent
        .hooks
        .install(None, &wsl::hook_command(&exe), timeout)
        .context("building the snippet")?;
    match change {
        lidguard_providers::install::Change::Changed { new_text } => output::prompt(&new_text)?,
        lidguard_providers::install::Change::Unchanged
        | lidguard_providers::install::Change::Delete => {}
    }
    Ok(ExitCode::SUCCESS)
}

/// `wsl-mcp-install`, `wsl-mcp-status`, `wsl-mcp-remove` (and `wsl-<agent>-mcp-*`).
pub(crate) fn mcp(
    places: &Places,
    args: &WslMcpArgs,
    action: ProviderAction,
) -> anyhow::Result<ExitCode> {
    let wsl = WslExe::from_env();
    let distro = Distro::new(&wsl, args.distro.as_deref());
    let env = distro.env().map_err(anyhow::Error::msg)?;
    let exe = distro
        .linux_path(&server_program()?)
        .map_err(anyhow::Error::msg)?;
    let command = match action {
        ProviderAction::Install => "wsl-mcp-install",
        ProviderAction::Status => "wsl-mcp-status",
        ProviderAction::Remove => "wsl-mcp-remove",
    };
    let stamp = stamp();
    let how = How {
        dry_run: args.dry_run,
        stamp: &stamp,
        places,
    };
    let has_mcp = |p: Provider| lidguard_providers::agent(p).is_some_and(|a| a.mcp.is_some());
    let mut healthy = true;
    for p in providers(args.agent.as_deref(), command, &env, &distro, has_mcp)? {
        let label = p.display_name();
        match action {
            ProviderAction::Status => {
                let (file, status) =
                    wsl::mcp_status(&distro, &env, p, &exe).map_err(anyhow::Error::msg)?;
                healthy &= status.state == InstallState::Installed && !status.foreign;
                output::line(&format!(
                    "{label}: {}{} ({file} in {})",
                    status.state.as_str(),
                    if status.foreign {
                        ", not lidguard's"
                    } else {
                        ""
                    },
                    distro.label()
                ))?;
                for line in &status.drift {
                    output::line(&format!("  {line}"))?;
                }
            }
            ProviderAction::Install | ProviderAction::Remove => {
                let remove = action == ProviderAction::Remove;
                let edited =
                    wsl::mcp(&distro, &env, p, &exe, remove, how).map_err(anyhow::Error::msg)?;
                report(label, "lidguard's MCP server entry", &distro, &edited)?;
            }
        }
    }
    Ok(exit(healthy))
}

/// `wsl-provider-mcp-install`, `-status`, `-remove`: a Provider MCP entry in a JSON file inside
/// the distro.
pub(crate) fn provider_mcp(
    places: &Places,
    args: &WslProviderMcpArgs,
    action: ProviderAction,
) -> anyhow::Result<ExitCode> {
    let entry = super::mcp_config::provider_entry(
        args.provider_name.as_deref(),
        args.server_name.as_deref(),
        action,
        "wsl-provider-mcp-install",
    )?;
    let wsl = WslExe::from_env();
    let distro = Distro::new(&wsl, args.distro.as_deref());
    let exe = distro
        .linux_path(&server_program()?)
        .map_err(anyhow::Error::msg)?;
    let label = format!("Provider MCP `{}`", entry.server);
    match action {
        ProviderAction::Status => {
            let status = wsl::provider_mcp_status(&distro, &args.config, &entry, &exe)
                .map_err(anyhow::Error::msg)?;
            output::line(&format!(
                "{label}: {}{} ({} in {})",
                status.state.as_str(),
                if status.foreign {
                    ", not lidguard's"
                } else {
                    ""
                },
                args.config,
                distro.label()
            ))?;
            Ok(exit(
                status.state == InstallState::Installed && !status.foreign,
            ))
        }
        ProviderAction::Install | ProviderAction::Remove => {
            let stamp = stamp();
            let how = How {
                dry_run: args.dry_run,
                stamp: &stamp,
                places,
            };
            let remove = action == ProviderAction::Remove;
            let edited = wsl::provider_mcp(&distro, &args.config, &entry, &exe, remove, how)
                .map_err(anyhow::Error::msg)?;
            report(&label, "the entry", &distro, &edited)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
