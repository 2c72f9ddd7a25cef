//! Simulation tests of ask before sleep (README, Ask before sleep) on the pure core: the gate, the
//! order (delay, question, reply wait, PreSuspend, sleep), every outcome, what cancels the
//! wait, and repeat on/off.
#![allow(
    clippy::disallowed_methods,
    reason = "tests write fixtures and read the environment"
)]

mod sim;

use jiff::{SignedDuration, Timestamp};
use lidguard_core::ask::{AskOutcome, AskStatus};
use lidguard_core::event::{EventKind, Lid};
use lidguard_core::registry::{Effect, Input};
use lidguard_core::settings::{Os, Settings};
use lidguard_core::suspend::{Machine, SuspendPhase};
use lidguard_core::webhook::EventType;
use sim::{CLOSED, OPEN, Sim, key};

/// Ask before sleep on (defaults: 10 s post-stop delay, 180 s reply wait), both other
/// webhooks set, lid closed.
fn on() -> Settings {
    let mut settings = Settings::defaults_for(Os::Linux);
    settings.closed_lid_stop_follow_up_webhook_url = "https://hooks.example/follow-up".into();
    settings.pre_suspend_webhook_url = "https://hooks.example/pre".into();
    settings.post_session_end_webhook_url = "https://hooks.example/post".into();
    settings.user_interface_culture = "en".into();
    settings
}

fn secs(n: i64) -> SignedDuration {
    SignedDuration::from_secs(n)
}

fn event_types(sim: &Sim) -> Vec<EventType> {
    sim.webhooks()
        .iter()
        .filter_map(|(_, p)| p.event_type)
        .collect()
}

/// A session that worked and stopped with the lid closed; returns until when its hook waits.
fn stopped(sim: &mut Sim) -> Option<Timestamp> {
    sim.prompt("s1");
    sim.advance(30);
    sim.stop_hook("s1", false)
}

/// The pending suspend's id.
fn pending_id(sim: &Sim) -> u64 {
    sim.reg.pending_suspend().expect("a pending suspend").id
}

#[test]
fn the_question_goes_out_after_the_delay_with_the_session_and_the_hook_waits() {
    let mut sim = Sim::with(on(), CLOSED);
    let stopped_at = sim.now.checked_add(secs(30)).unwrap();
    let waits = stopped(&mut sim).expect("the Stop hook waits");
    // max(30, 10 + 180 + 300) = 490 s is the managed hook timeout; answered 10 s before it.
    assert_eq!(waits, stopped_at.checked_add(secs(480)).unwrap());
    sim.advance(9);
    assert!(sim.asks().is_empty(), "not before the post-stop delay");
    sim.advance(1);
    let asks = sim.asks();
    assert_eq!(asks.len(), 1);
    let (_, p, deadline, latest) = &asks[0];
    let asked_at = stopped_at.checked_add(secs(10)).unwrap();
    assert_eq!(*deadline, asked_at.checked_add(secs(180)).unwrap());
    assert_eq!(*latest, deadline.checked_add(secs(300)).unwrap().min(waits));
    sim::assert_about_s1(p, EventType::StopFollowUp, "AwaitingReply");
    assert_eq!(p.reply_wait_seconds, Some(180));
    assert_eq!(p.reply_deadline_utc, Some(*deadline));
    assert_eq!(p.ended_at_utc, Some(stopped_at));
    assert_eq!(p.active_session_count, Some(0));
    assert_eq!(
        p.input_prompt_preview.as_deref(),
        Some("Please refactor the storage layer and add tests...")
    );
    assert_eq!(
        p.last_assistant_message.as_deref(),
        Some("Refactored; 12 tests added.")
    );
    assert_eq!(p.working_directory.as_deref(), Some("/home/u/proj"));
    assert!(p.transcript_path.is_some());
    // Nothing else yet: no PreSuspend before the reply wait, no sleep, the hook still waits.
    assert_eq!(event_types(&sim), Vec::<EventType>::new());
    assert!(sim.requests().is_empty());
    assert!(sim.answers().is_empty());
    let pending = sim.reg.pending_suspend().unwrap();
    assert_eq!(pending.phase, SuspendPhase::AwaitingReply);
    assert_eq!(
        pending.ask.as_ref().unwrap().status,
        AskStatus::AwaitingReply
    );
    assert_eq!(sim.logged("stop-follow-up-awaiting-reply"), 1);
}

#[test]
fn a_reply_continues_the_same_session_without_sleep_or_webhooks() {
    let mut sim = Sim::with(on(), CLOSED);
    let started_at = sim.now;
    stopped(&mut sim);
    sim.advance(40);
    let id = pending_id(&sim);
    sim.apply(Input::AskResolved {
        id,
        outcome: AskOutcome::Answered("  also update the README \n".into()),
    });
    assert_eq!(
        sim.answers(),
        vec![(
            key("s1"),
            Some("also update the README".into()),
            AskStatus::ReplyReceived
        )]
    );
    let session = sim.reg.session(&key("s1")).expect("the session is back");
    assert_eq!(session.started_at, started_at, "same identity");
    assert_eq!(session.last_activity_at, sim.now);
    assert_eq!(session.cwd.as_deref(), Some("/home/u/proj"));
    assert!(
        session.prompt_preview.is_some(),
        "the prompt preview is kept"
    );
    assert!(session.needs_protection());
    assert!(sim.reg.protection().is_some(), "kept awake again");
    assert!(sim.reg.pending_suspend().is_none());
    assert!(
        sim.reg.ended().all(|e| e.key != key("s1")),
        "no longer remembered as ended"
    );
    sim.advance(120);
    assert!(sim.requests().is_empty(), "not put to sleep");
    assert_eq!(
        event_types(&sim),
        Vec::<EventType>::new(),
        "no PostSessionEnd, no PreSuspend"
    );
    // A late result for the same question changes nothing.
    let before = sim.take();
    sim.apply(Input::AskResolved {
        id,
        outcome: AskOutcome::Expired,
    });
    assert!(sim.answers().is_empty());
    drop(before);
}

#[test]
fn an_expired_question_lets_the_hook_go_and_the_suspend_go_on() {
    let mut sim = Sim::with(on(), CLOSED);
    stopped(&mut sim);
    sim.advance(190);
    let id = pending_id(&sim);
    sim.apply(Input::AskResolved {
        id,
        outcome: AskOutcome::Expired,
    });
    assert_eq!(sim.answers(), vec![(key("s1"), None, AskStatus::TimedOut)]);
    // PreSuspend after the wait, with the session, then the request.
    let hooks = sim.webhooks();
    assert_eq!(hooks.len(), 1);
    assert_eq!(hooks[0].1.event_type, Some(EventType::PreSuspend));
    assert_eq!(hooks[0].1.reason, "Completed");
    assert_eq!(hooks[0].1.session_identifier.as_deref(), Some("s1"));
    sim.apply(Input::WebhookDone { id });
    assert_eq!(sim.requests().len(), 1);
    assert!(sim.reg.session(&key("s1")).is_none());
}

#[test]
fn a_canceled_question_means_sleep_now() {
    let mut sim = Sim::with(on(), CLOSED);
    let mut settings = on();
    settings.pre_suspend_webhook_url.clear();
    sim.apply(Input::Settings(Box::new(settings)));
    stopped(&mut sim);
    sim.advance(15);
    sim.apply(Input::AskResolved {
        id: pending_id(&sim),
        outcome: AskOutcome::Canceled,
    });
    assert_eq!(sim.answers(), vec![(key("s1"), None, AskStatus::Canceled)]);
    assert_eq!(sim.requests().len(), 1, "no further wait");
}

#[test]
fn failures_of_the_exchange_let_the_suspend_go_on_with_their_status() {
    let cases = [
        (
            AskOutcome::WebhookFailed("HTTP 500".into()),
            AskStatus::WebhookFailed,
        ),
        (
            AskOutcome::PollFailed("unknown status Weird".into()),
            AskStatus::PollFailed,
        ),
        (AskOutcome::Answered("   ".into()), AskStatus::PollFailed),
        (AskOutcome::AgentExited, AskStatus::Canceled),
    ];
    for (outcome, status) in cases {
        let mut sim = Sim::with(on(), CLOSED);
        stopped(&mut sim);
        sim.advance(12);
        let id = pending_id(&sim);
        sim.apply(Input::AskResolved { id, outcome });
        assert_eq!(sim.answers(), vec![(key("s1"), None, status)]);
        assert_eq!(event_types(&sim), vec![EventType::PreSuspend]);
        sim.apply(Input::WebhookDone { id });
        assert_eq!(sim.requests().len(), 1);
        assert!(sim.reg.session(&key("s1")).is_none());
        assert_eq!(
            sim.logged(&format!("stop-follow-up-{}", status.as_str())),
            1
        );
    }
}

#[test]
fn the_hook_is_answered_before_its_timeout_even_when_the_exchange_never_ends() {
    let mut sim = Sim::with(on(), CLOSED);
    let waits = stopped(&mut sim).unwrap();
    let until = waits.duration_since(sim.now).as_secs();
    sim.advance(until - 1);
    assert!(sim.answers().is_empty());
    sim.advance(1);
    assert_eq!(sim.answers(), vec![(key("s1"), None, AskStatus::TimedOut)]);
    assert_eq!(event_types(&sim), vec![EventType::PreSuspend]);
    sim.advance(6);
    assert_eq!(sim.requests().len(), 1);
}

#[test]
fn a_receiver_may_extend_the_deadline_by_five_minutes_at_most() {
    let mut sim = Sim::with(on(), CLOSED);
    stopped(&mut sim);
    sim.advance(10);
    let (id, _, deadline, latest) = sim.asks()[0].clone();
    let far = deadline.checked_add(secs(3600)).unwrap();
    sim.apply(Input::AskExtended {
        id,
        reply_deadline: far,
    });
    let ask = sim.reg.pending_suspend().unwrap().ask.clone().unwrap();
    assert_eq!(ask.reply_deadline, Some(latest));
    // 5 minutes past the first deadline would be 490 s after the stop; the hook is answered
    // at 480 s, so that is the limit.
    assert_eq!(latest, deadline.checked_add(secs(290)).unwrap());
    // Shorter deadlines are taken as they are (the receiver's own expiry).
    let near = deadline.checked_sub(secs(100)).unwrap();
    sim.apply(Input::AskExtended {
        id,
        reply_deadline: near,
    });
    let ask = sim.reg.pending_suspend().unwrap().ask.clone().unwrap();
    assert_eq!(ask.reply_deadline, Some(near));
}

#[test]
fn new_work_or_a_lid_opening_cancels_the_wait() {
    // Another session starts working, while the question is out.
    let mut sim = Sim::with(on(), CLOSED);
    stopped(&mut sim);
    sim.advance(20);
    sim.prompt("s2");
    assert_eq!(sim.answers(), vec![(key("s1"), None, AskStatus::Canceled)]);
    assert!(sim.reg.pending_suspend().is_none());
    // Canceled before any PreSuspend: the normal end is announced.
    assert_eq!(event_types(&sim), vec![EventType::PostSessionEnd]);
    let id = 1;
    sim.apply(Input::AskResolved {
        id,
        outcome: AskOutcome::Answered("too late".into()),
    });
    assert_eq!(sim.answers().len(), 1, "a late reply is ignored");
    assert!(sim.reg.session(&key("s1")).is_none());

    // The lid opens during the post-stop delay.
    let mut sim = Sim::with(on(), CLOSED);
    stopped(&mut sim);
    sim.advance(5);
    sim.apply(Input::Machine(OPEN));
    assert_eq!(sim.answers(), vec![(key("s1"), None, AskStatus::Canceled)]);
    sim.advance(600);
    assert!(sim.asks().is_empty());
    assert!(sim.requests().is_empty());
}

#[test]
fn the_machine_is_kept_awake_while_the_question_is_out_and_emergency_hibernation_ends_it() {
    let mut settings = on();
    settings.emergency_hibernation_on_high_temperature = true;
    let mut sim = Sim::with(settings, CLOSED);
    stopped(&mut sim);
    // Through the delay and the wait the locks stay (README, Sleeping when the work is done): logind's own lid
    // handling must not suspend the machine before the user could answer.
    let plan = sim
        .reg
        .protection()
        .expect("held during the post-stop delay");
    assert!(plan.lid_switch);
    assert_eq!(plan.why, "asking before sleep: an agent may go on");
    sim.advance(12);
    assert_eq!(sim.asks().len(), 1);
    assert!(sim.reg.protection().is_some(), "held during the wait");
    assert!(sim.reg.temperature_watch_wanted());
    sim.take();
    sim.apply(Input::Temperature { celsius: Some(105) });
    assert_eq!(sim.answers(), vec![(key("s1"), None, AskStatus::Canceled)]);
    let requests = sim.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].reason,
        lidguard_core::suspend::SuspendReason::EmergencyHibernation
    );
    assert!(
        !event_types(&sim).contains(&EventType::PostSessionEnd),
        "emergency hibernation suppresses PostSessionEnd"
    );
    assert!(sim.reg.pending_suspend().is_none());
    assert!(sim.reg.protection().is_none(), "released for the request");
}

#[test]
fn the_locks_go_right_before_the_request() {
    let mut settings = on();
    settings.pre_suspend_webhook_url.clear();
    let mut sim = Sim::with(settings, CLOSED);
    stopped(&mut sim);
    sim.advance(12);
    sim.take();
    sim.apply(Input::AskResolved {
        id: pending_id(&sim),
        outcome: AskOutcome::Expired,
    });
    let effects = sim.take();
    let suspend = effects
        .iter()
        .position(|e| matches!(e, Effect::Suspend(_)))
        .expect("the request");
    let release = effects
        .iter()
        .position(|e| *e == Effect::Protection(None))
        .expect("the release");
    assert!(
        release > suspend,
        "the daemon releases the locks as it asks"
    );
    assert!(sim.reg.protection().is_none());
    // A display appearing before the request: the suspend is canceled and the locks go too.
    let mut sim = Sim::with(on(), CLOSED);
    stopped(&mut sim);
    sim.advance(12);
    sim.apply(Input::Machine(Machine {
        lid: Lid::Closed,
        external_displays: Some(1),
    }));
    sim.apply(Input::AskResolved {
        id: pending_id(&sim),
        outcome: AskOutcome::Expired,
    });
    assert!(sim.requests().is_empty(), "the re-check sees the display");
    assert!(sim.reg.pending_suspend().is_none());
    assert!(sim.reg.protection().is_none());
}

#[test]
fn the_gate_asks_only_for_continuable_stops_with_the_feature_on_and_a_suspend_scheduled() {
    // Feature off (no URL): no wait.
    let mut settings = on();
    settings.closed_lid_stop_follow_up_webhook_url.clear();
    let mut sim = Sim::with(settings, CLOSED);
    assert_eq!(stopped(&mut sim), None);
    sim.advance(10);
    assert!(sim.asks().is_empty());

    // Reply wait 0: off.
    let mut settings = on();
    settings.closed_lid_stop_follow_up_delay_seconds = 0;
    let mut sim = Sim::with(settings, CLOSED);
    assert_eq!(stopped(&mut sim), None);

    // Configuration error (reply wait 1..19): off, and said so once.
    let mut settings = on();
    settings.closed_lid_stop_follow_up_delay_seconds = 5;
    let mut sim = Sim::with(settings, CLOSED);
    assert_eq!(stopped(&mut sim), None);
    assert_eq!(sim.logged("stop-follow-up-disabled"), 1);

    // Not a continuation-capable stop (SessionEnd).
    let mut sim = Sim::with(on(), CLOSED);
    sim.prompt("s1");
    let waits = sim.hook(
        "s1",
        "SessionEnd",
        EventKind::SessionEnded {
            normal: true,
            defer_for_work: false,
        },
    );
    assert_eq!(waits, None);
    sim.advance(10);
    assert!(sim.asks().is_empty());
    assert_eq!(sim.requests().len(), 0, "the PreSuspend webhook goes first");

    // Lid open: nothing scheduled, so no question (a PostSessionEnd instead).
    let mut sim = Sim::with(on(), OPEN);
    assert_eq!(stopped(&mut sim), None);
    assert_eq!(event_types(&sim), vec![EventType::PostSessionEnd]);

    // Another session still working: nothing scheduled.
    let mut sim = Sim::with(on(), CLOSED);
    sim.prompt("other");
    assert_eq!(stopped(&mut sim), None);

    // A stop with background work still running is deferred, not final.
    let mut sim = Sim::with(on(), CLOSED);
    sim.prompt("s1");
    let waits = sim.hook(
        "s1",
        "Stop",
        EventKind::TurnStopped {
            stop_hook_active: false,
            running_work: Some(vec!["bash-1".into()]),
            can_continue: true,
            wakes_at: None,
        },
    );
    assert_eq!(waits, None);
}

#[test]
fn with_repeat_on_a_continued_turn_is_asked_again() {
    let mut sim = Sim::with(on(), CLOSED);
    stopped(&mut sim);
    sim.advance(10);
    sim.apply(Input::AskResolved {
        id: pending_id(&sim),
        outcome: AskOutcome::Answered("go on".into()),
    });
    sim.advance(60);
    sim.take();
    // The continued turn stops; the agent marks it stop_hook_active.
    assert!(sim.stop_hook("s1", true).is_some());
    sim.advance(10);
    assert_eq!(sim.asks().len(), 1, "asked again, after the normal delay");
}

#[test]
fn with_repeat_off_a_continued_turn_sleeps_at_once_without_asking() {
    let mut settings = on();
    settings.repeat_closed_lid_stop_follow_up = false;
    settings.pre_suspend_webhook_url.clear();
    let mut sim = Sim::with(settings, CLOSED);
    stopped(&mut sim);
    sim.advance(10);
    assert_eq!(sim.asks().len(), 1, "the first stop is asked");
    sim.apply(Input::AskResolved {
        id: pending_id(&sim),
        outcome: AskOutcome::Answered("go on".into()),
    });
    sim.advance(60);
    sim.take();
    assert_eq!(sim.stop_hook("s1", true), None, "the hook does not wait");
    assert!(sim.asks().is_empty());
    assert_eq!(sim.requests().len(), 1, "no post-stop delay either");
    assert_eq!(sim.logged("stop-follow-up-skipped"), 1);

    // A first stop (not a continuation) is still asked.
    let mut settings = on();
    settings.repeat_closed_lid_stop_follow_up = false;
    let mut sim = Sim::with(settings, CLOSED);
    assert!(stopped(&mut sim).is_some());
}

#[test]
fn a_stop_that_replaces_a_waiting_one_lets_the_first_hook_go() {
    let mut sim = Sim::with(on(), CLOSED);
    sim.prompt("a");
    sim.prompt("b");
    sim.soft_lock("b");
    assert!(sim.stop_hook("a", false).is_some());
    sim.advance(12);
    // b is answered and stops too: a new suspend replaces a's, and a's hook is let go.
    sim.prompt("b");
    let effects = sim.take();
    assert!(effects.iter().any(|e| matches!(
        e,
        Effect::AnswerHook { key: k, status: AskStatus::Canceled, .. } if *k == key("a")
    )));
    assert!(sim.stop_hook("b", false).is_some());
}

#[test]
fn a_daemon_with_no_cleanup_delay_waits_for_the_suspend_and_its_hook() {
    let mut settings = on();
    settings.server_runtime_cleanup_delay_minutes = Some(0);
    settings.pre_suspend_webhook_url.clear();
    let mut sim = Sim::with(settings, CLOSED);
    assert!(stopped(&mut sim).is_some());
    let exits = |sim: &Sim| sim.effects.iter().filter(|e| **e == Effect::Exit).count();
    assert_eq!(exits(&sim), 0, "not while the suspend is on its way");
    sim.advance(12);
    assert_eq!(sim.asks().len(), 1);
    assert_eq!(exits(&sim), 0);
    sim.apply(Input::AskResolved {
        id: pending_id(&sim),
        outcome: AskOutcome::Expired,
    });
    assert_eq!(sim.requests().len(), 1);
    assert_eq!(sim.answers().len(), 1);
    sim.advance(1);
    assert_eq!(exits(&sim), 1, "then the idle exit");
}

#[test]
fn a_hook_that_left_drops_the_question_and_the_suspend_goes_on() {
    // Gone during the post-stop delay: no question; the suspend is due as before.
    let mut settings = on();
    settings.pre_suspend_webhook_url.clear();
    let mut sim = Sim::with(settings.clone(), CLOSED);
    stopped(&mut sim);
    sim.advance(4);
    sim.apply(Input::HookGone { key: key("s1") });
    assert!(sim.reg.pending_suspend().unwrap().ask.is_none());
    assert_eq!(sim.logged("stop-follow-up-canceled"), 1);
    sim.advance(6);
    assert!(sim.asks().is_empty());
    assert_eq!(sim.requests().len(), 1);

    // Gone while the question is out: the wait ends as canceled and the suspend goes on.
    let mut sim = Sim::with(settings, CLOSED);
    stopped(&mut sim);
    sim.advance(15);
    // Another session's hook leaving changes nothing.
    sim.apply(Input::HookGone { key: key("other") });
    assert!(sim.answers().is_empty());
    sim.apply(Input::HookGone { key: key("s1") });
    assert_eq!(sim.answers(), vec![(key("s1"), None, AskStatus::Canceled)]);
    assert_eq!(sim.requests().len(), 1);
}
