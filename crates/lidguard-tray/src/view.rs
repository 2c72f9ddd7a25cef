//! What the tray shows, decided from a status snapshot alone (no I/O): one mood, a headline,
//! the tooltip's lines and the menu's session lines.

use jiff::Timestamp;
use lidguard_core::settings::ClosedLidPermissionRequestDecision;
use lidguard_ipc::protocol::{SessionState, Status};

/// The tray's state, most pressing first when several apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mood {
    /// No daemon to follow.
    NoDaemon,
    /// Sessions want protection and it is not held.
    Unavailable,
    /// A suspend is on its way.
    SuspendPending,
    /// A session waits for the user.
    Waiting,
    /// The user paused protection.
    Paused,
    /// Protection is held for working sessions.
    Protecting,
    /// Nothing is working.
    Idle,
}

#[cfg_attr(
    not(target_os = "linux"),
    allow(dead_code, reason = "the StatusNotifierItem's Status reads them")
)]
impl Mood {
    /// Whether the user should look (the item's `NeedsAttention`).
    pub(crate) fn needs_attention(self) -> bool {
        matches!(self, Mood::Unavailable | Mood::Waiting)
    }

    /// Whether something is going on (the item's `Active`; else `Passive`).
    pub(crate) fn active(self) -> bool {
        matches!(self, Mood::Protecting | Mood::SuspendPending)
    }

    /// The icon's colour, RGB.
    pub(crate) fn colour(self) -> [u8; 3] {
        match self {
            Mood::NoDaemon => [0x61, 0x61, 0x61],
            Mood::Unavailable => [0xc6, 0x28, 0x28],
            Mood::SuspendPending => [0x15, 0x65, 0xc0],
            Mood::Waiting => [0xf9, 0xa8, 0x25],
            Mood::Paused | Mood::Idle => [0x9e, 0x9e, 0x9e],
            Mood::Protecting => [0x2e, 0x7d, 0x32],
        }
    }
}

impl Mood {
    /// The icon: a disc in the mood's colour (with pause bars while paused), `size`² pixels,
    /// row by row, each `[red, green, blue, alpha]`.
    pub(crate) fn picture(self, size: i32) -> Vec<[u8; 4]> {
        let [r, g, b] = self.colour();
        let n = size as f32;
        let centre = (n - 1.0) / 2.0;
        let radius = n / 2.0 - 1.0;
        let mut pixels = Vec::with_capacity((size * size) as usize);
        for y in 0..size {
            for x in 0..size {
                let (dx, dy) = (x as f32 - centre, y as f32 - centre);
                let distance = (dx * dx + dy * dy).sqrt();
                // Edge pixels partly covered, for a smooth rim.
                let cover = (radius - distance + 0.5).clamp(0.0, 1.0);
                let bar = self == Mood::Paused
                    && dy.abs() < n * 0.22
                    && (dx.abs() - n * 0.11).abs() < n * 0.06;
                let [r, g, b] = if bar { [255; 3] } else { [r, g, b] };
                pixels.push([r, g, b, (cover * 255.0) as u8]);
            }
        }
        pixels
    }
}

/// Everything the tray shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct View {
    pub(crate) mood: Mood,
    /// One line: the tooltip's title.
    pub(crate) headline: String,
    /// The tooltip's body, a line each.
    pub(crate) detail: Vec<String>,
    /// A line per session: agent, project, state.
    pub(crate) sessions: Vec<String>,
    pub(crate) paused: bool,
    pub(crate) suspend_pending: bool,
    /// `None` without a daemon (the setting is not known).
    pub(crate) closed_lid: Option<ClosedLidPermissionRequestDecision>,
    /// The last action's outcome, when it failed.
    pub(crate) note: Option<String>,
}

impl View {
    /// The view of `status` (`None`: no daemon, `why` says what happened) at `now`.
    pub(crate) fn of(status: Option<&Status>, why: Option<&str>, now: Timestamp) -> View {
        let Some(s) = status else {
            return View {
                mood: Mood::NoDaemon,
                headline: "lidguard: the daemon is not running".to_owned(),
                detail: vec![
                    why.unwrap_or("nothing is held").to_owned(),
                    "It starts with the next agent event; \"Start the daemon\" starts it now."
                        .to_owned(),
                ],
                sessions: Vec::new(),
                paused: false,
                suspend_pending: false,
                closed_lid: None,
                note: None,
            };
        };
        let p = &s.protection;
        let working = s
            .sessions
            .iter()
            .filter(|x| x.state == SessionState::Active || x.pending_provider_work)
            .count();
        let waiting = s.sessions.len() - working;
        let lid_safe = p.inhibitors.iter().any(|i| i == "handle-lid-switch");
        let (mood, headline) = if p.wanted && !p.held && p.released_for().is_none() {
            let reason = p.unavailable_reason.as_deref().unwrap_or("unknown reason");
            // The agents at work are counted here too: they are what is not protected.
            let headline = match working {
                0 => format!("lidguard: protection unavailable: {reason}"),
                n => format!("lidguard: {} working, NOT protected: {reason}", agents(n)),
            };
            (Mood::Unavailable, headline)
        } else if let Some(pending) = &s.pending_suspend {
            let left = pending.due_at.duration_since(now).as_secs().max(0);
            (
                Mood::SuspendPending,
                format!("lidguard: suspend in {left} s (the lid is closed and the work ended)"),
            )
        } else if waiting > 0 {
            (
                Mood::Waiting,
                format!("lidguard: {} waiting for you", agents(waiting)),
            )
        } else if let Some(pause) = &p.paused {
            let until = match pause.until {
                Some(at) => format!("until {}", lidguard_ipc::words::local_time(at)),
                None => "until you resume it".to_owned(),
            };
            (Mood::Paused, format!("lidguard: protection paused {until}"))
        } else if p.held {
            let lid = if lid_safe {
                "lid-close safe"
            } else {
                "closing the lid may sleep"
            };
            (
                Mood::Protecting,
                format!("lidguard: {} working · {lid}", agents(working)),
            )
        } else {
            (Mood::Idle, "lidguard: idle, nothing held".to_owned())
        };
        let mut detail = vec![format!("Protection: {}", p.in_words())];
        detail.push(format!("Lid: {}", s.lid));
        let sessions: Vec<String> = s
            .sessions
            .iter()
            .map(|x| {
                let project = x
                    .cwd
                    .as_deref()
                    .and_then(|c| c.rsplit(['/', '\\']).find(|part| !part.is_empty()))
                    .unwrap_or("?");
                let state = match (x.state, x.pending_provider_work) {
                    (SessionState::Active, true) if x.wakes_at.is_some() => "held for its wake-up",
                    (SessionState::Active, true) => "working (background)",
                    (SessionState::Active, false) => "working",
                    (SessionState::SoftLocked, _) => "waiting for you",
                };
                let text = format!("{} · {project} · {state}", x.provider);
                lidguard_core::text::escape_controls(&text).into_owned()
            })
            .collect();
        View {
            mood,
            headline,
            detail,
            sessions,
            paused: p.paused.is_some(),
            suspend_pending: s.pending_suspend.is_some(),
            closed_lid: Some(s.settings.closed_lid_permission_request_decision),
            note: None,
        }
    }

    /// Whether the view changes by itself each second (a countdown on show).
    pub(crate) fn counting_down(&self) -> bool {
        self.mood == Mood::SuspendPending
    }
}

fn agents(n: usize) -> String {
    match n {
        1 => "1 agent".to_owned(),
        n => format!("{n} agents"),
    }
}

#[cfg(test)]
mod tests {
    use lidguard_core::settings::{Os, Settings};
    use lidguard_ipc::protocol::{CleanupStatus, ProtectionStatus, StoreStatus};

    use super::*;

    fn status(held: bool, wanted: bool) -> Status {
        Status {
            sessions: Vec::new(),
            protection: ProtectionStatus {
                held,
                inhibitors: if held {
                    vec!["idle".into(), "handle-lid-switch".into()]
                } else {
                    Vec::new()
                },
                delay_inhibitors: Vec::new(),
                unavailable_reason: (wanted && !held).then(|| "logind refused".to_owned()),
                wanted,
                why: None,
                backend: None,
                battery_floor: None,
                thermal_pressure: None,
                paused: None,
            },
            lid: "Closed".into(),
            battery: None,
            thermal_state: None,
            visible_displays: None,
            external_displays: None,
            daemon_pid: 1,
            daemon_version: String::new(),
            daemon_started_at: Timestamp::UNIX_EPOCH,
            cleanup: CleanupStatus {
                delay_minutes: None,
                exit_at: None,
            },
            store: StoreStatus {
                path: String::new(),
                error: None,
                moved_aside: None,
            },
            settings: Settings::defaults_for(Os::Linux),
            settings_file: String::new(),
            settings_error: None,
            pending_suspend: None,
            ask_before_sleep: String::new(),
            phone: Default::default(),
            released_wake_ups: Vec::new(),
        }
    }

    /// A working Claude session `id`.
    fn session(id: &str) -> lidguard_ipc::protocol::SessionStatus {
        use lidguard_core::provider::Provider;
        use lidguard_core::session::{Session, SessionKey};
        let at = Timestamp::UNIX_EPOCH;
        let session = Session {
            key: SessionKey::new(Provider::Claude, id, ""),
            cwd: Some("/home/me/project".into()),
            transcript_path: None,
            watched_pid: None,
            run_by: None,
            via: None,
            started_at: at,
            last_activity_at: at,
            soft_lock: None,
            pending_work: None,
            background: Default::default(),
            prompt_preview: None,
            last_assistant_message: None,
        };
        lidguard_ipc::protocol::SessionStatus::from_session(&session, None)
    }

    #[track_caller]
    fn assert_headline_says(view: &View, text: &str) {
        assert!(view.headline.contains(text), "{}", view.headline);
    }

    #[test]
    fn a_failed_protection_outranks_everything_and_needs_the_user() {
        let view = View::of(Some(&status(false, true)), None, Timestamp::UNIX_EPOCH);
        assert_eq!(view.mood, Mood::Unavailable);
        assert!(view.mood.needs_attention());
        assert_headline_says(&view, "logind refused");
        // With agents at work, it says how many are not protected.
        let mut s = status(false, true);
        s.sessions = vec![session("a"), session("b")];
        let view = View::of(Some(&s), None, Timestamp::UNIX_EPOCH);
        assert_headline_says(&view, "2 agents working, NOT protected: logind refused");
    }

    #[test]
    fn held_without_the_lid_switch_says_the_lid_may_sleep() {
        let mut s = status(true, true);
        s.protection.inhibitors = vec!["idle".into()];
        let view = View::of(Some(&s), None, Timestamp::UNIX_EPOCH);
        assert_eq!(view.mood, Mood::Protecting);
        assert!(view.mood.active());
        assert_headline_says(&view, "closing the lid may sleep");
    }

    #[test]
    fn no_daemon_is_passive_and_says_how_to_start_it() {
        let view = View::of(None, Some("not running"), Timestamp::UNIX_EPOCH);
        assert_eq!(view.mood, Mood::NoDaemon);
        assert!(!view.mood.active() && !view.mood.needs_attention());
        assert_eq!(view.detail[0], "not running");
        assert!(view.closed_lid.is_none());
    }

    #[test]
    fn a_pause_shows_as_paused_not_as_a_failure() {
        let mut s = status(false, true);
        s.protection.unavailable_reason = None;
        s.protection.paused = Some(lidguard_core::protection::Pause {
            since: Timestamp::UNIX_EPOCH,
            until: None,
        });
        // Wanted and not held because paused: not "unavailable".
        s.protection.wanted = false;
        let view = View::of(Some(&s), None, Timestamp::UNIX_EPOCH);
        assert_eq!(view.mood, Mood::Paused);
        assert!(view.headline.ends_with("until you resume it"));
        assert!(view.paused);
    }
}
