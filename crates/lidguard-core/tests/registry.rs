//! Simulation and property tests of the session registry with a virtual clock.
#![allow(
    clippy::disallowed_methods,
    reason = "tests write fixtures and read the environment"
)]

use jiff::{SignedDuration, Timestamp};
use lidguard_core::protection::Inhibit;
use lidguard_core::provider::Provider;
use lidguard_core::registry::{
    Effect, Input, Outcome, Registry, RemoveSelector, Reply, StartSession, StopSession,
};
use lidguard_core::session::{SessionKey, StopKind};
use lidguard_core::settings::Settings;
use proptest::prelude::*;

mod sim;

/// A registry driven by a virtual clock, recording every effect.
struct Sim {
    reg: Registry,
    now: Timestamp,
    effects: Vec<Effect>,
}

impl Sim {
    fn new(settings: Settings) -> Sim {
        let mut sim = Sim {
            reg: Registry::new(settings),
            now: "2026-11-29T12:00:00Z".parse().unwrap(),
            effects: Vec::new(),
        };
        sim.apply(Input::Restore(Vec::new()));
        sim.effects.clear();
        sim
    }

    fn apply(&mut self, input: Input) -> Reply {
        let Outcome { reply, effects, .. } = self.reg.apply(input, self.now);
        self.effects.extend(effects);
        reply
    }

    /// Advances the clock, firing every deadline on the way exactly when it is due.
    fn advance(&mut self, by: SignedDuration) {
        let end = self.now.checked_add(by).unwrap();
        let fired = sim::tick_until(&mut self.reg, &mut self.now, end);
        self.effects.extend(fired);
    }

    fn start(&mut self, key: &SessionKey) -> Reply {
        self.apply(Input::Start(StartSession {
            key: key.clone(),
            cwd: Some("/home/u/proj".into()),
            transcript_path: None,
            watched_pid: None,
            run_by: None,
            via: None,
        }))
    }

    fn stop(&mut self, key: &SessionKey, pending: Option<&str>) -> Reply {
        self.apply(Input::Stop(StopSession {
            key: key.clone(),
            kind: StopKind::ProviderEnd,
            end_reason: Some("Stop".into()),
            pending_work: pending.map(str::to_owned),
            stop_hook: None,
        }))
    }

    fn held(&self) -> bool {
        self.reg.protection().is_some()
    }

    fn state(&self, key: &SessionKey) -> Option<(Option<String>, bool)> {
        self.reg.session(key).map(|s| {
            (
                s.soft_lock.as_ref().map(|l| l.reason.clone()),
                s.pending_work.is_some(),
            )
        })
    }

    fn take_effects(&mut self) -> Vec<Effect> {
        std::mem::take(&mut self.effects)
    }

    fn log_names(&mut self) -> Vec<String> {
        self.take_effects()
            .into_iter()
            .filter_map(|e| match e {
                Effect::Log(l) => Some(l.name),
                _ => None,
            })
            .collect()
    }
}

fn key(id: &str) -> SessionKey {
    SessionKey::new(Provider::Claude, id, "")
}

fn mins(n: i64) -> SignedDuration {
    SignedDuration::from_mins(n)
}

fn protection_effects(effects: &[Effect]) -> Vec<Option<Vec<Inhibit>>> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Protection(p) => Some(p.as_ref().map(|p| p.inhibits())),
            _ => None,
        })
        .collect()
}

#[test]
fn full_lifecycle_start_activity_softlock_timeout_abandon_stop() {
    let mut sim = Sim::new(Settings::default());
    let s1 = key("s1");

    assert_eq!(sim.start(&s1), Reply::Started);
    assert!(sim.held());
    let fx = sim.take_effects();
    assert_eq!(
        protection_effects(&fx),
        vec![Some(vec![
            Inhibit::Sleep,
            Inhibit::Idle,
            Inhibit::HandleLidSwitch
        ])]
    );

    // Activity five minutes later refreshes the clock: no timeout at minute 12.
    sim.advance(mins(5));
    let reply = sim.apply(Input::Activity {
        key: s1.clone(),
        reason: "PostToolUse:Bash".into(),
    });
    assert_eq!(reply, Reply::Unchanged);
    sim.advance(mins(11));
    assert_eq!(sim.state(&s1), Some((None, false)));

    // A soft-lock releases protection and does not refresh activity.
    let last = sim.reg.session(&s1).unwrap().last_activity_at;
    let reply = sim.apply(Input::SoftLock {
        key: s1.clone(),
        reason: "permission_prompt".into(),
    });
    assert_eq!(reply, Reply::Recorded);
    assert_eq!(sim.reg.session(&s1).unwrap().last_activity_at, last);
    assert!(!sim.held());
    assert_eq!(
        sim.apply(Input::SoftLock {
            key: s1.clone(),
            reason: "permission_prompt".into()
        }),
        Reply::Unchanged
    );

    // Activity clears it again.
    assert_eq!(
        sim.apply(Input::Activity {
            key: s1.clone(),
            reason: "PreToolUse:Edit".into()
        }),
        Reply::Recorded
    );
    assert!(sim.held());

    // Silence for the timeout soft-locks with the reference's reason.
    sim.advance(mins(12));
    assert_eq!(
        sim.state(&s1),
        Some((Some("session-timeout-expired:12 minutes".into()), false))
    );
    assert!(!sim.held());

    // The agent's Stop arrives with background work: deferred, active, protected.
    sim.take_effects();
    assert_eq!(
        sim.stop(&s1, Some("1 background task")),
        Reply::StopDeferred
    );
    assert!(sim.held());
    assert!(sim.state(&s1).unwrap().1);

    // The pending work stays silent for the timeout: abandoned and soft-locked.
    sim.take_effects();
    sim.advance(mins(12));
    let names = sim.log_names();
    assert!(
        names.contains(&"session-pending-provider-work-abandoned".to_owned()),
        "{names:?}"
    );
    assert!(!sim.state(&s1).unwrap().1);
    assert!(sim.state(&s1).unwrap().0.is_some());
    assert!(!sim.held());

    // The final stop removes it.
    assert_eq!(sim.stop(&s1, None), Reply::Stopped);
    assert!(sim.reg.session(&s1).is_none());
    let fx = sim.take_effects();
    assert!(fx.contains(&Effect::DeleteSession(s1.clone())));
}

#[test]
fn repeated_stops_and_cleanup_signals_have_no_second_side_effect() {
    let mut sim = Sim::new(Settings::default());
    let s1 = key("s1");
    sim.start(&s1);
    assert_eq!(sim.stop(&s1, None), Reply::Stopped);
    let first = sim.take_effects();
    assert!(first.contains(&Effect::Protection(None)));

    for _ in 0..3 {
        assert_eq!(
            sim.stop(&s1, None),
            Reply::AlreadyStopped {
                end_reason: "Stop".into()
            }
        );
        sim.apply(Input::ProcessesGone(vec![s1.clone()]));
        sim.apply(Input::Remove(RemoveSelector::Matching {
            session_id: "s1".into(),
            provider: None,
            provider_name: None,
        }));
    }
    let later = sim.take_effects();
    assert!(
        later.iter().all(|e| matches!(e, Effect::Log(_))),
        "only log lines after the first stop: {later:?}"
    );
    // A stop for a session never seen is not "already stopped".
    assert_eq!(sim.stop(&key("never"), None), Reply::UnknownSession);
}

#[test]
fn process_exit_ends_a_session_even_with_pending_work() {
    let mut sim = Sim::new(Settings::default());
    let s1 = key("s1");
    sim.start(&s1);
    sim.stop(&s1, Some("subagent"));
    sim.apply(Input::ProcessesGone(vec![s1.clone()]));
    assert!(sim.reg.session(&s1).is_none());
    assert!(!sim.held());
    let ended = sim.reg.ended().last().unwrap();
    assert_eq!(ended.kind, StopKind::ProcessGone);
}

#[test]
fn unknown_sessions_are_ignored() {
    let mut sim = Sim::new(Settings::default());
    let (key, reason) = (key("ghost"), String::from("x"));
    for input in [
        Input::Activity {
            key: key.clone(),
            reason: reason.clone(),
        },
        Input::SoftLock { key, reason },
    ] {
        assert_eq!(sim.apply(input), Reply::UnknownSession);
    }
    assert!(sim.reg.sessions().next().is_none());
    assert!(!sim.held());
}

#[test]
fn timeout_off_never_soft_locks_or_abandons() {
    let settings = Settings {
        session_timeout_minutes: None,
        ..Settings::default()
    };
    let mut sim = Sim::new(settings);
    let s1 = key("s1");
    sim.start(&s1);
    sim.stop(&s1, Some("task"));
    sim.advance(mins(60 * 24));
    assert_eq!(sim.state(&s1), Some((None, true)));
    assert!(sim.held());
    assert_eq!(sim.reg.next_deadline(), None);
}

/// A session on another machine holds this one at most `RELAYED_SILENCE_MINUTES` without a word,
/// whatever the timeout setting: with it off, a silent relayed session is soft-locked after that
/// bound (a local one is not); a shorter setting applies as set.
#[test]
fn a_silent_session_on_another_machine_holds_for_a_bounded_time_whatever_the_setting() {
    use lidguard_core::registry::RELAYED_SILENCE_MINUTES;
    let bound = i64::from(RELAYED_SILENCE_MINUTES);
    let relayed = |id: &str| {
        Input::Start(StartSession {
            key: key(id),
            cwd: None,
            transcript_path: None,
            watched_pid: None,
            run_by: None,
            via: Some("ssh alice@build".to_owned()),
        })
    };
    for (setting, expected) in [(None, bound), (Some(12), 12), (Some(600), bound)] {
        let settings = Settings {
            session_timeout_minutes: setting,
            ..Settings::default()
        };
        let mut sim = Sim::new(settings);
        let (far, near) = (key("far"), key("near"));
        sim.apply(relayed("far"));
        sim.start(&near);
        let second = SignedDuration::from_secs(1);
        sim.advance(mins(expected) - second);
        assert_eq!(sim.state(&far), Some((None, false)), "{setting:?}");
        sim.advance(second);
        let (lock, _) = sim.state(&far).unwrap();
        assert_eq!(
            lock.as_deref(),
            Some(format!("session-timeout-expired:{expected} minutes").as_str()),
            "{setting:?}"
        );
        if setting.is_none() {
            sim.advance(mins(60 * 24));
            assert_eq!(sim.state(&near), Some((None, false)), "local: no timeout");
        }
    }
}

/// A command's session (`run`, `start --provider custom --parent-pid`) lasts as long as its
/// process: no inactivity timeout while it is watched. An agent's session with a watched process,
/// and a command's session without one, keep the timeout.
#[test]
fn a_watched_commands_session_has_no_inactivity_timeout() {
    let mut sim = Sim::new(Settings::default());
    let command = SessionKey::new(Provider::Custom, "run:make:42", "");
    let agent = SessionKey::new(Provider::Claude, "a1", "");
    let unwatched = SessionKey::new(Provider::Custom, "by-hand", "");
    for (key, pid) in [(&command, Some(42)), (&agent, Some(43)), (&unwatched, None)] {
        sim.apply(Input::Start(StartSession {
            key: key.clone(),
            cwd: None,
            transcript_path: None,
            watched_pid: pid,
            run_by: None,
            via: None,
        }));
    }
    let deadline =
        |sim: &Sim, key: &SessionKey| sim.reg.session_deadline(sim.reg.session(key).unwrap());
    assert_eq!(deadline(&sim, &command), None);
    assert!(deadline(&sim, &agent).is_some());
    assert!(deadline(&sim, &unwatched).is_some());
    assert_eq!(
        sim.reg.session(&command).unwrap().lasts_while_process(),
        Some(42)
    );
    assert_eq!(sim.reg.session(&agent).unwrap().lasts_while_process(), None);

    sim.advance(mins(60 * 24));
    assert_eq!(sim.state(&command), Some((None, false)), "still working");
    assert_eq!(
        sim.state(&agent),
        Some((Some("session-timeout-expired:12 minutes".into()), false))
    );
    assert_eq!(
        sim.state(&unwatched),
        Some((Some("session-timeout-expired:12 minutes".into()), false))
    );
    assert!(sim.held(), "the command's session alone keeps protection");
    assert_eq!(sim.reg.next_deadline(), None);
}

#[test]
fn start_updates_keep_metadata_and_clear_state() {
    let mut sim = Sim::new(Settings::default());
    let s1 = key("s1");
    sim.apply(Input::Start(StartSession {
        key: s1.clone(),
        cwd: Some("/a".into()),
        transcript_path: Some("/a/t.jsonl".into()),
        watched_pid: Some(42),
        run_by: None,
        via: None,
    }));
    let started = sim.reg.session(&s1).unwrap().started_at;
    sim.apply(Input::SoftLock {
        key: s1.clone(),
        reason: "permission_prompt".into(),
    });
    sim.advance(mins(3));
    assert_eq!(
        sim.apply(Input::Start(StartSession {
            key: s1.clone(),
            cwd: None,
            transcript_path: None,
            watched_pid: None,
            run_by: None,
            via: None,
        })),
        Reply::Updated
    );
    let s = sim.reg.session(&s1).unwrap();
    assert_eq!(s.soft_lock, None);
    assert_eq!(
        s.watched_pid,
        Some(42),
        "an existing watched process is kept"
    );
    assert_eq!(s.transcript_path.as_deref(), Some("/a/t.jsonl"));
    assert_eq!(s.started_at, started);
    assert_eq!(s.last_activity_at, sim.now);
}

#[test]
fn mcp_sessions_are_keyed_by_provider_name_and_never_watch_a_process() {
    let mut sim = Sim::new(Settings::default());
    let a = SessionKey::new(Provider::Mcp, "ab12cd34", "gemini");
    let b = SessionKey::new(Provider::Mcp, "ab12cd34", "qwen");
    for k in [&a, &b] {
        sim.apply(Input::Start(StartSession {
            key: k.clone(),
            cwd: None,
            transcript_path: None,
            watched_pid: Some(7),
            run_by: None,
            via: None,
        }));
    }
    assert_eq!(sim.reg.sessions().count(), 2);
    assert_eq!(sim.reg.session(&a).unwrap().watched_pid, None);
    let removed = sim.apply(Input::Remove(RemoveSelector::Matching {
        session_id: "ab12cd34".into(),
        provider: Some(Provider::Mcp),
        provider_name: Some("qwen".into()),
    }));
    assert_eq!(removed, Reply::Removed(vec![b]));
    assert!(sim.reg.session(&a).is_some());
}

#[test]
fn protection_follows_the_settings() {
    let mut settings = Settings {
        change_lid_action: false,
        ..Settings::default()
    };
    settings.power_request.prevent_system_sleep = false;
    settings.power_request.prevent_display_sleep = true;
    let mut sim = Sim::new(settings);
    sim.start(&key("s1"));
    assert_eq!(
        sim.reg.protection().unwrap().inhibits(),
        vec![Inhibit::Idle]
    );
    assert_eq!(sim.reg.protection().unwrap().why, "1 agent session working");
    sim.start(&key("s2"));
    assert_eq!(
        sim.reg.protection().unwrap().why,
        "2 agent sessions working"
    );

    // A settings change takes effect on the held protection at once.
    let mut lid = sim.reg.settings().clone();
    lid.change_lid_action = true;
    sim.take_effects();
    sim.apply(Input::Settings(Box::new(lid)));
    assert_eq!(
        protection_effects(&sim.take_effects()),
        vec![Some(vec![Inhibit::Idle, Inhibit::HandleLidSwitch])]
    );
}

#[test]
fn idle_exit_after_the_cleanup_delay_and_canceled_by_a_start() {
    let mut sim = Sim::new(Settings::default());
    // Restored with nothing: exit scheduled 10 minutes out.
    assert_eq!(
        sim.reg.exit_at(),
        Some(sim.now.checked_add(mins(10)).unwrap())
    );
    sim.advance(mins(5));
    sim.start(&key("s1"));
    assert_eq!(sim.reg.exit_at(), None);
    sim.advance(mins(30));
    sim.stop(&key("s1"), None);
    sim.take_effects();
    sim.advance(mins(9));
    assert!(!sim.take_effects().contains(&Effect::Exit));
    sim.advance(mins(1));
    assert!(sim.take_effects().contains(&Effect::Exit));
}

#[test]
fn idle_exit_zero_means_right_after_the_last_stop_and_off_means_never() {
    let settings = Settings {
        server_runtime_cleanup_delay_minutes: Some(0),
        ..Settings::default()
    };
    let mut sim = Sim::new(settings);
    // A freshly started daemon waits for the request that started it.
    assert_eq!(
        sim.reg.exit_at(),
        Some(sim.now.checked_add(mins(1)).unwrap())
    );
    sim.take_effects();
    sim.start(&key("s1"));
    sim.stop(&key("s1"), None);
    assert!(sim.take_effects().contains(&Effect::Exit));

    let settings = Settings {
        server_runtime_cleanup_delay_minutes: None,
        ..Settings::default()
    };
    let mut sim = Sim::new(settings);
    sim.advance(mins(60 * 24 * 30));
    assert!(!sim.take_effects().contains(&Effect::Exit));
    assert_eq!(sim.reg.next_deadline(), None);
}

#[test]
fn restore_brings_back_sessions_and_protection() {
    let mut sim = Sim::new(Settings::default());
    sim.start(&key("s1"));
    let saved: Vec<_> = sim.reg.sessions().cloned().collect();

    let mut fresh = Sim::new(Settings::default());
    assert!(!fresh.held());
    fresh.apply(Input::Restore(saved));
    assert!(fresh.held());
    assert_eq!(fresh.reg.exit_at(), None);
}

#[test]
fn many_sessions_each_keep_protection_until_the_last_one_ends() {
    let mut sim = Sim::new(Settings::default());
    let keys: Vec<_> = (0..200).map(|i| key(&format!("s{i}"))).collect();
    for k in &keys {
        sim.start(k);
    }
    assert_eq!(
        sim.reg.protection().unwrap().why,
        "200 agent sessions working"
    );
    for k in &keys[..199] {
        sim.stop(k, None);
        assert!(sim.held());
    }
    sim.stop(&keys[199], None);
    assert!(!sim.held());
}

/// One random step of a simulation.
#[derive(Clone, Debug)]
enum Step {
    Start(u8),
    Activity(u8),
    SoftLock(u8, bool),
    Stop(u8, bool),
    Gone(u8),
    Remove(u8),
    Wait(u16),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0u8..6).prop_map(Step::Start),
        (0u8..6).prop_map(Step::Activity),
        (0u8..6, any::<bool>()).prop_map(|(k, b)| Step::SoftLock(k, b)),
        (0u8..6, any::<bool>()).prop_map(|(k, b)| Step::Stop(k, b)),
        (0u8..6).prop_map(Step::Gone),
        (0u8..6).prop_map(Step::Remove),
        (0u16..1500).prop_map(Step::Wait),
    ]
}

proptest! {
    /// Invariants that hold after every step of any sequence.
    #[test]
    fn invariants_hold_for_any_sequence(steps in prop::collection::vec(step(), 1..80)) {
        let mut sim = Sim::new(Settings::default());
        let mut last = None;
        for step in steps {
            match step {
                Step::Start(k) => { sim.start(&key(&k.to_string())); }
                Step::Activity(k) => {
                    sim.apply(Input::Activity { key: key(&k.to_string()), reason: "tool".into() });
                }
                Step::SoftLock(k, b) => {
                    let reason = if b { "permission_prompt" } else { "elicitation_dialog" };
                    sim.apply(Input::SoftLock { key: key(&k.to_string()), reason: reason.into() });
                }
                Step::Stop(k, pending) => {
                    sim.stop(&key(&k.to_string()), pending.then_some("work"));
                }
                Step::Gone(k) => { sim.apply(Input::ProcessesGone(vec![key(&k.to_string())])); }
                Step::Remove(k) => {
                    sim.apply(Input::Remove(RemoveSelector::Matching {
                        session_id: k.to_string(), provider: None, provider_name: None,
                    }));
                }
                Step::Wait(secs) => sim.advance(SignedDuration::from_secs(i64::from(secs))),
            }
            // Protection is held iff some session needs it.
            let needed = sim.reg.sessions().any(|s| s.needs_protection());
            prop_assert_eq!(sim.held(), needed);
            // Protection effects are emitted exactly on changes, and agree with the state.
            for e in sim.take_effects() {
                if let Effect::Protection(p) = e {
                    prop_assert_ne!(&p, &last, "a protection effect must be a change");
                    last = p;
                }
            }
            prop_assert_eq!(last.as_ref(), sim.reg.protection());
            // No deadline is left in the past.
            if let Some(d) = sim.reg.next_deadline() {
                prop_assert!(d > sim.now, "stale deadline {} at {}", d, sim.now);
            }
            // Every session's activity is never in the future and never before its start.
            for s in sim.reg.sessions() {
                prop_assert!(s.last_activity_at <= sim.now);
                prop_assert!(s.started_at <= s.last_activity_at);
            }
        }
    }
}

/// A place elsewhere keeps at most `MAX_SESSIONS_PER_PLACE` sessions here: one more is refused
/// and logged, while its existing sessions go on and another place and local work are not
/// counted against it.
#[test]
fn a_place_elsewhere_keeps_a_bounded_number_of_sessions() {
    use lidguard_core::registry::MAX_SESSIONS_PER_PLACE;
    let mut sim = Sim::new(Settings::default());
    let relayed = |id: String, via: &str| {
        Input::Start(StartSession {
            key: SessionKey::new(Provider::Claude, &id, ""),
            cwd: None,
            transcript_path: None,
            watched_pid: None,
            run_by: None,
            via: Some(via.to_owned()),
        })
    };
    let flood = "ssh mallory@build";
    for n in 0..MAX_SESSIONS_PER_PLACE {
        let id = format!("ssh:mallory@build/{n}");
        assert_eq!(sim.apply(relayed(id, flood)), Reply::Started);
    }
    let one_more = format!("ssh:mallory@build/{MAX_SESSIONS_PER_PLACE}");
    assert_eq!(sim.apply(relayed(one_more, flood)), Reply::Unchanged);
    assert_eq!(sim.reg.sessions().count(), MAX_SESSIONS_PER_PLACE);
    assert!(sim.effects.iter().any(|e| matches!(e, Effect::Log(l)
        if l.name == "relayed-session-refused"
            && l.detail == format!("{flood} already has {MAX_SESSIONS_PER_PLACE} sessions here"))));
    // Its own sessions go on; others are not counted against it.
    assert_eq!(
        sim.apply(relayed("ssh:mallory@build/0".into(), flood)),
        Reply::Updated
    );
    assert_eq!(
        sim.apply(relayed("container:dev/1".into(), "container dev (podman)")),
        Reply::Started
    );
    let local = Input::Start(StartSession {
        key: SessionKey::new(Provider::Claude, "here", ""),
        cwd: None,
        transcript_path: None,
        watched_pid: None,
        run_by: None,
        via: None,
    });
    assert_eq!(sim.apply(local), Reply::Started);
}
