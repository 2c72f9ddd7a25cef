//! When Claude Code's session crons fire next: the cron dialect of its `CronCreate`,
//! `ScheduleWakeup` and `/loop`, read from 2.1.337's bundle (README, "Scheduled wake-ups").
//!
//! Five fields, minute hour day-of-month month day-of-week, in **local time**; each field a
//! comma list of `*`, `*/n`, `a`, `a-b` or `a-b/n`; day-of-week 0–7 (Sunday 0 or 7). As in Vixie
//! cron, when both day fields are restricted a day matching either one matches. A one-shot
//! wake-up (`ScheduleWakeup`) is a cron pinned to its minute and hour.

use jiff::civil::{Date, DateTime};
use jiff::{ToSpan, ZonedDateTime as Zoned};

/// Claude searches at most this many minutes ahead (366 days); so does lidguard.
const SEARCH_MINUTES: i64 = 527_040;

/// One parsed cron expression: the allowed values of each field.
#[derive(Debug, PartialEq, Eq)]
struct Cron {
    minute: Vec<i8>,
    hour: Vec<i8>,
    day_of_month: Vec<i8>,
    month: Vec<i8>,
    day_of_week: Vec<i8>,
}

/// The bounds of each field, in order.
const FIELDS: [(i8, i8); 5] = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 6)];

impl Cron {
    fn parse(expr: &str) -> Option<Cron> {
        let parts: Vec<&str> = expr.split_whitespace().collect();
        let [minute, hour, day_of_month, month, day_of_week] = parts.as_slice() else {
            return None;
        };
        Some(Cron {
            minute: field(minute, FIELDS[0])?,
            hour: field(hour, FIELDS[1])?,
            day_of_month: field(day_of_month, FIELDS[2])?,
            month: field(month, FIELDS[3])?,
            day_of_week: field(day_of_week, FIELDS[4])?,
        })
    }

    fn day_matches(&self, date: Date) -> bool {
        let any_dom = self.day_of_month.len() == 31;
        let any_dow = self.day_of_week.len() == 7;
        let dom = self.day_of_month.contains(&date.day());
        let dow = self
            .day_of_week
            .contains(&date.weekday().to_sunday_zero_offset());
        match (any_dom, any_dow) {
            (true, true) => true,
            (true, false) => dow,
            (false, true) => dom,
            (false, false) => dom || dow,
        }
    }
}

/// The values one field allows, or `None` when it is not valid. Day-of-week also takes 7 for
/// Sunday, as 2.1.337 does.
fn field(text: &str, (min, max): (i8, i8)) -> Option<Vec<i8>> {
    let weekday = (min, max) == (0, 6);
    let number = |s: &str| -> Option<i8> {
        s.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| s.parse().ok())
            .flatten()
    };
    let mut values = Vec::new();
    for item in text.split(',') {
        let (range, step) = match item.split_once('/') {
            Some((range, step)) => (range, number(step).filter(|s| *s >= 1)?),
            None => (item, 1),
        };
        let (from, to) = match range {
            "*" => (min, max),
            _ => match range.split_once('-') {
                Some((a, b)) => (number(a)?, number(b)?),
                // `5/10` is not Claude's: a step needs `*` or a range.
                None if step == 1 && !item.contains('/') => {
                    let v = number(range)?;
                    (v, v)
                }
                None => return None,
            },
        };
        let top = if weekday { 7 } else { max };
        if from < min || to > top || from > to {
            return None;
        }
        let step = usize::try_from(step).ok()?;
        values.extend(
            (from..=to)
                .step_by(step)
                .map(|v| if weekday && v == 7 { 0 } else { v }),
        );
    }
    values.sort_unstable();
    values.dedup();
    Some(values)
}

/// The first time after `after` (from the next whole minute on) that `expr` matches, in
/// `after`'s time zone; `None` for an invalid expression or none within a year.
pub(crate) fn next_fire(expr: &str, after: &Zoned) -> Option<Zoned> {
    let cron = Cron::parse(expr)?;
    let whole = jiff::civil::DateTimeRound::new()
        .smallest(jiff::Unit::Minute)
        .mode(jiff::RoundMode::Trunc);
    let mut t = after
        .datetime()
        .round(whole)
        .ok()?
        .checked_add(1.minute())
        .ok()?;
    let end = t.checked_add(SEARCH_MINUTES.minutes()).ok()?;
    while t < end {
        if !cron.month.contains(&t.month()) {
            t = first_of_next_month(t)?;
        } else if !cron.day_matches(t.date()) {
            t = t
                .date()
                .tomorrow()
                .ok()?
                .to_datetime(jiff::civil::Time::midnight());
        } else if !cron.hour.contains(&t.hour()) {
            t = t
                .with()
                .minute(0)
                .build()
                .ok()?
                .checked_add(1.hour())
                .ok()?;
        } else if !cron.minute.contains(&t.minute()) {
            t = t.checked_add(1.minute()).ok()?;
        } else {
            // A wall-clock time skipped by a DST change fires at the first time after the gap,
            // as Claude's Date arithmetic does.
            return after.time_zone().to_zoned_datetime(t).ok();
        }
    }
    None
}

fn first_of_next_month(t: DateTime) -> Option<DateTime> {
    let first = t.date().first_of_month().checked_add(1.month()).ok()?;
    Some(first.to_datetime(jiff::civil::Time::midnight()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Zoned {
        s.parse().unwrap()
    }

    fn next(expr: &str, after: &str) -> Option<String> {
        next_fire(expr, &at(after)).map(|z| z.to_string())
    }

    #[test]
    fn every_minute_fires_at_the_next_whole_minute() {
        assert_eq!(
            next("*/1 * * * *", "2026-12-07T10:41:30+00:00[UTC]").as_deref(),
            Some("2026-12-07T10:42:00+00:00[UTC]")
        );
        // Exactly on a minute: the next one, not this one.
        assert_eq!(
            next("* * * * *", "2026-12-07T10:41:00+00:00[UTC]").as_deref(),
            Some("2026-12-07T10:42:00+00:00[UTC]")
        );
    }

    #[test]
    fn a_one_shot_wake_up_is_its_minute_and_hour_in_local_time() {
        // `ScheduleWakeup` in 60 s, captured: `0 11 * * *` with the session at 10:59 local.
        assert_eq!(
            next("0 11 * * *", "2026-12-07T10:59:12+01:00[Europe/Paris]").as_deref(),
            Some("2026-12-07T11:00:00+01:00[Europe/Paris]")
        );
        assert_eq!(
            next("0 11 * * *", "2026-12-07T11:00:30+01:00[Europe/Paris]").as_deref(),
            Some("2026-12-08T11:00:00+01:00[Europe/Paris]")
        );
    }

    #[test]
    fn weekdays_ranges_steps_and_lists() {
        // Saturday 2026-12-05 → Monday 09:00.
        assert_eq!(
            next("0 9 * * 1-5", "2026-12-05T12:00:00+00:00[UTC]").as_deref(),
            Some("2026-12-07T09:00:00+00:00[UTC]")
        );
        assert_eq!(
            next("15,45 */6 * * *", "2026-12-07T06:20:00+00:00[UTC]").as_deref(),
            Some("2026-12-07T06:45:00+00:00[UTC]")
        );
        assert_eq!(
            next("30 14 28 2 *", "2026-12-07T00:00:00+00:00[UTC]").as_deref(),
            Some("2027-02-28T14:30:00+00:00[UTC]")
        );
    }

    #[test]
    fn sunday_is_0_or_7() {
        // Monday 2026-12-07 → Sunday 2026-12-13.
        for expr in ["0 8 * * 7", "0 8 * * 0", "0 8 * * 6-7/1"] {
            let want = if expr.ends_with("6-7/1") {
                "2026-12-12T08:00:00+00:00[UTC]"
            } else {
                "2026-12-13T08:00:00+00:00[UTC]"
            };
            assert_eq!(
                next(expr, "2026-12-07T12:00:00+00:00[UTC]").as_deref(),
                Some(want),
                "{expr}"
            );
        }
    }

    #[test]
    fn both_day_fields_restricted_match_either() {
        // The 1st of the month or a Friday: Friday 2026-12-11 comes first.
        assert_eq!(
            next("0 0 1 * 5", "2026-12-07T00:00:00+00:00[UTC]").as_deref(),
            Some("2026-12-11T00:00:00+00:00[UTC]")
        );
    }

    #[test]
    fn a_time_skipped_by_dst_fires_after_the_gap() {
        // 2027-03-28 02:30 does not exist in Paris (02:00 → 03:00).
        assert_eq!(
            next("30 2 28 3 *", "2027-03-27T12:00:00+01:00[Europe/Paris]").as_deref(),
            Some("2027-03-28T03:30:00+02:00[Europe/Paris]")
        );
    }

    #[test]
    fn what_claude_would_refuse_never_fires() {
        for bad in [
            "* * * *",
            "60 * * * *",
            "* * * * 8",
            "+5 * * * *",
            "5/10 * * * *",
            "*/0 * * * *",
            "a * * * *",
            "9-3 * * * *",
            "",
        ] {
            assert_eq!(next(bad, "2026-12-07T00:00:00+00:00[UTC]"), None, "{bad}");
        }
        // 30 February never comes.
        assert_eq!(next("0 0 30 2 *", "2026-12-07T00:00:00+00:00[UTC]"), None);
    }
}
