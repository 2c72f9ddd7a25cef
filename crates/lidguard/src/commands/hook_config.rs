//! `hook-install`, `hook-status`, `hook-remove` and the snippet printers: lidguard's entries in
//! each agent's own config, next to (never instead of) the user's.
//!
//! The edits themselves are pure (`lidguard_providers::install`); this module finds the files,
//! shows diffs, keeps backups, writes atomically and reports receipts.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use jiff::Timestamp;
use jiff::tz::TimeZone;
use lidguard_core::provider::Provider;
use lidguard_core::settings::Os;
use lidguard_ipc::{Places, settings_file};
use lidguard_providers::install::{
    self, Change, HookCommand, HookStatus, InstallError, InstallState, agent_settings, claude,
    codex, copilot, opencode,
};
use lidguard_store::Store;
use serde_json::{Value, json};

use super::config_edit::{self, Location, MANAGED, backup, read, refuse, unified_diff};
use crate::cli::HookConfigArgs;
use crate::output;

/// The config location of `provider`, honouring each agent's own override variable.
/// Sources: Claude `CLAUDE_CONFIG_DIR` (hook-contracts §1.1), Codex `CODEX_HOME` (§2.1),
/// Copilot `COPILOT_HOME` (§3.1), OpenCode `OPENCODE_CONFIG_DIR` and the XDG config directory
/// (§4.1; OpenCode loads `plugins/` from both).
pub(crate) fn locate(
    provider: Provider,
    var: &dyn Fn(&str) -> Option<OsString>,
) -> anyhow::Result<Location> {
    let home = || -> anyhow::Result<PathBuf> {
        var("HOME")
            .map(PathBuf::from)
            .or_else(std::env::home_dir)
            .context("cannot find the home directory (HOME is unset)")
    };
    let dir =
        |name: &str, fallback: &dyn Fn() -> anyhow::Result<PathBuf>| -> anyhow::Result<PathBuf> {
            match var(name).filter(|v| !v.is_empty()) {
                Some(v) => Ok(PathBuf::from(v)),
                None => fallback(),
            }
        };
    let location = match provider {
        Provider::Claude => {
            let root = dir("CLAUDE_CONFIG_DIR", &|| Ok(home()?.join(".claude")))?;
            Location {
                file: root.join("settings.json"),
                root,
            }
        }
        Provider::Codex => {
            let root = dir("CODEX_HOME", &|| Ok(home()?.join(".codex")))?;
            Location {
                file: root.join("hooks.json"),
                root,
            }
        }
        Provider::Copilot => {
            let root = dir("COPILOT_HOME", &|| Ok(home()?.join(".copilot")))?;
            Location {
                file: root.join("hooks").join(copilot::FILE_NAME),
                root,
            }
        }
        Provider::OpenCode => {
            let root = dir("OPENCODE_CONFIG_DIR", &|| {
                Ok(dir("XDG_CONFIG_HOME", &|| Ok(home()?.join(".config")))?.join("opencode"))
            })?;
            Location {
                file: root.join("plugins").join(opencode::FILE_NAME),
                root,
            }
        }
        other => bail!("{other} has no hook configuration to manage"),
    };
    Ok(location)
}

/// The program managed entries run: `lidguard` when that name on `PATH` is this very
/// executable, else this executable's absolute path.
pub(crate) fn hook_program() -> anyhow::Result<String> {
    let exe = std::env::current_exe().context("cannot find the lidguard executable")?;
    let exe = exe.canonicalize().unwrap_or(exe);
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join("lidguard"))
        .find(|candidate| candidate.is_file());
    if on_path.and_then(|p| p.canonicalize().ok()).as_deref() == Some(exe.as_path()) {
        return Ok("lidguard".to_owned());
    }
    Ok(exe.display().to_string())
}

/// Which providers a `--provider` value names; `all` keeps those whose config directory exists.
fn targets(
    provider: Option<&str>,
    var: &dyn Fn(&str) -> Option<OsString>,
) -> anyhow::Result<Vec<(Provider, Location, Option<String>)>> {
    config_edit::targets(
        provider,
        "lidguard manages hooks for",
        || crate::prompt::provider_among(&MANAGED, "hook-install/hook-status/hook-remove"),
        |p| locate(p, var),
    )
}

fn settings_timeout(places: &Places) -> anyhow::Result<u32> {
    let settings = settings_file::load_or_default(&places.settings_file(), Os::current())?;
    Ok(settings.managed_hook_timeout_seconds())
}

/// `hook-install` or `hook-remove`.
pub(crate) fn apply(
    places: &Places,
    args: &HookConfigArgs,
    remove: bool,
) -> anyhow::Result<ExitCode> {
    let (provider, dry_run) = (args.provider.as_deref(), args.dry_run);
    let var = |name: &str| std::env::var_os(name);
    let cmd = HookCommand::new(hook_program()?);
    let timeout = settings_timeout(places)?;
    for (p, location, skipped) in targets(provider, &var)? {
        let file = &location.file;
        if let Some(reason) = skipped {
            output::line(&format!("{}: {reason}", p.display_name()))?;
            continue;
        }
        let existing = read(file)?;
        let change = match (remove, p, existing.as_deref()) {
            (true, _, None) => Ok(Change::Unchanged),
            (true, Provider::Claude, Some(t)) => claude::remove(t, &cmd),
            (true, Provider::Codex, Some(t)) => codex::remove(t, &cmd),
            (true, Provider::Copilot, Some(t)) => copilot::remove(t, &cmd),
            (true, _, Some(t)) => opencode::remove(t),
            (false, p, e) => install_for(p, e, &cmd, timeout),
        }
        .map_err(|e| refuse(file, &e))?;
        if p == Provider::Codex && !remove {
            let hooks = match &change {
                Change::Changed { new_text } => Some(new_text.clone()),
                _ => existing.clone(),
            };
            codex_trust_step(
                places,
                &location,
                hooks.as_deref(),
                &cmd,
                args.trust_codex_hooks,
                dry_run,
            )?;
        }
        config_edit::write(
            places,
            (p.display_name(), p.as_str()),
            (file, existing.as_deref()),
            &change,
            &config_edit::Mode {
                remove,
                dry_run,
                what: "lidguard's hooks",
            },
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What `hook-install` makes of `existing` for agent `p` (`timeout` on every managed hook;
/// OpenCode's plugin has none).
fn install_for(
    p: Provider,
    existing: Option<&str>,
    cmd: &HookCommand,
    timeout: u32,
) -> Result<Change, InstallError> {
    match p {
        Provider::Claude => claude::install(existing, cmd, timeout),
        Provider::Codex => codex::install(existing, cmd, timeout),
        Provider::Copilot => copilot::install(existing, cmd, timeout),
        _ => opencode::install(existing, cmd),
    }
}

/// The hook events whose arrival proves the hooks work, per agent.
fn evidence_events(provider: Provider) -> &'static [&'static str] {
    match provider {
        Provider::Claude => claude::REQUIRED_EVENTS,
        Provider::Codex => codex::REQUIRED_EVENTS,
        Provider::Copilot => copilot::REQUIRED_EVENTS,
        _ => &[
            "chat.message",
            "tool.execute.before",
            "tool.execute.after",
            "session.idle",
        ],
    }
}

/// `hook-status`: exit code 1 when anything is missing or drifted.
pub(crate) fn status(
    places: &Places,
    provider: Option<&str>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let var = |name: &str| std::env::var_os(name);
    let cmd = HookCommand::new(hook_program()?);
    let timeout = settings_timeout(places)?;
    let receipts = receipts(places);
    let mut reports = Vec::new();
    let mut healthy = true;
    for (p, location, skipped) in targets(provider, &var)? {
        if let Some(reason) = skipped {
            reports.push(json!({"provider": p.as_str(), "skipped": reason}));
            continue;
        }
        let existing = read(&location.file)?;
        let status = match p {
            Provider::Claude => claude::status(existing.as_deref(), &cmd, timeout),
            Provider::Codex => codex::status(existing.as_deref(), &cmd, timeout),
            Provider::Copilot => {
                let settings = read(&location.root.join("settings.json"))?;
                copilot::status(existing.as_deref(), settings.as_deref(), &cmd, timeout)
            }
            _ => Ok(opencode::status(existing.as_deref(), &cmd)),
        };
        let report = match status {
            Ok(status) => {
                healthy &= status.state == InstallState::Installed;
                let mut r = report(p, &location, &status, &receipts);
                if p == Provider::Copilot {
                    add_copilot_other_files(&mut r, &location, &cmd)?;
                }
                let (trust_ok, extra) = agent_extras(p, &location, existing.as_deref(), &cmd)?;
                healthy &= trust_ok;
                if let (Some(r), Some(extra)) = (r.as_object_mut(), extra.as_object()) {
                    r.extend(extra.clone());
                }
                r
            }
            Err(e) => {
                healthy = false;
                json!({"provider": p.as_str(), "file": location.file, "state": "unreadable", "error": e.to_string()})
            }
        };
        reports.push(report);
    }
    if json {
        output::json(&reports)?;
    } else {
        for r in &reports {
            output::prompt(&render(r))?;
        }
    }
    Ok(if healthy {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The other files whose hooks Copilot runs next to lidguard's (hook-contracts §3.1): the rest
/// of `COPILOT_HOME/hooks/`, and the current repository's `.github/hooks/*.json` and
/// `.github/copilot/settings{,.local}.json`. Their conflicting hooks join `foreignHooks` with
/// the file named; lidguard entries in them and unreadable files become warnings.
fn add_copilot_other_files(
    report: &mut Value,
    location: &Location,
    cmd: &HookCommand,
) -> anyhow::Result<()> {
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
    if let Some(repo) = std::env::current_dir()
        .ok()
        .as_deref()
        .and_then(repository_root)
    {
        files.extend(json_files(&repo.join(".github/hooks")));
        for name in ["settings.json", "settings.local.json"] {
            let f = repo.join(".github/copilot").join(name);
            if f.is_file() {
                files.push(f);
            }
        }
    }
    let mut foreign = Vec::new();
    let mut warnings = Vec::new();
    for file in files {
        let Some(text) = read(&file)? else { continue };
        match copilot::scan_other_file(&text, cmd) {
            Ok((theirs, ours)) => {
                foreign.extend(theirs.iter().map(|f| {
                    json!({"event": f.event, "matcher": f.matcher, "type": f.handler_type, "summary": f.summary, "file": file})
                }));
                for event in ours {
                    warnings.push(json!(format!(
                        "{} also runs lidguard on {event}: the event reaches lidguard twice",
                        file.display()
                    )));
                }
            }
            Err(e) => warnings.push(json!(format!(
                "{} not checked for conflicting hooks: {e}",
                file.display()
            ))),
        }
    }
    if let Some(list) = report["foreignHooks"].as_array_mut() {
        list.extend(foreign);
    }
    if let Some(list) = report["warnings"].as_array_mut() {
        list.extend(warnings);
    }
    Ok(())
}

/// The repository `dir` is in: the nearest directory upwards holding `.git`.
fn repository_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

/// What only some agents have: Codex's trust records, and the agents' own keep-awake settings
/// (two tools holding the machine is worth knowing). Returns whether nothing is wrong.
fn agent_extras(
    p: Provider,
    location: &Location,
    hooks: Option<&str>,
    cmd: &HookCommand,
) -> anyhow::Result<(bool, Value)> {
    match p {
        Provider::Codex => {
            let config = read(&location.root.join("config.toml"))?;
            let keep_awake = agent_settings::codex_keep_awake(config.as_deref());
            let Some(hooks) = hooks else {
                return Ok((true, json!({"agentKeepAwake": keep_awake})));
            };
            match agent_settings::codex_trust(
                &codex_hooks_key_path(location),
                hooks,
                config.as_deref(),
                cmd,
            ) {
                Ok(t) => Ok((
                    t.untrusted.is_empty() && t.stale.is_empty() && t.disabled.is_empty(),
                    json!({
                        "agentKeepAwake": keep_awake,
                        "codexTrust": {"trusted": t.trusted, "untrusted": t.untrusted, "stale": t.stale, "disabled": t.disabled},
                    }),
                )),
                Err(e) => Ok((
                    false,
                    json!({"agentKeepAwake": keep_awake, "codexTrustError": e.to_string()}),
                )),
            }
        }
        Provider::Copilot => {
            let settings = read(&location.root.join("settings.json"))?;
            Ok((
                true,
                json!({"agentKeepAwake": agent_settings::copilot_keep_awake(settings.as_deref())}),
            ))
        }
        _ => Ok((true, json!({}))),
    }
}

fn report(
    p: Provider,
    location: &Location,
    status: &HookStatus,
    receipts: &BTreeMap<(String, String), (u64, Timestamp)>,
) -> Value {
    let evidence: Vec<Value> = evidence_events(p)
        .iter()
        .map(|event| match receipts.get(&(p.as_str().to_owned(), (*event).to_owned())) {
            Some((count, last)) => json!({"event": event, "observed": true, "count": count, "lastSeen": last.to_string()}),
            None => json!({"event": event, "observed": false}),
        })
        .collect();
    let foreign: Vec<Value> = status
        .foreign_hooks
        .iter()
        .map(|f| json!({"event": f.event, "matcher": f.matcher, "type": f.handler_type, "summary": f.summary}))
        .collect();
    json!({
        "provider": p.as_str(),
        "file": location.file,
        "state": status.state.as_str(),
        "missingEvents": status.missing_events,
        "drift": status.drift,
        "foreignHooks": foreign,
        "warnings": status.warnings,
        "evidence": evidence,
    })
}

fn render(r: &Value) -> String {
    let name = r["provider"].as_str().unwrap_or("");
    let display = name
        .parse::<Provider>()
        .map(|p| p.display_name())
        .unwrap_or(name);
    if let Some(skipped) = r["skipped"].as_str() {
        return format!("{display}: {skipped}\n");
    }
    let mut out = format!(
        "{display}: {} ({})\n",
        r["state"].as_str().unwrap_or("?"),
        r["file"].as_str().unwrap_or("?")
    );
    let list = |key: &str| r[key].as_array().cloned().unwrap_or_default();
    if let Some(e) = r["error"].as_str() {
        out.push_str(&format!("  {e}\n"));
    }
    let missing: Vec<String> = list("missingEvents")
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    if !missing.is_empty() {
        out.push_str(&format!("  missing events: {}\n", missing.join(", ")));
    }
    for d in list("drift") {
        out.push_str(&format!("  drift: {}\n", d.as_str().unwrap_or("")));
    }
    for w in list("warnings") {
        out.push_str(&format!("  warning: {}\n", w.as_str().unwrap_or("")));
    }
    for f in list("foreignHooks") {
        out.push_str(&format!(
            "  other hook on {}: {}{} — it can block or answer where lidguard does; do not run prompt-style hooks next to lidguard's\n",
            f["event"].as_str().unwrap_or(""),
            f["summary"].as_str().unwrap_or(""),
            f["file"]
                .as_str()
                .map(|file| format!(" (in {file})"))
                .unwrap_or_default()
        ));
    }
    let trust = &r["codexTrust"];
    for (key, what) in [
        (
            "untrusted",
            "not trusted by Codex yet (open codex, run /hooks and trust them, or hook-install --trust-codex-hooks)",
        ),
        (
            "stale",
            "changed since Codex trusted them (trust them again in /hooks)",
        ),
        ("disabled", "turned off in Codex's /hooks"),
    ] {
        let names: Vec<&str> = trust[key]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if !names.is_empty() {
            out.push_str(&format!("  {}: {what}\n", names.join(", ")));
        }
    }
    if let Some(e) = r["codexTrustError"].as_str() {
        out.push_str(&format!("  cannot read Codex's trust records: {e}\n"));
    }
    if let Some(k) = r["agentKeepAwake"].as_str() {
        out.push_str(&format!(
            "  note: the agent keeps the machine awake itself too ({k})\n"
        ));
    }
    let evidence = list("evidence");
    if !evidence.is_empty() {
        out.push_str("  events received:\n");
        for e in evidence {
            let event = e["event"].as_str().unwrap_or("");
            match e["lastSeen"]
                .as_str()
                .and_then(|t| t.parse::<Timestamp>().ok())
            {
                Some(t) => out.push_str(&format!(
                    "    {event:<22} observed {} times, last {}\n",
                    e["count"],
                    t.to_zoned_datetime(TimeZone::system())
                        .strftime("%Y-%m-%d %H:%M:%S")
                )),
                None => out.push_str(&format!("    {event:<22} not yet observed\n")),
            }
        }
    }
    out
}

/// Receipts by (provider, event), read from the database when there is one.
fn receipts(places: &Places) -> BTreeMap<(String, String), (u64, Timestamp)> {
    let path = places.database();
    if !path.exists() {
        return BTreeMap::new();
    }
    Store::open(&path)
        .and_then(|s| s.hook_receipts())
        .map(|rows| {
            rows.into_iter()
                .map(|r| ((r.provider, r.event), (r.count, r.last_seen)))
                .collect()
        })
        .unwrap_or_default()
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

/// After a Codex install: with `--trust-codex-hooks`, record lidguard's entries as trusted in
/// `config.toml` (diff, backup, atomic write as for any change); without it, say which entries
/// Codex will skip until the user trusts them.
fn codex_trust_step(
    places: &Places,
    location: &Location,
    hooks_json: Option<&str>,
    cmd: &HookCommand,
    write_trust: bool,
    dry_run: bool,
) -> anyhow::Result<()> {
    let Some(hooks_json) = hooks_json else {
        return Ok(());
    };
    let config = location.root.join("config.toml");
    let existing = read(&config)?;
    let key_path = codex_hooks_key_path(location);
    if write_trust {
        let change =
            agent_settings::codex_trust_lidguard(&key_path, hooks_json, existing.as_deref(), cmd)
                .map_err(|e| refuse(&config, &e))?;
        if let Change::Changed { new_text } = change {
            let diff = unified_diff(&config, existing.as_deref().unwrap_or(""), &new_text);
            if dry_run {
                output::line(&format!(
                    "Codex CLI: would record trust in {}",
                    config.display()
                ))?;
                output::prompt(&diff)?;
                return Ok(());
            }
            if let Some(old) = &existing {
                let b = backup(places, Provider::Codex.as_str(), &config, old)?;
                output::line(&format!("  previous config.toml saved as {}", b.display()))?;
            }
            settings_file::write_atomically(&config, new_text.as_bytes())
                .with_context(|| format!("cannot write {}", config.display()))?;
            output::line(&format!(
                "Codex CLI: recorded lidguard's hooks as trusted in {}",
                config.display()
            ))?;
        }
        return Ok(());
    }
    let trust = agent_settings::codex_trust(&key_path, hooks_json, existing.as_deref(), cmd)
        .map_err(|e| refuse(&config, &e))?;
    let skipped: Vec<String> = trust
        .untrusted
        .iter()
        .chain(&trust.stale)
        .cloned()
        .collect();
    if !skipped.is_empty() {
        output::line(&format!(
            "  Codex skips hooks nobody trusted ({}): open `codex`, run /hooks and trust them, or rerun with --trust-codex-hooks.",
            skipped.join(", ")
        ))?;
    }
    Ok(())
}

/// After `lidguard settings` saved settings whose managed hook timeout differs from the old
/// one (`old` → `new` seconds; reference §1.4): rewrites the timeout of lidguard's entries in
/// every agent config that already holds them — the same install, backup and atomic write as
/// `hook-install`. Agents without lidguard's entries (or without a config) are left alone, so
/// no agent gains hooks the user did not install; OpenCode's plugin has no timeout. A refresh
/// that fails is a warning naming the agent, never a failure of the settings change.
pub(crate) fn refresh_timeouts(places: &Places, old: u32, new: u32) -> anyhow::Result<()> {
    let var = |name: &str| std::env::var_os(name);
    let cmd = match hook_program() {
        Ok(program) => HookCommand::new(program),
        Err(e) => {
            output::warn(&format!(
                "could not refresh the hook timeouts ({e:#}); run `lidguard hook-install --provider all`"
            ));
            return Ok(());
        }
    };
    for p in MANAGED.into_iter().filter(|p| *p != Provider::OpenCode) {
        if let Err(e) = refresh_one(places, p, &cmd, (old, new), &var) {
            if output::is_stdout_closed(&e) {
                return Err(e);
            }
            output::warn(&format!(
                "could not refresh the hook timeout for {p} ({e:#}); its hooks still carry the old \
                 timeout: fix that, then run `lidguard hook-install --provider {p}`",
                p = p.as_str()
            ));
        }
    }
    Ok(())
}

/// One agent of [`refresh_timeouts`].
fn refresh_one(
    places: &Places,
    p: Provider,
    cmd: &HookCommand,
    (old, new): (u32, u32),
    var: &dyn Fn(&str) -> Option<OsString>,
) -> anyhow::Result<()> {
    let location = locate(p, var)?;
    let file = &location.file;
    let Some(existing) = read(file)? else {
        return Ok(());
    };
    let (status, subcommand) = match p {
        Provider::Claude => (
            claude::status(Some(&existing), cmd, new),
            claude::SUBCOMMAND,
        ),
        Provider::Codex => (codex::status(Some(&existing), cmd, new), codex::SUBCOMMAND),
        Provider::Copilot => (
            copilot::status(Some(&existing), None, cmd, new),
            copilot::SUBCOMMAND,
        ),
        _ => return Ok(()),
    };
    let unusable = |e: &InstallError| anyhow::anyhow!("{}: {e}", file.display());
    let status = match status {
        Ok(status) => status,
        // A file that does not parse and never mentions lidguard's hook holds none of them.
        Err(_) if !existing.contains(subcommand) => return Ok(()),
        Err(e) => return Err(unusable(&e)),
    };
    if status.state == InstallState::Missing {
        return Ok(());
    }
    let install = |timeout| install_for(p, Some(&existing), cmd, timeout);
    // Exactly what hook-install wrote with the old timeout: only the timeouts change now.
    let only_timeouts = install(old).map_err(|e| unusable(&e))? == Change::Unchanged;
    let Change::Changed { new_text } = install(new).map_err(|e| unusable(&e))? else {
        return Ok(());
    };
    // Codex trusts each entry by a hash that includes its timeout. When the user had trusted
    // every lidguard entry and only the timeouts change, the trust goes along with them;
    // otherwise the user reviews the changed entries in Codex's /hooks.
    let keep_codex_trust = p == Provider::Codex
        && only_timeouts
        && agent_settings::codex_trust(
            &codex_hooks_key_path(&location),
            &existing,
            read(&location.root.join("config.toml"))?.as_deref(),
            cmd,
        )
        .is_ok_and(|t| t.all_trusted() && !t.trusted.is_empty());
    let saved = backup(places, p.as_str(), file, &existing)?;
    settings_file::write_atomically(file, new_text.as_bytes())
        .with_context(|| format!("cannot write {}", file.display()))?;
    let what = if only_timeouts {
        format!(
            "refreshed the hook timeout for {} ({old} s → {new} s)",
            p.as_str()
        )
    } else {
        format!(
            "refreshed lidguard's hooks for {} (timeout {new} s; they had also drifted from what hook-install writes, now corrected)",
            p.as_str()
        )
    };
    output::line(&format!("{what}: {}", file.display()))?;
    output::line(&format!("  previous version saved as {}", saved.display()))?;
    if p == Provider::Codex {
        codex_trust_step(
            places,
            &location,
            Some(&new_text),
            cmd,
            keep_codex_trust,
            false,
        )?;
    }
    Ok(())
}

/// `codex-hooks config-toml`: the Codex hooks in `config.toml` form.
pub(crate) fn codex_toml_snippet(places: &Places) -> anyhow::Result<ExitCode> {
    let cmd = HookCommand::new(hook_program()?);
    output::prompt(&codex::config_toml_snippet(&cmd, settings_timeout(places)?))?;
    Ok(ExitCode::SUCCESS)
}

/// The snippet printers: what `hook-install` would write into a missing file.
pub(crate) fn snippet(places: &Places, provider: Provider) -> anyhow::Result<ExitCode> {
    let cmd = HookCommand::new(hook_program()?);
    let timeout = settings_timeout(places)?;
    let text = match provider {
        Provider::Claude => claude::snippet(&cmd, timeout),
        Provider::Codex => codex::snippet(&cmd, timeout),
        Provider::Copilot => copilot::snippet(&cmd, timeout),
        _ => install::opencode::plugin_text(&cmd),
    };
    output::prompt(&text)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

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
            locate(Provider::Claude, &var).unwrap().file,
            Path::new("/h/.claude/settings.json")
        );
        assert_eq!(
            locate(Provider::Codex, &var).unwrap().file,
            Path::new("/c/hooks.json")
        );
        assert_eq!(
            locate(Provider::Copilot, &var).unwrap().file,
            Path::new("/h/.copilot/hooks/lidguard-copilot-cli.json")
        );
        assert_eq!(
            locate(Provider::OpenCode, &var).unwrap().file,
            Path::new("/x/opencode/plugins/lidguard.js")
        );
        let env2: HashMap<&str, &str> = [
            ("HOME", "/h"),
            ("OPENCODE_CONFIG_DIR", "/o"),
            ("CLAUDE_CONFIG_DIR", "/cc"),
        ]
        .into();
        let var2 = |n: &str| env2.get(n).map(OsString::from);
        assert_eq!(
            locate(Provider::OpenCode, &var2).unwrap().file,
            Path::new("/o/plugins/lidguard.js")
        );
        assert_eq!(
            locate(Provider::Claude, &var2).unwrap().root,
            Path::new("/cc")
        );
    }
}
