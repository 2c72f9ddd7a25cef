//! The only place that writes to stdout and stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::Write;

/// Writes `text` and a newline to stdout.
pub(crate) fn line(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.write_all(b"\n")?;
    out.flush()
}

/// Writes `value` as pretty JSON to stdout.
pub(crate) fn json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    Ok(line(&text)?)
}

/// Writes text to stdout without a trailing newline (prompts).
pub(crate) fn prompt(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// Reports an error to the human at the terminal.
pub(crate) fn error(text: &str) {
    eprintln!("lidguard: error: {text}");
}

/// A warning for the human at the terminal.
pub(crate) fn warn(text: &str) {
    eprintln!("lidguard: warning: {text}");
}
