//! Text from outside (hook payloads, tool names, paths, replies) shown to a person — in the log,
//! a terminal, a phone notification: one line stays one line, and nothing in it can rewrite a
//! terminal or reorder what the reader sees.

use std::borrow::Cow;

/// Whether `c` must not be shown as it is: C0 and C1 controls, DEL, the Unicode bidirectional
/// marks, overrides and isolates (which reorder what a reader sees, so a command can render
/// reversed), and the invisible format characters (zero-width spaces and joiners, the byte
/// order mark, tag characters) that hide text between visible words.
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206f}'
                | '\u{feff}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{e0000}'..='\u{e007f}'
        )
}

/// `text` with every such character written as an escape (`\0`, `\n`, `\r`, `\t`,
/// `\u{1b}`, `\u{202e}`); borrowed when there is nothing to escape.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    escape_controls_but(text, &[])
}

/// [`escape_controls`], leaving the characters of `keep` as they are (a terminal's own line
/// breaks and tabs).
pub fn escape_controls_but<'a>(text: &'a str, keep: &[char]) -> Cow<'a, str> {
    let escaped = |c: char| needs_escape(c) && !keep.contains(&c);
    if !text.chars().any(escaped) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if !escaped(c) => out.push(c),
            '\0' => out.push_str("\\0"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_bidi_and_invisible_characters_are_escaped() {
        assert!(matches!(
            escape_controls("claude-hook: PreToolUse ✓ é"),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            escape_controls("a\0b\nc\r\u{1b}[2J\u{7f}\u{85}\u{202e}z"),
            "a\\0b\\nc\\r\\u{1b}[2J\\u{7f}\\u{85}\\u{202e}z"
        );
        assert_eq!(
            escape_controls_but("a\tb\nc\u{1b}", &['\n', '\t']),
            "a\tb\nc\\u{1b}"
        );
        assert_eq!(
            escape_controls("rm\u{200b} -rf\u{2067} /\u{feff}\u{e0041}"),
            "rm\\u{200b} -rf\\u{2067} /\\u{feff}\\u{e0041}"
        );
    }
}
