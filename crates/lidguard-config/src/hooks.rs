//! lidguard's hook entries in each agent's config: install, remove, status, and the refresh of
//! their timeouts when the settings change.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use lidguard_core::provider::Provider;
use lidguard_providers::install::{
    Change, HookCommand, HookStatus, InstallError, InstallState, agent_settings, claude, codex,
    copilot, opencode,
};
use serde::Serialize;

use crate::agents::{self, Env, Location, MANAGED};
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

/// What `hook-install` makes of `existing` for `p`.
fn install_change(
    p: Provider,
    existing: Option<&str>,
    setup: &Setup,
) -> Result<Change, InstallError> {
    let (cmd, timeout) = (&setup.cmd, setup.timeout);
    match p {
        Provider::Claude => claude::install(existing, cmd, timeout),
        Provider::Codex => codex::install(existing, cmd, timeout),
        Provider::Copilot => copilot::install(existing, cmd, timeout),
        Provider::OpenCode => opencode::install(existing, cmd),
        other => Err(not_managed(other)),
    }
}

/// What `hook-remove` makes of `existing` for `p`.
fn remove_change(
    p: Provider,
    existing: &str,
    cmd: &HookCommand,
    before: Option<&str>,
) -> Result<Change, InstallError> {
    match p {
        Provider::Claude => claude::remove(existing, cmd, before),
        Provider::Codex => codex::remove(existing, cmd, before),
        Provider::Copilot => copilot::remove(existing, cmd, before),
        Provider::OpenCode => opencode::remove(existing),
        other => Err(not_managed(other)),
    }
}

/// The pure status of `p`'s file (Copilot's `settings.json` text when there is one).
fn pure_status(
    p: Provider,
    existing: Option<&str>,
    copilot_settings: Option<&str>,
    setup: &Setup,
) -> Result<HookStatus, InstallError> {
    let (cmd, timeout) = (&setup.cmd, setup.timeout);
    match p {
        Provider::Claude => claude::status(existing, cmd, timeout),
        Provider::Codex => codex::status(existing, cmd, timeout),
        Provider::Copilot => copilot::status(existing, copilot_settings, cmd, timeout),
        Provider::OpenCode => Ok(opencode::status(existing, cmd)),
        other => Err(not_managed(other)),
    }
}

fn not_managed(p: Provider) -> InstallError {
    InstallError::Shape {
        path: p.as_str().to_owned(),
        message: "lidguard manages no hooks for this agent".to_owned(),
    }
}

/// Whether `existing` already holds lidguard's entries (any state but missing).
fn has_ours(p: Provider, existing: Option<&str>, setup: &Setup) -> bool {
    pure_status(p, existing, None, setup).is_ok_and(|s| s.state != InstallState::Missing)
}

/// The hook events whose arrival proves the hooks work, per agent.
fn evidence_events(p: Provider) -> &'static [&'static str] {
    match p {
        Provider::Claude => claude::REQUIRED_EVENTS,
        Provider::Codex => codex::REQUIRED_EVENTS,
        Provider::Copilot => copilot::REQUIRED_EVENTS,
        Provider::OpenCode => &[
            "chat.message",
            "tool.execute.before",
            "tool.execute.after",
            "session.idle",
        ],
        _ => &[],
    }
}

/// What `hook-install` did for one agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Installed {
    /// The hook file.
    pub outcome: Outcome,
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
    let outcome = file::apply(
        places,
        p.as_str(),
        &location.file,
        Direction::Install,
        options,
        |existing, _| {
            let without_ours = match existing {
                Some(text) if has_ours(p, existing, setup) => Some(file::left_after(
                    text,
                    remove_change(p, text, &setup.cmd, None)?,
                )),
                _ => None,
            };
            Ok(Planned {
                change: install_change(p, existing, setup)?,
                without_ours,
            })
        },
    )?;
    let trust = match (p, outcome.text.as_deref()) {
        (Provider::Codex, Some(hooks)) => {
            codex_trust_step(places, location, hooks, &setup.cmd, trust_codex, options)?
        }
        _ => None,
    };
    Ok(Installed { outcome, trust })
}

/// `hook-remove` for `p` at `location`.
pub fn remove(
    places: &lidguard_ipc::Places,
    p: Provider,
    location: &Location,
    cmd: &HookCommand,
    options: Options,
) -> Result<Outcome, ConfigError> {
    file::apply(
        places,
        p.as_str(),
        &location.file,
        Direction::Remove,
        options,
        |existing, before| {
            Ok(Planned::change(match existing {
                None => Change::Unchanged,
                Some(text) => remove_change(p, text, cmd, before)?,
            }))
        },
    )
}

/// Codex's path for `hooks.json` in its trust records: the config directory with symlinks
/// resolved, the file name as is (captured: tests/fixtures/codex/trust/).
fn codex_hooks_key_path(location: &Location) -> String {
    let root = location
        .root
        .canonicalize()
        .unwrap_or_else(|_| location.root.clone());
    root.join("hooks.json").display().to_string()
}

/// After a Codex install: with `write`, record lidguard's entries as trusted in `config.toml`
/// (the same safe edit as any other); without it, say which entries Codex will skip.
fn codex_trust_step(
    places: &lidguard_ipc::Places,
    location: &Location,
    hooks_json: &str,
    cmd: &HookCommand,
    write: bool,
    options: Options,
) -> Result<Option<Trust>, ConfigError> {
    let config = location.root.join("config.toml");
    let key_path = codex_hooks_key_path(location);
    if write {
        let outcome = file::apply(
            places,
            "codex-trust",
            &config,
            Direction::Update,
            options,
            |existing, _| {
                Ok(Planned::change(agent_settings::codex_trust_lidguard(
                    &key_path, hooks_json, existing, cmd,
                )?))
            },
        )?;
        return Ok(Some(Trust::Recorded(outcome)));
    }
    let existing = read_optional(&config)?;
    let trust = agent_settings::codex_trust(&key_path, hooks_json, existing.as_deref(), cmd)
        .map_err(|source| ConfigError::Refused {
            file: config.clone(),
            source,
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
    /// `installed`, `missing`, `drifted` or `unreadable`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<&'static str>,
    /// Why it is unreadable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Required events without lidguard's entry.
    pub missing_events: Vec<String>,
    /// Differences from what install writes.
    pub drift: Vec<String>,
    /// Other tools' hooks that can block or answer where lidguard does.
    pub foreign_hooks: Vec<Foreign>,
    /// Facts that may stop the hooks from running.
    pub warnings: Vec<String>,
    /// Which events have arrived.
    pub evidence: Vec<Evidence>,
    /// The agent's own keep-awake setting, when on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_keep_awake: Option<String>,
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
            foreign_hooks: Vec::new(),
            warnings: Vec::new(),
            evidence: Vec::new(),
            agent_keep_awake: None,
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
    let existing = read_optional(&location.file)?;
    let copilot_settings = match p {
        Provider::Copilot => read_optional(&location.root.join("settings.json"))?,
        _ => None,
    };
    let status = pure_status(p, existing.as_deref(), copilot_settings.as_deref(), setup).map_err(
        |source| ConfigError::Refused {
            file: location.file.clone(),
            source,
        },
    )?;
    report.healthy = status.state == InstallState::Installed;
    report.state = Some(status.state.as_str());
    report.missing_events = status.missing_events;
    report.drift = status.drift;
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
    report.evidence = evidence_events(p)
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
    match p {
        Provider::Copilot => {
            copilot_other_files(report, location, &setup.cmd, cwd)?;
            report.agent_keep_awake =
                agent_settings::copilot_keep_awake(copilot_settings.as_deref());
        }
        Provider::Codex => {
            let config = read_optional(&location.root.join("config.toml"))?;
            report.agent_keep_awake = agent_settings::codex_keep_awake(config.as_deref());
            if let Some(hooks) = existing.as_deref() {
                match agent_settings::codex_trust(
                    &codex_hooks_key_path(location),
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
        }
        _ => {}
    }
    Ok(())
}

/// The other files whose hooks Copilot runs next to lidguard's: the rest of its `hooks/`
/// folder, and the current repository's `.github/hooks/*.json` and
/// `.github/copilot/settings{,.local}.json` (hook-contracts: Copilot loads all of them). Their
/// conflicting hooks join `foreign_hooks` with the file named; lidguard entries in them and
/// unreadable files become warnings.
fn copilot_other_files(
    report: &mut Report,
    location: &Location,
    cmd: &HookCommand,
    cwd: Option<&Path>,
) -> Result<(), ConfigError> {
    let json_files = |dir: &Path| -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        files
    };
    let mut files: Vec<PathBuf> = json_files(&location.root.join("hooks"))
        .into_iter()
        .filter(|f| *f != location.file)
        .collect();
    if let Some(repo) = cwd.and_then(repository_root) {
        files.extend(json_files(&repo.join(".github/hooks")));
        for name in ["settings.json", "settings.local.json"] {
            let f = repo.join(".github/copilot").join(name);
            if f.is_file() {
                files.push(f);
            }
        }
    }
    for path in files {
        let Some(text) = read_optional(&path)? else {
            continue;
        };
        match copilot::scan_other_file(&text, cmd) {
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

/// The repository `dir` is in: the nearest directory upwards holding `.git`.
fn repository_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
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
    MANAGED
        .into_iter()
        .filter(|p| *p != Provider::OpenCode)
        .map(|p| Refreshed {
            provider: p,
            result: refresh_one(places, p, cmd, (old, new), var),
        })
        .collect()
}

fn refresh_one(
    places: &lidguard_ipc::Places,
    p: Provider,
    cmd: &HookCommand,
    (old, new): (u32, u32),
    var: Env<'_>,
) -> Result<Option<Refresh>, ConfigError> {
    let location = agents::hooks(p, var)?;
    let Some(existing) = read_optional(&location.file)? else {
        return Ok(None);
    };
    let setup = |timeout| Setup {
        cmd: cmd.clone(),
        timeout,
    };
    let subcommand = match p {
        Provider::Claude => claude::SUBCOMMAND,
        Provider::Codex => codex::SUBCOMMAND,
        _ => copilot::SUBCOMMAND,
    };
    match pure_status(p, Some(&existing), None, &setup(new)) {
        Ok(s) if s.state == InstallState::Missing => return Ok(None),
        Ok(_) => {}
        // A file that does not parse and never mentions lidguard's hook holds none of them.
        Err(_) if !existing.contains(subcommand) => return Ok(None),
        Err(source) => {
            return Err(ConfigError::Refused {
                file: location.file,
                source,
            });
        }
    }
    // Exactly what hook-install wrote with the old timeout: only the timeouts change now.
    let only_timeouts =
        install_change(p, Some(&existing), &setup(old)).is_ok_and(|c| c == Change::Unchanged);
    // Codex trusts each entry by a hash that includes its timeout. When the user had trusted
    // every lidguard entry and only the timeouts change, the trust goes along with them;
    // otherwise the user reviews the changed entries in Codex's /hooks.
    let keep_codex_trust = p == Provider::Codex
        && only_timeouts
        && agent_settings::codex_trust(
            &codex_hooks_key_path(&location),
            &existing,
            read_optional(&location.root.join("config.toml"))?.as_deref(),
            cmd,
        )
        .is_ok_and(|t| t.all_trusted() && !t.trusted.is_empty());
    let outcome = file::apply(
        places,
        p.as_str(),
        &location.file,
        Direction::Install,
        Options::default(),
        |text, _| {
            let without_ours = match text {
                Some(t) => Some(file::left_after(t, remove_change(p, t, cmd, None)?)),
                None => None,
            };
            Ok(Planned {
                change: install_change(p, text, &setup(new))?,
                without_ours,
            })
        },
    )?;
    if outcome.action == file::Action::Unchanged {
        return Ok(None);
    }
    let trust = match (p, outcome.text.as_deref()) {
        (Provider::Codex, Some(hooks)) => codex_trust_step(
            places,
            &location,
            hooks,
            cmd,
            keep_codex_trust,
            Options::default(),
        )?,
        _ => None,
    };
    Ok(Some(Refresh {
        outcome,
        only_timeouts,
        trust,
    }))
}

/// The snippet printers: what `hook-install` would write into a missing file.
pub fn snippet(p: Provider, setup: &Setup) -> Result<String, ConfigError> {
    Ok(match p {
        Provider::Claude => claude::snippet(&setup.cmd, setup.timeout),
        Provider::Codex => codex::snippet(&setup.cmd, setup.timeout),
        Provider::Copilot => copilot::snippet(&setup.cmd, setup.timeout),
        Provider::OpenCode => opencode::plugin_text(&setup.cmd),
        other => return Err(ConfigError::NotManaged(other)),
    })
}
