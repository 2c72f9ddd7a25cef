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

mod fields;
#[cfg(test)]
mod tests;
mod value;

pub use fields::{
    Category, FIELDS, Field, FieldKind, FieldSpec, MAX_DELAY_SECONDS,
    MAX_EMERGENCY_TEMPERATURE_CELSIUS, MAX_MINUTES, MAX_POWER_REQUEST_REASON_CHARS,
    MAX_REMOTE_DECISION_SECONDS, MIN_EMERGENCY_TEMPERATURE_CELSIUS, MIN_REMOTE_DECISION_SECONDS,
    fields_for, find_field,
};
pub use value::{SoundSetting, SystemSound, parse_bool, parse_webhook_url};

/// The operating system the settings are interpreted for. Passed in, never detected here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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

    /// The usual spelling: `Linux`, `macOS` or `Windows`.
    pub const fn name(self) -> &'static str {
        match self {
            Os::Linux => "Linux",
            Os::MacOs => "macOS",
            Os::Windows => "Windows",
        }
    }
}

impl Display for Os {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

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
    /// On battery below this charge (percent), protection is released; `None` = never.
    pub battery_floor_percent: Option<u8>,
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
            pre_suspend_webhook_url: String::new(),
            post_session_end_webhook_url: String::new(),
            closed_lid_stop_follow_up_webhook_url: String::new(),
            webhook_secret: String::new(),
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
            ntfy_url: String::new(),
            ntfy_token: String::new(),
            ntfy_ask_before_sleep: false,
            ntfy_needs_you: true,
            ntfy_resumed: true,
            remote_decision_timeout_seconds: 60,
            remote_decision_fallback: RemoteDecisionFallback::Deny,
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
// Errors
// ---------------------------------------------------------------------------------------------

/// Why a setting could not be read, set or accepted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// No field has this flag or alias.
    #[error("unknown setting `{name}`{}", did_you_mean(*suggestion))]
    UnknownField {
        /// The name as given.
        name: String,
        /// A close flag name, if there is one.
        suggestion: Option<&'static str>,
    },
    /// The field exists, but not on this operating system.
    #[error("`--{flag}` exists only on {platforms}, not on {os}")]
    NotOnThisPlatform {
        /// The field's flag.
        flag: &'static str,
        /// The platforms it exists on, as words (e.g. `Windows`).
        platforms: String,
        /// The OS the settings are for.
        os: Os,
    },
    /// A value is not accepted.
    #[error("invalid value {value:?} for `--{flag}` ({json_key}): expected {expected}")]
    InvalidValue {
        /// The field's flag.
        flag: &'static str,
        /// The field's JSON key path.
        json_key: &'static str,
        /// The rejected value as text.
        value: String,
        /// What is accepted, including the range.
        expected: String,
    },
    /// The settings text is not valid JSON or has a value of the wrong type.
    #[error("cannot read the settings at line {line}, column {column}: {message}")]
    Parse {
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// What is wrong, prefixed with the key path when known.
        message: String,
    },
    /// The settings parsed but some values are invalid; every problem is listed.
    #[error("{}", list_problems(problems))]
    Invalid {
        /// One error per invalid field.
        problems: Vec<SettingsError>,
    },
}

fn did_you_mean(suggestion: Option<&str>) -> String {
    suggestion
        .map(|flag| format!(" (did you mean `--{flag}`?)"))
        .unwrap_or_default()
}

fn list_problems(problems: &[SettingsError]) -> String {
    let details: Vec<String> = problems.iter().map(ToString::to_string).collect();
    match details.as_slice() {
        [one] => format!("invalid settings: {one}"),
        many => format!("{} invalid settings: {}", many.len(), many.join("; ")),
    }
}

impl SettingsError {
    fn invalid(spec: &FieldSpec, value: impl Display) -> SettingsError {
        SettingsError::InvalidValue {
            flag: spec.flag,
            json_key: spec.json_key,
            value: value.to_string(),
            expected: spec.expected(),
        }
    }

    fn unknown(name: &str) -> SettingsError {
        SettingsError::UnknownField {
            name: name.to_owned(),
            suggestion: fields::suggest(name),
        }
    }

    fn not_on(spec: &FieldSpec, os: Os) -> SettingsError {
        SettingsError::NotOnThisPlatform {
            flag: spec.flag,
            platforms: spec.platform_names(),
            os,
        }
    }

    /// A JSON or type error, with the key path when there is one. serde_json's message ends
    /// with its own " at line L column C"; the position is kept in the fields instead.
    fn from_json_error(error: &serde_path_to_error::Error<serde_json::Error>) -> SettingsError {
        let inner = error.inner();
        let text = inner.to_string();
        let message = text
            .rsplit_once(" at line ")
            .map_or(text.as_str(), |(message, _)| message)
            .to_owned();
        let path = error.path().to_string();
        let message = if path == "." {
            message
        } else {
            format!("`{path}`: {message}")
        };
        SettingsError::Parse {
            line: inner.line().max(1),
            column: inner.column().max(1),
            message,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Per-kind checks and parsers (shared by validate and set_field)
// ---------------------------------------------------------------------------------------------

/// Checks a number against the spec's range; `None` is accepted only when `off` is.
fn check_number(spec: &FieldSpec, value: Option<i64>) -> Result<(), SettingsError> {
    let FieldKind::Number { min, max, off, .. } = spec.kind else {
        return Ok(());
    };
    let ok = match value {
        None => off,
        Some(v) => (i64::from(min)..=i64::from(max)).contains(&v),
    };
    if ok {
        Ok(())
    } else {
        Err(SettingsError::invalid(
            spec,
            value.map_or_else(|| "off".to_owned(), |v| v.to_string()),
        ))
    }
}

/// Parses a number field: `off` (when allowed) or a whole number in range.
fn parse_number(spec: &FieldSpec, raw: &str) -> Result<Option<u32>, SettingsError> {
    let text = raw.trim();
    if text.eq_ignore_ascii_case("off") {
        check_number(spec, None)?;
        return Ok(None);
    }
    let number = text
        .parse::<i64>()
        .map_err(|_| SettingsError::invalid(spec, raw))?;
    check_number(spec, Some(number))?;
    u32::try_from(number)
        .map(Some)
        .map_err(|_| SettingsError::invalid(spec, raw))
}

/// Parses a number field that has no `off`.
fn parse_required_number(spec: &FieldSpec, raw: &str) -> Result<u32, SettingsError> {
    parse_number(spec, raw)?.ok_or_else(|| SettingsError::invalid(spec, raw))
}

fn parse_bool_for(spec: &FieldSpec, raw: &str) -> Result<bool, SettingsError> {
    parse_bool(raw).ok_or_else(|| SettingsError::invalid(spec, raw))
}

fn parse_sound(spec: &FieldSpec, raw: &str) -> Result<String, SettingsError> {
    SoundSetting::parse(raw)
        .map(|sound| sound.stored().to_owned())
        .ok_or_else(|| SettingsError::invalid(spec, raw))
}

/// Stored URLs are empty (off) or a valid webhook URL, trimmed.
fn check_url(spec: &FieldSpec, stored: &str) -> Result<(), SettingsError> {
    if stored.is_empty() || parse_webhook_url(stored).is_some() {
        Ok(())
    } else {
        Err(SettingsError::invalid(spec, stored))
    }
}

fn parse_url(spec: &FieldSpec, raw: &str) -> Result<String, SettingsError> {
    let text = raw.trim();
    if text.is_empty() || text.eq_ignore_ascii_case("off") {
        return Ok(String::new());
    }
    check_url(spec, text)?;
    Ok(text.to_owned())
}

fn check_reason(spec: &FieldSpec, stored: &str) -> Result<(), SettingsError> {
    let FieldKind::Text { max_chars } = spec.kind else {
        return Ok(());
    };
    let ok = !stored.trim().is_empty()
        && stored.chars().count() <= max_chars
        && !stored.chars().any(char::is_control);
    if ok {
        Ok(())
    } else {
        Err(SettingsError::invalid(spec, stored))
    }
}

/// A secret: empty (off), or one line without control characters, short enough.
fn check_secret(spec: &FieldSpec, stored: &str) -> Result<(), SettingsError> {
    let FieldKind::Secret { max_chars } = spec.kind else {
        return Ok(());
    };
    if stored.chars().count() <= max_chars && !stored.chars().any(char::is_control) {
        Ok(())
    } else {
        // The value itself is not repeated in the message.
        Err(SettingsError::invalid(spec, "<secret>"))
    }
}

fn parse_secret(spec: &FieldSpec, raw: &str) -> Result<String, SettingsError> {
    let text = raw.trim();
    let text = if text.eq_ignore_ascii_case("off") {
        ""
    } else {
        text
    };
    check_secret(spec, text)?;
    Ok(text.to_owned())
}

fn check_ntfy_url(spec: &FieldSpec, stored: &str) -> Result<(), SettingsError> {
    if stored.is_empty() || NtfyTopic::parse(stored).is_some() {
        Ok(())
    } else {
        Err(SettingsError::invalid(spec, stored))
    }
}

/// An ntfy server and topic, from `ntfyUrl`. Topic names are 1 to 64 of `A-Za-z0-9_-`
/// (ntfy's docs, "Publishing": topics are created on the fly and may use these characters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NtfyTopic {
    /// The server's base URL without a trailing slash, e.g. `https://ntfy.sh`.
    pub server: String,
    /// The topic lidguard publishes to.
    pub topic: String,
}

impl NtfyTopic {
    /// The longest topic name ntfy accepts.
    pub const MAX_TOPIC: usize = 64;

    /// The topic as shown: anyone who knows its name can read the questions and answer them.
    pub const HIDDEN: &str = "(topic hidden)";

    /// Splits `https://host[:port][/prefix]/topic` into server and topic; `None` when it is
    /// not such a URL (a query, a fragment, credentials in the URL or a bad topic name).
    pub fn parse(text: &str) -> Option<NtfyTopic> {
        let url = parse_webhook_url(text)?;
        if url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() {
            return None;
        }
        let path = url.path().trim_end_matches('/');
        let (prefix, topic) = path.rsplit_once('/')?;
        let name_ok = !topic.is_empty()
            && topic.len() <= Self::MAX_TOPIC - Self::REPLY_SUFFIX.len()
            && topic
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !name_ok {
            return None;
        }
        let mut server = url.clone();
        server.set_path(prefix);
        Some(NtfyTopic {
            server: server.as_str().trim_end_matches('/').to_owned(),
            topic: topic.to_owned(),
        })
    }

    /// What is appended to the topic to name the reply topic.
    pub const REPLY_SUFFIX: &'static str = "-reply";

    /// The topic the phone's answers go to.
    pub fn reply_topic(&self) -> String {
        format!("{}{}", self.topic, Self::REPLY_SUFFIX)
    }

    /// `<server>/<topic>`.
    pub fn topic_url(&self, topic: &str) -> String {
        format!("{}/{topic}", self.server)
    }
}

fn parse_reason(spec: &FieldSpec, raw: &str) -> Result<String, SettingsError> {
    let text = raw.trim();
    if text.is_empty() {
        return Ok(DEFAULT_POWER_REQUEST_REASON.to_owned());
    }
    check_reason(spec, text)?;
    Ok(text.to_owned())
}

fn parse_culture(spec: &FieldSpec, raw: &str) -> Result<String, SettingsError> {
    value::canonical_culture(raw).ok_or_else(|| SettingsError::invalid(spec, raw))
}

fn parse_choice<T>(
    spec: &FieldSpec,
    raw: &str,
    from_name: fn(&str) -> Option<T>,
) -> Result<T, SettingsError> {
    from_name(raw).ok_or_else(|| SettingsError::invalid(spec, raw))
}

/// Renders an optional number the way the user types it.
fn number_text(value: Option<impl Display>) -> String {
    value.map_or_else(|| "off".to_owned(), |v| v.to_string())
}

/// Renders a string where empty means off.
fn off_if_empty(value: &str) -> String {
    if value.is_empty() {
        "off".to_owned()
    } else {
        value.to_owned()
    }
}

// ---------------------------------------------------------------------------------------------
// Ask-before-sleep state
// ---------------------------------------------------------------------------------------------

/// How much longer than the remote-decision wait the managed hook timeout is, in seconds.
pub const REMOTE_HOOK_MARGIN_SECONDS: u32 = 20;

/// The shortest reply wait that makes ask-before-sleep usable, in seconds.
pub const MINIMUM_REPLY_WAIT_SECONDS: u32 = 20;
/// The shortest post-stop suspend delay that ask-before-sleep works with, in seconds.
pub const MINIMUM_POST_STOP_SUSPEND_DELAY_SECONDS: u32 = 10;
/// The longest extension a receiver may grant to a reply window, in seconds.
pub const MAXIMUM_REPLY_EXTENSION_SECONDS: u32 = 300;
/// The managed hook timeout when ask-before-sleep is not on, in seconds.
pub const DEFAULT_HOOK_TIMEOUT_SECONDS: u32 = 30;

/// A configuration problem that keeps ask-before-sleep from working.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FollowUpIssue {
    /// The webhook URL is set but is not an absolute `http`/`https` URL.
    InvalidWebhookUrl,
    /// The reply wait is 1..=19 seconds.
    ReplyWaitTooShort,
    /// The reply wait is on but the post-stop suspend delay is under 10 seconds.
    PostStopDelayTooShort,
}

impl FollowUpIssue {
    /// The reference system's name, e.g. `ReplyWaitTooShort`.
    pub const fn as_str(self) -> &'static str {
        match self {
            FollowUpIssue::InvalidWebhookUrl => "InvalidWebhookUrl",
            FollowUpIssue::ReplyWaitTooShort => "ReplyWaitTooShort",
            FollowUpIssue::PostStopDelayTooShort => "PostStopDelayTooShort",
        }
    }

    /// What to change, in words.
    pub const fn description(self) -> &'static str {
        match self {
            FollowUpIssue::InvalidWebhookUrl => {
                "--closed-lid-stop-follow-up-webhook-url is not an absolute http:// or https:// URL"
            }
            FollowUpIssue::ReplyWaitTooShort => {
                "--closed-lid-stop-follow-up-delay-seconds must be 0 (off) or at least 20"
            }
            FollowUpIssue::PostStopDelayTooShort => {
                "--post-stop-suspend-delay-seconds must be at least 10 while asking before sleep"
            }
        }
    }
}

impl Display for FollowUpIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.description())
    }
}

/// Whether ask-before-sleep ("closed-lid stop follow-up") is in effect.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FollowUpState {
    /// No webhook URL, or a reply wait of 0.
    Off,
    /// Configured and usable.
    On,
    /// A URL is set but the configuration cannot work; every issue is listed.
    ConfigurationError(Vec<FollowUpIssue>),
}

impl FollowUpState {
    /// The reference system's name: `Off`, `On` or `ConfigurationError`.
    pub const fn as_str(&self) -> &'static str {
        match self {
            FollowUpState::Off => "Off",
            FollowUpState::On => "On",
            FollowUpState::ConfigurationError(_) => "ConfigurationError",
        }
    }
}

/// `off`, `on` or `configuration error: …` with every issue.
impl Display for FollowUpState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FollowUpState::Off => f.write_str("off"),
            FollowUpState::On => f.write_str("on"),
            FollowUpState::ConfigurationError(issues) => {
                f.write_str("configuration error: ")?;
                for (i, issue) in issues.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    f.write_str(issue.description())?;
                }
                Ok(())
            }
        }
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
                } else if self.platform_value_present(spec.field) {
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

    fn platform_value_present(&self, field: Field) -> bool {
        match field {
            Field::PreventAwayModeSleep => self.power_request.prevent_away_mode_sleep.is_some(),
            Field::SkipSuspendWhenLidCloseDoesNothing => {
                self.skip_suspend_when_lid_close_does_nothing.is_some()
            }
            _ => false,
        }
    }

    fn check_field(&self, spec: &FieldSpec) -> Result<(), SettingsError> {
        let optional = |v: Option<u32>| check_number(spec, v.map(i64::from));
        let required = |v: u32| check_number(spec, Some(i64::from(v)));
        let sound = |stored: &str| parse_sound(spec, stored).map(drop);
        match spec.field {
            Field::PowerRequestReason => check_reason(spec, &self.power_request.reason),
            Field::PostStopSuspendDelaySeconds => required(self.post_stop_suspend_delay_seconds),
            Field::SuspendHistoryEntryCount => optional(self.suspend_history_entry_count),
            Field::BatteryFloorPercent => optional(self.battery_floor_percent.map(u32::from)),
            Field::PostStopSuspendSound => sound(&self.post_stop_suspend_sound),
            Field::PostStopSuspendSoundVolumeOverridePercent => optional(
                self.post_stop_suspend_sound_volume_override_percent
                    .map(u32::from),
            ),
            Field::ClosedLidStopFollowUpSound => sound(&self.closed_lid_stop_follow_up_sound),
            Field::ClosedLidStopFollowUpSoundVolumeOverridePercent => optional(
                self.closed_lid_stop_follow_up_sound_volume_override_percent
                    .map(u32::from),
            ),
            Field::PreSuspendWebhookUrl => check_url(spec, &self.pre_suspend_webhook_url),
            Field::PostSessionEndWebhookUrl => check_url(spec, &self.post_session_end_webhook_url),
            Field::ClosedLidStopFollowUpWebhookUrl => {
                check_url(spec, &self.closed_lid_stop_follow_up_webhook_url)
            }
            Field::WebhookSecret => check_secret(spec, &self.webhook_secret),
            Field::NtfyToken => check_secret(spec, &self.ntfy_token),
            Field::NtfyUrl => check_ntfy_url(spec, &self.ntfy_url),
            Field::RemoteDecisionTimeoutSeconds => required(self.remote_decision_timeout_seconds),
            Field::ClosedLidStopFollowUpDelaySeconds => {
                required(self.closed_lid_stop_follow_up_delay_seconds)
            }
            Field::SessionTimeoutMinutes => optional(self.session_timeout_minutes),
            Field::ServerRuntimeCleanupDelayMinutes => {
                optional(self.server_runtime_cleanup_delay_minutes)
            }
            Field::EmergencyHibernationTemperatureCelsius => check_number(
                spec,
                Some(i64::from(self.emergency_hibernation_temperature_celsius)),
            ),
            Field::UserInterfaceCulture => {
                parse_culture(spec, &self.user_interface_culture).map(drop)
            }
            Field::PreventSystemSleep
            | Field::PreventDisplaySleep
            | Field::PreventAwayModeSleep
            | Field::ChangeLidAction
            | Field::SuspendMode
            | Field::SkipSuspendWhenLidCloseDoesNothing
            | Field::RepeatClosedLidStopFollowUp
            | Field::ClosedLidPermissionRequestDecision
            | Field::WatchParentProcess
            | Field::EmergencyHibernationOnHighTemperature
            | Field::EmergencyHibernationTemperatureMode
            | Field::NtfyAskBeforeSleep
            | Field::NtfyNeedsYou
            | Field::NtfyResumed
            | Field::RemoteDecisionFallback => Ok(()),
        }
    }

    /// Sets one field from CLI text. `flag` is the flag or an alias, with or without `--`.
    ///
    /// Booleans take `true/false`, `yes/no`, `on/off` or `1/0`; fields that can be off take
    /// `off`; choices and sound names are case-insensitive; sounds and URLs take `off` (or an
    /// empty value) to clear them; an empty power-request reason restores the default. Values
    /// are range-checked, never clamped: the emergency temperature accepts only 70..=110 here,
    /// although a file value outside that range is clamped on load.
    ///
    /// On error nothing changes.
    pub fn set_field(&mut self, flag: &str, raw: &str, os: Os) -> Result<(), SettingsError> {
        let spec = find_field(flag).ok_or_else(|| SettingsError::unknown(flag))?;
        if !spec.applies_to(os) {
            return Err(SettingsError::not_on(spec, os));
        }
        let boolean = || parse_bool_for(spec, raw);
        let volume = || -> Result<Option<u8>, SettingsError> {
            parse_number(spec, raw)?
                .map(|v| u8::try_from(v).map_err(|_| SettingsError::invalid(spec, raw)))
                .transpose()
        };
        match spec.field {
            Field::PreventSystemSleep => self.power_request.prevent_system_sleep = boolean()?,
            Field::PreventDisplaySleep => self.power_request.prevent_display_sleep = boolean()?,
            Field::PreventAwayModeSleep => {
                self.power_request.prevent_away_mode_sleep = Some(boolean()?);
            }
            Field::PowerRequestReason => self.power_request.reason = parse_reason(spec, raw)?,
            Field::ChangeLidAction => self.change_lid_action = boolean()?,
            Field::SuspendMode => {
                self.suspend_mode = parse_choice(spec, raw, SuspendMode::from_name)?;
            }
            Field::PostStopSuspendDelaySeconds => {
                self.post_stop_suspend_delay_seconds = parse_required_number(spec, raw)?;
            }
            Field::SkipSuspendWhenLidCloseDoesNothing => {
                self.skip_suspend_when_lid_close_does_nothing = Some(boolean()?);
            }
            Field::SuspendHistoryEntryCount => {
                self.suspend_history_entry_count = parse_number(spec, raw)?;
            }
            Field::BatteryFloorPercent => {
                let percent: Option<u32> = parse_number(spec, raw)?;
                self.battery_floor_percent = percent.and_then(|p| u8::try_from(p).ok());
            }
            Field::PostStopSuspendSound => self.post_stop_suspend_sound = parse_sound(spec, raw)?,
            Field::PostStopSuspendSoundVolumeOverridePercent => {
                self.post_stop_suspend_sound_volume_override_percent = volume()?;
            }
            Field::ClosedLidStopFollowUpSound => {
                self.closed_lid_stop_follow_up_sound = parse_sound(spec, raw)?;
            }
            Field::ClosedLidStopFollowUpSoundVolumeOverridePercent => {
                self.closed_lid_stop_follow_up_sound_volume_override_percent = volume()?;
            }
            Field::PreSuspendWebhookUrl => self.pre_suspend_webhook_url = parse_url(spec, raw)?,
            Field::PostSessionEndWebhookUrl => {
                self.post_session_end_webhook_url = parse_url(spec, raw)?;
            }
            Field::ClosedLidStopFollowUpWebhookUrl => {
                self.closed_lid_stop_follow_up_webhook_url = parse_url(spec, raw)?;
            }
            Field::WebhookSecret => self.webhook_secret = parse_secret(spec, raw)?,
            Field::NtfyToken => self.ntfy_token = parse_secret(spec, raw)?,
            Field::NtfyUrl => {
                let url = parse_url(spec, raw)?;
                check_ntfy_url(spec, &url)?;
                self.ntfy_url = url;
            }
            Field::NtfyAskBeforeSleep => self.ntfy_ask_before_sleep = boolean()?,
            Field::NtfyNeedsYou => self.ntfy_needs_you = boolean()?,
            Field::NtfyResumed => self.ntfy_resumed = boolean()?,
            Field::RemoteDecisionTimeoutSeconds => {
                self.remote_decision_timeout_seconds = parse_required_number(spec, raw)?;
            }
            Field::RemoteDecisionFallback => {
                self.remote_decision_fallback =
                    parse_choice(spec, raw, RemoteDecisionFallback::from_name)?;
            }
            Field::ClosedLidStopFollowUpDelaySeconds => {
                self.closed_lid_stop_follow_up_delay_seconds = parse_required_number(spec, raw)?;
            }
            Field::RepeatClosedLidStopFollowUp => {
                self.repeat_closed_lid_stop_follow_up = boolean()?
            }
            Field::ClosedLidPermissionRequestDecision => {
                self.closed_lid_permission_request_decision =
                    parse_choice(spec, raw, ClosedLidPermissionRequestDecision::from_name)?;
            }
            Field::WatchParentProcess => self.watch_parent_process = boolean()?,
            Field::SessionTimeoutMinutes => self.session_timeout_minutes = parse_number(spec, raw)?,
            Field::ServerRuntimeCleanupDelayMinutes => {
                self.server_runtime_cleanup_delay_minutes = parse_number(spec, raw)?;
            }
            Field::EmergencyHibernationOnHighTemperature => {
                self.emergency_hibernation_on_high_temperature = boolean()?;
            }
            Field::EmergencyHibernationTemperatureMode => {
                self.emergency_hibernation_temperature_mode =
                    parse_choice(spec, raw, TemperatureMode::from_name)?;
            }
            Field::EmergencyHibernationTemperatureCelsius => {
                let celsius = parse_required_number(spec, raw)?;
                self.emergency_hibernation_temperature_celsius =
                    i32::try_from(celsius).map_err(|_| SettingsError::invalid(spec, raw))?;
            }
            Field::UserInterfaceCulture => self.user_interface_culture = parse_culture(spec, raw)?,
        }
        Ok(())
    }

    /// The current value of a field as the user would type it, or `None` for an unknown flag or
    /// a platform-only field that is not set (another OS). `flag` is the flag or an alias, with
    /// or without `--`.
    ///
    /// Booleans are `true`/`false`, choices lowercase (`sleep`), numbers plain, and unset
    /// numbers, sounds and URLs `off`. Feeding the result back to [`Settings::set_field`]
    /// leaves the settings unchanged.
    pub fn get_field(&self, flag: &str) -> Option<String> {
        let spec = find_field(flag)?;
        Some(match spec.field {
            Field::PreventSystemSleep => self.power_request.prevent_system_sleep.to_string(),
            Field::PreventDisplaySleep => self.power_request.prevent_display_sleep.to_string(),
            Field::PreventAwayModeSleep => self.power_request.prevent_away_mode_sleep?.to_string(),
            Field::PowerRequestReason => self.power_request.reason.clone(),
            Field::ChangeLidAction => self.change_lid_action.to_string(),
            Field::SuspendMode => self.suspend_mode.as_str().to_owned(),
            Field::PostStopSuspendDelaySeconds => self.post_stop_suspend_delay_seconds.to_string(),
            Field::SkipSuspendWhenLidCloseDoesNothing => {
                self.skip_suspend_when_lid_close_does_nothing?.to_string()
            }
            Field::SuspendHistoryEntryCount => number_text(self.suspend_history_entry_count),
            Field::BatteryFloorPercent => number_text(self.battery_floor_percent.map(u32::from)),
            Field::PostStopSuspendSound => off_if_empty(&self.post_stop_suspend_sound),
            Field::PostStopSuspendSoundVolumeOverridePercent => {
                number_text(self.post_stop_suspend_sound_volume_override_percent)
            }
            Field::ClosedLidStopFollowUpSound => {
                off_if_empty(&self.closed_lid_stop_follow_up_sound)
            }
            Field::ClosedLidStopFollowUpSoundVolumeOverridePercent => {
                number_text(self.closed_lid_stop_follow_up_sound_volume_override_percent)
            }
            Field::PreSuspendWebhookUrl => off_if_empty(&self.pre_suspend_webhook_url),
            Field::PostSessionEndWebhookUrl => off_if_empty(&self.post_session_end_webhook_url),
            Field::ClosedLidStopFollowUpWebhookUrl => {
                off_if_empty(&self.closed_lid_stop_follow_up_webhook_url)
            }
            Field::WebhookSecret => off_if_empty(&self.webhook_secret),
            Field::NtfyUrl => off_if_empty(&self.ntfy_url),
            Field::NtfyToken => off_if_empty(&self.ntfy_token),
            Field::NtfyAskBeforeSleep => self.ntfy_ask_before_sleep.to_string(),
            Field::NtfyNeedsYou => self.ntfy_needs_you.to_string(),
            Field::NtfyResumed => self.ntfy_resumed.to_string(),
            Field::RemoteDecisionTimeoutSeconds => self.remote_decision_timeout_seconds.to_string(),
            Field::RemoteDecisionFallback => self.remote_decision_fallback.as_str().to_owned(),
            Field::ClosedLidStopFollowUpDelaySeconds => {
                self.closed_lid_stop_follow_up_delay_seconds.to_string()
            }
            Field::RepeatClosedLidStopFollowUp => self.repeat_closed_lid_stop_follow_up.to_string(),
            Field::ClosedLidPermissionRequestDecision => self
                .closed_lid_permission_request_decision
                .as_str()
                .to_owned(),
            Field::WatchParentProcess => self.watch_parent_process.to_string(),
            Field::SessionTimeoutMinutes => number_text(self.session_timeout_minutes),
            Field::ServerRuntimeCleanupDelayMinutes => {
                number_text(self.server_runtime_cleanup_delay_minutes)
            }
            Field::EmergencyHibernationOnHighTemperature => {
                self.emergency_hibernation_on_high_temperature.to_string()
            }
            Field::EmergencyHibernationTemperatureMode => self
                .emergency_hibernation_temperature_mode
                .as_str()
                .to_owned(),
            Field::EmergencyHibernationTemperatureCelsius => {
                self.emergency_hibernation_temperature_celsius.to_string()
            }
            Field::UserInterfaceCulture => self.user_interface_culture.clone(),
        })
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
