//! The tray's menu as data, the same on every platform: each tray backend draws these entries
//! its own way and sends the [`Action`] of the one picked.

use lidguard_core::settings::ClosedLidPermissionRequestDecision as Decision;

use super::Action;
use super::view::{Mood, View};

/// The closed-lid decisions in the order the menu lists them.
pub(crate) const DECISIONS: [(Decision, &str); 4] = [
    (Decision::Deny, "Deny (the agent moves on)"),
    (Decision::Allow, "Allow"),
    (Decision::Ask, "Ask me (the agent waits)"),
    (Decision::Remote, "Ask my phone"),
];

/// The submenu's label for the closed-lid decision.
pub(crate) const CLOSED_LID_LABEL: &str = "Permission prompts with the lid closed";

/// One line of the menu.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Entry {
    /// A line to read (greyed).
    Text(String),
    /// A line to pick.
    Action {
        label: &'static str,
        action: Action,
        enabled: bool,
    },
    Separator,
    /// The submenu of [`DECISIONS`], the one in force marked.
    ClosedLid(Decision),
}

fn action(label: &'static str, action: Action, enabled: bool) -> Entry {
    Entry::Action {
        label,
        action,
        enabled,
    }
}

/// The menu for `v`: its headline, the sessions, pause or resume, cancel the pending suspend,
/// the closed-lid decision, live-status and quit.
pub(crate) fn entries(v: &View) -> Vec<Entry> {
    let mut menu = vec![Entry::Text(v.headline.clone())];
    if v.mood == Mood::NoDaemon {
        menu.push(action("Start the daemon", Action::StartDaemon, true));
    }
    if !v.sessions.is_empty() {
        menu.push(Entry::Separator);
        menu.extend(v.sessions.iter().cloned().map(Entry::Text));
    }
    menu.push(Entry::Separator);
    let live = v.mood != Mood::NoDaemon;
    if v.paused {
        menu.push(action("Resume protection", Action::Resume, live));
    } else {
        menu.push(action(
            "Pause protection for 30 min",
            Action::Pause(Some(30)),
            live,
        ));
        menu.push(action(
            "Pause protection for 1 h",
            Action::Pause(Some(60)),
            live,
        ));
        menu.push(action(
            "Pause protection until resumed",
            Action::Pause(None),
            live,
        ));
    }
    menu.push(action(
        "Cancel the pending suspend",
        Action::CancelSuspend,
        v.suspend_pending,
    ));
    if let Some(current) = v.closed_lid {
        menu.push(Entry::ClosedLid(current));
    }
    menu.push(Entry::Separator);
    menu.push(action("Open live-status", Action::OpenLiveStatus, true));
    menu.push(action("Quit the tray", Action::Quit, true));
    menu
}

/// The number that stands for `action` in a menu whose items carry numbers (macOS's tags): the
/// same for the same action in every menu built, so a pick in a menu shown before the latest
/// view still means what it said.
#[cfg_attr(
    not(target_os = "macos"),
    allow(dead_code, reason = "the macOS menu-bar item's items carry these")
)]
pub(crate) fn tag(action: Action) -> isize {
    match action {
        Action::Pause(None) => 1,
        Action::Resume => 2,
        Action::CancelSuspend => 3,
        Action::OpenLiveStatus => 4,
        Action::StartDaemon => 5,
        Action::Quit => 6,
        Action::ClosedLid(decision) => {
            10 + DECISIONS
                .iter()
                .position(|(d, _)| *d == decision)
                .unwrap_or_default() as isize
        }
        Action::Pause(Some(minutes)) => 1000 + minutes as isize,
    }
}

/// The action [`tag`] gave `number`.
#[cfg_attr(
    not(target_os = "macos"),
    allow(dead_code, reason = "the macOS menu-bar item's items carry these")
)]
pub(crate) fn action_of(number: isize) -> Option<Action> {
    Some(match number {
        1 => Action::Pause(None),
        2 => Action::Resume,
        3 => Action::CancelSuspend,
        4 => Action::OpenLiveStatus,
        5 => Action::StartDaemon,
        6 => Action::Quit,
        10..1000 => Action::ClosedLid(DECISIONS.get((number - 10) as usize)?.0),
        1000.. => Action::Pause(Some(u32::try_from(number - 1000).ok()?)),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use jiff::Timestamp;

    use super::*;

    fn labels(entries: &[Entry]) -> Vec<(&str, bool)> {
        entries
            .iter()
            .filter_map(|e| match e {
                Entry::Action { label, enabled, .. } => Some((*label, *enabled)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn without_a_daemon_only_starting_it_live_status_and_quit_can_be_picked() {
        let view = View::of(None, Some("not running"), Timestamp::UNIX_EPOCH);
        let entries = entries(&view);
        assert_eq!(entries[0], Entry::Text(view.headline));
        let enabled: Vec<&str> = labels(&entries)
            .into_iter()
            .filter(|(_, enabled)| *enabled)
            .map(|(label, _)| label)
            .collect();
        assert_eq!(
            enabled,
            ["Start the daemon", "Open live-status", "Quit the tray"]
        );
        // The setting is not known without a daemon: no decision to mark.
        assert!(!entries.iter().any(|e| matches!(e, Entry::ClosedLid(_))));
    }

    #[test]
    fn every_action_a_menu_offers_has_a_number_that_gives_it_back() {
        let mut view = View::of(None, Some("not running"), Timestamp::UNIX_EPOCH);
        let mut actions: Vec<Action> = Vec::new();
        for paused in [false, true] {
            view.paused = paused;
            for entry in entries(&view) {
                if let Entry::Action { action, .. } = entry {
                    actions.push(action);
                }
            }
        }
        actions.extend(DECISIONS.iter().map(|(d, _)| Action::ClosedLid(*d)));
        assert!(actions.len() >= 12, "{actions:?}");
        for a in &actions {
            assert_eq!(action_of(tag(*a)), Some(*a));
            for b in &actions {
                assert!(
                    a == b || tag(*a) != tag(*b),
                    "{a:?} and {b:?} share a number"
                );
            }
        }
        assert_eq!(action_of(0), None);
        assert_eq!(action_of(10 + DECISIONS.len() as isize), None);
    }

    #[test]
    fn paused_offers_resume_and_the_decision_in_force_is_marked() {
        let mut view = View::of(None, None, Timestamp::UNIX_EPOCH);
        view.mood = Mood::Paused;
        view.paused = true;
        view.closed_lid = Some(Decision::Ask);
        view.sessions = vec!["Claude · proj · working".to_owned()];
        let entries = entries(&view);
        let picked = labels(&entries);
        assert!(picked.contains(&("Resume protection", true)), "{picked:?}");
        assert!(!picked.iter().any(|(l, _)| l.starts_with("Pause")));
        assert!(picked.contains(&("Cancel the pending suspend", false)));
        assert!(entries.contains(&Entry::Text("Claude · proj · working".to_owned())));
        assert!(entries.contains(&Entry::ClosedLid(Decision::Ask)));
    }
}
