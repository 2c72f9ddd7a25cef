//! The only place that writes to stdout and stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::Write;

/// stdout was closed by its reader (`lidguard status | head`): not worth reporting.
#[derive(Debug, thiserror::Error)]
#[error("stdout closed")]
pub(crate) struct StdoutClosed;

/// A closed pipe on stdout becomes [`StdoutClosed`], so it is never confused with a broken
/// socket to the daemon.
fn stdout_error(e: std::io::Error) -> std::io::Error {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::io::Error::other(StdoutClosed)
    } else {
        e
    }
}

/// Writes `text` and a newline to stdout, shown safely ([`shown`]).
pub(crate) fn line(text: &str) -> std::io::Result<()> {
    write_line(&shown(text))
}

fn write_line(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush())
        .map_err(stdout_error)
}

/// Text for a terminal: text from outside (session ids, paths, reasons, tool names from hook
/// payloads) may hold escape sequences that rewrite the screen, or bidi and invisible characters
/// that change what it seems to say; every such character is written as an escape (`\u{1b}`).
/// Line breaks and tabs of lidguard's own layout stay.
fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    lidguard_core::text::escape_controls_but(text, &['\n', '\t'])
}

/// Whether to colour what is written: on a terminal, unless `NO_COLOR` is set to anything
/// (<https://no-color.org>).
pub(crate) fn colour_wanted() -> bool {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal()
        && lidguard_files::environment::var("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// A state's colour on a terminal.
#[derive(Clone, Copy)]
pub(crate) enum Colour {
    /// Fine: held, ✓.
    Good,
    /// Wrong: not held although wanted, ✗.
    Bad,
    /// For the user to look at: paused, waiting, `!`.
    Note,
}

/// `text` as written, with its first `len` bytes painted in `colour` when colour is wanted.
fn painted(text: &str, len: usize, colour: Colour) -> String {
    let code = match colour {
        Colour::Good => "32",
        Colour::Bad => "31",
        Colour::Note => "33",
    };
    match text.split_at_checked(len) {
        Some((head, rest)) if colour_wanted() => format!("\x1b[{code}m{head}\x1b[0m{rest}"),
        _ => text.to_owned(),
    }
}

/// Writes a `doctor`-style line, its leading ✓, ✗ or `!` in colour on a terminal.
pub(crate) fn marked_line(text: &str) -> std::io::Result<()> {
    let text = shown(text);
    let colour = if text.starts_with('✓') {
        Some(Colour::Good)
    } else if text.starts_with('✗') {
        Some(Colour::Bad)
    } else if text.starts_with('!') {
        Some(Colour::Note)
    } else {
        None
    };
    match colour {
        Some(colour) => {
            let mark = text.chars().next().map_or(0, char::len_utf8);
            write_line(&painted(&text, mark, colour))
        }
        None => write_line(&text),
    }
}

/// Writes `text` like [`prompt`], with the lines that start with `prefix` in `colour` on a
/// terminal (`status`: the protection line).
pub(crate) fn prompt_painting(text: &str, prefix: &str, colour: Colour) -> std::io::Result<()> {
    let text = shown(text);
    let mut out = String::with_capacity(text.len() + 16);
    for line in text.split_inclusive('\n') {
        if line.starts_with(prefix) {
            let body = line.trim_end_matches('\n');
            out.push_str(&painted(body, body.len(), colour));
            out.push_str(&line[body.len()..]);
        } else {
            out.push_str(line);
        }
    }
    raw(out.as_bytes())
}

/// Writes bytes to stdout as they are (generated scripts and pages).
pub(crate) fn raw(bytes: &[u8]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(stdout_error)
}

/// Writes `value` as pretty JSON to stdout.
pub(crate) fn json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    // JSON escapes controls itself; its strings stay exact for the programs that read them.
    let text = serde_json::to_string_pretty(value)?;
    Ok(write_line(&text)?)
}

/// The start of a listing: the entries as JSON, or `none` when there are none. `true` when
/// the caller is to print them as text lines.
pub(crate) fn listing<T: serde::Serialize>(
    entries: &[T],
    as_json: bool,
    none: &str,
) -> anyhow::Result<bool> {
    if as_json {
        json(&entries)?;
    } else if entries.is_empty() {
        line(none)?;
    }
    Ok(!as_json && !entries.is_empty())
}

/// Writes text to stdout without a trailing newline (prompts), shown safely.
pub(crate) fn prompt(text: &str) -> std::io::Result<()> {
    raw(shown(text).as_bytes())
}

/// Whether an error only means that whoever read our stdout went away.
pub(crate) fn is_stdout_closed(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
            .is_some_and(|inner| inner.is::<StdoutClosed>())
    })
}

/// An error and its causes as one text, each cause said once: a cause whose words the message
/// already holds (an error that names its source in its own sentence) is not repeated.
pub(crate) fn error_text(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

/// A mistake in what was typed (a value a flag does not take, a command that does not exist):
/// reported like any error, and the exit status is 2, as for clap's own usage errors.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Usage(pub(crate) String);

/// The exit status for `err`: 2 for a usage mistake, else 1.
pub(crate) fn exit_code_for(err: &anyhow::Error) -> std::process::ExitCode {
    if err.chain().any(|cause| cause.is::<Usage>()) {
        std::process::ExitCode::from(2)
    } else {
        std::process::ExitCode::FAILURE
    }
}

/// Reports an error to the human at the terminal.
pub(crate) fn error(text: &str) {
    eprintln!("lidguard: error: {}", shown(text));
}

/// A note for the human at the terminal (on stderr, which stays out of a command's output).
pub(crate) fn note(text: &str) {
    eprintln!("lidguard: {}", shown(text));
}

/// A warning for the human at the terminal.
pub(crate) fn warn(text: &str) {
    eprintln!("lidguard: warning: {}", shown(text));
}

#[cfg(test)]
mod error_text_tests {
    #[derive(Debug, thiserror::Error)]
    #[error("{file}: {source}\nNothing was changed.")]
    struct Names {
        file: &'static str,
        #[source]
        source: std::io::Error,
    }

    #[test]
    fn each_cause_is_said_once() {
        let err = anyhow::Error::new(Names {
            file: "/x",
            source: std::io::Error::other("refused"),
        });
        assert_eq!(super::error_text(&err), "/x: refused\nNothing was changed.");
        let err = anyhow::Error::new(std::io::Error::other("no socket")).context("cannot start");
        assert_eq!(super::error_text(&err), "cannot start: no socket");
    }
}
