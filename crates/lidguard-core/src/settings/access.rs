//! Each field's value read, set and checked, through the accessors of its entry in the field
//! table.

use super::Settings;
use super::error::SettingsError;
use super::fields::FieldSpec;
use super::os::Os;
use super::table::find_field;

impl Settings {
    pub(super) fn check_field(&self, spec: &FieldSpec) -> Result<(), SettingsError> {
        (spec.access.check)(self, spec)
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
        (spec.access.set)(self, spec, raw)
    }

    /// The current value of a field as the user would type it, or `None` for an unknown flag or
    /// a platform-only field that is not set (another OS). `flag` is the flag or an alias, with
    /// or without `--`.
    ///
    /// Booleans are `true`/`false`, choices lowercase (`sleep`), numbers plain, and unset
    /// numbers, sounds and URLs `off`. Feeding the result back to [`Settings::set_field`]
    /// leaves the settings unchanged.
    pub fn get_field(&self, flag: &str) -> Option<String> {
        (find_field(flag)?.access.get)(self)
    }

    /// Whether a value is stored for a field that is absent until set.
    pub(super) fn value_stored(&self, spec: &FieldSpec) -> bool {
        (spec.access.stored)(self)
    }
}
