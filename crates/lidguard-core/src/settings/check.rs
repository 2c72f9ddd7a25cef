//! The per-kind checks and parsers that `validate` and `set_field` share.

use std::fmt::Display;

use super::error::SettingsError;
use super::fields::{FieldKind, FieldSpec};
use super::ntfy::NtfyTopic;
use super::value;
use super::value::{SoundSetting, parse_bool, parse_webhook_url};

/// The default power-request reason.
pub const DEFAULT_POWER_REQUEST_REASON: &str =
    "lidguard is keeping the system awake while an agent session is running.";

/// Checks a number against the spec's range; `None` is accepted only when `off` is.
pub(super) fn check_number(spec: &FieldSpec, value: Option<i64>) -> Result<(), SettingsError> {
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
pub(super) fn parse_number(spec: &FieldSpec, raw: &str) -> Result<Option<u32>, SettingsError> {
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
pub(super) fn parse_required_number(spec: &FieldSpec, raw: &str) -> Result<u32, SettingsError> {
    parse_number(spec, raw)?.ok_or_else(|| SettingsError::invalid(spec, raw))
}

/// Parses a percentage field: `off` (when allowed) or a whole number in range.
pub(super) fn parse_percent(spec: &FieldSpec, raw: &str) -> Result<Option<u8>, SettingsError> {
    parse_number(spec, raw)?
        .map(|v| u8::try_from(v).map_err(|_| SettingsError::invalid(spec, raw)))
        .transpose()
}

/// Parses a signed number field that has no `off` (its range is the kind's).
pub(super) fn parse_signed(spec: &FieldSpec, raw: &str) -> Result<i32, SettingsError> {
    i32::try_from(parse_required_number(spec, raw)?).map_err(|_| SettingsError::invalid(spec, raw))
}

pub(super) fn parse_bool_for(spec: &FieldSpec, raw: &str) -> Result<bool, SettingsError> {
    parse_bool(raw).ok_or_else(|| SettingsError::invalid(spec, raw))
}

pub(super) fn parse_sound(spec: &FieldSpec, raw: &str) -> Result<String, SettingsError> {
    SoundSetting::parse(raw)
        .map(|sound| sound.stored().to_owned())
        .ok_or_else(|| SettingsError::invalid(spec, raw))
}

/// Stored URLs are empty (off) or a valid webhook URL, trimmed.
pub(super) fn check_url(spec: &FieldSpec, stored: &str) -> Result<(), SettingsError> {
    if stored.is_empty() || parse_webhook_url(stored).is_some() {
        Ok(())
    } else {
        Err(SettingsError::invalid(spec, stored))
    }
}

pub(super) fn parse_url(spec: &FieldSpec, raw: &str) -> Result<String, SettingsError> {
    let text = raw.trim();
    if text.is_empty() || text.eq_ignore_ascii_case("off") {
        return Ok(String::new());
    }
    check_url(spec, text)?;
    Ok(text.to_owned())
}

pub(super) fn check_reason(spec: &FieldSpec, stored: &str) -> Result<(), SettingsError> {
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
pub(super) fn check_secret(spec: &FieldSpec, stored: &str) -> Result<(), SettingsError> {
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

pub(super) fn parse_secret(spec: &FieldSpec, raw: &str) -> Result<String, SettingsError> {
    let text = raw.trim();
    let text = if text.eq_ignore_ascii_case("off") {
        ""
    } else {
        text
    };
    check_secret(spec, text)?;
    Ok(text.to_owned())
}

pub(super) fn check_ntfy_url(spec: &FieldSpec, stored: &str) -> Result<(), SettingsError> {
    if stored.is_empty() || NtfyTopic::parse(stored).is_some() {
        Ok(())
    } else {
        Err(SettingsError::invalid(spec, stored))
    }
}

pub(super) fn parse_reason(spec: &FieldSpec, raw: &str) -> Result<String, SettingsError> {
    let text = raw.trim();
    if text.is_empty() {
        return Ok(DEFAULT_POWER_REQUEST_REASON.to_owned());
    }
    check_reason(spec, text)?;
    Ok(text.to_owned())
}

pub(super) fn parse_culture(spec: &FieldSpec, raw: &str) -> Result<String, SettingsError> {
    value::canonical_culture(raw).ok_or_else(|| SettingsError::invalid(spec, raw))
}

pub(super) fn check_culture(spec: &FieldSpec, stored: &str) -> Result<(), SettingsError> {
    parse_culture(spec, stored).map(drop)
}

pub(super) fn parse_choice<T>(
    spec: &FieldSpec,
    raw: &str,
    from_name: fn(&str) -> Option<T>,
) -> Result<T, SettingsError> {
    from_name(raw).ok_or_else(|| SettingsError::invalid(spec, raw))
}

/// Renders an optional number the way the user types it.
pub(super) fn number_text(value: Option<impl Display>) -> String {
    value.map_or_else(|| "off".to_owned(), |v| v.to_string())
}

/// Renders a string where empty means off.
pub(super) fn off_if_empty(value: &str) -> String {
    if value.is_empty() {
        "off".to_owned()
    } else {
        value.to_owned()
    }
}
