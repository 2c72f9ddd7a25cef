//! `lidguard help`: a categorized overview built from the clap definitions, and per-command
//! help that is exactly `<command> --help`.

use anyhow::bail;

use lidguard_providers::AGENTS;

use crate::cli;
use crate::output;

/// Commands by category, in the order shown, without the agents' own (see [`categories`]).
const FIXED: &[(&str, &[&str])] = &[
    ("Getting started", &["setup", "doctor", "uninstall"]),
    (
        "Sessions",
        &[
            "start",
            "stop",
            "run",
            "remove-session",
            "status",
            "daemon-stop",
            "ssh",
            "container",
            "events",
            "live-status",
            "cleanup-orphans",
        ],
    ),
    (
        "Power",
        &[
            "suspend-history",
            "current-lid-state",
            "current-monitor-count",
            "current-temperature",
            "preview-system-sound",
            "preview-current-sound",
            "linux-permission",
        ],
    ),
    (
        "Settings",
        &[
            "settings",
            "remove-pre-suspend-webhook",
            "remove-post-session-end-webhook",
            "remove-closed-lid-stop-follow-up-webhook",
            "webhook-history",
        ],
    ),
    (
        "Hooks",
        &["hook-install", "hook-status", "hook-remove", "hook-events"],
    ),
    (
        "MCP",
        &[
            "mcp-install",
            "mcp-status",
            "mcp-remove",
            "provider-mcp-install",
            "provider-mcp-status",
            "provider-mcp-remove",
            "mcp-server",
            "provider-mcp-server",
        ],
    ),
    (
        "Internal",
        &["service", "run-server", "completions", "man", "help"],
    ),
];

/// Commands shown on some systems only (hidden elsewhere), with the category they join.
const PLATFORM: &[(&str, &str, bool)] = &[
    ("Power", "macos-permission", cfg!(target_os = "macos")),
    ("Power", "power-restore", !cfg!(target_os = "linux")),
];

/// Commands by category, in the order shown: the fixed ones, then under Hooks each agent's
/// snippet printer and hook subcommand, from the agent table. Every subcommand appears exactly
/// once (tested).
pub(crate) fn categories() -> Vec<(&'static str, Vec<String>)> {
    let mut all: Vec<(&'static str, Vec<String>)> = FIXED
        .iter()
        .map(|(category, names)| {
            let mut names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
            if *category == "Hooks" {
                names.extend(AGENTS.iter().map(|a| a.snippet_command.to_owned()));
                names.extend(AGENTS.iter().map(|a| a.hook_command.to_owned()));
            }
            names.extend(
                PLATFORM
                    .iter()
                    .filter(|(c, _, shown)| *shown && c == category)
                    .map(|(_, name, _)| (*name).to_owned()),
            );
            (*category, names)
        })
        .collect();
    // The WSL bridge is shown on Windows only (the commands are hidden elsewhere).
    if cfg!(windows) {
        let mut names: Vec<String> = [
            "wsl-hook-install",
            "wsl-hook-status",
            "wsl-hook-remove",
            "wsl-mcp-install",
            "wsl-mcp-status",
            "wsl-mcp-remove",
            "wsl-provider-mcp-install",
            "wsl-provider-mcp-status",
            "wsl-provider-mcp-remove",
        ]
        .iter()
        .map(|n| (*n).to_owned())
        .collect();
        for agent in AGENTS {
            names.push(format!("wsl-{}", agent.snippet_command));
            if agent.mcp.is_some() {
                for op in ["install", "status", "remove"] {
                    names.push(format!("wsl-{}-mcp-{op}", agent.provider.as_str()));
                }
            }
        }
        let internal = all.len() - 1;
        all.insert(internal, ("WSL (Windows)", names));
    }
    all
}

/// The overview text.
pub(crate) fn overview() -> String {
    let cmd = cli::command();
    let mut text = String::new();
    text.push_str(&format!(
        "lidguard {} — keeps a laptop awake, lid closed included, exactly while AI coding agents work.\n\n\
         Usage: lidguard <command> [options]\n",
        env!("CARGO_PKG_VERSION")
    ));
    let categories = categories();
    let width = categories
        .iter()
        .flat_map(|(_, names)| names.iter())
        .map(String::len)
        .max()
        .unwrap_or(0);
    for (category, names) in &categories {
        text.push_str(&format!("\n{category}:\n"));
        for name in names {
            let about = cmd
                .find_subcommand(name)
                .and_then(|c| c.get_about())
                .map(ToString::to_string)
                .unwrap_or_default();
            text.push_str(&format!("  {name:<width$}  {about}\n"));
        }
    }
    text.push_str(
        "\n`lidguard help <command>` or `lidguard <command> --help` explains one command.\n",
    );
    text
}

/// Prints the overview, or one command's help.
pub(crate) fn run(command: Option<&str>) -> anyhow::Result<()> {
    let Some(name) = command else {
        output::prompt(&overview())?;
        return Ok(());
    };
    let mut cmd = cli::command();
    let Some(sub) = cmd.find_subcommand_mut(name) else {
        bail!("no command `{name}`; `lidguard help` lists them");
    };
    let help = sub
        .clone()
        .bin_name(format!("lidguard {name}"))
        .render_long_help();
    output::prompt(&help.to_string())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_is_in_exactly_one_category() {
        let cmd = cli::command();
        let categories = categories();
        let listed: Vec<&str> = categories
            .iter()
            .flat_map(|(_, n)| n.iter().map(String::as_str))
            .collect();
        let visible: Vec<_> = cmd.get_subcommands().filter(|s| !s.is_hide_set()).collect();
        for sub in &visible {
            let count = listed.iter().filter(|n| **n == sub.get_name()).count();
            assert_eq!(count, 1, "{} listed {count} times", sub.get_name());
        }
        assert_eq!(listed.len(), visible.len());
    }

    #[test]
    fn cli_definition_is_consistent() {
        cli::command().debug_assert();
    }
}
