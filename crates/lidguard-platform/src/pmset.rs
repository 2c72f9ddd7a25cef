//! macOS's `pmset`: reading its settings and the exact command lines lidguard runs.
//!
//! Facts (`man pmset`; outputs quoted in public posts and repositories, kept as fixtures in
//! `tests/fixtures/macos/` with their sources):
//! - `pmset -g` needs no root and prints a `System-wide power settings:` block; once
//!   `disablesleep` has been written it holds a `SleepDisabled` line (`SleepDisabled\t\t1`,
//!   tabs or spaces); a Mac where it was never written has no such line, which means 0;
//! - the `Currently in use:` block has one `name value` line per setting, `hibernatemode 3`
//!   among them;
//! - changing a setting needs root: `pmset -a disablesleep 1|0`, `pmset -a hibernatemode N`;
//!   lidguard runs them as `sudo -n /usr/bin/pmset …` (no prompt: without the sudoers rule of
//!   `macos-permission install` it fails at once) unless it already runs as root.

use crate::policy::PolicyError;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

pub use crate::saved_setting::Setting;

/// The absolute path the sudoers rule names.
pub const PMSET: &str = "/usr/bin/pmset";

/// The absolute path of `sudo`.
pub const SUDO: &str = "/usr/bin/sudo";

/// The `hibernatemode` values Apple supports (0 sleep, 3 sleep with a disk copy, 25 disk only).
pub const HIBERNATE_MODES: [u32; 3] = [0, 3, 25];

/// The hibernate mode that powers memory off (what lidguard's hibernate uses).
pub const HIBERNATE_TO_DISK: u32 = 25;

/// Whether `pmset -g` output says sleep is disabled (`SleepDisabled 1`); no such line means it
/// was never set, which is 0.
pub fn sleep_disabled(pmset_g: &str) -> bool {
    setting(pmset_g, "SleepDisabled").is_some_and(|v| v == 1)
}

/// The `hibernatemode` in use, from `pmset -g` output.
pub fn hibernate_mode(pmset_g: &str) -> Option<u32> {
    setting(pmset_g, "hibernatemode")
}

/// The number on the first line whose first word is `name` (values may be followed by notes
/// such as `(sleep prevented by powerd)`).
fn setting(pmset_g: &str, name: &str) -> Option<u32> {
    pmset_g.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        (words.next()? == name)
            .then(|| words.next()?.parse().ok())
            .flatten()
    })
}

/// The arguments of `pmset` that set `disablesleep`.
pub fn disablesleep_args(disabled: bool) -> Vec<String> {
    let value = if disabled { "1" } else { "0" };
    ["-a", "disablesleep", value].map(str::to_owned).to_vec()
}

/// The arguments of `pmset` that set `hibernatemode`.
pub fn hibernatemode_args(mode: u32) -> Vec<String> {
    vec!["-a".into(), "hibernatemode".into(), mode.to_string()]
}

/// The command line that runs `pmset ARGS` with root rights: as is for root (`euid` 0), else
/// through `sudo -n`, which fails at once instead of asking for a password.
pub fn privileged(pmset: &str, args: &[String], euid: u32) -> Vec<String> {
    let mut line = Vec::new();
    if euid != 0 {
        line.extend([SUDO.to_owned(), "-n".to_owned()]);
    }
    line.push(pmset.to_owned());
    line.extend(args.iter().cloned());
    line
}

/// `pmset` itself: `pmset -g` to read, root rights (`sudo -n` unless `euid` is 0) to write.
#[derive(Clone, Debug)]
pub struct Pmset {
    program: String,
    euid: u32,
}

impl Pmset {
    /// `/usr/bin/pmset`, writes through `sudo -n` unless `euid` is 0.
    pub fn new(euid: u32) -> Pmset {
        Pmset::with_program(PMSET, euid)
    }

    /// Another program in `pmset`'s place (a stand-in that records its calls, in tests).
    pub fn with_program(program: impl Into<String>, euid: u32) -> Pmset {
        Pmset {
            program: program.into(),
            euid,
        }
    }

    /// `pmset sleepnow`, which needs no root: it asks the kernel to sleep now and returns.
    pub fn sleep_now(&self) -> Result<(), PolicyError> {
        run(&[self.program.clone(), "sleepnow".to_owned()]).map(drop)
    }

    /// `pmset -g`.
    pub fn settings(&self) -> Result<String, PolicyError> {
        run(&[self.program.clone(), "-g".to_owned()])
    }

    /// Runs `pmset ARGS` with root rights.
    pub fn set(&self, args: &[String]) -> Result<(), PolicyError> {
        run(&privileged(&self.program, args, self.euid))
            .map(drop)
            .map_err(|e| PolicyError::NeedsRoot(Box::new(e)))
    }
}

/// `SleepDisabled` through `pmset`.
#[derive(Clone, Debug)]
pub struct SleepDisabled(pub Pmset);

impl Setting<bool> for SleepDisabled {
    fn read(&self) -> Result<bool, PolicyError> {
        self.0.settings().map(|text| sleep_disabled(&text))
    }

    fn write(&self, disabled: bool) -> Result<(), PolicyError> {
        self.0.set(&disablesleep_args(disabled))
    }
}

/// `hibernatemode` through `pmset`.
#[derive(Clone, Debug)]
pub struct HibernateMode(pub Pmset);

impl Setting<u32> for HibernateMode {
    fn read(&self) -> Result<u32, PolicyError> {
        let text = self.0.settings()?;
        hibernate_mode(&text)
            .ok_or_else(|| PolicyError::Missing("pmset -g shows no hibernatemode".to_owned()))
    }

    fn write(&self, mode: u32) -> Result<(), PolicyError> {
        self.0.set(&hibernatemode_args(mode))
    }
}

/// Runs a command line and returns its stdout, or an error with what it printed (stderr, then
/// stdout: `pmset` prints some of its errors on stdout).
pub(crate) fn run(line: &[String]) -> Result<String, PolicyError> {
    let shown = line.join(" ");
    let Some((program, args)) = line.split_first() else {
        return Err(PolicyError::Missing("an empty command line".to_owned()));
    };
    let out = Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|source| PolicyError::Spawn {
            shown: shown.clone(),
            source,
        })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        let said = [&out.stderr, &out.stdout]
            .iter()
            .map(|bytes| String::from_utf8_lossy(bytes).trim().to_owned())
            .filter(|text| !text.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        Err(PolicyError::Command {
            shown,
            status: out.status.to_string(),
            said,
        })
    }
}

fn pmset_here() -> Pmset {
    #[cfg(unix)]
    let euid = rustix::process::geteuid().as_raw();
    #[cfg(not(unix))]
    let euid = 0;
    Pmset::new(euid)
}

/// The `SleepDisabled` lidguard changes: `pmset`, or the file below `LIDGUARD_SYS_ROOT` when
/// tests relocate the system.
pub fn sleep_setting(roots: &crate::roots::Roots) -> Arc<dyn Setting<bool>> {
    if roots.overridden {
        Arc::new(FileSetting::sleep_disabled(&roots.sys_root))
    } else {
        Arc::new(SleepDisabled(pmset_here()))
    }
}

/// The kernel lidguard reads back and asks to sleep ([`crate::give_back`]): `IOPMrootDomain` and
/// `pmset sleepnow`, or the files below `LIDGUARD_SYS_ROOT` when tests relocate the system.
pub fn kernel(roots: &crate::roots::Roots) -> Arc<dyn crate::give_back::Kernel> {
    if roots.overridden {
        return Arc::new(crate::give_back::FileKernel::below(&roots.sys_root));
    }
    #[cfg(target_os = "macos")]
    let read: fn() -> Option<bool> = crate::macos::iokit::sleep_disabled;
    // Elsewhere there is no root domain to read: the request itself tells.
    #[cfg(not(target_os = "macos"))]
    let read: fn() -> Option<bool> = || None;
    Arc::new(crate::give_back::PmsetKernel::new(pmset_here(), read))
}

/// The `hibernatemode` lidguard changes to hibernate, like [`sleep_setting`].
pub fn hibernate_setting(roots: &crate::roots::Roots) -> Arc<dyn Setting<u32>> {
    if roots.overridden {
        Arc::new(FileSetting::hibernate_mode(&roots.sys_root))
    } else {
        Arc::new(HibernateMode(pmset_here()))
    }
}

/// A setting kept in a file as a number, for tests: `<root>/power/sleep-disabled` (0 or 1) and
/// `<root>/power/hibernate-mode`; a missing file reads 0 (`SleepDisabled` never written). Used
/// instead of `pmset` when `LIDGUARD_SYS_ROOT` is set, the seam that relocates `/sys` on Linux.
#[derive(Clone, Debug)]
pub struct FileSetting {
    path: PathBuf,
}

impl FileSetting {
    /// `SleepDisabled` below `sys_root`.
    pub fn sleep_disabled(sys_root: &Path) -> FileSetting {
        FileSetting {
            path: sys_root.join("power").join("sleep-disabled"),
        }
    }

    /// `hibernatemode` below `sys_root`.
    pub fn hibernate_mode(sys_root: &Path) -> FileSetting {
        FileSetting {
            path: sys_root.join("power").join("hibernate-mode"),
        }
    }

    fn number(&self) -> Result<u32, PolicyError> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => text
                .trim()
                .parse()
                .map_err(|e| PolicyError::file(&self.path, e)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
            Err(e) => Err(PolicyError::file(&self.path, e)),
        }
    }

    fn set_number(&self, value: u32) -> Result<(), PolicyError> {
        lidguard_files::atomic::write(&self.path, format!("{value}\n").as_bytes(), 0o600)
            .map_err(|e| PolicyError::file(&self.path, e))
    }
}

impl Setting<bool> for FileSetting {
    fn read(&self) -> Result<bool, PolicyError> {
        self.number().map(|n| n == 1)
    }

    fn write(&self, value: bool) -> Result<(), PolicyError> {
        self.set_number(u32::from(value))
    }
}

impl Setting<u32> for FileSetting {
    fn read(&self) -> Result<u32, PolicyError> {
        self.number()
    }

    fn write(&self, value: u32) -> Result<(), PolicyError> {
        self.set_number(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/macos")
            .join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        // The fixtures start with `#` lines naming their source.
        text.lines()
            .skip_while(|l| l.starts_with('#'))
            .map(|l| format!("{l}\n"))
            .collect()
    }

    #[test]
    fn sleep_disabled_from_real_outputs() {
        assert!(sleep_disabled(&fixture(
            "pmset-g-sleepdisabled-1-spaces.txt"
        )));
        assert!(sleep_disabled(&fixture("pmset-g-sleepdisabled-1-tab.txt")));
        assert!(!sleep_disabled(&fixture("pmset-g-sleepdisabled-0-tab.txt")));
        // Never written: no line at all.
        assert!(!sleep_disabled(&fixture("pmset-g-default.txt")));
    }

    #[test]
    fn hibernate_mode_from_real_outputs() {
        assert_eq!(hibernate_mode(&fixture("pmset-g-default.txt")), Some(3));
        assert_eq!(
            hibernate_mode(&fixture("pmset-g-sleepdisabled-1-spaces.txt")),
            Some(3)
        );
        assert_eq!(
            hibernate_mode(&fixture("pmset-g-hibernatemode-0.txt")),
            Some(0)
        );
        assert_eq!(hibernate_mode("System-wide power settings:\n"), None);
    }

    #[test]
    fn notes_after_values_and_look_alikes_are_not_confused() {
        let text = " sleep                1 (sleep prevented by powerd)\n \
                    SleepDisabledX 1\n hibernatemodes 9\n";
        assert!(!sleep_disabled(text));
        assert_eq!(hibernate_mode(text), None);
        assert_eq!(setting(text, "sleep"), Some(1));
    }

    #[test]
    fn command_lines() {
        assert_eq!(
            privileged(PMSET, &disablesleep_args(true), 501),
            [
                "/usr/bin/sudo",
                "-n",
                "/usr/bin/pmset",
                "-a",
                "disablesleep",
                "1"
            ]
        );
        assert_eq!(
            privileged(PMSET, &disablesleep_args(false), 0),
            ["/usr/bin/pmset", "-a", "disablesleep", "0"]
        );
        assert_eq!(
            privileged(PMSET, &hibernatemode_args(25), 501),
            [
                "/usr/bin/sudo",
                "-n",
                "/usr/bin/pmset",
                "-a",
                "hibernatemode",
                "25"
            ]
        );
    }

    #[test]
    fn file_settings_read_missing_as_zero_and_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("power")).unwrap();
        let sleep = FileSetting::sleep_disabled(dir.path());
        assert!(!Setting::<bool>::read(&sleep).unwrap());
        Setting::<bool>::write(&sleep, true).unwrap();
        assert!(Setting::<bool>::read(&sleep).unwrap());
        let mode = FileSetting::hibernate_mode(dir.path());
        assert_eq!(Setting::<u32>::read(&mode).unwrap(), 0);
        Setting::<u32>::write(&mode, 25).unwrap();
        assert_eq!(Setting::<u32>::read(&mode).unwrap(), 25);
    }

    #[cfg(unix)]
    #[test]
    fn a_failing_command_says_what_ran() {
        let err = run(&[
            "/bin/sh".into(),
            "-c".into(),
            "echo nope >&2; exit 1".into(),
        ])
        .unwrap_err();
        let err = err.to_string();
        assert!(err.contains("/bin/sh -c") && err.contains("nope"), "{err}");
        // What a program prints on stdout when it fails is kept too.
        let err = run(&[
            "/bin/sh".into(),
            "-c".into(),
            "echo 'Unable to sleep system: error 0xe00002d8'; exit 71".into(),
        ])
        .unwrap_err()
        .to_string();
        assert!(
            err.ends_with("(exit status: 71): Unable to sleep system: error 0xe00002d8"),
            "{err}"
        );
        let err = run(&["/nonexistent/pmset".into()]).unwrap_err().to_string();
        assert!(err.starts_with("cannot run /nonexistent/pmset"), "{err}");
    }
}
