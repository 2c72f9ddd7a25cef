//! Processes lidguard watches (the agent that owns a session).

use crate::roots::Roots;

pub(crate) mod info;
#[cfg(target_os = "macos")]
mod macos;
pub mod procargs;

pub use info::ProcessInfo;

/// Whether `pid` is a live process (not a zombie).
///
/// - Linux: `<proc>/<pid>/stat` exists and its state field is not `Z` (zombie) or `X` (dead).
///   Reading below [`Roots::proc_root`] lets tests use a fake tree.
/// - Other Unix systems: `kill(pid, 0)` succeeds or fails only for lack of permission (the
///   process exists but belongs to someone else); `roots` is not used. A zombie counts as
///   alive there.
/// - Windows: the process handle is not signalled (or it exists but may not be opened).
///
/// Pid 0 is never a watched process and gives `false` everywhere.
pub fn is_alive(roots: &Roots, pid: u32) -> bool {
    if pid == 0 {
        return false;
    }
    #[cfg(target_os = "linux")]
    {
        linux_is_alive(roots, pid)
    }
    #[cfg(all(unix, not(target_os = "linux")))]
    {
        let _ = roots;
        let Some(pid) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        else {
            return false;
        };
        match rustix::process::test_kill_process(pid) {
            Ok(()) => true,
            Err(error) => error == rustix::io::Errno::PERM,
        }
    }
    #[cfg(windows)]
    {
        let _ = roots;
        crate::windows::process::is_alive(pid)
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = roots;
        true
    }
}

/// Waits until `pid` exits without polling: Windows waits on the process handle in the thread
/// pool, macOS on a kqueue `NOTE_EXIT`. Returns `false` at once where that is not possible
/// (other systems, or a process that may not be opened), and the caller watches another way.
pub async fn wait_exit(pid: u32) -> bool {
    #[cfg(windows)]
    {
        crate::windows::process::wait_exit(pid).await
    }
    #[cfg(target_os = "macos")]
    {
        macos::wait_exit(pid).await
    }
    #[cfg(not(any(windows, target_os = "macos")))]
    {
        let _ = pid;
        false
    }
}

/// The state letter of a `/proc/<pid>/stat` line: the first field after the last `)` (the
/// command name in parentheses may itself contain `)` and spaces).
#[cfg_attr(
    not(target_os = "linux"),
    allow(dead_code, reason = "procfs is Linux-only")
)]
fn stat_state(stat: &str) -> Option<char> {
    let (_, rest) = stat.rsplit_once(')')?;
    rest.trim_start().chars().next()
}

#[cfg(target_os = "linux")]
fn linux_is_alive(roots: &Roots, pid: u32) -> bool {
    let path = roots.proc_root.join(pid.to_string()).join("stat");
    match std::fs::read(&path) {
        Ok(bytes) => match stat_state(&String::from_utf8_lossy(&bytes)) {
            Some('Z' | 'X' | 'x') => false,
            Some(_) => true,
            // The entry exists but the line is odd: the process is there.
            None => true,
        },
        Err(_) => false,
    }
}

/// The ancestors of `pid` (its parent first), at most `max_depth` of them, stopping at init,
/// at an unreadable process or at a cycle.
///
/// Linux reads `<proc>/<pid>/stat`, `comm` and `cmdline`; macOS asks `proc_pidinfo` and `sysctl`
/// `KERN_PROCARGS2` (see `process/macos.rs`); Windows takes one Toolhelp snapshot (exe names, no
/// command lines); other systems return nothing, so sessions there are not tied to a process.
pub fn ancestry(roots: &Roots, pid: u32, max_depth: usize) -> Vec<ProcessInfo> {
    #[cfg(windows)]
    {
        let _ = roots;
        crate::windows::process::ancestry(pid, max_depth)
    }
    #[cfg(not(windows))]
    {
        ancestry_by_reading(roots, pid, max_depth)
    }
}

#[cfg_attr(
    windows,
    allow(dead_code, reason = "Windows walks a Toolhelp snapshot")
)]
fn ancestry_by_reading(roots: &Roots, pid: u32, max_depth: usize) -> Vec<ProcessInfo> {
    let mut chain: Vec<ProcessInfo> = Vec::new();
    let mut next = read_process(roots, pid).map(|p| p.ppid);
    while let Some(pid) = next.filter(|&p| p > 1) {
        if chain.len() >= max_depth || chain.iter().any(|p| p.pid == pid) {
            break;
        }
        let Some(info) = read_process(roots, pid) else {
            break;
        };
        next = Some(info.ppid);
        chain.push(info);
    }
    chain
}

#[cfg(target_os = "linux")]
fn read_process(roots: &Roots, pid: u32) -> Option<ProcessInfo> {
    let dir = roots.proc_root.join(pid.to_string());
    let stat = String::from_utf8_lossy(&std::fs::read(dir.join("stat")).ok()?).into_owned();
    // Fields after the `)` that closes the command name: state, ppid, ...
    let (_, rest) = stat.rsplit_once(')')?;
    let ppid = rest.split_whitespace().nth(1)?.parse().ok()?;
    let name = std::fs::read_to_string(dir.join("comm"))
        .map(|s| s.trim().to_owned())
        .unwrap_or_default();
    let cmdline = std::fs::read(dir.join("cmdline"))
        .map(|raw| {
            raw.split(|b| *b == 0)
                .filter(|part| !part.is_empty())
                .map(|part| String::from_utf8_lossy(part).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    Some(ProcessInfo {
        pid,
        ppid,
        name,
        cmdline,
    })
}

#[cfg(target_os = "macos")]
fn read_process(_roots: &Roots, pid: u32) -> Option<ProcessInfo> {
    macos::read_process(pid)
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn read_process(_roots: &Roots, _pid: u32) -> Option<ProcessInfo> {
    None
}

#[cfg(test)]
mod tests {
    use super::stat_state;

    #[test]
    fn state_after_last_paren() {
        assert_eq!(stat_state("42 (bash) S 1 42 42 0"), Some('S'));
        assert_eq!(stat_state("42 (we ird) (x)) Z 1 0"), Some('Z'));
        assert_eq!(stat_state("42 (noclose"), None);
        assert_eq!(stat_state("42 (x)"), None);
    }
}
