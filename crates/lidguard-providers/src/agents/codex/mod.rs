//! Codex CLI: hooks in `hooks.json` (trusted one by one in `config.toml`), MCP servers in
//! `config.toml`, transcripts under `sessions/`. The contract lidguard relies on, with its
//! sources: `README.md` here.

mod dialect;
pub mod install;
pub mod mcp;
mod transcript;
pub mod trust;

use crate::agent::{
    Agent, AgentSetting, Env, HookFile, Location, McpEntry, McpFile, Snippet, SnippetText,
    TrustRecords, config_dir,
};
use lidguard_core::provider::Provider;

pub use dialect::{parse, render, render_continuation};
pub use transcript::USER_INPUT_PENDING;

/// Codex CLI's entry.
pub static AGENT: Agent = Agent {
    mcp: Some(&MCP),
    transcript: Some(&transcript::RULES),
    snippets: &[
        Snippet::hook_file("hooks-json", "Codex's hooks.json"),
        Snippet {
            format: "config-toml",
            help: "The same hooks in config.toml form",
            text: SnippetText::Own(install::config_toml_snippet),
        },
    ],
    keep_awake: Some(AgentSetting {
        file: |location| location.root.join("config.toml"),
        read: trust::codex_keep_awake,
    }),
    ..Agent::new(
        Provider::Codex,
        ["codex-hook", "codex-hooks"],
        dialect::DIALECT,
        is_owner,
        &HOOKS,
    )
};

static HOOKS: HookFile = HookFile {
    trust: Some(TrustRecords {
        file: |location| location.root.join("config.toml"),
        key_path: trust_key_path,
        check: trust::codex_trust,
        record: trust::codex_trust_lidguard,
        forget: trust::codex_forget_lidguard,
    }),
    ..HookFile::json(hooks_location, &install::SPEC)
};

static MCP: McpFile = McpFile {
    locate: mcp_location,
    entry: McpEntry::Own {
        install: mcp::install_codex,
        remove: |text, exe, before| mcp::remove_codex(text, exe, before),
        status: mcp::status_codex,
    },
};

/// `hooks.json` in `$CODEX_HOME`, else `~/.codex` (`docs/config.md` in
/// <https://github.com/openai/codex>).
fn hooks_location(var: Env<'_>) -> Option<Location> {
    config_dir(var, "CODEX_HOME", ".codex").map(|root| Location::inside(root, "hooks.json"))
}

/// `config.toml` in the same directory.
fn mcp_location(var: Env<'_>) -> Option<Location> {
    config_dir(var, "CODEX_HOME", ".codex").map(|root| Location::inside(root, "config.toml"))
}

/// Codex's path for `hooks.json` in its trust records: the config directory with symlinks
/// resolved, the file name as is (captured: tests/fixtures/codex/trust/).
fn trust_key_path(location: &Location) -> String {
    let root = location
        .root
        .canonicalize()
        .unwrap_or_else(|_| location.root.clone());
    root.join("hooks.json").display().to_string()
}

/// The CLI (`codex`), the Codex App server (`codex app-server`), or node wrappers that run the
/// npm package.
fn is_owner(name: &str, cmdline: &str) -> bool {
    let (name, cmd, wrapper) = crate::evidence::parts(name, cmdline);
    name == "codex"
        || name.starts_with("codex-")
        || (wrapper && cmd.contains("node_modules") && cmd.contains("codex"))
}
