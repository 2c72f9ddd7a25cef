//! The tray's "Open live status": `lidguard live-status` in a terminal window of its own, the
//! way each desktop opens one.

/// The terminals tried for live-status, in order, with the argument before the command.
#[cfg(not(any(windows, target_os = "macos")))]
const TERMINALS: &[(&str, &str)] = &[
    ("x-terminal-emulator", "-e"),
    ("xdg-terminal-exec", ""),
    ("gnome-terminal", "--"),
    ("konsole", "-e"),
    ("xfce4-terminal", "-x"),
    ("xterm", "-e"),
];

/// Opens `lidguard live-status` in a console window of its own.
#[cfg(windows)]
pub(crate) fn open() -> std::io::Result<()> {
    let exe = std::env::current_exe()?;
    // `start` gives the command a new console; its first quoted argument is the title.
    std::process::Command::new("cmd")
        .args(["/c", "start", "lidguard live-status"])
        .arg(exe)
        .arg("live-status")
        .spawn()
        .map(drop)
}

/// Opens `lidguard live-status` in a new Terminal window: AppleScript's `do script`, the
/// executable's path handed in as an argument and shell-quoted by `quoted form of` (macOS asks
/// the user once to let lidguard control Terminal).
#[cfg(target_os = "macos")]
pub(crate) fn open() -> std::io::Result<()> {
    use lidguard_platform::osascript;

    let exe = std::env::current_exe()?;
    let script = [
        "on run argv",
        "set command to (quoted form of (item 2 of argv)) & \" live-status\"",
        "tell application \"Terminal\"",
        "activate",
        "do script command",
        "end tell",
        "end run",
    ];
    std::process::Command::new(osascript::PROGRAM)
        .args(osascript::arguments(&script, [exe.into_os_string()]))
        .spawn()
        .map(drop)
}

/// Opens `lidguard live-status` in the first terminal found on the PATH.
#[cfg(not(any(windows, target_os = "macos")))]
pub(crate) fn open() -> std::io::Result<()> {
    let exe = std::env::current_exe()?;
    let path = lidguard_files::environment::var("PATH").unwrap_or_default();
    let found = TERMINALS.iter().find_map(|(name, flag)| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
            .map(|p| (p, *flag))
    });
    let Some((terminal, flag)) = found else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no terminal found to open live-status in",
        ));
    };
    let mut cmd = std::process::Command::new(terminal);
    if !flag.is_empty() {
        cmd.arg(flag);
    }
    cmd.arg(exe).arg("live-status");
    cmd.spawn().map(drop)
}
