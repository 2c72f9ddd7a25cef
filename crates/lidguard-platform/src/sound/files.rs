//! Which file a sound setting names: the freedesktop sound themes below the data folders for a
//! system sound, an existing `.wav` for a custom one.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::path::{Path, PathBuf};

use lidguard_core::settings::{SoundSetting, SystemSound};

use super::{MAX_DEPTH, SoundError, THEME_EXTENSIONS};

pub(super) fn join_paths_for_display(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return "no data directory".to_owned();
    }
    paths
        .iter()
        .map(|path| path.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The freedesktop sound-theme names tried for a system sound, in order of preference.
pub fn theme_names(sound: SystemSound) -> &'static [&'static str] {
    match sound {
        SystemSound::Asterisk => &["dialog-information", "message", "bell"],
        SystemSound::Beep => &["bell", "audio-volume-change", "message"],
        SystemSound::Exclamation => &["dialog-warning", "bell"],
        SystemSound::Hand => &["dialog-error", "dialog-warning"],
        SystemSound::Question => &["dialog-question", "dialog-information"],
    }
}

/// The XDG data directories of this process's environment, most important first; see
/// [`data_dirs`].
pub fn data_dirs_from_env() -> Vec<PathBuf> {
    data_dirs(lidguard_files::environment::var)
}

/// The XDG data directories, most important first, with environment variables looked up through
/// `var`: `$XDG_DATA_HOME` (default `$HOME/.local/share`), then each entry of `$XDG_DATA_DIRS`
/// (default `/usr/local/share:/usr/share`).
///
/// Empty variables count as unset; relative paths are ignored (as the XDG specification asks)
/// and a directory listed twice is kept only the first time.
pub fn data_dirs(var: impl Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    let lookup = |name: &str| var(name).filter(|value| !value.is_empty());
    let mut dirs: Vec<PathBuf> = Vec::new();
    let home = lookup("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .or_else(|| {
            lookup("HOME")
                .map(PathBuf::from)
                .filter(|dir| dir.is_absolute())
                .map(|home| home.join(".local").join("share"))
        });
    dirs.extend(home);
    let system = lookup("XDG_DATA_DIRS").unwrap_or_else(|| "/usr/local/share:/usr/share".into());
    for dir in std::env::split_paths(&system) {
        if dir.is_absolute() && !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    dirs
}

/// The file a sound setting plays.
///
/// - [`SoundSetting::System`] gives the first theme name of [`theme_names`] that has a file;
///   for that name the data directories are tried in order and, within one, the matching files
///   below `<data dir>/sounds` (searched recursively) in sorted path order. A file matches when
///   its stem is the name and its extension is `oga`, `ogg` or `wav`.
/// - [`SoundSetting::WavFile`] gives the path itself, which must have a `.wav` extension (any
///   case) and be an existing regular file. A relative path is relative to the current
///   directory.
/// - [`SoundSetting::Off`] gives [`SoundError::Off`].
pub fn resolve(setting: &SoundSetting, data_dirs: &[PathBuf]) -> Result<PathBuf, SoundError> {
    match setting {
        SoundSetting::Off => Err(SoundError::Off),
        SoundSetting::System(sound) => resolve_system(*sound, data_dirs),
        SoundSetting::WavFile(path) => resolve_wav(Path::new(path)),
    }
}

pub(super) fn resolve_wav(path: &Path) -> Result<PathBuf, SoundError> {
    if !has_extension(path, "wav") {
        return Err(SoundError::NotWav(path.to_owned()));
    }
    match fs::metadata(path) {
        Ok(metadata) if metadata.is_file() => Ok(path.to_owned()),
        Ok(_) => Err(SoundError::NotAFile(path.to_owned())),
        Err(source) => Err(SoundError::FileNotFound {
            path: path.to_owned(),
            source,
        }),
    }
}

pub(super) fn resolve_system(
    sound: SystemSound,
    data_dirs: &[PathBuf],
) -> Result<PathBuf, SoundError> {
    let names = theme_names(sound);
    let searched: Vec<PathBuf> = data_dirs.iter().map(|dir| dir.join("sounds")).collect();
    let found: Vec<Vec<PathBuf>> = searched
        .iter()
        .map(|root| {
            let mut files = Vec::new();
            collect_theme_files(root, names, 0, &mut files);
            files.sort();
            files
        })
        .collect();
    for name in names {
        for files in &found {
            if let Some(file) = files
                .iter()
                .find(|file| file.file_stem() == Some(OsStr::new(name)))
            {
                return Ok(file.clone());
            }
        }
    }
    Err(SoundError::SystemSoundNotFound {
        sound,
        names,
        searched,
    })
}

/// Adds the files below `dir` whose stem is one of `names` and whose extension is a theme
/// extension. Unreadable directories are skipped.
pub(super) fn collect_theme_files(
    dir: &Path,
    names: &[&str],
    depth: usize,
    out: &mut Vec<PathBuf>,
) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        // Follows symbolic links: themes often link to each other's files.
        let Ok(metadata) = fs::metadata(&path) else {
            continue;
        };
        if metadata.is_dir() {
            if depth < MAX_DEPTH {
                collect_theme_files(&path, names, depth + 1, out);
            }
        } else if metadata.is_file() {
            let stem_matches = path
                .file_stem()
                .and_then(OsStr::to_str)
                .is_some_and(|stem| names.contains(&stem));
            let extension_matches = THEME_EXTENSIONS
                .iter()
                .any(|extension| has_extension(&path, extension));
            if stem_matches && extension_matches {
                out.push(path);
            }
        }
    }
}

/// Whether `path`'s extension is `extension`, ignoring ASCII case.
pub(super) fn has_extension(path: &Path, extension: &str) -> bool {
    path.extension()
        .and_then(OsStr::to_str)
        .is_some_and(|actual| actual.eq_ignore_ascii_case(extension))
}
