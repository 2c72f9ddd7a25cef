//! The user's settings: fields, defaults, validation, CLI text and (de)serialization.
//!
//! Field names and defaults follow the reference system (LidGuard), written consistently in
//! camelCase. Platform-only fields are `Option`s that are `None` (and so not serialized) on
//! other operating systems; see [`Settings::normalize`].
//!
//! - [`FIELDS`] is the one table of settable fields: CLI flag, aliases, JSON key, help, category
//!   and value kind. [`Settings::set_field`], [`Settings::get_field`], [`Settings::validate`]
//!   and [`Settings::rows`] all go through it.
//! - [`Settings::from_json`] and [`Settings::to_json_pretty`] read and write the settings file
//!   as text; the shell does the file I/O.
//! - [`Settings::follow_up_state`] derives the ask-before-sleep feature state and
//!   [`Settings::managed_hook_timeout_seconds`] the timeout written into managed hooks.

use std::fmt::{self, Display};

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};

mod access;
mod check;
mod error;
mod fields;
mod follow_up;
mod ntfy;
mod os;
mod table;
#[cfg(test)]
mod tests;
mod value;

pub use check::DEFAULT_POWER_REQUEST_REASON;
pub use error::SettingsError;
pub use follow_up::{
    DEFAULT_HOOK_TIMEOUT_SECONDS, FollowUpIssue, FollowUpState, MAXIMUM_REPLY_EXTENSION_SECONDS,
    MINIMUM_POST_STOP_SUSPEND_DELAY_SECONDS, MINIMUM_REPLY_WAIT_SECONDS,
    REMOTE_HOOK_MARGIN_SECONDS,
};
pub use ntfy::NtfyTopic;
pub use os::Os;

pub use fields::{
    Category, FieldKind, FieldSpec, MAX_DELAY_SECONDS, MAX_EMERGENCY_TEMPERATURE_CELSIUS,
    MAX_MINUTES, MAX_POWER_REQUEST_REASON_CHARS, MAX_REMOTE_DECISION_SECONDS,
    MIN_EMERGENCY_TEMPERATURE_CELSIUS, MIN_REMOTE_DECISION_SECONDS,
};
pub use table::{FIELDS, fields_for, find_field};
pub use value::{SoundSetting, SystemSound, parse_bool, parse_webhook_url};

/// How the machine is put to sleep when agents are done and the lid is closed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub enum SuspendMode {
    /// Suspend to RAM.
    #[default]
    Sleep,
    /// Suspend to disk.
    Hibernate,
}

/// The answer to permission requests while the lid is closed and no display is visible.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub enum ClosedLidPermissionRequestDecision {
    /// Deny the request so the agent moves on.
    #[default]
    Deny,
    /// Allow the request.
    Allow,
    /// Leave the agent's own prompt up and mark the session as waiting for the user.
    Ask,
    /// Ask the user's phone through ntfy, wait for the answer, else the fallback.
    Remote,
}

/// What a remote permission request gets when the phone does not answer in time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub enum RemoteDecisionFallback {
    /// Deny it, so the agent moves on.
    #[default]
    Deny,
    /// Leave the agent's own prompt up, as the `ask` policy does.
    Ask,
}

/// How thermal zones are aggregated for emergency hibernation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub enum TemperatureMode {
    /// The lowest zone.
    Low,
    /// The mean of all zones.
    #[default]
    Average,
    /// The hottest zone.
    High,
}

/// Adds the CLI spelling, case-insensitive lookup and a case-insensitive `Deserialize` (the
/// file stores the variant name, e.g. `"Sleep"`, as the reference system does).
macro_rules! choice_enum {
    ($ty:ident { $($variant:ident => $cli:literal),+ $(,)? }, unknown: $unknown:expr) => {
        impl $ty {
            /// All values, in order.
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];

            /// The lowercase CLI spelling.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $cli),+
                }
            }

            /// The variant's name as the settings file and the reference system spell it,
            /// e.g. `Sleep`.
            pub const fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => stringify!($variant)),+
                }
            }

            /// Looks a value up by name, ignoring ASCII case and surrounding whitespace.
            pub fn from_name(name: &str) -> Option<$ty> {
                let name = name.trim();
                $ty::ALL.iter().copied().find(|v| v.as_str().eq_ignore_ascii_case(name))
            }
        }

        impl Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<$ty, D::Error> {
                let text = String::deserialize(deserializer)?;
                let unknown: Option<$ty> = $unknown;
                $ty::from_name(&text).or(unknown).ok_or_else(|| {
                    let names: Vec<&str> = $ty::ALL.iter().map(|v| v.as_str()).collect();
                    D::Error::custom(format_args!(
                        "unknown value {text:?}, expected one of {}",
                        names.join(", ")
                    ))
                })
            }
        }
    };
}

choice_enum!(SuspendMode { Sleep => "sleep", Hibernate => "hibernate" }, unknown: None);
choice_enum!(
    ClosedLidPermissionRequestDecision {
        Deny => "deny", Allow => "allow", Ask => "ask", Remote => "remote"
    },
    unknown: None
);
choice_enum!(RemoteDecisionFallback { Deny => "deny", Ask => "ask" }, unknown: None);
// The reference system reads an unknown temperature mode as `Average`.
choice_enum!(
    TemperatureMode { Low => "low", Average => "average", High => "high" },
    unknown: Some(TemperatureMode::Average)
);

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

/// The inactivity timeout when the settings file sets none (`sessionTimeoutMinutes`).
pub const DEFAULT_SESSION_TIMEOUT_MINUTES: u32 = 12;

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
    /// On battery below this charge (percent), protection is released; `None` = never.
    pub battery_floor_percent: Option<u8>,
    /// Hold on battery too; `false` holds only on AC (on battery, protection is released as at
    /// the battery floor, and taken again on AC).
    pub hold_on_battery: bool,
    /// Webhook called before suspending; empty = off.
    pub pre_suspend_webhook_url: String,
    /// Webhook called after a session ends normally; empty = off.
    pub post_session_end_webhook_url: String,
    /// Ask-before-sleep webhook; empty = off.
    pub closed_lid_stop_follow_up_webhook_url: String,
    /// Signs webhook requests (HMAC-SHA256); empty = unsigned.
    pub webhook_secret: String,
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
    /// The ntfy server and topic for phone notifications; empty = off.
    pub ntfy_url: String,
    /// Bearer token for a protected ntfy topic; empty = none.
    pub ntfy_token: String,
    /// Ask before sleep through ntfy too.
    pub ntfy_ask_before_sleep: bool,
    /// Notify when a session waits for the user.
    pub ntfy_needs_you: bool,
    /// Notify when such a session works again.
    pub ntfy_resumed: bool,
    /// How long a `remote` permission request waits for the phone.
    pub remote_decision_timeout_seconds: u32,
    /// What it gets when no answer comes in time.
    pub remote_decision_fallback: RemoteDecisionFallback,
    /// A desktop notification when protection is wanted and cannot be held.
    pub notify_protection_failed: bool,
    /// A desktop notification when a closed-lid suspend is scheduled while sessions still wait.
    pub notify_suspend_scheduled: bool,
    /// A desktop notification when an agent waits for the user with the lid open.
    pub notify_waiting_for_you: bool,
    /// A desktop notification when the battery floor releases protection.
    pub notify_battery_floor: bool,
    /// A desktop notification when a serious thermal state releases protection.
    pub notify_thermal_pressure: bool,
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
            battery_floor_percent: Some(10),
            hold_on_battery: true,
            pre_suspend_webhook_url: String::new(),
            post_session_end_webhook_url: String::new(),
            closed_lid_stop_follow_up_webhook_url: String::new(),
            webhook_secret: String::new(),
            closed_lid_stop_follow_up_delay_seconds: 180,
            repeat_closed_lid_stop_follow_up: true,
            closed_lid_permission_request_decision: ClosedLidPermissionRequestDecision::Deny,
            watch_parent_process: true,
            session_timeout_minutes: Some(DEFAULT_SESSION_TIMEOUT_MINUTES),
            server_runtime_cleanup_delay_minutes: Some(10),
            emergency_hibernation_on_high_temperature: true,
            emergency_hibernation_temperature_mode: TemperatureMode::Average,
            emergency_hibernation_temperature_celsius: 93,
            user_interface_culture: "auto".to_owned(),
            skip_suspend_when_lid_close_does_nothing: None,
            ntfy_url: String::new(),
            ntfy_token: String::new(),
            ntfy_ask_before_sleep: false,
            ntfy_needs_you: true,
            ntfy_resumed: true,
            remote_decision_timeout_seconds: 60,
            remote_decision_fallback: RemoteDecisionFallback::Deny,
            notify_protection_failed: true,
            notify_suspend_scheduled: true,
            notify_waiting_for_you: true,
            notify_battery_floor: true,
            notify_thermal_pressure: true,
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

    /// Brings values read from a file into their canonical form, the way the reference system
    /// does on every load and save:
    ///
    /// - hides platform-only fields on other OSes and fills them in on their own OS;
    /// - trims text; a blank power-request reason becomes the default, a blank culture `auto`;
    /// - sounds: `off` becomes `""` and system sound names get their canonical capitalization;
    /// - a suspend-history count of 0 is raised to 1;
    /// - clamps the emergency-hibernation threshold to 70..=110 °C.
    ///
    /// Values that are still invalid afterwards (a volume of 0, a malformed URL…) are left for
    /// [`Settings::validate`] to report.
    pub fn normalize(&mut self, os: Os) {
        if os == Os::Windows {
            self.power_request
                .prevent_away_mode_sleep
                .get_or_insert(true);
            self.skip_suspend_when_lid_close_does_nothing
                .get_or_insert(true);
        } else {
            self.power_request.prevent_away_mode_sleep = None;
            self.skip_suspend_when_lid_close_does_nothing = None;
        }
        trim_in_place(&mut self.power_request.reason);
        if self.power_request.reason.is_empty() {
            self.power_request.reason = DEFAULT_POWER_REQUEST_REASON.to_owned();
        }
        for sound in [
            &mut self.post_stop_suspend_sound,
            &mut self.closed_lid_stop_follow_up_sound,
        ] {
            trim_in_place(sound);
            if let Some(parsed) = SoundSetting::parse(sound) {
                *sound = parsed.stored().to_owned();
            }
        }
        for url in [
            &mut self.pre_suspend_webhook_url,
            &mut self.post_session_end_webhook_url,
            &mut self.closed_lid_stop_follow_up_webhook_url,
        ] {
            trim_in_place(url);
        }
        if let Some(count) = &mut self.suspend_history_entry_count {
            *count = (*count).max(1);
        }
        trim_in_place(&mut self.user_interface_culture);
        if self.user_interface_culture.is_empty() {
            self.user_interface_culture = "auto".to_owned();
        } else if let Some(culture) = value::canonical_culture(&self.user_interface_culture) {
            self.user_interface_culture = culture;
        }
        self.emergency_hibernation_temperature_celsius =
            self.emergency_hibernation_temperature_celsius.clamp(
                MIN_EMERGENCY_TEMPERATURE_CELSIUS,
                MAX_EMERGENCY_TEMPERATURE_CELSIUS,
            );
    }
}

fn trim_in_place(text: &mut String) {
    let trimmed = text.trim();
    if trimmed.len() != text.len() {
        *text = trimmed.to_owned();
    }
}

// ---------------------------------------------------------------------------------------------
// Display rows
// ---------------------------------------------------------------------------------------------

/// One line of the printed settings table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingRow {
    /// The group the field belongs to.
    pub category: Category,
    /// The CLI flag without `--`.
    pub flag: &'static str,
    /// The JSON key path.
    pub json_key: &'static str,
    /// The current value as the user would type it (see [`Settings::get_field`]).
    pub value: String,
}

// ---------------------------------------------------------------------------------------------
// Settings operations
// ---------------------------------------------------------------------------------------------

impl Settings {
    /// Checks every field that exists on `os` and reports every problem: each error names the
    /// field by its flag and JSON key and says what is accepted. Platform-only fields that are
    /// set on another OS are reported too. Does not normalize; call [`Settings::normalize`]
    /// first for values read from a file.
    ///
    /// An ask-before-sleep reply wait of 1..=19 s is *not* an error here: it is saved and shows
    /// up as [`FollowUpState::ConfigurationError`].
    pub fn validate(&self, os: Os) -> Result<(), Vec<SettingsError>> {
        let problems: Vec<SettingsError> = FIELDS
            .iter()
            .filter_map(|spec| {
                if spec.applies_to(os) {
                    self.check_field(spec).err()
                } else if self.value_stored(spec) {
                    Some(SettingsError::not_on(spec, os))
                } else {
                    None
                }
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }

    /// The fields on `os` whose value differs between `self` and `other`, in display order.
    pub fn changed_fields(&self, other: &Settings, os: Os) -> Vec<&'static FieldSpec> {
        fields_for(os)
            .filter(|spec| self.get_field(spec.flag) != other.get_field(spec.flag))
            .collect()
    }

    /// The defaults for `os`, except that every [`FieldSpec::user_only`] field keeps its value
    /// from `self`: what a model may reset without raising its own authority.
    pub fn defaults_keeping_user_only(&self, os: Os) -> Settings {
        let mut reset = Settings::defaults_for(os);
        for spec in fields_for(os).filter(|spec| spec.user_only()) {
            if let Some(value) = self.get_field(spec.flag) {
                // get_field's output always reads back unchanged.
                let _ = reset.set_field(spec.flag, &value, os);
            }
        }
        reset
    }

    /// Every field that exists on `os` with its current value, in display order (grouped by
    /// category), for printing.
    pub fn rows(&self, os: Os) -> Vec<SettingRow> {
        fields_for(os)
            .map(|spec| SettingRow {
                category: spec.category,
                flag: spec.flag,
                json_key: spec.json_key,
                value: self.get_field(spec.flag).unwrap_or_default(),
            })
            .collect()
    }

    /// The ask-before-sleep state (README, Ask before sleep: when it asks): `Off` without a URL; otherwise
    /// `ConfigurationError` listing every issue; otherwise `Off` when the reply wait is 0;
    /// otherwise `On`.
    pub fn follow_up_state(&self) -> FollowUpState {
        let url = self.closed_lid_stop_follow_up_webhook_url.trim();
        if url.is_empty() && self.ntfy_follow_up().is_none() {
            return FollowUpState::Off;
        }
        let delay = self.closed_lid_stop_follow_up_delay_seconds;
        let mut issues = Vec::new();
        if !url.is_empty() && parse_webhook_url(url).is_none() {
            issues.push(FollowUpIssue::InvalidWebhookUrl);
        }
        if (1..MINIMUM_REPLY_WAIT_SECONDS).contains(&delay) {
            issues.push(FollowUpIssue::ReplyWaitTooShort);
        }
        if delay > 0
            && self.post_stop_suspend_delay_seconds < MINIMUM_POST_STOP_SUSPEND_DELAY_SECONDS
        {
            issues.push(FollowUpIssue::PostStopDelayTooShort);
        }
        if !issues.is_empty() {
            FollowUpState::ConfigurationError(issues)
        } else if delay == 0 {
            FollowUpState::Off
        } else {
            FollowUpState::On
        }
    }

    /// What a change from `before` to `self` would save but have ignored: ask before sleep made
    /// ineffective by a value out of its range or by another setting. Writers (`settings`, the
    /// MCP tool) refuse such a change and say what is allowed; a file that already holds such
    /// values still loads, and `settings` shows the problem.
    pub fn ignored_after_change(&self, before: &Settings) -> Vec<String> {
        let mut problems = Vec::new();
        let delay = self.closed_lid_stop_follow_up_delay_seconds;
        if delay != before.closed_lid_stop_follow_up_delay_seconds
            && (1..MINIMUM_REPLY_WAIT_SECONDS).contains(&delay)
        {
            problems.push(format!(
                "invalid value \"{delay}\" for `--closed-lid-stop-follow-up-delay-seconds`: expected \
                 0 (do not ask) or {MINIMUM_REPLY_WAIT_SECONDS} to {} seconds; a shorter wait would \
                 turn ask before sleep off",
                fields::MAX_DELAY_SECONDS
            ));
        }
        let issues = |s: &Settings| match s.follow_up_state() {
            FollowUpState::ConfigurationError(issues) => issues,
            _ => Vec::new(),
        };
        let had = issues(before);
        for issue in issues(self) {
            if !had.contains(&issue) && issue != FollowUpIssue::ReplyWaitTooShort {
                problems.push(format!(
                    "{}: ask before sleep would be off with these values (set both in one command)",
                    issue.description()
                ));
            }
        }
        problems
    }

    /// The ask-before-sleep webhook URL when the feature is [`FollowUpState::On`].
    pub fn follow_up_webhook_url(&self) -> Option<url::Url> {
        match self.follow_up_state() {
            FollowUpState::On => parse_webhook_url(&self.closed_lid_stop_follow_up_webhook_url),
            _ => None,
        }
    }

    /// The settings as JSON for showing — to the user or to a model: every secret
    /// (`webhookSecret`, `ntfyToken`) only as `(set)` when set, and the ntfy topic (on a public
    /// server its name is the password) hidden in `ntfyUrl`. Only the file keeps them.
    pub fn redacted_json(&self) -> serde_json::Value {
        let mut json = serde_json::to_value(self).unwrap_or_default();
        for spec in FIELDS {
            let secret = matches!(spec.kind, FieldKind::Secret { .. } | FieldKind::NtfyUrl);
            if secret
                && let Some(value) = json.get_mut(spec.json_key)
                && value.as_str().is_some_and(|v| !v.is_empty())
            {
                *value = self.shown_value(spec).into();
            }
        }
        json
    }

    /// A field's value as it may be shown: secrets as `(set)`, the ntfy topic hidden.
    pub fn shown_value(&self, spec: &FieldSpec) -> String {
        let value = self.get_field(spec.flag).unwrap_or_default();
        match spec.kind {
            FieldKind::Secret { .. } if value != "off" => "(set)".to_owned(),
            FieldKind::NtfyUrl => match self.ntfy() {
                Some(topic) => format!("{}/{}", topic.server, NtfyTopic::HIDDEN),
                None => value,
            },
            _ => value,
        }
    }

    /// The ntfy topic, when one is set.
    pub fn ntfy(&self) -> Option<NtfyTopic> {
        NtfyTopic::parse(&self.ntfy_url)
    }

    /// The ntfy topic when ask before sleep goes through it too.
    pub fn ntfy_follow_up(&self) -> Option<NtfyTopic> {
        self.ntfy().filter(|_| self.ntfy_ask_before_sleep)
    }

    /// How long a `remote` permission request waits for the phone, when that policy is on.
    pub fn remote_decision_wait(&self) -> Option<u32> {
        (self.closed_lid_permission_request_decision == ClosedLidPermissionRequestDecision::Remote)
            .then_some(self.remote_decision_timeout_seconds)
    }

    /// The timeout, in seconds, written into managed provider hooks: 30 unless ask-before-sleep
    /// is on, else `max(30, post-stop delay + reply wait + 300)` so a blocked stop hook outlives
    /// the longest reply window (defaults with a URL set: 10 + 180 + 300 = 490).
    pub fn managed_hook_timeout_seconds(&self) -> u32 {
        // A permission hook waiting for the phone must outlive its wait, with room to answer.
        let remote = self
            .remote_decision_wait()
            .map_or(0, |wait| wait.saturating_add(REMOTE_HOOK_MARGIN_SECONDS));
        if self.follow_up_state() != FollowUpState::On {
            return DEFAULT_HOOK_TIMEOUT_SECONDS.max(remote);
        }
        self.post_stop_suspend_delay_seconds
            .saturating_add(self.closed_lid_stop_follow_up_delay_seconds)
            .saturating_add(MAXIMUM_REPLY_EXTENSION_SECONDS)
            .max(DEFAULT_HOOK_TIMEOUT_SECONDS)
            .max(remote)
    }

    /// Reads settings from the text of a settings file: unknown keys are ignored, missing keys
    /// take their defaults, enum names are case-insensitive; then the result is normalized for
    /// `os` (see [`Settings::normalize`]) and validated. A syntax or type error is a
    /// [`SettingsError::Parse`] with line and column; invalid values are one
    /// [`SettingsError::Invalid`] listing them all.
    pub fn from_json(text: &str, os: Os) -> Result<Settings, SettingsError> {
        // Editors on some systems save a byte-order mark; it is not part of the JSON.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        // serde would also accept an array for a struct; the file must be an object.
        if !text.trim_start().is_empty() && !text.trim_start().starts_with('{') {
            return Err(SettingsError::Parse {
                line: 1,
                column: 1,
                message: "expected a JSON object".to_owned(),
            });
        }
        let mut de = serde_json::Deserializer::from_str(text);
        let mut settings: Settings = serde_path_to_error::deserialize(&mut de)
            .map_err(|e| SettingsError::from_json_error(&e))?;
        de.end().map_err(|e| SettingsError::Parse {
            line: e.line().max(1),
            column: e.column().max(1),
            message: "trailing characters after the settings object".to_owned(),
        })?;
        settings.normalize(os);
        settings
            .validate(os)
            .map_err(|problems| SettingsError::Invalid { problems })?;
        Ok(settings)
    }

    /// The settings file text: camelCase keys in declaration order, two-space indentation and
    /// a trailing newline. Platform-only fields that are `None` are left out.
    pub fn to_json_pretty(&self) -> String {
        // Settings holds only strings, numbers, booleans, options and unit enums.
        let mut text = serde_json::to_string_pretty(self).expect("settings always serialize");
        text.push('\n');
        text
    }
}
