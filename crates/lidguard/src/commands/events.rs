//! `lidguard events [--follow] [--json]`: the daemon's event stream, replayed and followed.

use std::process::ExitCode;

use anyhow::Context;
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};
use lidguard_ipc::client::ClientError;
use lidguard_ipc::stream::{Replay, Source, StreamEvent, StreamFilter, Verdict};
use lidguard_ipc::{Daemon, Places};

use super::session::{daemon_error, starting_daemon};
use crate::cli::EventsArgs;
use crate::output;

pub(crate) fn run(places: &Places, args: &EventsArgs) -> anyhow::Result<ExitCode> {
    let replay = parse_since(args.since.as_deref(), Timestamp::now())?;
    let filter = StreamFilter {
        provider: args.provider,
        session_id: args.session.clone(),
    };
    // A follower starts the daemon when none runs (it then sees everything from the start).
    let daemon = if args.follow {
        starting_daemon(places)?
    } else {
        Daemon::new(places)
    };
    let mut lines = match daemon.events(filter, replay, args.follow) {
        Ok(lines) => lines,
        Err(ClientError::NotRunning { .. }) if !args.follow => {
            output::line(
                "The lidguard daemon is not running: there are no events to show \
                 (`lidguard events --follow` starts it and waits for events).",
            )?;
            return Ok(ExitCode::SUCCESS);
        }
        Err(e) => return Err(daemon_error(e)),
    };
    let tz = TimeZone::system();
    for line in &mut lines {
        let line = line.context("reading the event stream")?;
        if args.json {
            output::line(&line)?;
            continue;
        }
        match serde_json::from_str::<StreamEvent>(&line) {
            Ok(event) => output::line(&render(&event, &tz))?,
            Err(e) => tracing::warn!(error = %e, "an event line this build cannot read"),
        }
    }
    if args.follow && !args.json {
        output::line("The lidguard daemon stopped; the stream ended.")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `--since`: `now` (no replay), `all` (everything kept), a duration back from `now` (`90s`,
/// `10m`, `2h`, `1d`), or an RFC 3339 time. Absent: the last few events.
pub(crate) fn parse_since(since: Option<&str>, now: Timestamp) -> anyhow::Result<Replay> {
    let Some(text) = since.map(str::trim) else {
        return Ok(Replay::default());
    };
    match text {
        "now" => return Ok(Replay::Last(0)),
        "all" => return Ok(Replay::Last(usize::MAX)),
        _ => {}
    }
    if let Ok(at) = text.parse::<Timestamp>() {
        return Ok(Replay::Since(at));
    }
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let seconds_per = match unit {
        "s" | "" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => 0,
    };
    match number.parse::<i64>() {
        Ok(n) if seconds_per > 0 => Ok(Replay::Since(
            now.checked_sub(SignedDuration::from_secs(n.saturating_mul(seconds_per)))
                .unwrap_or(Timestamp::MIN),
        )),
        _ => anyhow::bail!(
            "--since {text:?}: give `now`, `all`, a duration such as 90s, 10m, 2h or 1d, or a \
             time such as 2026-12-02T10:00:00Z"
        ),
    }
}

/// One event as a line for people, in local time.
pub(crate) fn render(event: &StreamEvent, tz: &TimeZone) -> String {
    let o = &event.observation;
    let time =
        o.at.to_zoned_datetime(tz.clone())
            .strftime("%H:%M:%S")
            .to_string();
    let who = match (&o.provider, &o.session_id) {
        (Some(p), Some(s)) => format!("{p} {s}"),
        _ => match o.source {
            Source::Stream => "stream".to_owned(),
            Source::Hook | Source::Daemon => "daemon".to_owned(),
        },
    };
    let mut text = format!("{time}  {who}  {}", o.kind);
    for part in [&o.hook_event, &o.tool, &o.detail].into_iter().flatten() {
        text.push_str("  ");
        text.push_str(part);
    }
    let a = &event.authority;
    if a.decision != Verdict::None {
        let verdict = serde_json::to_value(a.decision)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        text.push_str(&format!("  → {verdict}"));
        if let Some(p) = &a.provenance {
            let mut why = Vec::new();
            if let (Some(setting), Some(value)) = (&p.setting, &p.value) {
                why.push(format!("{setting}={value}"));
            }
            if let Some(lid) = p.lid {
                why.push(format!("lid {lid:?}"));
            }
            if let Some(n) = p.external_displays {
                why.push(format!("{n} external displays"));
            }
            if let Some(reason) = &p.reason {
                why.push(reason.clone());
            }
            if !why.is_empty() {
                text.push_str(&format!(" ({})", why.join(", ")));
            }
        }
    }
    if !event.visibility.webhooks.is_empty() && o.source == Source::Hook {
        text.push_str(&format!(
            "  webhook: {}",
            event.visibility.webhooks.join(", ")
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_words_durations_and_times() {
        let now: Timestamp = "2026-12-02T12:00:00Z".parse().unwrap();
        assert_eq!(parse_since(None, now).unwrap(), Replay::default());
        assert_eq!(parse_since(Some("now"), now).unwrap(), Replay::Last(0));
        assert_eq!(
            parse_since(Some("all"), now).unwrap(),
            Replay::Last(usize::MAX)
        );
        assert_eq!(
            parse_since(Some("10m"), now).unwrap(),
            Replay::Since("2026-12-02T11:50:00Z".parse().unwrap())
        );
        assert_eq!(
            parse_since(Some("90"), now).unwrap(),
            Replay::Since("2026-12-02T11:58:30Z".parse().unwrap())
        );
        assert_eq!(
            parse_since(Some("2026-12-01T00:00:00Z"), now).unwrap(),
            Replay::Since("2026-12-01T00:00:00Z".parse().unwrap())
        );
        let err = parse_since(Some("yesterday"), now).unwrap_err();
        assert!(err.to_string().contains("10m"), "{err}");
    }
}
