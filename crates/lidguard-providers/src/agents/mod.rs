//! One folder per agent: its [`Agent`](crate::agent::Agent) entry and everything it points at.
//! Each folder's `README.md` states the agent's hook contract as lidguard relies on it, with
//! the fixture or public documentation behind each fact.
//!
//! Adding an agent: a folder here with its `AGENT` and `README.md`, its line below (module and
//! table), and a variant of [`Provider`] with its names (in `lidguard-core`). Nothing else names
//! an agent.

pub mod claude;
pub mod cline;
pub mod codex;
pub mod copilot;
pub mod cursor;
pub mod droid;
pub mod gemini;
mod hook_output;
pub mod kilo;
pub mod opencode;
pub mod qwen;

use lidguard_core::provider::Provider;

use crate::agent::Agent;

/// Every agent, in display order.
pub static AGENTS: &[&Agent] = &[
    &claude::AGENT,
    &codex::AGENT,
    &copilot::AGENT,
    &opencode::AGENT,
    &gemini::AGENT,
    &cursor::AGENT,
    &qwen::AGENT,
    &kilo::AGENT,
    &cline::AGENT,
    &droid::AGENT,
];

/// The entry of `provider`, `None` for providers that are not agents (`custom`, `mcp`).
pub fn agent(provider: Provider) -> Option<&'static Agent> {
    AGENTS.iter().copied().find(|a| a.provider == provider)
}

/// The agent whose hook subcommand is `command`.
pub fn by_hook_command(command: &str) -> Option<&'static Agent> {
    AGENTS.iter().copied().find(|a| a.hook_command == command)
}
