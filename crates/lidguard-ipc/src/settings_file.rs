//! Reading and writing `settings.json`.
//!
//! A file that does not parse is never overwritten: the caller gets an error naming the file
//! and saying what to do. Writes are atomic (temporary file in the same directory, then
//! rename) so a crash never leaves half a file, and private (0600 in a 0700 directory: the
//! file may hold the webhook secret). Every change goes through [`update`], which holds a lock
//! from read to write, so the CLI and the MCP server never lose each other's change.

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

/// Saves the settings atomically and privately, creating the directory (0700) if needed.
/// Prefer [`update`], which does not lose a concurrent change.
/// A settings file that is a link (into a dotfiles repository, say) is written where it points,
/// and stays a link.
pub fn save(path: &Path, settings: &Settings) -> Result<(), SettingsFileError> {
    let io = |action: &'static str| {
        move |source| SettingsFileError::Io {
            action,
            path: path.to_owned(),
            source,
        }
    };
    // The links are followed as for the agents' configs (a link to a file yet to be made too).
    let target = lidguard_files::edit::Target::resolve(path)
        .map_err(|e| io("follow the link of")(std::io::Error::other(e)))?;
    lidguard_files::private::write(&target.real, settings.to_json_pretty().as_bytes())
        .map_err(io("write"))
}

/// The lock every writer of `path` holds from its read to its write.
fn lock_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.lock"))
}

/// The settings before and after an [`update`].
#[derive(Clone, Debug, PartialEq)]
pub struct Updated {
    /// As they were (the defaults when there was no file).
    pub old: Settings,
    /// As they are now (equal to `old` when nothing changed and nothing was written).
    pub new: Settings,
}

/// Reads the settings, lets `change` make the new ones from them, and saves those — all under
/// the settings lock, so concurrent writers apply their changes one after the other. Nothing
/// is written when `change` refuses or changes nothing, or when the file does not parse.
pub fn update<E: From<SettingsFileError>>(
    path: &Path,
    os: Os,
    change: impl FnOnce(&Settings) -> Result<Settings, E>,
) -> Result<Updated, E> {
    let _lock = lidguard_files::lock::acquire(&lock_path(path), lidguard_files::lock::DEFAULT_WAIT)
        .map_err(|source| SettingsFileError::Io {
            action: "lock",
            path: path.to_owned(),
            source,
        })?;
    let old = load_or_default(path, os)?;
    let new = change(&old)?;
    if new != old {
        save(path, &new)?;
    }
    Ok(Updated { old, new })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_linked_settings_file_is_written_through_its_link() {
        let dir = tempfile::tempdir().unwrap();
        let dotfiles = dir.path().join("dotfiles/lidguard.json");
        std::fs::create_dir_all(dotfiles.parent().unwrap()).unwrap();
        std::fs::write(&dotfiles, "{}").unwrap();
        let path = dir.path().join("cfg/settings.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&dotfiles, &path).unwrap();
        let mut s = Settings::defaults_for(Os::Linux);
        s.session_timeout_minutes = Some(30);
        save(&path, &s).unwrap();
        // A link to a file not made yet is followed too.
        let later = dir.path().join("dotfiles/later.json");
        let dangling = dir.path().join("cfg/dangling.json");
        std::os::unix::fs::symlink(&later, &dangling).unwrap();
        save(&dangling, &s).unwrap();
        assert!(later.is_file());
        assert!(path.is_symlink());
        assert_eq!(
            load(&dotfiles, Os::Linux)
                .unwrap()
                .unwrap()
                .session_timeout_minutes,
            Some(30)
        );
    }

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
