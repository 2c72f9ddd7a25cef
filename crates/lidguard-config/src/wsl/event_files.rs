//! An agent whose hooks are a file per event (Cline) inside a distro or on an ssh host: each
//! file is edited through [`super::edit`] as a one-file agent's config is (a receipt here, a
//! backup there, an atomic rename), and the folder goes again on remove when lidguard made it
//! and nothing else is in it.

use lidguard_providers::agent::{Agent, EventFiles};
use lidguard_providers::install::{Change, HookCommand, HookStatus};

use super::edit::receipt_key;
use super::{Distro, Edited, How, WslError, edit};
use crate::file::{Direction, Planned};
use crate::receipts::{self, Receipt};

/// lidguard's hook files for agent `a` in the folder `dir` there, each running `cmd`.
pub(super) struct RemoteEventDir<'a> {
    distro: &'a Distro<'a>,
    a: &'a Agent,
    files: &'a EventFiles,
    dir: &'a str,
    cmd: &'a HookCommand,
}

impl<'a> RemoteEventDir<'a> {
    /// Agent `a`'s hooks folder `dir` there, when its hooks are a file per event.
    pub(super) fn of(
        distro: &'a Distro<'a>,
        a: &'a Agent,
        dir: &'a str,
        cmd: &'a HookCommand,
    ) -> Option<RemoteEventDir<'a>> {
        a.hooks.event_files().map(|files| RemoteEventDir {
            distro,
            a,
            files,
            dir,
            cmd,
        })
    }

    fn file(&self, name: &str) -> String {
        format!("{}/{name}", self.dir.trim_end_matches('/'))
    }

    /// The files there that the agent runs for one of lidguard's events (name, text).
    fn present(&self) -> Result<Vec<(String, String)>, WslError> {
        let mut found = Vec::new();
        for name in self.distro.list(self.dir)? {
            if self.files.runs_for_any(&name)
                && let Some(text) = self.distro.read(&self.file(&name))?
            {
                found.push((name, text));
            }
        }
        Ok(found)
    }

    /// The receipt tag of a hooks folder lidguard made there.
    fn dir_tag(&self) -> String {
        format!("{}-dir", self.a.provider.as_str())
    }

    /// Writes lidguard's file for every event, next to any file of someone else's for it; a
    /// problem with one stops the install before anything is written.
    pub(super) fn install(&self, how: How<'_>) -> Result<Vec<Edited>, WslError> {
        let Self {
            distro,
            a,
            files,
            cmd,
            ..
        } = *self;
        let targets = files
            .install_targets(&self.present()?, cmd, a.hook_command)
            .map_err(|(event, source)| distro.config_error(&self.file(event), source, true))?;
        let made_dir = !distro.is_dir(self.dir)?;
        let edited = self.each_file(&targets, Direction::Install, how, |existing, event| {
            let ours = existing.is_some_and(|t| files.is_ours(t, cmd, a.hook_command));
            Ok(Planned {
                change: files.install(existing, cmd, a.hook_command, event)?,
                // A file of lidguard's was all there was: without it, no file.
                without_ours: ours.then_some(None),
            })
        })?;
        if made_dir && !how.dry_run {
            let receipt = Receipt {
                file: receipt_key(distro, self.dir),
                before: None,
                after: String::new(),
                // The folder is this receipt's `file`; remove takes it away when empty.
                created_dirs: Vec::new(),
            };
            receipts::save(how.places, &self.dir_tag(), &receipt).map_err(|source| {
                WslError::Receipt {
                    file: self.dir.to_owned(),
                    source,
                }
            })?;
        }
        Ok(edited)
    }

    /// Takes lidguard's files away (anyone else's stay), then the folder when lidguard made
    /// it and it is empty.
    pub(super) fn remove(&self, how: How<'_>) -> Result<Vec<Edited>, WslError> {
        let Self { a, files, cmd, .. } = *self;
        let targets = files.remove_targets(&self.present()?, cmd, a.hook_command);
        let edited = self.each_file(&targets, Direction::Remove, how, |existing, _| {
            Ok(Planned::change(match existing {
                None => Change::Unchanged,
                Some(text) => files.remove(text, cmd, a.hook_command),
            }))
        })?;
        let key = receipt_key(self.distro, self.dir);
        let tag = self.dir_tag();
        if !how.dry_run && receipts::load(how.places, &tag, &key).is_some() {
            // Someone else's files in it: it stays, and so does the receipt.
            self.distro.remove_dir_if_empty(self.dir)?;
            if !self.distro.is_dir(self.dir)? {
                receipts::drop(how.places, &tag, &key);
            }
        }
        Ok(edited)
    }

    /// Compares the event files there with what install writes.
    pub(super) fn status(&self) -> Result<HookStatus, WslError> {
        self.files
            .status(&self.present()?, self.cmd, self.a.hook_command)
            .map_err(|source| self.distro.config_error(self.dir, source, false))
    }

    /// Edits each (event, file name) of `targets` with `plan(existing text, event)`. A backup
    /// would be of a file wholly lidguard's (install never writes over anyone else's), so none
    /// is kept: it holds nothing of the user's, and it would keep the folder from going on
    /// remove.
    fn each_file(
        &self,
        targets: &[(&str, String)],
        direction: Direction,
        how: How<'_>,
        plan: impl Fn(Option<&str>, &str) -> Result<Planned, lidguard_providers::install::InstallError>,
    ) -> Result<Vec<Edited>, WslError> {
        let tag = self.a.provider.as_str();
        targets
            .iter()
            .map(|(event, name)| {
                let file = self.file(name);
                let mut edited = edit(
                    self.distro,
                    &file,
                    tag,
                    direction,
                    |existing, _| plan(existing, event),
                    how,
                )?;
                if let Some(backup) = edited.backup.take() {
                    self.distro.forget(&backup)?;
                }
                Ok(edited)
            })
            .collect()
    }
}
