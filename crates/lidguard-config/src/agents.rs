//! Which agents' configs lidguard manages and where each keeps the files it edits.

use std::ffi::OsString;
use std::path::PathBuf;

use lidguard_core::provider::Provider;
use lidguard_providers::install::{copilot, opencode};

use crate::ConfigError;

/// The agents whose config lidguard manages, in display order.
pub const MANAGED: [Provider; 4] = [
    Provider::Claude,
    Provider::Codex,
    Provider::Copilot,
    Provider::OpenCode,
];

/// Where an agent keeps the file lidguard edits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The agent's config directory; `all` only includes agents whose directory exists.
    pub root: PathBuf,
    /// The file lidguard edits.
    pub file: PathBuf,
}

/// Reads an environment variable (injectable for tests).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<OsString>;

/// A variable's value as a path, when set and not empty.
fn set(var: Env<'_>, name: &str) -> Option<PathBuf> {
    var(name).filter(|v| !v.is_empty()).map(PathBuf::from)
}

fn home(var: Env<'_>) -> Result<PathBuf, ConfigError> {
    set(var, "HOME")
        .or_else(std::env::home_dir)
        .ok_or(ConfigError::NoHome)
}

/// The hook config of `provider`, honouring each agent's own override variable. Sources:
/// Claude `CLAUDE_CONFIG_DIR` (<https://docs.anthropic.com/en/docs/claude-code/settings>),
/// Codex `CODEX_HOME` (`docs/config.md` in <https://github.com/openai/codex>), Copilot
/// `COPILOT_HOME` (`copilot help environment`, 1.0.102), OpenCode `OPENCODE_CONFIG_DIR` and
/// the XDG config directory (<https://opencode.ai/docs/config/>; it loads `plugins/` from
/// both). The e2e suite (tests/e2e/verify) runs each real CLI against these locations.
pub fn hooks(provider: Provider, var: Env<'_>) -> Result<Location, ConfigError> {
    let dir = |name: &str, fallback: &dyn Fn() -> Result<PathBuf, ConfigError>| match set(var, name)
    {
        Some(v) => Ok(v),
        None => fallback(),
    };
    Ok(match provider {
        Provider::Claude => {
            let root = dir("CLAUDE_CONFIG_DIR", &|| Ok(home(var)?.join(".claude")))?;
            Location {
                file: root.join("settings.json"),
                root,
            }
        }
        Provider::Codex => {
            let root = dir("CODEX_HOME", &|| Ok(home(var)?.join(".codex")))?;
            Location {
                file: root.join("hooks.json"),
                root,
            }
        }
        Provider::Copilot => {
            let root = dir("COPILOT_HOME", &|| Ok(home(var)?.join(".copilot")))?;
            Location {
                file: root.join("hooks").join(copilot::FILE_NAME),
                root,
            }
        }
        Provider::OpenCode => {
            let root = dir("OPENCODE_CONFIG_DIR", &|| {
                Ok(dir("XDG_CONFIG_HOME", &|| Ok(home(var)?.join(".config")))?.join("opencode"))
            })?;
            Location {
                file: root.join("plugins").join(opencode::FILE_NAME),
                root,
            }
        }
        other => return Err(ConfigError::NotManaged(other)),
    })
}

/// The MCP config of `provider`, honouring each agent's override variables. Sources: Claude
/// keeps user-scope servers in `.claude.json` in the home directory, or in `CLAUDE_CONFIG_DIR`
/// when set (observed: `claude mcp add --scope user` 2.1.332 writes there); Codex
/// `CODEX_HOME/config.toml`; Copilot `COPILOT_HOME/mcp-config.json` (`copilot mcp --help`
/// 1.0.102); OpenCode `OPENCODE_CONFIG`, else `opencode.json` or `opencode.jsonc` in its config
/// directory (<https://opencode.ai/docs/config/>).
pub fn mcp(provider: Provider, var: Env<'_>) -> Result<Location, ConfigError> {
    Ok(match provider {
        Provider::Claude => match set(var, "CLAUDE_CONFIG_DIR") {
            Some(dir) => Location {
                file: dir.join(".claude.json"),
                root: dir,
            },
            None => Location {
                root: home(var)?.join(".claude"),
                file: home(var)?.join(".claude.json"),
            },
        },
        Provider::Codex => {
            let root =
                set(var, "CODEX_HOME").map_or_else(|| home(var).map(|h| h.join(".codex")), Ok)?;
            Location {
                file: root.join("config.toml"),
                root,
            }
        }
        Provider::Copilot => {
            let root = set(var, "COPILOT_HOME")
                .map_or_else(|| home(var).map(|h| h.join(".copilot")), Ok)?;
            Location {
                file: root.join("mcp-config.json"),
                root,
            }
        }
        Provider::OpenCode => {
            let root = match set(var, "OPENCODE_CONFIG_DIR") {
                Some(dir) => dir,
                None => set(var, "XDG_CONFIG_HOME")
                    .map_or_else(|| home(var).map(|h| h.join(".config")), Ok)?
                    .join("opencode"),
            };
            let file = match set(var, "OPENCODE_CONFIG") {
                Some(file) => file,
                None => {
                    let json = root.join("opencode.json");
                    let jsonc = root.join("opencode.jsonc");
                    if !json.exists() && jsonc.exists() {
                        jsonc
                    } else {
                        json
                    }
                }
            };
            Location { root, file }
        }
        other => return Err(ConfigError::NotManaged(other)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
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
