//! What the hook and MCP config commands share: which agents a provider argument names, and
//! how the outcome of an edit (`lidguard_config::file`) is printed.
// Dispatch on agents is exhaustive: a new agent must be a compile error here, never a fallback.
#![deny(clippy::wildcard_enum_match_arm)]

use std::process::ExitCode;

use anyhow::bail;
use lidguard_config::{Action, Location, Outcome, managed};
use lidguard_core::provider::Provider;

use crate::output;

/// The agents a provider argument names, each with its location and, for `all`, why it is
/// skipped (its config directory does not exist). `refusal` starts the error for an agent
/// lidguard does not manage; `ask` picks one when the argument is missing.
pub(crate) fn targets(
    which: Option<&str>,
    refusal: &str,
    ask: impl FnOnce() -> anyhow::Result<Provider>,
    locate: impl Fn(Provider) -> Result<Location, lidguard_config::ConfigError>,
) -> anyhow::Result<Vec<(Provider, Location, Option<String>)>> {
    let chosen = match which {
        Some("all") => None,
        Some(name) => {
            let p: Provider = name.parse()?;
            if !managed().contains(&p) {
                let names: Vec<&str> = managed().iter().map(|p| p.as_str()).collect();
                bail!("{refusal} {}, not {p}", names.join(", "));
            }
            Some(p)
        }
        None => Some(ask()?),
    };
    let mut out = Vec::new();
    for p in managed()
        .into_iter()
        .filter(|p| chosen.is_none_or(|c| c == *p))
    {
        let location = locate(p)?;
        let skipped = (chosen.is_none() && !location.root.is_dir())
            .then(|| format!("skipped: {} does not exist", location.root.display()));
        out.push((p, location, skipped));
    }
    Ok(out)
}

/// The targets to edit. Those skipped are reported (a JSON row, or a line when `shown`) and
/// left out.
pub(crate) fn editable(
    targets: Vec<(Provider, Location, Option<String>)>,
    (json, shown): (bool, bool),
    rows: &mut Vec<serde_json::Value>,
) -> anyhow::Result<Vec<(Provider, Location)>> {
    let mut kept = Vec::with_capacity(targets.len());
    for (p, location, skipped) in targets {
        match skipped {
            Some(reason) if json => {
                rows.push(serde_json::json!({"provider": p.as_str(), "skipped": reason}));
            }
            Some(reason) if shown => output::line(&format!("{}: {reason}", p.display_name()))?,
            Some(_) => {}
            None => kept.push((p, location)),
        }
    }
    Ok(kept)
}

/// The end of an install or remove command: with `--json`, the rows its edits returned (they
/// said nothing else).
pub(crate) fn finish(json: bool, rows: &[serde_json::Value]) -> anyhow::Result<ExitCode> {
    if json {
        output::json(&rows)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints what an edit did: `label` names the agent, `what` the entries (`lidguard's hooks`).
pub(crate) fn print(
    label: &str,
    what: &str,
    remove: bool,
    outcome: &Outcome,
) -> anyhow::Result<()> {
    let file = outcome.file.display();
    let link = outcome
        .edited
        .as_ref()
        .map(|real| {
            format!(
                " (a link: the file edited is {}, and the link stays)",
                real.display()
            )
        })
        .unwrap_or_default();
    match &outcome.action {
        Action::Unchanged => {
            let state = if remove {
                "nothing to remove"
            } else {
                "already up to date"
            };
            output::line(&format!("{label}: {state} ({file})"))?;
        }
        Action::WouldChange { diff, delete } => {
            let verb = if *delete {
                "would delete"
            } else {
                "would change"
            };
            output::line(&format!("{label}: {verb} {file}{link}"))?;
            output::prompt(diff)?;
        }
        Action::Written { .. } => {
            let verb = if remove {
                format!("removed {what} from")
            } else {
                format!("installed {what} in")
            };
            output::line(&format!("{label}: {verb} {file}{link}"))?;
        }
        Action::Deleted { kept: None } => output::line(&format!("{label}: removed {file}"))?,
        Action::Deleted { kept: Some(real) } => output::line(&format!(
            "{label}: removed the link {file}; the file it pointed at, {}, is left as it is",
            real.display()
        ))?,
    }
    if let Some(b) = &outcome.backup {
        output::line(&format!("  previous version saved as {}", b.display()))?;
    }
    Ok(())
}
