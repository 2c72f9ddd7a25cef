//! The user's settings: fields, defaults and (de)serialization.
//!
//! Field names and defaults follow the reference system (LidGuard), written consistently in
//! camelCase. Platform-only fields are `Option`s that are `None` (and so not serialized) on
//! other operating systems; see [`Settings::normalize`].

use serde::{Deserialize, Serialize};

/// The operating system the settings are interpreted for. Passed in, never detected here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Os {
    /// Linux.
    Linux,
    /// macOS.
    MacOs,
    /// Windows.
    Windows,
}

impl Os {
    /// The OS this binary was built for.
    pub const fn current() -> Os {
        if cfg!(target_os = "windows") {
            Os::Windows
        } else if cfg!(target_os = "macos") {
            Os::MacOs
        } else {
            Os::Linux
        }
    }
}

/// How the machine is put to sleep when agents are done and the lid is closed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum SuspendMode {
    /// Suspend to RAM.
    #[default]
    Sleep,
    /// Suspend to disk.
    Hibernate,
}

/// The answer to permission requests while the lid is closed and no display is visible.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClosedLidPermissionRequestDecision {
    /// Deny the request so the agent moves on.
    #[default]
    Deny,
    /// Allow the request.
    Allow,
    /// Leave the agent's own prompt up and mark the session as waiting for the user.
    Ask,
}

/// How thermal zones are aggregated for emergency hibernation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TemperatureMode {
    /// The lowest zone.
    Low,
    /// The mean of all zones.
    #[default]
    Average,
    /// The hottest zone.
    High,
}

/// OS keep-awake requests.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PowerRequest {
    /// Block system sleep while protected.
    pub prevent_system_sleep: bool,
    /// Windows only: block away-mode sleep.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prevent_away_mode_sleep: Option<bool>,
    /// Keep the display on too.
    pub prevent_display_sleep: bool,
    /// The reason shown by the OS for lidguard's power request.
    pub reason: String,
}

/// The default power-request reason.
pub const DEFAULT_POWER_REQUEST_REASON: &str =
    "lidguard is keeping the system awake while an agent session is running.";

impl Default for PowerRequest {
    fn default() -> Self {
        PowerRequest {
            prevent_system_sleep: true,
            prevent_away_mode_sleep: None,
            prevent_display_sleep: false,
            reason: DEFAULT_POWER_REQUEST_REASON.to_owned(),
        }
    }
}

/// All settings. Unknown keys in the file are ignored; missing keys take their defaults.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Settings {
    /// OS keep-awake requests.
    pub power_request: PowerRequest,
    /// Also hold the lid switch (Linux: `handle-lid-switch` inhibitor) while protected.
    pub change_lid_action: bool,
    /// Sleep or hibernate when done with the lid closed.
    pub suspend_mode: SuspendMode,
    /// Seconds between protection ending and the suspend request (0 = immediately).
    pub post_stop_suspend_delay_seconds: u32,
    /// Sound played before suspending: empty (off), a system sound name or a `.wav` path.
    pub post_stop_suspend_sound: String,
    /// Temporary volume for that sound, 1..=100, or `None` to leave the volume alone.
    pub post_stop_suspend_sound_volume_override_percent: Option<u8>,
    /// Sound played when asking before sleep.
    pub closed_lid_stop_follow_up_sound: String,
    /// Temporary volume for that sound.
    pub closed_lid_stop_follow_up_sound_volume_override_percent: Option<u8>,
    /// How many suspend-history entries to keep; `None` = do not record.
    pub suspend_history_entry_count: Option<u32>,
    /// Webhook called before suspending; empty = off.
    pub pre_suspend_webhook_url: String,
    /// Webhook called after a session ends normally; empty = off.
    pub post_session_end_webhook_url: String,
    /// Ask-before-sleep webhook; empty = off.
    pub closed_lid_stop_follow_up_webhook_url: String,
    /// How long to wait for a reply before sleeping (0 = do not wait).
    pub closed_lid_stop_follow_up_delay_seconds: u32,
    /// Ask again when continued work tries to finish.
    pub repeat_closed_lid_stop_follow_up: bool,
    /// What to answer to permission requests while the lid is closed.
    pub closed_lid_permission_request_decision: ClosedLidPermissionRequestDecision,
    /// Watch the agent's process and end its session when it exits.
    pub watch_parent_process: bool,
    /// Minutes without activity before a session counts as waiting; `None` = never.
    pub session_timeout_minutes: Option<u32>,
    /// Minutes the daemon stays after the last session; `None` = forever, 0 = exit at once.
    pub server_runtime_cleanup_delay_minutes: Option<u32>,
    /// Hibernate at once when hot with the lid closed.
    pub emergency_hibernation_on_high_temperature: bool,
    /// How thermal zones are aggregated.
    pub emergency_hibernation_temperature_mode: TemperatureMode,
    /// Threshold in °C, clamped to 70..=110.
    pub emergency_hibernation_temperature_celsius: i32,
    /// UI language: `auto`, `en`, `ko` or a BCP 47 tag.
    pub user_interface_culture: String,
    /// Windows only: skip suspending when the user's lid-close action is "do nothing".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip_suspend_when_lid_close_does_nothing: Option<bool>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            power_request: PowerRequest::default(),
            change_lid_action: true,
            suspend_mode: SuspendMode::Sleep,
            post_stop_suspend_delay_seconds: 10,
            post_stop_suspend_sound: String::new(),
            post_stop_suspend_sound_volume_override_percent: None,
            closed_lid_stop_follow_up_sound: String::new(),
            closed_lid_stop_follow_up_sound_volume_override_percent: None,
            suspend_history_entry_count: Some(10),
            pre_suspend_webhook_url: String::new(),
            post_session_end_webhook_url: String::new(),
            closed_lid_stop_follow_up_webhook_url: String::new(),
            closed_lid_stop_follow_up_delay_seconds: 180,
            repeat_closed_lid_stop_follow_up: true,
            closed_lid_permission_request_decision: ClosedLidPermissionRequestDecision::Deny,
            watch_parent_process: true,
            session_timeout_minutes: Some(12),
            server_runtime_cleanup_delay_minutes: Some(10),
            emergency_hibernation_on_high_temperature: true,
            emergency_hibernation_temperature_mode: TemperatureMode::Average,
            emergency_hibernation_temperature_celsius: 93,
            user_interface_culture: "auto".to_owned(),
            skip_suspend_when_lid_close_does_nothing: None,
        }
    }
}

impl Settings {
    /// The defaults for `os`, already normalized.
    pub fn defaults_for(os: Os) -> Settings {
        let mut s = Settings::default();
        s.normalize(os);
        s
    }

    /// Hides platform-only fields on other OSes and fills them in on their own OS, and clamps
    /// the emergency-hibernation threshold.
    pub fn normalize(&mut self, os: Os) {
        if os == Os::Windows {
            self.power_request.prevent_away_mode_sleep.get_or_insert(true);
            self.skip_suspend_when_lid_close_does_nothing.get_or_insert(true);
        } else {
            self.power_request.prevent_away_mode_sleep = None;
            self.skip_suspend_when_lid_close_does_nothing = None;
        }
        if self.power_request.reason.trim().is_empty() {
            self.power_request.reason = DEFAULT_POWER_REQUEST_REASON.to_owned();
        }
        self.emergency_hibernation_temperature_celsius =
            self.emergency_hibernation_temperature_celsius.clamp(70, 110);
    }
}
