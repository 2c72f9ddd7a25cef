//! Where `/proc` and `/sys` are: the real ones, or a tree a test or a user points lidguard at.

use std::ffi::OsString;
use std::path::PathBuf;

/// Environment variable that replaces `/proc` (sets [`Roots::overridden`]).
pub const PROC_ROOT_ENV: &str = "LIDGUARD_PROC_ROOT";
/// Environment variable that replaces `/sys` (sets [`Roots::overridden`]).
pub const SYS_ROOT_ENV: &str = "LIDGUARD_SYS_ROOT";

/// Roots for file-based sensing; production uses "/proc" and "/sys"; tests and users override
/// with `LIDGUARD_PROC_ROOT` / `LIDGUARD_SYS_ROOT`.
#[derive(Clone, Debug)]
pub struct Roots {
    /// Where procfs is (`/proc`).
    pub proc_root: PathBuf,
    /// Where sysfs is (`/sys`).
    pub sys_root: PathBuf,
    /// Whether either root was replaced; then only the files are trusted (no logind).
    pub overridden: bool,
}

impl Roots {
    /// The real `/proc` and `/sys`, not overridden.
    pub fn system() -> Roots {
        Roots {
            proc_root: PathBuf::from("/proc"),
            sys_root: PathBuf::from("/sys"),
            overridden: false,
        }
    }

    /// `/proc` and `/sys`, each replaced by `LIDGUARD_PROC_ROOT` / `LIDGUARD_SYS_ROOT` when that
    /// variable is set and not empty; `overridden` is true when either is.
    pub fn from_env() -> Roots {
        Self::from_vars(
            lidguard_files::environment::var(PROC_ROOT_ENV),
            lidguard_files::environment::var(SYS_ROOT_ENV),
        )
    }

    /// [`Roots::from_env`] with the variables' values passed in.
    fn from_vars(proc_root: Option<OsString>, sys_root: Option<OsString>) -> Roots {
        let proc_root = proc_root.filter(|value| !value.is_empty());
        let sys_root = sys_root.filter(|value| !value.is_empty());
        let overridden = proc_root.is_some() || sys_root.is_some();
        let system = Self::system();
        Roots {
            proc_root: proc_root.map_or(system.proc_root, PathBuf::from),
            sys_root: sys_root.map_or(system.sys_root, PathBuf::from),
            overridden,
        }
    }

    /// Explicit roots (`overridden` = true).
    pub fn new(proc_root: impl Into<PathBuf>, sys_root: impl Into<PathBuf>) -> Roots {
        Roots {
            proc_root: proc_root.into(),
            sys_root: sys_root.into(),
            overridden: true,
        }
    }
}

impl Default for Roots {
    /// Same as [`Roots::system`].
    fn default() -> Roots {
        Roots::system()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_vars_defaults_and_overrides() {
        let roots = Roots::from_vars(None, None);
        assert_eq!(roots.proc_root, PathBuf::from("/proc"));
        assert_eq!(roots.sys_root, PathBuf::from("/sys"));
        assert!(!roots.overridden);

        let roots = Roots::from_vars(Some("/tmp/p".into()), Some(OsString::new()));
        assert_eq!(roots.proc_root, PathBuf::from("/tmp/p"));
        assert_eq!(roots.sys_root, PathBuf::from("/sys"));
        assert!(roots.overridden);

        let roots = Roots::from_vars(None, Some("/tmp/s".into()));
        assert_eq!(roots.proc_root, PathBuf::from("/proc"));
        assert_eq!(roots.sys_root, PathBuf::from("/tmp/s"));
        assert!(roots.overridden);
    }
}
