//! The sudoers drop-in behind `lidguard macos-permission install`: it lets one user run exactly
//! the `pmset` invocations lidguard needs, without a password, and nothing else.
//!
//! Facts (`man sudoers`; `man pmset`):
//! - macOS's sudo reads `/private/etc/sudoers`, which includes `/private/etc/sudoers.d`;
//! - a command listed with arguments matches only exactly those arguments (a bare path would
//!   allow any), so each allowed invocation is spelled out with its absolute path;
//! - a drop-in must be mode 0440 and owned by root, and a syntax error in it breaks sudo for
//!   everyone, so the text is checked with `visudo -cf FILE` before it is put in place.
//!
//! Allowed: `disablesleep 1` and `0` (closed-lid protection and its restore) and
//! `hibernatemode 0`, `3` and `25` (lidguard's hibernate sets 25 and puts the user's mode back).
//! No `sleepnow` (it needs no root), no other setting, no other user.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::pmset::{HIBERNATE_MODES, PMSET};

/// The directory macOS's sudo includes drop-ins from.
pub const SUDOERS_DIR: &str = "/private/etc/sudoers.d";

/// lidguard's drop-in's name (no dot or `~`: sudo skips such names in `sudoers.d`).
pub const SUDOERS_FILE: &str = "lidguard";

/// The two comment lines that mark the drop-in as lidguard's.
pub const MARKERS: [&str; 2] = [
    "# Managed by lidguard (macos-permission). Do not edit by hand.",
    "# lidguard sudoers rule v1",
];

/// The drop-in's mode (sudo ignores a drop-in that others may write).
pub const MODE: u32 = 0o440;

/// The `pmset` argument lists the rule allows.
pub fn allowed_invocations() -> Vec<Vec<String>> {
    let mut all = vec![
        crate::pmset::disablesleep_args(true),
        crate::pmset::disablesleep_args(false),
    ];
    all.extend(
        HIBERNATE_MODES
            .iter()
            .map(|m| crate::pmset::hibernatemode_args(*m)),
    );
    all
}

/// Whether `name` can stand in the rule as it is: a macOS short name of letters, digits, `_`,
/// `-` and `.`, not starting with `-` or `.`, and not sudoers' reserved word `ALL`. Anything
/// else is refused rather than quoted, so the rule can never mean more than one user.
pub fn valid_user_name(name: &str) -> bool {
    !name.is_empty()
        && name != "ALL"
        && name.len() <= 255
        && !name.starts_with(['-', '.'])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// The drop-in's text for `user` (who must be [valid](valid_user_name)).
pub fn rule_text(user: &str) -> String {
    let commands: Vec<String> = allowed_invocations()
        .iter()
        .map(|args| format!("{PMSET} {}", args.join(" ")))
        .collect();
    let mut text = String::new();
    for marker in MARKERS {
        text.push_str(marker);
        text.push('\n');
    }
    text.push_str(
        "#\n\
         # Lets one user change macOS's SleepDisabled and hibernatemode through pmset without a\n\
         # password, so lidguard can keep the Mac awake with the lid closed while agents work\n\
         # and put the user's values back afterwards. Nothing else is allowed.\n\
         # Remove with: sudo lidguard macos-permission remove\n",
    );
    text.push_str(&format!(
        "{user} ALL=(root) NOPASSWD: {}\n",
        commands.join(", ")
    ));
    text
}

/// Whether `text` carries both [`MARKERS`], each on a line of its own.
pub fn has_markers(text: &str) -> bool {
    MARKERS
        .iter()
        .all(|marker| text.lines().any(|line| line.trim() == *marker))
}

/// The user a lidguard drop-in is for.
pub fn user_from_rule(text: &str) -> Option<String> {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| line.split_once(" ALL=(root) NOPASSWD: "))
        .map(|(user, _)| user.trim().to_owned())
}

/// The path of the drop-in in `dir`.
pub fn rule_path(dir: &Path) -> PathBuf {
    dir.join(SUDOERS_FILE)
}

/// Checks a sudoers file with `visudo -cf` (`visudo` is the program, for tests on other
/// systems). Returns what visudo said when it refused the file.
pub fn check_with_visudo(visudo: &Path, file: &Path) -> Result<(), String> {
    let out = Command::new(visudo)
        .arg("-cf")
        .arg(file)
        .output()
        .map_err(|e| format!("cannot run {} -cf: {e}", visudo.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{} -cf {} refused it: {}{}",
            visudo.display(),
            file.display(),
            String::from_utf8_lossy(&out.stdout).trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_names_each_invocation_exactly() {
        let text = rule_text("alice");
        assert!(has_markers(&text));
        let rule = text.lines().find(|l| !l.starts_with('#')).unwrap();
        assert_eq!(
            rule,
            "alice ALL=(root) NOPASSWD: /usr/bin/pmset -a disablesleep 1, \
             /usr/bin/pmset -a disablesleep 0, /usr/bin/pmset -a hibernatemode 0, \
             /usr/bin/pmset -a hibernatemode 3, /usr/bin/pmset -a hibernatemode 25"
        );
        assert_eq!(user_from_rule(&text).as_deref(), Some("alice"));
        assert_eq!(text.lines().filter(|l| !l.starts_with('#')).count(), 1);
    }

    #[test]
    fn odd_user_names_are_refused() {
        for ok in ["alice", "bob.smith", "_lidguard", "a-b", "user1"] {
            assert!(valid_user_name(ok), "{ok}");
        }
        for bad in [
            "", "-alice", ".x", "a b", "a,b", "a:b", "%admin", "#501", "ALL", "a\nb", "é",
        ] {
            assert!(!valid_user_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn markers_must_each_be_a_line() {
        assert!(!has_markers(&MARKERS.join(" ")));
        assert!(!has_markers(MARKERS[0]));
    }

    /// The real `visudo` from Debian's `sudo` package, where installed (`.ci/run` installs it).
    fn visudo() -> Option<PathBuf> {
        ["/usr/sbin/visudo", "/usr/bin/visudo"]
            .into_iter()
            .map(PathBuf::from)
            .find(|p| p.exists())
    }

    #[test]
    fn visudo_accepts_the_rule_and_refuses_a_broken_one() {
        let Some(visudo) = visudo() else {
            assert!(
                std::env::var_os("CI").is_none(),
                "visudo is missing: .ci/run installs the sudo package"
            );
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(SUDOERS_FILE);
        std::fs::write(&file, rule_text("alice")).unwrap();
        check_with_visudo(&visudo, &file).unwrap();
        std::fs::write(&file, rule_text("alice").replace("NOPASSWD:", "NOPASSWD")).unwrap();
        let err = check_with_visudo(&visudo, &file).unwrap_err();
        assert!(err.contains("refused"), "{err}");
    }
}
