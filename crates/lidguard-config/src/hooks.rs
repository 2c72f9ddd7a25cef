//! lidguard's hook entries in each agent's config: install, remove, status, and the refresh of
//! their timeouts when the settings change.
// Dispatch on agents is exhaustive: a new agent must be a compile error here, never a fallback.
#![deny(clippy::wildcard_enum_match_arm)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use lidguard_core::provider::Provider;
use lidguard_providers::agent::Agent;
use lidguard_providers::install::{Change, HookCommand, InstallState};
use lidguard_providers::{AGENTS, agent};
use serde::Serialize;

use crate::agents::{self, Env, Location};
use crate::event_files;
use crate::file::{self, Direction, Options, Outcome, Planned};
use crate::{ConfigError, read_optional};

/// What the managed hook entries run and how long the agents give them.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The command.
    pub cmd: HookCommand,
    /// The timeout in seconds (the settings' managed hook timeout).
    pub timeout: u32,
}

/// Hook events received, by (provider, event): how many and when last (from the store).
pub type Receipts = BTreeMap<(String, String), (u64, Timestamp)>;

/// The agent table's entry for `p` (every caller got `p` from the table or its locations).
fn entry(p: Provider) -> Result<&'static Agent, ConfigError> {
    agent(p).ok_or(ConfigError::NotManaged(p))
}

/// Whether `existing` already holds lidguard's entries (any state but missing).
fn has_ours(a: &Agent, existing: Option<&str>, setup: &Setup) -> bool {
    a.hooks
        .status(existing, &setup.cmd, setup.timeout)
        .is_ok_and(|s| s.state != InstallState::Missing)
}

/// What `hook-install` did for one agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Installed {
    /// The hook file (one per event for an agent whose hooks are a directory of files).
    pub outcomes: Vec<Outcome>,
    /// Codex only: its trust records.
    pub trust: Option<Trust>,
}

/// Codex's trust of lidguard's entries after an install.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trust {
    /// lidguard recorded them as trusted (`--trust-codex-hooks`) in `config.toml`.
    Recorded(Outcome),
    /// Codex will skip these until the user trusts them in `/hooks`.
    Untrusted(Vec<String>),
}

/// `hook-install` for `p` at `location`. With `trust_codex`, lidguard's Codex entries are also
/// recorded as trusted in Codex's `config.toml`.
pub fn install(
    places: &lidguard_ipc::Places,
    p: Provider,
    location: &Location,
    setup: &Setup,
    options: Options,
    trust_codex: bool,
) -> Result<Installed, ConfigError> {
    let a = entry(p)?;
    if let Some(files) = a.hooks.event_files() {
        let dir = event_files::EventDir {
            a,
            files,
            dir: &location.file,
            cmd: &setup.cmd,
        };
        let outcomes = dir.install(places, options)?;
        return Ok(Installed {
            outcomes,
            trust: None,
        });
    }
    refuse_silencing(a, location)?;
    let outcome = file::apply(
        places,
        p.as_str(),
        &location.file,
        Direction::Install,
        options,
        |existing, _| {
            let without_ours = match existing {
                Some(text) if has_ours(a, existing, setup) => Some(file::left_after(
                    text,
                    a.hooks.remove(text, &setup.cmd, None)?,
                )),
                _ => None,
            };
            Ok(Planned {
                change: a.hooks.install(existing, &setup.cmd, setup.timeout)?,
                without_ours,
            })
        },
    )?;
    let trust = match outcome.text.as_deref() {
        Some(hooks) => trust_step(places, a, location, hooks, &setup.cmd, trust_codex, options)?,
        None => None,
    };
    Ok(Installed {
        outcomes: vec![outcome],
        trust,
    })
}

/// Refuses an install that would make the agent stop running hooks of the user's in another
/// file ([`lidguard_providers::agent::Shadows`]).
fn refuse_silencing(a: &Agent, location: &Location) -> Result<(), ConfigError> {
    let Some(shadows) = &a.hooks.shadows else {
        return Ok(());
    };
    let hooks = read_optional(&location.file)?;
    for path in (shadows.files)(location) {
        if let Some(text) = read_optional(&path)?
            && let Some(why) = (shadows.check)(hooks.as_deref(), &path, &text)
        {
            return Err(ConfigError::Silences { file: path, why });
        }
    }
    Ok(())
}

/// `hook-remove` for `p` at `location` (one outcome per file).
pub fn remove(
    places: &lidguard_ipc::Places,
    p: Provider,
    location: &Location,
    cmd: &HookCommand,
    options: Options,
) -> Result<Vec<Outcome>, ConfigError> {
    let a = entry(p)?;
    if let Some(files) = a.hooks.event_files() {
        let dir = event_files::EventDir {
            a,
            files,
            dir: &location.file,
            cmd,
        };
        return dir.remove(places, options);
    }
    // The trust records name the entries by their place in the hook file: taken away first,
    // while the entries are still there to name them.
    let mut untrusted = None;
    if let (Some(records), Some(hooks_text)) = (&a.hooks.trust, read_optional(&location.file)?) {
        let key_path = (records.key_path)(location);
        let outcome = file::apply(
            places,
            &trust_tag(a),
            &(records.file)(location),
            Direction::Remove,
            options,
            |existing, _| {
                Ok(Planned::change((records.forget)(
                    &key_path,
                    &hooks_text,
                    existing,
                    cmd,
                )?))
            },
        )?;
        untrusted = Some(outcome).filter(|o| o.action != crate::Action::Unchanged);
    }
    let hooks = file::apply(
        places,
        p.as_str(),
        &location.file,
        Direction::Remove,
        options,
        |existing, before| {
            Ok(Planned::change(match existing {
                None => Change::Unchanged,
                Some(text) => a.hooks.remove(text, cmd, before)?,
            }))
        },
    )?;
    Ok(std::iter::once(hooks).chain(untrusted).collect())
}

/// The receipt tag of an agent's trust records (`codex-trust`).
fn trust_tag(a: &Agent) -> String {
    format!("{}-trust", a.provider.as_str())
}

/// After an install into an agent that keeps trust records (Codex): with `write`, record
/// lidguard's entries as trusted (the same safe edit as any other); without it, say which
/// entries the agent will skip. Agents without trust records: nothing.
fn trust_step(
    places: &lidguard_ipc::Places,
    a: &Agent,
    location: &Location,
    hooks_text: &str,
    cmd: &HookCommand,
    write: bool,
    options: Options,
) -> Result<Option<Trust>, ConfigError> {
    let Some(records) = &a.hooks.trust else {
        return Ok(None);
    };
    let config = (records.file)(location);
    let key_path = (records.key_path)(location);
    if write {
        // With a receipt, so that remove gives the file back as it was (or no file).
        let outcome = file::apply(
            places,
            &trust_tag(a),
            &config,
            Direction::Install,
            options,
            |existing, _| {
                let forget = (records.forget)(&key_path, hooks_text, existing, cmd)?;
                Ok(Planned {
                    change: (records.record)(&key_path, hooks_text, existing, cmd)?,
                    without_ours: match (existing, forget) {
                        (_, Change::Unchanged) | (None, _) => None,
                        (Some(text), forget) => Some(file::left_after(text, forget)),
                    },
                })
            },
        )?;
        return Ok(Some(Trust::Recorded(outcome)));
    }
    let existing = read_optional(&config)?;
    let trust =
        (records.check)(&key_path, hooks_text, existing.as_deref(), cmd).map_err(|source| {
            ConfigError::Refused {
                file: config.clone(),
                source,
            }
        })?;
    let skipped: Vec<String> = trust.untrusted.into_iter().chain(trust.stale).collect();
    Ok((!skipped.is_empty()).then_some(Trust::Untrusted(skipped)))
}

/// One hook event and whether it has arrived.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Evidence {
    /// The event name.
    pub event: String,
    /// Whether lidguard has received it.
    pub observed: bool,
    /// How many times.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// When last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_seen: Option<Timestamp>,
}

/// Another tool's hook that can block or answer where lidguard does.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Foreign {
    /// The event.
    pub event: String,
    /// Its matcher.
    pub matcher: Option<String>,
    /// The handler type.
    #[serde(rename = "type")]
    pub handler_type: String,
    /// What it runs.
    pub summary: String,
    /// The file it is in, when not the one the report is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
}

/// Codex's trust records, as `hook-status` shows them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TrustReport {
    /// Codex runs them.
    pub trusted: Vec<String>,
    /// Codex skips them: never trusted.
    pub untrusted: Vec<String>,
    /// Codex skips them: changed since trusted.
    pub stale: Vec<String>,
    /// Turned off in Codex's `/hooks`.
    pub disabled: Vec<String>,
}

/// What `hook-status` found for one agent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The agent.
    pub provider: String,
    /// Why it was not looked at (`all` and no config directory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// The hook file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// When the file is a link: the file its bytes are in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edited: Option<PathBuf>,
    /// `installed`, `missing`, `drifted`, `broken` (the program the entries run is gone) or
    /// `unreadable`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<&'static str>,
    /// Why it is unreadable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Required events without lidguard's entry.
    pub missing_events: Vec<String>,
    /// Differences from what install writes.
    pub drift: Vec<String>,
    /// Programs lidguard's entries run that are not there (moved or removed): the agent gets
    /// "not found" on every event and lidguard hears nothing.
    pub gone_programs: Vec<String>,
    /// Other tools' hooks that can block or answer where lidguard does.
    pub foreign_hooks: Vec<Foreign>,
    /// Facts that may stop the hooks from running.
    pub warnings: Vec<String>,
    /// Which events have arrived.
    pub evidence: Vec<Evidence>,
    /// The agent's own keep-awake setting, when on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_keep_awake: Option<String>,
    /// The agent's permission mode and what it means for the closed-lid policy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
    /// The agent version lidguard's entries need.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needs: Option<String>,
    /// Codex's trust records.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub codex_trust: Option<TrustReport>,
    /// Why Codex's trust records could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub codex_trust_error: Option<String>,
    /// Whether everything is as it should be (`hook-status` exits 1 otherwise).
    #[serde(skip)]
    pub healthy: bool,
}

impl Report {
    /// The agent's name as people know it (`Claude Code`).
    pub fn display_name(&self) -> &str {
        self.provider
            .parse::<Provider>()
            .map_or(self.provider.as_str(), |p| p.display_name())
    }

    fn new(p: Provider) -> Report {
        Report {
            provider: p.as_str().to_owned(),
            skipped: None,
            file: None,
            edited: None,
            state: None,
            error: None,
            missing_events: Vec::new(),
            drift: Vec::new(),
            gone_programs: Vec::new(),
            foreign_hooks: Vec::new(),
            warnings: Vec::new(),
            evidence: Vec::new(),
            agent_keep_awake: None,
            permission_mode: None,
            needs: None,
            codex_trust: None,
            codex_trust_error: None,
            healthy: true,
        }
    }

    /// The report of an agent left out of `all`.
    pub fn skipped(p: Provider, reason: String) -> Report {
        Report {
            skipped: Some(reason),
            ..Report::new(p)
        }
    }
}

/// `hook-status` for `p` at `location`: what the agent will actually read. `cwd` is where the
/// command runs (a Copilot repository's own hooks count there).
pub fn status(
    p: Provider,
    location: &Location,
    setup: &Setup,
    receipts: &Receipts,
    cwd: Option<&Path>,
) -> Report {
    let mut report = Report::new(p);
    report.file = Some(location.file.clone());
    if let Ok(target) = lidguard_files::edit::Target::resolve(&location.file)
        && target.is_link()
    {
        report.edited = Some(target.real);
    }
    if let Err(e) = fill_status(p, location, setup, receipts, cwd, &mut report) {
        report.healthy = false;
        report.state = Some("unreadable");
        report.error = Some(e.to_string());
    }
    report
}

fn fill_status(
    p: Provider,
    location: &Location,
    setup: &Setup,
    receipts: &Receipts,
    cwd: Option<&Path>,
    report: &mut Report,
) -> Result<(), ConfigError> {
    let a = entry(p)?;
    let (existing, status) = match a.hooks.event_files() {
        Some(files) => (
            None,
            event_files::EventDir {
                a,
                files,
                dir: &location.file,
                cmd: &setup.cmd,
            }
            .status()?,
        ),
        None => {
            let existing = read_optional(&location.file)?;
            let status = a
                .hooks
                .status(existing.as_deref(), &setup.cmd, setup.timeout)
                .map_err(|source| ConfigError::Refused {
                    file: location.file.clone(),
                    source,
                })?;
            (existing, status)
        }
    };
    report.healthy = status.state == InstallState::Installed;
    report.state = Some(status.state.as_str());
    report.missing_events = status.missing_events;
    report.drift = status.drift;
    report.gone_programs = status
        .programs
        .into_iter()
        .filter(|p| Path::new(p).is_absolute() && !Path::new(p).is_file())
        .collect();
    if !report.gone_programs.is_empty() {
        // Not merely another lidguard's entries: the program they run is not there.
        report.state = Some("broken");
        report.healthy = false;
    }
    report.warnings = status.warnings;
    report.foreign_hooks = status
        .foreign_hooks
        .into_iter()
        .map(|f| Foreign {
            event: f.event,
            matcher: f.matcher,
            handler_type: f.handler_type,
            summary: f.summary,
            file: None,
        })
        .collect();
    report.evidence = a
        .hooks
        .evidence
        .iter()
        .map(|event| {
            let seen = receipts.get(&(p.as_str().to_owned(), (*event).to_owned()));
            Evidence {
                event: (*event).to_owned(),
                observed: seen.is_some(),
                count: seen.map(|(count, _)| *count),
                last_seen: seen.map(|(_, last)| *last),
            }
        })
        .collect();
    if let Some(related) = &a.hooks.related {
        related_files(report, location, &setup.cmd, cwd, related)?;
    }
    if let Some(keep_awake) = &a.keep_awake {
        let text = read_optional(&(keep_awake.file)(location))?;
        report.agent_keep_awake = (keep_awake.read)(text.as_deref());
    }
    if let Some(mode) = &a.permission_mode {
        let text = read_optional(&(mode.file)(location))?;
        report.permission_mode = (mode.read)(text.as_deref());
    }
    report.needs = a.needs.map(str::to_owned);
    if let (Some(records), Some(hooks)) = (&a.hooks.trust, existing.as_deref()) {
        let config = read_optional(&(records.file)(location))?;
        match (records.check)(
            &(records.key_path)(location),
            hooks,
            config.as_deref(),
            &setup.cmd,
        ) {
            Ok(t) => {
                report.healthy &= t.all_trusted();
                report.codex_trust = Some(TrustReport {
                    trusted: t.trusted,
                    untrusted: t.untrusted,
                    stale: t.stale,
                    disabled: t.disabled,
                });
            }
            Err(e) => {
                report.healthy = false;
                report.codex_trust_error = Some(e.to_string());
            }
        }
    }
    Ok(())
}

/// The other files whose hooks the agent runs next to lidguard's: their conflicting hooks
/// join `foreign_hooks` with the file named; lidguard entries in them and unreadable files
/// become warnings.
fn related_files(
    report: &mut Report,
    location: &Location,
    cmd: &HookCommand,
    cwd: Option<&Path>,
    related: &lidguard_providers::agent::RelatedHooks,
) -> Result<(), ConfigError> {
    for path in (related.files)(location, cwd) {
        let Some(text) = read_optional(&path)? else {
            continue;
        };
        match (related.scan)(&text, cmd) {
            Ok((theirs, ours)) => {
                report
                    .foreign_hooks
                    .extend(theirs.into_iter().map(|f| Foreign {
                        event: f.event,
                        matcher: f.matcher,
                        handler_type: f.handler_type,
                        summary: f.summary,
                        file: Some(path.clone()),
                    }));
                report.warnings.extend(ours.into_iter().map(|event| {
                    format!(
                        "{} also runs lidguard on {event}: the event reaches lidguard twice",
                        path.display()
                    )
                }));
            }
            Err(e) => report.warnings.push(format!(
                "{} not checked for conflicting hooks: {e}",
                path.display()
            )),
        }
    }
    Ok(())
}

/// What a timeout refresh did for one agent.
#[derive(Debug)]
pub struct Refreshed {
    /// The agent.
    pub provider: Provider,
    /// The hook file's edit (`Ok(None)`: nothing to refresh there).
    pub result: Result<Option<Refresh>, ConfigError>,
}

/// A refreshed hook file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refresh {
    /// The edit.
    pub outcome: Outcome,
    /// Only the timeouts changed (otherwise the entries had drifted too and were corrected).
    pub only_timeouts: bool,
    /// Codex: its trust records, carried along or not.
    pub trust: Option<Trust>,
}

/// After the managed hook timeout changed from `old` to `new` seconds: rewrites the timeout of
/// lidguard's entries in every agent config that already holds them (the same safe edit as
/// `hook-install`). Agents without lidguard's entries (or without a config) are left alone, so
/// no agent gains hooks the user did not install; OpenCode's plugin has no timeout.
pub fn refresh_timeouts(
    places: &lidguard_ipc::Places,
    cmd: &HookCommand,
    (old, new): (u32, u32),
    var: Env<'_>,
) -> Vec<Refreshed> {
    AGENTS
        .iter()
        .filter(|a| a.hooks.timeouts)
        .map(|a| Refreshed {
            provider: a.provider,
            result: refresh_one(places, a, cmd, (old, new), var),
        })
        .collect()
}

fn refresh_one(
    places: &lidguard_ipc::Places,
    a: &Agent,
    cmd: &HookCommand,
    (old, new): (u32, u32),
    var: Env<'_>,
) -> Result<Option<Refresh>, ConfigError> {
    let p = a.provider;
    let location = agents::hooks(p, var)?;
    let Some(existing) = read_optional(&location.file)? else {
        return Ok(None);
    };
    match a.hooks.status(Some(&existing), cmd, new) {
        Ok(s) if s.state == InstallState::Missing => return Ok(None),
        Ok(_) => {}
        // A file that does not parse and never mentions lidguard's hook holds none of them.
        Err(_) if !existing.contains(a.hook_command) => return Ok(None),
        Err(source) => {
            return Err(ConfigError::Refused {
                file: location.file,
                source,
            });
        }
    }
    // Exactly what hook-install wrote with the old timeout: only the timeouts change now.
    let only_timeouts = a
        .hooks
        .install(Some(&existing), cmd, old)
        .is_ok_and(|c| c == Change::Unchanged);
    // An agent that trusts each entry by a hash including its timeout (Codex): when the user
    // had trusted every lidguard entry and only the timeouts change, the trust goes along with
    // them; otherwise the user reviews the changed entries in the agent.
    let keep_trust = match &a.hooks.trust {
        Some(records) if only_timeouts => (records.check)(
            &(records.key_path)(&location),
            &existing,
            read_optional(&(records.file)(&location))?.as_deref(),
            cmd,
        )
        .is_ok_and(|t| t.all_trusted() && !t.trusted.is_empty()),
        _ => false,
    };
    let outcome = file::apply(
        places,
        p.as_str(),
        &location.file,
        Direction::Install,
        Options::default(),
        |text, _| {
            let without_ours = match text {
                Some(t) => Some(file::left_after(t, a.hooks.remove(t, cmd, None)?)),
                None => None,
            };
            Ok(Planned {
                change: a.hooks.install(text, cmd, new)?,
                without_ours,
            })
        },
    )?;
    if outcome.action == file::Action::Unchanged {
        return Ok(None);
    }
    let trust = match outcome.text.as_deref() {
        Some(hooks) => trust_step(
            places,
            a,
            &location,
            hooks,
            cmd,
            keep_trust,
            Options::default(),
        )?,
        None => None,
    };
    Ok(Some(Refresh {
        outcome,
        only_timeouts,
        trust,
    }))
}

/// A snippet printer's text: what `hook-install` would write into a missing file, in
/// `format` (`None` when the agent has no such format).
pub fn snippet(p: Provider, format: &str, setup: &Setup) -> Option<String> {
    agent(p)?.snippet(format, &setup.cmd, setup.timeout)
}
