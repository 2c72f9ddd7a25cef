//! Protection: the keep-awake backend, what it holds and for which plan, why the last attempt
//! failed, and lidguard's own suspend requests (whose sleep announcements are not a user's).

use std::sync::Arc;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use lidguard_core::clamshell::Clamshell;
use lidguard_core::protection::ProtectionPlan;
use lidguard_core::registry::LogEvent;
use lidguard_core::settings::SuspendMode;
use lidguard_core::suspend::{SuspendReason, SuspendRequest};
use lidguard_ipc::Places;
use lidguard_ipc::protocol::{ProtectionStatus, SuspendHistoryEntry};
use lidguard_platform::lid_action::PolicyBackups;
use lidguard_platform::power::{HeldProtection, Inhibit, PowerControl, PowerError};

use super::lines;
use super::outbox::Outbox;

/// How often a failed protection acquisition is retried while sessions want it.
pub(super) const PROTECTION_RETRY: Duration = Duration::from_secs(30);

/// How long after its own suspend request the OS's sleep announcement is taken as lidguard's.
const OWN_SUSPEND_WINDOW: Duration = Duration::from_secs(60);

pub(super) struct Protection {
    /// The backend, or why there is none.
    power: Result<Arc<dyn PowerControl>, String>,
    held: Option<Box<dyn HeldProtection>>,
    /// The plan `held` was acquired for.
    plan: Option<ProtectionPlan>,
    /// Why the last acquisition failed (or what it could not hold).
    error: Option<String>,
    last_attempt: Option<Instant>,
    /// When lidguard last asked the OS to suspend.
    own_suspend_at: Option<Instant>,
}

impl Protection {
    /// Connects to the OS's keep-awake backend (or keeps why there is none).
    pub(super) async fn connect(places: &Places) -> Protection {
        // Windows (the lid-close action) and macOS (SleepDisabled, hibernatemode) change OS
        // policy that needs a durable backup; Linux's locks end with the daemon.
        let backups = if cfg!(any(windows, target_os = "macos")) {
            match crate::StoreBackups::open(places) {
                Ok(backups) => Some(Arc::new(backups) as Arc<dyn PolicyBackups>),
                Err(e) => {
                    tracing::error!(error = %e, "no durable place for policy backups; the lid-close policy stays as it is");
                    None
                }
            }
        } else {
            None
        };
        let power = lidguard_platform::power::connect_keeping(backups).await;
        match &power {
            Ok(p) => tracing::info!(backend = %p.describe(), "keep-awake backend ready"),
            Err(e) => tracing::warn!(reason = %e, "keep-awake protection unavailable"),
        }
        Protection {
            power: power.map_err(|e| e.to_string()),
            held: None,
            plan: None,
            error: None,
            last_attempt: None,
            own_suspend_at: None,
        }
    }

    /// The backend, when there is one.
    pub(super) fn power(&self) -> Option<&dyn PowerControl> {
        self.power.as_ref().ok().map(|p| p.as_ref())
    }

    /// How soon a retry is due: while the plan held is not the one wanted.
    pub(super) fn retry_wait(&self, wanted: Option<&ProtectionPlan>) -> Option<Duration> {
        (self.plan.as_ref() != wanted).then_some(PROTECTION_RETRY)
    }

    /// Holds `plan` (or releases everything for `None`); what changed goes to the stream. A
    /// closed-lid hold that ends gives the lid back to the OS with the machine as `clamshell`
    /// says it is ([`PowerControl::give_back_lid`]).
    pub(super) async fn set(
        &mut self,
        plan: Option<ProtectionPlan>,
        clamshell: Clamshell,
        out: &mut Outbox,
    ) {
        let held_lid = self.holds_lid();
        self.hold_plan(plan, out).await;
        if held_lid && !self.holds_lid() {
            self.give_back_lid(clamshell, out).await;
        }
    }

    /// Whether the lid switch is held now.
    fn holds_lid(&self) -> bool {
        self.held
            .as_ref()
            .is_some_and(|h| h.inhibits().contains(&Inhibit::HandleLidSwitch))
    }

    /// The lid is the OS's again: what it would have done for a closed lid, in the stream.
    async fn give_back_lid(&self, clamshell: Clamshell, out: &mut Outbox) {
        let Ok(power) = &self.power else { return };
        match power.give_back_lid(clamshell).await {
            Ok(None) => {}
            Ok(Some(done)) => {
                tracing::info!(%done, "the lid is the OS's again");
                out.daemon("lid-given-back", None, done);
            }
            Err(e) => {
                tracing::error!(error = %e, "the lid is the OS's again, but its sleep failed");
                out.daemon("lid-given-back", None, format!("its sleep failed: {e}"));
            }
        }
    }

    async fn hold_plan(&mut self, plan: Option<ProtectionPlan>, out: &mut Outbox) {
        let Some(plan) = plan else {
            if self.held.take().is_some() {
                tracing::info!("protection released");
                out.daemon("protection-released", None, "no session is working".into());
            }
            self.plan = None;
            self.error = None;
            return;
        };
        let power = match &self.power {
            Ok(power) => Arc::clone(power),
            Err(reason) => {
                let reason = reason.clone();
                if self.error.as_ref() != Some(&reason) {
                    out.daemon("protection-failed", None, format!("unavailable: {reason}"));
                }
                self.error = Some(reason);
                return;
            }
        };
        self.last_attempt = Some(Instant::now());
        match hold(power.as_ref(), &plan).await {
            Ok((held, note)) => {
                let what: Vec<_> = held.inhibits().iter().map(|i| i.as_str()).collect();
                tracing::info!(what = %what.join(":"), why = %plan.why, "protection held");
                if let Some(note) = &note {
                    tracing::warn!("{note}");
                }
                // The new locks are in place before the old ones go: no gap. The plan recorded
                // is the one wanted, so a refused lid switch is not retried every time.
                let detail = format!("{} ({})", what.join(":"), plan.why);
                self.held = Some(held);
                self.plan = Some(plan);
                self.error = note;
                out.daemon("protection-taken", None, detail);
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot hold protection");
                if self.error.as_deref() != Some(&e.to_string()) {
                    out.daemon("protection-failed", None, e.to_string());
                }
                self.error = Some(e.to_string());
            }
        }
    }

    /// Tries again when sessions want protection that is not held (logind restarted, say).
    pub(super) async fn retry(&mut self, wanted: Option<&ProtectionPlan>, out: &mut Outbox) {
        let due = self
            .last_attempt
            .is_none_or(|t| t.elapsed() >= PROTECTION_RETRY);
        if wanted.is_some() && wanted != self.plan.as_ref() && due && self.power.is_ok() {
            self.hold_plan(wanted.cloned(), out).await;
        }
    }

    /// The OS announced a sleep (`starting`) or a wake-up. A sleep lidguard did not ask for
    /// while it held protection is an explicit suspend it let through (the `sleep` lock gives
    /// way while the lid is open): everything is released at once so the OS need not wait for
    /// it, and its history entry returned. After the wake-up, what is `wanted` is held again.
    pub(super) async fn os_sleep(
        &mut self,
        starting: bool,
        wanted: Option<&ProtectionPlan>,
        working: usize,
        out: &mut Outbox,
    ) -> Option<SuspendHistoryEntry> {
        if !starting {
            tracing::info!("the machine woke up (or did not sleep)");
            out.daemon("resumed", None, String::new());
            if wanted.is_some() && self.held.is_none() {
                self.hold_plan(wanted.cloned(), out).await;
            }
            return None;
        }
        // lidguard's own request: the OS announces it too (before answering the request).
        if self
            .own_suspend_at
            .is_some_and(|at| at.elapsed() < OWN_SUSPEND_WINDOW)
        {
            return None;
        }
        let held = self.held.take()?;
        self.plan = None;
        let gave_way = held.giving_way();
        drop(held);
        tracing::info!(
            working,
            ?gave_way,
            "a suspend lidguard did not ask for: protection released for it"
        );
        let why = "released for a suspend lidguard did not ask for";
        out.daemon("protection-released", None, why.into());
        out.log(&LogEvent {
            name: "suspend-by-user".to_owned(),
            key: None,
            detail: format!("{working} sessions working; lidguard let it through"),
        });
        Some(user_suspend(working))
    }

    /// Releases protection and asks the OS for `request`; one history entry per attempt.
    pub(super) async fn suspend(
        &mut self,
        request: &SuspendRequest,
        out: &mut Outbox,
    ) -> Vec<SuspendHistoryEntry> {
        self.own_suspend_at = Some(Instant::now());
        if self.held.take().is_some() {
            tracing::info!("protection released for the suspend request");
            out.daemon(
                "protection-released",
                None,
                "released for the suspend request".into(),
            );
        }
        self.plan = None;
        let entries = crate::suspend::request(self.power.as_ref(), request).await;
        for entry in &entries {
            out.log(&lines::suspend_attempt(entry));
        }
        entries
    }

    /// Gives everything back (the daemon stops), the lid too ([`Protection::set`]).
    pub(super) async fn release_all(&mut self, clamshell: Clamshell, out: &mut Outbox) {
        let held_lid = self.holds_lid();
        if self.held.take().is_some() {
            tracing::info!("protection released on shutdown");
        }
        self.plan = None;
        if held_lid {
            self.give_back_lid(clamshell, out).await;
        }
    }

    /// Why nothing is held, when nothing is and a reason is known (as `status` reports it,
    /// without building the whole report).
    pub(super) fn unavailable(&self) -> Option<&str> {
        if self.held.is_some() {
            return None;
        }
        match &self.power {
            Err(reason) => Some(reason),
            Ok(_) => self.error.as_deref(),
        }
    }

    /// The keep-awake protection as held now.
    pub(super) fn status(&self, wanted: bool, battery_floor: Option<String>) -> ProtectionStatus {
        let held = self.held.as_ref().map(|h| h.inhibits()).unwrap_or_default();
        let giving_way = self
            .held
            .as_ref()
            .map(|h| h.giving_way())
            .unwrap_or_default();
        let unavailable_reason = match &self.power {
            Err(reason) => Some(reason.clone()),
            Ok(_) => self.error.clone(),
        };
        ProtectionStatus {
            held: self.held.is_some(),
            inhibitors: held.iter().map(|i| i.as_str().to_owned()).collect(),
            delay_inhibitors: giving_way.iter().map(|i| i.as_str().to_owned()).collect(),
            unavailable_reason,
            wanted,
            why: self.plan.as_ref().map(|p| p.why.clone()),
            backend: self.power.as_ref().ok().map(|p| p.describe()),
            battery_floor,
            thermal_pressure: None,
            paused: None,
        }
    }
}

/// Holds `plan`, or the most of it that is allowed, with a note saying what was left out.
async fn hold(
    power: &dyn PowerControl,
    plan: &ProtectionPlan,
) -> Result<(Box<dyn HeldProtection>, Option<String>), PowerError> {
    match power.hold(plan).await {
        // Users may be allowed to block sleep but not lid handling: keeping the machine awake
        // matters more than the lid switch, so hold what is allowed and say so.
        Err(PowerError::Refused { what, message, .. })
            if plan.lid_switch && what == Inhibit::HandleLidSwitch.as_str() =>
        {
            let smaller = ProtectionPlan {
                lid_switch: false,
                ..plan.clone()
            };
            let note =
                format!("the lid-switch lock was refused ({message}); holding the rest without it");
            power.hold(&smaller).await.map(|held| (held, Some(note)))
        }
        // Allowed to block sleep but not to delay it (an older polkit rule, say): keep the
        // machine awake as before, and say that a suspend the user asks for is refused.
        Err(PowerError::Refused { what, message, .. })
            if plan.sleep_gives_way && what == Inhibit::Sleep.as_str() =>
        {
            let blocking = ProtectionPlan {
                sleep_gives_way: false,
                ..plan.clone()
            };
            let note = format!(
                "holding sleep in delay mode was refused ({message}), so it is blocked: a \
                 suspend you ask for is refused while agents work (`sudo lidguard \
                 linux-permission install` allows delay mode)"
            );
            power.hold(&blocking).await.map(|held| (held, Some(note)))
        }
        other => other.map(|held| (held, None)),
    }
}

/// The history entry of a suspend the user asked for while `working` sessions worked.
fn user_suspend(working: usize) -> SuspendHistoryEntry {
    SuspendHistoryEntry {
        recorded_at: Timestamp::now(),
        suspend_mode: SuspendMode::Sleep.name().to_owned(),
        reason: SuspendReason::UserRequested,
        succeeded: true,
        error: None,
        active_session_count: working,
        trigger_session_count: 0,
        temperature_celsius: None,
        threshold_celsius: None,
        temperature_mode: None,
    }
}
