//! The machine as the daemon sees it: where the lid, displays, battery and temperatures are
//! read, the signals that they changed, and when the emergency guard last read the temperature.

use std::time::{Duration, Instant};

use lidguard_core::clamshell::ThermalState;
use lidguard_core::event::{AgentEvent, Lid};
use lidguard_core::settings::TemperatureMode;
use lidguard_core::suspend::{Battery, Machine, TEMPERATURE_INTERVAL};
use lidguard_platform::power::PowerControl;
use lidguard_platform::sources::{self, Roots};

use crate::machine_watch::MachineWatch;

pub(super) struct MachineView {
    /// Where the lid, displays and temperatures are read (overridable for tests and debugging;
    /// processes are always read from the real `/proc`).
    roots: Roots,
    /// The signals that the lid or the displays changed.
    pub(super) watch: MachineWatch,
    /// When the emergency guard last read the temperature.
    last_temperature: Option<Instant>,
}

impl MachineView {
    pub(super) fn new(roots: Roots, watch: MachineWatch) -> MachineView {
        MachineView {
            roots,
            watch,
            last_temperature: None,
        }
    }

    /// The lid, through the backend (logind) when it answers, else from the files.
    pub(super) async fn lid(&self, power: Option<&dyn PowerControl>) -> Lid {
        match power {
            Some(power) => sources::lid_state_using(power, &self.roots).await,
            None => sources::lid_state_from_files(&self.roots),
        }
    }

    /// The lid and the external display count, from the same sources the suspend decision
    /// uses: internal panels never count, so a closed laptop's own panel does not hide the lid.
    pub(super) async fn closed_lid_state(&self, power: Option<&dyn PowerControl>) -> Machine {
        Machine {
            lid: self.lid(power).await,
            external_displays: Some(self.displays(true)),
        }
    }

    /// The lid and displays for `event`: read only when a decision may depend on them.
    pub(super) async fn for_event(
        &self,
        event: &AgentEvent,
        power: Option<&dyn PowerControl>,
    ) -> Machine {
        match event.kind.wants_decision() {
            true => self.closed_lid_state(power).await,
            false => Machine {
                lid: Lid::Unknown,
                external_displays: None,
            },
        }
    }

    /// The displays that show something (`external`: only those that are not the laptop's).
    pub(super) fn displays(&self, external: bool) -> u32 {
        sources::visible_displays(&self.roots, external)
    }

    pub(super) fn battery(&self) -> Option<Battery> {
        sources::battery(&self.roots)
    }

    /// The thermal state (macOS's `NSProcessInfo.thermalState`; none elsewhere).
    pub(super) fn thermal_state(&self) -> Option<ThermalState> {
        lidguard_platform::thermal_state::thermal_state(&self.roots)
    }

    /// The temperature for the emergency guard, at most every [`TEMPERATURE_INTERVAL`]
    /// (`None` inside: not due).
    pub(super) async fn temperature(&mut self, mode: TemperatureMode) -> Option<Option<i32>> {
        let interval = Duration::try_from(TEMPERATURE_INTERVAL).unwrap_or(Duration::from_secs(10));
        if self
            .last_temperature
            .is_some_and(|t| t.elapsed() < interval)
        {
            return None;
        }
        self.last_temperature = Some(Instant::now());
        // Off the event loop: on Windows this is a WMI query.
        let roots = self.roots.clone();
        let celsius = tokio::task::spawn_blocking(move || sources::temperature(&roots, mode))
            .await
            .unwrap_or(None);
        tracing::debug!(?celsius, "temperature read");
        Some(celsius)
    }
}
