//! `lidguard status`: what every part of the runtime shows of itself, in one snapshot.

use lidguard_ipc::protocol::{
    CleanupStatus, ProtectionStatus, ReleasedWakeUp, SessionStatus, Status,
};

use lidguard_core::registry::Registry;
use lidguard_ipc::Places;

use super::life::Life;
use super::machine::MachineView;
use super::phone::Phone;
use super::protection::Protection;
use super::records::Records;
use crate::watch::Watchers;

/// What `status` reads, part by part (read only: a snapshot changes nothing).
pub(super) struct View<'a> {
    pub(super) registry: &'a Registry,
    pub(super) watchers: &'a Watchers,
    pub(super) machine: &'a MachineView,
    pub(super) protection: &'a Protection,
    pub(super) records: &'a Records,
    pub(super) places: &'a Places,
    pub(super) life: &'a Life,
    pub(super) phone: &'a Phone,
}

/// The keep-awake protection as held now, and whether it is wanted.
pub(super) fn protection(registry: &Registry, protection: &Protection) -> ProtectionStatus {
    let wanted = registry.protection().is_some();
    let mut status = protection.status(wanted, registry.battery_floor_reached());
    status.paused = registry.pause_in_force();
    status.thermal_pressure = registry.thermal_pressure();
    status
}

/// Everything `status` shows.
pub(super) async fn snapshot(rt: View<'_>) -> Status {
    let registry = &rt.registry;
    let sessions = registry.sessions().map(|s| {
        let mut status = SessionStatus::from_session(s, registry.session_deadline(s));
        status.transcript_monitor = rt.watchers.note(&s.key).map(|n| n.describe());
        status.transcript_reads = rt.watchers.reads(&s.key);
        status
    });
    let settings = registry.settings().clone();
    Status {
        sessions: sessions.collect(),
        protection: protection(registry, rt.protection),
        lid: rt.machine.lid(rt.protection.power()).await.to_string(),
        battery: registry.battery(),
        thermal_state: registry.thermal(),
        visible_displays: Some(rt.machine.displays(false)),
        external_displays: Some(rt.machine.displays(true)),
        daemon_pid: std::process::id(),
        daemon_version: env!("CARGO_PKG_VERSION").to_owned(),
        daemon_started_at: rt.life.started_at,
        cleanup: CleanupStatus {
            delay_minutes: settings.server_runtime_cleanup_delay_minutes,
            exit_at: registry.exit_at(),
        },
        store: rt.records.status(rt.places),
        settings_file: rt.places.settings_file().display().to_string(),
        settings_error: rt.life.settings_error.clone(),
        ask_before_sleep: settings.follow_up_state().to_string(),
        phone: rt.phone.status(&settings),
        settings,
        pending_suspend: registry.pending_suspend().cloned(),
        released_wake_ups: registry
            .released_wake_ups(jiff::Timestamp::now())
            .map(|(key, wakes_at)| ReleasedWakeUp {
                provider: key.provider,
                session_id: key.session_id.clone(),
                wakes_at,
            })
            .collect(),
    }
}
