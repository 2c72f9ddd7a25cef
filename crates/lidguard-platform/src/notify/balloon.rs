//! Windows: a notice is the balloon of a notification-area icon of its own
//! (`Shell_NotifyIconW` with `NIF_INFO`), which Windows 10 and 11 show as a toast and Wine's
//! shell as a balloon. The icon comes with the notice and goes when the notice has been seen:
//! clicked, closed, or timed out — and Windows does not count the time while nobody uses the
//! machine (Microsoft Learn, `NOTIFYICONDATA`, `uTimeout`), so a notice that comes while the
//! laptop is in a bag waits for its user. [`AT_MOST`] only bounds a shell that never says. A
//! WinRT toast would need an AppUserModelID registered through a Start-menu shortcut; a balloon
//! needs nothing installed.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use windows_sys::Win32::Foundation::{HWND, LPARAM, LRESULT, WPARAM};
use windows_sys::Win32::UI::Shell::{
    NIF_ICON, NIF_INFO, NIF_MESSAGE, NIF_TIP, NIIF_INFO, NIIF_RESPECT_QUIET_TIME, NIIF_WARNING,
    NIM_ADD, NIM_DELETE, NIN_BALLOONHIDE, NIN_BALLOONTIMEOUT, NIN_BALLOONUSERCLICK,
    NOTIFYICONDATAW, NOTIFYICONDATAW_0, Shell_NotifyIconW,
};
use windows_sys::Win32::UI::WindowsAndMessaging::{
    DefWindowProcW, DestroyWindow, DispatchMessageW, GetMessageW, IDI_INFORMATION, IDI_WARNING,
    LoadIconW, MSG, PostQuitMessage, SetTimer, TranslateMessage, WM_APP, WM_LBUTTONUP, WM_TIMER,
};

use super::{Notice, NotifyError};

/// The class of the hidden windows that own the notices' icons.
const CLASS: &str = "lidguard-notice";
/// What the notification area sends about a notice's icon and balloon.
const WM_NOTICE: u32 = WM_APP + 1;
/// The longest a notice's icon stays when the shell never says its balloon was seen or timed
/// out (an Explorer restarted meanwhile forgets it).
const AT_MOST: Duration = Duration::from_secs(8 * 60 * 60);
/// How long the balloon itself asks to stay: the longest a shell that reads it allows (Wine
/// keeps a balloon 10 to 30 s; Windows since Vista takes the time from its accessibility
/// settings instead).
const BALLOON_FOR: Duration = Duration::from_secs(30);

/// The icon id of the next notice (the id the caller logs).
static NEXT_ID: AtomicU32 = AtomicU32::new(1);

/// Shows `notice`; returns once the notification area took it (its icon then lives on a
/// thread of its own until the notice is done).
pub(super) fn show(notice: &Notice) -> Result<u32, NotifyError> {
    let (ready, is_ready) = mpsc::channel();
    let notice = notice.clone();
    std::thread::Builder::new()
        .name("notice".to_owned())
        .spawn(move || run(&notice, &ready))
        .map_err(|e| NotifyError::Service(format!("cannot start the notice's thread: {e}")))?;
    is_ready
        .recv()
        .map_err(|_| NotifyError::Service("the notice's thread ended".to_owned()))?
}

/// The notice's thread: a hidden window owns the icon, whose balloon is the notice.
fn run(notice: &Notice, ready: &mpsc::Sender<Result<u32, NotifyError>>) {
    let hwnd = match window() {
        Ok(hwnd) => hwnd,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let (icon, flags) = if notice.urgent {
        (IDI_WARNING, NIIF_WARNING)
    } else {
        (IDI_INFORMATION, NIIF_INFO)
    };
    let mut data = NOTIFYICONDATAW {
        cbSize: size_of::<NOTIFYICONDATAW>() as u32,
        hWnd: hwnd,
        uID: id,
        uFlags: NIF_ICON | NIF_TIP | NIF_INFO | NIF_MESSAGE,
        uCallbackMessage: WM_NOTICE,
        // SAFETY: a system icon, shared: never destroyed.
        hIcon: unsafe { LoadIconW(std::ptr::null_mut(), icon) },
        Anonymous: NOTIFYICONDATAW_0 {
            uTimeout: BALLOON_FOR.as_millis() as u32,
        },
        dwInfoFlags: flags | NIIF_RESPECT_QUIET_TIME,
        ..Default::default()
    };
    fill(&mut data.szTip, "lidguard");
    fill(&mut data.szInfoTitle, &notice.summary);
    fill(&mut data.szInfo, &notice.body);
    // SAFETY: `data` is complete and lives through the call.
    if unsafe { Shell_NotifyIconW(NIM_ADD, &data) } == 0 {
        let _ = ready.send(Err(NotifyError::Service(
            "the notification area refused the notice (is the shell running?)".to_owned(),
        )));
        // SAFETY: our own window, on its thread.
        unsafe { DestroyWindow(hwnd) };
        return;
    }
    let _ = ready.send(Ok(id));
    let mut msg = MSG::default();
    // SAFETY: a timer of this thread's window, then its message loop, until the window
    // procedure posts the quit.
    unsafe {
        SetTimer(hwnd, 1, AT_MOST.as_millis() as u32, None);
        while GetMessageW(&mut msg, std::ptr::null_mut(), 0, 0) > 0 {
            TranslateMessage(&msg);
            DispatchMessageW(&msg);
        }
        Shell_NotifyIconW(NIM_DELETE, &data);
        DestroyWindow(hwnd);
    }
}

/// A hidden window of this thread for the icon; none without a desktop.
fn window() -> Result<HWND, NotifyError> {
    crate::hidden_window::hidden_window(CLASS, CLASS, Some(window_proc)).map_err(|e| {
        NotifyError::NoSession(format!("no window can be made here (no desktop?): {e}"))
    })
}

/// Ends the notice once it has been seen: clicked or closed (or its icon clicked), or timed out
/// (`NIN_BALLOONTIMEOUT`: shown for its time while someone used the machine, or closed with
/// its ×) — or at [`AT_MOST`].
unsafe extern "system" fn window_proc(
    hwnd: HWND,
    message: u32,
    wparam: WPARAM,
    lparam: LPARAM,
) -> LRESULT {
    let done = match message {
        WM_NOTICE => matches!(
            lparam as u32,
            NIN_BALLOONUSERCLICK | NIN_BALLOONTIMEOUT | NIN_BALLOONHIDE | WM_LBUTTONUP
        ),
        WM_TIMER => true,
        _ => false,
    };
    if done {
        // SAFETY: ends this thread's message loop.
        unsafe { PostQuitMessage(0) };
        return 0;
    }
    // SAFETY: the default handling of every other message.
    unsafe { DefWindowProcW(hwnd, message, wparam, lparam) }
}

/// Copies `text` into a fixed UTF-16 field, cut to fit with its NUL.
fn fill(field: &mut [u16], text: &str) {
    let room = field.len().saturating_sub(1);
    for (slot, unit) in field.iter_mut().zip(text.encode_utf16().take(room)) {
        *slot = unit;
    }
}
