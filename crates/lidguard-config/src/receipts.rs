//! What an agent's config file was before lidguard first installed into it, so that remove
//! gives back exactly those bytes (an expanded one-line container, a blank file, a file that did
//! not exist) and keeps what the user had (an empty `"hooks": {}`).
//!
//! One private JSON file per (kind of entry, config file) under `<state>/installs/`, written by
//! every install and dropped by remove. It holds the file as it was before lidguard's entries
//! (the file as found when it had none of them; when it had some, what removing them gives) and
//! a digest of what lidguard last wrote. When remove finds exactly those bytes, nobody changed
//! the file since, and the "before" text is given back as it was; otherwise remove takes out
//! lidguard's entries one by one, keeping every change made since.

use std::path::{Path, PathBuf};

use lidguard_ipc::Places;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The file as it was before lidguard's first install.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Receipt {
    /// The config file (where its bytes are).
    pub file: PathBuf,
    /// Its text then; `None` when it did not exist.
    pub before: Option<String>,
    /// The SHA-256 (hex) of what lidguard last wrote into it.
    pub after: String,
    /// The folders lidguard created to hold the file, deepest first: remove takes each away
    /// again when it is left empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub created_dirs: Vec<PathBuf>,
}

/// The folders above `file` that do not exist yet, deepest first (what writing it creates).
pub fn missing_dirs(file: &Path) -> Vec<PathBuf> {
    file.ancestors()
        .skip(1)
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .map(Path::to_path_buf)
        .collect()
}

/// Removes the folders a receipt says lidguard created, deepest first, each only when empty
/// (a folder with anyone else's file in it stays).
pub fn remove_created_dirs(receipt: &Receipt) {
    for dir in &receipt.created_dirs {
        if std::fs::remove_dir(dir).is_err() {
            return;
        }
    }
}

/// The digest [`Receipt::after`] holds.
pub fn digest(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Where the receipt of `tag` (`claude`, `mcp-codex`, `provider-mcp`) for `file` is kept.
fn path(places: &Places, tag: &str, file: &Path) -> PathBuf {
    places
        .state_dir
        .join("installs")
        .join(tag)
        .join(format!("{}.json", key(file)))
}

/// A short stable name for a file path.
pub(crate) fn key(file: &Path) -> String {
    let digest = Sha256::digest(file.to_string_lossy().as_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// The receipt, if there is a readable one for this very file.
pub fn load(places: &Places, tag: &str, file: &Path) -> Option<Receipt> {
    let text = std::fs::read_to_string(path(places, tag, file)).ok()?;
    serde_json::from_str::<Receipt>(&text)
        .ok()
        .filter(|r| r.file == file)
}

/// Saves the receipt (readable by the user alone: it holds a copy of the config).
pub fn save(places: &Places, tag: &str, receipt: &Receipt) -> std::io::Result<()> {
    let text = serde_json::to_string(receipt).map_err(std::io::Error::other)?;
    lidguard_files::private::write(&path(places, tag, &receipt.file), text.as_bytes())
}

/// Drops the receipt (nothing of lidguard's is left in the file).
pub fn drop(places: &Places, tag: &str, file: &Path) {
    let _ = std::fs::remove_file(path(places, tag, file));
}
