//! `lidguard-tray`: starts `lidguard tray` without a terminal of its own, for the tray at login
//! (on Windows an executable of the GUI subsystem, so no console window opens; see
//! `lidguard_tray::launch`).
#![cfg_attr(windows, windows_subsystem = "windows")]

fn main() -> std::process::ExitCode {
    lidguard_tray::launch()
}
