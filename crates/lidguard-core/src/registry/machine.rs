//! The machine: lid, displays, battery and temperature as the daemon reports them, and
//! what each change means for protection and a pending suspend.

use super::*;

impl Registry {
    /// Logs the battery floor being reached or left (`was`: the state before the change).
    pub(super) fn battery_floor_changed(&self, was: Option<String>, fx: &mut Vec<Effect>) {
        match (was, self.battery_floor_reached()) {
            (None, Some(why)) => log(fx, "battery-floor-reached", None, &why),
            (Some(_), None) => {
                let detail = match self.battery {
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
        let active = self
            .sessions
            .values()
            .filter(|s| s.needs_protection())
            .count();
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
