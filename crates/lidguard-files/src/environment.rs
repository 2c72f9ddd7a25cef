//! The process environment, read in this one place: everything else takes a lookup
//! (`Fn(&str) -> Option<OsString>`), which tests replace with their own.

use std::ffi::OsString;

/// The variable `name` of this process's environment, if it is set (an empty value counts as
/// set; callers that treat it as unset filter it).
#[allow(
    clippy::disallowed_methods,
    reason = "the one place the real environment is read"
)]
pub fn var(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// [`var`] as text, when it is set and valid Unicode.
pub fn text(name: &str) -> Option<String> {
    var(name).and_then(|value| value.into_string().ok())
}
