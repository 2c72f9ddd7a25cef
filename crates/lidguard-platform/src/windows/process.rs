//! Processes on Windows: alive or not, ancestry from a Toolhelp snapshot, and an exit wait on
//! the process handle (the thread pool waits; nothing polls).

use std::ffi::c_void;
use std::sync::Mutex;

use windows_sys::Win32::Foundation::{
    CloseHandle, ERROR_ACCESS_DENIED, FILETIME, GetLastError, HANDLE, INVALID_HANDLE_VALUE,
    WAIT_TIMEOUT,
};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, PROCESSENTRY32W, Process32FirstW, Process32NextW, TH32CS_SNAPPROCESS,
};
use windows_sys::Win32::System::Threading::{
    GetProcessTimes, INFINITE, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_SYNCHRONIZE,
    RegisterWaitForSingleObject, UnregisterWaitEx, WT_EXECUTEONLYONCE, WaitForSingleObject,
};

use crate::process::info::ProcessInfo;

/// An open process handle, closed on drop.
struct Process(HANDLE);

// SAFETY: a process handle is a kernel handle usable from any thread.
unsafe impl Send for Process {}

impl Process {
    fn open(pid: u32) -> Result<Process, u32> {
        // SAFETY: plain call; the handle is owned by the returned value.
        let handle = unsafe {
            OpenProcess(
                PROCESS_SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION,
                0,
                pid,
            )
        };
        if handle.is_null() {
            // SAFETY: reads this thread's last error.
            Err(unsafe { GetLastError() })
        } else {
            Ok(Process(handle))
        }
    }

    /// Creation time in 100 ns units since 1601, or `None` when it cannot be read.
    fn created(&self) -> Option<u64> {
        let mut times = [FILETIME::default(); 4];
        let [created, exited, kernel, user] = &mut times;
        // SAFETY: the handle is open with PROCESS_QUERY_LIMITED_INFORMATION.
        let ok = unsafe { GetProcessTimes(self.0, created, exited, kernel, user) } != 0;
        ok.then(|| (u64::from(created.dwHighDateTime) << 32) | u64::from(created.dwLowDateTime))
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // SAFETY: closes the handle this value owns.
        unsafe { CloseHandle(self.0) };
    }
}

/// Whether `pid` runs: its handle is not signalled. A process we may not open but that exists
/// (access denied) counts as alive.
pub(crate) fn is_alive(pid: u32) -> bool {
    match Process::open(pid) {
        // SAFETY: waits zero milliseconds on an open handle.
        Ok(process) => (unsafe { WaitForSingleObject(process.0, 0) }) == WAIT_TIMEOUT,
        Err(code) => code == ERROR_ACCESS_DENIED,
    }
}

/// Every process's `(pid, parent pid, exe name)` from one Toolhelp snapshot.
fn snapshot() -> Vec<(u32, u32, String)> {
    // SAFETY: creates a snapshot handle that is closed below.
    let snap = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0) };
    if snap.is_null() || snap == INVALID_HANDLE_VALUE {
        return Vec::new();
    }
    let mut all = Vec::new();
    let mut entry = PROCESSENTRY32W {
        dwSize: std::mem::size_of::<PROCESSENTRY32W>() as u32,
        ..PROCESSENTRY32W::default()
    };
    // SAFETY: `entry.dwSize` is set as the API requires; the snapshot is open.
    let mut more = unsafe { Process32FirstW(snap, &mut entry) } != 0;
    while more {
        let len = entry
            .szExeFile
            .iter()
            .position(|&c| c == 0)
            .unwrap_or(entry.szExeFile.len());
        all.push((
            entry.th32ProcessID,
            entry.th32ParentProcessID,
            String::from_utf16_lossy(&entry.szExeFile[..len]),
        ));
        // SAFETY: as above.
        more = unsafe { Process32NextW(snap, &mut entry) } != 0;
    }
    // SAFETY: closes the snapshot.
    unsafe { CloseHandle(snap) };
    all
}

/// The ancestors of `pid`, parent first. A parent pid whose process started after its child
/// belongs to a newer process that reused the number: the walk stops there. Names are the exe
/// file names (`claude.exe`); command lines are not read (that needs another process's memory).
pub(crate) fn ancestry(pid: u32, max_depth: usize) -> Vec<ProcessInfo> {
    let all = snapshot();
    let find = |pid: u32| all.iter().find(|(p, _, _)| *p == pid);
    let mut chain: Vec<ProcessInfo> = Vec::new();
    let mut child_created = Process::open(pid).ok().and_then(|p| p.created());
    let mut next = find(pid).map(|(_, ppid, _)| *ppid);
    while let Some(parent) = next.filter(|&p| p > 4) {
        if chain.len() >= max_depth || chain.iter().any(|p| p.pid == parent) {
            break;
        }
        let Some((_, ppid, name)) = find(parent) else {
            break;
        };
        let created = Process::open(parent).ok().and_then(|p| p.created());
        if let (Some(parent_created), Some(child_created)) = (created, child_created)
            && parent_created > child_created
        {
            break;
        }
        child_created = created;
        chain.push(ProcessInfo {
            pid: parent,
            ppid: *ppid,
            name: name.clone(),
            cmdline: String::new(),
        });
        next = Some(*ppid);
    }
    chain
}

type ExitSender = tokio::sync::oneshot::Sender<()>;

/// Waits until `pid` exits; `false` when its handle cannot be opened for waiting (then the
/// caller falls back to asking now and then).
pub(crate) async fn wait_exit(pid: u32) -> bool {
    let process = match Process::open(pid) {
        Ok(process) => process,
        // Gone already (the pid is unknown): nothing to wait for.
        Err(code) if code != ERROR_ACCESS_DENIED => return true,
        Err(_) => return false,
    };
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let Some(registration) = Registration::register(&process, tx) else {
        return false;
    };
    let _ = rx.await;
    drop(registration);
    drop(process);
    true
}

/// Unregisters the wait (waiting for a running callback) before freeing its context; runs when
/// the exit arrived and when the waiting future is dropped.
struct Registration {
    wait: Option<HANDLE>,
    context: *mut Mutex<Option<ExitSender>>,
}

// SAFETY: the wait handle and the boxed context may be released from any thread.
unsafe impl Send for Registration {}

impl Registration {
    /// Asks the thread pool to send on `tx` when `process` is signalled (it exited).
    fn register(process: &Process, tx: ExitSender) -> Option<Registration> {
        let context = Box::into_raw(Box::new(Mutex::new(Some(tx))));
        let mut wait: HANDLE = std::ptr::null_mut();
        // SAFETY: the context stays allocated until the registration drops, after the wait is
        // unregistered (so the callback cannot run any more); the caller keeps the process
        // handle open for as long.
        let registered = unsafe {
            RegisterWaitForSingleObject(
                &mut wait,
                process.0,
                Some(exited_callback),
                context.cast::<c_void>(),
                INFINITE,
                WT_EXECUTEONLYONCE,
            )
        } != 0;
        let registration = Registration {
            wait: registered.then_some(wait),
            context,
        };
        registered.then_some(registration)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(wait) = self.wait {
            // SAFETY: INVALID_HANDLE_VALUE makes the call wait for a running callback, so the
            // context is unused afterwards.
            unsafe { UnregisterWaitEx(wait, INVALID_HANDLE_VALUE) };
        }
        // SAFETY: allocated by Box::into_raw in `wait_exit`, freed once here.
        drop(unsafe { Box::from_raw(self.context) });
    }
}

unsafe extern "system" fn exited_callback(context: *mut c_void, _timed_out: bool) {
    // SAFETY: the context is the boxed sender, alive until the registration is dropped.
    let slot = unsafe { &*context.cast::<Mutex<Option<ExitSender>>>() };
    if let Some(tx) = slot.lock().ok().and_then(|mut s| s.take()) {
        let _ = tx.send(());
    }
}
