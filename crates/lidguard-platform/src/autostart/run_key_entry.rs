//! The Run key entry's command line, plain text tested on every platform (see `run_key`).

use std::path::Path;

/// The GUI-subsystem program that starts the tray.
pub(super) const LAUNCHER: &str = "lidguard-tray.exe";

/// The command line: the launcher quoted (its path may hold spaces).
pub(super) fn command(launcher: &Path) -> String {
    format!("\"{}\"", launcher.display())
}

/// A command line lidguard wrote: a quoted `lidguard-tray.exe`, or (an earlier lidguard's) a
/// quoted `lidguard.exe` then `tray`.
pub(super) fn ours(command: &str) -> bool {
    let quoted_exe = |rest: &str, name: &str| {
        rest.strip_prefix('"')
            .is_some_and(|exe| exe.to_ascii_lowercase().ends_with(name))
    };
    match command.strip_suffix("\" tray") {
        Some(rest) => {
            quoted_exe(rest, "\\lidguard.exe") || rest.eq_ignore_ascii_case("\"lidguard.exe")
        }
        None => command
            .strip_suffix('"')
            .is_some_and(|rest| quoted_exe(rest, "\\lidguard-tray.exe")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lidguards_entries_old_and_new_and_the_users_own() {
        let launcher = format!(r"C:\Program Files\lidguard\{LAUNCHER}");
        assert_eq!(
            command(Path::new(&launcher)),
            r#""C:\Program Files\lidguard\lidguard-tray.exe""#
        );
        for lidguards in [
            r#""C:\Program Files\lidguard\lidguard-tray.exe""#,
            r#""C:\Users\a\.cargo\bin\LIDGUARD-TRAY.EXE""#,
            r#""C:\Users\a\.cargo\bin\lidguard.exe" tray"#,
        ] {
            assert!(ours(lidguards), "{lidguards}");
        }
        for users in [
            r"C:\tools\other.exe tray",
            r#""C:\tools\notlidguard-tray.exe""#,
            r#""C:\tools\mylidguard.exe" tray"#,
            r#""C:\x\lidguard-tray.exe" --hidden"#,
            "",
        ] {
            assert!(!ours(users), "{users}");
        }
    }
}
