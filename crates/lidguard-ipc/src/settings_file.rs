//! Reading and writing `settings.json`.
//!
//! A file that does not parse is never overwritten: the caller gets an error naming the file
//! and saying what to do. Writes are atomic (temporary file in the same directory, then
//! rename) so a crash never leaves half a file.

use std::io;
use std::path::{Path, PathBuf};

use lidguard_core::settings::{Os, Settings, SoundSetting};

/// A problem with the settings file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsFileError {
    /// The file exists but is not valid settings.
    #[error(
        "the settings file {path} is not valid: {reason}\n\
         Fix it by hand, or move it aside to start again from the defaults; lidguard does not overwrite it."
    )]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The file could not be read or written.
    #[error("cannot {action} the settings file {path}: {source}")]
    Io {
        /// `read` or `write`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
}

/// Checks what the pure core cannot: a sound setting that names a `.wav` file must name an
/// existing file. The error names the CLI flag.
pub fn check_sound_files(settings: &Settings) -> Result<(), String> {
    for (flag, value) in [
        ("post-stop-suspend-sound", &settings.post_stop_suspend_sound),
        (
            "closed-lid-stop-follow-up-sound",
            &settings.closed_lid_stop_follow_up_sound,
        ),
    ] {
        if let Some(SoundSetting::WavFile(path)) = SoundSetting::parse(value)
            && !Path::new(&path).is_file()
        {
            return Err(format!("--{flag}: {path} is not an existing .wav file"));
        }
    }
    Ok(())
}

/// Loads the settings; a missing file gives `Ok(None)`.
pub fn load(path: &Path, os: Os) -> Result<Option<Settings>, SettingsFileError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(SettingsFileError::Io {
                action: "read",
                path: path.to_owned(),
                source,
            });
        }
    };
    Settings::from_json(&text, os)
        .map(Some)
        .map_err(|e| SettingsFileError::Invalid {
            path: path.to_owned(),
            reason: e.to_string(),
        })
}

/// Loads the settings, or the defaults when there is no file.
pub fn load_or_default(path: &Path, os: Os) -> Result<Settings, SettingsFileError> {
    Ok(load(path, os)?.unwrap_or_else(|| Settings::defaults_for(os)))
}

/// Saves the settings atomically, creating the directory if needed.
pub fn save(path: &Path, settings: &Settings) -> Result<(), SettingsFileError> {
    let io_err = |source| SettingsFileError::Io {
        action: "write",
        path: path.to_owned(),
        source,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io_err)?;
    write_atomically(path, settings.to_json_pretty().as_bytes()).map_err(io_err)
}

/// Writes `bytes` to a temporary file next to `path`, syncs it, and renames it over `path`.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        #[allow(clippy::disallowed_methods)] // this is the one atomic rename
        std::fs::rename(&tmp, path)?;
        // Make the rename itself durable.
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_file_is_none_and_save_load_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cfg/settings.json");
        assert!(load(&path, Os::Linux).unwrap().is_none());
        let mut s = Settings::defaults_for(Os::Linux);
        s.session_timeout_minutes = None;
        save(&path, &s).unwrap();
        assert_eq!(load(&path, Os::Linux).unwrap(), Some(s));
    }

    #[test]
    fn corrupt_file_is_an_error_naming_the_file_and_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "{ not json").unwrap();
        let err = load(&path, Os::Linux).unwrap_err().to_string();
        assert!(err.contains(&path.display().to_string()), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ not json");
    }
}
