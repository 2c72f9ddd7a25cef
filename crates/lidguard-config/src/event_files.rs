//! Hooks as one file of lidguard's per event in a directory (Cline): each file is edited as
//! any other config file ([`file::apply`]: atomic, private, receipt, backup), and the
//! directory goes again on remove when lidguard created it and nothing else is in it.

use std::path::{Path, PathBuf};

use lidguard_ipc::Places;
use lidguard_providers::agent::{Agent, EventFiles};
use lidguard_providers::install::{Change, HookCommand, HookStatus};

use crate::ConfigError;
use crate::file::{self, Direction, Options, Outcome, Planned};
use crate::receipts::{self, Receipt};

/// lidguard's hook files for agent `a`, one per event of `files`, in `dir`, each running `cmd`.
pub struct EventDir<'a> {
    /// The agent.
    pub a: &'a Agent,
    /// Its events and how each file is written.
    pub files: &'a EventFiles,
    /// The hooks directory.
    pub dir: &'a Path,
    /// The command the files run.
    pub cmd: &'a HookCommand,
}

impl EventDir<'_> {
    /// The receipt tag of a hooks directory lidguard created.
    fn dir_tag(&self) -> String {
        format!("{}-dir", self.a.provider.as_str())
    }

    /// Writes lidguard's file for every event, next to any file of someone else's for it
    /// ([`EventFiles::place`]); a problem with one stops the install before anything is written.
    pub fn install(&self, places: &Places, options: Options) -> Result<Vec<Outcome>, ConfigError> {
        let Self { a, files, dir, cmd } = *self;
        let present = read_dir(dir, files)?;
        let targets = files
            .install_targets(&present, cmd, a.hook_command)
            .map_err(|(event, source)| ConfigError::Refused {
                file: dir.join(event),
                source,
            })?;
        let created_dir = !dir.exists();
        let outcomes = self.each_file(
            places,
            &targets,
            Direction::Install,
            options,
            |existing, event| {
                let ours = existing.is_some_and(|t| files.is_ours(t, cmd, a.hook_command));
                Ok(Planned {
                    change: files.install(existing, cmd, a.hook_command, event)?,
                    // A file of lidguard's was all there was: without it, no file.
                    without_ours: ours.then_some(None),
                })
            },
        )?;
        if created_dir && !options.dry_run {
            let receipt = Receipt {
                file: dir.to_owned(),
                before: None,
                after: String::new(),
                // The folder is this receipt's `file`; remove takes it away when empty.
                created_dirs: Vec::new(),
            };
            receipts::save(places, &self.dir_tag(), &receipt).map_err(|source| {
                ConfigError::Io {
                    action: "record what lidguard created in",
                    path: dir.to_owned(),
                    source,
                }
            })?;
        }
        Ok(outcomes)
    }

    /// Takes lidguard's files out (anyone else's stay), then the directory when lidguard
    /// created it and it is empty.
    pub fn remove(&self, places: &Places, options: Options) -> Result<Vec<Outcome>, ConfigError> {
        let Self { a, files, dir, cmd } = *self;
        let targets = files.remove_targets(&read_dir(dir, files)?, cmd, a.hook_command);
        let outcomes = self.each_file(
            places,
            &targets,
            Direction::Remove,
            options,
            |existing, _| {
                Ok(Planned::change(match existing {
                    None => Change::Unchanged,
                    Some(text) => files.remove(text, cmd, a.hook_command),
                }))
            },
        )?;
        let tag = self.dir_tag();
        if !options.dry_run && receipts::load(places, &tag, dir).is_some() {
            // Not empty: someone else's files are in it, and it stays (with the receipt).
            if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
                receipts::drop(places, &tag, dir);
            }
        }
        Ok(outcomes)
    }

    /// Edits each (event, file name) of `targets` with `plan(existing text, event)`.
    fn each_file(
        &self,
        places: &Places,
        targets: &[(&str, String)],
        direction: Direction,
        options: Options,
        plan: impl Fn(Option<&str>, &str) -> Result<Planned, lidguard_providers::install::InstallError>,
    ) -> Result<Vec<Outcome>, ConfigError> {
        targets
            .iter()
            .map(|(event, name)| {
                file::apply(
                    places,
                    self.a.provider.as_str(),
                    &self.dir.join(name),
                    direction,
                    options,
                    |existing, _| plan(existing, event),
                )
            })
            .collect()
    }

    /// Compares the directory's files with what install writes.
    pub fn status(&self) -> Result<HookStatus, ConfigError> {
        self.files
            .status(
                &read_dir(self.dir, self.files)?,
                self.cmd,
                self.a.hook_command,
            )
            .map_err(|source| ConfigError::Refused {
                file: self.dir.to_owned(),
                source,
            })
    }
}

/// The text files directly in `dir` that the agent runs for one of lidguard's events, by name
/// (none when it does not exist); other files are not read.
fn read_dir(dir: &Path, files: &EventFiles) -> Result<Vec<(String, String)>, ConfigError> {
    let io = |source, path: PathBuf| ConfigError::Io {
        action: "read",
        path,
        source,
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(e, dir.to_owned())),
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| io(e, dir.to_owned()))?;
        let path = entry.path();
        // The agent runs only regular files (not links, not folders); a binary is not ours.
        if !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if files.runs_for_any(&name)
            && let Ok(text) = std::fs::read_to_string(&path)
        {
            found.push((name, text));
        }
    }
    found.sort();
    Ok(found)
}
