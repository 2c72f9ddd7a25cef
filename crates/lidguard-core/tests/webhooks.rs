//! Simulation tests of when the PreSuspend and PostSessionEnd webhooks are sent and when they
//! are suppressed (README, Webhooks), with their payloads, on the pure core.
#![allow(
    clippy::disallowed_methods,
    reason = "tests write fixtures and read the environment"
)]

mod sim;

use jiff::Timestamp;
use lidguard_core::event::Lid;
use lidguard_core::registry::{Effect, Input, Registry, StartSession, StopSession};
use lidguard_core::session::StopKind;
use lidguard_core::settings::{Os, Settings};
use lidguard_core::suspend::{Machine, SuspendReason};
use lidguard_core::webhook::EventType;
use sim::{CLOSED, key};

/// Both webhook URLs set, culture `en`, the lid as `machine` says.
fn new_sim(machine: Machine) -> sim::Sim {
    let mut settings = Settings::defaults_for(Os::Linux);
    settings.pre_suspend_webhook_url = "https://hooks.example/pre".into();
    settings.post_session_end_webhook_url = "https://hooks.example/post".into();
    settings.user_interface_culture = "en".into();
    sim::Sim::with(settings, machine)
}

/// Claude's session `s1` has just ended normally with the lid closed.
fn ended_with_the_lid_closed() -> sim::Sim {
    let mut sim = new_sim(CLOSED);
    sim.start("s1");
    sim.stop("s1", StopKind::ProviderEnd);
    sim
}

trait Suspends {
    fn suspends(&self) -> usize;
}

impl Suspends for sim::Sim {
    fn suspends(&self) -> usize {
        self.requests().len()
    }
}

#[test]
fn a_normal_end_with_the_lid_closed_announces_the_suspend_with_the_session() {
    let mut sim = new_sim(CLOSED);
    sim.start("s1");
    sim.advance(30);
    sim.stop("s1", StopKind::ProviderEnd);
    sim.advance(9);
    assert!(sim.webhooks().is_empty(), "not before the delay");
    sim.advance(1);
    let hooks = sim.webhooks();
    assert_eq!(hooks.len(), 1);
    let (id, p) = &hooks[0];
    assert!(id.is_some(), "the suspend waits for it");
    sim::assert_about_s1(p, EventType::PreSuspend, "Completed");
    assert_eq!(p.working_directory.as_deref(), Some("/home/u/proj"));
    assert!(p.transcript_path.is_some());
    assert_eq!(p.active_session_count, Some(0));
    assert_eq!(p.soft_locked_session_count, None);
    assert_eq!(sim.suspends(), 0, "the request waits for the webhook");
    sim.apply(Input::WebhookDone { id: id.unwrap() });
    assert_eq!(sim.suspends(), 1);
}

#[test]
fn an_unanswered_pre_suspend_webhook_does_not_block_the_suspend() {
    let mut sim = ended_with_the_lid_closed();
    sim.advance(10);
    assert_eq!(sim.webhooks().len(), 1);
    sim.advance(5);
    assert_eq!(sim.suspends(), 0);
    sim.advance(1);
    assert_eq!(
        sim.suspends(),
        1,
        "6 s after the webhook started, the suspend goes on"
    );
}

#[test]
fn soft_locked_suspends_send_only_the_reason_and_count() {
    let mut sim = new_sim(CLOSED);
    sim.start("a");
    sim.start("b");
    for id in ["a", "b"] {
        sim.apply(Input::SoftLock {
            key: key(id),
            reason: "permission_prompt".into(),
        });
    }
    sim.advance(10);
    let (_, p) = &sim.webhooks()[0];
    assert_eq!(p.reason, "SoftLocked");
    assert_eq!(p.soft_locked_session_count, Some(2));
    assert_eq!(p.session_identifier, None);
    assert!(
        !sim.webhooks()
            .iter()
            .any(|(_, p)| p.event_type == Some(EventType::PostSessionEnd))
    );
}

#[test]
fn a_normal_end_that_does_not_sleep_sends_post_session_end() {
    // Lid open.
    let mut sim = new_sim(Machine {
        lid: Lid::Open,
        external_displays: Some(0),
    });
    sim.start("s1");
    sim.stop("s1", StopKind::ProviderEnd);
    let hooks = sim.webhooks();
    assert_eq!(hooks.len(), 1);
    assert_eq!(hooks[0].0, None);
    assert_eq!(hooks[0].1.event_type, Some(EventType::PostSessionEnd));
    assert_eq!(hooks[0].1.reason, "SessionEnded");
    assert_eq!(hooks[0].1.session_identifier.as_deref(), Some("s1"));

    // Another session still works.
    let mut sim = new_sim(CLOSED);
    sim.start("s1");
    sim.start("s2");
    sim.stop("s1", StopKind::ProviderEnd);
    let hooks = sim.webhooks();
    assert_eq!(hooks.len(), 1);
    assert_eq!(hooks[0].1.event_type, Some(EventType::PostSessionEnd));
    assert_eq!(hooks[0].1.active_session_count, Some(1));
}

#[test]
fn interrupts_manual_stops_removals_and_cancel_paths_send_nothing_at_the_end() {
    for kind in [StopKind::Interrupted, StopKind::Manual, StopKind::Removed] {
        let mut sim = new_sim(Machine {
            lid: Lid::Open,
            external_displays: Some(0),
        });
        sim.start("s1");
        let name = format!("{kind:?}");
        sim.stop("s1", kind);
        assert!(sim.webhooks().is_empty(), "{name}");
    }
    // Watched process gone with the lid closed: the suspend happens, unannounced.
    let mut sim = new_sim(CLOSED);
    sim.start("s1");
    sim.apply(Input::ProcessesGone(vec![key("s1")]));
    sim.advance(10);
    assert!(sim.webhooks().is_empty());
    assert_eq!(sim.suspends(), 1);
}

#[test]
fn a_suspend_canceled_before_its_announcement_becomes_post_session_end() {
    let mut sim = ended_with_the_lid_closed();
    sim.advance(3);
    sim.start("s2"); // new work cancels the suspend
    let hooks = sim.webhooks();
    assert_eq!(hooks.len(), 1);
    assert_eq!(hooks[0].1.event_type, Some(EventType::PostSessionEnd));
    assert_eq!(hooks[0].1.session_identifier.as_deref(), Some("s1"));

    // Canceled after PreSuspend was attempted: nothing more.
    let mut sim = ended_with_the_lid_closed();
    sim.advance(10);
    sim.start("s2");
    assert_eq!(sim.webhooks().len(), 1, "only the PreSuspend");
}

#[test]
fn emergency_hibernation_announces_itself_and_suppresses_post_session_end() {
    let mut sim = new_sim(CLOSED);
    sim.start("hot");
    sim.apply(Input::Temperature { celsius: Some(99) });
    let hooks = sim.webhooks();
    assert_eq!(hooks.len(), 1);
    assert_eq!(
        hooks[0].1.reason,
        SuspendReason::EmergencyHibernation.as_str()
    );
    assert_eq!(hooks[0].1.session_identifier, None);
    assert_eq!(sim.suspends(), 1);
}

#[test]
fn no_webhooks_without_urls() {
    let mut settings = Settings::defaults_for(Os::Linux);
    settings.post_stop_suspend_delay_seconds = 0;
    let mut reg = Registry::new(settings);
    let now: Timestamp = "2026-11-30T04:00:00Z".parse().unwrap();
    reg.apply(Input::Machine(CLOSED), now);
    reg.apply(
        Input::Start(StartSession {
            key: key("s"),
            cwd: None,
            transcript_path: None,
            watched_pid: None,
            run_by: None,
            via: None,
        }),
        now,
    );
    let out = reg.apply(
        Input::Stop(StopSession {
            key: key("s"),
            kind: StopKind::ProviderEnd,
            end_reason: None,
            pending_work: None,
            stop_hook: None,
        }),
        now,
    );
    assert!(
        !out.effects
            .iter()
            .any(|e| matches!(e, Effect::Webhook { .. }))
    );
    assert!(out.effects.iter().any(|e| matches!(e, Effect::Suspend(_))));
}
