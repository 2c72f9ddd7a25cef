//! The "Examples:" that close each command's help (`lidguard help X`, `lidguard X --help`).
//! Every command a person types has some (tested); the agents' and services' own commands do
//! not need them.

/// (command, example lines: the command, then two spaces and what it does).
pub(crate) const EXAMPLES: &[(&str, &str)] = &[
    (
        "setup",
        "lidguard setup                      show the plan, ask once, hook every agent found\n\
         lidguard setup --yes --mcp          for scripts; also register the MCP server\n\
         lidguard setup --hook-new-agents    also hook agents installed later",
    ),
    (
        "doctor",
        "lidguard doctor                     one ✓/✗ line per check\n\
         lidguard doctor --json              the same, to paste into an issue",
    ),
    (
        "uninstall",
        "lidguard uninstall                  show what goes, ask once, remove it all\n\
         lidguard uninstall --yes            for scripts",
    ),
    (
        "start",
        "lidguard start --provider custom --session backup --parent-pid $$\n\
         \x20                                   held until this shell exits",
    ),
    ("stop", "lidguard stop --provider custom --session backup"),
    (
        "run",
        "lidguard run -- make release        awake while the build runs\n\
         lidguard run --reason training -- python train.py",
    ),
    (
        "remove-session",
        "lidguard remove-session --session backup\n\
         lidguard remove-session --all",
    ),
    (
        "status",
        "lidguard status                     sessions, what is held and why\n\
         lidguard status --json | jq .protection\n\
         lidguard status --check || echo 'wanted but not held'",
    ),
    (
        "pause",
        "lidguard pause --for 1h             the machine may sleep for an hour\n\
         lidguard pause                      until `lidguard resume`",
    ),
    (
        "resume",
        "lidguard resume                     protection is held again",
    ),
    (
        "cancel-suspend",
        "lidguard cancel-suspend             lidguard does not put it to sleep this time",
    ),
    (
        "daemon-stop",
        "lidguard daemon-stop                the daemon lets go and ends",
    ),
    (
        "ssh",
        "lidguard ssh build-server           your ssh, with the relay\n\
         lidguard ssh -p 2222 me@vm tmux new -A -s agent",
    ),
    (
        "container",
        "lidguard container podman run --rm -it -v $PWD:/work my-agent-image\n\
         lidguard container docker run --rm -it my-agent-image claude",
    ),
    (
        "events",
        "lidguard events --follow            recent events, then each new one\n\
         lidguard events --since 10m --session S1\n\
         lidguard events --follow --json | jq .",
    ),
    (
        "live-status",
        "lidguard live-status                the dashboard; q quits\n\
         NO_COLOR=1 lidguard live-status     without colour (or --color never)",
    ),
    (
        "tray",
        "lidguard tray                       the icon, until you quit it",
    ),
    (
        "cleanup-orphans",
        "lidguard cleanup-orphans            end sessions whose agent process is gone",
    ),
    (
        "suspend-history",
        "lidguard suspend-history            the last 10\n\
         lidguard suspend-history 50 --json",
    ),
    (
        "current-lid-state",
        "lidguard current-lid-state          Open, Closed or Unknown",
    ),
    (
        "current-monitor-count",
        "lidguard current-monitor-count --json",
    ),
    (
        "current-temperature",
        "lidguard current-temperature high   the hottest zone",
    ),
    (
        "preview-system-sound",
        "lidguard preview-system-sound Asterisk --volume 40",
    ),
    (
        "preview-current-sound",
        "lidguard preview-current-sound      the sound the suspend flow would play",
    ),
    (
        "linux-permission",
        "lidguard linux-permission check     take and release a test lock\n\
         sudo lidguard linux-permission install --user $USER",
    ),
    (
        "settings",
        "lidguard settings                   show them (a terminal: edit them)\n\
         lidguard settings --closed-lid-permission-request-decision deny\n\
         lidguard settings --ntfy-url off",
    ),
    (
        "remove-pre-suspend-webhook",
        "lidguard remove-pre-suspend-webhook",
    ),
    (
        "remove-post-session-end-webhook",
        "lidguard remove-post-session-end-webhook",
    ),
    (
        "remove-closed-lid-stop-follow-up-webhook",
        "lidguard remove-closed-lid-stop-follow-up-webhook",
    ),
    ("webhook-history", "lidguard webhook-history 20 --json"),
    (
        "hook-install",
        "lidguard hook-install --provider all --dry-run     every diff, nothing changed\n\
         lidguard hook-install --provider claude\n\
         lidguard hook-install --provider codex --trust-codex-hooks",
    ),
    (
        "hook-status",
        "lidguard hook-status --provider all\n\
         lidguard hook-status --provider codex --json",
    ),
    (
        "hook-remove",
        "lidguard hook-remove --provider claude   your bytes come back",
    ),
    (
        "hook-events",
        "lidguard hook-events --provider claude --count 50\n\
         lidguard hook-events --receipts",
    ),
    (
        "mcp-install",
        "lidguard mcp-install --provider all --dry-run\n\
         lidguard mcp-install --provider claude",
    ),
    ("mcp-status", "lidguard mcp-status --provider all"),
    ("mcp-remove", "lidguard mcp-remove --provider claude"),
    (
        "provider-mcp-install",
        "lidguard provider-mcp-install --config ~/.my-agent/mcp.json --provider-name my-agent",
    ),
    (
        "provider-mcp-status",
        "lidguard provider-mcp-status --config ~/.my-agent/mcp.json",
    ),
    (
        "provider-mcp-remove",
        "lidguard provider-mcp-remove --config ~/.my-agent/mcp.json",
    ),
    (
        "service",
        "lidguard service install            socket activation (Linux)\n\
         lidguard service status --json",
    ),
    (
        "completions",
        "lidguard completions bash > ~/.local/share/bash-completion/completions/lidguard",
    ),
    ("man", "lidguard man | man -l -"),
    (
        "help",
        "lidguard help                       the overview\n\
         lidguard help hook-install",
    ),
    (
        "macos-permission",
        "lidguard macos-permission status\n\
         sudo lidguard macos-permission install",
    ),
    (
        "power-restore",
        "lidguard power-restore              put back what a stopped daemon left changed",
    ),
];

/// `cmd` with each command's examples after its long help.
pub(crate) fn with_examples(cmd: clap::Command) -> clap::Command {
    EXAMPLES.iter().fold(cmd, |cmd, (name, text)| {
        if cmd.find_subcommand(name).is_none() {
            return cmd;
        }
        cmd.mut_subcommand(*name, |sub| {
            sub.after_long_help(format!("Examples:\n{}", indent(text)))
        })
    })
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("  {}", l.trim_end()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    /// Each example is a command line the parser accepts (its flags exist, its values are valid).
    #[test]
    fn every_example_parses() {
        for (name, text) in super::EXAMPLES {
            for line in text.lines() {
                // The command ends where its explanation (two spaces) or a shell operator begins.
                let command = line.trim().split("  ").next().unwrap_or_default();
                let command = command.strip_prefix("sudo ").unwrap_or(command);
                let Some(rest) = command.strip_prefix("lidguard") else {
                    continue;
                };
                let words: Vec<&str> = std::iter::once("lidguard")
                    .chain(
                        rest.split_whitespace()
                            .take_while(|w| !["|", "||", ">", "&&"].contains(w)),
                    )
                    .collect();
                // What the shell would put in place of its variables.
                let words: Vec<String> = words
                    .iter()
                    .map(|w| {
                        w.replace("$$", "4242")
                            .replace("$USER", "me")
                            .replace("$PWD", "/w")
                    })
                    .collect();
                if let Err(e) = crate::cli::command().try_get_matches_from(&words) {
                    panic!("{name}: `{}` does not parse: {e}", words.join(" "));
                }
            }
        }
    }

    #[test]
    fn every_command_a_person_types_has_examples() {
        let cmd = crate::cli::command();
        let plumbing = crate::help::plumbing();
        for sub in cmd.get_subcommands() {
            let name = sub.get_name();
            if sub.is_hide_set() || plumbing.iter().any(|p| p == name) {
                continue;
            }
            let help = sub.get_after_long_help().map(ToString::to_string);
            assert!(
                help.is_some_and(|h| h.starts_with("Examples:\n  lidguard")
                    || h.starts_with("Examples:\n  sudo lidguard")),
                "{name} has no examples"
            );
        }
    }
}
