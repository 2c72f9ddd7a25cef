//! Codex CLI: hooks in `hooks.json` (trusted one by one in `config.toml`), MCP servers in
//! `config.toml`, transcripts under `sessions/`. The contract lidguard relies on, with its
//! sources: `README.md` here.

mod dialect;
pub mod install;
pub mod mcp;
mod transcript;
pub mod trust;

use crate::agent::{
    Agent, AgentSetting, Env, HookFile, Location, McpEntry, McpFile, Snippet, TrustRecords,
    config_dir,
};
use lidguard_core::provider::Provider;

pub use dialect::{parse, render, render_continuation};
pub use transcript::USER_INPUT_PENDING;

/// Codex CLI's entry.
pub static AGENT: Agent = Agent {
    provider: Provider::Codex,
    hook_command: "codex-hook",
    hook_help: "Codex CLI hook: reads the hook payload on stdin (installed by `hook-install`)",
    event_on_command_line: false,
    parse: dialect::parse,
    render: dialect::render,
    render_continuation: dialect::render_continuation,
    is_owner,
    hooks: &HOOKS,
    mcp: Some(&MCP),
    transcript: Some(&transcript::RULES),
    snippet_command: "codex-hooks",
    snippets: &[
        Snippet {
            format: "hooks-json",
            help: "Codex's hooks.json",
            print: install::snippet,
        },
        Snippet {
            format: "config-toml",
            help: "The same hooks in config.toml form",
            print: install::config_toml_snippet,
        },
    ],
    keep_awake: Some(AgentSetting {
        file: |location| location.root.join("config.toml"),
        read: trust::codex_keep_awake,
    }),
    permission_mode: None,
};

static HOOKS: HookFile = HookFile {
    locate: hooks_location,
    install: install::install,
    remove: install::remove,
    status: install::status,
    timeouts: true,
    evidence: install::REQUIRED_EVENTS,
    related: None,
    trust: Some(TrustRecords {
        file: |location| location.root.join("config.toml"),
        key_path: trust_key_path,
        check: trust::codex_trust,
        record: trust::codex_trust_lidguard,
    }),
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
    let root = config_dir(var, "CODEX_HOME", ".codex")?;
    Some(Location {
        file: root.join("hooks.json"),
        root,
    })
}

/// `config.toml` in the same directory.
fn mcp_location(var: Env<'_>) -> Option<Location> {
    let root = config_dir(var, "CODEX_HOME", ".codex")?;
    Some(Location {
        file: root.join("config.toml"),
        root,
    })
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
    let (name, cmd, wrapper) = crate::owner::parts(name, cmdline);
    name == "codex"
        || name.starts_with("codex-")
        || (wrapper && cmd.contains("node_modules") && cmd.contains("codex"))
}
