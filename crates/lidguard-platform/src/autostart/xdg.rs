//! The tray at login on Linux: an XDG autostart entry, `lidguard-tray.desktop` in
//! `$XDG_CONFIG_HOME/autostart/` (else `~/.config/autostart/`), which every desktop that
//! follows the Desktop Application Autostart specification starts at login. `setup` writes it
//! where a desktop session runs; `uninstall` deletes it, and the folders it had to create when
//! they are empty (the entry lists them itself, `X-Lidguard-Created-Dirs`). A file of that name
//! without that key is the user's: `setup` stops rather than replace it, `uninstall` leaves it,
//! and `doctor` says so.
//!
//! The file work takes the config folder as an argument, so it is tested here.

use std::path::{Path, PathBuf};

use super::AutostartError;

/// The entry's file name.
const FILE: &str = "lidguard-tray.desktop";

/// The key that marks the entry as lidguard's and lists the folders it created.
const CREATED: &str = "X-Lidguard-Created-Dirs=";

/// Where the entry goes below the config folder `config` (`~/.config`).
fn path_in(config: &Path) -> PathBuf {
    config.join("autostart").join(FILE)
}

fn config() -> Result<PathBuf, AutostartError> {
    lidguard_files::environment::config_home().ok_or(AutostartError::NoHome)
}

/// What lets the place be found, when it cannot be.
pub const FIND_IT: &str = "set HOME (or XDG_CONFIG_HOME) so the autostart entry can be found";

/// The entry's path, as the user reads it.
pub fn place() -> Result<String, AutostartError> {
    Ok(path_in(&config()?).display().to_string())
}

/// Whether lidguard's entry is there.
pub fn installed() -> Result<bool, AutostartError> {
    Ok(ours(&path_in(&config()?)).is_some())
}

/// Whether a file of that name is there that lidguard did not write.
pub fn foreign() -> Result<bool, AutostartError> {
    Ok(foreign_in(&config()?))
}

/// The folders lidguard's entry at `path` created, when the file is lidguard's.
fn ours(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(CREATED))
        .map(str::to_owned)
}

fn foreign_in(config: &Path) -> bool {
    let path = path_in(config);
    path.symlink_metadata().is_ok() && ours(&path).is_none()
}

/// Whether a graphical session runs here (where a tray makes sense).
pub fn wanted() -> bool {
    ["XDG_CURRENT_DESKTOP", "WAYLAND_DISPLAY", "DISPLAY"]
        .iter()
        .any(|v| lidguard_files::environment::var(v).is_some_and(|x| !x.is_empty()))
}

/// A value for `Exec`: quoted as the Desktop Entry specification asks when it holds more than
/// plain path characters, `%` doubled.
fn exec_arg(text: &str) -> String {
    let text = text.replace('%', "%%");
    if text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:=@,".contains(c))
    {
        return text;
    }
    let mut quoted = String::from("\"");
    for c in text.chars() {
        if matches!(c, '"' | '`' | '$' | '\\') {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('"');
    // The entry's own escapes: a backslash in a string value is written twice.
    quoted.replace('\\', "\\\\")
}

fn entry(exe: &Path, created: &[PathBuf]) -> String {
    let dirs: Vec<String> = created.iter().map(|d| d.display().to_string()).collect();
    format!(
        "[Desktop Entry]\n\
         Type=Application\n\
         Name=lidguard tray\n\
         Comment=Keeps this laptop awake while AI coding agents work; its state at a glance\n\
         Exec={} tray\n\
         Terminal=false\n\
         NoDisplay=true\n\
         X-GNOME-Autostart-enabled=true\n\
         {CREATED}{}\n",
        exec_arg(&exe.display().to_string()),
        dirs.join(";")
    )
}

/// Writes the entry (readable by the user alone); returns its path.
pub fn install(exe: &Path) -> Result<String, AutostartError> {
    install_in(&config()?, exe)
}

/// Writes the entry running `exe` below `config`; a file of that name lidguard did not write
/// stops it, untouched.
fn install_in(config: &Path, exe: &Path) -> Result<String, AutostartError> {
    let path = path_in(config);
    if foreign_in(config) {
        return Err(AutostartError::Foreign(path.display().to_string()));
    }
    let dir = config.join("autostart");
    let dir = dir.as_path();
    // Written again over its own entry: the folders it made then are still its to take away.
    let mut created: Vec<PathBuf> = ours(&path)
        .map(|dirs| {
            dirs.split(';')
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
                .collect()
        })
        .unwrap_or_default();
    let mut missing = Some(dir);
    while let Some(d) = missing.filter(|d| !d.exists()) {
        created.push(d.to_path_buf());
        missing = d.parent();
    }
    std::fs::create_dir_all(dir).map_err(AutostartError::io("create", dir))?;
    lidguard_files::atomic::write(&path, entry(exe, &created).as_bytes(), 0o600)
        .map_err(AutostartError::io("write", &path))?;
    Ok(path.display().to_string())
}

/// Deletes lidguard's entry (never a file it did not write) and the folders it created, when
/// empty; returns its path, `None` when there was none.
pub fn remove() -> Result<Option<String>, AutostartError> {
    remove_in(&config()?)
}

fn remove_in(config: &Path) -> Result<Option<String>, AutostartError> {
    let path = path_in(config);
    let Some(dirs) = ours(&path) else {
        return Ok(None);
    };
    std::fs::remove_file(&path).map_err(AutostartError::io("delete", &path))?;
    // Deepest first; a folder something else now uses stays.
    for dir in dirs.split(';').filter(|d| !d.is_empty()) {
        let _ = std::fs::remove_dir(dir);
    }
    Ok(Some(path.display().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_quotes_what_the_specification_reserves() {
        assert_eq!(exec_arg("/usr/bin/lidguard"), "/usr/bin/lidguard");
        assert_eq!(
            exec_arg("/home/a b/100%/lidguard"),
            "\"/home/a b/100%%/lidguard\""
        );
        assert_eq!(exec_arg("/x/$y\"z"), "\"/x/\\\\$y\\\\\"z\"");
    }

    #[test]
    fn the_entry_starts_the_tray_and_lists_what_it_created() {
        let text = entry(
            Path::new("/opt/lidguard"),
            &[
                PathBuf::from("/h/.config/autostart"),
                PathBuf::from("/h/.config"),
            ],
        );
        assert!(text.starts_with("[Desktop Entry]\n"));
        assert!(text.contains("\nExec=/opt/lidguard tray\n"));
        assert!(text.ends_with("X-Lidguard-Created-Dirs=/h/.config/autostart;/h/.config\n"));
    }

    /// A user's own entry of that name survives `setup` and `uninstall` byte for byte, and is
    /// told apart; lidguard's own is written again over itself and taken away with the folders
    /// it made.
    #[test]
    fn a_users_own_entry_of_that_name_is_left_as_it_is() {
        let home = tempfile::tempdir().unwrap();
        let config = home.path().join(".config");
        let exe = Path::new("/opt/lidguard");
        let path = install_in(&config, exe).unwrap();
        assert!(!foreign_in(&config) && ours(Path::new(&path)).is_some());
        install_in(&config, exe).unwrap();
        assert_eq!(remove_in(&config).unwrap().as_deref(), Some(path.as_str()));
        assert!(!config.exists(), "the folders it made went with it");

        let autostart = config.join("autostart");
        std::fs::create_dir_all(&autostart).unwrap();
        let mine = "[Desktop Entry]\nType=Application\nExec=my-own-tray\n";
        lidguard_files::atomic::write(&autostart.join(FILE), mine.as_bytes(), 0o644).unwrap();
        assert!(foreign_in(&config));
        let err = install_in(&config, exe).unwrap_err().to_string();
        assert!(err.contains("lidguard did not write it"), "{err}");
        assert_eq!(remove_in(&config).unwrap(), None);
        assert_eq!(std::fs::read_to_string(autostart.join(FILE)).unwrap(), mine);
    }
}
