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
//!   change (0 closed, 1 open); a machine without a lid never calls back;
//! - on a Modern Standby machine (`GetPwrCapabilities().AoAc`) on battery, system and execution
//!   requests end 5 minutes after the system sleep timeout (`PowerSetRequest`, Remarks), so while
//!   it holds there lidguard sets the battery's sleep timeout to never, backed up like the lid
//!   action ([`crate::lid_action::PlanSetting::BatterySleepTimeout`]);
//! - `SetSuspendState` fails with `ERROR_NOT_SUPPORTED` on Modern Standby; turning the display
//!   off (`WM_SYSCOMMAND` / `SC_MONITORPOWER` 2, broadcast) enters it, as the reference
//!   LidGuard and PowerToys do.

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
use crate::lid_action::{self, LidActionPolicy, PlanSetting, PolicyBackups};
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
    /// What the machine can do (Modern Standby among it).
    caps: Capabilities,
    /// The lid-action change, shared by every guard that wants it.
    lid_hold: super::SharedChange<PolicyHold>,
    /// The battery sleep timeout's change (Modern Standby), shared the same way.
    timeout_hold: super::SharedChange<PolicyHold>,
}

/// What `GetPwrCapabilities` says (`SYSTEM_POWER_CAPABILITIES`), or, where tests relocate the
/// system, `<root>/power/capabilities.json` with the same fields (Wine reports no Modern
/// Standby).
#[derive(Clone, Copy, Debug, Default, serde::Deserialize)]
struct Capabilities {
    #[serde(rename = "SystemS3", default)]
    s3: bool,
    #[serde(rename = "SystemS4", default)]
    s4: bool,
    #[serde(rename = "HiberFilePresent", default)]
    hiberfile: bool,
    /// Modern Standby (S0 low-power idle).
    #[serde(rename = "AoAc", default)]
    aoac: bool,
}

impl Capabilities {
    fn read(roots: &Roots) -> Option<Capabilities> {
        if roots.overridden {
            let path = roots.sys_root.join("power/capabilities.json");
            if let Ok(text) = std::fs::read_to_string(path) {
                return serde_json::from_str(&text).ok();
            }
        }
        let mut caps = SYSTEM_POWER_CAPABILITIES::default();
        // SAFETY: fills the caller's struct.
        if !unsafe { GetPwrCapabilities(&mut caps) } {
            return None;
        }
        Some(Capabilities {
            s3: caps.SystemS3,
            s4: caps.SystemS4,
            hiberfile: caps.HiberFilePresent,
            aoac: caps.AoAc,
        })
    }
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
    // A daemon that died with the plan changed left backups: put the user's values back
    // before anything else.
    if let (Some(policy), Some(backups)) = (&lid_policy, &backups) {
        for setting in PlanSetting::ALL {
            match lid_action::restore(policy.as_ref(), backups.as_ref(), setting) {
                Ok(lid_action::Restored::Nothing) => {}
                Ok(restored) => tracing::warn!(
                    ?restored,
                    "restored the power plan value a previous daemon left changed"
                ),
                Err(e) => tracing::error!(
                    error = %e,
                    setting = setting.name(),
                    "cannot restore the power plan value a previous daemon left changed"
                ),
            }
        }
    }
    let caps = Capabilities::read(&roots).unwrap_or_default();
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
        caps,
        lid_hold: super::SharedChange::new(),
        timeout_hold: super::SharedChange::new(),
    }))
}

/// Restores the plan values left changed (the lid-close action, the battery sleep timeout), with
/// the OS's own policy (or the test seam); returns what came back.
pub(super) fn restore_pending(backups: &dyn PolicyBackups) -> Result<Vec<String>, PolicyError> {
    let roots = Roots::from_env();
    let mut pending = Vec::new();
    for setting in PlanSetting::ALL {
        if backups.load(setting.backup_kind())?.is_some() {
            pending.push(setting);
        }
    }
    if pending.is_empty() {
        return Ok(Vec::new());
    }
    let policy: Box<dyn LidActionPolicy> = if roots.overridden {
        Box::new(lid_action::FilePolicy::below(&roots.sys_root))
    } else {
        Box::new(crate::windows::powrprof::Powrprof::load()?)
    };
    let mut restored = Vec::new();
    for setting in pending {
        restored.extend(lid_action::restore(policy.as_ref(), backups, setting)?.describe());
    }
    Ok(restored)
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
            let timeout = keep.as_ref().and_then(|_| self.timeout_hold());
            let lid = super::lid_hold_if(plan, &mut inhibits, || self.lid_hold())?;
            Ok(Box::new(WindowsHeld {
                inhibits,
                _keep: keep,
                _timeout: timeout,
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
        let caps = self.caps;
        Box::pin(async move {
            let yes = |b: bool| if b { "yes" } else { "na" }.to_owned();
            // Modern Standby machines (AoAc) have no S3: their sleep is the display turned off.
            let sleep = match (caps.s3, caps.aoac) {
                (true, _) => yes(true),
                (false, true) => "yes (Modern Standby: the display turned off)".to_owned(),
                (false, false) => yes(false),
            };
            (Some(sleep), Some(yes(caps.s4 && caps.hiberfile)))
        })
    }

    fn suspend(&self, hibernate: bool) -> BoxFuture<'_, Result<(), SuspendError>> {
        let modern_standby = self.caps.aoac;
        Box::pin(async move {
            tokio::task::spawn_blocking(move || suspend_now(hibernate, modern_standby))
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
        self.plan_hold(&self.lid_hold, PlanSetting::LidAction)
            .map_err(|e| PowerError::Refused {
                backend: BACKEND.to_owned(),
                what: Inhibit::HandleLidSwitch.as_str().to_owned(),
                message: e.to_string(),
            })
    }

    /// On a Modern Standby machine, the battery's sleep timeout set to never while keep-awake is
    /// held (else the power request ends 5 minutes after it on battery). A refusal (a value
    /// Group Policy enforces, say) keeps the power request and says in the log that on battery
    /// it will not last.
    fn timeout_hold(&self) -> Option<Arc<PolicyHold>> {
        if !self.caps.aoac {
            return None;
        }
        match self.plan_hold(&self.timeout_hold, PlanSetting::BatterySleepTimeout) {
            Ok(hold) => Some(hold),
            Err(e) => {
                tracing::warn!(
                    error = %e,
                    "Modern Standby: the sleep timeout on battery could not be set to never, so \
                     on battery the hold ends 5 minutes after that timeout"
                );
                None
            }
        }
    }

    /// `setting` changed to lidguard's values in the active plan, the user's backed up first; one
    /// change shared by every guard (`shared`), undone by the last one's drop.
    fn plan_hold(
        &self,
        shared: &super::SharedChange<PolicyHold>,
        setting: PlanSetting,
    ) -> Result<Arc<PolicyHold>, PolicyError> {
        shared.get_or_make(|| {
            let Some(policy) = self.lid_policy.clone() else {
                return Err(PolicyError::Missing(format!(
                    "the {} cannot be read or changed here: {}",
                    setting.name(),
                    self.lid_policy_error
                )));
            };
            let Some(backups) = self.backups.clone() else {
                return Err(PolicyError::Missing(format!(
                    "there is no durable place to back up the {}",
                    setting.name()
                )));
            };
            let saved = lid_action::change(policy.as_ref(), backups.as_ref(), setting)?;
            tracing::info!(
                setting = setting.name(),
                scheme = %saved.scheme,
                ac = saved.ac,
                dc = saved.dc,
                "power plan value changed; the user's values are backed up"
            );
            Ok(PolicyHold::new(setting.name(), move || {
                lid_action::restore(policy.as_ref(), backups.as_ref(), setting)
            }))
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
    _timeout: Option<Arc<PolicyHold>>,
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

/// `SetSuspendState` after enabling the shutdown privilege it needs; on a Modern Standby
/// machine, where it is not supported, sleep is the display turned off.
fn suspend_now(hibernate: bool, modern_standby: bool) -> Result<(), SuspendError> {
    enable_shutdown_privilege()?;
    // SAFETY: plain call; the privilege is enabled above.
    if unsafe { SetSuspendState(hibernate, false, false) } {
        return Ok(());
    }
    // SAFETY: reads this thread's last error.
    let code = unsafe { GetLastError() };
    const NOT_SUPPORTED: u32 = 50;
    match (code, modern_standby, hibernate) {
        (NOT_SUPPORTED, true, false) => display_off(),
        (NOT_SUPPORTED, _, _) => Err(SuspendError::Unsupported(format!(
            "SetSuspendState failed (error {code}: not supported{})",
            if modern_standby {
                "; Modern Standby has no hibernation of its own to ask for"
            } else {
                ""
            }
        ))),
        _ => Err(SuspendError::Failed(format!(
            "SetSuspendState failed (error {code})"
        ))),
    }
}

/// Modern Standby's way to sleep: the display turned off (`WM_SYSCOMMAND` with
/// `SC_MONITORPOWER` 2, broadcast to the session's windows), which the system takes as the
/// start of standby. Works from the user's session only (the daemon runs there).
fn display_off() -> Result<(), SuspendError> {
    use windows_sys::Win32::UI::WindowsAndMessaging::{
        HWND_BROADCAST, SC_MONITORPOWER, SendNotifyMessageW, WM_SYSCOMMAND,
    };
    /// `SC_MONITORPOWER`'s argument: the display is being shut off.
    const OFF: isize = 2;
    // SAFETY: a broadcast message with plain integer arguments; SendNotifyMessage does not wait.
    if unsafe { SendNotifyMessageW(HWND_BROADCAST, WM_SYSCOMMAND, SC_MONITORPOWER as usize, OFF) }
        != 0
    {
        tracing::info!("Modern Standby: the display was turned off, which enters standby");
        Ok(())
    } else {
        // SAFETY: reads this thread's last error.
        let code = unsafe { GetLastError() };
        Err(SuspendError::Failed(format!(
            "Modern Standby: turning the display off failed (error {code})"
        )))
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
