//! Windows: power requests (or `SetThreadExecutionState` where they are missing), the lid-close
//! action, lid-switch notifications and `SetSuspendState`.
//!
//! Facts from Microsoft's documentation (`PowerCreateRequest`, `PowerSetRequest`,
//! `SetThreadExecutionState`, `PowerSettingRegisterNotification`, `SetSuspendState`, "Lid switch
//! close action"):
//! - a power request is a handle; closing it, or the process dying, releases it;
//! - requests end at user-initiated sleep, lid close included, so closed-lid protection changes
//!   the active scheme's `LIDACTION` to "do nothing" as well ([`crate::lid_action`]);
//! - `SetThreadExecutionState` belongs to the calling thread, so the fallback keeps one thread
//!   alive per hold;
//! - the lid-switch notification delivers the current state right after registration, then each
//!   change (0 closed, 1 open); a machine without a lid never calls back.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use lidguard_core::protection::{Inhibit, ProtectionPlan};
use tokio::sync::mpsc::UnboundedSender;
use windows_sys::Win32::Foundation::{
    CloseHandle, ERROR_NOT_ALL_ASSIGNED, GetLastError, HANDLE, INVALID_HANDLE_VALUE, LUID,
};
use windows_sys::Win32::Security::{
    AdjustTokenPrivileges, LUID_AND_ATTRIBUTES, LookupPrivilegeValueW, SE_PRIVILEGE_ENABLED,
    TOKEN_ADJUST_PRIVILEGES, TOKEN_PRIVILEGES, TOKEN_QUERY,
};
use windows_sys::Win32::System::Power::{
    DEVICE_NOTIFY_SUBSCRIBE_PARAMETERS, ES_AWAYMODE_REQUIRED, ES_CONTINUOUS, ES_DISPLAY_REQUIRED,
    ES_SYSTEM_REQUIRED, GetPwrCapabilities, POWER_REQUEST_TYPE, POWERBROADCAST_SETTING,
    PowerClearRequest, PowerCreateRequest, PowerRequestAwayModeRequired,
    PowerRequestDisplayRequired, PowerRequestSystemRequired, PowerSetRequest,
    PowerSettingRegisterNotification, SYSTEM_POWER_CAPABILITIES, SetSuspendState,
    SetThreadExecutionState,
};
use windows_sys::Win32::System::SystemServices::{
    GUID_LIDSWITCH_STATE_CHANGE, POWER_REQUEST_CONTEXT_VERSION,
};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, OpenProcessToken, POWER_REQUEST_CONTEXT_SIMPLE_STRING, REASON_CONTEXT,
};
use windows_sys::Win32::UI::WindowsAndMessaging::{DEVICE_NOTIFY_CALLBACK, PBT_POWERSETTINGCHANGE};

use super::{
    BoxFuture, HeldProtection, PolicyHold, PowerControl, PowerError, PowerUnavailable, SuspendError,
};
use crate::lid_action::{self, LidActionPolicy, PolicyBackups};
use crate::policy::PolicyError;
use crate::roots::Roots;

const BACKEND: &str = "Windows power management";

/// How keep-awake is held on this machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum KeepAwake {
    /// `PowerCreateRequest`/`PowerSetRequest`, with a reason string.
    PowerRequests,
    /// `SetThreadExecutionState(ES_CONTINUOUS | …)` on a thread of the daemon, because power
    /// requests answered with this error (Wine stubs them: 120, not implemented).
    ThreadState(u32),
}

pub(super) struct WindowsPower {
    keep_awake: KeepAwake,
    lid: &'static LidNotifications,
    lid_policy: Option<Arc<dyn LidActionPolicy>>,
    lid_policy_error: String,
    backups: Option<Arc<dyn PolicyBackups>>,
    /// The lid-action change, shared by every guard that wants it.
    lid_hold: super::SharedChange<PolicyHold>,
}

pub(super) async fn connect(
    backups: Option<Arc<dyn PolicyBackups>>,
) -> Result<Arc<dyn PowerControl>, PowerUnavailable> {
    let roots = Roots::from_env();
    let (lid_policy, lid_policy_error): (Option<Arc<dyn LidActionPolicy>>, String) =
        if roots.overridden {
            (
                Some(Arc::new(lid_action::FilePolicy::below(&roots.sys_root))),
                String::new(),
            )
        } else {
            match crate::windows::powrprof::Powrprof::load() {
                Ok(p) => (Some(Arc::new(p)), String::new()),
                Err(e) => (None, e.to_string()),
            }
        };
    // A daemon that died with the lid action changed left a backup: put the user's values
    // back before anything else.
    if let (Some(policy), Some(backups)) = (&lid_policy, &backups) {
        match lid_action::restore(policy.as_ref(), backups.as_ref()) {
            Ok(lid_action::Restored::Nothing) => {}
            Ok(restored) => tracing::warn!(
                ?restored,
                "restored the lid-close action a previous daemon left changed"
            ),
            Err(e) => {
                tracing::error!(error = %e, "cannot restore the lid-close action a previous daemon left changed")
            }
        }
    }
    let keep_awake = match Request::create("lidguard") {
        Ok(request) => {
            drop(request);
            KeepAwake::PowerRequests
        }
        Err(code) => KeepAwake::ThreadState(code),
    };
    let lid = LidNotifications::register();
    Ok(Arc::new(WindowsPower {
        keep_awake,
        lid,
        lid_policy,
        lid_policy_error,
        backups,
        lid_hold: super::SharedChange::new(),
    }))
}

/// Restores a lid-close action left changed, with the OS's own policy (or the test seam).
pub(super) fn restore_pending(
    backups: &dyn PolicyBackups,
) -> Result<lid_action::Restored, PolicyError> {
    let roots = Roots::from_env();
    if backups.load(lid_action::BACKUP_KIND)?.is_none() {
        return Ok(lid_action::Restored::Nothing);
    }
    if roots.overridden {
        lid_action::restore(&lid_action::FilePolicy::below(&roots.sys_root), backups)
    } else {
        let policy = crate::windows::powrprof::Powrprof::load()?;
        lid_action::restore(&policy, backups)
    }
}

pub(super) async fn logind_lid_closed() -> Option<bool> {
    None
}

impl PowerControl for WindowsPower {
    fn hold<'a>(
        &'a self,
        plan: &'a ProtectionPlan,
    ) -> BoxFuture<'a, Result<Box<dyn HeldProtection>, PowerError>> {
        Box::pin(async move {
            let group = super::keep_awake_group(plan);
            let mut inhibits = group.clone();
            let keep = if group.is_empty() {
                None
            } else {
                Some(self.keep_awake(plan)?)
            };
            let lid = super::lid_hold_if(plan, &mut inhibits, || self.lid_hold())?;
            Ok(Box::new(WindowsHeld {
                inhibits,
                _keep: keep,
                _lid: lid,
            }) as Box<dyn HeldProtection>)
        })
    }

    fn describe(&self) -> String {
        match self.keep_awake {
            KeepAwake::PowerRequests => format!("{BACKEND}: power requests"),
            KeepAwake::ThreadState(code) => format!(
                "{BACKEND}: SetThreadExecutionState (power requests unavailable here, error \
                 {code})"
            ),
        }
    }

    fn lid_closed(&self) -> BoxFuture<'_, Option<bool>> {
        let state = self.lid.state.load(Ordering::Acquire);
        Box::pin(async move {
            match state {
                LID_CLOSED => Some(true),
                LID_OPEN => Some(false),
                _ => None,
            }
        })
    }

    fn watch_lid(&self, changed: UnboundedSender<()>) -> BoxFuture<'_, bool> {
        let registered = self.lid.registered;
        if registered && let Ok(mut watchers) = self.lid.watchers.lock() {
            watchers.push(changed);
        }
        Box::pin(async move { registered })
    }

    fn capabilities(&self) -> BoxFuture<'_, (Option<String>, Option<String>)> {
        Box::pin(async {
            let mut caps = SYSTEM_POWER_CAPABILITIES::default();
            // SAFETY: fills the caller's struct.
            if !unsafe { GetPwrCapabilities(&mut caps) } {
                return (None, None);
            }
            let yes = |b: bool| if b { "yes" } else { "na" }.to_owned();
            // Modern Standby machines (AoAc) sleep without S3.
            (
                Some(yes(caps.SystemS3 || caps.AoAc)),
                Some(yes(caps.SystemS4 && caps.HiberFilePresent)),
            )
        })
    }

    fn suspend(&self, hibernate: bool) -> BoxFuture<'_, Result<(), SuspendError>> {
        Box::pin(async move {
            tokio::task::spawn_blocking(move || suspend_now(hibernate))
                .await
                .map_err(|e| SuspendError::Failed(e.to_string()))?
        })
    }
}

impl WindowsPower {
    fn keep_awake(&self, plan: &ProtectionPlan) -> Result<KeepHold, PowerError> {
        let mut types = vec![PowerRequestSystemRequired];
        if plan.display {
            types.push(PowerRequestDisplayRequired);
        }
        if plan.away_mode {
            types.push(PowerRequestAwayModeRequired);
        }
        match self.keep_awake {
            KeepAwake::PowerRequests => {
                let reason = if plan.reason.is_empty() {
                    plan.why.as_str()
                } else {
                    plan.reason.as_str()
                };
                let request = Request::create(reason).map_err(|code| {
                    backend_error(
                        "power request",
                        format!("PowerCreateRequest failed (error {code})"),
                    )
                })?;
                let request = request.set(&types).map_err(|code| {
                    backend_error(
                        "power request",
                        format!("PowerSetRequest failed (error {code})"),
                    )
                })?;
                Ok(KeepHold::Request(request))
            }
            KeepAwake::ThreadState(_) => {
                let mut flags = ES_CONTINUOUS | ES_SYSTEM_REQUIRED;
                if plan.display {
                    flags |= ES_DISPLAY_REQUIRED;
                }
                if plan.away_mode {
                    flags |= ES_AWAYMODE_REQUIRED;
                }
                ThreadState::hold(flags).map(KeepHold::ThreadState)
            }
        }
    }

    fn lid_hold(&self) -> Result<Arc<PolicyHold>, PowerError> {
        self.lid_hold
            .get_or_make(|| {
                let Some(policy) = self.lid_policy.clone() else {
                    return Err(PolicyError::Missing(format!(
                        "the lid-close action cannot be read or changed here: {}",
                        self.lid_policy_error
                    )));
                };
                let Some(backups) = self.backups.clone() else {
                    return Err(PolicyError::Missing(
                        "there is no durable place to back up the lid-close action".to_owned(),
                    ));
                };
                let saved = lid_action::change(policy.as_ref(), backups.as_ref())?;
                tracing::info!(scheme = %saved.scheme, ac = saved.ac, dc = saved.dc, "lid-close action set to do nothing; the user's values are backed up");
                Ok(PolicyHold::new("the lid-close action", move || {
                    lid_action::restore(policy.as_ref(), backups.as_ref())
                }))
            })
            .map_err(|e| PowerError::Refused {
                backend: BACKEND.to_owned(),
                what: Inhibit::HandleLidSwitch.as_str().to_owned(),
                message: e.to_string(),
            })
    }
}

fn backend_error(what: &str, message: String) -> PowerError {
    PowerError::Backend {
        backend: BACKEND.to_owned(),
        what: what.to_owned(),
        message,
    }
}

#[derive(Debug)]
struct WindowsHeld {
    inhibits: Vec<Inhibit>,
    _keep: Option<KeepHold>,
    _lid: Option<Arc<PolicyHold>>,
}

impl HeldProtection for WindowsHeld {
    fn inhibits(&self) -> Vec<Inhibit> {
        self.inhibits.clone()
    }
}

/// Held for its `Drop`, which releases the keep-awake request.
#[derive(Debug)]
#[allow(dead_code, reason = "the fields are held for their Drop")]
enum KeepHold {
    Request(Request),
    ThreadState(ThreadState),
}

/// A power request handle with the types set on it; cleared and closed on drop.
#[derive(Debug)]
struct Request {
    handle: HANDLE,
    set: Vec<POWER_REQUEST_TYPE>,
}

// SAFETY: a power request handle is a kernel handle usable from any thread.
unsafe impl Send for Request {}
// SAFETY: as above; `set` is only changed through `&mut`.
unsafe impl Sync for Request {}

impl Request {
    /// A new request carrying `reason`; the Win32 error code when there is none.
    fn create(reason: &str) -> Result<Request, u32> {
        let mut wide: Vec<u16> = reason.encode_utf16().chain(Some(0)).collect();
        let mut context = REASON_CONTEXT {
            Version: POWER_REQUEST_CONTEXT_VERSION,
            Flags: POWER_REQUEST_CONTEXT_SIMPLE_STRING,
            ..REASON_CONTEXT::default()
        };
        context.Reason.SimpleReasonString = wide.as_mut_ptr();
        // SAFETY: `context` and the string it points to outlive the call; the system copies
        // the reason.
        let handle = unsafe { PowerCreateRequest(&context) };
        if handle.is_null() || handle == INVALID_HANDLE_VALUE {
            // SAFETY: reads this thread's last error.
            return Err(unsafe { GetLastError() });
        }
        Ok(Request {
            handle,
            set: Vec::new(),
        })
    }

    fn set(mut self, types: &[POWER_REQUEST_TYPE]) -> Result<Request, u32> {
        for &kind in types {
            // SAFETY: `self.handle` is an open power request.
            if unsafe { PowerSetRequest(self.handle, kind) } == 0 {
                // SAFETY: reads this thread's last error; `self` drops, clearing what was set.
                return Err(unsafe { GetLastError() });
            }
            self.set.push(kind);
        }
        Ok(self)
    }
}

impl Drop for Request {
    fn drop(&mut self) {
        for &kind in &self.set {
            // SAFETY: clears a type set on this open handle.
            unsafe { PowerClearRequest(self.handle, kind) };
        }
        // SAFETY: closes the handle this value owns.
        unsafe { CloseHandle(self.handle) };
    }
}

/// A thread holding an execution state until the guard drops (the state is per thread).
#[derive(Debug)]
struct ThreadState {
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ThreadState {
    fn hold(flags: u32) -> Result<ThreadState, PowerError> {
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let (ready, is_ready) = std::sync::mpsc::channel::<bool>();
        let thread = std::thread::Builder::new()
            .name("lidguard-execution-state".into())
            .spawn(move || {
                // SAFETY: sets this thread's own execution state.
                let ok = unsafe { SetThreadExecutionState(flags) } != 0;
                let _ = ready.send(ok);
                if ok {
                    let _ = stopped.recv();
                    // SAFETY: as above; ES_CONTINUOUS alone clears what was set.
                    unsafe { SetThreadExecutionState(ES_CONTINUOUS) };
                }
            })
            .map_err(|e| backend_error("execution state", e.to_string()))?;
        if is_ready.recv().unwrap_or(false) {
            Ok(ThreadState {
                stop: Some(stop),
                thread: Some(thread),
            })
        } else {
            let _ = thread.join();
            Err(backend_error(
                "execution state",
                "SetThreadExecutionState refused the flags".to_owned(),
            ))
        }
    }
}

impl Drop for ThreadState {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

const LID_UNKNOWN: u8 = 0;
const LID_OPEN: u8 = 1;
const LID_CLOSED: u8 = 2;

/// The lid-switch notification's state, shared with the system's callback thread.
struct LidNotifications {
    state: AtomicU8,
    watchers: Mutex<Vec<UnboundedSender<()>>>,
    registered: bool,
}

impl LidNotifications {
    /// Registers for lid-switch changes. Lives as long as the process (the registration does).
    fn register() -> &'static LidNotifications {
        let shared: &'static mut LidNotifications = Box::leak(Box::new(LidNotifications {
            state: AtomicU8::new(LID_UNKNOWN),
            watchers: Mutex::new(Vec::new()),
            registered: false,
        }));
        let params: &'static mut DEVICE_NOTIFY_SUBSCRIBE_PARAMETERS =
            Box::leak(Box::new(DEVICE_NOTIFY_SUBSCRIBE_PARAMETERS {
                Callback: Some(lid_callback),
                Context: (shared as *mut LidNotifications).cast::<c_void>(),
            }));
        let mut registration: *mut c_void = std::ptr::null_mut();
        // SAFETY: the GUID and the leaked parameters live for the rest of the process; the
        // callback only touches the leaked, thread-safe `LidNotifications`.
        let status = unsafe {
            PowerSettingRegisterNotification(
                &GUID_LIDSWITCH_STATE_CHANGE,
                DEVICE_NOTIFY_CALLBACK,
                (params as *mut DEVICE_NOTIFY_SUBSCRIBE_PARAMETERS).cast::<c_void>(),
                &mut registration,
            )
        };
        shared.registered = status == 0;
        if status != 0 {
            tracing::warn!(
                status,
                "no lid-switch notifications; the lid counts as unknown"
            );
        }
        shared
    }
}

/// The system calls this with the lid's state right after registration and at each change.
unsafe extern "system" fn lid_callback(
    context: *const c_void,
    kind: u32,
    setting: *const c_void,
) -> u32 {
    if context.is_null() || setting.is_null() || kind != PBT_POWERSETTINGCHANGE {
        return 0;
    }
    // SAFETY: the context is the leaked `LidNotifications` registered above.
    let shared = unsafe { &*context.cast::<LidNotifications>() };
    // SAFETY: the system passes a POWERBROADCAST_SETTING whose Data holds DataLength bytes.
    let setting = unsafe { &*setting.cast::<POWERBROADCAST_SETTING>() };
    if setting.DataLength < 4 {
        return 0;
    }
    // SAFETY: at least 4 bytes of data follow; the field is not aligned for u32.
    let value = unsafe { std::ptr::read_unaligned(setting.Data.as_ptr().cast::<u32>()) };
    let state = if value == 0 { LID_CLOSED } else { LID_OPEN };
    shared.state.store(state, Ordering::Release);
    if let Ok(mut watchers) = shared.watchers.lock() {
        watchers.retain(|w| w.send(()).is_ok());
    }
    0
}

/// `SetSuspendState` after enabling the shutdown privilege it needs.
fn suspend_now(hibernate: bool) -> Result<(), SuspendError> {
    enable_shutdown_privilege()?;
    // SAFETY: plain call; the privilege is enabled above.
    if unsafe { SetSuspendState(hibernate, false, false) } {
        Ok(())
    } else {
        // SAFETY: reads this thread's last error.
        let code = unsafe { GetLastError() };
        Err(if code == 50 {
            SuspendError::Unsupported(format!(
                "SetSuspendState failed (error {code}: not supported, as on Modern Standby \
                 machines)"
            ))
        } else {
            SuspendError::Failed(format!("SetSuspendState failed (error {code})"))
        })
    }
}

fn enable_shutdown_privilege() -> Result<(), SuspendError> {
    let name: Vec<u16> = "SeShutdownPrivilege"
        .encode_utf16()
        .chain(Some(0))
        .collect();
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: opens our own process token; closed below.
    if unsafe {
        OpenProcessToken(
            GetCurrentProcess(),
            TOKEN_ADJUST_PRIVILEGES | TOKEN_QUERY,
            &mut token,
        )
    } == 0
    {
        // SAFETY: reads this thread's last error.
        let code = unsafe { GetLastError() };
        return Err(SuspendError::Failed(format!(
            "OpenProcessToken failed (error {code})"
        )));
    }
    let mut luid = LUID::default();
    // SAFETY: `name` is a NUL-terminated UTF-16 string; `luid` is ours.
    let looked_up = unsafe { LookupPrivilegeValueW(std::ptr::null(), name.as_ptr(), &mut luid) };
    let privileges = TOKEN_PRIVILEGES {
        PrivilegeCount: 1,
        Privileges: [LUID_AND_ATTRIBUTES {
            Luid: luid,
            Attributes: SE_PRIVILEGE_ENABLED,
        }],
    };
    // SAFETY: `token` is open with TOKEN_ADJUST_PRIVILEGES; the struct is complete.
    let adjusted = looked_up != 0
        && unsafe {
            AdjustTokenPrivileges(
                token,
                0,
                &privileges,
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        } != 0;
    // SAFETY: reads this thread's last error, set by AdjustTokenPrivileges even on success.
    let last = unsafe { GetLastError() };
    // SAFETY: closes the token opened above.
    unsafe { CloseHandle(token) };
    if !adjusted || last == ERROR_NOT_ALL_ASSIGNED {
        return Err(SuspendError::NotAllowed(format!(
            "this user may not suspend the machine (SeShutdownPrivilege, error {last})"
        )));
    }
    Ok(())
}
