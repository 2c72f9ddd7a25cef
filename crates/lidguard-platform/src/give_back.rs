//! Giving a closed lid back to macOS: after `SleepDisabled` went back to 0, do what the kernel
//! would have done at the lid close it did not act on, and sleep reliably when lidguard asks.
//!
//! Facts (Apple's published sources):
//! - XNU `IOPMrootDomain::setProperties` takes `SleepDisabled` from the power daemon, publishes
//!   it as the root domain's own property and queues `kPowerEventUserDisabledSleep`, which only
//!   records the flag: the clamshell is evaluated on lid events (and display changes), so a lid
//!   already closed is not looked at again;
//! - `shouldSleepOnClamshellClosed` is `!clamshellDisabled && !(desktopMode &&
//!   acAdaptorConnected) && …`: closed, and not an external display on AC power
//!   ([`lidguard_core::clamshell::ClamshellRule::DisplayOnAcKeepsAwake`]);
//! - `pmset` writes the preference, and the power daemon pushes it to the kernel later
//!   (PowerManagement `pmconfigd`), so a `pmset sleepnow` right after `pmset disablesleep 0`
//!   may still meet `userDisabledAllSleep` — the first check of `checkSystemSleepAllowed`;
//! - `pmset sleepnow` prints its failure on stdout ("Unable to sleep system: error 0x…") and
//!   exits with `EX_OSERR` (PowerManagement `pmset/pmset.m`).
//!
//! So lidguard reads `SleepDisabled` back from the root domain until the kernel has it at 0
//! (bounded), asks for sleep, asks once more after a moment if that failed, and keeps what
//! `pmset` printed in the error.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lidguard_core::clamshell::Clamshell;

use crate::pmset::{FileSetting, Pmset, Setting};
use crate::policy::PolicyError;

/// The kernel's side of sleeping: what it applies and the request to sleep.
pub trait Kernel: Send + Sync {
    /// `SleepDisabled` as the kernel has it now (`None`: it cannot be read).
    fn sleep_disabled(&self) -> Option<bool>;
    /// Asks the kernel to sleep now.
    fn sleep_now(&self) -> Result<(), PolicyError>;
}

/// How long to wait for the kernel, and how often to look.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// The longest wait for `SleepDisabled` 0 to reach the kernel.
    pub read_back: Duration,
    /// How often it is read meanwhile.
    pub poll: Duration,
    /// How long before a refused sleep is asked for again.
    pub retry_after: Duration,
}

impl Timing {
    /// What lidguard uses: up to 5 s for the power daemon, read every 100 ms; a second request
    /// 1 s after a refused one.
    pub const DEFAULT: Timing = Timing {
        read_back: Duration::from_secs(5),
        poll: Duration::from_millis(100),
        retry_after: Duration::from_secs(1),
    };
}

/// Waits until the kernel has `SleepDisabled` at 0, then asks it to sleep, and once more after
/// [`Timing::retry_after`] if it refused. An error says what was waited for or what the second
/// request printed.
pub fn sleep_after_restore(kernel: &dyn Kernel, timing: Timing) -> Result<(), PolicyError> {
    let start = Instant::now();
    loop {
        match kernel.sleep_disabled() {
            Some(false) => break,
            // Unreadable: nothing to wait for; the request says what the kernel thinks.
            None => break,
            Some(true) if start.elapsed() >= timing.read_back => {
                return Err(PolicyError::Missing(format!(
                    "the kernel still had SleepDisabled set {} s after it was written back, so \
                     the Mac was not asked to sleep (`pmset -g` shows the setting)",
                    timing.read_back.as_secs_f32()
                )));
            }
            Some(true) => std::thread::sleep(timing.poll),
        }
    }
    match kernel.sleep_now() {
        Ok(()) => Ok(()),
        Err(first) => {
            tracing::warn!(error = %first, "the Mac refused to sleep; asking once more");
            std::thread::sleep(timing.retry_after);
            kernel.sleep_now()
        }
    }
}

/// What [`settle`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Settled {
    /// The lid does not mean sleep now; the Mac stays awake (why, in words).
    Awake(String),
    /// The Mac was asked to sleep, as the kernel would have for the closed lid.
    Slept,
}

impl Settled {
    /// For the user and the event stream.
    pub fn describe(&self) -> String {
        match self {
            Settled::Awake(why) => format!("the Mac stays awake: {why}"),
            Settled::Slept => {
                "the lid is closed, so the Mac was put to sleep as it would have been".to_owned()
            }
        }
    }
}

/// After `SleepDisabled` went back to 0: with a closed lid that means sleep by the kernel's own
/// rule, put the Mac to sleep ([`sleep_after_restore`]); otherwise leave it awake.
pub fn settle(
    kernel: &dyn Kernel,
    clamshell: &Clamshell,
    timing: Timing,
) -> Result<Settled, PolicyError> {
    if let Some(why) = clamshell.why_not() {
        return Ok(Settled::Awake(why));
    }
    sleep_after_restore(kernel, timing).map(|()| Settled::Slept)
}

/// The kernel lidguard reads back and asks to sleep: `IOPMrootDomain` and `pmset sleepnow`, or
/// the files below `LIDGUARD_SYS_ROOT` when tests relocate the system.
pub fn kernel(roots: &crate::roots::Roots) -> std::sync::Arc<dyn Kernel> {
    if roots.overridden {
        return std::sync::Arc::new(FileKernel::below(&roots.sys_root));
    }
    #[cfg(target_os = "macos")]
    let read: fn() -> Option<bool> = crate::macos::iokit::sleep_disabled;
    // Elsewhere there is no root domain to read: the request itself tells.
    #[cfg(not(target_os = "macos"))]
    let read: fn() -> Option<bool> = || None;
    std::sync::Arc::new(PmsetKernel::new(crate::pmset::pmset_here(), read))
}

/// The real kernel: `SleepDisabled` read from `IOPMrootDomain` (macOS only; elsewhere it
/// cannot be read) and `pmset sleepnow`.
pub struct PmsetKernel {
    pmset: Pmset,
    read: fn() -> Option<bool>,
}

impl PmsetKernel {
    /// `pmset` (or a stand-in) to sleep, `read` for the kernel's `SleepDisabled`.
    pub fn new(pmset: Pmset, read: fn() -> Option<bool>) -> PmsetKernel {
        PmsetKernel { pmset, read }
    }
}

impl Kernel for PmsetKernel {
    fn sleep_disabled(&self) -> Option<bool> {
        (self.read)()
    }

    fn sleep_now(&self) -> Result<(), PolicyError> {
        self.pmset.sleep_now()
    }
}

/// Where tests relocate the system (`LIDGUARD_SYS_ROOT`): the kernel's `SleepDisabled` is the
/// file [`FileSetting::sleep_disabled`] writes (applied at once), and each request to sleep is a
/// line appended to `<root>/power/sleep-requests`.
pub struct FileKernel {
    setting: FileSetting,
    requests: PathBuf,
}

impl FileKernel {
    /// The kernel below `sys_root`.
    pub fn below(sys_root: &Path) -> FileKernel {
        FileKernel {
            setting: FileSetting::sleep_disabled(sys_root),
            requests: sys_root.join("power").join("sleep-requests"),
        }
    }
}

impl Kernel for FileKernel {
    fn sleep_disabled(&self) -> Option<bool> {
        Setting::<bool>::read(&self.setting).ok()
    }

    fn sleep_now(&self) -> Result<(), PolicyError> {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.requests)
            .map_err(|e| PolicyError::file(&self.requests, e))?;
        file.write_all(b"sleepnow\n")
            .map_err(|e| PolicyError::file(&self.requests, e))
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use lidguard_core::clamshell::ClamshellRule;
    use lidguard_core::event::Lid;

    use super::*;

    /// A stand-in `pmset` in `dir`: it records every call in `calls`; `disablesleep 0` reaches
    /// "the kernel" (the file `kernel`) only `delay` later, as the power daemon pushes it;
    /// `sleepnow` fails as `pmset` does (its message on stdout, `EX_OSERR`) while the kernel
    /// still has sleep disabled, and the first `fail_first` times whatever the kernel has.
    struct StandIn {
        dir: tempfile::TempDir,
    }

    impl StandIn {
        fn new(delay: &str, fail_first: u32) -> StandIn {
            let dir = tempfile::tempdir().unwrap();
            let d = dir.path().display();
            let script = format!(
                r#"#!/bin/sh
echo "$*" >> {d}/calls
case "$*" in
  "-a disablesleep 0") (sleep {delay}; echo 0 > {d}/kernel) >/dev/null 2>&1 & ;;
  "-a disablesleep 1") echo 1 > {d}/kernel ;;
  sleepnow)
    n=$(cat {d}/refused 2>/dev/null || echo 0)
    if [ "$(cat {d}/kernel)" = 1 ] || [ "$n" -lt {fail_first} ]; then
      echo $((n + 1)) > {d}/refused
      echo "Unable to sleep system: error 0xe00002d8"
      exit 71
    fi
    echo "Sleeping now..." ;;
esac
"#
            );
            let program = dir.path().join("pmset");
            std::fs::write(&program, script).unwrap();
            std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::fs::write(dir.path().join("kernel"), "1\n").unwrap();
            StandIn { dir }
        }

        fn pmset(&self) -> Pmset {
            Pmset::with_program(self.dir.path().join("pmset").display().to_string(), 0)
        }

        fn calls(&self) -> Vec<String> {
            std::fs::read_to_string(self.dir.path().join("calls"))
                .unwrap_or_default()
                .lines()
                .map(str::to_owned)
                .collect()
        }
    }

    /// The stand-in's kernel file, read as the root domain would be.
    struct StandInKernel<'a>(&'a StandIn);

    impl Kernel for StandInKernel<'_> {
        fn sleep_disabled(&self) -> Option<bool> {
            let text = std::fs::read_to_string(self.0.dir.path().join("kernel")).ok()?;
            Some(text.trim() == "1")
        }
        fn sleep_now(&self) -> Result<(), PolicyError> {
            self.0.pmset().sleep_now()
        }
    }

    const FAST: Timing = Timing {
        read_back: Duration::from_secs(5),
        poll: Duration::from_millis(50),
        retry_after: Duration::from_millis(100),
    };

    fn closed_mac(displays: u32, on_battery: bool) -> Clamshell {
        Clamshell {
            lid: Lid::Closed,
            external_displays: Some(displays),
            on_battery: Some(on_battery),
            rule: ClamshellRule::DisplayOnAcKeepsAwake,
        }
    }

    /// `disablesleep 0` written, then sleep asked for only once the kernel has it: a
    /// `sleepnow` at once would have failed.
    #[test]
    fn sleep_is_asked_only_after_the_kernel_has_sleep_enabled() {
        let stand_in = StandIn::new("0.4", 0);
        let pmset = stand_in.pmset();
        pmset.set(&crate::pmset::disablesleep_args(false)).unwrap();
        assert!(
            StandInKernel(&stand_in).sleep_disabled() == Some(true),
            "the kernel has not taken it yet"
        );
        let settled = settle(&StandInKernel(&stand_in), &closed_mac(0, true), FAST).unwrap();
        assert_eq!(settled, Settled::Slept);
        // One request, which the stand-in refuses while the kernel still has sleep disabled.
        assert_eq!(stand_in.calls(), ["-a disablesleep 0", "sleepnow"]);
    }

    /// A refused sleep is asked for once more; a second refusal is the error, with what
    /// `pmset` printed on stdout.
    #[test]
    fn a_refused_sleep_is_retried_once_and_its_stdout_kept() {
        let once = StandIn::new("0", 1);
        std::fs::write(once.dir.path().join("kernel"), "0\n").unwrap();
        sleep_after_restore(&StandInKernel(&once), FAST).unwrap();
        assert_eq!(once.calls(), ["sleepnow", "sleepnow"]);

        let twice = StandIn::new("0", 2);
        std::fs::write(twice.dir.path().join("kernel"), "0\n").unwrap();
        let err = sleep_after_restore(&StandInKernel(&twice), FAST)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "sleepnow failed (exit status: 71): Unable to sleep system: error \
                          0xe00002d8"
            ),
            "{err}"
        );
        assert_eq!(twice.calls(), ["sleepnow", "sleepnow"]);
    }

    /// A kernel that never takes the change: no sleep is asked for, and the error says why.
    #[test]
    fn a_kernel_that_keeps_sleep_disabled_is_not_asked() {
        let stand_in = StandIn::new("30", 0);
        let quick = Timing {
            read_back: Duration::from_millis(300),
            ..FAST
        };
        let err = settle(&StandInKernel(&stand_in), &closed_mac(0, false), quick)
            .unwrap_err()
            .to_string();
        assert!(err.contains("still had SleepDisabled set"), "{err}");
        assert!(stand_in.calls().is_empty(), "{:?}", stand_in.calls());
    }

    /// The kernel's rule decides: a display on AC keeps a closed Mac awake, on battery it does
    /// not; an open lid never sleeps.
    #[test]
    fn the_kernels_rule_decides_whether_to_sleep() {
        let stand_in = StandIn::new("0", 0);
        std::fs::write(stand_in.dir.path().join("kernel"), "0\n").unwrap();
        let kernel = StandInKernel(&stand_in);
        assert_eq!(
            settle(&kernel, &closed_mac(1, false), FAST).unwrap(),
            Settled::Awake("1 external display(s) connected on AC power".into())
        );
        let open = Clamshell {
            lid: Lid::Open,
            ..closed_mac(0, true)
        };
        assert_eq!(
            settle(&kernel, &open, FAST).unwrap(),
            Settled::Awake("the lid is open".into())
        );
        assert!(stand_in.calls().is_empty());
        assert_eq!(
            settle(&kernel, &closed_mac(1, true), FAST).unwrap(),
            Settled::Slept
        );
        assert_eq!(stand_in.calls(), ["sleepnow"]);
    }

    #[test]
    fn the_file_kernel_records_requests() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("power")).unwrap();
        let kernel = FileKernel::below(dir.path());
        assert_eq!(kernel.sleep_disabled(), Some(false));
        kernel.sleep_now().unwrap();
        kernel.sleep_now().unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("power/sleep-requests")).unwrap(),
            "sleepnow\nsleepnow\n"
        );
    }
}
