//! The table of user-settable fields: one source of truth for the CLI flags, their help, the
//! interactive editor's grouping, the JSON keys, and each field's place in [`Settings`] with
//! its parser and check. A new setting is a field of [`Settings`] and an entry here.

use super::check::*;
use super::error::SettingsError;
use super::fields::{
    Access, Category, FieldKind, FieldSpec, MAX_DELAY_SECONDS, MAX_EMERGENCY_TEMPERATURE_CELSIUS,
    MAX_MINUTES, MAX_POWER_REQUEST_REASON_CHARS, MAX_REMOTE_DECISION_SECONDS,
    MIN_EMERGENCY_TEMPERATURE_CELSIUS, MIN_REMOTE_DECISION_SECONDS,
};
use super::os::Os;
use super::{
    ClosedLidPermissionRequestDecision, RemoteDecisionFallback, SuspendMode, TemperatureMode,
};

/// Every operating system.
const ALL_OSES: &[Os] = &[Os::Linux, Os::MacOs, Os::Windows];
/// Windows only.
const WINDOWS_ONLY: &[Os] = &[Os::Windows];

/// A `bool`.
macro_rules! boolean {
    ($($f:ident).+) => {
        Access {
            get: |s| Some(s.$($f).+.to_string()),
            set: |s, spec, raw| Ok(s.$($f).+ = parse_bool_for(spec, raw)?),
            check: |_, _| Ok(()),
            stored: |_| false,
        }
    };
}

/// An `Option<bool>` that is absent until set (a platform's own field).
macro_rules! optional_boolean {
    ($($f:ident).+) => {
        Access {
            get: |s| Some(s.$($f).+?.to_string()),
            set: |s, spec, raw| Ok(s.$($f).+ = Some(parse_bool_for(spec, raw)?)),
            check: |_, _| Ok(()),
            stored: |s| s.$($f).+.is_some(),
        }
    };
}

/// An enum with `as_str` and a case-insensitive `from_name`.
macro_rules! choice {
    ($($f:ident).+, $from_name:path) => {
        Access {
            get: |s| Some(s.$($f).+.as_str().to_owned()),
            set: |s, spec, raw| Ok(s.$($f).+ = parse_choice(spec, raw, $from_name)?),
            check: |_, _| Ok(()),
            stored: |_| false,
        }
    };
}

/// A `u32` in the kind's range, never off.
macro_rules! number {
    ($($f:ident).+) => {
        Access {
            get: |s| Some(s.$($f).+.to_string()),
            set: |s, spec, raw| Ok(s.$($f).+ = parse_required_number(spec, raw)?),
            check: |s, spec| check_number(spec, Some(i64::from(s.$($f).+))),
            stored: |_| false,
        }
    };
}

/// An `Option<u32>` in the kind's range, `None` being off.
macro_rules! optional_number {
    ($($f:ident).+) => {
        Access {
            get: |s| Some(number_text(s.$($f).+)),
            set: |s, spec, raw| Ok(s.$($f).+ = parse_number(spec, raw)?),
            check: |s, spec| check_number(spec, s.$($f).+.map(i64::from)),
            stored: |_| false,
        }
    };
}

/// An `Option<u8>` percentage, `None` being off.
macro_rules! percent {
    ($($f:ident).+) => {
        Access {
            get: |s| Some(number_text(s.$($f).+)),
            set: |s, spec, raw| Ok(s.$($f).+ = parse_percent(spec, raw)?),
            check: |s, spec| check_number(spec, s.$($f).+.map(i64::from)),
            stored: |_| false,
        }
    };
}

/// An `i32` in the kind's range, never off.
macro_rules! celsius {
    ($($f:ident).+) => {
        Access {
            get: |s| Some(s.$($f).+.to_string()),
            set: |s, spec, raw| Ok(s.$($f).+ = parse_signed(spec, raw)?),
            check: |s, spec| check_number(spec, Some(i64::from(s.$($f).+))),
            stored: |_| false,
        }
    };
}

/// A sound setting, empty being off.
macro_rules! sound {
    ($($f:ident).+) => {
        Access {
            get: |s| Some(off_if_empty(&s.$($f).+)),
            set: |s, spec, raw| Ok(s.$($f).+ = parse_sound(spec, raw)?),
            check: |s, spec| parse_sound(spec, &s.$($f).+).map(drop),
            stored: |_| false,
        }
    };
}

/// A URL, empty being off, that `$check` accepts.
macro_rules! url {
    ($($f:ident).+, $check:path) => {
        Access {
            get: |s| Some(off_if_empty(&s.$($f).+)),
            set: |s, spec, raw| {
                let url = parse_url(spec, raw)?;
                $check(spec, &url)?;
                Ok(s.$($f).+ = url)
            },
            check: |s, spec| $check(spec, &s.$($f).+),
            stored: |_| false,
        }
    };
}

/// A secret, empty being off.
macro_rules! secret {
    ($($f:ident).+) => {
        Access {
            get: |s| Some(off_if_empty(&s.$($f).+)),
            set: |s, spec, raw| Ok(s.$($f).+ = parse_secret(spec, raw)?),
            check: |s, spec| check_secret(spec, &s.$($f).+),
            stored: |_| false,
        }
    };
}

/// Text that `$parse` reads and `$check` accepts.
macro_rules! text {
    ($($f:ident).+, $parse:path, $check:path) => {
        Access {
            get: |s| Some(s.$($f).+.clone()),
            set: |s, spec, raw| Ok(s.$($f).+ = $parse(spec, raw)?),
            check: |s, spec| $check(spec, &s.$($f).+),
            stored: |_| false,
        }
    };
}

/// Every settable field, grouped by category in display order.
pub const FIELDS: &[FieldSpec] = &[
    // Power
    FieldSpec {
        flag: "prevent-system-sleep",
        aliases: &[],
        json_key: "powerRequest.preventSystemSleep",
        value_hint: "<true|false>",
        help: "Keep the system from sleeping while an agent session is working.",
        platforms: ALL_OSES,
        category: Category::Power,
        kind: FieldKind::Bool,
        user_only: false,
        access: boolean!(power_request.prevent_system_sleep),
    },
    FieldSpec {
        flag: "prevent-display-sleep",
        aliases: &[],
        json_key: "powerRequest.preventDisplaySleep",
        value_hint: "<true|false>",
        help: "Keep the display on as well while an agent session is working.",
        platforms: ALL_OSES,
        category: Category::Power,
        kind: FieldKind::Bool,
        user_only: false,
        access: boolean!(power_request.prevent_display_sleep),
    },
    FieldSpec {
        flag: "prevent-away-mode-sleep",
        aliases: &[],
        json_key: "powerRequest.preventAwayModeSleep",
        value_hint: "<true|false>",
        help: "Also block away-mode sleep while an agent session is working (on AC only: on \
               battery away mode would keep a closed laptop running with its screen off).",
        platforms: WINDOWS_ONLY,
        category: Category::Power,
        kind: FieldKind::Bool,
        user_only: false,
        access: optional_boolean!(power_request.prevent_away_mode_sleep),
    },
    FieldSpec {
        flag: "power-request-reason",
        aliases: &[],
        json_key: "powerRequest.reason",
        value_hint: "<TEXT>",
        help: "The reason the OS shows for lidguard's keep-awake request.",
        platforms: ALL_OSES,
        category: Category::Power,
        kind: FieldKind::Text {
            max_chars: MAX_POWER_REQUEST_REASON_CHARS,
        },
        user_only: false,
        access: text!(power_request.reason, parse_reason, check_reason),
    },
    FieldSpec {
        flag: "change-lid-action",
        aliases: &[],
        json_key: "changeLidAction",
        value_hint: "<true|false>",
        help: "Also hold off the OS reaction to closing the lid while a session is working.",
        platforms: ALL_OSES,
        category: Category::Power,
        kind: FieldKind::Bool,
        user_only: false,
        access: boolean!(change_lid_action),
    },
    FieldSpec {
        flag: "battery-floor-percent",
        aliases: &[],
        json_key: "batteryFloorPercent",
        value_hint: "<1-99|off>",
        help: "On battery below this charge, stop keeping the machine awake (it may sleep as \
               it would); above it again or on AC, keep it awake again (off = never).",
        platforms: ALL_OSES,
        category: Category::Power,
        kind: number(1, 99, true, "%"),
        user_only: true,
        access: percent!(battery_floor_percent),
    },
    FieldSpec {
        flag: "hold-on-battery",
        aliases: &[],
        json_key: "holdOnBattery",
        value_hint: "<true|false>",
        help: "Keep the machine awake on battery too; false holds only on AC: on battery, \
               protection is released as at the battery floor (with the lid closed the machine \
               sleeps) and taken again on AC.",
        platforms: ALL_OSES,
        category: Category::Power,
        kind: FieldKind::Bool,
        user_only: true,
        access: boolean!(hold_on_battery),
    },
    // Suspend
    FieldSpec {
        flag: "suspend-mode",
        aliases: &[],
        json_key: "suspendMode",
        value_hint: "<sleep|hibernate>",
        help: "Sleep or hibernate once the agents are done and the lid is closed.",
        platforms: ALL_OSES,
        category: Category::Suspend,
        kind: FieldKind::Choice(&["sleep", "hibernate"]),
        user_only: false,
        access: choice!(suspend_mode, SuspendMode::from_name),
    },
    FieldSpec {
        flag: "post-stop-suspend-delay-seconds",
        aliases: &[],
        json_key: "postStopSuspendDelaySeconds",
        value_hint: "<SECONDS>",
        help: "Seconds between the last session finishing and the suspend (0 = at once).",
        platforms: ALL_OSES,
        category: Category::Suspend,
        kind: number(0, MAX_DELAY_SECONDS, false, "seconds"),
        user_only: false,
        access: number!(post_stop_suspend_delay_seconds),
    },
    FieldSpec {
        flag: "skip-suspend-when-lid-close-does-nothing",
        aliases: &[],
        json_key: "skipSuspendWhenLidCloseDoesNothing",
        value_hint: "<true|false>",
        help: "Do not suspend when the system's lid-close action is set to do nothing.",
        platforms: WINDOWS_ONLY,
        category: Category::Suspend,
        kind: FieldKind::Bool,
        user_only: false,
        access: optional_boolean!(skip_suspend_when_lid_close_does_nothing),
    },
    FieldSpec {
        flag: "suspend-history-count",
        aliases: &["suspend-history-entry-count"],
        json_key: "suspendHistoryEntryCount",
        value_hint: "<N|off>",
        help: "How many suspend attempts to keep in the history (off = do not record).",
        platforms: ALL_OSES,
        category: Category::Suspend,
        kind: number(1, u32::MAX, true, ""),
        user_only: false,
        access: optional_number!(suspend_history_entry_count),
    },
    // Sounds
    FieldSpec {
        flag: "post-stop-suspend-sound",
        aliases: &[],
        json_key: "postStopSuspendSound",
        value_hint: "<off|NAME|PATH.wav>",
        help: "Sound played just before suspending.",
        platforms: ALL_OSES,
        category: Category::Sounds,
        kind: FieldKind::Sound,
        user_only: false,
        access: sound!(post_stop_suspend_sound),
    },
    FieldSpec {
        flag: "post-stop-suspend-sound-volume-override-percent",
        aliases: &[],
        json_key: "postStopSuspendSoundVolumeOverridePercent",
        value_hint: "<1-100|off>",
        help: "Volume used while the suspend sound plays (off = leave the volume alone).",
        platforms: ALL_OSES,
        category: Category::Sounds,
        kind: number(1, 100, true, "percent"),
        user_only: false,
        access: percent!(post_stop_suspend_sound_volume_override_percent),
    },
    FieldSpec {
        flag: "closed-lid-stop-follow-up-sound",
        aliases: &[],
        json_key: "closedLidStopFollowUpSound",
        value_hint: "<off|NAME|PATH.wav>",
        help: "Sound played when lidguard asks before sleeping.",
        platforms: ALL_OSES,
        category: Category::Sounds,
        kind: FieldKind::Sound,
        user_only: false,
        access: sound!(closed_lid_stop_follow_up_sound),
    },
    FieldSpec {
        flag: "closed-lid-stop-follow-up-sound-volume-override-percent",
        aliases: &["override"],
        json_key: "closedLidStopFollowUpSoundVolumeOverridePercent",
        value_hint: "<1-100|off>",
        help: "Volume used while the ask-before-sleep sound plays (off = leave the volume alone).",
        platforms: ALL_OSES,
        category: Category::Sounds,
        kind: number(1, 100, true, "percent"),
        user_only: false,
        access: percent!(closed_lid_stop_follow_up_sound_volume_override_percent),
    },
    // Webhooks
    FieldSpec {
        flag: "pre-suspend-webhook-url",
        aliases: &[],
        json_key: "preSuspendWebhookUrl",
        value_hint: "<URL|off>",
        help: "URL that is sent a POST just before the machine suspends.",
        platforms: ALL_OSES,
        category: Category::Webhooks,
        kind: FieldKind::WebhookUrl,
        user_only: true,
        access: url!(pre_suspend_webhook_url, check_url),
    },
    FieldSpec {
        flag: "post-session-end-webhook-url",
        aliases: &[],
        json_key: "postSessionEndWebhookUrl",
        value_hint: "<URL|off>",
        help: "URL that is sent a POST when an agent session ends.",
        platforms: ALL_OSES,
        category: Category::Webhooks,
        kind: FieldKind::WebhookUrl,
        user_only: true,
        access: url!(post_session_end_webhook_url, check_url),
    },
    FieldSpec {
        flag: "webhook-secret",
        aliases: &[],
        json_key: "webhookSecret",
        value_hint: "<SECRET|off>",
        help: "Key that signs every webhook request (HMAC-SHA256 in X-Lidguard-Signature), so \
               the receiver's URL need not hold a secret; off = unsigned.",
        platforms: ALL_OSES,
        category: Category::Webhooks,
        kind: FieldKind::Secret { max_chars: 200 },
        user_only: true,
        access: secret!(webhook_secret),
    },
    // Ask before sleep
    FieldSpec {
        flag: "closed-lid-stop-follow-up-webhook-url",
        aliases: &[],
        json_key: "closedLidStopFollowUpWebhookUrl",
        value_hint: "<URL|off>",
        help: "Receiver asked whether to keep working before sleeping with the lid closed \
               (off = do not ask).",
        platforms: ALL_OSES,
        category: Category::AskBeforeSleep,
        kind: FieldKind::WebhookUrl,
        user_only: true,
        access: url!(closed_lid_stop_follow_up_webhook_url, check_url),
    },
    FieldSpec {
        flag: "closed-lid-stop-follow-up-delay-seconds",
        aliases: &[],
        json_key: "closedLidStopFollowUpDelaySeconds",
        value_hint: "<SECONDS>",
        help: "Seconds to wait for a reply before sleeping (0 = do not ask; needs at least 20).",
        platforms: ALL_OSES,
        category: Category::AskBeforeSleep,
        kind: number(0, MAX_DELAY_SECONDS, false, "seconds"),
        user_only: false,
        access: number!(closed_lid_stop_follow_up_delay_seconds),
    },
    FieldSpec {
        flag: "repeat-closed-lid-stop-follow-up",
        aliases: &[],
        json_key: "repeatClosedLidStopFollowUp",
        value_hint: "<true|false>",
        help: "Ask again each time the continued work tries to finish.",
        platforms: ALL_OSES,
        category: Category::AskBeforeSleep,
        kind: FieldKind::Bool,
        user_only: false,
        access: boolean!(repeat_closed_lid_stop_follow_up),
    },
    // Phone (ntfy)
    FieldSpec {
        flag: "ntfy-url",
        aliases: &[],
        json_key: "ntfyUrl",
        value_hint: "<URL|off>",
        help: "ntfy server and topic that gets lidguard's notifications, e.g. \
               https://ntfy.sh/<long-random-topic>; replies are read from <topic>-reply \
               (off = no phone notifications).",
        platforms: ALL_OSES,
        category: Category::Phone,
        kind: FieldKind::NtfyUrl,
        user_only: true,
        access: url!(ntfy_url, check_ntfy_url),
    },
    FieldSpec {
        flag: "ntfy-token",
        aliases: &[],
        json_key: "ntfyToken",
        value_hint: "<TOKEN|off>",
        help: "Access token for a protected ntfy topic (sent as a Bearer token; off = none).",
        platforms: ALL_OSES,
        category: Category::Phone,
        kind: FieldKind::Secret { max_chars: 200 },
        user_only: true,
        access: secret!(ntfy_token),
    },
    FieldSpec {
        flag: "ntfy-ask-before-sleep",
        aliases: &[],
        json_key: "ntfyAskBeforeSleep",
        value_hint: "<true|false>",
        help: "Ask before sleep on the phone (Continue / Sleep now / a typed reply); the Stop \
               hook then waits as with the follow-up webhook.",
        platforms: ALL_OSES,
        category: Category::Phone,
        kind: FieldKind::Bool,
        user_only: true,
        access: boolean!(ntfy_ask_before_sleep),
    },
    FieldSpec {
        flag: "ntfy-needs-you",
        aliases: &[],
        json_key: "ntfyNeedsYou",
        value_hint: "<true|false>",
        help: "Notify when a session waits for you (a permission prompt, a question).",
        platforms: ALL_OSES,
        category: Category::Phone,
        kind: FieldKind::Bool,
        user_only: true,
        access: boolean!(ntfy_needs_you),
    },
    FieldSpec {
        flag: "ntfy-resumed",
        aliases: &[],
        json_key: "ntfyResumed",
        value_hint: "<true|false>",
        help: "Notify again when a session that waited for you works again.",
        platforms: ALL_OSES,
        category: Category::Phone,
        kind: FieldKind::Bool,
        user_only: true,
        access: boolean!(ntfy_resumed),
    },
    FieldSpec {
        flag: "remote-decision-timeout-seconds",
        aliases: &[],
        json_key: "remoteDecisionTimeoutSeconds",
        value_hint: "<SECONDS>",
        help: "How long a permission request waits for the phone's answer (policy remote).",
        platforms: ALL_OSES,
        category: Category::Phone,
        kind: number(
            MIN_REMOTE_DECISION_SECONDS,
            MAX_REMOTE_DECISION_SECONDS,
            false,
            "seconds",
        ),
        user_only: true,
        access: number!(remote_decision_timeout_seconds),
    },
    FieldSpec {
        flag: "remote-decision-fallback",
        aliases: &[],
        json_key: "remoteDecisionFallback",
        value_hint: "<deny|ask>",
        help: "What a permission request gets when the phone does not answer in time.",
        platforms: ALL_OSES,
        category: Category::Phone,
        kind: FieldKind::Choice(&["deny", "ask"]),
        user_only: true,
        access: choice!(remote_decision_fallback, RemoteDecisionFallback::from_name),
    },
    // Desktop notifications
    FieldSpec {
        flag: "notify-protection-failed",
        aliases: &[],
        json_key: "notifyProtectionFailed",
        value_hint: "<true|false>",
        help: "Notify on this desktop when agents work and protection cannot be held.",
        platforms: ALL_OSES,
        category: Category::Desktop,
        kind: FieldKind::Bool,
        user_only: true,
        access: boolean!(notify_protection_failed),
    },
    FieldSpec {
        flag: "notify-suspend-scheduled",
        aliases: &[],
        json_key: "notifySuspendScheduled",
        value_hint: "<true|false>",
        help: "Notify on this desktop when a closed-lid suspend is scheduled while sessions still wait for you.",
        platforms: ALL_OSES,
        category: Category::Desktop,
        kind: FieldKind::Bool,
        user_only: true,
        access: boolean!(notify_suspend_scheduled),
    },
    FieldSpec {
        flag: "notify-waiting-for-you",
        aliases: &[],
        json_key: "notifyWaitingForYou",
        value_hint: "<true|false>",
        help: "Notify on this desktop when an agent waits for you with the lid open.",
        platforms: ALL_OSES,
        category: Category::Desktop,
        kind: FieldKind::Bool,
        user_only: true,
        access: boolean!(notify_waiting_for_you),
    },
    FieldSpec {
        flag: "notify-battery-floor",
        aliases: &[],
        json_key: "notifyBatteryFloor",
        value_hint: "<true|false>",
        help: "Notify on this desktop when the battery floor releases protection.",
        platforms: ALL_OSES,
        category: Category::Desktop,
        kind: FieldKind::Bool,
        user_only: true,
        access: boolean!(notify_battery_floor),
    },
    FieldSpec {
        flag: "notify-thermal-pressure",
        aliases: &[],
        json_key: "notifyThermalPressure",
        value_hint: "<true|false>",
        help: "Notify on this desktop when a serious thermal state releases protection.",
        platforms: ALL_OSES,
        category: Category::Desktop,
        kind: FieldKind::Bool,
        user_only: true,
        access: boolean!(notify_thermal_pressure),
    },
    // Sessions
    FieldSpec {
        flag: "closed-lid-permission-request-decision",
        aliases: &[],
        json_key: "closedLidPermissionRequestDecision",
        value_hint: "<deny|allow|ask|remote>",
        help: "How to answer an agent's permission request while the lid is closed (remote = \
               ask on the phone through ntfy, see --ntfy-url).",
        platforms: ALL_OSES,
        category: Category::Sessions,
        kind: FieldKind::Choice(&["deny", "allow", "ask", "remote"]),
        user_only: true,
        access: choice!(
            closed_lid_permission_request_decision,
            ClosedLidPermissionRequestDecision::from_name
        ),
    },
    FieldSpec {
        flag: "watch-parent-process",
        aliases: &[],
        json_key: "watchParentProcess",
        value_hint: "<true|false>",
        help: "End a session when the agent process that started it exits.",
        platforms: ALL_OSES,
        category: Category::Sessions,
        kind: FieldKind::Bool,
        user_only: false,
        access: boolean!(watch_parent_process),
    },
    FieldSpec {
        flag: "session-timeout-minutes",
        aliases: &[],
        json_key: "sessionTimeoutMinutes",
        value_hint: "<MINUTES|off>",
        help: "Minutes without activity before a session stops keeping the machine awake \
               (off = never).",
        platforms: ALL_OSES,
        category: Category::Sessions,
        kind: number(1, MAX_MINUTES, true, "minutes"),
        user_only: false,
        access: optional_number!(session_timeout_minutes),
    },
    // Runtime
    FieldSpec {
        flag: "server-runtime-cleanup-delay-minutes",
        aliases: &[],
        json_key: "serverRuntimeCleanupDelayMinutes",
        value_hint: "<MINUTES|off>",
        help: "Minutes the daemon stays after the last session (0 = exit at once, off = stay).",
        platforms: ALL_OSES,
        category: Category::Runtime,
        kind: number(0, MAX_MINUTES, true, "minutes"),
        user_only: false,
        access: optional_number!(server_runtime_cleanup_delay_minutes),
    },
    // Emergency hibernation
    FieldSpec {
        flag: "emergency-hibernation-on-high-temperature",
        aliases: &[],
        json_key: "emergencyHibernationOnHighTemperature",
        value_hint: "<true|false>",
        help: "Hibernate at once if the machine gets too hot with the lid closed.",
        platforms: ALL_OSES,
        category: Category::EmergencyHibernation,
        kind: FieldKind::Bool,
        user_only: true,
        access: boolean!(emergency_hibernation_on_high_temperature),
    },
    FieldSpec {
        flag: "emergency-hibernation-temperature-mode",
        aliases: &[],
        json_key: "emergencyHibernationTemperatureMode",
        value_hint: "<low|average|high>",
        help: "Which reading to compare: the coolest sensor, the average or the hottest.",
        platforms: ALL_OSES,
        category: Category::EmergencyHibernation,
        kind: FieldKind::Choice(&["low", "average", "high"]),
        user_only: true,
        access: choice!(
            emergency_hibernation_temperature_mode,
            TemperatureMode::from_name
        ),
    },
    FieldSpec {
        flag: "emergency-hibernation-temperature-celsius",
        aliases: &[],
        json_key: "emergencyHibernationTemperatureCelsius",
        value_hint: "<70-110>",
        help: "Temperature in °C at which emergency hibernation starts.",
        platforms: ALL_OSES,
        category: Category::EmergencyHibernation,
        kind: number(
            MIN_EMERGENCY_TEMPERATURE_CELSIUS.unsigned_abs(),
            MAX_EMERGENCY_TEMPERATURE_CELSIUS.unsigned_abs(),
            false,
            "°C",
        ),
        user_only: true,
        access: celsius!(emergency_hibernation_temperature_celsius),
    },
    // Interface
    FieldSpec {
        flag: "user-interface-culture",
        aliases: &[],
        json_key: "userInterfaceCulture",
        value_hint: "<auto|TAG>",
        help: "Language for lidguard's messages: auto, or a language tag such as en or ko.",
        platforms: ALL_OSES,
        category: Category::Interface,
        kind: FieldKind::Culture,
        user_only: false,
        access: text!(user_interface_culture, parse_culture, check_culture),
    },
];

/// Looks a field up by flag or alias, with or without the leading `--`.
pub fn find_field(name: &str) -> Option<&'static FieldSpec> {
    FIELDS.iter().find(|spec| spec.matches(name))
}

/// The fields that exist on `os`, in display order.
pub fn fields_for(os: Os) -> impl Iterator<Item = &'static FieldSpec> {
    FIELDS.iter().filter(move |spec| spec.applies_to(os))
}

/// The closest flag to an unknown `name`, for "did you mean" hints: a flag whose JSON key or
/// flag matches when case and separators are ignored (so `powerRequestReason` finds
/// `power-request-reason`), else a flag within a small edit distance.
pub(super) fn suggest(name: &str) -> Option<&'static str> {
    fn squash(s: &str) -> String {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect()
    }
    let name = name.strip_prefix("--").unwrap_or(name);
    let squashed = squash(name);
    if squashed.is_empty() {
        return None;
    }
    let same = FIELDS.iter().find(|spec| {
        let last_key = spec.json_key.rsplit('.').next().unwrap_or(spec.json_key);
        squash(spec.flag) == squashed
            || squash(spec.json_key) == squashed
            || squash(last_key) == squashed
            || spec.aliases.iter().any(|a| squash(a) == squashed)
    });
    if let Some(spec) = same {
        return Some(spec.flag);
    }
    FIELDS
        .iter()
        .map(|spec| (edit_distance(spec.flag, name), spec.flag))
        .filter(|&(distance, _)| distance <= 3)
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, flag)| flag)
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

const fn number(min: u32, max: u32, off: bool, unit: &'static str) -> FieldKind {
    FieldKind::Number {
        min,
        max,
        off,
        unit,
    }
}

impl SettingsError {
    /// No field has the flag or alias `name`.
    pub(super) fn unknown(name: &str) -> SettingsError {
        SettingsError::UnknownField {
            name: name.to_owned(),
            suggestion: suggest(name),
        }
    }
}
