//! An agent's own scheduled wake-up (Claude Code's `session_crons` on Stop), on the virtual
//! clock with the lid closed: a near one keeps the machine awake until it comes, a far one lets
//! the machine sleep and the wake-up starts the session again.

mod sim;

use jiff::{SignedDuration, Timestamp};
use lidguard_core::event::EventKind;
use lidguard_core::settings::Settings;
use sim::{CLOSED, Sim, key};

/// 12 minutes, the default inactivity timeout.
fn settings() -> Settings {
    let s = Settings::default();
    assert_eq!(s.session_timeout_minutes, Some(12));
    s
}

fn in_secs(sim: &Sim, secs: i64) -> Timestamp {
    sim.now
        .checked_add(SignedDuration::from_secs(secs))
        .unwrap()
}

/// Claude's Stop for session `id`, with its earliest session cron due at `wakes_at`.
fn stop_with_wake_up(sim: &mut Sim, id: &str, wakes_at: Option<Timestamp>) {
    sim.hook(
        id,
        "Stop",
        EventKind::TurnStopped {
            stop_hook_active: false,
            running_work: Some(Vec::new()),
            can_continue: true,
            wakes_at,
        },
    );
}

fn log_names(sim: &Sim) -> Vec<String> {
    sim.effects
        .iter()
        .filter_map(|e| match e {
            lidguard_core::registry::Effect::Log(log) => Some(log.name.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_near_wake_up_holds_until_it_comes_and_its_turn_goes_on_as_work() {
    let mut sim = Sim::with(settings(), CLOSED);
    sim.prompt("loop");
    let wake = in_secs(&sim, 5 * 60);
    stop_with_wake_up(&mut sim, "loop", Some(wake));
    let session = sim.reg.session(&key("loop")).expect("held, not ended");
    let pending = session.pending_work.as_ref().expect("held for the wake-up");
    assert_eq!(pending.wakes_at, Some(wake));
    assert!(sim.reg.protection().is_some(), "held with the lid closed");
    assert!(sim.reg.pending_suspend().is_none());
    assert_eq!(sim.reg.released_wake_ups(sim.now).count(), 0);
    // Silent until its wake-up and beyond, for less than the timeout after it: still held.
    sim.advance(5 * 60 + 11 * 60);
    assert!(sim.reg.protection().is_some());
    // The cron fires: Claude submits its prompt (UserPromptSubmit), the turn works, and ends
    // with the next wake-up of a recurring cron.
    sim.prompt("loop");
    assert!(
        sim.reg
            .session(&key("loop"))
            .unwrap()
            .pending_work
            .is_none()
    );
    let next = in_secs(&sim, 5 * 60);
    stop_with_wake_up(&mut sim, "loop", Some(next));
    assert!(sim.reg.protection().is_some());
    assert!(
        sim.requests().is_empty(),
        "never suspended while the loop runs"
    );
}

#[test]
fn a_wake_up_that_never_comes_lets_go_one_timeout_after_it_was_due() {
    let mut sim = Sim::with(settings(), CLOSED);
    sim.prompt("s");
    let wake = in_secs(&sim, 10 * 60);
    stop_with_wake_up(&mut sim, "s", Some(wake));
    let status_deadline = sim
        .reg
        .session_deadline(sim.reg.session(&key("s")).unwrap());
    assert_eq!(
        status_deadline,
        Some(wake.checked_add(SignedDuration::from_mins(12)).unwrap()),
        "status says when it times out: 12 minutes after the wake-up was due"
    );
    sim.advance(10 * 60 + 12 * 60 - 1);
    assert!(sim.reg.session(&key("s")).unwrap().needs_protection());
    sim.advance(1);
    let session = sim.reg.session(&key("s")).unwrap();
    assert!(!session.needs_protection(), "let go at the deadline");
    assert!(session.pending_work.is_none());
    assert!(log_names(&sim).contains(&"session-wake-up-missed".to_owned()));
    assert!(
        sim.reg.pending_suspend().is_some(),
        "lid closed: a suspend is on its way"
    );
}

#[test]
fn a_far_wake_up_releases_at_once_and_says_so_until_it_comes() {
    let mut sim = Sim::with(settings(), CLOSED);
    sim.prompt("daily");
    // Just beyond the 12-minute timeout.
    let wake = in_secs(&sim, 12 * 60 + 1);
    stop_with_wake_up(&mut sim, "daily", Some(wake));
    assert!(sim.reg.session(&key("daily")).is_none(), "ended");
    assert!(
        sim.reg.pending_suspend().is_some(),
        "held only for the suspend on its way"
    );
    assert!(log_names(&sim).contains(&"session-wake-up-far".to_owned()));
    let released: Vec<_> = sim
        .reg
        .released_wake_ups(sim.now)
        .map(|(k, at)| (k.clone(), at))
        .collect();
    assert_eq!(released, vec![(key("daily"), wake)]);
    // The machine sleeps (lid closed) after the post-stop delay.
    sim.advance(60);
    assert_eq!(sim.requests().len(), 1, "the closed-lid suspend went out");
    // It wakes; the cron fires and Claude submits its prompt: protected again, nothing listed.
    sim.advance(12 * 60);
    sim.prompt("daily");
    assert!(sim.reg.protection().is_some());
    assert_eq!(sim.reg.released_wake_ups(sim.now).count(), 0);
}

#[test]
fn a_wake_up_within_the_timeout_exactly_is_near_and_past_ones_are_not_listed() {
    let mut sim = Sim::with(settings(), CLOSED);
    sim.prompt("edge");
    let wake = in_secs(&sim, 12 * 60);
    stop_with_wake_up(&mut sim, "edge", Some(wake));
    assert!(sim.reg.session(&key("edge")).is_some(), "12 minutes: near");
    // A Stop without crons ends as before.
    sim.prompt("plain");
    stop_with_wake_up(&mut sim, "plain", None);
    assert!(sim.reg.session(&key("plain")).is_none());
    assert_eq!(sim.reg.released_wake_ups(sim.now).count(), 0);
    // A far wake-up that has passed is no longer listed.
    sim.prompt("far");
    let far = in_secs(&sim, 60 * 60);
    stop_with_wake_up(&mut sim, "far", Some(far));
    assert_eq!(sim.reg.released_wake_ups(sim.now).count(), 1);
    assert_eq!(sim.reg.released_wake_ups(far).count(), 0);
}

#[test]
fn running_work_decides_before_a_wake_up() {
    let mut sim = Sim::with(settings(), CLOSED);
    sim.prompt("bg");
    sim.hook(
        "bg",
        "Stop",
        EventKind::TurnStopped {
            stop_hook_active: false,
            running_work: Some(vec!["b1".into()]),
            can_continue: true,
            wakes_at: Some(in_secs(&sim, 3 * 60 * 60)),
        },
    );
    let pending = sim
        .reg
        .session(&key("bg"))
        .unwrap()
        .pending_work
        .clone()
        .unwrap();
    assert_eq!(pending.wakes_at, None);
    assert!(pending.reason.contains("b1"), "{}", pending.reason);
}
