//! One file's edit inside a distro: read, the pure edit, receipt and backup, written back.

use std::path::Path;

use lidguard_providers::install::{Change, InstallError};

use super::WslError;
use super::distro::{Distro, Side};

/// What a WSL edit did or would do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edited {
    /// The file inside the distro.
    pub file: String,
    /// What happened.
    pub action: crate::file::Action,
    /// The backup kept next to it (`FILE.STAMP.bak`), when there was a file to keep.
    pub backup: Option<String>,
}

/// How a WSL edit is carried out.
#[derive(Clone, Copy, Debug)]
pub struct How<'a> {
    /// Only report the diff.
    pub dry_run: bool,
    /// The backup suffix (`FILE.STAMP.bak`), e.g. `20261202T081500Z` ([`stamp`]).
    pub stamp: &'a str,
    /// lidguard's places: the receipts of WSL installs are kept on the Windows side, as the
    /// native ones are.
    pub places: &'a lidguard_ipc::Places,
}

/// The name a WSL file's receipt is kept under (distro and path).
pub(super) fn receipt_key(distro: &Distro<'_>, file: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(match &distro.side {
        Side::Wsl(name) => format!("wsl/{}/{file}", name.as_deref().unwrap_or("(default)")),
        Side::Ssh { name, .. } => format!("ssh/{name}/{file}"),
    })
}

/// Edits `file` inside `distro` as a native install edits a local file (see
/// [`crate::file::apply`]): the same pure edit, a receipt of the file before lidguard's first
/// install so a remove gives back its bytes while nobody touched it, a backup `FILE.STAMP.bak`
/// next to it, and an atomic rename; `dry_run` only reports the diff. `tag` keeps receipts of
/// different entries in one file apart.
pub fn edit(
    distro: &Distro<'_>,
    file: &str,
    tag: &str,
    direction: crate::file::Direction,
    plan: impl Fn(Option<&str>, Option<&str>) -> Result<crate::file::Planned, InstallError>,
    how: How<'_>,
) -> Result<Edited, WslError> {
    use crate::file::{Action, Direction};
    use crate::receipts::{self, Receipt};
    let How {
        dry_run,
        stamp,
        places,
    } = how;
    let key = receipt_key(distro, file);
    let existing = distro.read(file)?;
    let receipt = receipts::load(places, tag, &key);
    let untouched_since = receipt.as_ref().filter(|r| {
        existing
            .as_deref()
            .is_some_and(|t| receipts::digest(t) == r.after)
    });
    let hint = match direction {
        Direction::Remove => receipt.as_ref().and_then(|r| r.before.as_deref()),
        Direction::Install | Direction::Update => None,
    };
    let planned = plan(existing.as_deref(), hint)
        .map_err(|source| distro.config_error(file, source, true))?;
    let (change, _) = crate::file::settle(
        direction,
        existing.as_ref(),
        receipt.as_ref(),
        untouched_since,
        planned.change.clone(),
    );
    let old = existing.as_deref().unwrap_or("");
    let backup = existing.as_ref().map(|_| format!("{file}.{stamp}.bak"));
    let unchanged = || Edited {
        file: file.to_owned(),
        action: Action::Unchanged,
        backup: None,
    };
    let new_text = match &change {
        Change::Unchanged => {
            if direction == Direction::Remove && !dry_run {
                receipts::drop(places, tag, &key);
            }
            return Ok(unchanged());
        }
        Change::Changed { new_text } => Some(new_text.clone()),
        Change::Delete if existing.is_none() => return Ok(unchanged()),
        Change::Delete => None,
    };
    if dry_run {
        return Ok(Edited {
            file: file.to_owned(),
            action: Action::WouldChange {
                diff: crate::file::unified_diff(
                    Path::new(file),
                    old,
                    new_text.as_deref().unwrap_or(""),
                ),
                delete: new_text.is_none(),
            },
            backup: None,
        });
    }
    let action = match &new_text {
        Some(text) => {
            distro.write(file, text, stamp)?;
            Action::Written {
                created: existing.is_none(),
            }
        }
        None => {
            distro.delete(file, stamp)?;
            Action::Deleted { kept: None }
        }
    };
    match direction {
        Direction::Install => {
            let before = crate::file::before_ours(&planned, untouched_since, existing.clone());
            let receipt = Receipt {
                file: key,
                before,
                after: receipts::digest(new_text.as_deref().unwrap_or_default()),
                // Inside the distro; its folders are the agent's own.
                created_dirs: Vec::new(),
            };
            receipts::save(places, tag, &receipt).map_err(|source| WslError::Receipt {
                file: file.to_owned(),
                source,
            })?;
        }
        Direction::Update => {}
        Direction::Remove => receipts::drop(places, tag, &key),
    }
    Ok(Edited {
        file: file.to_owned(),
        action,
        backup,
    })
}

/// Installs or removes lidguard's entries in `file` through [`edit`]: `ours` tells whether a
/// text already holds them, `install` and `remove` are the agent's pure edits (`remove` gets
/// the file before lidguard's install when the receipt knows it).
#[allow(
    clippy::too_many_arguments,
    reason = "the pieces of one edit, named at each call"
)]
pub(super) fn install_or_remove(
    distro: &Distro<'_>,
    file: &str,
    tag: &str,
    remove: bool,
    how: How<'_>,
    ours: impl Fn(Option<&str>) -> bool,
    install: impl Fn(Option<&str>) -> Result<Change, InstallError>,
    uninstall: impl Fn(&str, Option<&str>) -> Result<Change, InstallError>,
) -> Result<Edited, WslError> {
    use crate::file::{Direction, Planned};
    let direction = if remove {
        Direction::Remove
    } else {
        Direction::Install
    };
    edit(
        distro,
        file,
        tag,
        direction,
        |existing, before| match (existing, remove) {
            (None, true) => Ok(Planned::change(Change::Unchanged)),
            (Some(text), true) => uninstall(text, before).map(Planned::change),
            (existing, false) => {
                install_plan(existing, ours(existing), &install, |t| uninstall(t, None))
            }
        },
        how,
    )
}

/// The plan of an install: the change, and the file without lidguard's entries when it held
/// some (for the receipt).
pub(super) fn install_plan(
    existing: Option<&str>,
    ours: bool,
    install: impl Fn(Option<&str>) -> Result<Change, InstallError>,
    remove: impl Fn(&str) -> Result<Change, InstallError>,
) -> Result<crate::file::Planned, InstallError> {
    let without_ours = match existing {
        Some(text) if ours => Some(crate::file::left_after(text, remove(text)?)),
        _ => None,
    };
    Ok(crate::file::Planned {
        change: install(existing)?,
        without_ours,
    })
}

/// A backup suffix for now, in UTC (`20261202T081500Z`).
pub fn stamp() -> String {
    jiff::Timestamp::now()
        .strftime("%Y%m%dT%H%M%SZ")
        .to_string()
}
