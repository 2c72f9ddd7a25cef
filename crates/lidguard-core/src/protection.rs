//! What keep-awake protection the registry wants held.
//!
//! The platform layer turns a [`ProtectionPlan`] into OS locks (logind inhibitors on Linux).

use serde::{Deserialize, Serialize};

/// One thing lidguard can hold off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Inhibit {
    /// System sleep (suspend, hibernate).
    Sleep,
    /// Idle handling (automatic suspend or screen blanking after inactivity).
    Idle,
    /// The OS reaction to closing the lid.
    HandleLidSwitch,
}

impl Inhibit {
    /// The name logind uses for this lock (`sleep`, `idle`, `handle-lid-switch`).
    pub fn as_str(self) -> &'static str {
        match self {
            Inhibit::Sleep => "sleep",
            Inhibit::Idle => "idle",
            Inhibit::HandleLidSwitch => "handle-lid-switch",
        }
    }
}

/// The protection the registry wants held right now.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProtectionPlan {
    /// Keep-awake locks (sleep, idle). Empty when the settings turn them all off.
    pub keep_awake: Vec<Inhibit>,
    /// Hold the lid switch too (`changeLidAction`).
    pub lid_switch: bool,
    /// Who asks, as shown by the OS (`lidguard`).
    pub who: String,
    /// A readable summary, e.g. "2 agent sessions working".
    pub why: String,
    /// The reason the OS shows for the power request (Windows: the `power-request-reason`
    /// setting; logind shows `why`).
    #[serde(default)]
    pub reason: String,
    /// Windows: also ask for away mode (the `prevent-away-mode-sleep` setting), which lets an
    /// S3 machine enter away mode instead of sleeping.
    #[serde(default)]
    pub away_mode: bool,
    /// Let an explicit suspend by the user through: logind holds `sleep` in delay mode (it
    /// tells lidguard and waits a moment) instead of refusing the suspend. Set while the lid is
    /// not closed; idle handling and the lid switch stay blocked. Linux only: power requests
    /// and assertions never refuse a user's sleep.
    #[serde(default)]
    pub sleep_gives_way: bool,
    /// Windows: keep the display on too (the `prevent-display-sleep` setting); logind has no
    /// such lock, so Linux holds `idle` for it.
    #[serde(default)]
    pub display: bool,
}

impl ProtectionPlan {
    /// Everything this plan holds, in a stable order.
    pub fn inhibits(&self) -> Vec<Inhibit> {
        let mut all = self.keep_awake.clone();
        if self.lid_switch {
            all.push(Inhibit::HandleLidSwitch);
        }
        all
    }
}

/// The summary shown to the OS for `count` protected sessions.
pub fn why_text(count: usize) -> String {
    match count {
        1 => "1 agent session working".to_owned(),
        n => format!("{n} agent sessions working"),
    }
}

/// Protection paused by the user (the tray's "pause", `lidguard pause`): nothing is held
/// until `until`, or until resumed when it is `None`. Sessions go on being tracked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pause {
    /// When the pause began.
    pub since: jiff::Timestamp,
    /// When protection comes back by itself; `None`: only when resumed.
    pub until: Option<jiff::Timestamp>,
}
