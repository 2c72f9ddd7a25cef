//! The polkit rules file behind `lidguard linux-permission install|remove|status`.
//!
//! lidguard keeps a laptop awake through systemd-logind's inhibitors and suspends it
//! when the agents are done. logind asks polkit before it hands out those locks or suspends
//! the machine, and by default polkit only allows that, without a password, to the user of an
//! active local session. lidguard runs as a background per-user service, which is not such a
//! session, so logind often refuses it (or would need a password nobody is there to type).
//!
//! This module manages one rules file, [`RULE_FILE`] in [`RULES_DIR`], that says yes to one
//! named user for exactly the eight logind actions in [`ACTIONS`]:
//!
//! - `suspend`, `hibernate` and their `-multiple-sessions` variants: put the machine to sleep
//!   once the work is done, also while other users are logged in;
//! - `inhibit-block-sleep` and `inhibit-block-idle`: keep the machine awake while agents work;
//! - `inhibit-delay-sleep`: hold sleep while the lid is open so that a suspend the user asks
//!   for still goes through (after lidguard let go);
//! - `inhibit-handle-lid-switch`: keep it awake with the lid closed.
//!
//! Nothing else is granted: no power-off or reboot, no `*-ignore-inhibit` actions (lidguard
//! must never override other programs' locks), no other users. For any other user or action
//! the rule returns nothing, so the system's other rules decide as before. The rule does not
//! ask for an active or local session, because lidguard's service has neither.
//!
//! The file starts with the two [`MARKERS`] lines; only a file carrying both is treated as
//! lidguard's. A file of that name without them is never overwritten or deleted, and no other
//! file in the directory is ever touched. Writes go through a temporary file in the same
//! directory (whose name does not end in `.rules`, so polkit ignores it) that is renamed over
//! the rules file, so polkit never sees a half-written rule.
//!
//! The directory is a parameter everywhere so tests can use a temporary one; production code
//! passes [`Path::new(RULES_DIR)`](RULES_DIR). Changing the real directory needs root.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::root_file::{Existing, RootFile, is_absent};

/// The directory polkit reads local rules from.
pub const RULES_DIR: &str = "/etc/polkit-1/rules.d";

/// The name of lidguard's rules file in [`RULES_DIR`]. polkit reads rules files in name order
/// and the first rule with an answer wins, so `49-` comes before the usual `50-default.rules`.
pub const RULE_FILE: &str = "49-lidguard.rules";

/// The logind polkit actions the rule allows the chosen user, and nothing more.
pub const ACTIONS: [&str; 8] = [
    "org.freedesktop.login1.suspend",
    "org.freedesktop.login1.suspend-multiple-sessions",
    "org.freedesktop.login1.hibernate",
    "org.freedesktop.login1.hibernate-multiple-sessions",
    "org.freedesktop.login1.inhibit-block-sleep",
    "org.freedesktop.login1.inhibit-block-idle",
    "org.freedesktop.login1.inhibit-delay-sleep",
    "org.freedesktop.login1.inhibit-handle-lid-switch",
];

/// The two comment lines that mark a rules file as lidguard's. A file is lidguard's only when
/// both appear, each on a line of its own.
pub const MARKERS: [&str; 2] = [
    "// Managed by lidguard (linux-permission). Do not edit by hand.",
    "// lidguard polkit rule v1",
];

/// The longest user name accepted, in characters.
pub const MAX_USER_LEN: usize = 256;

/// The permission bits of the rules file: polkitd runs as its own user and must read it.
const RULE_MODE: u32 = 0o644;

/// What precedes the user name's string literal in the rule.
const USER_TEST: &str = "subject.user == ";

/// What the rules directory says about lidguard's rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuleState {
    /// There is no [`RULE_FILE`] (or no rules directory at all).
    NotInstalled,
    /// A [`RULE_FILE`] exists but was not written by lidguard (its markers are missing, or it
    /// is not a regular file). lidguard leaves it alone.
    Foreign,
    /// lidguard's rule is installed for this user.
    InstalledFor(String),
    /// The file could not be inspected, or it is lidguard's but its user cannot be read back;
    /// the text says why and what to do.
    Unreadable(String),
}

/// What [`install`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InstallOutcome {
    /// There was no rule file; it was written.
    Installed,
    /// lidguard's rule file was there with other content (usually another user) and was
    /// replaced.
    Replaced {
        /// The user the old rule was for; `None` when it could not be read back.
        previous_user: Option<String>,
    },
    /// lidguard's rule for this user was already installed exactly as it would be written;
    /// nothing was changed.
    Unchanged,
}

/// What [`remove`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RemoveOutcome {
    /// lidguard's rule file was deleted.
    Removed,
    /// There was no rule file; nothing was changed.
    NothingToRemove,
}

/// Why [`install`] or [`remove`] changed nothing. Each message says what to do about it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolkitError {
    /// A rules file of lidguard's name exists but is not lidguard's.
    #[error(
        "{} exists but was not written by lidguard (its lidguard marker lines are missing), so \
         it was left untouched; look at it and, if it is no longer wanted, move it out of the \
         rules directory before running the command again",
        .path.display()
    )]
    ForeignFile {
        /// The file found.
        path: PathBuf,
    },
    /// The rules directory is missing (or is not a directory).
    #[error(
        "the polkit rules directory {} does not exist or is not a directory, so polkit seems \
         not to be installed; install polkit (the `polkit` or `policykit-1` package) and run the \
         command again",
        .dir.display()
    )]
    NoRulesDir {
        /// The directory looked for.
        dir: PathBuf,
    },
    /// The user name cannot be put in a rule.
    #[error(
        "{user:?} is not a valid user name (it must be non-empty, at most {MAX_USER_LEN} \
         characters, and contain no '/', NUL or newline); pass the login name of the user who \
         runs lidguard, e.g. `--user \"$USER\"`"
    )]
    InvalidUser {
        /// The name given.
        user: String,
    },
    /// The OS refused for lack of privileges.
    #[error("{action} {} needs root: run `{command}`", .path.display())]
    NeedsRoot {
        /// What was being done: "reading", "writing" or "changing".
        action: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// The command to run instead.
        command: String,
    },
    /// Another I/O failure. The rules file was left as it was.
    #[error(
        "could not {action} {}: {source}; the polkit rules file was left as it was, fix the \
         cause and run the command again",
        .path.display()
    )]
    Io {
        /// What was being done, e.g. "read" or "rename into place".
        action: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
}

/// The path of lidguard's rules file in `dir`.
pub fn rule_path(dir: &Path) -> PathBuf {
    dir.join(RULE_FILE)
}

/// Whether `name` can be put in a rule: non-empty, at most [`MAX_USER_LEN`] characters, and
/// without '/', NUL or newline. Anything else is allowed, since it is escaped in the rule.
pub fn valid_user_name(name: &str) -> bool {
    !name.is_empty() && name.chars().count() <= MAX_USER_LEN && !name.contains(['/', '\0', '\n'])
}

/// The full text of the rules file for `user`: the [`MARKERS`], a short explanation and one
/// `polkit.addRule` call that answers `polkit.Result.YES` when the subject is `user` and the
/// action is one of [`ACTIONS`], and nothing otherwise.
///
/// The user name is written as an escaped JavaScript string literal, so any name yields a
/// valid rule that compares against exactly that name. The text is plain ES5 (polkit's engine
/// may be Duktape) and pure ASCII.
pub fn rule_text(user: &str) -> String {
    let mut text = String::new();
    for marker in MARKERS {
        text.push_str(marker);
        text.push('\n');
    }
    text.push_str(
        "//\n\
         // Lets one user suspend or hibernate the machine and take systemd-logind's blocking\n\
         // locks (sleep, idle, lid switch) without a password, so lidguard can keep the\n\
         // laptop awake while agents work and suspend it when they are done. Any other user\n\
         // or action is left to the other rules.\n\
         // Remove with: sudo lidguard linux-permission remove\n\
         polkit.addRule(function (action, subject) {\n\
         \x20   var lidguardActions = [\n",
    );
    for (i, action) in ACTIONS.iter().enumerate() {
        let comma = if i + 1 < ACTIONS.len() { "," } else { "" };
        text.push_str(&format!("        \"{action}\"{comma}\n"));
    }
    text.push_str("    ];\n");
    text.push_str(&format!(
        "    if ({USER_TEST}{} && lidguardActions.indexOf(action.id) >= 0) {{\n",
        js_string(user)
    ));
    text.push_str(
        "        return polkit.Result.YES;\n\
         \x20   }\n\
         });\n",
    );
    text
}

/// Inspects `dir` for lidguard's rule. Never fails: problems come back as
/// [`RuleState::Unreadable`]. A missing directory counts as [`RuleState::NotInstalled`].
pub fn status(dir: &Path) -> RuleState {
    let path = rule_path(dir);
    match rule_file(dir).inspect() {
        Ok(Existing::Absent) => RuleState::NotInstalled,
        Ok(Existing::Foreign) => RuleState::Foreign,
        Ok(Existing::Ours { text, .. }) => match user_from_rule(&text) {
            Some(user) => RuleState::InstalledFor(user),
            None => RuleState::Unreadable(format!(
                "{} is lidguard's but the user it is for cannot be read; install it again with \
             `sudo lidguard linux-permission install --user <name>`",
                path.display()
            )),
        },
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => RuleState::Unreadable(format!(
            "reading {} needs root: run `sudo lidguard linux-permission status`",
            path.display()
        )),
        Err(e) => RuleState::Unreadable(format!("could not read {}: {e}", path.display())),
    }
}

/// Writes lidguard's rule for `user` into `dir` (atomically, mode 0644 on Unix).
///
/// Refuses, changing nothing, when `user` is not [valid](valid_user_name), when `dir` does not
/// exist (polkit is not installed; the directory is never created) and when a [`RULE_FILE`]
/// that is not lidguard's is in the way. lidguard's own file is replaced, also when it was for
/// another user; when it already holds exactly this rule nothing is written.
pub fn install(dir: &Path, user: &str) -> Result<InstallOutcome, PolkitError> {
    if !valid_user_name(user) {
        return Err(PolkitError::InvalidUser {
            user: user.to_owned(),
        });
    }
    let command = format!(
        "sudo lidguard linux-permission install --user {}",
        shell_quote(user)
    );
    check_dir(dir, &command)?;

    let path = rule_path(dir);
    let file = rule_file(dir);
    let existing = file
        .inspect()
        .map_err(|e| fs_error("reading", "read", &path, e, &command))?;
    let text = rule_text(user);
    let outcome = match existing {
        Existing::Absent => InstallOutcome::Installed,
        Existing::Foreign => return Err(PolkitError::ForeignFile { path }),
        Existing::Ours { text: old, mode_ok } => {
            if old == text && mode_ok {
                return Ok(InstallOutcome::Unchanged);
            }
            InstallOutcome::Replaced {
                previous_user: user_from_rule(&old),
            }
        }
    };
    file.write(&text)
        .map_err(|(action, e)| fs_error("writing", action, dir, e, &command))?;
    Ok(outcome)
}

/// Deletes lidguard's rule from `dir`.
///
/// A [`RULE_FILE`] that is not lidguard's is refused and left untouched; no file (or no
/// directory) means there is nothing to do.
pub fn remove(dir: &Path) -> Result<RemoveOutcome, PolkitError> {
    let command = "sudo lidguard linux-permission remove";
    let path = rule_path(dir);
    let file = rule_file(dir);
    let existing = file
        .inspect()
        .map_err(|e| fs_error("reading", "read", &path, e, command))?;
    match existing {
        Existing::Absent => Ok(RemoveOutcome::NothingToRemove),
        Existing::Foreign => Err(PolkitError::ForeignFile { path }),
        Existing::Ours { .. } => match file.remove() {
            Ok(true) => Ok(RemoveOutcome::Removed),
            Ok(false) => Ok(RemoveOutcome::NothingToRemove),
            Err(e) => Err(fs_error(
                "changing",
                "remove the rules file from",
                dir,
                e,
                command,
            )),
        },
    }
}

/// lidguard's rules file in `dir`.
fn rule_file(dir: &Path) -> RootFile<'_> {
    RootFile {
        dir,
        name: RULE_FILE,
        markers: &MARKERS,
        mode: RULE_MODE,
    }
}

/// The user a lidguard rule is for: the string literal after [`USER_TEST`].
fn user_from_rule(text: &str) -> Option<String> {
    let start = text.find(USER_TEST)? + USER_TEST.len();
    parse_js_string(&text[start..])
}

/// Checks that the rules directory exists.
fn check_dir(dir: &Path, command: &str) -> Result<(), PolkitError> {
    match fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(PolkitError::NoRulesDir {
            dir: dir.to_owned(),
        }),
        Err(e) if is_absent(&e) => Err(PolkitError::NoRulesDir {
            dir: dir.to_owned(),
        }),
        Err(e) => Err(fs_error("reading", "look at", dir, e, command)),
    }
}

/// Turns an I/O error into [`PolkitError::NeedsRoot`] when privileges are missing (with
/// `root_action`, e.g. "writing"), else into [`PolkitError::Io`] (with `action`, e.g. "write").
fn fs_error(
    root_action: &'static str,
    action: &'static str,
    path: &Path,
    source: io::Error,
    command: &str,
) -> PolkitError {
    if source.kind() == io::ErrorKind::PermissionDenied {
        PolkitError::NeedsRoot {
            action: root_action,
            path: path.to_owned(),
            command: command.to_owned(),
        }
    } else {
        PolkitError::Io {
            action,
            path: path.to_owned(),
            source,
        }
    }
}

/// `s` as a double-quoted JavaScript string literal in pure ASCII: backslash and double quote
/// are escaped, and every control or non-ASCII character becomes `\uXXXX` (UTF-16 units), so
/// nothing can end the literal or the line early.
fn js_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
    out
}

/// Reads a double-quoted JavaScript string literal at the start of `s` (as [`js_string`]
/// writes it, plus the other common escapes). `None` when it is not one.
fn parse_js_string(s: &str) -> Option<String> {
    let mut chars = s.strip_prefix('"')?.chars();
    let mut units: Vec<u16> = Vec::new();
    let mut buf = [0u16; 2];
    loop {
        let c = chars.next()?;
        let decoded = match c {
            '"' => return String::from_utf16(&units).ok(),
            '\n' | '\r' | '\u{2028}' | '\u{2029}' => return None,
            '\\' => match chars.next()? {
                'n' => '\n',
                'r' => '\r',
                't' => '\t',
                'b' => '\u{8}',
                'f' => '\u{c}',
                'v' => '\u{b}',
                '0' => '\0',
                'u' => {
                    units.push(hex_unit(&mut chars, 4)?);
                    continue;
                }
                'x' => {
                    units.push(hex_unit(&mut chars, 2)?);
                    continue;
                }
                other @ ('\\' | '"' | '\'' | '/') => other,
                _ => return None,
            },
            other => other,
        };
        units.extend_from_slice(decoded.encode_utf16(&mut buf));
    }
}

/// Reads exactly `digits` hex digits as one UTF-16 unit.
fn hex_unit(chars: &mut std::str::Chars<'_>, digits: usize) -> Option<u16> {
    let mut value: u16 = 0;
    for _ in 0..digits {
        let digit = chars.next()?.to_digit(16)?;
        value = value * 16 + u16::try_from(digit).ok()?;
    }
    Some(value)
}

/// `s` quoted for a POSIX shell when it needs quoting, for the commands in error messages.
fn shell_quote(s: &str) -> String {
    let plain = s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '@' | '+' | ':'));
    if plain && !s.starts_with('-') {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A neighbour file polkit ships, and one an administrator wrote.
    const NEIGHBOURS: [(&str, &str); 2] = [
        (
            "50-default.rules",
            "polkit.addAdminRule(function(action, subject) {\n    return [\"unix-group:wheel\"];\n});\n",
        ),
        (
            "10-admin.rules",
            "// site policy\npolkit.addRule(function(action, subject) { return; });\n",
        ),
    ];

    /// A file of lidguard's name that someone else wrote.
    const FOREIGN: &str = "// my own rule\npolkit.addRule(function(action, subject) {\n    \
                           if (subject.user == \"root\") { return polkit.Result.YES; }\n});\n";

    fn write_neighbours(dir: &Path) {
        for (name, text) in NEIGHBOURS {
            fs::write(dir.join(name), text).unwrap();
        }
    }

    fn assert_neighbours_intact(dir: &Path) {
        for (name, text) in NEIGHBOURS {
            assert_eq!(
                fs::read(dir.join(name)).unwrap(),
                text.as_bytes(),
                "{name} changed"
            );
        }
    }

    /// The directory's file names, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[cfg(unix)]
    fn mode_of(path: &Path) -> u32 {
        lidguard_files::private::mode_of(path).unwrap()
    }

    #[test]
    fn install_into_empty_dir() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(status(dir.path()), RuleState::NotInstalled);
        assert_eq!(
            install(dir.path(), "alice").unwrap(),
            InstallOutcome::Installed
        );

        let path = rule_path(dir.path());
        let text = fs::read_to_string(&path).unwrap();
        assert_eq!(text, rule_text("alice"));
        for marker in MARKERS {
            assert!(
                text.lines().any(|l| l == marker),
                "marker {marker:?} missing"
            );
        }
        assert!(text.contains("subject.user == \"alice\""));
        for action in ACTIONS {
            assert!(text.contains(&format!("\"{action}\"")), "{action} missing");
        }
        assert!(text.contains("polkit.addRule(function"));
        assert!(text.contains("return polkit.Result.YES;"));
        assert!(text.is_ascii());
        #[cfg(unix)]
        assert_eq!(mode_of(&path), 0o644);
        assert_eq!(status(dir.path()), RuleState::InstalledFor("alice".into()));
        // No temporary file is left behind.
        assert_eq!(names(dir.path()), vec![RULE_FILE.to_owned()]);
    }

    fn replaced(previous: &str) -> InstallOutcome {
        InstallOutcome::Replaced {
            previous_user: Some(previous.into()),
        }
    }

    fn on_disk(dir: &Path) -> String {
        fs::read_to_string(rule_path(dir)).unwrap()
    }

    #[test]
    fn install_twice_is_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        install(dir.path(), "alice").unwrap();
        assert_eq!(
            install(dir.path(), "alice").unwrap(),
            InstallOutcome::Unchanged
        );
        assert_eq!(status(dir.path()), RuleState::InstalledFor("alice".into()));
    }

    #[test]
    fn install_for_another_user_replaces() {
        let dir = tempfile::tempdir().unwrap();
        install(dir.path(), "alice").unwrap();
        assert_eq!(install(dir.path(), "bob").unwrap(), replaced("alice"));
        assert_eq!(on_disk(dir.path()), rule_text("bob"));
        assert_eq!(status(dir.path()), RuleState::InstalledFor("bob".into()));
        assert_eq!(names(dir.path()), vec![RULE_FILE.to_owned()]);
    }

    #[test]
    fn install_replaces_an_older_text_of_ours() {
        let dir = tempfile::tempdir().unwrap();
        let old = format!(
            "{}\n{}\npolkit.addRule(function (action, subject) {{\n    if (subject.user == \
             \"alice\") {{ return polkit.Result.YES; }}\n}});\n",
            MARKERS[0], MARKERS[1]
        );
        fs::write(rule_path(dir.path()), &old).unwrap();
        assert_eq!(status(dir.path()), RuleState::InstalledFor("alice".into()));
        assert_eq!(install(dir.path(), "alice").unwrap(), replaced("alice"));
        assert_eq!(on_disk(dir.path()), rule_text("alice"));
    }

    #[cfg(unix)]
    #[test]
    fn install_repairs_the_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = rule_path(dir.path());
        fs::write(&path, rule_text("alice")).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(install(dir.path(), "alice").unwrap(), replaced("alice"));
        assert_eq!(mode_of(&path), 0o644);
        assert_eq!(
            install(dir.path(), "alice").unwrap(),
            InstallOutcome::Unchanged
        );
    }

    #[test]
    fn foreign_file_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = rule_path(dir.path());
        fs::write(&path, FOREIGN).unwrap();
        assert_eq!(status(dir.path()), RuleState::Foreign);

        let err = install(dir.path(), "alice").unwrap_err();
        assert!(
            matches!(&err, PolkitError::ForeignFile { path: p } if *p == path),
            "{err:?}"
        );
        assert!(err.to_string().contains("left untouched"), "{err}");
        assert_eq!(fs::read(&path).unwrap(), FOREIGN.as_bytes());

        let err = remove(dir.path()).unwrap_err();
        assert!(
            matches!(&err, PolkitError::ForeignFile { path: p } if *p == path),
            "{err:?}"
        );
        assert_eq!(fs::read(&path).unwrap(), FOREIGN.as_bytes());
        assert_eq!(status(dir.path()), RuleState::Foreign);
        assert_eq!(names(dir.path()), vec![RULE_FILE.to_owned()]);
    }

    /// The file there is not lidguard's: status says so, and install and remove refuse it.
    fn assert_left_alone_as_foreign(dir: &Path, user: &str) {
        assert_eq!(status(dir), RuleState::Foreign);
        assert!(matches!(
            install(dir, user),
            Err(PolkitError::ForeignFile { .. })
        ));
        assert!(matches!(remove(dir), Err(PolkitError::ForeignFile { .. })));
    }

    #[test]
    fn one_marker_is_not_enough() {
        for marker in MARKERS {
            let dir = tempfile::tempdir().unwrap();
            let text = format!("{marker}\n{FOREIGN}");
            fs::write(rule_path(dir.path()), &text).unwrap();
            assert_left_alone_as_foreign(dir.path(), "alice");
            assert_eq!(on_disk(dir.path()), text);
        }
    }

    #[cfg(unix)]
    #[test]
    fn symlink_is_foreign_and_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.txt");
        fs::write(&target, rule_text("alice")).unwrap();
        std::os::unix::fs::symlink(&target, rule_path(dir.path())).unwrap();
        assert_left_alone_as_foreign(dir.path(), "bob");
        assert_eq!(fs::read_to_string(&target).unwrap(), rule_text("alice"));
        assert!(rule_path(dir.path()).is_symlink());
    }

    #[test]
    fn a_directory_of_that_name_is_foreign() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(rule_path(dir.path())).unwrap();
        assert_left_alone_as_foreign(dir.path(), "alice");
        assert!(rule_path(dir.path()).is_dir());
    }

    #[test]
    fn neighbours_are_untouched() {
        let dir = tempfile::tempdir().unwrap();
        write_neighbours(dir.path());
        assert_eq!(status(dir.path()), RuleState::NotInstalled);

        assert_eq!(
            install(dir.path(), "alice").unwrap(),
            InstallOutcome::Installed
        );
        assert_neighbours_intact(dir.path());
        install(dir.path(), "bob").unwrap();
        assert_neighbours_intact(dir.path());
        assert_eq!(
            names(dir.path()),
            vec!["10-admin.rules", RULE_FILE, "50-default.rules"]
        );

        assert_eq!(remove(dir.path()).unwrap(), RemoveOutcome::Removed);
        assert_neighbours_intact(dir.path());
        assert_eq!(
            names(dir.path()),
            vec!["10-admin.rules", "50-default.rules"]
        );

        assert_eq!(remove(dir.path()).unwrap(), RemoveOutcome::NothingToRemove);
        assert_neighbours_intact(dir.path());
    }

    #[test]
    fn remove_deletes_ours() {
        let dir = tempfile::tempdir().unwrap();
        install(dir.path(), "alice").unwrap();
        assert_eq!(remove(dir.path()).unwrap(), RemoveOutcome::Removed);
        assert!(!rule_path(dir.path()).exists());
        assert_eq!(status(dir.path()), RuleState::NotInstalled);
        assert!(names(dir.path()).is_empty());
    }

    #[test]
    fn remove_with_nothing_there() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(remove(dir.path()).unwrap(), RemoveOutcome::NothingToRemove);
        let missing = dir.path().join("no-such-dir");
        assert_eq!(remove(&missing).unwrap(), RemoveOutcome::NothingToRemove);
        assert!(!missing.exists());
    }

    #[test]
    fn ours_with_an_unreadable_user() {
        let dir = tempfile::tempdir().unwrap();
        let text = format!(
            "{}\n{}\npolkit.addRule(function () {{}});\n",
            MARKERS[0], MARKERS[1]
        );
        fs::write(rule_path(dir.path()), &text).unwrap();
        let RuleState::Unreadable(reason) = status(dir.path()) else {
            panic!("expected Unreadable, got {:?}", status(dir.path()));
        };
        assert!(reason.contains("install it again"), "{reason}");
        assert_eq!(
            install(dir.path(), "alice").unwrap(),
            InstallOutcome::Replaced {
                previous_user: None
            }
        );
        assert_eq!(remove(dir.path()).unwrap(), RemoveOutcome::Removed);
    }

    #[test]
    fn missing_dir_is_no_rules_dir() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("polkit-1").join("rules.d");
        let err = install(&missing, "alice").unwrap_err();
        assert!(
            matches!(&err, PolkitError::NoRulesDir { dir: d } if *d == missing),
            "{err:?}"
        );
        assert!(
            err.to_string().contains("polkit seems not to be installed"),
            "{err}"
        );
        assert!(!missing.exists(), "the rules directory must not be created");
        assert!(!dir.path().join("polkit-1").exists());
        assert_eq!(status(&missing), RuleState::NotInstalled);

        // A file where the directory should be.
        let file = dir.path().join("rules.d");
        fs::write(&file, "x").unwrap();
        assert!(matches!(
            install(&file, "alice"),
            Err(PolkitError::NoRulesDir { .. })
        ));
        assert_eq!(fs::read(&file).unwrap(), b"x");
        assert_eq!(status(&file), RuleState::NotInstalled);
    }

    #[test]
    fn invalid_user_names_are_refused() {
        let long = "a".repeat(MAX_USER_LEN + 1);
        for bad in ["", "a/b", "a\0b", "a\nb", "/", long.as_str()] {
            assert!(!valid_user_name(bad), "{bad:?}");
            let dir = tempfile::tempdir().unwrap();
            let err = install(dir.path(), bad).unwrap_err();
            assert!(
                matches!(&err, PolkitError::InvalidUser { user } if user == bad),
                "{err:?}"
            );
            assert!(err.to_string().contains("--user"), "{err}");
            assert!(names(dir.path()).is_empty());
        }
        // Checked before the directory, so the message is about the name.
        assert!(matches!(
            install(Path::new("/nonexistent/lidguard"), ""),
            Err(PolkitError::InvalidUser { .. })
        ));
        let longest = "é".repeat(MAX_USER_LEN);
        for good in [
            "alice",
            "a.b-c_d",
            "DOMAIN\\user",
            "we\"ird",
            "x\ty",
            longest.as_str(),
        ] {
            assert!(valid_user_name(good), "{good:?}");
        }
    }

    #[test]
    fn tricky_user_names_are_escaped() {
        let dir = tempfile::tempdir().unwrap();
        let user = r#"x" || true || "\y"#;
        install(dir.path(), user).unwrap();
        let text = on_disk(dir.path());
        assert!(
            text.contains(r#"subject.user == "x\" || true || \"\\y" &&"#),
            "{text}"
        );
        assert!(!text.contains(r#""x" || true"#), "{text}");
        assert!(!text.contains(r#"|| "\y"#), "{text}");
        assert_eq!(status(dir.path()), RuleState::InstalledFor(user.into()));

        // Control, line-separator and non-ASCII characters round-trip and keep the text ASCII.
        for user in [
            "tab\there",
            "cr\rlf",
            "bell\u{7}",
            "ls\u{2028}ps\u{2029}",
            "jörg",
            "😀x",
            "a'b",
        ] {
            let text = rule_text(user);
            assert!(text.is_ascii(), "{user:?}");
            assert_eq!(
                text.lines().count(),
                rule_text("a").lines().count(),
                "{user:?}"
            );
            assert_eq!(user_from_rule(&text).as_deref(), Some(user));
            install(dir.path(), user).unwrap();
            assert_eq!(status(dir.path()), RuleState::InstalledFor(user.into()));
        }
        assert_eq!(js_string("a\u{2028}"), r#""a\u2028""#);
        assert_eq!(js_string("\u{1}"), r#""\u0001""#);
        assert_eq!(js_string("😀"), r#""\ud83d\ude00""#);
    }

    #[test]
    fn parse_js_string_rejects_broken_literals() {
        assert_eq!(parse_js_string(r#""ok" && x"#).as_deref(), Some("ok"));
        assert_eq!(
            parse_js_string(r#""a\/b\x41\u00e9""#).as_deref(),
            Some("a/bAé")
        );
        assert_eq!(parse_js_string("\"unterminated"), None);
        assert_eq!(parse_js_string("\"line\nbreak\""), None);
        assert_eq!(parse_js_string(r#""bad\q""#), None);
        assert_eq!(parse_js_string(r#""short\u12""#), None);
        assert_eq!(parse_js_string(r#""lone\ud800""#), None);
        assert_eq!(parse_js_string("no quote"), None);
    }

    #[test]
    fn errors_say_what_to_do() {
        let denied = || io::Error::from(io::ErrorKind::PermissionDenied);
        let err = fs_error(
            "writing",
            "create a temporary file in",
            Path::new(RULES_DIR),
            denied(),
            &format!(
                "sudo lidguard linux-permission install --user {}",
                shell_quote("alice")
            ),
        );
        assert_eq!(
            err.to_string(),
            "writing /etc/polkit-1/rules.d needs root: run \
             `sudo lidguard linux-permission install --user alice`"
        );
        let err = fs_error(
            "writing",
            "write",
            Path::new("/x"),
            io::Error::other("disk full"),
            "cmd",
        );
        assert!(matches!(
            err,
            PolkitError::Io {
                action: "write",
                ..
            }
        ));
        assert!(
            err.to_string().starts_with("could not write /x: disk full"),
            "{err}"
        );

        assert_eq!(shell_quote("alice"), "alice");
        assert_eq!(shell_quote("o'neil x"), r"'o'\''neil x'");
        assert_eq!(shell_quote("-x"), "'-x'");
    }

    #[test]
    fn stale_temp_names_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let stale = dir
            .path()
            .join(format!(".{RULE_FILE}.{}.0.tmp", std::process::id()));
        fs::write(&stale, "stale").unwrap();
        assert_eq!(
            install(dir.path(), "alice").unwrap(),
            InstallOutcome::Installed
        );
        assert_eq!(fs::read(&stale).unwrap(), b"stale");
        assert_eq!(status(dir.path()), RuleState::InstalledFor("alice".into()));
    }

    /// Evaluates the generated rule with node against a stub `polkit` object.
    #[test]
    fn rule_evaluates_in_node() {
        const SCRIPT_TAIL: &str = r#"
const want = process.env.LIDGUARD_USER;
const actions = process.env.LIDGUARD_ACTIONS.split(",");
if (calls !== 1 || typeof rule !== "function") {
    console.error("addRule was called " + calls + " times");
    process.exit(2);
}
const users = [want, want + "x", want.slice(0, -1), "root", "", undefined];
const others = ["org.freedesktop.login1.reboot", "org.freedesktop.login1.power-off",
    "org.freedesktop.login1.suspend-ignore-inhibit", "org.freedesktop.login1.inhibit-delay-shutdown",
    "org.freedesktop.login1.suspendx", "org.freedesktop.login1", "", undefined];
let failures = 0;
let checked = 0;
for (const user of users) {
    for (const id of actions.concat(others)) {
        const got = rule({ id: id }, { user: user, local: false, active: false });
        const expected = user === want && actions.includes(id) ? "yes" : undefined;
        checked++;
        if (got !== expected) {
            failures++;
            console.error(JSON.stringify({ user: user, id: id, got: got, expected: expected }));
        }
    }
}
console.log("checked " + checked);
process.exit(failures === 0 ? 0 : 1);
"#;
        for user in [
            "alice",
            r#"x" || true || "\y"#,
            "tab\tcr\rbell\u{7}",
            "ls\u{2028}ps\u{2029}",
            "jörg😀",
            "a'b</script>",
        ] {
            let script = format!(
                "let rule; let calls = 0;\n\
                 const polkit = {{ addRule: f => {{ rule = f; calls++; }}, Result: {{ YES: \"yes\" }} }};\n\
                 {}{SCRIPT_TAIL}",
                rule_text(user)
            );
            let stdout = crate::test_support::stdout_of(
                std::process::Command::new("node")
                    .arg("-e")
                    .arg(&script)
                    .env("LIDGUARD_USER", user)
                    .env("LIDGUARD_ACTIONS", ACTIONS.join(",")),
                &format!("node (user {user:?}; node must be installed to run this test)"),
            );
            // 6 users × (the actions + 8 others).
            let checked = format!("checked {}", 6 * (ACTIONS.len() + 8));
            assert_eq!(stdout.trim(), checked, "user {user:?}");
        }
    }
}
