//! The Windows tray icon: a notification-area icon (`Shell_NotifyIconW`) owned by a hidden
//! window on a thread of its own, with the menu on a click. Menu picks only send an [`Action`]
//! to the tray's loop, which does the work.

use std::cell::RefCell;
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use windows_sys::Win32::Foundation::{HWND, LPARAM, LRESULT, POINT, WPARAM};
use windows_sys::Win32::Graphics::Gdi::{CreateBitmap, DeleteObject};
use windows_sys::Win32::UI::Shell::{
    NIF_ICON, NIF_MESSAGE, NIF_TIP, NIM_ADD, NIM_DELETE, NIM_MODIFY, NOTIFYICONDATAW,
    Shell_NotifyIconW,
};
use windows_sys::Win32::UI::WindowsAndMessaging::{
    AppendMenuW, CreateIconIndirect, CreatePopupMenu, DefWindowProcW, DestroyIcon, DestroyMenu,
    DestroyWindow, DispatchMessageW, FindWindowExW, GetCursorPos, GetMessageW,
    GetWindowThreadProcessId, HICON, HMENU, ICONINFO, MF_CHECKED, MF_GRAYED, MF_POPUP,
    MF_SEPARATOR, MF_STRING, MSG, PostMessageW, PostQuitMessage, RegisterWindowMessageW,
    SetForegroundWindow, TPM_RETURNCMD, TPM_RIGHTBUTTON, TrackPopupMenu, TranslateMessage, WM_APP,
    WM_CLOSE, WM_CONTEXTMENU, WM_DESTROY, WM_LBUTTONUP, WM_NULL, WM_RBUTTONUP,
};

use super::menu::{self, DECISIONS, Entry};
use super::view::View;
use super::{Action, Wake};

/// The hidden window's class, by which `uninstall` finds a running tray.
const CLASS: &str = "lidguard-tray";
/// Sent to the window when the view changed.
const WM_SHOW: u32 = WM_APP + 1;
/// What the notification area sends about the icon (clicks).
const WM_ICON: u32 = WM_APP + 2;
/// The icon's size in pixels (the notification area scales it).
const ICON_SIZE: i32 = 32;
/// Menu ids of the closed-lid decisions: this plus their index in [`DECISIONS`].
const DECISION_IDS: usize = 100;

/// What the window's thread knows.
struct Window {
    view: Arc<Mutex<View>>,
    wakes: Sender<Wake>,
    icon: HICON,
    /// What the taskbar broadcasts when it (re)starts: the icon is added again.
    taskbar_created: u32,
}

thread_local! {
    static WINDOW: RefCell<Option<Window>> = const { RefCell::new(None) };
}

/// The running icon; [`Tray::show`] replaces what it shows.
pub(crate) struct Tray {
    view: Arc<Mutex<View>>,
    /// The hidden window (an `HWND`, kept as a number to cross threads).
    hwnd: usize,
    thread: JoinHandle<()>,
}

impl Tray {
    /// Adds the icon to the notification area; an error when there is none (no desktop).
    pub(crate) fn spawn(view: View, wakes: Sender<Wake>) -> anyhow::Result<Tray> {
        let view = Arc::new(Mutex::new(view));
        let (ready, is_ready) = mpsc::channel();
        let shared = view.clone();
        let thread = std::thread::spawn(move || run_window(shared, wakes, &ready));
        let hwnd = is_ready
            .recv()
            .map_err(|_| anyhow::anyhow!("the tray's window thread ended"))?
            .map_err(|e| {
                anyhow::anyhow!(
                    "cannot show the tray icon: {e}. The tray needs a desktop with a \
                     notification area; `lidguard live-status` works in any terminal"
                )
            })?;
        Ok(Tray { view, hwnd, thread })
    }

    /// Shows `view` (the icon is changed only when something changed).
    pub(crate) fn show(&self, view: View) {
        let mut current = self.view.lock().unwrap_or_else(PoisonError::into_inner);
        if *current != view {
            *current = view;
            drop(current);
            // SAFETY: posting to a window of this process; a closed one ignores it.
            unsafe { PostMessageW(self.hwnd as HWND, WM_SHOW, 0, 0) };
        }
    }

    /// Takes the icon away and ends the window's thread.
    pub(crate) fn close(self) {
        // SAFETY: as in `show`.
        unsafe { PostMessageW(self.hwnd as HWND, WM_CLOSE, 0, 0) };
        let _ = self.thread.join();
    }
}

/// Why the icon could not be shown.
#[derive(Debug, thiserror::Error)]
enum NoIcon {
    /// No window: no desktop (the error is 0 then) or another reason Windows gave.
    #[error("no window can be made here{}", match .0.raw_os_error() {
        Some(0) | None => " (no desktop?)".to_owned(),
        Some(_) => format!(": {}", .0),
    })]
    NoWindow(std::io::Error),
    /// The shell did not take the icon.
    #[error("the notification area refused the icon (is the shell running?)")]
    Refused,
}

/// The window's thread: creates the window and the icon, says so on `ready`, then serves
/// messages until the window is closed.
fn run_window(view: Arc<Mutex<View>>, wakes: Sender<Wake>, ready: &Sender<Result<usize, NoIcon>>) {
    let hwnd =
        match lidguard_platform::hidden_window::hidden_window(CLASS, "lidguard", Some(window_proc))
        {
            Ok(hwnd) => hwnd,
            Err(e) => {
                let _ = ready.send(Err(NoIcon::NoWindow(e)));
                return;
            }
        };
    // SAFETY: a NUL-terminated name living through the call.
    let taskbar_created = unsafe { RegisterWindowMessageW(wide("TaskbarCreated").as_ptr()) };
    let mood = view.lock().unwrap_or_else(PoisonError::into_inner).mood;
    let icon = make_icon(mood);
    WINDOW.with_borrow_mut(|w| {
        *w = Some(Window {
            view,
            wakes,
            icon,
            taskbar_created,
        });
    });
    if !notify(hwnd, NIM_ADD) {
        let _ = ready.send(Err(NoIcon::Refused));
        // SAFETY: our own window, on its thread.
        unsafe { DestroyWindow(hwnd) };
        return;
    }
    tracing::info!("the tray icon is in the notification area");
    let _ = ready.send(Ok(hwnd as usize));
    let mut msg = MSG::default();
    // SAFETY: the standard message loop of this thread's window.
    unsafe {
        while GetMessageW(&mut msg, std::ptr::null_mut(), 0, 0) > 0 {
            TranslateMessage(&msg);
            DispatchMessageW(&msg);
        }
    }
    WINDOW.with_borrow_mut(|w| {
        if let Some(w) = w.take() {
            // SAFETY: the icon was made by `make_icon` and is no longer shown.
            unsafe { DestroyIcon(w.icon) };
            // Closed from outside (`uninstall`): the tray quits, as from its menu.
            let _ = w.wakes.send(Wake::Action(Action::Quit));
        }
    });
}

/// Closes the window of the tray running as process `pid` (`uninstall`), as its menu's Quit
/// does: true. When this desktop has no window of it to close, ends the process: false.
pub(crate) fn close_tray_of(pid: u32) -> anyhow::Result<bool> {
    let class = wide(CLASS);
    let mut hwnd: HWND = std::ptr::null_mut();
    loop {
        // SAFETY: walks the top-level windows of the class (hidden ones included).
        hwnd =
            unsafe { FindWindowExW(std::ptr::null_mut(), hwnd, class.as_ptr(), std::ptr::null()) };
        if hwnd.is_null() {
            break;
        }
        let mut owner = 0_u32;
        // SAFETY: a window handle just found, and a place for its process id.
        unsafe { GetWindowThreadProcessId(hwnd, &mut owner) };
        if owner == pid {
            // SAFETY: posting a message to that window.
            if unsafe { PostMessageW(hwnd, WM_CLOSE, 0, 0) } != 0 {
                return Ok(true);
            }
        }
    }
    end_process(pid).map(|()| false)
}

/// Ends process `pid` (a tray whose window is on another desktop).
fn end_process(pid: u32) -> anyhow::Result<()> {
    use windows_sys::Win32::Foundation::CloseHandle;
    use windows_sys::Win32::System::Threading::{OpenProcess, PROCESS_TERMINATE, TerminateProcess};
    // SAFETY: a handle opened here, used and closed here.
    unsafe {
        let process = OpenProcess(PROCESS_TERMINATE, 0, pid);
        if process.is_null() {
            return Err(std::io::Error::last_os_error().into());
        }
        let ended = TerminateProcess(process, 0);
        let error = std::io::Error::last_os_error();
        CloseHandle(process);
        if ended == 0 {
            return Err(error.into());
        }
    }
    Ok(())
}

extern "system" fn window_proc(hwnd: HWND, msg: u32, wparam: WPARAM, lparam: LPARAM) -> LRESULT {
    match msg {
        WM_SHOW => {
            let mood = WINDOW.with_borrow(|w| w.as_ref().map(|w| lock(&w.view).mood));
            if let Some(mood) = mood {
                let icon = make_icon(mood);
                let old = WINDOW
                    .with_borrow_mut(|w| w.as_mut().map(|w| std::mem::replace(&mut w.icon, icon)));
                notify(hwnd, NIM_MODIFY);
                if let Some(old) = old {
                    // SAFETY: replaced above; the shell has the new one.
                    unsafe { DestroyIcon(old) };
                }
            }
            0
        }
        WM_ICON => {
            let event = (lparam & 0xffff) as u32;
            if matches!(event, WM_LBUTTONUP | WM_RBUTTONUP | WM_CONTEXTMENU) {
                show_menu(hwnd);
            }
            0
        }
        WM_CLOSE => {
            notify(hwnd, NIM_DELETE);
            // SAFETY: our own window, on its thread.
            unsafe { DestroyWindow(hwnd) };
            0
        }
        WM_DESTROY => {
            // SAFETY: ends this thread's message loop.
            unsafe { PostQuitMessage(0) };
            0
        }
        _ => {
            let restarted = WINDOW.with_borrow(|w| w.as_ref().map(|w| w.taskbar_created));
            if restarted == Some(msg) {
                notify(hwnd, NIM_ADD);
            }
            // SAFETY: the default handling of everything else.
            unsafe { DefWindowProcW(hwnd, msg, wparam, lparam) }
        }
    }
}

fn lock(view: &Mutex<View>) -> std::sync::MutexGuard<'_, View> {
    view.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Adds, changes or deletes the icon with the current picture and tooltip.
fn notify(hwnd: HWND, message: u32) -> bool {
    let Some((icon, tip)) = WINDOW.with_borrow(|w| {
        w.as_ref().map(|w| {
            let view = lock(&w.view);
            let mut lines = vec![view.headline.clone()];
            lines.extend(view.detail.iter().cloned());
            lines.extend(view.note.clone());
            (w.icon, lines.join("\n"))
        })
    }) else {
        return false;
    };
    let mut data = NOTIFYICONDATAW {
        cbSize: size_of::<NOTIFYICONDATAW>() as u32,
        hWnd: hwnd,
        uID: 1,
        uFlags: NIF_ICON | NIF_MESSAGE | NIF_TIP,
        uCallbackMessage: WM_ICON,
        hIcon: icon,
        ..Default::default()
    };
    // The tooltip holds 127 characters; the headline comes first.
    for (slot, unit) in data.szTip.iter_mut().zip(tip.encode_utf16().take(127)) {
        *slot = unit;
    }
    // SAFETY: `data` is complete and lives through the call.
    unsafe { Shell_NotifyIconW(message, &data) != 0 }
}

/// Shows the menu where the pointer is and sends the action picked.
fn show_menu(hwnd: HWND) {
    let Some(entries) = WINDOW.with_borrow(|w| w.as_ref().map(|w| menu::entries(&lock(&w.view))))
    else {
        return;
    };
    let mut actions = Vec::new();
    // SAFETY: the menus are made, shown and destroyed here, on the window's thread.
    let picked = unsafe {
        let menu = CreatePopupMenu();
        for entry in &entries {
            append(menu, entry, &mut actions);
        }
        let mut at = POINT::default();
        GetCursorPos(&mut at);
        // Without it the menu stays open when the user clicks elsewhere (documented).
        SetForegroundWindow(hwnd);
        let picked = TrackPopupMenu(
            menu,
            TPM_RETURNCMD | TPM_RIGHTBUTTON,
            at.x,
            at.y,
            0,
            hwnd,
            std::ptr::null(),
        );
        PostMessageW(hwnd, WM_NULL, 0, 0);
        DestroyMenu(menu);
        picked as usize
    };
    let action = match picked {
        0 => None,
        id if id >= DECISION_IDS => DECISIONS
            .get(id - DECISION_IDS)
            .map(|(decision, _)| Action::ClosedLid(*decision)),
        id => actions.get(id - 1).copied(),
    };
    if let Some(action) = action {
        WINDOW.with_borrow(|w| {
            if let Some(w) = w {
                let _ = w.wakes.send(Wake::Action(action));
            }
        });
    }
}

/// Adds `entry` to `menu`; an action's id is its place in `actions` plus one.
///
/// # Safety
/// `menu` is a live menu of this thread.
unsafe fn append(menu: HMENU, entry: &Entry, actions: &mut Vec<Action>) {
    // SAFETY: the texts live through each call; `menu` is live (the caller's promise).
    unsafe {
        match entry {
            Entry::Text(text) => {
                AppendMenuW(menu, MF_STRING | MF_GRAYED, 0, wide(text).as_ptr());
            }
            Entry::Action {
                label,
                action,
                enabled,
            } => {
                actions.push(*action);
                let flags = if *enabled {
                    MF_STRING
                } else {
                    MF_STRING | MF_GRAYED
                };
                AppendMenuW(menu, flags, actions.len(), wide(label).as_ptr());
            }
            Entry::Separator => {
                AppendMenuW(menu, MF_SEPARATOR, 0, std::ptr::null());
            }
            Entry::ClosedLid(current) => {
                let sub = CreatePopupMenu();
                for (i, (decision, label)) in DECISIONS.iter().enumerate() {
                    let checked = if decision == current { MF_CHECKED } else { 0 };
                    AppendMenuW(
                        sub,
                        MF_STRING | checked,
                        DECISION_IDS + i,
                        wide(label).as_ptr(),
                    );
                }
                let label = wide(menu::CLOSED_LID_LABEL);
                AppendMenuW(menu, MF_POPUP, sub as usize, label.as_ptr());
            }
        }
    }
}

/// The mood's picture as an icon (32-bit colour with alpha, BGRA rows).
fn make_icon(mood: super::view::Mood) -> HICON {
    let bgra: Vec<u8> = mood
        .picture(ICON_SIZE)
        .into_iter()
        .flat_map(|[r, g, b, a]| [b, g, r, a])
        .collect();
    let mask = vec![0u8; (ICON_SIZE * ICON_SIZE / 8) as usize];
    // SAFETY: both bitmaps are made from buffers of their exact size and deleted once the icon
    // holds its own copies.
    unsafe {
        let colour = CreateBitmap(ICON_SIZE, ICON_SIZE, 1, 32, bgra.as_ptr().cast());
        let mask = CreateBitmap(ICON_SIZE, ICON_SIZE, 1, 1, mask.as_ptr().cast());
        let info = ICONINFO {
            fIcon: 1,
            xHotspot: 0,
            yHotspot: 0,
            hbmMask: mask,
            hbmColor: colour,
        };
        let icon = CreateIconIndirect(&info);
        DeleteObject(colour);
        DeleteObject(mask);
        icon
    }
}

/// `text` as a NUL-terminated UTF-16 string.
fn wide(text: &str) -> Vec<u16> {
    text.encode_utf16().chain(std::iter::once(0)).collect()
}
