//! `hook-install`, `hook-status`, `hook-remove` and the snippet printers: lidguard's entries in
//! each agent's own config, next to (never instead of) the user's. The work is
//! `lidguard_config::hooks`; this module picks the agents, prints and sets the exit code.
// Dispatch on agents is exhaustive: a new agent must be a compile error here, never a fallback.
#![deny(clippy::wildcard_enum_match_arm)]

use std::collections::BTreeMap;
use std::process::ExitCode;

use anyhow::Context;
use jiff::Timestamp;
use jiff::tz::TimeZone;
use lidguard_config::hooks::{self, Report, Setup, Trust};
use lidguard_config::{Location, agents, managed};
use lidguard_core::provider::Provider;
use lidguard_core::settings::Os;
use lidguard_ipc::{Places, settings_file};
use lidguard_providers::agent::Agent;

use super::config_edit::{self, print};
use crate::cli::HookConfigArgs;
use crate::output;

/// The absolute path of the program managed entries run (see [`lidguard_config::hook_exe`]).
pub(crate) fn hook_exe() -> anyhow::Result<std::path::PathBuf> {
    lidguard_config::hook_exe().context("cannot find the lidguard executable")
}

fn env(name: &str) -> Option<std::ffi::OsString> {
    lidguard_files::environment::var(name)
}

/// Which providers a `--provider` value names; `all` keeps those whose config directory exists.
pub(crate) fn targets(
    provider: Option<&str>,
) -> anyhow::Result<Vec<(Provider, Location, Option<String>)>> {
    config_edit::targets(
        provider,
        "lidguard manages hooks for",
        || crate::prompt::provider_among(&managed(), "hook-install/hook-status/hook-remove"),
        |p| agents::hooks(p, &env),
    )
}

/// The command and timeout the managed entries carry.
pub(crate) fn setup(places: &Places) -> anyhow::Result<Setup> {
    let settings = settings_file::load_or_default(&places.settings_file(), Os::current())?;
    Ok(Setup {
        cmd: lidguard_config::hook_command()?,
        timeout: settings.managed_hook_timeout_seconds(),
    })
}

/// `hook-install` or `hook-remove`, saying why an agent was skipped only when `show_skipped`
/// (`setup` lists the agents it found instead).
pub(crate) fn apply(
    places: &Places,
    args: &HookConfigArgs,
    remove: bool,
    show_skipped: bool,
) -> anyhow::Result<ExitCode> {
    config_edit::finish(args.json, &edit(places, args, remove, show_skipped)?)
}

/// What `apply` does: each agent's edit, said as it is done, or with `args.json` returned, one
/// entry per agent (setup and uninstall put them into their own documents).
pub(crate) fn edit(
    places: &Places,
    args: &HookConfigArgs,
    remove: bool,
    show_skipped: bool,
) -> anyhow::Result<Vec<serde_json::Value>> {
    let setup = setup(places)?;
    let options = args.edit.options();
    let mut json = Vec::new();
    let shown = (args.json, show_skipped);
    // `setup` (not a command naming agents) leaves alone the agents the user unhooked.
    let unhooked = if show_skipped || remove {
        Default::default()
    } else {
        lidguard_config::choices::unhooked(places)
    };
    let mut done = Vec::new();
    for (p, location) in
        config_edit::editable(targets(args.provider.as_deref())?, shown, &mut json)?
    {
        let label = p.display_name();
        if unhooked.contains(&p) {
            if args.json {
                json.push(serde_json::json!({"provider": p.as_str(), "leftUnhooked": true}));
            } else {
                output::line(&format!(
                    "{label}: left unhooked, as you chose (`lidguard hook-install --provider {}` \
                     hooks it)",
                    p.as_str()
                ))?;
            }
            continue;
        }
        done.push(p);
        if remove {
            let outcomes = hooks::remove(places, p, &location, &setup.cmd, options)?;
            if args.json {
                json.push(serde_json::json!({"provider": p.as_str(), "outcomes": outcomes}));
                continue;
            }
            for outcome in &outcomes {
                print(label, "lidguard's hooks", true, outcome)?;
            }
        } else {
            let installed = hooks::install(
                places,
                p,
                &location,
                &setup,
                options,
                args.trust_codex_hooks,
            )?;
            if args.json {
                let mut entry = serde_json::json!({
                    "provider": p.as_str(),
                    "outcomes": installed.outcomes,
                });
                match &installed.trust {
                    Some(Trust::Recorded(o)) => {
                        entry["codexTrust"] = serde_json::json!({"recorded": o})
                    }
                    Some(Trust::Untrusted(events)) => {
                        entry["codexTrust"] = serde_json::json!({"untrusted": events});
                    }
                    None => {}
                }
                json.push(entry);
                continue;
            }
            for outcome in &installed.outcomes {
                print(label, "lidguard's hooks", false, outcome)?;
            }
            print_trust(p, installed.trust.as_ref())?;
        }
    }
    // A command naming agents is the user's choice about them, remembered (not a dry run).
    if show_skipped && !options.dry_run {
        lidguard_config::choices::set_unhooked(places, &done, remove)?;
    }
    Ok(json)
}

fn print_trust(p: Provider, trust: Option<&Trust>) -> anyhow::Result<()> {
    for line in lidguard_config::report::trust_lines(p, trust) {
        output::line(&line.text)?;
    }
    if let Some(Trust::Recorded(outcome)) = trust
        && let lidguard_config::Action::WouldChange { diff, .. } = &outcome.action
    {
        output::prompt(diff)?;
    }
    Ok(())
}

/// `hook-status`: exit code 1 when anything is missing, drifted or unread by the agent.
pub(crate) fn status(
    places: &Places,
    provider: Option<&str>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let reports = reports(places, provider)?;
    if json {
        output::json(&reports)?;
    } else {
        for r in &reports {
            output::prompt(&render(r))?;
        }
    }
    let healthy = reports.iter().all(|r| r.healthy);
    Ok(if healthy {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `hook-status` of the agents `provider` names (`None`: ask, on a terminal).
pub(crate) fn reports(places: &Places, provider: Option<&str>) -> anyhow::Result<Vec<Report>> {
    let setup = setup(places)?;
    let receipts = receipts(places);
    let cwd = std::env::current_dir().ok();
    Ok(targets(provider)?
        .into_iter()
        .map(|(p, location, skipped)| match skipped {
            Some(reason) => Report::skipped(p, reason),
            None => hooks::status(p, &location, &setup, &receipts, cwd.as_deref()),
        })
        .collect())
}

fn render(r: &Report) -> String {
    let display = r.display_name();
    if let Some(skipped) = &r.skipped {
        return format!("{display}: {skipped}\n");
    }
    let file = r
        .file
        .as_ref()
        .map_or_else(|| "?".to_owned(), |f| f.display().to_string());
    let mut out = format!("{display}: {} ({file})\n", r.state.unwrap_or("?"));
    if let Some(real) = &r.edited {
        out.push_str(&format!("  a link to {}\n", real.display()));
    }
    if let Some(e) = &r.error {
        out.push_str(&format!("  {e}\n"));
    }
    if !r.missing_events.is_empty() {
        out.push_str(&format!(
            "  missing events: {}\n",
            r.missing_events.join(", ")
        ));
    }
    for d in &r.drift {
        out.push_str(&format!("  drift: {d}\n"));
    }
    for gone in &r.gone_programs {
        out.push_str(&format!(
            "  broken: the entries run {gone}, which is not there (moved or removed): the agent \
             gets \"not found\" on every event and lidguard hears nothing; run `lidguard \
             hook-install --provider {}` to point them at this lidguard\n",
            r.provider
        ));
    }
    for w in &r.warnings {
        out.push_str(&format!("  warning: {w}\n"));
    }
    for f in &r.foreign_hooks {
        out.push_str(&format!(
            "  other hook on {}: {}{} — it can block or answer where lidguard does; do not run prompt-style hooks next to lidguard's\n",
            f.event,
            f.summary,
            f.file
                .as_ref()
                .map(|file| format!(" (in {})", file.display()))
                .unwrap_or_default()
        ));
    }
    if let Some(trust) = &r.codex_trust {
        for (names, what) in [
            (
                &trust.untrusted,
                "not trusted by Codex yet (open codex, run /hooks and trust them, or hook-install --trust-codex-hooks)",
            ),
            (
                &trust.stale,
                "changed since Codex trusted them (trust them again in /hooks)",
            ),
            (&trust.disabled, "turned off in Codex's /hooks"),
        ] {
            if !names.is_empty() {
                out.push_str(&format!("  {}: {what}\n", names.join(", ")));
            }
        }
    }
    if let Some(e) = &r.codex_trust_error {
        out.push_str(&format!("  cannot read Codex's trust records: {e}\n"));
    }
    if let Some(mode) = &r.permission_mode {
        out.push_str(&format!("  permission mode: {mode}\n"));
    }
    if let Some(needs) = &r.needs {
        out.push_str(&format!("  needs: {needs}\n"));
    }
    if let Some(k) = &r.agent_keep_awake {
        out.push_str(&format!(
            "  note: the agent keeps the machine awake itself too ({k})\n"
        ));
    }
    if !r.evidence.is_empty() {
        out.push_str("  events received:\n");
        for e in &r.evidence {
            match (e.count, e.last_seen) {
                (Some(count), Some(t)) => out.push_str(&format!(
                    "    {:<22} observed {count} times, last {}\n",
                    e.event,
                    t.to_zoned_datetime(TimeZone::system())
                        .strftime("%Y-%m-%d %H:%M:%S")
                )),
                _ => out.push_str(&format!("    {:<22} not yet observed\n", e.event)),
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
    super::open_store(places)
        .and_then(|s| s.hook_receipts())
        .map(|rows| {
            rows.into_iter()
                .map(|r| ((r.provider, r.event), (r.count, r.last_seen)))
                .collect()
        })
        .unwrap_or_default()
}

/// A snippet printer: what `hook-install` would write into a missing file, in `format` (one of
/// the agent's, checked by the command line).
pub(crate) fn snippet(places: &Places, agent: &Agent, format: &str) -> anyhow::Result<ExitCode> {
    let setup = setup(places)?;
    let Some(text) = hooks::snippet(agent.provider, format, &setup) else {
        anyhow::bail!("{} has no `{format}` format", agent.snippet_command);
    };
    output::prompt(&text)?;
    Ok(ExitCode::SUCCESS)
}
