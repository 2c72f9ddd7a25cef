//! `lidguard help`: a categorized overview built from the clap definitions, and per-command
//! help that is exactly `<command> --help`.

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
            "pause",
            "resume",
            "cancel-suspend",
            "daemon-stop",
            "ssh",
            "container",
            "events",
            "live-status",
            "tray",
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
        ],
    ),
    ("More", &["service", "completions", "man", "help"]),
    (
        PLUMBING,
        &["mcp-server", "provider-mcp-server", "run-server"],
    ),
];

/// What agents, MCP clients and services run, not people: listed by name only in the overview
/// (each still has its full `help`). The agents' hook and snippet commands join it.
const PLUMBING: &str = "Run by agents, MCP clients and services";

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
            if *category == PLUMBING {
                names.extend(AGENTS.iter().map(|a| a.hook_command.to_owned()));
                names.extend(AGENTS.iter().map(|a| a.snippet_command.to_owned()));
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
        let more = all.len() - 2;
        all.insert(more, ("WSL (Windows)", names));
    }
    all
}

/// The commands agents, MCP clients and services run (the overview lists them by name only).
pub(crate) fn plumbing() -> Vec<String> {
    categories()
        .into_iter()
        .find(|(category, _)| *category == PLUMBING)
        .map(|(_, names)| names)
        .unwrap_or_default()
}

/// The overview text, laid out for the terminal's width.
pub(crate) fn overview() -> String {
    overview_for(terminal_width())
}

/// The overview in lines of at most `width` columns (at least [`NARROWEST`]).
pub(crate) fn overview_for(width: usize) -> String {
    let width = width.clamp(NARROWEST, WIDEST);
    let cmd = cli::command();
    let mut text = String::new();
    let title = format!(
        "lidguard {} — keeps a laptop awake, lid closed included, exactly while AI coding agents \
         work.",
        env!("CARGO_PKG_VERSION")
    );
    for line in wrap_words(&title, width) {
        text.push_str(&line);
        text.push('\n');
    }
    text.push_str("\nUsage: lidguard <command> [options]\n");
    let categories = categories();
    // The names' column: as wide as the names, but never more than a third of the line; a
    // longer name has its line to itself and its description starts below it.
    let column = categories
        .iter()
        .filter(|(category, _)| *category != PLUMBING)
        .flat_map(|(_, names)| names.iter())
        .map(String::len)
        .filter(|len| *len <= width / 3)
        .max()
        .unwrap_or(0);
    let about_width = width - (2 + column + 2);
    for (category, names) in &categories {
        text.push_str(&format!("\n{category}:\n"));
        if *category == PLUMBING {
            text.push_str(&wrapped(names, 2, width));
            continue;
        }
        for name in names {
            let about = cmd
                .find_subcommand(name)
                .and_then(|c| c.get_about())
                .map(|a| summary(&a.to_string()))
                .unwrap_or_default();
            let mut lines = wrap_words(&about, about_width).into_iter();
            if name.len() > column {
                text.push_str(&format!("  {name}\n"));
            } else {
                let first = lines.next().unwrap_or_default();
                text.push_str(&format!("  {name:<column$}  {first}\n"));
            }
            for line in lines {
                text.push_str(&format!("  {:column$}  {line}\n", ""));
            }
        }
    }
    for line in wrap_words(
        "`lidguard help <command>` or `lidguard <command> --help` explains one command.",
        width,
    ) {
        text.push('\n');
        text.push_str(&line);
    }
    text.push('\n');
    text
}

/// The terminal's width: `COLUMNS` when set, else the terminal's own, else [`WIDEST`] (a pipe
/// or a file).
pub(crate) fn terminal_width() -> usize {
    use std::io::IsTerminal;
    if let Some(columns) = lidguard_files::environment::text("COLUMNS")
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|c| *c > 0)
    {
        return columns;
    }
    if std::io::stdout().is_terminal()
        && let Ok((columns, _)) = ratatui::crossterm::terminal::size()
    {
        return usize::from(columns);
    }
    WIDEST
}

/// The widest the overview gets (longer lines are hard to read).
const WIDEST: usize = 100;

/// The narrowest the overview is laid out for.
const NARROWEST: usize = 40;

/// A command's one-line description cut to its first clause, for the overview (its own help
/// has all of it).
fn summary(about: &str) -> String {
    let cut = [": ", "; ", ". "]
        .iter()
        .filter_map(|sep| about.find(sep))
        .filter(|&at| at >= 12)
        .min();
    match cut {
        Some(at) => about[..at].to_owned(),
        None => about.trim_end_matches('.').to_owned(),
    }
}

/// `text` in lines of at most `width` characters, broken between words.
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let line = lines.last_mut().expect("one line at least");
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(word.to_owned());
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines
}

/// `names` as comma-separated lines of at most `width` columns, indented.
fn wrapped(names: &[String], indent: usize, width: usize) -> String {
    let mut out = String::new();
    let mut line = " ".repeat(indent);
    for (i, name) in names.iter().enumerate() {
        let item = if i + 1 < names.len() {
            format!("{name}, ")
        } else {
            name.clone()
        };
        if !line.trim().is_empty() && line.len() + item.len() > width {
            out.push_str(line.trim_end());
            out.push('\n');
            line = " ".repeat(indent);
        }
        line.push_str(&item);
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}

/// Prints the overview, or one command's help.
pub(crate) fn run(command: Option<&str>) -> anyhow::Result<()> {
    let Some(name) = command else {
        output::prompt(&overview())?;
        return Ok(());
    };
    let mut cmd = cli::command();
    let Some(sub) = cmd.find_subcommand_mut(name) else {
        return Err(
            output::Usage(format!("no command `{name}`; `lidguard help` lists them")).into(),
        );
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
    fn the_overview_fits_the_width_it_is_given() {
        for width in [60, 80, 100] {
            let text = overview_for(width);
            for line in text.lines() {
                assert!(
                    line.chars().count() <= width,
                    "{width}: {} chars: {line}",
                    line.chars().count()
                );
            }
            // No word is cut: every command still appears whole.
            for (_, names) in categories() {
                for name in names {
                    assert!(text.contains(&name), "{width}: {name}");
                }
            }
        }
    }

    #[test]
    fn cli_definition_is_consistent() {
        cli::command().debug_assert();
    }
}
