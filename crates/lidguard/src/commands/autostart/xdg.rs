//! The tray at login on Linux: an XDG autostart entry, `lidguard-tray.desktop` in
//! `$XDG_CONFIG_HOME/autostart/` (else `~/.config/autostart/`), which every desktop that
//! follows the Desktop Application Autostart specification starts at login. `setup` writes it
//! where a desktop session runs; `uninstall` deletes it, and the folders it had to create when
//! they are empty (the entry lists them itself, `X-Lidguard-Created-Dirs`).

use std::path::{Path, PathBuf};

use anyhow::Context;

/// The entry's file name.
const FILE: &str = "lidguard-tray.desktop";

/// The key that marks the entry as lidguard's and lists the folders it created.
const CREATED: &str = "X-Lidguard-Created-Dirs=";

/// Where the entry goes.
fn path() -> anyhow::Result<PathBuf> {
    Ok(crate::commands::config_home()?.join("autostart").join(FILE))
}

/// The entry's path, as the user reads it.
pub(crate) fn place() -> anyhow::Result<String> {
    Ok(path()?.display().to_string())
}

/// Whether lidguard's entry is there.
pub(crate) fn installed() -> anyhow::Result<bool> {
    Ok(path()?.exists())
}

/// Whether a graphical session runs here (where a tray makes sense).
pub(crate) fn wanted() -> bool {
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
pub(crate) fn install() -> anyhow::Result<String> {
    let path = path()?;
    let dir = path.parent().context("the autostart folder")?;
    let mut created = Vec::new();
    let mut missing = Some(dir);
    while let Some(d) = missing.filter(|d| !d.exists()) {
        created.push(d.to_path_buf());
        missing = d.parent();
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let exe = std::env::current_exe().context("cannot find the lidguard executable")?;
    lidguard_files::atomic::write(&path, entry(&exe, &created).as_bytes(), 0o600)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path.display().to_string())
}

/// Deletes lidguard's entry (never a file it did not write) and the folders it created, when
/// empty; returns its path, `None` when there was none.
pub(crate) fn remove() -> anyhow::Result<Option<String>> {
    let path = path()?;
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    let Some(dirs) = text.lines().find_map(|l| l.strip_prefix(CREATED)) else {
        return Ok(None);
    };
    std::fs::remove_file(&path).with_context(|| format!("cannot delete {}", path.display()))?;
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
}
