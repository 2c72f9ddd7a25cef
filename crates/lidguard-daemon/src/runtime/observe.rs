//! Looking at the machine: when the lid, displays, battery, thermal state and temperature are
//! read, and what the registry hears of them.

use lidguard_core::event::Lid;
use lidguard_core::registry::Input;

use super::{Runtime, lines};

impl Runtime {
    /// Whether the lid and displays are worth watching: sessions exist or a suspend waits.
    pub(super) fn watching_machine(&self) -> bool {
        self.registry.sessions().next().is_some() || self.registry.pending_suspend().is_some()
    }

    /// Reads the lid, displays, battery and thermal state and tells the registry when they
    /// changed.
    pub(super) async fn observe_machine(&mut self) {
        let battery = self.machine.battery();
        if battery != self.registry.battery() {
            self.apply(Input::Battery(battery)).await;
        }
        self.read_thermal_state().await;
        let machine = self.machine.closed_lid_state(self.protection.power()).await;
        let before = self.registry.machine();
        if machine == before {
            return;
        }
        if let Some(line) = lines::displays_changed(before, machine) {
            self.publisher.publish(line, &mut self.records);
        }
        self.apply(Input::Machine(machine)).await;
        // Someone is at the machine again: permission prompts waiting for the phone go back to
        // the agent's own prompt.
        if machine.lid != Lid::Closed || machine.external_displays != Some(0) {
            let mut out = self.outbox();
            self.phone
                .back_at_the_machine(self.registry.settings(), &mut out);
            self.drain(out).await;
        }
    }

    /// The thermal state (macOS), when it changed.
    async fn read_thermal_state(&mut self) {
        let thermal = self.machine.thermal_state();
        if thermal != self.registry.thermal() {
            self.apply(Input::Thermal(thermal)).await;
        }
    }

    /// Temperature guard: every [`TEMPERATURE_INTERVAL`] while it is armed, the thermal state
    /// while protection is held (or released for the heat), the temperature while a closed lid
    /// is held.
    pub(super) async fn read_temperature(&mut self) {
        if self.registry.thermal_watch_wanted() {
            self.read_thermal_state().await;
        }
        if !self.registry.temperature_watch_wanted() {
            return;
        }
        let mode = self
            .registry
            .settings()
            .emergency_hibernation_temperature_mode;
        if let Some(celsius) = self.machine.temperature(mode).await {
            self.apply(Input::Temperature { celsius }).await;
        }
    }
}
