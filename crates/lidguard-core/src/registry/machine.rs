//! The machine: lid, displays, battery and temperature as the daemon reports them, and
//! what each change means for protection and a pending suspend.

use super::*;

impl Registry {
    /// Why protection is released for the battery, or `None` when it is not: below the
    /// battery floor, or on battery at all when the user holds only on AC.
    pub fn battery_floor_reached(&self) -> Option<String> {
        if !self.settings.hold_on_battery
            && let Some(b) = self.battery.filter(|b| b.on_battery)
        {
            return Some(format!(
                "on battery at {}%: protection is held on AC only (hold-on-battery is off)",
                b.percent
            ));
        }
        let floor = self.settings.battery_floor_percent;
        let battery = self.battery.filter(|b| b.below(floor))?;
        Some(format!(
            "on battery at {}%, below the battery floor of {}%",
            battery.percent,
            floor.unwrap_or_default()
        ))
    }

    /// Logs the battery floor being reached or left (`was`: the state before the change).
    pub(super) fn battery_floor_changed(&self, was: Option<String>, fx: &mut Vec<Effect>) {
        match (was, self.battery_floor_reached()) {
            (None, Some(why)) => log(fx, "battery-floor-reached", None, &why),
            (Some(_), None) => {
                let detail = match self.battery {
                    Some(b) if !b.on_battery => format!("on AC power at {}%", b.percent),
                    _ if self.settings.battery_floor_percent.is_none() => {
                        "the battery floor was turned off".to_owned()
                    }
                    Some(b) if b.on_battery => format!("back at {}%", b.percent),
                    Some(b) => format!("on AC power at {}%", b.percent),
                    None => "no battery reading".to_owned(),
                };
                log(fx, "battery-floor-cleared", None, &detail);
            }
            _ => {}
        }
    }

    /// Logs the thermal pressure being reached or left (`was`: the state before the change).
    pub(super) fn thermal_pressure_changed(&self, was: Option<String>, fx: &mut Vec<Effect>) {
        match (was, self.thermal_pressure()) {
            (None, Some(why)) => log(fx, "thermal-pressure-reached", None, &why),
            (Some(_), None) => {
                let detail = match self.thermal {
                    _ if !self.settings.emergency_hibernation_on_high_temperature => {
                        "the temperature guard was turned off".to_owned()
                    }
                    Some(state) => format!("the thermal state is {state}"),
                    None => "no thermal reading".to_owned(),
                };
                log(fx, "thermal-pressure-cleared", None, &detail);
            }
            _ => {}
        }
    }

    /// The battery floor or the heat while lidguard holds a closed lid that means sleep: the
    /// hold ends and the machine is put to sleep, as the OS would have done for the lid (it does
    /// not look at a lid that closed while it was held). Asked once, then again after
    /// [`EMERGENCY_RETRY`] while the reason lasts and the lid stays closed; with the lid open the
    /// hold is only released (see [`crate::clamshell::verdict`]).
    pub(super) fn guard(&mut self, now: Timestamp, fx: &mut Vec<Effect>) {
        let Some(stop) = self.stop_reason() else {
            self.guard_slept_at = None;
            return;
        };
        if self.verdict() != Verdict::Sleep {
            self.guard_slept_at = None;
            return;
        }
        // The first time only when lidguard holds the lid (paused or without work, the OS has
        // had it all along); again while the machine stays awake with the reason and the lid.
        let first = self.guard_slept_at.is_none() && self.protection.is_some();
        let again = self
            .guard_slept_at
            .is_some_and(|at| now.duration_since(at) >= EMERGENCY_RETRY);
        if !(first || again) {
            return;
        }
        self.guard_slept_at = Some(now);
        self.end_pending(stop.why(), true, fx);
        let reason = match stop {
            Stop::BatteryFloor(_) => SuspendReason::BatteryFloor,
            Stop::Thermal(_) => SuspendReason::ThermalPressure,
        };
        let active = self.working_count();
        log(
            fx,
            "suspend-requested",
            None,
            &format!(
                "{} ({}): {}",
                self.settings.suspend_mode.name(),
                reason.as_str(),
                stop.why()
            ),
        );
        fx.push(Effect::Suspend(SuspendRequest {
            id: 0,
            mode: self.settings.suspend_mode,
            fallback: None,
            reason,
            active_session_count: active,
            trigger_session_count: 0,
            temperature: None,
        }));
    }

    pub(super) fn observe(&mut self, machine: Machine, fx: &mut Vec<Effect>) {
        let before = self.machine;
        self.machine = machine;
        if machine.lid != before.lid {
            log(fx, "lid-state-changed", None, &format!("{:?}", machine.lid));
        }
        if machine.lid == Lid::Open {
            self.cancel_suspend("the lid was opened", fx);
        }
    }

    /// Emergency hibernation: hot, protected, lid closed, no display — hibernate now.
    pub(super) fn temperature(
        &mut self,
        celsius: Option<i32>,
        now: Timestamp,
        fx: &mut Vec<Effect>,
    ) {
        let Some(celsius) = celsius else { return };
        if !self.temperature_watch_wanted() {
            return;
        }
        let threshold = clamped_threshold(self.settings.emergency_hibernation_temperature_celsius);
        if celsius < threshold {
            return;
        }
        if self
            .last_emergency_at
            .is_some_and(|at| now.duration_since(at) < EMERGENCY_RETRY)
        {
            return;
        }
        self.last_emergency_at = Some(now);
        self.end_pending("emergency hibernation", true, fx);
        if !self.settings.pre_suspend_webhook_url.trim().is_empty() {
            fx.push(Effect::Webhook {
                id: None,
                payload: Box::new(Payload {
                    event_type: Some(EventType::PreSuspend),
                    reason: SuspendReason::EmergencyHibernation.as_str().to_owned(),
                    user_interface_culture: self.settings.user_interface_culture.clone(),
                    ..Payload::default()
                }),
            });
        }
        let active = self.working_count();
        log(
            fx,
            "emergency-hibernation-requested",
            None,
            &format!("{celsius} °C >= {threshold} °C"),
        );
        fx.push(Effect::Suspend(SuspendRequest {
            id: 0,
            mode: SuspendMode::Hibernate,
            fallback: Some(SuspendMode::Sleep),
            reason: SuspendReason::EmergencyHibernation,
            active_session_count: active,
            trigger_session_count: 0,
            temperature: Some(TemperatureReading {
                celsius,
                threshold_celsius: threshold,
                mode: self.settings.emergency_hibernation_temperature_mode,
            }),
        }));
    }
}
