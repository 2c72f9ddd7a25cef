//! The closed-lid rule on the pure core: whether a hold goes on, is released, or ends with the
//! machine put to sleep, from the lid, the power source, the external displays, the battery's
//! charge and the thermal state — the kernel's own rule on a Mac (a display keeps a closed Mac
//! awake only on AC), the docked rule elsewhere.

mod sim;

use lidguard_core::clamshell::{ClamshellRule, ThermalState, Verdict};
use lidguard_core::event::{EventKind, Lid};
use lidguard_core::registry::{Effect, Input};
use lidguard_core::settings::{ClosedLidPermissionRequestDecision, Os, Settings};
use lidguard_core::suspend::{Battery, Machine, SuspendReason};

/// One row: the machine as observed, and what becomes of a hold while an agent works.
struct Row {
    lid: Lid,
    on_ac: bool,
    displays: u32,
    percent: u8,
    thermal: ThermalState,
    verdict: Verdict,
}

use ThermalState::{Critical, Fair, Nominal, Serious};
use Verdict::{Hold, Release, Sleep};

const fn row(
    lid: Lid,
    on_ac: bool,
    displays: u32,
    percent: u8,
    thermal: ThermalState,
    verdict: Verdict,
) -> Row {
    Row {
        lid,
        on_ac,
        displays,
        percent,
        thermal,
        verdict,
    }
}

const CLOSED: Lid = Lid::Closed;
const OPEN: Lid = Lid::Open;
const AC: bool = true;
const BATTERY: bool = false;

/// A Mac, by XNU's `shouldSleepOnClamshellClosed` (the floor at its default of 10%).
const MAC: &[Row] = &[
    // Nothing says stop: hold, whatever the lid.
    row(CLOSED, BATTERY, 0, 50, Nominal, Hold),
    row(CLOSED, AC, 0, 50, Fair, Hold),
    row(OPEN, BATTERY, 0, 50, Nominal, Hold),
    row(CLOSED, BATTERY, 1, 50, Nominal, Hold),
    // Below the floor on battery: sleep with the lid closed, even with a display (on battery
    // the kernel sleeps a closed Mac whatever is attached); release with it open.
    row(CLOSED, BATTERY, 0, 9, Nominal, Sleep),
    row(CLOSED, BATTERY, 1, 9, Nominal, Sleep),
    row(OPEN, BATTERY, 0, 9, Nominal, Release),
    // The floor is for the battery only.
    row(CLOSED, AC, 0, 9, Nominal, Hold),
    // Serious or worse: sleep with the lid closed unless a display on AC keeps the Mac awake
    // by the kernel's own rule (then released: the kernel's thermal sleep works again).
    row(CLOSED, AC, 0, 80, Serious, Sleep),
    row(CLOSED, BATTERY, 0, 80, Critical, Sleep),
    row(CLOSED, AC, 1, 80, Serious, Release),
    row(CLOSED, BATTERY, 1, 80, Serious, Sleep),
    row(OPEN, AC, 0, 80, Critical, Release),
];

/// Linux and Windows: a display keeps a closed laptop awake on battery too (docked).
const DOCKED: &[Row] = &[
    row(CLOSED, BATTERY, 0, 9, Nominal, Sleep),
    row(CLOSED, BATTERY, 1, 9, Nominal, Release),
    row(CLOSED, AC, 1, 80, Serious, Release),
    row(CLOSED, AC, 0, 80, Serious, Sleep),
    row(OPEN, BATTERY, 0, 9, Nominal, Release),
    row(CLOSED, BATTERY, 1, 50, Nominal, Hold),
];

/// Runs `row` through a registry with one working session: the machine, the battery and the
/// thermal state come in as the daemon reports them; returns the verdict and the effects.
fn run(rule: ClamshellRule, row: &Row) -> (Verdict, Vec<Effect>) {
    let machine = Machine {
        lid: row.lid,
        external_displays: Some(row.displays),
    };
    let mut sim = sim::Sim::with_rule(Settings::defaults_for(Os::MacOs), machine, rule);
    sim.apply(Input::Battery(Some(Battery {
        percent: 80,
        on_battery: !row.on_ac,
    })));
    sim.apply(Input::Thermal(Some(Nominal)));
    sim.start("a");
    assert!(sim.reg.protection().is_some(), "held while the agent works");
    sim.take();
    sim.apply(Input::Battery(Some(Battery {
        percent: row.percent,
        on_battery: !row.on_ac,
    })));
    sim.apply(Input::Thermal(Some(row.thermal)));
    (sim.reg.verdict(), sim.take())
}

fn check(rule: ClamshellRule, rows: &[Row]) {
    for (n, row) in rows.iter().enumerate() {
        let (verdict, effects) = run(rule, row);
        let what = format!(
            "row {n}: lid {:?}, {}, {} display(s), {}%, {} under {rule:?}",
            row.lid,
            if row.on_ac { "AC" } else { "battery" },
            row.displays,
            row.percent,
            row.thermal
        );
        assert_eq!(verdict, row.verdict, "{what}");
        let slept: Vec<SuspendReason> = effects
            .iter()
            .filter_map(|e| match e {
                Effect::Suspend(r) => Some(r.reason),
                _ => None,
            })
            .collect();
        let released = effects.contains(&Effect::Protection(None));
        match row.verdict {
            Hold => assert!(slept.is_empty() && !released, "{what}: {effects:?}"),
            Release => assert!(slept.is_empty() && released, "{what}: {effects:?}"),
            Sleep => {
                let reason = if row.percent < 10 && !row.on_ac {
                    SuspendReason::BatteryFloor
                } else {
                    SuspendReason::ThermalPressure
                };
                assert_eq!(slept, [reason], "{what}: {effects:?}");
                assert!(released, "{what}: {effects:?}");
            }
        }
    }
}

#[test]
fn a_mac_follows_the_kernels_clamshell_rule() {
    check(ClamshellRule::DisplayOnAcKeepsAwake, MAC);
}

#[test]
fn a_docked_laptop_stays_awake_for_its_display() {
    check(ClamshellRule::DisplayKeepsAwake, DOCKED);
}

/// A hold ended by the battery floor with the lid closed sleeps once, says why, is asked again
/// only after five minutes while the charge stays low, and comes back on AC power.
#[test]
fn the_floor_sleeps_once_then_retries_and_lets_go_on_ac() {
    let closed = Machine {
        lid: Lid::Closed,
        external_displays: Some(0),
    };
    let mut sim = sim::Sim::with_rule(
        Settings::defaults_for(Os::MacOs),
        closed,
        ClamshellRule::DisplayOnAcKeepsAwake,
    );
    let battery = |percent| {
        Input::Battery(Some(Battery {
            percent,
            on_battery: true,
        }))
    };
    sim.apply(battery(40));
    sim.start("a");
    sim.apply(battery(9));
    assert_eq!(sim.requests().len(), 1);
    let request = sim.requests()[0].clone();
    assert_eq!(request.reason, SuspendReason::BatteryFloor);
    assert_eq!(request.active_session_count, 1);
    assert_eq!(sim.logged("battery-floor-reached"), 1);
    let logs: Vec<String> = sim
        .effects
        .iter()
        .filter_map(|e| match e {
            Effect::Log(l) => Some(format!("{}  {}", l.name, l.detail)),
            _ => None,
        })
        .collect();
    let line = "suspend-requested  Sleep (BatteryFloor): on battery at 9%, below the battery \
                floor of 10%";
    assert!(logs.iter().any(|l| l == line), "{logs:?}");
    // Still low a minute later: not asked again yet (the machine may be on its way down).
    sim.advance(60);
    sim.apply(battery(8));
    assert_eq!(sim.requests().len(), 1);
    // Five minutes on, still awake and low: asked again.
    sim.advance(300);
    sim.apply(battery(7));
    assert_eq!(sim.requests().len(), 2);
    // AC power: the hold comes back.
    sim.apply(Input::Battery(Some(Battery {
        percent: 7,
        on_battery: false,
    })));
    assert!(sim.reg.protection().is_some());
    assert_eq!(sim.reg.verdict(), Verdict::Hold);
}

/// A thermal state counts only with the temperature guard on; its release and return are logged.
#[test]
fn the_thermal_state_counts_only_with_the_guard_on() {
    let open = Machine {
        lid: Lid::Open,
        external_displays: Some(0),
    };
    let mut settings = Settings::defaults_for(Os::MacOs);
    settings.emergency_hibernation_on_high_temperature = false;
    let mut sim = sim::Sim::with_rule(settings.clone(), open, ClamshellRule::DisplayOnAcKeepsAwake);
    sim.start("a");
    sim.apply(Input::Thermal(Some(Serious)));
    assert!(sim.reg.protection().is_some(), "the guard is off");
    assert!(!sim.reg.thermal_watch_wanted());
    settings.emergency_hibernation_on_high_temperature = true;
    sim.apply(Input::Settings(Box::new(settings)));
    assert!(sim.reg.protection().is_none());
    assert_eq!(
        sim.reg.thermal_pressure().as_deref(),
        Some("the thermal state is serious")
    );
    assert_eq!(sim.logged("thermal-pressure-reached"), 1);
    assert!(
        sim.reg.thermal_watch_wanted(),
        "read on until it cools down"
    );
    sim.apply(Input::Thermal(Some(Fair)));
    assert!(sim.reg.protection().is_some());
    assert_eq!(sim.logged("thermal-pressure-cleared"), 1);
    assert!(sim.requests().is_empty(), "the lid is open: never slept");
}

/// A permission request with the lid closed and a display attached: a Mac on battery sleeps for
/// that lid, so the closed-lid policy answers; on AC the display keeps it awake and the agent
/// asks as usual.
#[test]
fn a_display_on_battery_does_not_keep_a_mac_from_the_closed_lid_policy() {
    let docked = Machine {
        lid: Lid::Closed,
        external_displays: Some(1),
    };
    let mut settings = Settings::defaults_for(Os::MacOs);
    settings.closed_lid_permission_request_decision = ClosedLidPermissionRequestDecision::Deny;
    let mut sim = sim::Sim::with_rule(settings, docked, ClamshellRule::DisplayOnAcKeepsAwake);
    let permission = EventKind::PermissionRequested {
        before_agent_rules: false,
    };
    let decide = |sim: &mut sim::Sim| {
        let event = lidguard_core::event::AgentEvent::new(
            lidguard_core::provider::Provider::Claude,
            "a",
            "PermissionRequest",
            permission.clone(),
        );
        sim.reg
            .apply(
                Input::Agent {
                    event: Box::new(event),
                    lid: Lid::Closed,
                    external_displays: Some(1),
                },
                sim.now,
            )
            .decision
    };
    sim.start("a");
    sim.apply(Input::Battery(Some(Battery {
        percent: 60,
        on_battery: false,
    })));
    assert_eq!(decide(&mut sim), None, "on AC the display keeps it awake");
    sim.apply(Input::Battery(Some(Battery {
        percent: 60,
        on_battery: true,
    })));
    let decision = decide(&mut sim).expect("on battery the Mac sleeps with the lid closed");
    assert_eq!(decision.provenance.external_displays, Some(1));
    // Under the docked rule the display keeps it awake either way.
    let mut docked_sim = sim::Sim::with_rule(
        Settings::defaults_for(Os::Linux),
        docked,
        ClamshellRule::default(),
    );
    docked_sim.start("a");
    docked_sim.apply(Input::Battery(Some(Battery {
        percent: 60,
        on_battery: true,
    })));
    assert_eq!(decide(&mut docked_sim), None);
}

/// Away mode (Windows) turns a sleep into a running machine with its screen off: asked for on AC
/// only, so a laptop on battery in a bag is never kept running that way.
#[test]
fn away_mode_is_asked_for_on_ac_only() {
    let open = Machine {
        lid: Lid::Open,
        external_displays: Some(0),
    };
    let mut sim = sim::Sim::with(Settings::defaults_for(Os::Windows), open);
    sim.start("a");
    let away = |sim: &sim::Sim| sim.reg.protection().map(|p| p.away_mode);
    assert_eq!(
        away(&sim),
        Some(true),
        "no battery reading: a desktop on AC"
    );
    sim.apply(Input::Battery(Some(Battery {
        percent: 80,
        on_battery: true,
    })));
    assert_eq!(away(&sim), Some(false), "on battery: no away mode");
    sim.apply(Input::Battery(Some(Battery {
        percent: 80,
        on_battery: false,
    })));
    assert_eq!(away(&sim), Some(true), "on AC again");
}
