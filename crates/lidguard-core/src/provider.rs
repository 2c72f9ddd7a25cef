//! The agent harnesses ("providers") lidguard tracks.
// Dispatch on agents is exhaustive: a new agent must be a compile error here, never a fallback.
#![deny(clippy::wildcard_enum_match_arm)]

use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// An agent harness. Serialized as its lowercase CLI name (`claude`, `codex`, ...).
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    strum::VariantArray,
)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// OpenAI Codex CLI.
    Codex,
    /// Anthropic Claude Code.
    Claude,
    /// GitHub Copilot CLI.
    Copilot,
    /// OpenCode.
    #[serde(rename = "opencode")]
    OpenCode,
    /// Google Gemini CLI.
    Gemini,
    /// Cursor (the editor's agent and its CLI).
    Cursor,
    /// Qwen Code.
    Qwen,
    /// Kilo CLI (OpenCode's fork).
    Kilo,
    /// Cline CLI.
    Cline,
    /// Factory Droid (its CLI, `droid`).
    Droid,
    /// Sessions started by hand (`lidguard start --provider custom`) or by scripts.
    Custom,
    /// Model-driven sessions from `provider-mcp-server`; these are also keyed by provider name.
    Mcp,
}

impl Provider {
    /// Every provider, in display order.
    pub const ALL: &'static [Provider] = <Provider as strum::VariantArray>::VARIANTS;

    /// Every name of the provider, in one place (an exhaustive match: a new variant is a
    /// compile error here until it has its names).
    fn names(self) -> Names {
        let (cli, display, webhook, aliases): (_, _, _, &[&str]) = match self {
            Provider::Codex => ("codex", "Codex CLI", "Codex", &[]),
            Provider::Claude => ("claude", "Claude Code", "Claude", &["claude-code"]),
            Provider::Copilot => (
                "copilot",
                "GitHub Copilot CLI",
                "GitHubCopilot",
                &["github-copilot", "githubcopilot"],
            ),
            Provider::OpenCode => ("opencode", "OpenCode", "OpenCode", &[]),
            Provider::Gemini => ("gemini", "Gemini CLI", "Gemini", &["gemini-cli"]),
            Provider::Cursor => ("cursor", "Cursor", "Cursor", &["cursor-agent"]),
            Provider::Qwen => ("qwen", "Qwen Code", "Qwen", &["qwen-code"]),
            Provider::Kilo => ("kilo", "Kilo CLI", "Kilo", &["kilocode", "kilo-code"]),
            Provider::Cline => ("cline", "Cline CLI", "Cline", &["cline-cli"]),
            Provider::Droid => (
                "droid",
                "Factory Droid",
                "FactoryDroid",
                &["factory", "factory-droid"],
            ),
            Provider::Custom => ("custom", "custom", "Custom", &[]),
            Provider::Mcp => ("mcp", "Provider MCP", "Mcp", &[]),
        };
        Names {
            cli,
            display,
            webhook,
            aliases,
        }
    }

    /// The name used on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        self.names().cli
    }

    /// Human name, for messages.
    pub fn display_name(self) -> &'static str {
        self.names().display
    }

    /// Other spellings the command line accepts (`claude-code`).
    pub fn aliases(self) -> &'static [&'static str] {
        self.names().aliases
    }

    /// The name webhook payloads carry in their `provider` field: the reference system's
    /// `AgentProvider` names, so receivers written for it keep working.
    pub fn webhook_name(self) -> &'static str {
        self.names().webhook
    }
}

struct Names {
    cli: &'static str,
    display: &'static str,
    webhook: &'static str,
    /// Other spellings `--provider` accepts.
    aliases: &'static [&'static str],
}

display_as!(Provider, as_str);

/// A provider name that is not one of [`Provider::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown provider `{0}`; expected one of {list}", list = all_names())]
pub struct UnknownProvider(pub String);

fn all_names() -> String {
    let names: Vec<&str> = Provider::ALL.iter().map(|p| p.as_str()).collect();
    names.join(", ")
}

impl FromStr for Provider {
    type Err = UnknownProvider;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        Provider::ALL
            .iter()
            .copied()
            .find(|p| {
                let names = p.names();
                names.cli == lower || names.aliases.contains(&lower.as_str())
            })
            .ok_or_else(|| UnknownProvider(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_from_str_and_serde() {
        for &p in Provider::ALL {
            assert_eq!(p.as_str().parse::<Provider>().unwrap(), p);
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(json, format!("\"{}\"", p.as_str()));
        }
        assert_eq!("Claude-Code".parse::<Provider>().unwrap(), Provider::Claude);
        let err = "nope".parse::<Provider>().unwrap_err().to_string();
        assert!(err.contains("codex, claude"), "{err}");
    }
}
