//! A hidden window of the calling thread, for what Windows reaches through one: a notice's
//! balloon and the tray's notification-area icon (`Shell_NotifyIconW` sends their messages to a
//! window), handled by the caller's window procedure.

use windows_sys::Win32::Foundation::{HWND, SetLastError};
use windows_sys::Win32::System::LibraryLoader::GetModuleHandleW;
use windows_sys::Win32::UI::WindowsAndMessaging::{
    CreateWindowExW, RegisterClassW, WNDCLASSW, WNDPROC,
};

/// A window of class `class` (registered with `window_proc` the first time) titled `title`;
/// the error Windows gave when none can be made (`0` when it gave none: no desktop).
pub fn hidden_window(class: &str, title: &str, window_proc: WNDPROC) -> std::io::Result<HWND> {
    let (class, title) = (wide(class), wide(title));
    // SAFETY: the names outlive the calls; the window procedure is the caller's plain function.
    let hwnd = unsafe {
        let instance = GetModuleHandleW(std::ptr::null());
        let wc = WNDCLASSW {
            lpfnWndProc: window_proc,
            hInstance: instance,
            lpszClassName: class.as_ptr(),
            ..Default::default()
        };
        // Registered before by this process: the class stays as it was, and the refusal's
        // error must not stand for the window's.
        RegisterClassW(&wc);
        SetLastError(0);
        CreateWindowExW(
            0,
            class.as_ptr(),
            title.as_ptr(),
            0,
            0,
            0,
            0,
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            instance,
            std::ptr::null(),
        )
    };
    if hwnd.is_null() {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(hwnd)
    }
}

fn wide(text: &str) -> Vec<u16> {
    text.encode_utf16().chain(Some(0)).collect()
}
