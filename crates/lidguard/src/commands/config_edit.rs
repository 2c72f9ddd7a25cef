//! What the hook and MCP config commands share: which agents a provider argument names and
//! where their files are, and writing a file after a pure edit (the dry-run diff, the
//! timestamped backup, the atomic write or delete, and one line saying what happened).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use jiff::Timestamp;
use lidguard_core::provider::Provider;
use lidguard_ipc::{Places, settings_file};
use lidguard_providers::install::{Change, InstallError};

use crate::output;

/// The agents whose config lidguard manages, in display order.
pub(crate) const MANAGED: [Provider; 4] = [
    Provider::Claude,
    Provider::Codex,
    Provider::Copilot,
    Provider::OpenCode,
];

/// Where an agent keeps the file lidguard edits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Location {
    /// The agent's config directory; `all` only includes agents whose directory exists.
    pub(crate) root: PathBuf,
    /// The file lidguard edits.
    pub(crate) file: PathBuf,
}

/// The agents a provider argument names, each with its location and, for `all`, why it is
/// skipped (its config directory does not exist). `refusal` starts the error for an agent
/// lidguard does not manage; `ask` picks one when the argument is missing.
pub(crate) fn targets(
    which: Option<&str>,
    refusal: &str,
    ask: impl FnOnce() -> anyhow::Result<Provider>,
    locate: impl Fn(Provider) -> anyhow::Result<Location>,
) -> anyhow::Result<Vec<(Provider, Location, Option<String>)>> {
    let chosen = match which {
        Some("all") => None,
        Some(name) => {
            let p: Provider = name.parse()?;
            if !MANAGED.contains(&p) {
                bail!("{refusal} codex, claude, copilot and opencode, not {p}");
            }
            Some(p)
        }
        None => Some(ask()?),
    };
    let mut out = Vec::new();
    for p in MANAGED
        .into_iter()
        .filter(|p| chosen.is_none_or(|c| c == *p))
    {
        let location = locate(p)?;
        let skipped = (chosen.is_none() && !location.root.is_dir())
            .then(|| format!("skipped: {} does not exist", location.root.display()));
        out.push((p, location, skipped));
    }
    Ok(out)
}

/// What is being done.
#[derive(Clone, Copy)]
pub(crate) struct Mode {
    /// Removing (else installing).
    pub(crate) remove: bool,
    /// Only show the diff.
    pub(crate) dry_run: bool,
    /// The entries, in words: `lidguard's hooks`, `lidguard's MCP server`.
    pub(crate) what: &'static str,
}

/// Applies `change` to `file` (whose current text is `existing`), or with `dry_run` prints the
/// diff instead. `label` names the agent in the lines printed; `tag` names the backup folder.
pub(crate) fn write(
    places: &Places,
    (label, tag): (&str, &str),
    (file, existing): (&Path, Option<&str>),
    change: &Change,
    mode: &Mode,
) -> anyhow::Result<()> {
    let Mode {
        remove,
        dry_run,
        what,
    } = *mode;
    let new_text = match change {
        Change::Unchanged => {
            let state = if remove {
                "nothing to remove".to_owned()
            } else {
                "already up to date".to_owned()
            };
            output::line(&format!("{label}: {state} ({})", file.display()))?;
            return Ok(());
        }
        Change::Changed { new_text } => Some(new_text.as_str()),
        Change::Delete => None,
    };
    if dry_run {
        output::line(&format!("{label}: would change {}", file.display()))?;
        let diff = unified_diff(file, existing.unwrap_or(""), new_text.unwrap_or(""));
        output::prompt(&diff)?;
        return Ok(());
    }
    let backup = match existing {
        Some(text) => Some(backup(places, tag, file, text)?),
        None => None,
    };
    match new_text {
        Some(text) => {
            if let Some(dir) = file.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
            }
            settings_file::write_atomically(file, text.as_bytes())
                .with_context(|| format!("cannot write {}", file.display()))?;
        }
        None => std::fs::remove_file(file)
            .with_context(|| format!("cannot remove {}", file.display()))?,
    }
    let verb = match (remove, new_text) {
        (true, None) => "removed".to_owned(),
        (true, Some(_)) => format!("removed {what} from"),
        (false, _) => format!("installed {what} in"),
    };
    output::line(&format!("{label}: {verb} {}", file.display()))?;
    if let Some(b) = backup {
        output::line(&format!("  previous version saved as {}", b.display()))?;
    }
    Ok(())
}

/// The file's text, `None` when it does not exist.
pub(crate) fn read(path: &Path) -> anyhow::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// The error for a file lidguard will not edit.
pub(crate) fn refuse(path: &Path, e: &InstallError) -> anyhow::Error {
    anyhow::anyhow!(
        "{}: {e}\nNothing was changed. Fix the file (or move it aside), then try again.",
        path.display()
    )
}

/// The unified diff `--dry-run` shows for `path`.
pub(crate) fn unified_diff(path: &Path, old: &str, new: &str) -> String {
    let name = path.display().to_string();
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&name, &name)
        .to_string()
}

/// Saves `text` under lidguard's state directory (not next to the file, where an agent that
/// loads every file of its directory could pick it up).
pub(crate) fn backup(
    places: &Places,
    tag: &str,
    file: &Path,
    text: &str,
) -> anyhow::Result<PathBuf> {
    let dir = places.state_dir.join("backups").join(tag);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stamp = Timestamp::now().strftime("%Y%m%dT%H%M%S%.fZ").to_string();
    let path = dir.join(format!("{name}.{stamp}"));
    settings_file::write_atomically(&path, text.as_bytes())
        .with_context(|| format!("cannot back up {} to {}", file.display(), path.display()))?;
    Ok(path)
}
