//! Why a setting could not be read, set or accepted: one error per problem, each naming the
//! field by its flag and JSON key and saying what is accepted.

use super::os::Os;

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
    /// A JSON or type error, with the key path when there is one. serde_json's message ends
    /// with its own " at line L column C"; the position is kept in the fields instead.
    pub(super) fn from_json_error(
        error: &serde_path_to_error::Error<serde_json::Error>,
    ) -> SettingsError {
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
