//! The logind backend against the real systemd-logind on a private system bus.
//!
//! Every test takes `lidguard_testbus::serial()` first (one logind per machine) and is skipped,
//! with a note on stderr, where a private logind cannot run (not root, not installed) unless
//! `CI` is set, where it fails instead.
#![allow(
    clippy::disallowed_methods,
    reason = "tests write fixtures and read the environment"
)]
#![cfg(target_os = "linux")]

use std::collections::BTreeSet;
use std::future::Future;
use std::os::unix::net::UnixListener;
use std::time::{Duration, Instant};

use lidguard_platform::power::{self, Inhibit, LID_SWITCH_WHY, PowerControl, ProtectionPlan};
use lidguard_platform::sources::{Lid, Roots, lid_state_using};
use lidguard_testbus::{PrivateLogind, bus_or_skip, logind_or_skip, serial};
use tokio::runtime::Runtime;

const WHY: &str = "2 agent sessions working";

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

fn block_on<F: Future>(runtime: &Runtime, future: F) -> F::Output {
    runtime.block_on(future)
}

fn plan(keep_awake: &[Inhibit], lid_switch: bool) -> ProtectionPlan {
    ProtectionPlan {
        keep_awake: keep_awake.to_vec(),
        lid_switch,
        who: "lidguard".to_owned(),
        why: WHY.to_owned(),
        ..ProtectionPlan::default()
    }
}

fn blocked_set(value: &str) -> BTreeSet<String> {
    value
        .split(':')
        .filter(|part| !part.is_empty())
        .map(str::to_owned)
        .collect()
}

fn connect(runtime: &Runtime, logind: &PrivateLogind) -> std::sync::Arc<dyn PowerControl> {
    block_on(runtime, power::connect_with_address(logind.address()))
        .unwrap_or_else(|unavailable| panic!("connect to the private logind: {unavailable}"))
}

/// Waits until logind reports nothing blocked, as it does once every inhibitor FIFO is closed.
fn assert_released(logind: &PrivateLogind) {
    let last = logind.wait_block_inhibited(Duration::from_secs(2), str::is_empty);
    assert_eq!(last, "", "BlockInhibited after the guard was dropped");
    assert!(
        logind.list_inhibitors().is_empty(),
        "{:?}",
        logind.list_inhibitors()
    );
}

#[test]
fn holds_sleep_idle_and_lid_switch_and_releases_on_drop() {
    let _serial = serial();
    let Some(logind) = logind_or_skip() else {
        return;
    };
    let rt = runtime();
    let power = connect(&rt, &logind);
    assert!(
        power.describe().contains("systemd-logind"),
        "{}",
        power.describe()
    );
    assert_eq!(logind.block_inhibited(), "", "nothing is held before");

    let held = block_on(
        &rt,
        power.hold(&plan(&[Inhibit::Sleep, Inhibit::Idle], true)),
    )
    .expect("hold");
    assert_eq!(
        held.inhibits(),
        vec![Inhibit::Sleep, Inhibit::Idle, Inhibit::HandleLidSwitch]
    );

    let blocked = logind.block_inhibited();
    assert_eq!(
        blocked_set(&blocked),
        blocked_set("sleep:idle:handle-lid-switch"),
        "BlockInhibited is {blocked:?}"
    );

    let mut inhibitors = logind.list_inhibitors();
    inhibitors.sort();
    let me = std::process::id();
    assert_eq!(
        inhibitors,
        vec![
            (
                "handle-lid-switch".into(),
                "lidguard".into(),
                LID_SWITCH_WHY.into(),
                "block".into(),
                0,
                me
            ),
            (
                "sleep:idle".into(),
                "lidguard".into(),
                WHY.into(),
                "block".into(),
                0,
                me
            ),
        ],
        "one inhibitor per lock group, taken by this process"
    );

    drop(held);
    assert_released(&logind);
}

#[test]
fn plan_without_lid_switch_leaves_lid_handling_alone() {
    let _serial = serial();
    let Some(logind) = logind_or_skip() else {
        return;
    };
    let rt = runtime();
    let power = connect(&rt, &logind);

    let held = block_on(
        &rt,
        power.hold(&plan(&[Inhibit::Sleep, Inhibit::Idle], false)),
    )
    .expect("hold");
    assert_eq!(held.inhibits(), vec![Inhibit::Sleep, Inhibit::Idle]);
    let blocked = logind.block_inhibited();
    assert_eq!(
        blocked_set(&blocked),
        blocked_set("sleep:idle"),
        "BlockInhibited is {blocked:?}"
    );
    assert!(!blocked.contains("handle-lid-switch"));
    assert_eq!(logind.list_inhibitors().len(), 1);

    drop(held);
    assert_released(&logind);
}

#[test]
fn empty_plan_holds_nothing_and_lid_only_plan_holds_only_the_lid() {
    let _serial = serial();
    let Some(logind) = logind_or_skip() else {
        return;
    };
    let rt = runtime();
    let power = connect(&rt, &logind);

    let nothing = block_on(&rt, power.hold(&plan(&[], false))).expect("hold nothing");
    assert!(nothing.inhibits().is_empty());
    assert_eq!(logind.block_inhibited(), "");
    assert!(logind.list_inhibitors().is_empty());

    let lid_only = block_on(&rt, power.hold(&plan(&[], true))).expect("hold the lid");
    assert_eq!(lid_only.inhibits(), vec![Inhibit::HandleLidSwitch]);
    assert_eq!(logind.block_inhibited(), "handle-lid-switch");
    drop(lid_only);
    drop(nothing);
    assert_released(&logind);
}

#[test]
fn overlapping_guards_release_independently() {
    let _serial = serial();
    let Some(logind) = logind_or_skip() else {
        return;
    };
    let rt = runtime();
    let power = connect(&rt, &logind);

    // Make-before-break, as the daemon does when the plan changes.
    let old = block_on(
        &rt,
        power.hold(&plan(&[Inhibit::Sleep, Inhibit::Idle], true)),
    )
    .expect("old");
    let new = block_on(&rt, power.hold(&plan(&[Inhibit::Idle], false))).expect("new");
    assert_eq!(logind.list_inhibitors().len(), 3);
    drop(old);
    let last = logind.wait_block_inhibited(Duration::from_secs(2), |value| value == "idle");
    assert_eq!(last, "idle", "only the new guard's lock remains");
    drop(new);
    assert_released(&logind);
}

#[test]
fn reads_lid_closed_from_logind() {
    let _serial = serial();
    let Some(logind) = logind_or_skip() else {
        return;
    };
    let rt = runtime();
    let power = connect(&rt, &logind);
    // A container has no lid switch; logind then reports the lid open (LidClosed = false).
    assert_eq!(block_on(&rt, power.lid_closed()), Some(false));

    // Overridden roots never consult logind: an empty fake tree gives Unknown, not Open.
    let fake = tempfile::tempdir().expect("tempdir");
    let roots = Roots::new(fake.path().join("proc"), fake.path().join("sys"));
    assert_eq!(
        block_on(&rt, lid_state_using(power.as_ref(), &roots)),
        Lid::Unknown
    );
}

#[test]
fn nothing_listening_is_unavailable_quickly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let address = format!("unix:path={}", dir.path().join("no_bus_here").display());
    let rt = runtime();
    let started = Instant::now();
    let Err(unavailable) = block_on(&rt, power::connect_with_address(&address)) else {
        panic!("connected to a bus that does not exist");
    };
    let text = unavailable.to_string();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    assert!(text.contains("not reachable"), "{text}");
    assert!(text.contains(&address), "{text}");
    assert!(text.contains("cannot keep the machine awake"), "{text}");
}

#[test]
fn bus_without_logind_is_unavailable() {
    let Some(bus) = bus_or_skip() else { return };
    let rt = runtime();
    let started = Instant::now();
    let Err(unavailable) = block_on(&rt, power::connect_with_address(bus.address())) else {
        panic!("connected although no logind runs on the private bus");
    };
    let text = unavailable.to_string();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    assert!(
        text.starts_with("systemd-logind is not reachable on the bus at"),
        "{text}"
    );
    assert!(text.contains("org.freedesktop.login1"), "{text}");
    assert!(
        text.contains("lidguard keeps tracking sessions but cannot keep the machine awake"),
        "{text}"
    );
}

#[test]
fn silent_bus_times_out_instead_of_hanging() {
    let dir = tempfile::tempdir().expect("tempdir");
    let socket = dir.path().join("silent");
    // Accepts connections (through the backlog) but never says a word.
    let _listener = UnixListener::bind(&socket).expect("bind");
    let address = format!("unix:path={}", socket.display());
    let rt = runtime();
    let started = Instant::now();
    let Err(unavailable) = block_on(&rt, power::connect_with_address(&address)) else {
        panic!("connected to a silent socket");
    };
    let elapsed = started.elapsed();
    let text = unavailable.to_string();
    assert!(
        elapsed >= Duration::from_millis(1900),
        "gave up early: {elapsed:?}"
    );
    assert!(elapsed < Duration::from_secs(4), "hung for {elapsed:?}");
    assert!(text.contains("did not answer within 2 s"), "{text}");
}

#[test]
fn production_connect_settles_within_the_timeout() {
    // Whatever this machine has (a real logind, a bus without it, no bus at all), `connect`
    // answers within its timeout, and an unavailable backend says what lidguard still does.
    let rt = runtime();
    let started = Instant::now();
    let outcome = block_on(&rt, power::connect());
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "took {:?}",
        started.elapsed()
    );
    match outcome {
        Ok(power) => assert_eq!(power.describe(), "systemd-logind on the system bus"),
        Err(unavailable) => {
            let text = unavailable.to_string();
            assert!(text.contains("system"), "{text}");
            assert!(text.contains("cannot keep the machine awake"), "{text}");
            assert_eq!(block_on(&rt, power::logind_lid_closed()), None);
        }
    }
}

#[test]
fn sleep_gives_way_in_delay_mode_while_idle_and_the_lid_switch_stay_blocked() {
    let _serial = serial();
    let Some(logind) = logind_or_skip() else {
        return;
    };
    let rt = runtime();
    let power = connect(&rt, &logind);
    let mut giving_way = plan(&[Inhibit::Sleep, Inhibit::Idle], true);
    giving_way.sleep_gives_way = true;
    let held = block_on(&rt, power.hold(&giving_way)).expect("hold");
    assert_eq!(
        held.inhibits(),
        vec![Inhibit::Sleep, Inhibit::Idle, Inhibit::HandleLidSwitch]
    );
    assert_eq!(held.giving_way(), vec![Inhibit::Sleep]);
    assert_eq!(logind.block_inhibited(), "idle:handle-lid-switch");
    assert_eq!(logind.delay_inhibited(), "sleep");
    let mut modes: Vec<(String, String)> = logind
        .list_inhibitors()
        .into_iter()
        .map(|i| (i.0, i.3))
        .collect();
    modes.sort();
    assert_eq!(
        modes,
        [
            ("handle-lid-switch".into(), "block".into()),
            ("idle".into(), "block".into()),
            ("sleep".into(), "delay".into()),
        ]
    );
    drop(held);
    assert_released(&logind);
    assert_eq!(logind.delay_inhibited(), "");

    // Without sleep in the plan there is nothing to give way.
    let mut idle_only = plan(&[Inhibit::Idle], false);
    idle_only.sleep_gives_way = true;
    let held = block_on(&rt, power.hold(&idle_only)).expect("hold");
    assert!(held.giving_way().is_empty());
    assert_eq!(logind.block_inhibited(), "idle");
    assert_eq!(logind.delay_inhibited(), "");
    drop(held);
    assert_released(&logind);
}
