//! One edit of one agent config file, start to end: follow links, lock, read, compute the
//! change (pure, in `lidguard_providers::install`), show it (`--dry-run`) or back up and write
//! it, and keep the install receipt.
//!
//! The rules (README, "What hook-install changes"): the file the agent reads is edited, links
//! stay links; mode and owner stay; read-only files are refused without `--force`; nothing is
//! written over a change someone made meanwhile (the edit is computed again, up to 3 times);
//! the previous version is saved under `<state>/backups/<tag>/` with its own mode; remove after
//! install gives back the original bytes.

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use lidguard_files::edit::{self, Current, EditError, Target};
use lidguard_files::lock;
use lidguard_ipc::Places;
use lidguard_providers::install::{Change, InstallError, is_empty_config};
use serde::Serialize;

use crate::ConfigError;
use crate::receipts::{self, Receipt};

/// How an edit is carried out.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Only say what would change.
    pub dry_run: bool,
    /// Edit a read-only file, or take over an entry with lidguard's name that lidguard did not
    /// write.
    pub force: bool,
}

/// Installing or removing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Adding or correcting lidguard's entries.
    Install,
    /// Taking them out.
    Remove,
    /// Changing something next to them (Codex's trust records): no receipt is kept.
    Update,
}

/// What the pure edit made of the file's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    /// The change.
    pub change: Change,
    /// Install: when the file already held lidguard's entries, what it would be without them
    /// (`Some(None)`: no file at all); `None` when it held none.
    pub without_ours: Option<Option<String>>,
}

impl Planned {
    /// A change that needs no receipt bookkeeping (remove, or an update next to the entries).
    pub fn change(change: Change) -> Planned {
        Planned {
            change,
            without_ours: None,
        }
    }
}

/// What removing lidguard's entries leaves of `text` (for [`Planned::without_ours`]).
pub fn left_after(text: &str, removal: Change) -> Option<String> {
    match removal {
        Change::Unchanged => Some(text.to_owned()),
        Change::Changed { new_text } => Some(new_text),
        Change::Delete => None,
    }
}

/// What happened to the file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "action")]
pub enum Action {
    /// It already was what was asked for.
    Unchanged,
    /// `--dry-run`: what would change.
    WouldChange {
        /// A unified diff (empty text for a deletion of an empty file).
        diff: String,
        /// The file would be deleted.
        delete: bool,
    },
    /// It was written (created when it did not exist).
    Written {
        /// It did not exist before.
        created: bool,
    },
    /// It was deleted (it held nothing but lidguard's entries).
    Deleted {
        /// For a link: the link was removed and the file it pointed at was left in place.
        kept: Option<PathBuf>,
    },
}

/// The result of one edit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    /// The file as the agent names it.
    pub file: PathBuf,
    /// When that is a link: the file that was (or would be) edited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edited: Option<PathBuf>,
    /// What happened.
    #[serde(flatten)]
    pub action: Action,
    /// Where the previous version was saved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup: Option<PathBuf>,
    /// The file's text after the edit (`None` when it does not exist).
    #[serde(skip)]
    pub text: Option<String>,
}

/// Where lidguard's lock for edits of `real` lives.
fn lock_path(places: &Places, real: &Path) -> PathBuf {
    places
        .state_dir
        .join("locks")
        .join(format!("{}.lock", receipts::key(real)))
}

/// The pure edit: the file's text and, for a removal, its text before lidguard's install.
type Plan<'a> = dyn Fn(Option<&str>, Option<&str>) -> Result<Planned, InstallError> + 'a;

/// How many times an edit is computed again when the file changed under it.
const ATTEMPTS: usize = 3;

/// Edits `path` (an agent's config file): `plan` gets the file's text (`None`: no file) and,
/// for a removal, the text it had before lidguard's first install when that is known, and
/// returns the change. `tag` names the kind of entry (`claude`, `mcp-codex`): it keeps the
/// backups and receipts of different entries in one file apart.
pub fn apply(
    places: &Places,
    tag: &str,
    path: &Path,
    direction: Direction,
    options: Options,
    plan: impl Fn(Option<&str>, Option<&str>) -> Result<Planned, InstallError>,
) -> Result<Outcome, ConfigError> {
    let target = Target::resolve(path)?;
    let _lock =
        lock::acquire(&lock_path(places, &target.real), lock::DEFAULT_WAIT).map_err(|source| {
            ConfigError::Io {
                action: "lock",
                path: path.to_owned(),
                source,
            }
        })?;
    let mut attempt = 0;
    loop {
        attempt += 1;
        match apply_once(places, tag, &target, direction, options, &plan) {
            Err(ConfigError::Edit(EditError::ChangedMeanwhile { .. })) if attempt < ATTEMPTS => {}
            other => return other,
        }
    }
}

fn apply_once(
    places: &Places,
    tag: &str,
    target: &Target,
    direction: Direction,
    options: Options,
    plan: &Plan<'_>,
) -> Result<Outcome, ConfigError> {
    let current = edit::read(target)?;
    let text = match &current {
        Some(c) => Some(
            String::from_utf8(c.bytes.clone())
                .map_err(|_| ConfigError::NotText(target.path.clone()))?,
        ),
        None => None,
    };
    let receipt = receipts::load(places, tag, &target.real);
    // The receipt speaks for the file only while it holds exactly what lidguard last wrote.
    let untouched_since = receipt.as_ref().filter(|r| {
        text.as_deref()
            .is_some_and(|t| receipts::digest(t) == r.after)
    });
    let hint = match direction {
        Direction::Remove => receipt.as_ref().and_then(|r| r.before.as_deref()),
        Direction::Install | Direction::Update => None,
    };
    let planned = plan(text.as_deref(), hint).map_err(|source| ConfigError::Refused {
        file: target.path.clone(),
        source,
    })?;
    let (change, created_by_us) = settle(
        direction,
        text.as_ref(),
        receipt.as_ref(),
        untouched_since,
        planned.change.clone(),
    );
    let edited = target.is_link().then(|| target.real.clone());
    let outcome = |action, backup, text| Outcome {
        file: target.path.clone(),
        edited: edited.clone(),
        action,
        backup,
        text,
    };
    let new_text = match &change {
        Change::Unchanged => {
            if direction == Direction::Remove {
                receipts::drop(places, tag, &target.real);
            }
            return Ok(outcome(Action::Unchanged, None, text));
        }
        Change::Changed { new_text } => Some(new_text.clone()),
        Change::Delete => None,
    };
    if options.dry_run {
        edit::check_writable(target, current.as_ref(), options.force)?;
        let diff = unified_diff(
            &target.path,
            text.as_deref().unwrap_or_default(),
            new_text.as_deref().unwrap_or_default(),
        );
        return Ok(outcome(
            Action::WouldChange {
                diff,
                delete: new_text.is_none(),
            },
            None,
            text,
        ));
    }
    edit::check_writable(target, current.as_ref(), options.force)?;
    let backup = match &current {
        Some(c) => Some(backup(places, tag, target, c)?),
        None => None,
    };
    let created_dirs = match (&receipt, &current) {
        (Some(r), _) => r.created_dirs.clone(),
        (None, None) => receipts::missing_dirs(&target.real),
        (None, Some(_)) => Vec::new(),
    };
    let action = match (&new_text, &current) {
        (Some(new), _) => {
            edit::replace(target, current.as_ref(), new.as_bytes(), options.force)?;
            Action::Written {
                created: current.is_none(),
            }
        }
        (None, Some(c)) => {
            let deleting = if created_by_us {
                edit::Deleting::File
            } else {
                edit::Deleting::Link
            };
            Action::Deleted {
                kept: edit::delete(target, c, options.force, deleting)?,
            }
        }
        (None, None) => Action::Unchanged,
    };
    match direction {
        Direction::Install => {
            let before = before_ours(&planned, untouched_since, text);
            let receipt = Receipt {
                file: target.real.clone(),
                before,
                after: receipts::digest(new_text.as_deref().unwrap_or_default()),
                created_dirs,
            };
            receipts::save(places, tag, &receipt).map_err(|source| ConfigError::Io {
                action: "record what lidguard changed in",
                path: target.path.clone(),
                source,
            })?;
        }
        Direction::Update => {}
        Direction::Remove => {
            if matches!(action, Action::Deleted { kept: None })
                && let Some(r) = &receipt
            {
                receipts::remove_created_dirs(r);
            }
            receipts::drop(places, tag, &target.real);
        }
    }
    Ok(outcome(action, backup, new_text))
}

/// The change an edit makes once lidguard's receipt is taken into account, and whether the
/// file is one lidguard created. Shared with the WSL edits ([`crate::wsl::edit`]).
pub(crate) fn settle(
    direction: Direction,
    text: Option<&String>,
    receipt: Option<&Receipt>,
    untouched_since: Option<&Receipt>,
    mut change: Change,
) -> (Change, bool) {
    // Nobody touched the file since lidguard's install: give back the bytes it had.
    if direction == Direction::Remove
        && change != Change::Unchanged
        && let Some(r) = untouched_since
    {
        change = match &r.before {
            Some(before) if Some(before) == text => Change::Unchanged,
            Some(before) => Change::Changed {
                new_text: before.clone(),
            },
            None => Change::Delete,
        };
    }
    // A file lidguard created: once emptied again it goes (through a link, the file goes and
    // the link stays, dangling as it was).
    let created_by_us =
        direction == Direction::Remove && receipt.is_some_and(|r| r.before.is_none());
    if created_by_us && matches!(&change, Change::Changed { new_text } if is_empty_config(new_text))
    {
        change = Change::Delete;
    }
    (change, created_by_us)
}

/// The file before lidguard's entries, for the receipt of an install: as found, when it had
/// none; the receipt's, when nobody touched the file since lidguard wrote it; else it without
/// them.
pub(crate) fn before_ours(
    planned: &Planned,
    untouched_since: Option<&Receipt>,
    text: Option<String>,
) -> Option<String> {
    match (&planned.without_ours, untouched_since) {
        (None, _) => text,
        (Some(_), Some(r)) => r.before.clone(),
        (Some(without), None) => without.clone(),
    }
}

/// The unified diff `--dry-run` shows for `path`.
pub fn unified_diff(path: &Path, old: &str, new: &str) -> String {
    let name = path.display().to_string();
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&name, &name)
        .to_string()
}

/// Saves the file as it is under lidguard's state directory (not next to the file, where an
/// agent that loads every file of its directory could pick it up), with the file's own mode
/// inside a 0700 directory.
fn backup(
    places: &Places,
    tag: &str,
    target: &Target,
    current: &Current,
) -> Result<PathBuf, ConfigError> {
    let dir = places.state_dir.join("backups").join(tag);
    let name = target
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stamp = Timestamp::now().strftime(BACKUP_STAMP).to_string();
    let file = format!("{name}.{stamp}");
    lidguard_files::private::ensure_dir_below(&places.state_dir, &dir)
        .and_then(|_| {
            lidguard_files::private::write_copy(&dir, &file, &current.bytes, current.mode)
        })
        .map_err(|source| ConfigError::Io {
            action: "back up",
            path: target.path.clone(),
            source,
        })?;
    prune_backups(&dir, &name);
    Ok(dir.join(file))
}

/// The UTC time a backup's name ends with (`settings.json.20261205T070449.667852148Z`).
const BACKUP_STAMP: &str = "%Y%m%dT%H%M%S%.fZ";

/// How many backups of one file are kept: agent configs can hold API keys, so old copies do
/// not pile up under lidguard's state.
pub const BACKUPS_KEPT: usize = 5;

/// Deletes all but the newest [`BACKUPS_KEPT`] backups of the file called `name` in `dir`
/// (`<name>.<time>`; other files stay). Best effort: a backup that cannot be deleted stays.
fn prune_backups(dir: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut backups: Vec<(jiff::civil::DateTime, PathBuf)> = entries
        .filter_map(|e| {
            let path = e.ok()?.path();
            let file = path.file_name()?.to_str()?;
            let stamp = file.strip_prefix(name)?.strip_prefix('.')?;
            let when = jiff::civil::DateTime::strptime(BACKUP_STAMP, stamp).ok()?;
            Some((when, path))
        })
        .collect();
    backups.sort();
    let excess = backups.len().saturating_sub(BACKUPS_KEPT);
    for (_, path) in backups.into_iter().take(excess) {
        let _ = std::fs::remove_file(path);
    }
}
