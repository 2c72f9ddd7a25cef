//! Which agents' configs lidguard manages and where each keeps the files it edits: the agent
//! table's (`lidguard_providers::AGENTS`) locations, with the errors a command reports.
// Dispatch on agents is exhaustive: a new agent must be a compile error here, never a fallback.
#![deny(clippy::wildcard_enum_match_arm)]

use lidguard_core::provider::Provider;
use lidguard_providers::{AGENTS, agent};

pub use lidguard_providers::agent::{Env, Location};

use crate::ConfigError;

/// The agents whose config lidguard manages, in display order.
pub fn managed() -> Vec<Provider> {
    AGENTS.iter().map(|a| a.provider).collect()
}

/// The hook config of `provider`, honouring the agent's own override variables.
pub fn hooks(provider: Provider, var: Env<'_>) -> Result<Location, ConfigError> {
    let agent = agent(provider).ok_or(ConfigError::NotManaged(provider))?;
    (agent.hooks.locate)(var).ok_or(ConfigError::NoHome)
}

/// The MCP config of `provider`, honouring the agent's own override variables.
pub fn mcp(provider: Provider, var: Env<'_>) -> Result<Location, ConfigError> {
    let mcp = agent(provider)
        .and_then(|a| a.mcp)
        .ok_or(ConfigError::NotManaged(provider))?;
    (mcp.locate)(var).ok_or(ConfigError::NoHome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::ffi::OsString;
    use std::path::Path;

    #[test]
    fn locations_follow_each_agents_variables() {
        let env: HashMap<&str, &str> = [
            ("HOME", "/h"),
            ("CODEX_HOME", "/c"),
            ("XDG_CONFIG_HOME", "/x"),
        ]
        .into();
        let var = |n: &str| env.get(n).map(OsString::from);
        assert_eq!(
            hooks(Provider::Claude, &var).unwrap().file,
            Path::new("/h/.claude/settings.json")
        );
        assert_eq!(
            hooks(Provider::Codex, &var).unwrap().file,
            Path::new("/c/hooks.json")
        );
        assert_eq!(
            hooks(Provider::Copilot, &var).unwrap().file,
            Path::new("/h/.copilot/hooks/lidguard-copilot-cli.json")
        );
        assert_eq!(
            hooks(Provider::OpenCode, &var).unwrap().file,
            Path::new("/x/opencode/plugins/lidguard.js")
        );
        assert_eq!(
            mcp(Provider::Claude, &var).unwrap().file,
            Path::new("/h/.claude.json")
        );
        assert_eq!(
            mcp(Provider::Codex, &var).unwrap().file,
            Path::new("/c/config.toml")
        );
        let env2: HashMap<&str, &str> = [
            ("HOME", "/h"),
            ("OPENCODE_CONFIG_DIR", "/o"),
            ("CLAUDE_CONFIG_DIR", "/cc"),
        ]
        .into();
        let var2 = |n: &str| env2.get(n).map(OsString::from);
        assert_eq!(
            hooks(Provider::OpenCode, &var2).unwrap().file,
            Path::new("/o/plugins/lidguard.js")
        );
        assert_eq!(
            hooks(Provider::Claude, &var2).unwrap().root,
            Path::new("/cc")
        );
        assert_eq!(
            mcp(Provider::Claude, &var2).unwrap().file,
            Path::new("/cc/.claude.json")
        );
        assert!(hooks(Provider::Mcp, &var2).is_err());
    }
}
