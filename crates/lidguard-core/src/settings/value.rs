//! Parsing of the text-valued settings: sounds, webhook URLs, language tags and booleans.

use std::fmt::{self, Display};

use url::Url;

/// A sound the OS provides by name (the reference system's names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SystemSound {
    /// `Asterisk`.
    Asterisk,
    /// `Beep`.
    Beep,
    /// `Exclamation`.
    Exclamation,
    /// `Hand`.
    Hand,
    /// `Question`.
    Question,
}

impl SystemSound {
    /// All system sounds.
    pub const ALL: [SystemSound; 5] = [
        SystemSound::Asterisk,
        SystemSound::Beep,
        SystemSound::Exclamation,
        SystemSound::Hand,
        SystemSound::Question,
    ];

    /// The canonical name, e.g. `Asterisk`.
    pub const fn name(self) -> &'static str {
        match self {
            SystemSound::Asterisk => "Asterisk",
            SystemSound::Beep => "Beep",
            SystemSound::Exclamation => "Exclamation",
            SystemSound::Hand => "Hand",
            SystemSound::Question => "Question",
        }
    }

    /// Looks a sound up by name, ignoring ASCII case.
    pub fn from_name(name: &str) -> Option<SystemSound> {
        SystemSound::ALL
            .into_iter()
            .find(|sound| sound.name().eq_ignore_ascii_case(name))
    }
}

display_as!(SystemSound, name);

/// What a sound setting asks for.
///
/// The core only checks the syntax: whether a `.wav` file exists is for the shell to check.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SoundSetting {
    /// No sound.
    Off,
    /// A sound the OS provides by name.
    System(SystemSound),
    /// A `.wav` file (path as written, trimmed).
    WavFile(String),
}

impl SoundSetting {
    /// Parses a sound setting: empty or `off` (any case) is [`SoundSetting::Off`]; a system
    /// sound name (any case); or a path ending in `.wav` (any case) without control characters.
    /// Surrounding whitespace is ignored. `None` when the text is none of these.
    pub fn parse(text: &str) -> Option<SoundSetting> {
        let text = text.trim();
        if text.is_empty() || text.eq_ignore_ascii_case("off") {
            return Some(SoundSetting::Off);
        }
        if let Some(sound) = SystemSound::from_name(text) {
            return Some(SoundSetting::System(sound));
        }
        let bytes = text.as_bytes();
        let is_wav = bytes.len() > 4 && bytes[bytes.len() - 4..].eq_ignore_ascii_case(b".wav");
        (is_wav && !text.chars().any(char::is_control))
            .then(|| SoundSetting::WavFile(text.to_owned()))
    }

    /// The value stored in `settings.json`: `""`, the canonical sound name or the path.
    pub fn stored(&self) -> &str {
        match self {
            SoundSetting::Off => "",
            SoundSetting::System(sound) => sound.name(),
            SoundSetting::WavFile(path) => path,
        }
    }
}

/// Shown as the user would type it: `off`, a sound name or the path.
impl Display for SoundSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SoundSetting::Off => f.write_str("off"),
            other => f.write_str(other.stored()),
        }
    }
}

/// Parses a webhook URL: an absolute `http://` or `https://` URL with a host name, without
/// control characters. Surrounding whitespace is ignored. `None` for anything else, including
/// the empty string (which means "off" in the settings).
pub fn parse_webhook_url(text: &str) -> Option<Url> {
    let text = text.trim();
    let lower = text.get(..8).unwrap_or(text).to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://")) {
        return None;
    }
    // Reject what the WHATWG parser would quietly repair (`https:///host`, control characters).
    let after_scheme = &text[text.find("://").map_or(0, |i| i + 3)..];
    if after_scheme.starts_with(['/', '\\']) || text.chars().any(char::is_control) {
        return None;
    }
    let url = Url::parse(text).ok()?;
    let has_host = url.host_str().is_some_and(|host| !host.is_empty());
    (matches!(url.scheme(), "http" | "https") && has_host).then_some(url)
}

/// Checks a UI culture and returns its canonical spelling: `auto` (any case), or a language
/// tag whose `-`-separated subtags are 2 to 8 ASCII letters or digits, the first being 2 or 3
/// letters. The language is lowercased, 2-letter regions uppercased and 4-letter scripts
/// title-cased (`zh-hant-tw` → `zh-Hant-TW`).
pub(super) fn canonical_culture(text: &str) -> Option<String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("auto") {
        return Some("auto".to_owned());
    }
    let mut out = String::with_capacity(text.len());
    for (i, subtag) in text.split('-').enumerate() {
        let ok_len = if i == 0 {
            (2..=3).contains(&subtag.len())
        } else {
            (2..=8).contains(&subtag.len())
        };
        let ok_chars = if i == 0 {
            subtag.bytes().all(|b| b.is_ascii_alphabetic())
        } else {
            subtag.bytes().all(|b| b.is_ascii_alphanumeric())
        };
        if !ok_len || !ok_chars {
            return None;
        }
        let alphabetic = subtag.bytes().all(|b| b.is_ascii_alphabetic());
        if i > 0 {
            out.push('-');
        }
        if i > 0 && alphabetic && subtag.len() == 2 {
            out.push_str(&subtag.to_ascii_uppercase());
        } else if i > 0 && alphabetic && subtag.len() == 4 {
            out.push_str(&subtag[..1].to_ascii_uppercase());
            out.push_str(&subtag[1..].to_ascii_lowercase());
        } else {
            out.push_str(&subtag.to_ascii_lowercase());
        }
    }
    Some(out)
}

/// Parses a CLI boolean: `true/false`, `yes/no`, `on/off`, `1/0`, ignoring case and surrounding
/// whitespace.
pub fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Some(true),
        "false" | "no" | "off" | "0" => Some(false),
        _ => None,
    }
}
