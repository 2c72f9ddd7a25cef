//! Which ancestor process of a hook is the agent itself (the process whose exit ends the
//! session). Working directories are never used for this: only names and command lines.
//!
//! Each agent's rule is in its folder under `agents/`, written from the process names seen in
//! the captured ancestries under `tests/fixtures/`.
// Dispatch on agents is exhaustive: a new agent must be a compile error here, never a fallback.
#![deny(clippy::wildcard_enum_match_arm)]

use lidguard_core::provider::Provider;

/// How far up the process tree to look.
pub const MAX_DEPTH: usize = 16;

/// Whether a process with this `name` (from `/proc/<pid>/comm`) and `cmdline` is the agent of
/// `provider` (each agent's rule is in its folder).
pub fn is_owner(provider: Provider, name: &str, cmdline: &str) -> bool {
    crate::agents::agent(provider).is_some_and(|a| (a.is_owner)(name, cmdline))
}

/// The process that runs a hook: the agent, or another tool that runs the agent's hook files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Runner {
    /// Its process id: the session lasts no longer than it.
    pub pid: u32,
    /// The other tool's name, `None` when it is the agent itself.
    pub other: Option<&'static str>,
    /// The agent works on a prompt from its launch ([`crate::agent::Agent::works_from_launch`]).
    pub works_from_launch: bool,
}

/// The first ancestor that is the agent or a tool that runs its hook files: `ancestors` lists
/// (pid, name, cmdline), parent first. The nearest wins, so Claude started in Cursor's
/// terminal is Claude, and Cursor running Claude's hooks is Cursor.
pub fn find_runner<'a>(
    provider: Provider,
    ancestors: impl IntoIterator<Item = (u32, &'a str, &'a str)>,
) -> Option<Runner> {
    let agent = crate::agents::agent(provider)?;
    ancestors
        .into_iter()
        .take(MAX_DEPTH)
        .find_map(|(pid, name, cmdline)| {
            if (agent.is_owner)(name, cmdline) {
                return Some(Runner {
                    pid,
                    other: None,
                    works_from_launch: agent.works_from_launch.is_some_and(|f| f(cmdline)),
                });
            }
            let other = agent.also_run_by.iter().find(|o| (o.is)(name, cmdline))?;
            Some(Runner {
                pid,
                other: Some(other.name),
                works_from_launch: false,
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_by_name_and_wrapper_command_line() {
        assert!(is_owner(Provider::Codex, "codex", "codex exec hi"));
        assert!(is_owner(
            Provider::Codex,
            "node",
            "node /usr/lib/node_modules/@openai/codex/bin/codex.js"
        ));
        assert!(!is_owner(Provider::Codex, "node", "node server.js codex"));
        assert!(is_owner(Provider::Claude, "claude", "claude -p x"));
        assert!(is_owner(
            Provider::Claude,
            "node",
            "node /x/claude-code/cli.js"
        ));
        assert!(is_owner(Provider::Copilot, "gh", "gh copilot"));
        assert!(is_owner(Provider::Copilot, "copilot", "copilot -p x"));
        assert!(is_owner(Provider::OpenCode, "opencode", "opencode run"));
        assert!(is_owner(Provider::OpenCode, "bun", "bun opencode"));
        assert!(!is_owner(Provider::Claude, "bash", "bash -c claude-hook"));
        assert!(!is_owner(Provider::Mcp, "claude", "claude"));
    }

    #[test]
    fn claude_hooks_run_by_cursor_or_devin_are_theirs() {
        let by_devin = [
            (30, "sh", "/bin/sh -c lidguard-hook claude-hook"),
            (20, "devin", "devin -p fix it"),
            (10, "zsh", "-zsh"),
        ];
        let runner = find_runner(Provider::Claude, by_devin).unwrap();
        assert_eq!((runner.pid, runner.other), (20, Some("devin")));
        let by_cursor = [(20, "cursor-agent", "cursor-agent -p x")];
        assert_eq!(
            find_runner(Provider::Claude, by_cursor).unwrap().other,
            Some("cursor")
        );
        // Claude started from Cursor's terminal is Claude: the nearest wins.
        let in_cursor = [
            (30, "claude", "claude"),
            (20, "zsh", "zsh"),
            (10, "cursor", "/usr/share/cursor/cursor"),
        ];
        assert_eq!(
            find_runner(Provider::Claude, in_cursor),
            Some(Runner {
                pid: 30,
                other: None,
                works_from_launch: false,
            })
        );
        // Codex's hook files are Codex's alone.
        assert_eq!(find_runner(Provider::Codex, by_devin), None);
    }

    #[test]
    fn the_first_matching_ancestor_wins() {
        let chain = [
            (30, "sh", "/bin/sh -c lidguard claude-hook"),
            (20, "claude", "claude"),
            (10, "node", "node claude"),
        ];
        let pid = |p| find_runner(p, chain).map(|r| r.pid);
        assert_eq!(pid(Provider::Claude), Some(20));
        assert_eq!(pid(Provider::Codex), None);
    }
}
