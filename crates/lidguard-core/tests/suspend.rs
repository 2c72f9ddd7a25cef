//! Simulation tests of the closed-lid suspend flow on the pure core, with a virtual clock:
//! every branch of the README's suspend flow (delay, cancel by activity / lid open / new session, all
//! soft-locked, sound phase, cancel-path stops, emergency hibernation).
#![allow(
    clippy::disallowed_methods,
    reason = "tests write fixtures and read the environment"
)]

mod sim;

use jiff::SignedDuration;
use lidguard_core::event::Lid;
use lidguard_core::registry::{Effect, Input};
use lidguard_core::session::StopKind;
use lidguard_core::settings::{Os, Settings, SuspendMode};
use lidguard_core::suspend::{Machine, SuspendPhase, SuspendReason};
use sim::{CLOSED, OPEN, key};

/// The simulator with the lid closed and the default settings as `edit` changes them.
struct Sim;

impl Sim {
    #[allow(
        clippy::new_ret_no_self,
        reason = "a constructor for the shared simulator"
    )]
    fn new(edit: impl FnOnce(&mut Settings)) -> sim::Sim {
        let mut settings = Settings::defaults_for(Os::Linux);
        edit(&mut settings);
        sim::Sim::with(settings, CLOSED)
    }
}

#[test]
fn the_last_stop_with_the_lid_closed_suspends_after_the_delay() {
    let mut sim = Sim::new(|_| {});
    sim.start("a");
    sim.stop("a", StopKind::ProviderEnd);
    let pending = sim.reg.pending_suspend().expect("scheduled");
    assert_eq!(pending.reason, SuspendReason::Completed);
    assert_eq!(pending.due_at, sim.now + SignedDuration::from_secs(10));
    assert!(sim.requests().is_empty());
    sim.advance(9);
    assert!(sim.requests().is_empty(), "not before the delay");
    sim.advance(1);
    let requests = sim.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].mode, SuspendMode::Sleep);
    assert_eq!(requests[0].reason, SuspendReason::Completed);
    assert!(sim.reg.pending_suspend().is_none());
    assert!(
        sim.reg.protection().is_none(),
        "protection released before the request"
    );
}

#[test]
fn zero_delay_suspends_at_once_in_the_configured_mode() {
    let mut sim = Sim::new(|s| {
        s.post_stop_suspend_delay_seconds = 0;
        s.suspend_mode = SuspendMode::Hibernate;
    });
    sim.start("a");
    sim.stop("a", StopKind::ProviderEnd);
    let requests = sim.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].mode, SuspendMode::Hibernate);
}

#[test]
fn lid_open_or_a_display_means_no_suspend() {
    let mut sim = Sim::new(|_| {});
    sim.apply(Input::Machine(OPEN));
    sim.start("a");
    sim.stop("a", StopKind::ProviderEnd);
    assert!(sim.reg.pending_suspend().is_none());
    assert_eq!(sim.logged("suspend-skipped"), 1);

    sim.apply(Input::Machine(Machine {
        lid: Lid::Closed,
        external_displays: Some(1),
    }));
    sim.start("b");
    sim.stop("b", StopKind::ProviderEnd);
    assert!(sim.reg.pending_suspend().is_none());

    sim.apply(Input::Machine(Machine::UNKNOWN));
    sim.start("c");
    sim.stop("c", StopKind::ProviderEnd);
    assert!(
        sim.reg.pending_suspend().is_none(),
        "an unknown lid never counts as closed"
    );
    sim.advance(60);
    assert!(sim.requests().is_empty());
}

#[test]
fn activity_a_new_session_or_the_lid_opening_cancels_a_pending_suspend() {
    // New session.
    let mut sim = Sim::new(|_| {});
    sim.start("a");
    sim.stop("a", StopKind::ProviderEnd);
    sim.advance(5);
    sim.start("b");
    assert!(sim.reg.pending_suspend().is_none());
    assert_eq!(sim.logged("suspend-canceled"), 1);
    sim.advance(60);
    assert!(sim.requests().is_empty());

    // Activity on a soft-locked session.
    let mut sim = Sim::new(|_| {});
    sim.start("a");
    sim.soft_lock("a");
    assert_eq!(
        sim.reg.pending_suspend().unwrap().reason,
        SuspendReason::SoftLocked
    );
    sim.apply(Input::Activity {
        key: key("a"),
        reason: "PostToolUse".into(),
    });
    assert!(sim.reg.pending_suspend().is_none());
    assert!(sim.reg.protection().is_some());

    // Lid opened during the delay.
    let mut sim = Sim::new(|_| {});
    sim.start("a");
    sim.stop("a", StopKind::ProviderEnd);
    sim.advance(3);
    sim.apply(Input::Machine(OPEN));
    assert!(sim.reg.pending_suspend().is_none());
    sim.apply(Input::Machine(CLOSED));
    sim.advance(60);
    assert!(
        sim.requests().is_empty(),
        "closing it again does not revive the old suspend"
    );
}

#[test]
fn a_display_plugged_in_during_the_delay_cancels_at_the_check() {
    let mut sim = Sim::new(|_| {});
    sim.start("a");
    sim.stop("a", StopKind::ProviderEnd);
    sim.apply(Input::Machine(Machine {
        lid: Lid::Closed,
        external_displays: Some(1),
    }));
    sim.advance(10);
    assert!(sim.requests().is_empty());
    assert!(sim.reg.pending_suspend().is_none());
}

#[test]
fn all_sessions_soft_locked_suspends_with_the_count() {
    let mut sim = Sim::new(|_| {});
    sim.start("a");
    sim.start("b");
    sim.soft_lock("a");
    assert!(sim.reg.pending_suspend().is_none(), "b still works");
    sim.soft_lock("b");
    let pending = sim.reg.pending_suspend().unwrap();
    assert_eq!(pending.reason, SuspendReason::SoftLocked);
    assert_eq!(pending.trigger_session_count, 2);
    sim.advance(10);
    assert_eq!(sim.requests()[0].reason, SuspendReason::SoftLocked);
    assert!(
        sim.reg.session(&key("a")).is_some(),
        "soft-locked sessions stay tracked"
    );
}

#[test]
fn the_inactive_timeout_leads_to_a_suspend_too() {
    let mut sim = Sim::new(|s| s.session_timeout_minutes = Some(1));
    sim.start("a");
    sim.advance(60);
    assert_eq!(
        sim.reg.pending_suspend().unwrap().reason,
        SuspendReason::SoftLocked
    );
    sim.advance(10);
    assert_eq!(sim.requests().len(), 1);
}

#[test]
fn a_later_stop_replaces_the_pending_suspend_but_a_cancel_path_does_not() {
    let mut sim = Sim::new(|_| {});
    sim.start("a");
    sim.start("b");
    sim.soft_lock("a");
    sim.soft_lock("b");
    let first = sim.reg.pending_suspend().unwrap().clone();
    sim.advance(5);
    // Watched process gone: the pending suspend is left alone.
    sim.apply(Input::ProcessesGone(vec![key("a")]));
    assert_eq!(sim.reg.pending_suspend().unwrap(), &first);
    // A normal stop starts the flow again.
    sim.stop("b", StopKind::ProviderEnd);
    let second = sim.reg.pending_suspend().unwrap().clone();
    assert_ne!(second.id, first.id);
    assert_eq!(second.reason, SuspendReason::Completed);
    assert_eq!(second.due_at, sim.now + SignedDuration::from_secs(10));
    sim.advance(10);
    assert_eq!(sim.requests().len(), 1, "one suspend, not two");
}

#[test]
fn a_cancel_path_stop_schedules_with_webhooks_suppressed() {
    let mut sim = Sim::new(|_| {});
    sim.start("a");
    sim.apply(Input::ProcessesGone(vec![key("a")]));
    let pending = sim.reg.pending_suspend().unwrap();
    assert!(pending.webhooks_suppressed);
    sim.start("b");
    sim.stop("b", StopKind::ProviderEnd);
    assert!(!sim.reg.pending_suspend().unwrap().webhooks_suppressed);
}

#[test]
fn the_sound_plays_before_the_suspend_and_never_blocks_it() {
    let mut sim = Sim::new(|s| {
        s.post_stop_suspend_sound = "Asterisk".into();
        s.post_stop_suspend_sound_volume_override_percent = Some(40);
    });
    sim.start("a");
    sim.stop("a", StopKind::ProviderEnd);
    sim.advance(10);
    let effects = sim.take();
    let id = effects
        .iter()
        .find_map(|e| match e {
            Effect::PlaySound {
                id,
                sound,
                volume_percent,
            } => {
                assert_eq!(sound, "Asterisk");
                assert_eq!(*volume_percent, Some(40));
                Some(*id)
            }
            _ => None,
        })
        .expect("the sound is played");
    assert_eq!(
        sim.reg.pending_suspend().unwrap().phase,
        SuspendPhase::Sound
    );
    assert!(sim.requests().is_empty(), "the suspend waits for the sound");
    sim.apply(Input::SoundFinished { id: id + 100 });
    assert!(
        sim.requests().is_empty(),
        "another suspend's sound does not count"
    );
    sim.apply(Input::SoundFinished { id });
    assert_eq!(sim.requests().len(), 1);

    // A sound that never reports back times out.
    sim.start("b");
    sim.stop("b", StopKind::ProviderEnd);
    sim.advance(10);
    sim.take();
    sim.advance(60);
    assert_eq!(sim.requests().len(), 1);

    // The lid opened while the sound played: no suspend.
    sim.start("c");
    sim.stop("c", StopKind::ProviderEnd);
    sim.advance(10);
    let id = sim
        .take()
        .iter()
        .find_map(|e| match e {
            Effect::PlaySound { id, .. } => Some(*id),
            _ => None,
        })
        .unwrap();
    sim.apply(Input::Machine(OPEN));
    sim.apply(Input::SoundFinished { id });
    assert!(sim.requests().is_empty());
}

#[test]
fn emergency_hibernation_when_hot_with_the_lid_closed() {
    let mut sim = Sim::new(|s| s.emergency_hibernation_temperature_celsius = 200);
    sim.start("a");
    assert!(sim.reg.temperature_watch_wanted());
    sim.apply(Input::Temperature { celsius: Some(109) });
    assert!(
        sim.requests().is_empty(),
        "the threshold is clamped to 110, not ignored"
    );
    sim.apply(Input::Temperature { celsius: None });
    assert!(sim.requests().is_empty(), "no reading, no action");
    sim.apply(Input::Temperature { celsius: Some(110) });
    let requests = sim.requests();
    assert_eq!(requests.len(), 1);
    let r = requests[0];
    assert_eq!(r.reason, SuspendReason::EmergencyHibernation);
    assert_eq!(r.mode, SuspendMode::Hibernate);
    assert_eq!(r.fallback, Some(SuspendMode::Sleep));
    assert_eq!(r.active_session_count, 1);
    assert_eq!(r.temperature.unwrap().threshold_celsius, 110);
    // Not again on every reading.
    sim.take();
    sim.advance(10);
    sim.apply(Input::Temperature { celsius: Some(115) });
    assert!(sim.requests().is_empty());
    sim.advance(300);
    sim.apply(Input::Temperature { celsius: Some(115) });
    assert_eq!(sim.requests().len(), 1, "retried after a while");
}

#[test]
fn emergency_hibernation_ignores_delay_and_sound() {
    let mut sim = Sim::new(|s| {
        s.post_stop_suspend_sound = "Beep".into();
        s.emergency_hibernation_temperature_celsius = 80;
    });
    sim.start("a");
    sim.start("b");
    sim.stop("a", StopKind::ProviderEnd);
    sim.apply(Input::Temperature { celsius: Some(81) });
    assert_eq!(sim.requests().len(), 1);
    assert!(
        !sim.effects
            .iter()
            .any(|e| matches!(e, Effect::PlaySound { .. }))
    );
}

#[test]
fn no_emergency_with_the_lid_open_a_display_no_protection_or_the_feature_off() {
    type Setup = Box<dyn Fn(&mut sim::Sim)>;
    let cases: Vec<Setup> = vec![
        Box::new(|sim| sim.apply(Input::Machine(OPEN))),
        Box::new(|sim| {
            sim.apply(Input::Machine(Machine {
                lid: Lid::Closed,
                external_displays: Some(1),
            }));
        }),
        // Everything waits for the user and the suspend went out: no protection, no guard
        // (while that suspend was pending, protection and the guard were still on).
        Box::new(|sim| {
            sim.soft_lock("a");
            sim.advance(120);
            assert!(sim.reg.protection().is_none());
        }),
    ];
    for setup in cases {
        let mut sim = Sim::new(|s| s.emergency_hibernation_temperature_celsius = 70);
        sim.start("a");
        setup(&mut sim);
        sim.take();
        sim.apply(Input::Temperature { celsius: Some(100) });
        assert!(
            !sim.requests()
                .iter()
                .any(|r| r.reason == SuspendReason::EmergencyHibernation)
        );
    }
    let mut sim = Sim::new(|s| s.emergency_hibernation_on_high_temperature = false);
    sim.start("a");
    assert!(!sim.reg.temperature_watch_wanted());
    sim.apply(Input::Temperature { celsius: Some(105) });
    assert!(sim.requests().is_empty());
}

/// Sleep gives way to an explicit suspend while the lid is open (or there is none); closing
/// the lid asks for a plan that refuses it, opening it again gives way again.
#[test]
fn sleep_gives_way_exactly_while_the_lid_is_not_closed() {
    let mut sim = sim::Sim::with(Settings::defaults_for(Os::Linux), OPEN);
    sim.start("a");
    assert!(sim.reg.protection().unwrap().sleep_gives_way);
    let plans = |sim: &mut sim::Sim| -> Vec<bool> {
        sim.take()
            .into_iter()
            .filter_map(|e| match e {
                Effect::Protection(Some(p)) => Some(p.sleep_gives_way),
                _ => None,
            })
            .collect()
    };
    plans(&mut sim);
    sim.apply(Input::Machine(CLOSED));
    assert_eq!(plans(&mut sim), [false]);
    sim.apply(Input::Machine(Machine::UNKNOWN));
    assert_eq!(
        plans(&mut sim),
        [true],
        "no lid known: an explicit suspend goes through"
    );
    sim.apply(Input::Machine(OPEN));
    assert_eq!(
        plans(&mut sim),
        Vec::<bool>::new(),
        "no change, no new plan"
    );
}

/// On battery below `batteryFloorPercent` protection is released (sessions stay tracked), and
/// it comes back above the floor or on AC power; `off` never releases.
#[test]
fn the_battery_floor_releases_and_retakes_protection() {
    use lidguard_core::suspend::Battery;
    let mut sim = sim::Sim::with(Settings::defaults_for(Os::Linux), OPEN);
    sim.start("a");
    assert!(sim.reg.protection().is_some());
    let battery = |percent, on_battery| {
        Input::Battery(Some(Battery {
            percent,
            on_battery,
        }))
    };
    sim.apply(battery(50, true));
    assert!(sim.reg.protection().is_some());
    sim.apply(battery(9, true));
    assert!(
        sim.reg.protection().is_none(),
        "below the default floor of 10%"
    );
    assert_eq!(sim.logged("battery-floor-reached"), 1);
    assert!(
        sim.reg
            .battery_floor_reached()
            .unwrap()
            .contains("at 9%, below the battery floor of 10%")
    );
    assert!(
        sim.reg.sessions().next().is_some(),
        "the session is still tracked"
    );
    assert!(
        sim.reg.pending_suspend().is_none(),
        "lidguard does not suspend for it"
    );
    sim.apply(battery(8, false));
    assert!(sim.reg.protection().is_some(), "AC power is back");
    assert_eq!(sim.logged("battery-floor-cleared"), 1);
    sim.apply(battery(8, true));
    assert!(sim.reg.protection().is_none());
    sim.apply(battery(10, true));
    assert!(sim.reg.protection().is_some(), "at the floor again");
    let mut settings = Settings::defaults_for(Os::Linux);
    settings.battery_floor_percent = None;
    sim.apply(battery(3, true));
    assert!(sim.reg.protection().is_none());
    sim.apply(Input::Settings(Box::new(settings)));
    assert!(sim.reg.protection().is_some(), "off: never released");
    assert_eq!(sim.logged("battery-floor-cleared"), 3);
}

/// Held on AC only (`holdOnBattery` false): on battery, whatever the charge, protection is
/// released as at the floor — with the lid closed the machine is put to sleep — and taken again
/// on AC.
#[test]
fn holding_only_on_ac_releases_on_battery_and_takes_it_again_on_ac() {
    use lidguard_core::suspend::Battery;
    let mut settings = Settings::defaults_for(Os::Linux);
    settings.hold_on_battery = false;
    let mut sim = sim::Sim::with(settings, OPEN);
    let battery = |percent, on_battery| {
        Input::Battery(Some(Battery {
            percent,
            on_battery,
        }))
    };
    sim.apply(battery(90, false));
    sim.start("a");
    assert!(sim.reg.protection().is_some(), "held on AC");
    sim.apply(battery(90, true));
    assert!(sim.reg.protection().is_none(), "released on battery at 90%");
    assert!(
        sim.reg
            .battery_floor_reached()
            .unwrap()
            .contains("held on AC only"),
        "{:?}",
        sim.reg.battery_floor_reached()
    );
    assert_eq!(sim.logged("battery-floor-reached"), 1);
    assert!(sim.reg.sessions().next().is_some(), "still tracked");
    sim.apply(battery(89, false));
    assert!(sim.reg.protection().is_some(), "held again on AC");
    assert_eq!(sim.logged("battery-floor-cleared"), 1);
    // The lid closes while held on AC, then the power cord comes out: the machine sleeps, as
    // it would have for the lid.
    sim.apply(Input::Machine(sim::CLOSED));
    assert!(sim.reg.protection().is_some());
    sim.apply(battery(88, true));
    assert_eq!(
        sim.requests().len(),
        1,
        "put to sleep on battery with the lid closed"
    );
    // Turned back on, battery holds again.
    let mut settings = Settings::defaults_for(Os::Linux);
    settings.hold_on_battery = true;
    sim.apply(Input::Machine(OPEN));
    sim.apply(Input::Settings(Box::new(settings)));
    assert!(sim.reg.protection().is_some(), "holds on battery again");
}

/// The user's pause releases protection while sessions go on being tracked; it ends at its
/// time or when resumed, keeps the idle daemon from exiting meanwhile, and a second pause
/// replaces the first.
#[test]
fn a_pause_releases_protection_until_its_time_or_a_resume() {
    let mut sim = sim::Sim::with(Settings::defaults_for(Os::Linux), OPEN);
    sim.start("a");
    assert!(sim.reg.protection().is_some());
    let in_30_min = sim.now.checked_add(SignedDuration::from_mins(30)).unwrap();
    sim.apply(Input::Pause {
        until: Some(in_30_min),
    });
    assert!(sim.reg.protection().is_none(), "paused");
    assert!(
        sim.effects.contains(&Effect::Protection(None)),
        "{:?}",
        sim.effects
    );
    assert_eq!(sim.logged("protection-paused"), 1);
    assert_eq!(sim.reg.pause_in_force().unwrap().until, Some(in_30_min));
    sim.apply(Input::Activity {
        key: key("a"),
        reason: "PostToolUse:Bash".into(),
    });
    assert!(sim.reg.protection().is_none(), "work does not end a pause");
    assert!(sim.reg.sessions().next().is_some(), "still tracked");
    for _ in 0..29 {
        sim.advance(60);
        sim.apply(Input::Activity {
            key: key("a"),
            reason: "PostToolUse:Bash".into(),
        });
        assert!(sim.reg.protection().is_none());
    }
    sim.advance(61);
    assert!(sim.reg.protection().is_some(), "the pause ended by itself");
    assert_eq!(sim.logged("protection-resumed"), 1);
    assert!(sim.reg.pause_in_force().is_none());

    // Until resumed: it outlives the session and the idle exit.
    sim.apply(Input::Pause { until: None });
    sim.stop("a", StopKind::ProviderEnd);
    sim.advance(24 * 3600);
    assert!(
        !sim.effects.contains(&Effect::Exit),
        "the daemon stays while a pause is in force"
    );
    assert!(sim.reg.pause_in_force().is_some());
    sim.start("b");
    assert!(sim.reg.protection().is_none(), "a new session stays paused");
    sim.apply(Input::Resume);
    assert!(sim.reg.protection().is_some(), "resumed");
    assert_eq!(sim.logged("protection-resumed"), 2);
    let before = sim.effects.len();
    sim.apply(Input::Resume);
    assert_eq!(sim.effects.len(), before, "a second resume changes nothing");
}

/// A pause is kept for the next daemon (each change is a `SavePause`), and a daemon that takes
/// it back keeps protection released until its time; one whose time ran out meanwhile ends.
#[test]
fn a_kept_pause_goes_on_in_the_next_daemon_until_its_time() {
    let mut sim = sim::Sim::with(Settings::defaults_for(Os::Linux), OPEN);
    let in_30_min = sim.now.checked_add(SignedDuration::from_mins(30)).unwrap();
    sim.apply(Input::Pause {
        until: Some(in_30_min),
    });
    let kept = sim.reg.pause_in_force().unwrap();
    assert!(sim.effects.contains(&Effect::SavePause(Some(kept))));

    let mut next = sim::Sim::with(Settings::defaults_for(Os::Linux), OPEN);
    next.now = sim.now.checked_add(SignedDuration::from_mins(5)).unwrap();
    next.apply(Input::RestorePause(kept));
    assert_eq!(
        next.reg.pause_in_force(),
        Some(kept),
        "since and until as kept"
    );
    assert_eq!(next.logged("protection-pause-restored"), 1);
    next.start("a");
    assert!(next.reg.protection().is_none(), "still paused");
    next.advance(24 * 60);
    assert!(next.reg.pause_in_force().is_some());
    next.advance(2 * 60);
    assert!(
        next.reg.pause_in_force().is_none(),
        "the pause ended at its time"
    );
    assert_eq!(next.logged("protection-resumed"), 1);
    assert!(next.effects.contains(&Effect::SavePause(None)));

    let mut late = sim::Sim::with(Settings::defaults_for(Os::Linux), OPEN);
    late.now = in_30_min.checked_add(SignedDuration::from_mins(1)).unwrap();
    late.apply(Input::RestorePause(kept));
    assert!(
        late.reg.pause_in_force().is_none(),
        "its time ran out while no daemon ran"
    );
    assert_eq!(late.logged("protection-resumed"), 1);
    assert!(late.effects.contains(&Effect::SavePause(None)));
}

/// The user cancels a suspend on its way; with none pending nothing happens.
#[test]
fn the_user_cancels_a_pending_suspend() {
    let mut sim = Sim::new(|_| {});
    sim.start("a");
    sim.stop("a", StopKind::ProviderEnd);
    assert!(sim.reg.pending_suspend().is_some());
    sim.apply(Input::CancelSuspend);
    assert!(sim.reg.pending_suspend().is_none());
    assert_eq!(sim.logged("suspend-canceled"), 1);
    sim.advance(600);
    assert!(sim.requests().is_empty(), "no suspend was asked for");
    sim.apply(Input::CancelSuspend);
    assert_eq!(sim.logged("suspend-canceled"), 1);
}

/// The moments decided and the desktop that tells them, as the daemon keeps them.
#[derive(Default)]
struct Desktop {
    moments: lidguard_core::notice::Moments,
    told: lidguard_core::desktop::Desktop,
}

/// The desktop notices an input calls for, as the daemon asks for them.
fn notices(sim: &mut sim::Sim, desktop: &mut Desktop, input: Input) -> Vec<String> {
    sim.effects.clear();
    sim.apply(input);
    let lid_open = sim.reg.machine().lid != lidguard_core::event::Lid::Closed;
    let moments = desktop.moments.due(&sim.effects, &sim.reg);
    moments
        .iter()
        .filter_map(|m| desktop.told.tell(m, sim.reg.settings(), lid_open))
        .map(|n| n.summary)
        .collect()
}

/// With the lid closed, every session waiting for the user schedules a suspend: the desktop
/// hears of it once (and not of the wait itself: the lid is closed). The battery floor is told
/// once until it is cleared.
#[test]
fn desktop_notices_for_a_suspend_while_sessions_wait_and_for_the_battery_floor() {
    use lidguard_core::suspend::Battery;

    let mut desktop = Desktop::default();
    let mut sim = Sim::new(|_| {});
    sim.start("a");
    let lock = |id: &str| Input::SoftLock {
        key: key(id),
        reason: "permission_prompt".into(),
    };
    let told = notices(&mut sim, &mut desktop, lock("a"));
    assert_eq!(told, ["Suspend in 10 s: every agent waits for you"]);
    assert_eq!(
        sim.reg.pending_suspend().unwrap().reason,
        SuspendReason::SoftLocked
    );
    let again = Input::SoftLock {
        key: key("a"),
        reason: "elicitation_dialog".into(),
    };
    assert!(notices(&mut sim, &mut desktop, again).is_empty());

    // A normal end schedules a suspend too, and nobody waits: no notice.
    let mut desktop = Desktop::default();
    let mut sim = Sim::new(|_| {});
    sim.start("b");
    let stop = Input::Stop(lidguard_core::registry::StopSession {
        key: key("b"),
        kind: StopKind::ProviderEnd,
        end_reason: None,
        pending_work: None,
        stop_hook: None,
    });
    assert!(notices(&mut sim, &mut desktop, stop).is_empty());
    assert!(sim.reg.pending_suspend().is_some());

    // Lid open: the wait itself is told, once per wait.
    let mut desktop = Desktop::default();
    let mut sim = sim::Sim::with(Settings::defaults_for(Os::Linux), OPEN);
    sim.start("c");
    let told = notices(&mut sim, &mut desktop, lock("c"));
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(told[0].ends_with("needs you"), "{told:?}");

    let battery = |percent, on_battery| {
        Input::Battery(Some(Battery {
            percent,
            on_battery,
        }))
    };
    let told = notices(&mut sim, &mut desktop, battery(9, true));
    assert_eq!(told, ["lidguard let go for the battery"]);
    assert!(notices(&mut sim, &mut desktop, battery(8, true)).is_empty());
    assert!(notices(&mut sim, &mut desktop, battery(8, false)).is_empty());
    let told = notices(&mut sim, &mut desktop, battery(7, true));
    assert_eq!(
        told,
        ["lidguard let go for the battery"],
        "told again after AC"
    );
    let mut off = Settings::defaults_for(Os::Linux);
    off.notify_battery_floor = false;
    notices(&mut sim, &mut desktop, battery(50, true));
    notices(&mut sim, &mut desktop, Input::Settings(Box::new(off)));
    assert!(notices(&mut sim, &mut desktop, battery(5, true)).is_empty());
}
