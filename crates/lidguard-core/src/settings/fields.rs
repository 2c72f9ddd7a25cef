//! What a user-settable field is: its names, help, category, kind of value and limits, and
//! its accessors; the entries themselves are in the table (`table.rs`).

use std::fmt::Display;

use super::error::SettingsError;
use super::{Os, Settings};

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
    /// Notifications on this machine's desktop.
    Desktop,
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
    pub const ALL: [Category; 11] = [
        Category::Power,
        Category::Suspend,
        Category::Sounds,
        Category::Webhooks,
        Category::AskBeforeSleep,
        Category::Phone,
        Category::Desktop,
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
            Category::Desktop => "Desktop notifications",
            Category::Sessions => "Sessions",
            Category::Runtime => "Runtime",
            Category::EmergencyHibernation => "Emergency hibernation",
            Category::Interface => "Interface",
        }
    }
}

display_as!(Category, label);

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

/// One user-settable field: its names, help and limits, and how its value is read, set and
/// checked.
#[derive(Clone, Copy, Debug)]
pub struct FieldSpec {
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
    /// Only the user may change it, never a model through lidguard's MCP server (see
    /// [`FieldSpec::user_only`]).
    pub(super) user_only: bool,
    /// Its value in [`Settings`].
    pub(super) access: Access,
}

/// How one field's value is read, set from CLI text and checked, written next to its entry
/// in the table.
#[derive(Clone, Copy)]
pub(super) struct Access {
    /// The value as the user would type it; `None`: a platform-only value that is not set.
    pub(super) get: fn(&Settings) -> Option<String>,
    /// Sets the value from CLI text (nothing changes on error).
    pub(super) set: fn(&mut Settings, &FieldSpec, &str) -> Result<(), SettingsError>,
    /// Checks the value as loaded from the file.
    pub(super) check: fn(&Settings, &FieldSpec) -> Result<(), SettingsError>,
    /// Whether a value is stored for a field that is absent until set (on another OS, such a
    /// value is an error); `false` for fields that always have a value.
    pub(super) stored: fn(&Settings) -> bool,
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Access")
    }
}

impl FieldSpec {
    /// Whether only the user may change this field, never a model through lidguard's MCP
    /// server: it decides what happens without asking the user (the closed-lid answer to a
    /// permission prompt), where data about the user's work is sent (webhooks), or it is the
    /// hardware's safety guard (emergency hibernation). The CLI changes these.
    pub fn user_only(&self) -> bool {
        self.user_only
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

    /// The words a value is one of, when it is one of a few (a choice's, `true`/`false`), for
    /// shell completion; none for numbers, sounds, addresses and text.
    pub fn offered_values(&self) -> &'static [&'static str] {
        match self.kind {
            FieldKind::Bool => &["true", "false"],
            FieldKind::Choice(words) => words,
            FieldKind::Number { .. }
            | FieldKind::Sound
            | FieldKind::WebhookUrl
            | FieldKind::NtfyUrl
            | FieldKind::Text { .. }
            | FieldKind::Culture
            | FieldKind::Secret { .. } => &[],
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

impl SettingsError {
    /// `value` is not accepted for `spec`.
    pub(super) fn invalid(spec: &FieldSpec, value: impl Display) -> SettingsError {
        SettingsError::InvalidValue {
            flag: spec.flag,
            json_key: spec.json_key,
            value: value.to_string(),
            expected: spec.expected(),
        }
    }

    /// `spec` does not exist on `os`.
    pub(super) fn not_on(spec: &FieldSpec, os: Os) -> SettingsError {
        SettingsError::NotOnThisPlatform {
            flag: spec.flag,
            platforms: spec.platform_names(),
            os,
        }
    }
}
