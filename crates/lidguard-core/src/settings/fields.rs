//! The table of user-settable fields: one source of truth for the CLI flags, their help, the
//! interactive editor's grouping and the JSON keys.

use std::fmt::{self, Display};

use super::Os;

/// Every operating system.
const ALL_OSES: &[Os] = &[Os::Linux, Os::MacOs, Os::Windows];
/// Windows only.
const WINDOWS_ONLY: &[Os] = &[Os::Windows];
/// Where lidguard reads the battery.
const LINUX_AND_WINDOWS: &[Os] = &[Os::Linux, Os::Windows];

/// Seconds in a day: the upper bound of the delay settings.
pub const MAX_DELAY_SECONDS: u32 = 86_400;
/// Minutes in seven days: the upper bound of the minute settings.
pub const MAX_MINUTES: u32 = 10_080;
/// The lowest emergency-hibernation threshold, in °C.
pub const MIN_EMERGENCY_TEMPERATURE_CELSIUS: i32 = 70;
/// The highest emergency-hibernation threshold, in °C.
pub const MAX_EMERGENCY_TEMPERATURE_CELSIUS: i32 = 110;
/// The shortest remote-decision wait, in seconds.
pub const MIN_REMOTE_DECISION_SECONDS: u32 = 10;
/// The longest remote-decision wait, in seconds (agents' own hook limits are 10 minutes).
pub const MAX_REMOTE_DECISION_SECONDS: u32 = 540;
/// The longest accepted power-request reason, in characters.
pub const MAX_POWER_REQUEST_REASON_CHARS: usize = 200;

/// Identifies one settable field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Field {
    /// `powerRequest.preventSystemSleep`.
    PreventSystemSleep,
    /// `powerRequest.preventDisplaySleep`.
    PreventDisplaySleep,
    /// `powerRequest.preventAwayModeSleep` (Windows).
    PreventAwayModeSleep,
    /// `powerRequest.reason`.
    PowerRequestReason,
    /// `changeLidAction`.
    ChangeLidAction,
    /// `suspendMode`.
    SuspendMode,
    /// `postStopSuspendDelaySeconds`.
    PostStopSuspendDelaySeconds,
    /// `skipSuspendWhenLidCloseDoesNothing` (Windows).
    SkipSuspendWhenLidCloseDoesNothing,
    /// `suspendHistoryEntryCount`.
    SuspendHistoryEntryCount,
    /// `batteryFloorPercent`.
    BatteryFloorPercent,
    /// `postStopSuspendSound`.
    PostStopSuspendSound,
    /// `postStopSuspendSoundVolumeOverridePercent`.
    PostStopSuspendSoundVolumeOverridePercent,
    /// `closedLidStopFollowUpSound`.
    ClosedLidStopFollowUpSound,
    /// `closedLidStopFollowUpSoundVolumeOverridePercent`.
    ClosedLidStopFollowUpSoundVolumeOverridePercent,
    /// `preSuspendWebhookUrl`.
    PreSuspendWebhookUrl,
    /// `postSessionEndWebhookUrl`.
    PostSessionEndWebhookUrl,
    /// `closedLidStopFollowUpWebhookUrl`.
    ClosedLidStopFollowUpWebhookUrl,
    /// `webhookSecret`.
    WebhookSecret,
    /// `closedLidStopFollowUpDelaySeconds`.
    ClosedLidStopFollowUpDelaySeconds,
    /// `repeatClosedLidStopFollowUp`.
    RepeatClosedLidStopFollowUp,
    /// `closedLidPermissionRequestDecision`.
    ClosedLidPermissionRequestDecision,
    /// `watchParentProcess`.
    WatchParentProcess,
    /// `sessionTimeoutMinutes`.
    SessionTimeoutMinutes,
    /// `serverRuntimeCleanupDelayMinutes`.
    ServerRuntimeCleanupDelayMinutes,
    /// `emergencyHibernationOnHighTemperature`.
    EmergencyHibernationOnHighTemperature,
    /// `emergencyHibernationTemperatureMode`.
    EmergencyHibernationTemperatureMode,
    /// `emergencyHibernationTemperatureCelsius`.
    EmergencyHibernationTemperatureCelsius,
    /// `userInterfaceCulture`.
    UserInterfaceCulture,
    /// `ntfyUrl`.
    NtfyUrl,
    /// `ntfyToken`.
    NtfyToken,
    /// `ntfyAskBeforeSleep`.
    NtfyAskBeforeSleep,
    /// `ntfyNeedsYou`.
    NtfyNeedsYou,
    /// `ntfyResumed`.
    NtfyResumed,
    /// `remoteDecisionTimeoutSeconds`.
    RemoteDecisionTimeoutSeconds,
    /// `remoteDecisionFallback`.
    RemoteDecisionFallback,
}

/// A group of related fields, for the interactive editor and the printed table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Category {
    /// Keep-awake requests and the lid.
    Power,
    /// How and when the machine is suspended.
    Suspend,
    /// Sounds and their volume.
    Sounds,
    /// Notification webhooks.
    Webhooks,
    /// Asking a remote receiver before sleeping with the lid closed.
    AskBeforeSleep,
    /// The phone: ntfy push notifications and remote decisions.
    Phone,
    /// Agent sessions.
    Sessions,
    /// The background daemon.
    Runtime,
    /// Hibernating when the machine runs hot.
    EmergencyHibernation,
    /// Language of messages.
    Interface,
}

impl Category {
    /// All categories in display order.
    pub const ALL: [Category; 10] = [
        Category::Power,
        Category::Suspend,
        Category::Sounds,
        Category::Webhooks,
        Category::AskBeforeSleep,
        Category::Phone,
        Category::Sessions,
        Category::Runtime,
        Category::EmergencyHibernation,
        Category::Interface,
    ];

    /// The heading shown to users, e.g. `Ask before sleep`.
    pub const fn label(self) -> &'static str {
        match self {
            Category::Power => "Power",
            Category::Suspend => "Suspend",
            Category::Sounds => "Sounds",
            Category::Webhooks => "Webhooks",
            Category::AskBeforeSleep => "Ask before sleep",
            Category::Phone => "Phone (ntfy)",
            Category::Sessions => "Sessions",
            Category::Runtime => "Runtime",
            Category::EmergencyHibernation => "Emergency hibernation",
            Category::Interface => "Interface",
        }
    }
}

impl Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// What kind of value a field takes, and its limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FieldKind {
    /// `true`/`false`; `yes`/`no`, `on`/`off` and `1`/`0` are accepted too.
    Bool,
    /// One of these lowercase words (matched case-insensitively).
    Choice(&'static [&'static str]),
    /// A whole number in `min..=max`; `off` (no value) too when `off` is set.
    Number {
        /// Smallest accepted value.
        min: u32,
        /// Largest accepted value (`u32::MAX`: no practical bound).
        max: u32,
        /// Whether `off` is accepted.
        off: bool,
        /// Unit shown in messages, e.g. `seconds`; empty for plain counts.
        unit: &'static str,
    },
    /// `off`, a system sound name or a `.wav` path (see [`super::SoundSetting`]).
    Sound,
    /// `off` or an absolute `http`/`https` URL.
    WebhookUrl,
    /// `off` or an `http`/`https` URL whose path is one ntfy topic name.
    NtfyUrl,
    /// One line of non-blank text of at most `max_chars` characters; blank restores the default.
    Text {
        /// Longest accepted text, in characters.
        max_chars: usize,
    },
    /// `auto` or a language tag.
    Culture,
    /// `off` or one line of text of at most `max_chars` characters, never shown in full.
    Secret {
        /// Longest accepted text, in characters.
        max_chars: usize,
    },
}

/// One user-settable field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldSpec {
    /// Which field this is.
    pub field: Field,
    /// The kebab-case CLI flag without the leading `--`, e.g. `suspend-mode`.
    pub flag: &'static str,
    /// Other accepted flag names, without the leading `--`.
    pub aliases: &'static [&'static str],
    /// The key path in `settings.json`, e.g. `powerRequest.preventSystemSleep`.
    pub json_key: &'static str,
    /// The value placeholder shown in help, e.g. `<true|false>`.
    pub value_hint: &'static str,
    /// One line of help.
    pub help: &'static str,
    /// The operating systems this field exists on.
    pub platforms: &'static [Os],
    /// The group it is shown in.
    pub category: Category,
    /// The kind of value and its limits.
    pub kind: FieldKind,
}

impl FieldSpec {
    /// Whether only the user may change this field, never a model through lidguard's MCP
    /// server: it decides what happens without asking the user (the closed-lid answer to a
    /// permission prompt), where data about the user's work is sent (webhooks), or it is the
    /// hardware's safety guard (emergency hibernation). The CLI changes these.
    pub fn user_only(&self) -> bool {
        matches!(
            self.field,
            Field::ClosedLidPermissionRequestDecision
                | Field::PreSuspendWebhookUrl
                | Field::PostSessionEndWebhookUrl
                | Field::ClosedLidStopFollowUpWebhookUrl
                | Field::WebhookSecret
                | Field::EmergencyHibernationOnHighTemperature
                | Field::EmergencyHibernationTemperatureMode
                | Field::EmergencyHibernationTemperatureCelsius
                | Field::BatteryFloorPercent
                | Field::NtfyUrl
                | Field::NtfyToken
                | Field::NtfyAskBeforeSleep
                | Field::NtfyNeedsYou
                | Field::NtfyResumed
                | Field::RemoteDecisionTimeoutSeconds
                | Field::RemoteDecisionFallback
        )
    }

    /// The field's name in MCP tool arguments: the JSON key's last part when it names the field
    /// on its own (`preventSystemSleep` for `powerRequest.preventSystemSleep`), else the whole
    /// key run together (`powerRequestReason` for `powerRequest.reason`).
    pub fn mcp_name(&self) -> String {
        match self.json_key.split_once('.') {
            None => self.json_key.to_owned(),
            Some((_, last)) if last.starts_with("prevent") => last.to_owned(),
            Some((parent, last)) => {
                let mut chars = last.chars();
                let first = chars.next().map(|c| c.to_ascii_uppercase());
                format!(
                    "{parent}{}{}",
                    first.into_iter().collect::<String>(),
                    chars.as_str()
                )
            }
        }
    }

    /// Whether the field exists on `os`.
    pub fn applies_to(&self, os: Os) -> bool {
        self.platforms.contains(&os)
    }

    /// Whether `name` (with or without a leading `--`) is this field's flag or an alias.
    pub fn matches(&self, name: &str) -> bool {
        let name = name.strip_prefix("--").unwrap_or(name);
        self.flag == name || self.aliases.contains(&name)
    }

    /// The platforms as words, e.g. `Windows` or `Linux, macOS and Windows`.
    pub fn platform_names(&self) -> String {
        let names: Vec<&str> = self.platforms.iter().map(|os| os.name()).collect();
        match names.split_last() {
            None => String::new(),
            Some((last, [])) => (*last).to_owned(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        }
    }

    /// What values are accepted, for error messages and help, e.g.
    /// `a whole number from 1 to 100 percent, or off`.
    pub fn expected(&self) -> String {
        match self.kind {
            FieldKind::Bool => "true or false (also yes/no, on/off, 1/0)".to_owned(),
            FieldKind::Choice(choices) => format!("one of {}", choices.join(", ")),
            FieldKind::Number {
                min,
                max,
                off,
                unit,
            } => {
                let unit = if unit.is_empty() {
                    String::new()
                } else {
                    format!(" {unit}")
                };
                let mut text = if max == u32::MAX {
                    format!("a whole number of at least {min}{unit}")
                } else {
                    let note = match max {
                        MAX_DELAY_SECONDS => " (24 hours)",
                        MAX_MINUTES => " (7 days)",
                        _ => "",
                    };
                    format!("a whole number from {min} to {max}{unit}{note}")
                };
                if off {
                    text.push_str(", or off");
                }
                text
            }
            FieldKind::Sound => {
                "off, a system sound (Asterisk, Beep, Exclamation, Hand, Question) \
                 or the path of a .wav file"
                    .to_owned()
            }
            FieldKind::WebhookUrl => {
                "off or an absolute http:// or https:// URL with a host name".to_owned()
            }
            FieldKind::NtfyUrl => "off or a server and topic such as https://ntfy.sh/<topic> \
                 (the topic: 1 to 64 letters, digits, - or _; a long random one, as anyone who \
                 knows it can read it)"
                .to_owned(),
            FieldKind::Text { max_chars } => {
                format!(
                    "one line of text of at most {max_chars} characters (empty restores the default)"
                )
            }
            FieldKind::Secret { max_chars } => {
                format!("off, or one line of at most {max_chars} characters")
            }
            FieldKind::Culture => {
                "auto or a language tag such as en, ko or pt-BR (subtags of 2 to 8 letters or \
                 digits, the first of 2 or 3 letters)"
                    .to_owned()
            }
        }
    }
}

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

/// Every settable field, grouped by category in display order.
pub const FIELDS: &[FieldSpec] = &[
    // Power
    FieldSpec {
        field: Field::PreventSystemSleep,
        flag: "prevent-system-sleep",
        aliases: &[],
        json_key: "powerRequest.preventSystemSleep",
        value_hint: "<true|false>",
        help: "Keep the system from sleeping while an agent session is working.",
        platforms: ALL_OSES,
        category: Category::Power,
        kind: FieldKind::Bool,
    },
    FieldSpec {
        field: Field::PreventDisplaySleep,
        flag: "prevent-display-sleep",
        aliases: &[],
        json_key: "powerRequest.preventDisplaySleep",
        value_hint: "<true|false>",
        help: "Keep the display on as well while an agent session is working.",
        platforms: ALL_OSES,
        category: Category::Power,
        kind: FieldKind::Bool,
    },
    FieldSpec {
        field: Field::PreventAwayModeSleep,
        flag: "prevent-away-mode-sleep",
        aliases: &[],
        json_key: "powerRequest.preventAwayModeSleep",
        value_hint: "<true|false>",
        help: "Also block away-mode sleep while an agent session is working.",
        platforms: WINDOWS_ONLY,
        category: Category::Power,
        kind: FieldKind::Bool,
    },
    FieldSpec {
        field: Field::PowerRequestReason,
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
    },
    FieldSpec {
        field: Field::ChangeLidAction,
        flag: "change-lid-action",
        aliases: &[],
        json_key: "changeLidAction",
        value_hint: "<true|false>",
        help: "Also hold off the OS reaction to closing the lid while a session is working.",
        platforms: ALL_OSES,
        category: Category::Power,
        kind: FieldKind::Bool,
    },
    FieldSpec {
        field: Field::BatteryFloorPercent,
        flag: "battery-floor-percent",
        aliases: &[],
        json_key: "batteryFloorPercent",
        value_hint: "<1-99|off>",
        help: "On battery below this charge, stop keeping the machine awake (it may sleep as \
               it would); above it again or on AC, keep it awake again (off = never).",
        platforms: LINUX_AND_WINDOWS,
        category: Category::Power,
        kind: number(1, 99, true, "%"),
    },
    // Suspend
    FieldSpec {
        field: Field::SuspendMode,
        flag: "suspend-mode",
        aliases: &[],
        json_key: "suspendMode",
        value_hint: "<sleep|hibernate>",
        help: "Sleep or hibernate once the agents are done and the lid is closed.",
        platforms: ALL_OSES,
        category: Category::Suspend,
        kind: FieldKind::Choice(&["sleep", "hibernate"]),
    },
    FieldSpec {
        field: Field::PostStopSuspendDelaySeconds,
        flag: "post-stop-suspend-delay-seconds",
        aliases: &[],
        json_key: "postStopSuspendDelaySeconds",
        value_hint: "<SECONDS>",
        help: "Seconds between the last session finishing and the suspend (0 = at once).",
        platforms: ALL_OSES,
        category: Category::Suspend,
        kind: number(0, MAX_DELAY_SECONDS, false, "seconds"),
    },
    FieldSpec {
        field: Field::SkipSuspendWhenLidCloseDoesNothing,
        flag: "skip-suspend-when-lid-close-does-nothing",
        aliases: &[],
        json_key: "skipSuspendWhenLidCloseDoesNothing",
        value_hint: "<true|false>",
        help: "Do not suspend when the system's lid-close action is set to do nothing.",
        platforms: WINDOWS_ONLY,
        category: Category::Suspend,
        kind: FieldKind::Bool,
    },
    FieldSpec {
        field: Field::SuspendHistoryEntryCount,
        flag: "suspend-history-count",
        aliases: &["suspend-history-entry-count"],
        json_key: "suspendHistoryEntryCount",
        value_hint: "<N|off>",
        help: "How many suspend attempts to keep in the history (off = do not record).",
        platforms: ALL_OSES,
        category: Category::Suspend,
        kind: number(1, u32::MAX, true, ""),
    },
    // Sounds
    FieldSpec {
        field: Field::PostStopSuspendSound,
        flag: "post-stop-suspend-sound",
        aliases: &[],
        json_key: "postStopSuspendSound",
        value_hint: "<off|NAME|PATH.wav>",
        help: "Sound played just before suspending.",
        platforms: ALL_OSES,
        category: Category::Sounds,
        kind: FieldKind::Sound,
    },
    FieldSpec {
        field: Field::PostStopSuspendSoundVolumeOverridePercent,
        flag: "post-stop-suspend-sound-volume-override-percent",
        aliases: &[],
        json_key: "postStopSuspendSoundVolumeOverridePercent",
        value_hint: "<1-100|off>",
        help: "Volume used while the suspend sound plays (off = leave the volume alone).",
        platforms: ALL_OSES,
        category: Category::Sounds,
        kind: number(1, 100, true, "percent"),
    },
    FieldSpec {
        field: Field::ClosedLidStopFollowUpSound,
        flag: "closed-lid-stop-follow-up-sound",
        aliases: &[],
        json_key: "closedLidStopFollowUpSound",
        value_hint: "<off|NAME|PATH.wav>",
        help: "Sound played when lidguard asks before sleeping.",
        platforms: ALL_OSES,
        category: Category::Sounds,
        kind: FieldKind::Sound,
    },
    FieldSpec {
        field: Field::ClosedLidStopFollowUpSoundVolumeOverridePercent,
        flag: "closed-lid-stop-follow-up-sound-volume-override-percent",
        aliases: &["override"],
        json_key: "closedLidStopFollowUpSoundVolumeOverridePercent",
        value_hint: "<1-100|off>",
        help: "Volume used while the ask-before-sleep sound plays (off = leave the volume alone).",
        platforms: ALL_OSES,
        category: Category::Sounds,
        kind: number(1, 100, true, "percent"),
    },
    // Webhooks
    FieldSpec {
        field: Field::PreSuspendWebhookUrl,
        flag: "pre-suspend-webhook-url",
        aliases: &[],
        json_key: "preSuspendWebhookUrl",
        value_hint: "<URL|off>",
        help: "URL that is sent a POST just before the machine suspends.",
        platforms: ALL_OSES,
        category: Category::Webhooks,
        kind: FieldKind::WebhookUrl,
    },
    FieldSpec {
        field: Field::PostSessionEndWebhookUrl,
        flag: "post-session-end-webhook-url",
        aliases: &[],
        json_key: "postSessionEndWebhookUrl",
        value_hint: "<URL|off>",
        help: "URL that is sent a POST when an agent session ends.",
        platforms: ALL_OSES,
        category: Category::Webhooks,
        kind: FieldKind::WebhookUrl,
    },
    FieldSpec {
        field: Field::WebhookSecret,
        flag: "webhook-secret",
        aliases: &[],
        json_key: "webhookSecret",
        value_hint: "<SECRET|off>",
        help: "Key that signs every webhook request (HMAC-SHA256 in X-Lidguard-Signature), so \
               the receiver's URL need not hold a secret; off = unsigned.",
        platforms: ALL_OSES,
        category: Category::Webhooks,
        kind: FieldKind::Secret { max_chars: 200 },
    },
    // Ask before sleep
    FieldSpec {
        field: Field::ClosedLidStopFollowUpWebhookUrl,
        flag: "closed-lid-stop-follow-up-webhook-url",
        aliases: &[],
        json_key: "closedLidStopFollowUpWebhookUrl",
        value_hint: "<URL|off>",
        help: "Receiver asked whether to keep working before sleeping with the lid closed \
               (off = do not ask).",
        platforms: ALL_OSES,
        category: Category::AskBeforeSleep,
        kind: FieldKind::WebhookUrl,
    },
    FieldSpec {
        field: Field::ClosedLidStopFollowUpDelaySeconds,
        flag: "closed-lid-stop-follow-up-delay-seconds",
        aliases: &[],
        json_key: "closedLidStopFollowUpDelaySeconds",
        value_hint: "<SECONDS>",
        help: "Seconds to wait for a reply before sleeping (0 = do not ask; needs at least 20).",
        platforms: ALL_OSES,
        category: Category::AskBeforeSleep,
        kind: number(0, MAX_DELAY_SECONDS, false, "seconds"),
    },
    FieldSpec {
        field: Field::RepeatClosedLidStopFollowUp,
        flag: "repeat-closed-lid-stop-follow-up",
        aliases: &[],
        json_key: "repeatClosedLidStopFollowUp",
        value_hint: "<true|false>",
        help: "Ask again each time the continued work tries to finish.",
        platforms: ALL_OSES,
        category: Category::AskBeforeSleep,
        kind: FieldKind::Bool,
    },
    // Phone (ntfy)
    FieldSpec {
        field: Field::NtfyUrl,
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
    },
    FieldSpec {
        field: Field::NtfyToken,
        flag: "ntfy-token",
        aliases: &[],
        json_key: "ntfyToken",
        value_hint: "<TOKEN|off>",
        help: "Access token for a protected ntfy topic (sent as a Bearer token; off = none).",
        platforms: ALL_OSES,
        category: Category::Phone,
        kind: FieldKind::Secret { max_chars: 200 },
    },
    FieldSpec {
        field: Field::NtfyAskBeforeSleep,
        flag: "ntfy-ask-before-sleep",
        aliases: &[],
        json_key: "ntfyAskBeforeSleep",
        value_hint: "<true|false>",
        help: "Ask before sleep on the phone (Continue / Sleep now / a typed reply); the Stop \
               hook then waits as with the follow-up webhook.",
        platforms: ALL_OSES,
        category: Category::Phone,
        kind: FieldKind::Bool,
    },
    FieldSpec {
        field: Field::NtfyNeedsYou,
        flag: "ntfy-needs-you",
        aliases: &[],
        json_key: "ntfyNeedsYou",
        value_hint: "<true|false>",
        help: "Notify when a session waits for you (a permission prompt, a question).",
        platforms: ALL_OSES,
        category: Category::Phone,
        kind: FieldKind::Bool,
    },
    FieldSpec {
        field: Field::NtfyResumed,
        flag: "ntfy-resumed",
        aliases: &[],
        json_key: "ntfyResumed",
        value_hint: "<true|false>",
        help: "Notify again when a session that waited for you works again.",
        platforms: ALL_OSES,
        category: Category::Phone,
        kind: FieldKind::Bool,
    },
    FieldSpec {
        field: Field::RemoteDecisionTimeoutSeconds,
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
    },
    FieldSpec {
        field: Field::RemoteDecisionFallback,
        flag: "remote-decision-fallback",
        aliases: &[],
        json_key: "remoteDecisionFallback",
        value_hint: "<deny|ask>",
        help: "What a permission request gets when the phone does not answer in time.",
        platforms: ALL_OSES,
        category: Category::Phone,
        kind: FieldKind::Choice(&["deny", "ask"]),
    },
    // Sessions
    FieldSpec {
        field: Field::ClosedLidPermissionRequestDecision,
        flag: "closed-lid-permission-request-decision",
        aliases: &[],
        json_key: "closedLidPermissionRequestDecision",
        value_hint: "<deny|allow|ask|remote>",
        help: "How to answer an agent's permission request while the lid is closed (remote = \
               ask on the phone through ntfy, see --ntfy-url).",
        platforms: ALL_OSES,
        category: Category::Sessions,
        kind: FieldKind::Choice(&["deny", "allow", "ask", "remote"]),
    },
    FieldSpec {
        field: Field::WatchParentProcess,
        flag: "watch-parent-process",
        aliases: &[],
        json_key: "watchParentProcess",
        value_hint: "<true|false>",
        help: "End a session when the agent process that started it exits.",
        platforms: ALL_OSES,
        category: Category::Sessions,
        kind: FieldKind::Bool,
    },
    FieldSpec {
        field: Field::SessionTimeoutMinutes,
        flag: "session-timeout-minutes",
        aliases: &[],
        json_key: "sessionTimeoutMinutes",
        value_hint: "<MINUTES|off>",
        help: "Minutes without activity before a session stops keeping the machine awake \
               (off = never).",
        platforms: ALL_OSES,
        category: Category::Sessions,
        kind: number(1, MAX_MINUTES, true, "minutes"),
    },
    // Runtime
    FieldSpec {
        field: Field::ServerRuntimeCleanupDelayMinutes,
        flag: "server-runtime-cleanup-delay-minutes",
        aliases: &[],
        json_key: "serverRuntimeCleanupDelayMinutes",
        value_hint: "<MINUTES|off>",
        help: "Minutes the daemon stays after the last session (0 = exit at once, off = stay).",
        platforms: ALL_OSES,
        category: Category::Runtime,
        kind: number(0, MAX_MINUTES, true, "minutes"),
    },
    // Emergency hibernation
    FieldSpec {
        field: Field::EmergencyHibernationOnHighTemperature,
        flag: "emergency-hibernation-on-high-temperature",
        aliases: &[],
        json_key: "emergencyHibernationOnHighTemperature",
        value_hint: "<true|false>",
        help: "Hibernate at once if the machine gets too hot with the lid closed.",
        platforms: ALL_OSES,
        category: Category::EmergencyHibernation,
        kind: FieldKind::Bool,
    },
    FieldSpec {
        field: Field::EmergencyHibernationTemperatureMode,
        flag: "emergency-hibernation-temperature-mode",
        aliases: &[],
        json_key: "emergencyHibernationTemperatureMode",
        value_hint: "<low|average|high>",
        help: "Which reading to compare: the coolest sensor, the average or the hottest.",
        platforms: ALL_OSES,
        category: Category::EmergencyHibernation,
        kind: FieldKind::Choice(&["low", "average", "high"]),
    },
    FieldSpec {
        field: Field::EmergencyHibernationTemperatureCelsius,
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
    },
    // Interface
    FieldSpec {
        field: Field::UserInterfaceCulture,
        flag: "user-interface-culture",
        aliases: &[],
        json_key: "userInterfaceCulture",
        value_hint: "<auto|TAG>",
        help: "Language for lidguard's messages: auto, or a language tag such as en or ko.",
        platforms: ALL_OSES,
        category: Category::Interface,
        kind: FieldKind::Culture,
    },
];
