//! `mcp-install`, `mcp-status`, `mcp-remove` (lidguard's `mcp-server` in each agent's MCP
//! config) and `provider-mcp-install|status|remove` (a Provider MCP entry in any JSON config).
//! The edits are pure (`lidguard_providers::install::mcp`); files are written through
//! `config_edit` like the hooks: diff on `--dry-run`, backup, atomic write.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use lidguard_core::provider::Provider;
use lidguard_ipc::Places;
use lidguard_providers::install::mcp::{self, JsonEntry, McpAgent, McpStatus};
use lidguard_providers::install::{Change, InstallError, InstallState};
use serde_json::{Value, json};

use super::config_edit::{self, Location, MANAGED, Mode, read, refuse};
use crate::cli::{McpConfigArgs, McpStatusArgs, ProviderMcpArgs};
use crate::output;

/// The MCP config of `provider`, honouring each agent's override variables. Sources: Claude
/// keeps user-scope servers in `.claude.json` in the home directory, or in `CLAUDE_CONFIG_DIR`
/// when set (observed: `claude mcp add --scope user` 2.1.332 writes there); Codex
/// `CODEX_HOME/config.toml`; Copilot `COPILOT_HOME/mcp-config.json` (`copilot mcp --help`
/// 1.0.102); OpenCode `OPENCODE_CONFIG`, else `opencode.json` or `opencode.jsonc` in its config
/// directory (<https://opencode.ai/docs/config/>).
pub(crate) fn locate(
    provider: Provider,
    var: &dyn Fn(&str) -> Option<OsString>,
) -> anyhow::Result<Location> {
    let set = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let home = || -> anyhow::Result<PathBuf> {
        set("HOME")
            .or_else(std::env::home_dir)
            .context("cannot find the home directory (HOME is unset)")
    };
    Ok(match provider {
        Provider::Claude => match set("CLAUDE_CONFIG_DIR") {
            Some(dir) => Location {
                file: dir.join(".claude.json"),
                root: dir,
            },
            None => Location {
                root: home()?.join(".claude"),
                file: home()?.join(".claude.json"),
            },
        },
        Provider::Codex => {
            let root = set("CODEX_HOME").map_or_else(|| home().map(|h| h.join(".codex")), Ok)?;
            Location {
                file: root.join("config.toml"),
                root,
            }
        }
        Provider::Copilot => {
            let root =
                set("COPILOT_HOME").map_or_else(|| home().map(|h| h.join(".copilot")), Ok)?;
            Location {
                file: root.join("mcp-config.json"),
                root,
            }
        }
        Provider::OpenCode => {
            let root = match set("OPENCODE_CONFIG_DIR") {
                Some(dir) => dir,
                None => set("XDG_CONFIG_HOME")
                    .map_or_else(|| home().map(|h| h.join(".config")), Ok)?
                    .join("opencode"),
            };
            let file = match set("OPENCODE_CONFIG") {
                Some(file) => file,
                None => {
                    let json = root.join("opencode.json");
                    let jsonc = root.join("opencode.jsonc");
                    if !json.exists() && jsonc.exists() {
                        jsonc
                    } else {
                        json
                    }
                }
            };
            Location { root, file }
        }
        other => bail!("{other} has no MCP configuration lidguard manages"),
    })
}

/// The executable MCP entries run: this executable's absolute path (not a `PATH` shim, so a
/// wrapper process is never mistaken for the agent).
fn server_program() -> anyhow::Result<String> {
    let exe = std::env::current_exe().context("cannot find the lidguard executable")?;
    Ok(exe.canonicalize().unwrap_or(exe).display().to_string())
}

fn agent(p: Provider) -> McpAgent {
    match p {
        Provider::Claude => McpAgent::Claude,
        Provider::Codex => McpAgent::Codex,
        Provider::Copilot => McpAgent::Copilot,
        _ => McpAgent::OpenCode,
    }
}

/// The agents an `[AGENT]` argument names, each with its location and why it is skipped.
fn targets(
    which: Option<&str>,
    command: &str,
) -> anyhow::Result<Vec<(Provider, Location, Option<String>)>> {
    let var = |name: &str| std::env::var_os(name);
    config_edit::targets(
        which,
        "lidguard registers its MCP server with",
        || crate::prompt::agent_among(&MANAGED, command, "an agent (or `all`)"),
        |p| locate(p, &var),
    )
}

/// `mcp-install` or `mcp-remove`.
pub(crate) fn apply(
    places: &Places,
    args: &McpConfigArgs,
    remove: bool,
) -> anyhow::Result<ExitCode> {
    let exe = server_program()?;
    let command = if remove { "mcp-remove" } else { "mcp-install" };
    for (p, location, skipped) in targets(args.agent.as_deref(), command)? {
        if let Some(reason) = skipped {
            output::line(&format!("{}: {reason}", p.display_name()))?;
            continue;
        }
        let file = &location.file;
        let existing = read(file)?;
        let change =
            edit(agent(p), existing.as_deref(), &exe, remove).map_err(|e| refuse(file, &e))?;
        config_edit::write(
            places,
            (p.display_name(), &format!("mcp-{}", p.as_str())),
            (file, existing.as_deref()),
            &change,
            &Mode {
                remove,
                dry_run: args.dry_run,
                what: "lidguard's MCP server",
            },
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn edit(
    agent: McpAgent,
    existing: Option<&str>,
    exe: &str,
    remove: bool,
) -> Result<Change, InstallError> {
    match (agent, remove, existing) {
        (_, true, None) => Ok(Change::Unchanged),
        (McpAgent::Codex, true, Some(text)) => mcp::remove_codex(text),
        (McpAgent::Codex, false, text) => mcp::install_codex(text, exe),
        (a, true, Some(text)) => mcp::remove_json(text, &JsonEntry::server(a, exe)),
        (a, false, text) => mcp::install_json(text, &JsonEntry::server(a, exe)),
    }
}

/// `mcp-status`: exits 1 when an agent's entry is missing, drifted or unreadable.
pub(crate) fn status(args: &McpStatusArgs) -> anyhow::Result<ExitCode> {
    let exe = server_program()?;
    let mut healthy = true;
    let mut reports = Vec::new();
    for (p, location, skipped) in targets(args.agent.as_deref(), "mcp-status")? {
        let mut report = json!({"provider": p.as_str(), "file": location.file});
        if let Some(reason) = skipped {
            report["skipped"] = json!(reason);
            reports.push(report);
            continue;
        }
        let existing = read(&location.file)?;
        let found = match agent(p) {
            McpAgent::Codex => mcp::status_codex(existing.as_deref(), &exe),
            a => mcp::status_json(existing.as_deref(), &JsonEntry::server(a, &exe)),
        };
        fill(&mut report, found, &mut healthy);
        reports.push(report);
    }
    print_reports(&reports, args.json)?;
    Ok(if healthy {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn fill(report: &mut Value, found: Result<McpStatus, InstallError>, healthy: &mut bool) {
    match found {
        Ok(s) => {
            *healthy &= s.state == InstallState::Installed;
            report["state"] = json!(s.state.as_str());
            report["drift"] = json!(s.drift);
        }
        Err(e) => {
            *healthy = false;
            report["state"] = json!("unreadable");
            report["error"] = json!(e.to_string());
        }
    }
}

fn print_reports(reports: &[Value], as_json: bool) -> anyhow::Result<()> {
    if as_json {
        output::json(&reports)?;
        return Ok(());
    }
    for r in reports {
        let name = r["provider"].as_str().unwrap_or("");
        let display = name.parse::<Provider>().map_or(name, |p| p.display_name());
        if let Some(skipped) = r["skipped"].as_str() {
            output::line(&format!("{display}: {skipped}"))?;
            continue;
        }
        output::line(&format!(
            "{display}: {} ({})",
            r["state"].as_str().unwrap_or("?"),
            r["file"].as_str().unwrap_or("?")
        ))?;
        if let Some(e) = r["error"].as_str() {
            output::line(&format!("  {e}"))?;
        }
        for d in r["drift"].as_array().into_iter().flatten() {
            output::line(&format!("  drift: {}", d.as_str().unwrap_or("")))?;
        }
        if r["state"] == "missing" {
            output::line(&format!("  `lidguard mcp-install {name}` adds it"))?;
        }
    }
    Ok(())
}

/// The Provider MCP entry the arguments describe; for status without `--provider-name`, the
/// name found in the file.
fn provider_entry(
    args: &ProviderMcpArgs,
    existing: Option<&str>,
    exe: &str,
) -> anyhow::Result<JsonEntry> {
    let server = args
        .server_name
        .as_deref()
        .unwrap_or(mcp::PROVIDER_SERVER_NAME);
    let name = match args.provider_name.as_deref().map(str::trim) {
        Some("") => bail!("--provider-name must not be empty"),
        Some(name) => name.to_owned(),
        None => existing
            .and_then(|text| mcp::provider_name_in(text, server))
            .unwrap_or_default(),
    };
    Ok(JsonEntry::provider(exe, &name, server))
}

/// `provider-mcp-install` / `provider-mcp-remove` / `provider-mcp-status`.
pub(crate) fn provider(
    places: &Places,
    args: &ProviderMcpArgs,
    action: ProviderAction,
) -> anyhow::Result<ExitCode> {
    let exe = server_program()?;
    let file: &Path = &args.config;
    let existing = read(file)?;
    if action == ProviderAction::Install && args.provider_name.is_none() {
        bail!(
            "provider-mcp-install needs --provider-name (the name the model's sessions are keyed by, e.g. gemini)"
        );
    }
    let entry = provider_entry(args, existing.as_deref(), &exe)?;
    let label = format!("Provider MCP `{}`", entry.name);
    match action {
        ProviderAction::Status => {
            let mut report = json!({"server": entry.name, "file": file});
            let mut healthy = true;
            fill(
                &mut report,
                mcp::status_json(existing.as_deref(), &entry),
                &mut healthy,
            );
            if args.json {
                output::json(&report)?;
            } else {
                output::line(&format!(
                    "{label}: {} ({})",
                    report["state"].as_str().unwrap_or("?"),
                    file.display()
                ))?;
                for line in report["drift"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .chain(report.get("error"))
                {
                    output::line(&format!("  {}", line.as_str().unwrap_or("")))?;
                }
            }
            Ok(if healthy {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        ProviderAction::Install | ProviderAction::Remove => {
            let remove = action == ProviderAction::Remove;
            let change = match (remove, existing.as_deref()) {
                (true, None) => Ok(Change::Unchanged),
                (true, Some(text)) => mcp::remove_json(text, &entry),
                (false, text) => {
                    if text.is_none() && !file.parent().is_some_and(Path::is_dir) {
                        bail!(
                            "{}: its directory does not exist; create it first or check the path",
                            file.display()
                        );
                    }
                    mcp::install_json(text, &entry)
                }
            }
            .map_err(|e| refuse(file, &e))?;
            config_edit::write(
                places,
                (&label, "provider-mcp"),
                (file, existing.as_deref()),
                &change,
                &Mode {
                    remove,
                    dry_run: args.dry_run,
                    what: "the Provider MCP server",
                },
            )?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Which `provider-mcp-*` command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ProviderAction {
    Install,
    Status,
    Remove,
}
