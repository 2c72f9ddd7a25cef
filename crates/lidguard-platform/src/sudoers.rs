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
//! Allowed: `-a disablesleep 1` and `0` (closed-lid protection and its restore),
//! `-a hibernatemode 25` (lidguard's hibernate) and `-b`/`-c hibernatemode` 0, 3 and 25 (the
//! user's modes put back, each on its power source).
//! No `sleepnow` (it needs no root), no other setting, no other user.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::pmset::{HIBERNATE_MODES, PMSET, Source};
use crate::root_file::{Existing, RootFile};

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
    all.push(crate::pmset::hibernatemode_args(
        Source::All,
        crate::pmset::HIBERNATE_TO_DISK,
    ));
    for source in [Source::Battery, Source::Charger] {
        all.extend(
            HIBERNATE_MODES
                .iter()
                .map(|m| crate::pmset::hibernatemode_args(source, *m)),
        );
    }
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
    crate::root_file::has_markers(text, &MARKERS)
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

/// Why [`install`] or [`remove`] changed nothing. Each message says what to do about it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SudoersError {
    /// The user name cannot be put in a rule as it is.
    #[error(
        "{user:?} cannot be put in a sudoers rule as it is (letters, digits, '_', '-' and '.' \
         only, not starting with '-' or '.', not ALL); pass your short user name with --user"
    )]
    InvalidUser {
        /// The name given.
        user: String,
    },
    /// The drop-in directory is missing.
    #[error(
        "{} does not exist or is not a directory; this sudo does not read drop-ins from it",
        .dir.display()
    )]
    NoDropInDir {
        /// The directory looked for.
        dir: PathBuf,
    },
    /// A file of lidguard's name exists but is not lidguard's.
    #[error(
        "{} exists but was not written by lidguard (its marker lines are missing), so it was \
         left untouched; look at it, and move it away if it is no longer wanted",
        .path.display()
    )]
    ForeignFile {
        /// The file found.
        path: PathBuf,
    },
    /// The OS refused for lack of privileges.
    #[error("{action} {} needs root: run `{command}`", .path.display())]
    NeedsRoot {
        /// What was being done: "reading", "writing" or "removing".
        action: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// The command to run instead.
        command: &'static str,
    },
    /// Another I/O failure; nothing was changed.
    #[error("cannot {action} {}: {source}; nothing was changed", .path.display())]
    Io {
        /// What was being done, e.g. "read" or "write the new file into".
        action: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// `visudo` could not be run.
    #[error("cannot run {} -cf: {source}", .visudo.display())]
    NoVisudo {
        /// The program.
        visudo: PathBuf,
        /// Why it did not start.
        source: std::io::Error,
    },
    /// `visudo -cf` refused the rule.
    #[error("{} -cf {} refused it: {said}", .visudo.display(), .file.display())]
    Refused {
        /// The program.
        visudo: PathBuf,
        /// The file checked.
        file: PathBuf,
        /// What it said.
        said: String,
    },
}

/// Checks a sudoers file with `visudo -cf` (`visudo` is the program, for tests on other
/// systems). Returns what visudo said when it refused the file.
pub fn check_with_visudo(visudo: &Path, file: &Path) -> Result<(), SudoersError> {
    let out = Command::new(visudo)
        .arg("-cf")
        .arg(file)
        .output()
        .map_err(|source| SudoersError::NoVisudo {
            visudo: visudo.to_path_buf(),
            source,
        })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(SudoersError::Refused {
            visudo: visudo.to_path_buf(),
            file: file.to_path_buf(),
            said: format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout).trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        })
    }
}

/// The `visudo` of macOS (and of Debian's `sudo` package).
pub const VISUDO: &str = "/usr/sbin/visudo";

/// lidguard's drop-in in `dir`.
fn drop_in(dir: &Path) -> RootFile<'_> {
    RootFile {
        dir,
        name: SUDOERS_FILE,
        markers: &MARKERS,
        mode: MODE,
    }
}

/// What `dir` holds of lidguard's drop-in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuleState {
    /// No drop-in.
    NotInstalled,
    /// A file of that name that lidguard did not write (left alone).
    Foreign,
    /// lidguard's drop-in for this user; `current` tells whether it is exactly what
    /// [`install`] would write now (text and mode).
    InstalledFor {
        /// The user.
        user: String,
        /// Whether it is up to date.
        current: bool,
    },
    /// It could not be read; the text says why.
    Unreadable(String),
}

/// What [`install`] did (or, with `dry_run`, would do).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Installed {
    /// There was none; it was written.
    Installed,
    /// lidguard's older drop-in (or one for another user) was replaced.
    Replaced {
        /// The user it was for.
        previous_user: Option<String>,
    },
    /// It was already exactly this.
    Unchanged,
}

/// Reads lidguard's drop-in in `dir`.
pub fn status(dir: &Path) -> RuleState {
    match drop_in(dir).inspect() {
        Ok(Existing::Absent) => RuleState::NotInstalled,
        Ok(Existing::Foreign) => RuleState::Foreign,
        Ok(Existing::Ours { text, mode_ok }) => match user_from_rule(&text) {
            Some(user) => RuleState::InstalledFor {
                current: mode_ok && text == rule_text(&user),
                user,
            },
            None => RuleState::Unreadable(format!(
                "{} is lidguard's but names no user; install it again",
                rule_path(dir).display()
            )),
        },
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            RuleState::Unreadable(format!(
                "reading {} needs root: run `sudo lidguard macos-permission status`",
                rule_path(dir).display()
            ))
        }
        Err(e) => RuleState::Unreadable(format!("cannot read {}: {e}", rule_path(dir).display())),
    }
}

/// Writes lidguard's drop-in for `user` into `dir`, after `visudo -cf` accepted the text
/// (checked in a private temporary file, so sudo never sees an unchecked rule). Refuses, changing
/// nothing, for a user name that is not [valid](valid_user_name), a missing `dir`, and a file of
/// that name lidguard did not write. `dry_run` checks everything and writes nothing.
pub fn install(
    dir: &Path,
    user: &str,
    visudo: &Path,
    dry_run: bool,
) -> Result<Installed, SudoersError> {
    let again = "sudo lidguard macos-permission install";
    if !valid_user_name(user) {
        return Err(SudoersError::InvalidUser {
            user: user.to_owned(),
        });
    }
    if !dir.is_dir() {
        return Err(SudoersError::NoDropInDir {
            dir: dir.to_path_buf(),
        });
    }
    let file = drop_in(dir);
    let path = file.path();
    let text = rule_text(user);
    let outcome = match file.inspect() {
        Ok(Existing::Absent) => Installed::Installed,
        Ok(Existing::Foreign) => return Err(SudoersError::ForeignFile { path }),
        Ok(Existing::Ours { text: old, mode_ok }) if old == text && mode_ok => {
            return Ok(Installed::Unchanged);
        }
        Ok(Existing::Ours { text: old, .. }) => Installed::Replaced {
            previous_user: user_from_rule(&old),
        },
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            return Err(SudoersError::NeedsRoot {
                action: "reading",
                path,
                command: again,
            });
        }
        Err(source) => {
            return Err(SudoersError::Io {
                action: "read",
                path,
                source,
            });
        }
    };
    check_text(visudo, &text)?;
    if dry_run {
        return Ok(outcome);
    }
    file.write(&text).map_err(|(action, source)| {
        let path = dir.to_path_buf();
        if source.kind() == std::io::ErrorKind::PermissionDenied {
            SudoersError::NeedsRoot {
                action: "writing",
                path,
                command: again,
            }
        } else {
            SudoersError::Io {
                action,
                path,
                source,
            }
        }
    })?;
    Ok(outcome)
}

/// Deletes lidguard's drop-in from `dir`; `Ok(false)` when there was none. A file of that name
/// that lidguard did not write is refused and left alone.
pub fn remove(dir: &Path) -> Result<bool, SudoersError> {
    let file = drop_in(dir);
    let path = file.path();
    let failed = |action: &'static str, source: std::io::Error| {
        if source.kind() == std::io::ErrorKind::PermissionDenied {
            let action = if action == "remove" {
                "removing"
            } else {
                "reading"
            };
            SudoersError::NeedsRoot {
                action,
                path: path.clone(),
                command: "sudo lidguard macos-permission remove",
            }
        } else {
            SudoersError::Io {
                action,
                path: path.clone(),
                source,
            }
        }
    };
    match file.inspect() {
        Ok(Existing::Absent) => Ok(false),
        Ok(Existing::Foreign) => Err(SudoersError::ForeignFile { path }),
        Ok(Existing::Ours { .. }) => file.remove().map_err(|e| failed("remove", e)),
        Err(e) => Err(failed("read", e)),
    }
}

/// Checks `text` with `visudo -cf` in a private temporary file.
fn check_text(visudo: &Path, text: &str) -> Result<(), SudoersError> {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("lidguard-sudoers-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    crate::root_file::private_dir(&dir).map_err(|source| SudoersError::Io {
        action: "make",
        path: dir.clone(),
        source,
    })?;
    let file = dir.join(SUDOERS_FILE);
    let checked = lidguard_files::atomic::write(&file, text.as_bytes(), 0o600)
        .map_err(|source| SudoersError::Io {
            action: "write",
            path: file.clone(),
            source,
        })
        .and_then(|()| check_with_visudo(visudo, &file));
    let _ = std::fs::remove_dir_all(&dir);
    checked
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
             /usr/bin/pmset -a disablesleep 0, /usr/bin/pmset -a hibernatemode 25, \
             /usr/bin/pmset -b hibernatemode 0, /usr/bin/pmset -b hibernatemode 3, \
             /usr/bin/pmset -b hibernatemode 25, /usr/bin/pmset -c hibernatemode 0, \
             /usr/bin/pmset -c hibernatemode 3, /usr/bin/pmset -c hibernatemode 25"
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
        let found = ["/usr/sbin/visudo", "/usr/bin/visudo"]
            .into_iter()
            .map(PathBuf::from)
            .find(|p| p.exists());
        crate::test_support::program(found, "sudo")
    }

    #[test]
    fn visudo_accepts_the_rule_and_refuses_a_broken_one() {
        let Some(visudo) = visudo() else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(SUDOERS_FILE);
        std::fs::write(&file, rule_text("alice")).unwrap();
        check_with_visudo(&visudo, &file).unwrap();
        std::fs::write(&file, rule_text("alice").replace("NOPASSWD:", "NOPASSWD")).unwrap();
        let err = check_with_visudo(&visudo, &file).unwrap_err();
        assert!(err.to_string().contains("refused"), "{err}");
    }

    #[test]
    fn install_status_remove_round_trip() {
        let Some(visudo) = visudo() else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("admins"), "%admin ALL=(ALL) ALL\n").unwrap();
        assert_eq!(status(dir.path()), RuleState::NotInstalled);

        assert_eq!(
            install(dir.path(), "alice", &visudo, true).unwrap(),
            Installed::Installed
        );
        assert_eq!(
            status(dir.path()),
            RuleState::NotInstalled,
            "a dry run writes nothing"
        );

        assert_eq!(
            install(dir.path(), "alice", &visudo, false).unwrap(),
            Installed::Installed
        );
        let path = rule_path(dir.path());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), rule_text("alice"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
            assert_eq!(mode, 0o440);
        }
        assert_eq!(
            status(dir.path()),
            RuleState::InstalledFor {
                user: "alice".into(),
                current: true
            }
        );
        assert_eq!(
            install(dir.path(), "alice", &visudo, false).unwrap(),
            Installed::Unchanged
        );
        assert_eq!(
            install(dir.path(), "bob", &visudo, false).unwrap(),
            Installed::Replaced {
                previous_user: Some("alice".into())
            }
        );
        assert!(remove(dir.path()).unwrap());
        assert!(!remove(dir.path()).unwrap());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("admins")).unwrap(),
            "%admin ALL=(ALL) ALL\n",
            "other drop-ins are never touched"
        );
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["admins"], "no temporary files left");
    }

    #[test]
    fn a_foreign_file_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = rule_path(dir.path());
        std::fs::write(&path, "alice ALL=(ALL) NOPASSWD: ALL\n").unwrap();
        assert_eq!(status(dir.path()), RuleState::Foreign);
        let err = install(dir.path(), "alice", Path::new("/bin/true"), false).unwrap_err();
        assert!(err.to_string().contains("not written by lidguard"), "{err}");
        assert!(remove(dir.path()).is_err());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "alice ALL=(ALL) NOPASSWD: ALL\n"
        );
    }

    #[test]
    fn nothing_is_written_when_visudo_refuses_or_the_user_is_odd() {
        let dir = tempfile::tempdir().unwrap();
        let err = install(dir.path(), "alice", Path::new("/bin/false"), false).unwrap_err();
        assert!(err.to_string().contains("refused"), "{err}");
        let err = install(dir.path(), "ALL", Path::new("/bin/true"), false).unwrap_err();
        assert!(err.to_string().contains("--user"), "{err}");
        let err = install(
            &dir.path().join("missing"),
            "alice",
            Path::new("/bin/true"),
            false,
        )
        .unwrap_err();
        assert!(err.to_string().contains("does not exist"), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
