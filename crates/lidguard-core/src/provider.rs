//! The agent harnesses ("providers") lidguard tracks.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// An agent harness. Serialized as its lowercase CLI name (`claude`, `codex`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
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
    /// Sessions started by hand (`lidguard start --provider custom`) or by scripts.
    Custom,
    /// Model-driven sessions from `provider-mcp-server`; these are also keyed by provider name.
    Mcp,
}

impl Provider {
    /// Every provider, in display order.
    pub const ALL: [Provider; 6] = [
        Provider::Codex,
        Provider::Claude,
        Provider::Copilot,
        Provider::OpenCode,
        Provider::Custom,
        Provider::Mcp,
    ];

    /// The name used on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Codex => "codex",
            Provider::Claude => "claude",
            Provider::Copilot => "copilot",
            Provider::OpenCode => "opencode",
            Provider::Custom => "custom",
            Provider::Mcp => "mcp",
        }
    }

    /// Human name, for messages.
    pub fn display_name(self) -> &'static str {
        match self {
            Provider::Codex => "Codex CLI",
            Provider::Claude => "Claude Code",
            Provider::Copilot => "GitHub Copilot CLI",
            Provider::OpenCode => "OpenCode",
            Provider::Custom => "custom",
            Provider::Mcp => "Provider MCP",
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A provider name that is not one of [`Provider::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown provider `{0}`; expected one of codex, claude, copilot, opencode, custom, mcp")]
pub struct UnknownProvider(pub String);

impl FromStr for Provider {
    type Err = UnknownProvider;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        let provider = match lower.as_str() {
            "codex" => Provider::Codex,
            "claude" | "claude-code" => Provider::Claude,
            "copilot" | "github-copilot" | "githubcopilot" => Provider::Copilot,
            "opencode" => Provider::OpenCode,
            "custom" => Provider::Custom,
            "mcp" => Provider::Mcp,
            _ => return Err(UnknownProvider(s.to_owned())),
        };
        Ok(provider)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_from_str_and_serde() {
        for p in Provider::ALL {
            assert_eq!(p.as_str().parse::<Provider>().unwrap(), p);
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(json, format!("\"{}\"", p.as_str()));
        }
        assert!("gemini".parse::<Provider>().is_err());
    }
}
