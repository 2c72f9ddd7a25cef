//! `lidguard man`: one full manual page — every command a person types with its options, then
//! FILES, ENVIRONMENT, EXIT STATUS and EXAMPLES. It names no other page (clap_mangen's own
//! SUBCOMMANDS section would list a `lidguard-<command>(1)` page for each, and none exists).

use std::fmt::Write as _;

use crate::cli;

/// The page, as roff.
pub(crate) fn render() -> std::io::Result<Vec<u8>> {
    let cmd = cli::command();
    let man = clap_mangen::Man::new(cmd.clone());
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    let mut text = String::from(".SH DESCRIPTION\n");
    text.push_str(&paragraph(DESCRIPTION));
    text.push_str(".SH COMMANDS\n");
    let plumbing = crate::help::plumbing();
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && !plumbing.iter().any(|p| p == s.get_name()))
    {
        let _ = writeln!(text, ".TP\n\\fBlidguard {}\\fR", dashes(sub.get_name()));
        let about = sub
            .get_long_about()
            .or_else(|| sub.get_about())
            .map(ToString::to_string)
            .unwrap_or_default();
        text.push_str(&item(&about));
        for arg in sub.get_arguments().filter(|a| !a.is_hide_set()) {
            let name = match (arg.get_long(), arg.get_short()) {
                (Some(long), _) => format!("\\-\\-{}", dashes(long)),
                (None, Some(short)) => format!("\\-{short}"),
                (None, None) => escape(&arg.get_value_names().map_or_else(
                    || arg.get_id().to_string().to_uppercase(),
                    |v| {
                        v.iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(" ")
                    },
                )),
            };
            let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
            let _ = writeln!(text, ".RS\n.TP\n\\fB{name}\\fR\n{}.RE", item(&help));
        }
    }
    let _ = writeln!(
        text,
        ".PP\nRun by agents, MCP clients and services (each explained by \\fBlidguard help\\fR \
         \\fIcommand\\fR): {}.",
        escape(&plumbing.join(", "))
    );
    for (title, body) in SECTIONS {
        let _ = writeln!(text, ".SH {title}");
        text.push_str(&paragraph(body));
    }
    out.extend_from_slice(text.as_bytes());
    man.render_version_section(&mut out)?;
    Ok(out)
}

const DESCRIPTION: &str = "lidguard keeps a laptop awake, lid closed included, exactly while an AI \
coding agent (Claude Code, Codex CLI, GitHub Copilot CLI, OpenCode, Gemini CLI, Cursor, Qwen Code, \
Kilo CLI, Cline CLI, Factory Droid, or any command) works, and gives the machine back the moment the work ends or \
waits for you. The agents report their work through hooks that `lidguard setup` installs; a small \
per-user daemon, started on demand, holds the operating system's keep-awake locks while a session \
works and releases them when none does.";

/// The closing sections: (title, text; blank lines separate paragraphs).
const SECTIONS: &[(&str, &str)] = &[
    (
        "FILES",
        "$XDG_CONFIG_HOME/lidguard/settings.json (~/.config/lidguard/): the settings.\n\n\
         $XDG_STATE_HOME/lidguard/ (~/.local/state/lidguard/): the database, the log \
         (lidguard.log), the backups of agent configs lidguard edited (the newest five per file) \
         and the install receipts that let a remove give back the exact bytes.\n\n\
         $XDG_RUNTIME_DIR/lidguard/ (else /tmp/lidguard-UID/): the daemon's socket and lock.\n\n\
         Each agent's own config, where lidguard adds its entries next to yours: \
         ~/.claude/settings.json, ~/.codex/hooks.json, ~/.copilot/hooks/, \
         ~/.config/opencode/plugins/lidguard.js, ~/.gemini/settings.json, ~/.cursor/hooks.json, \
         ~/.qwen/settings.json, ~/.config/kilo/plugins/lidguard.js, ~/.cline/hooks/, \
         ~/.factory/hooks.json.\n\n\
         On Windows: %APPDATA%\\lidguard\\ and %LOCALAPPDATA%\\lidguard\\, a named pipe \
         instead of the socket.",
    ),
    (
        "ENVIRONMENT",
        "LIDGUARD_HOME: put settings, state and socket under one directory (config/, state/, \
         run/).\n\n\
         LIDGUARD_LOG: the log filter (for example debug).\n\n\
         LIDGUARD_RELAY: the relay socket a hook on another machine or in a container uses \
         (set by lidguard container; lidguard ssh needs none).\n\n\
         XDG_CONFIG_HOME, XDG_STATE_HOME, XDG_RUNTIME_DIR: where the files above go.\n\n\
         CLAUDE_CONFIG_DIR, CODEX_HOME, COPILOT_HOME, OPENCODE_CONFIG_DIR, GEMINI_CLI_HOME, \
         QWEN_HOME, KILO_CONFIG_DIR, CLINE_DIR: the agents' own variables, honoured where each \
         agent honours them.",
    ),
    (
        "EXIT STATUS",
        "0 on success. 1 when the command failed or found a problem (hook-status, mcp-status and \
         doctor when a check fails; setup when no agent is found or a check fails; uninstall \
         when something only root can remove is left). 2 for a usage error. status --check \
         exits 3 when sessions want the machine awake but nothing is held. run exits with the \
         command's status (128 + N after signal N). The agents' hook commands always exit 0: \
         a hook never fails the agent.",
    ),
    (
        "EXAMPLES",
        "lidguard setup\n  Hook lidguard into every agent found here, after showing what changes.\n\n\
         lidguard status\n  Sessions, what is held and why.\n\n\
         lidguard run \\-\\- make release\n  Keep the machine awake while a build runs.\n\n\
         lidguard settings \\-\\-closed-lid-permission-request-decision deny\n  Refuse \
         permission prompts while the lid is closed.\n\n\
         lidguard ssh build-server\n  Your ssh, with a relay so an agent there keeps this \
         laptop awake.\n\n\
         lidguard uninstall\n  Take everything lidguard wrote away.",
    ),
];

/// `text` as roff paragraphs: blank lines separate them, an indented line starts an indented
/// block.
fn paragraph(text: &str) -> String {
    paragraphs(text, ".PP\n")
}

/// [`paragraph`] inside a `.TP` item: later paragraphs keep the item's indentation.
fn item(text: &str) -> String {
    paragraphs(text, ".IP\n")
}

fn paragraphs(text: &str, separator: &str) -> String {
    let mut out = String::new();
    for (i, para) in text.split("\n\n").enumerate() {
        if i > 0 {
            out.push_str(separator);
        }
        for line in para.lines() {
            match line.strip_prefix("  ") {
                Some(rest) => {
                    let _ = writeln!(out, ".RS\n{}\n.RE", escape(rest));
                }
                None => {
                    let _ = writeln!(out, "{}", escape(line));
                }
            }
        }
    }
    out
}

/// A command or option name: its hyphens as roff's `\-`, so they copy as the ASCII minus a
/// shell needs.
fn dashes(name: &str) -> String {
    escape(name).replace('-', "\\-")
}

/// A line of text safe in roff: backslashes escaped (already escaped `\-` kept), and a leading
/// `.` or `'` made literal.
fn escape(line: &str) -> String {
    let mut out = line.replace('\\', "\\e").replace("\\e-", "\\-");
    if out.starts_with('.') || out.starts_with('\'') {
        out.insert_str(0, "\\&");
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_page_names_no_other_page_and_has_every_section() {
        let page = String::from_utf8(super::render().unwrap()).unwrap();
        for section in [
            ".SH NAME",
            ".SH SYNOPSIS",
            ".SH COMMANDS",
            ".SH FILES",
            ".SH ENVIRONMENT",
            ".SH \"EXIT STATUS\"",
            ".SH EXAMPLES",
        ] {
            let found = page.contains(section) || page.contains(&section.replace('"', ""));
            assert!(found, "{section} missing");
        }
        assert!(
            !page.contains("lidguard\\-"),
            "a page named lidguard-<command>"
        );
        assert!(page.contains("\\fBlidguard setup\\fR"));
        assert!(
            !page.contains("lidguard claude-hook\\fR"),
            "plumbing is hidden"
        );
    }
}
