//! Text from outside (hook payloads, tool names, paths, error messages) on its way into
//! lidguard's log: one record stays one line, and nothing in it can rewrite a terminal that
//! shows the log.

pub use lidguard_core::text::escape_controls;

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
    fn a_record_stays_one_line() {
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
