//! Text from outside (hook payloads, tool names, paths, error messages) on its way into
//! lidguard's log: one record stays one line, and nothing in it can rewrite a terminal that
//! shows the log.

use std::borrow::Cow;

/// Whether `c` must not reach the log as it is: C0 and C1 controls, DEL, and the Unicode
/// bidirectional overrides and isolates (which reorder what a reader sees).
fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every control character written as an escape (`\0`, `\n`, `\r`, `\t`,
/// `\u{1b}`); borrowed when there is nothing to escape.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\0' => out.push_str("\\0"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// One log record as bytes: its text escaped, ending in exactly one newline.
pub fn log_record(record: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(record);
    let body = text.strip_suffix('\n').unwrap_or(&text);
    let mut out = escape_controls(body).into_owned().into_bytes();
    out.push(b'\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_plain_text_is_borrowed() {
        assert!(matches!(
            escape_controls("claude-hook: PreToolUse ✓"),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            escape_controls("a\0b\nc\r\u{1b}[2J\u{7f}\u{85}\u{202e}z"),
            "a\\0b\\nc\\r\\u{1b}[2J\\u{7f}\\u{85}\\u{202e}z"
        );
        assert_eq!(
            log_record(b"x\nforged line\n"),
            b"x\\nforged line\n".to_vec()
        );
        assert_eq!(log_record(b"\xff\n"), "\u{fffd}\n".as_bytes().to_vec());
    }
}

/// `path` as an agent's config should carry it: Windows' verbatim prefix, which
/// `canonicalize` adds there (`\\?\C:\…`, `\\?\UNC\server\share\…`), is taken off, since shells
/// and other programs do not all accept it. Other paths are unchanged.
pub fn plain_path(path: &std::path::Path) -> String {
    let text = path.display().to_string();
    if let Some(unc) = text.strip_prefix(r"\\?\UNC\") {
        format!(r"\\{unc}")
    } else if let Some(rest) = text.strip_prefix(r"\\?\")
        && rest.as_bytes().get(1) == Some(&b':')
    {
        rest.to_owned()
    } else {
        text
    }
}

#[cfg(test)]
mod plain_path_tests {
    use super::plain_path;
    use std::path::Path;

    #[test]
    fn verbatim_prefixes_are_taken_off() {
        assert_eq!(
            plain_path(Path::new(r"\\?\C:\Program Files\lidguard\lidguard.exe")),
            r"C:\Program Files\lidguard\lidguard.exe"
        );
        assert_eq!(
            plain_path(Path::new(r"\\?\UNC\server\share\lidguard.exe")),
            r"\\server\share\lidguard.exe"
        );
        // A verbatim path that is not a drive path keeps its prefix (nothing else names it).
        assert_eq!(
            plain_path(Path::new(r"\\?\Volume{1}\x.exe")),
            r"\\?\Volume{1}\x.exe"
        );
        assert_eq!(
            plain_path(Path::new("/usr/bin/lidguard")),
            "/usr/bin/lidguard"
        );
    }
}
