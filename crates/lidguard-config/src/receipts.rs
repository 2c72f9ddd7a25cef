//! What an agent's config file was before lidguard first installed into it, so that remove
//! gives back exactly those bytes (an expanded one-line container, a blank file, a file that did
//! not exist) and keeps what the user had (an empty `"hooks": {}`).
//!
//! One private JSON file per (kind of entry, config file) under `<state>/installs/`. It is
//! written at the first install into a file that holds none of lidguard's entries, kept while
//! they are there (a later install or timeout refresh does not replace it), and dropped by
//! remove.

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
