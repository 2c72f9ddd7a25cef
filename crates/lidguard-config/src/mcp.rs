//! lidguard's `mcp-server` in each agent's MCP config, and Provider MCP entries in any JSON
//! config with an `mcpServers` object.
// Dispatch on agents is exhaustive: a new agent must be a compile error here, never a fallback.
#![deny(clippy::wildcard_enum_match_arm)]

use std::path::{Path, PathBuf};

use lidguard_core::provider::Provider;
use lidguard_providers::agent;
use lidguard_providers::agent::McpFile;
use lidguard_providers::install::mcp::{self as edits, JsonEntry, McpStatus};
use lidguard_providers::install::{Change, InstallError, InstallState};
use serde::Serialize;

use crate::agents::Location;
use crate::file::{self, Direction, Options, Outcome, Planned};
use crate::{ConfigError, read_optional};

/// The agent's MCP file and lidguard's entry in it.
fn entry(p: Provider) -> Result<&'static McpFile, ConfigError> {
    agent(p)
        .and_then(|a| a.mcp)
        .ok_or(ConfigError::NotManaged(p))
}

/// The tag that keeps backups and receipts of `p`'s MCP config apart.
fn tag(p: Provider) -> String {
    format!("mcp-{}", p.as_str())
}

/// What a remove did when the entry of lidguard's name is not lidguard's: nothing, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Removed {
    /// The edit.
    Done(Outcome),
    /// The entry of that name is the user's; it was left alone.
    LeftAlone {
        /// The file.
        file: PathBuf,
        /// What it runs.
        reason: String,
    },
}

/// What the file would be without lidguard's entry, for the install's receipt; `None` when the
/// entry there runs another lidguard (a build of the user's elsewhere), which install refreshes
/// and remove then puts back as it was.
fn without_ours(
    text: &str,
    removal: Result<Change, InstallError>,
) -> Result<Option<Option<String>>, InstallError> {
    match removal {
        Ok(change) => Ok(Some(file::left_after(text, change))),
        Err(InstallError::Foreign { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// `mcp-install` for `p` at `location`; `exe` is the lidguard executable the entry runs.
pub fn install(
    places: &lidguard_ipc::Places,
    p: Provider,
    location: &Location,
    exe: &str,
    options: Options,
) -> Result<Outcome, ConfigError> {
    let a = entry(p)?;
    file::apply(
        places,
        &tag(p),
        &location.file,
        Direction::Install,
        options,
        |existing, _| {
            let ours = a
                .status(existing, exe)
                .is_ok_and(|s| s.state != InstallState::Missing && !s.foreign);
            let without_ours = match existing {
                Some(text) if ours => without_ours(text, a.remove(text, exe, None))?,
                _ => None,
            };
            Ok(Planned {
                change: a.install(existing, exe, options.force)?,
                without_ours,
            })
        },
    )
}

/// `mcp-remove` for `p` at `location`.
pub fn remove(
    places: &lidguard_ipc::Places,
    p: Provider,
    location: &Location,
    exe: &str,
    options: Options,
) -> Result<Removed, ConfigError> {
    let a = entry(p)?;
    let result = file::apply(
        places,
        &tag(p),
        &location.file,
        Direction::Remove,
        options,
        |existing, before| {
            Ok(Planned::change(match existing {
                None => Change::Unchanged,
                Some(text) => a.remove(text, exe, before)?,
            }))
        },
    );
    left_alone(result)
}

/// A refusal because the entry is the user's becomes "left alone"; other errors stay errors.
fn left_alone(result: Result<Outcome, ConfigError>) -> Result<Removed, ConfigError> {
    match result {
        Ok(outcome) => Ok(Removed::Done(outcome)),
        Err(ConfigError::Refused {
            file,
            source: InstallError::Foreign { path, message },
        }) => Ok(Removed::LeftAlone {
            file,
            reason: format!("{path} {message}"),
        }),
        Err(e) => Err(e),
    }
}

/// What `mcp-status` found for one agent (or Provider MCP entry).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The agent (`mcp-status`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The server name (`provider-mcp-status`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The config file.
    pub file: PathBuf,
    /// When the file is a link: the file its bytes are in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edited: Option<PathBuf>,
    /// Why it was not looked at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// `installed`, `missing`, `drifted` or `unreadable`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<&'static str>,
    /// Differences from what install writes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drift: Option<Vec<String>>,
    /// Facts about the file (a key written twice).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Why it is unreadable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Whether the agent reads lidguard's entry as install writes it.
    #[serde(skip)]
    pub healthy: bool,
}

impl Report {
    fn at(file: &Path) -> Report {
        let edited = lidguard_files::edit::Target::resolve(file)
            .ok()
            .filter(|t| t.is_link())
            .map(|t| t.real);
        Report {
            provider: None,
            server: None,
            file: file.to_owned(),
            edited,
            skipped: None,
            state: None,
            drift: None,
            warnings: Vec::new(),
            error: None,
            healthy: true,
        }
    }

    /// The report of an agent left out of `all`.
    pub fn skipped(p: Provider, file: &Path, reason: String) -> Report {
        Report {
            provider: Some(p.as_str().to_owned()),
            skipped: Some(reason),
            ..Report::at(file)
        }
    }

    fn fill(mut self, found: Result<McpStatus, ConfigError>) -> Report {
        match found {
            Ok(s) => {
                self.healthy = s.state == InstallState::Installed;
                self.state = Some(s.state.as_str());
                self.drift = Some(s.drift);
                self.warnings = s.warnings;
            }
            Err(e) => {
                self.healthy = false;
                self.state = Some("unreadable");
                self.error = Some(if let ConfigError::Refused { source, .. } = &e {
                    source.to_string()
                } else {
                    e.to_string()
                });
            }
        }
        self
    }
}

/// `mcp-status` for `p` at `location`: the entry the agent will actually read.
pub fn status(p: Provider, location: &Location, exe: &str) -> Report {
    let report = Report {
        provider: Some(p.as_str().to_owned()),
        ..Report::at(&location.file)
    };
    let found = entry(p).and_then(|a| {
        let existing = read_optional(&location.file)?;
        a.status(existing.as_deref(), exe)
            .map_err(|source| ConfigError::Refused {
                file: location.file.clone(),
                source,
            })
    });
    report.fill(found)
}

/// A Provider MCP entry: which server name and `--provider-name`.
#[derive(Clone, Debug)]
pub struct ProviderEntry {
    /// The server's name in `mcpServers`.
    pub server: String,
    /// The `--provider-name` it passes (`None` for status: the one in the file).
    pub provider_name: Option<String>,
}

pub(crate) fn provider_json(entry: &ProviderEntry, existing: Option<&str>, exe: &str) -> JsonEntry {
    let name = entry.provider_name.clone().unwrap_or_else(|| {
        existing
            .and_then(|text| edits::provider_name_in(text, &entry.server))
            .unwrap_or_default()
    });
    JsonEntry::provider(exe, &name, &entry.server)
}

/// `provider-mcp-install` into `file`.
pub fn provider_install(
    places: &lidguard_ipc::Places,
    file: &Path,
    entry: &ProviderEntry,
    exe: &str,
    options: Options,
) -> Result<Outcome, ConfigError> {
    file::apply(
        places,
        "provider-mcp",
        file,
        Direction::Install,
        options,
        |existing, _| {
            let json = provider_json(entry, existing, exe);
            let ours = edits::status_json(existing, &json)
                .is_ok_and(|s| s.state != InstallState::Missing && !s.foreign);
            let without_ours = match existing {
                Some(text) if ours => without_ours(text, edits::remove_json(text, &json, None))?,
                _ => None,
            };
            Ok(Planned {
                change: edits::install_json(existing, &json, options.force)?,
                without_ours,
            })
        },
    )
}

/// `provider-mcp-remove` from `file`.
pub fn provider_remove(
    places: &lidguard_ipc::Places,
    file: &Path,
    entry: &ProviderEntry,
    exe: &str,
    options: Options,
) -> Result<Removed, ConfigError> {
    left_alone(file::apply(
        places,
        "provider-mcp",
        file,
        Direction::Remove,
        options,
        |existing, before| {
            Ok(Planned::change(match existing {
                None => Change::Unchanged,
                Some(text) => {
                    edits::remove_json(text, &provider_json(entry, Some(text), exe), before)?
                }
            }))
        },
    ))
}

/// `provider-mcp-status` of `file`.
pub fn provider_status(file: &Path, entry: &ProviderEntry, exe: &str) -> Report {
    let report = Report {
        server: Some(entry.server.clone()),
        ..Report::at(file)
    };
    let found = read_optional(file).and_then(|existing| {
        let json = provider_json(entry, existing.as_deref(), exe);
        edits::status_json(existing.as_deref(), &json).map_err(|source| ConfigError::Refused {
            file: file.to_owned(),
            source,
        })
    });
    report.fill(found)
}
