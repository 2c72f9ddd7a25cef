//! The moments a registry's effects make: each begins once, holds while seen again, ends once.

use jiff::Timestamp;

use super::*;
use crate::provider::Provider;
use crate::registry::{Input, RemoveSelector, StartSession};
use crate::settings::Settings;

struct Run {
    registry: Registry,
    moments: Moments,
    now: Timestamp,
}

impl Run {
    fn new() -> Run {
        let mut run = Run {
            registry: Registry::new(Settings::default()),
            moments: Moments::default(),
            now: "2026-12-07T12:00:00Z".parse().unwrap(),
        };
        run.apply(Input::Restore(Vec::new()));
        run
    }

    fn apply(&mut self, input: Input) -> Vec<Moment> {
        let outcome = self.registry.apply(input, self.now);
        self.moments.due(&outcome.effects, &self.registry)
    }

    fn lock(&mut self, key: &SessionKey, reason: &str) -> Vec<Moment> {
        self.apply(Input::SoftLock {
            key: key.clone(),
            reason: reason.to_owned(),
        })
    }
}

fn key() -> SessionKey {
    SessionKey::new(Provider::Claude, "s1", "claude")
}

fn start(key: &SessionKey) -> Input {
    Input::Start(StartSession {
        key: key.clone(),
        cwd: Some("/home/u/proj".into()),
        transcript_path: None,
        watched_pid: None,
        run_by: None,
        via: None,
    })
}

fn waits(moments: &[Moment]) -> Vec<&Moment> {
    moments
        .iter()
        .filter(|m| match m {
            Moment::Began(w) | Moment::Holds(w) | Moment::Ended(w, _) => {
                w.reason() == Reason::WaitingForYou
            }
        })
        .collect()
}

#[test]
fn a_wait_begins_once_holds_while_seen_again_and_ends_once() {
    let mut run = Run::new();
    let key = key();
    assert!(waits(&run.apply(start(&key))).is_empty());

    let began = run.lock(&key, "permission_prompt");
    let [Moment::Began(What::WaitingForYou(w))] = waits(&began)[..] else {
        panic!("{began:?}");
    };
    assert_eq!(
        (w.reason.as_str(), w.cwd.as_deref()),
        ("permission_prompt", Some("/home/u/proj"))
    );

    // The same wait saved again: it holds, it does not begin again.
    let again = run.lock(&key, "permission_prompt");
    assert!(
        waits(&again).iter().all(|m| matches!(m, Moment::Holds(_))),
        "{again:?}"
    );

    // Work again: the wait ends, cleared.
    let worked = run.apply(Input::Activity {
        key: key.clone(),
        reason: "PostToolUse:Bash".into(),
    });
    assert!(
        matches!(waits(&worked)[..], [Moment::Ended(What::WaitingForYou(w), Ending::Cleared)] if w.key == key),
        "{worked:?}"
    );

    // A new wait begins again; the session removed, it ends as gone.
    assert!(matches!(
        waits(&run.lock(&key, "idle_prompt"))[..],
        [Moment::Began(_)]
    ));
    let removed = run.apply(Input::Remove(RemoveSelector::All));
    assert!(
        matches!(waits(&removed)[..], [Moment::Ended(What::WaitingForYou(w), Ending::Gone)] if w.key == key),
        "{removed:?}"
    );
}

#[test]
fn the_inactivity_timeout_is_no_wait_for_the_user() {
    let mut run = Run::new();
    let key = key();
    run.apply(start(&key));
    let reason = format!("{}12", crate::registry::TIMEOUT_SOFT_LOCK_PREFIX);
    let moments = run.lock(&key, &reason);
    assert!(waits(&moments).is_empty(), "{moments:?}");
}

#[test]
fn a_wait_restored_at_start_holds_already() {
    let mut first = Run::new();
    let key = key();
    first.apply(start(&key));
    first.lock(&key, "permission_prompt");
    let sessions: Vec<Session> = first.registry.sessions().cloned().collect();

    let mut run = Run::new();
    run.moments.restored(&sessions);
    let restored = run.apply(Input::Restore(sessions));
    assert!(
        waits(&restored)
            .iter()
            .all(|m| matches!(m, Moment::Holds(_))),
        "{restored:?}"
    );
}

#[test]
fn protection_failing_begins_once_and_ends_when_it_holds() {
    let mut run = Run::new();
    run.apply(start(&key()));
    let failed = run
        .moments
        .protection(Some("logind refused"), &run.registry);
    assert!(
        matches!(&failed[..], [Moment::Began(What::ProtectionFailed(why))] if why == "logind refused")
    );
    let still = run
        .moments
        .protection(Some("logind refused"), &run.registry);
    assert!(matches!(&still[..], [Moment::Holds(_)]));
    let held = run.moments.protection(None, &run.registry);
    assert!(matches!(
        &held[..],
        [Moment::Ended(What::ProtectionFailed(_), Ending::Cleared)]
    ));
    assert!(run.moments.protection(None, &run.registry).is_empty());
}
