//! `mcp-install`, `mcp-status`, `mcp-remove` (lidguard's `mcp-server` in each agent's MCP
//! config) and `provider-mcp-install|status|remove` (a Provider MCP entry in any JSON config).
//! The work is `lidguard_config::mcp`; this module picks the agents and prints.
// Dispatch on agents is exhaustive: a new agent must be a compile error here, never a fallback.
#![deny(clippy::wildcard_enum_match_arm)]

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use lidguard_config::mcp::{self, ProviderEntry, Removed, Report};
use lidguard_config::{Location, agents, managed};
use lidguard_core::provider::Provider;
use lidguard_ipc::Places;
use lidguard_providers::install::mcp::PROVIDER_SERVER_NAME;

use super::config_edit::{self, print};
use crate::cli::{McpConfigArgs, McpStatusArgs, ProviderMcpArgs};
use crate::output;

/// The executable MCP entries run: this executable's absolute path (not a `PATH` shim, so a
/// wrapper process is never mistaken for the agent).
pub(crate) fn server_program() -> anyhow::Result<String> {
    let exe = std::env::current_exe().context("cannot find the lidguard executable")?;
    Ok(lidguard_files::text::plain_path(
        &exe.canonicalize().unwrap_or(exe),
    ))
}

/// The agents an `[AGENT]` argument names, each with its location and why it is skipped.
pub(crate) fn targets(
    which: Option<&str>,
    command: &str,
) -> anyhow::Result<Vec<(Provider, Location, Option<String>)>> {
    let var = lidguard_files::environment::var;
    config_edit::targets(
        which,
        "lidguard registers its MCP server with",
        || crate::prompt::agent_among(&managed(), command, "an agent (or `all`)"),
        |p| agents::mcp(p, &var),
    )
}

/// `mcp-install` or `mcp-remove`, saying why an agent was skipped only when `show_skipped`.
pub(crate) fn apply(
    places: &Places,
    args: &McpConfigArgs,
    remove: bool,
    show_skipped: bool,
) -> anyhow::Result<ExitCode> {
    config_edit::finish(args.json, &edit(places, args, remove, show_skipped)?)
}

/// What `apply` does: each agent's edit, said as it is done, or with `args.json` returned, one
/// entry per agent.
pub(crate) fn edit(
    places: &Places,
    args: &McpConfigArgs,
    remove: bool,
    show_skipped: bool,
) -> anyhow::Result<Vec<serde_json::Value>> {
    let exe = server_program()?;
    let command = if remove { "mcp-remove" } else { "mcp-install" };
    let options = args.edit.options();
    let mut json = Vec::new();
    let shown = (args.json, show_skipped);
    for (p, location) in
        config_edit::editable(targets(args.agent.get(), command)?, shown, &mut json)?
    {
        let label = p.display_name();
        if remove {
            let removed = mcp::remove(places, p, &location, &exe, options)?;
            if args.json {
                json.push(match &removed {
                    Removed::Done(o) => serde_json::json!({"provider": p.as_str(), "outcome": o}),
                    Removed::LeftAlone { file, reason } => serde_json::json!({
                        "provider": p.as_str(),
                        "leftAlone": {"file": file, "reason": reason},
                    }),
                });
                continue;
            }
            print_removed(label, "lidguard's MCP server", &removed)?;
        } else {
            let outcome = mcp::install(places, p, &location, &exe, options)?;
            if args.json {
                json.push(serde_json::json!({"provider": p.as_str(), "outcome": outcome}));
                continue;
            }
            print(label, "lidguard's MCP server", false, &outcome)?;
        }
    }
    Ok(json)
}

fn print_removed(label: &str, what: &str, removed: &Removed) -> anyhow::Result<()> {
    match removed {
        Removed::Done(outcome) => print(label, what, true, outcome),
        Removed::LeftAlone { file, reason } => Ok(output::line(&format!(
            "{label}: {}: {reason}",
            file.display()
        ))?),
    }
}

/// `mcp-status`: exits 1 when an agent's entry is missing, drifted, not lidguard's or
/// unreadable.
pub(crate) fn status(args: &McpStatusArgs) -> anyhow::Result<ExitCode> {
    let exe = server_program()?;
    let reports: Vec<Report> = targets(args.agent.get(), "mcp-status")?
        .into_iter()
        .map(|(p, location, skipped)| match skipped {
            Some(reason) => Report::skipped(p, &location.file, reason),
            None => mcp::status(p, &location, &exe),
        })
        .collect();
    if args.json {
        output::json(&reports)?;
    } else {
        for r in &reports {
            print_report(r)?;
        }
    }
    Ok(exit(reports.iter().all(|r| r.healthy)))
}

pub(crate) fn exit(healthy: bool) -> ExitCode {
    if healthy {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn print_report(r: &Report) -> anyhow::Result<()> {
    let label = match (&r.provider, &r.server) {
        (Some(name), _) => name
            .parse::<Provider>()
            .map_or(name.clone(), |p| p.display_name().to_owned()),
        (None, Some(server)) => format!("Provider MCP `{server}`"),
        (None, None) => "?".to_owned(),
    };
    if let Some(skipped) = &r.skipped {
        output::line(&format!("{label}: {skipped}"))?;
        return Ok(());
    }
    output::line(&format!(
        "{label}: {} ({})",
        r.state.unwrap_or("?"),
        r.file.display()
    ))?;
    if let Some(real) = &r.edited {
        output::line(&format!("  a link to {}", real.display()))?;
    }
    if let Some(e) = &r.error {
        output::line(&format!("  {e}"))?;
    }
    for d in r.drift.iter().flatten() {
        output::line(&format!("  drift: {d}"))?;
    }
    for w in &r.warnings {
        output::line(&format!("  warning: {w}"))?;
    }
    if r.state == Some("missing")
        && let Some(name) = &r.provider
    {
        output::line(&format!("  `lidguard mcp-install {name}` adds it"))?;
    }
    Ok(())
}

/// Which `provider-mcp-*` command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ProviderAction {
    Install,
    Status,
    Remove,
}

/// The Provider MCP entry the arguments name: `--provider-name` is needed to install (the name
/// the model's sessions are keyed by) and never empty.
pub(crate) fn provider_entry(
    provider_name: Option<&str>,
    server_name: Option<&str>,
    action: ProviderAction,
    command: &str,
) -> anyhow::Result<ProviderEntry> {
    let provider_name = match provider_name.map(str::trim) {
        Some("") => bail!("--provider-name must not be empty"),
        Some(name) => Some(name.to_owned()),
        None if action == ProviderAction::Install => bail!(
            "{command} needs --provider-name (the name the model's sessions are keyed by, e.g. gemini)"
        ),
        None => None,
    };
    Ok(ProviderEntry {
        server: server_name.unwrap_or(PROVIDER_SERVER_NAME).to_owned(),
        provider_name,
    })
}

/// `provider-mcp-install` / `provider-mcp-remove` / `provider-mcp-status`.
pub(crate) fn provider(
    places: &Places,
    args: &ProviderMcpArgs,
    action: ProviderAction,
) -> anyhow::Result<ExitCode> {
    let exe = server_program()?;
    let file: &Path = &args.config;
    let entry = provider_entry(
        args.provider_name.as_deref(),
        args.server_name.as_deref(),
        action,
        "provider-mcp-install",
    )?;
    let label = format!("Provider MCP `{}`", entry.server);
    let options = args.edit.options();
    match action {
        ProviderAction::Status => {
            let report = mcp::provider_status(file, &entry, &exe);
            if args.json {
                output::json(&report)?;
            } else {
                print_report(&report)?;
            }
            Ok(exit(report.healthy))
        }
        ProviderAction::Install => {
            if !file.exists() && !file.parent().is_some_and(Path::is_dir) {
                bail!(
                    "{}: its directory does not exist; create it first or check the path",
                    file.display()
                );
            }
            let outcome = mcp::provider_install(places, file, &entry, &exe, options)?;
            print(&label, "the Provider MCP server", false, &outcome)?;
            Ok(ExitCode::SUCCESS)
        }
        ProviderAction::Remove => {
            let removed = mcp::provider_remove(places, file, &entry, &exe, options)?;
            print_removed(&label, "the Provider MCP server", &removed)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
