//! What a config file carries around its content that an edit must give back: a byte order
//! mark (Windows editors write one) and CRLF line endings. Parsers see the content without
//! them; the edited text gets them back, so new lines match the old ones and removing what was
//! added restores the original bytes.

use std::borrow::Cow;

/// The BOM and line-ending style of one file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Envelope {
    bom: bool,
    crlf: bool,
}

impl Envelope {
    /// Splits `text` into its envelope and a body with no BOM and, when every line ends in
    /// CRLF, LF line endings. A file that mixes both keeps its bytes as they are.
    pub(crate) fn open(text: &str) -> (Envelope, Cow<'_, str>) {
        let (bom, body) = match text.strip_prefix('\u{feff}') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let lf = body.matches('\n').count();
        let crlf = lf > 0 && body.matches("\r\n").count() == lf;
        let body = if crlf {
            Cow::Owned(body.replace("\r\n", "\n"))
        } else {
            Cow::Borrowed(body)
        };
        (Envelope { bom, crlf }, body)
    }

    /// `body` in this envelope.
    pub(crate) fn close(self, body: &str) -> String {
        let mut out = String::with_capacity(body.len() + 16);
        if self.bom {
            out.push('\u{feff}');
        }
        if self.crlf {
            out.push_str(&body.replace('\n', "\r\n"));
        } else {
            out.push_str(body);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bom_and_crlf_come_back_and_mixed_files_stay_as_they_are() {
        for text in [
            "\u{feff}a = 1\r\nb = 2\r\n",
            "a\r\nb\n",
            "",
            "x",
            "\u{feff}",
        ] {
            let (env, body) = Envelope::open(text);
            assert!(!body.starts_with('\u{feff}'));
            assert_eq!(env.close(&body), text);
        }
        let (env, body) = Envelope::open("a\r\nb\r\n");
        assert_eq!(body, "a\nb\n");
        assert_eq!(env.close("a\nb\nc\n"), "a\r\nb\r\nc\r\n");
    }
}
