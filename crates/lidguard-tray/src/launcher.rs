//! `lidguard-tray`: starts `lidguard tray` without a terminal of its own, for the tray at login.
//!
//! On Windows this executable is of the GUI subsystem. Windows opens a console window for a
//! console-subsystem program started without one (Microsoft Learn, "Console Creation"), so a Run
//! key entry naming `lidguard.exe tray` put a console window on the screen at every login, and
//! closing it ended the tray. This one opens none: it starts the `lidguard.exe` next to it with
//! `CREATE_NO_WINDOW` ("Process Creation Flags": the process runs without a console window) and
//! returns; a failure is shown in a message box, there being no console to print to.
//!
//! Elsewhere it runs `lidguard tray` in its place (the same program the login entries name).
use std::process::{Command, ExitCode};

/// Starts `lidguard tray` from the `lidguard` next to this executable; the `lidguard-tray`
/// executable's `main`.
pub fn launch() -> ExitCode {
    let lidguard = match std::env::current_exe() {
        Ok(me) => me.with_file_name(if cfg!(windows) {
            "lidguard.exe"
        } else {
            "lidguard"
        }),
        Err(e) => return failed(&format!("cannot find where lidguard-tray is: {e}")),
    };
    let mut tray = Command::new(&lidguard);
    tray.arg("tray");
    start(tray, &lidguard)
}

#[cfg(windows)]
fn start(mut tray: Command, lidguard: &std::path::Path) -> ExitCode {
    use std::os::windows::process::CommandExt;
    use std::process::Stdio;
    /// `CREATE_NO_WINDOW` (Microsoft Learn, "Process Creation Flags").
    const CREATE_NO_WINDOW: u32 = 0x0800_0000;
    let started = tray
        .creation_flags(CREATE_NO_WINDOW)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    match started {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => failed(&format!("cannot start {}: {e}", lidguard.display())),
    }
}

#[cfg(unix)]
fn start(mut tray: Command, lidguard: &std::path::Path) -> ExitCode {
    use std::os::unix::process::CommandExt;
    let e = tray.exec();
    failed(&format!("cannot run {}: {e}", lidguard.display()))
}

#[cfg(not(any(windows, unix)))]
fn start(_tray: Command, lidguard: &std::path::Path) -> ExitCode {
    failed(&format!("cannot start {} here", lidguard.display()))
}

/// Says why the tray did not start: in a message box on Windows (no console), on stderr
/// elsewhere.
fn failed(why: &str) -> ExitCode {
    #[cfg(windows)]
    {
        use windows_sys::Win32::UI::WindowsAndMessaging::{MB_ICONERROR, MB_OK, MessageBoxW};
        let wide = |s: &str| s.encode_utf16().chain(Some(0)).collect::<Vec<u16>>();
        let (text, title) = (wide(why), wide("lidguard tray"));
        // SAFETY: NUL-terminated strings living through the call; no owner window.
        unsafe {
            MessageBoxW(
                std::ptr::null_mut(),
                text.as_ptr(),
                title.as_ptr(),
                MB_OK | MB_ICONERROR,
            )
        };
    }
    #[cfg(not(windows))]
    {
        #[allow(clippy::print_stderr, reason = "the reason is for a human")]
        {
            eprintln!("lidguard-tray: {why}");
        }
    }
    ExitCode::FAILURE
}
