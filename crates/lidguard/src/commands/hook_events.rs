//! `lidguard hook-events`: what the hooks reported, from the event log (read directly from the
//! database, so it works whether or not the daemon runs).

use std::process::ExitCode;

use anyhow::Context;
use jiff::tz::TimeZone;
use lidguard_daemon::HOOK_EVENT;
use lidguard_ipc::Places;
use lidguard_store::EventRow;
use serde_json::Value;

use crate::cli::HookEventsArgs;
use crate::output;

pub(crate) fn run(places: &Places, args: &HookEventsArgs) -> anyhow::Result<ExitCode> {
    if args.receipts {
        return receipts(places, args);
    }
    let (rows, entries) = event_log(
        places,
        HOOK_EVENT,
        args.provider.map(|p| p.as_str()),
        args.count,
    )?;
    if !output::listing(&entries, args.json, "No hook events recorded yet.")? {
        return Ok(ExitCode::SUCCESS);
    }
    for (row, entry) in rows.iter().zip(&entries) {
        let local = row.at.to_zoned_datetime(TimeZone::system());
        let text = |key: &str| entry[key].as_str().unwrap_or("").to_owned();
        let mut line = format!(
            "{}  {:<8} {:<22} {:<20} {}",
            local.strftime("%Y-%m-%d %H:%M:%S"),
            text("provider"),
            text("hookEvent"),
            text("kind"),
            text("sessionId"),
        );
        if let Some(tool) = entry["tool"].as_str() {
            line.push_str(&format!("  tool={tool}"));
        }
        if let Some(action) = entry["decision"]["action"].as_str() {
            line.push_str(&format!("  decision={action}"));
        }
        if let Some(prompt) = entry["prompt"].as_str() {
            let short: String = prompt.chars().take(60).collect();
            line.push_str(&format!("  prompt={short:?}"));
        }
        output::line(&line)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The newest `count` entries named `name` from the event log (read directly from the
/// database; none when it does not exist yet), each also as JSON: `at`, `provider`,
/// `sessionId` and the entry's details.
pub(crate) fn event_log(
    places: &Places,
    name: &str,
    provider: Option<&str>,
    count: usize,
) -> anyhow::Result<(Vec<EventRow>, Vec<Value>)> {
    let path = places.database();
    let rows = if path.exists() {
        super::open_store(places)
            .with_context(|| format!("cannot open lidguard's database {}", path.display()))?
            .recent_events_matching(name, provider, count)?
    } else {
        Vec::new()
    };
    let entries = rows
        .iter()
        .map(|row| {
            let mut detail: Value = serde_json::from_str(&row.detail_json).unwrap_or(Value::Null);
            let mut entry = serde_json::json!({
                "at": row.at.to_string(),
                "provider": row.provider,
                "sessionId": row.session_id,
            });
            if let (Some(entry), Some(detail)) = (entry.as_object_mut(), detail.as_object_mut()) {
                entry.append(detail);
            }
            entry
        })
        .collect();
    Ok((rows, entries))
}

fn receipts(places: &Places, args: &HookEventsArgs) -> anyhow::Result<ExitCode> {
    let path = places.database();
    let mut rows = if path.exists() {
        super::open_store(places)?.hook_receipts()?
    } else {
        Vec::new()
    };
    if let Some(provider) = args.provider {
        rows.retain(|r| r.provider == provider.as_str());
    }
    if args.json {
        let entries: Vec<Value> = rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "provider": r.provider,
                    "event": r.event,
                    "count": r.count,
                    "lastSeen": r.last_seen.to_string(),
                })
            })
            .collect();
        output::json(&entries)?;
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        output::line("No hook events recorded yet.")?;
    }
    for r in &rows {
        let local = r.last_seen.to_zoned_datetime(TimeZone::system());
        output::line(&format!(
            "{:<8} {:<24} {:>8}  last {}",
            r.provider,
            r.event,
            r.count,
            local.strftime("%Y-%m-%d %H:%M:%S")
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}
