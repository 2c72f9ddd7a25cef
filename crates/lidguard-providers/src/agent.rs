//! Everything that differs between the agents lidguard works with, as one [`Agent`] entry per
//! agent in [`AGENTS`]. Each agent's folder under `agents/` holds its entry and everything the
//! entry points at (its payloads and outputs, its config files, its transcript, its process);
//! the rest of lidguard — the hook path, the installers, the transcript monitor, the CLI's
//! subcommands and help — goes through the table and never names an agent.
//!
//! Adding an agent: a folder under `agents/` with its `AGENT`, a line in [`AGENTS`], and a
//! variant of [`Provider`] (in `lidguard-core`).
// Dispatch on agents is exhaustive: a new agent must be a compile error here, never a fallback.
#![deny(clippy::wildcard_enum_match_arm)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use lidguard_core::event::{AgentEvent, Decision};
use lidguard_core::provider::Provider;
use serde_json::Value;

use crate::install::engine::{self, Spec};
use crate::install::{
    Change, CodexTrust, ForeignHook, HookCommand, HookStatus, InstallError, InstallState,
};
use crate::{HookInput, ParseError};

/// Reads an environment variable (injectable for tests).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<OsString>;

/// Where an agent keeps a file lidguard edits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The agent's config directory; `--provider all` includes only agents whose directory
    /// exists.
    pub root: PathBuf,
    /// The file lidguard edits.
    pub file: PathBuf,
}

impl Location {
    /// `name` in the config directory `root`.
    pub fn inside(root: PathBuf, name: impl AsRef<Path>) -> Location {
        Location {
            file: root.join(name),
            root,
        }
    }
}

/// The user's home directory: `HOME` (`USERPROFILE` on Windows, where the agents take the
/// profile directory — Node's `os.homedir()` reads `USERPROFILE` there — and an inherited
/// `HOME` from a Unix-style shell is not theirs), else what the OS says.
pub fn home_dir(var: Env<'_>) -> Option<PathBuf> {
    let name = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    set_dir(var, name).or_else(std::env::home_dir)
}

/// The directory a variable names, when it is set and not empty.
pub fn set_dir(var: Env<'_>, name: &str) -> Option<PathBuf> {
    var(name).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// The directory in variable `name`, else `default` under the home directory.
pub fn config_dir(var: Env<'_>, name: &str, default: &str) -> Option<PathBuf> {
    match set_dir(var, name) {
        Some(dir) => Some(dir),
        None => Some(home_dir(var)?.join(default)),
    }
}

/// One agent.
pub struct Agent {
    /// Its name in sessions, on the command line and in JSON.
    pub provider: Provider,
    /// The hook subcommand its entries run: `claude-hook`.
    pub hook_command: &'static str,
    /// The snippet printer subcommand: `claude-hooks`.
    pub snippet_command: &'static str,
    /// The agent's payloads do not name their event: the entries pass `--event <name>`.
    pub event_on_command_line: bool,
    /// How its hook payloads and outputs read.
    pub dialect: Dialect,
    /// Whether a process (its `comm` name and command line) is the agent itself.
    pub is_owner: fn(name: &str, cmdline: &str) -> bool,
    /// Its hook configuration.
    pub hooks: &'static HookFile,
    /// Its MCP server configuration, if lidguard registers its server there.
    pub mcp: Option<&'static McpFile>,
    /// Its transcript, if lidguard follows it.
    pub transcript: Option<&'static TranscriptRules>,
    /// Its formats and what each prints.
    pub snippets: &'static [Snippet],
    /// The agent's own keep-awake setting, which `hook-status` notes.
    pub keep_awake: Option<AgentSetting>,
    /// The agent's permission mode, which decides whether it asks at all (and so whether the
    /// closed-lid policy is consulted); `hook-status` shows it.
    pub permission_mode: Option<AgentSetting>,
    /// The agent version lidguard's entries need, and why; `hook-status` says it.
    pub needs: Option<&'static str>,
    /// Why the hook's environment shows a session whose work runs on another machine (Claude's
    /// cloud sessions), `None` when it runs here: such a session keeps nothing awake.
    pub runs_elsewhere: Option<fn(Env<'_>) -> Option<&'static str>>,
    /// Other tools that run this agent's hook files (Cursor and Devin CLI run Claude Code's):
    /// a session they start is theirs, not the agent's.
    pub also_run_by: &'static [OtherRunner],
    /// Whether the agent process (its command line) works on a prompt from its launch without
    /// a prompt event (`droid exec "<prompt>"`): then its session-start event starts the session.
    pub works_from_launch: Option<fn(&str) -> bool>,
}

/// A tool that runs another agent's hook files.
pub struct OtherRunner {
    /// Its name in sessions (`devin`).
    pub name: &'static str,
    /// Whether a process (its `comm` name and command line) is that tool.
    pub is: fn(name: &str, cmdline: &str) -> bool,
}

/// How an agent's hook payloads and outputs read.
pub struct Dialect {
    /// Its hook payload as lidguard's events.
    pub parse: fn(&HookInput<'_>) -> Result<Vec<AgentEvent>, ParseError>,
    /// The stdout that carries a decision for an event, `None` when that event cannot.
    pub render: fn(&str, &Decision) -> Option<String>,
    /// The stdout that continues a stopped turn with the user's reply (ask before sleep).
    pub render_continuation: fn(&str) -> Option<String>,
}

impl Dialect {
    /// The dialect of these functions.
    pub const fn new(
        parse: fn(&HookInput<'_>) -> Result<Vec<AgentEvent>, ParseError>,
        render: fn(&str, &Decision) -> Option<String>,
        render_continuation: fn(&str) -> Option<String>,
    ) -> Self {
        Self {
            parse,
            render,
            render_continuation,
        }
    }
}

impl Agent {
    /// An agent whose hook subcommands are `commands` (`["claude-hook", "claude-hooks"]`),
    /// whose payloads name their event, and that has none of the optional parts (set them
    /// with struct update syntax).
    pub const fn new(
        provider: Provider,
        commands: [&'static str; 2],
        dialect: Dialect,
        is_owner: fn(&str, &str) -> bool,
        hooks: &'static HookFile,
    ) -> Self {
        let [hook_command, snippet_command] = commands;
        Self {
            provider,
            hook_command,
            snippet_command,
            event_on_command_line: false,
            dialect,
            is_owner,
            hooks,
            mcp: None,
            transcript: None,
            snippets: &[],
            keep_awake: None,
            permission_mode: None,
            needs: None,
            runs_elsewhere: None,
            also_run_by: &[],
            works_from_launch: None,
        }
    }

    /// What the hook subcommand is, for its help.
    pub fn hook_help(&self) -> String {
        let name = self.provider.display_name();
        if self.event_on_command_line {
            format!("{name} hook for one event (`--event`): reads the payload on stdin")
        } else {
            format!("{name} hook: reads the hook payload on stdin (installed by `hook-install`)")
        }
    }
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("provider", &self.provider)
            .finish_non_exhaustive()
    }
}

/// The hook configuration file of an agent and lidguard's edits of it (pure: the caller
/// reads and writes the file).
pub struct HookFile {
    /// Where the file is, from the agent's variables; `None` when the home is unknown.
    pub locate: fn(Env<'_>) -> Option<Location>,
    /// How lidguard's entries are written, removed and compared.
    pub edit: HookEdit,
    /// The entries carry the managed hook timeout (refreshed when the settings change it).
    pub timeouts: bool,
    /// The events whose arrival `hook-status` shows.
    pub evidence: &'static [&'static str],
    /// Other files whose hooks the agent runs next to lidguard's.
    pub related: Option<RelatedHooks>,
    /// Other files whose hooks the agent stops running once this file holds an event.
    pub shadows: Option<Shadows>,
    /// The agent's trust records for hooks.
    pub trust: Option<TrustRecords>,
}

/// Files whose hooks the agent stops running when the hook file names an event (Droid reads
/// `settings.json`'s hooks only for events its `hooks.json` lacks): an install that would
/// silence a user's hooks there is refused with what to do.
pub struct Shadows {
    /// The files, given the hook file's location.
    pub files: fn(&Location) -> Vec<PathBuf>,
    /// Why installing into the hook file (its text, `None`: missing) would silence hooks of
    /// the user's in the file at a path holding a text; `None` when nothing goes quiet.
    pub check: fn(Option<&str>, &Path, &str) -> Option<String>,
}

/// How an agent's hook file is edited: by the shared JSON engine from a description of the
/// file, by the agent's own functions (OpenCode's plugin), or as one file of lidguard's per
/// event in a directory (Cline).
pub struct HookEdit(EditKind);

enum EditKind {
    Json(&'static Spec),
    Own(OwnEdit),
    Files(&'static EventFiles),
}

/// Hook files named after their events in one directory, each wholly lidguard's or wholly
/// someone else's (Cline runs every file named `<Event>` or `<Event>.<ext>` there, all of them
/// when there are several). Then the hook file's [`Location::file`] is that directory.
pub struct EventFiles {
    /// The events lidguard writes a file for (each file is named after its event).
    pub events: &'static [&'static str],
    /// Whether the agent runs a file of this name for this event.
    pub runs_for: fn(name: &str, event: &str) -> bool,
    /// The names lidguard's file for an event may take, `{}` standing for the event, in order
    /// of preference: the first not taken by a file of someone else's.
    pub names: &'static [&'static str],
    /// The events on which another file can decide what lidguard decides.
    pub deciding: &'static [&'static str],
    /// The text of lidguard's file for an event.
    pub text: fn(&HookCommand, &str) -> Result<String, InstallError>,
}

impl EventFiles {
    /// Whether a hook file's text is lidguard's: one of its first three lines runs the hook
    /// subcommand (the shebang line, or the `exec` line after `#!/bin/sh` and the note when the
    /// program's path has a space).
    pub fn is_ours(&self, text: &str, cmd: &HookCommand, subcommand: &str) -> bool {
        text.lines()
            .take(3)
            .any(|line| cmd.is_ours(line, subcommand))
    }

    /// The name of lidguard's file for `event` in a directory holding `files` (name, text):
    /// the one of lidguard's already there, else the first of [`EventFiles::names`] that no file
    /// has (whatever its case: a Mac's or Windows' disk does not tell them apart), so a file of
    /// the user's for the event stays and both run.
    pub fn place(
        &self,
        event: &str,
        files: &[(String, String)],
        cmd: &HookCommand,
        subcommand: &str,
    ) -> Result<String, InstallError> {
        let names = self.names.iter().map(|n| n.replace("{}", event));
        if let Some((name, _)) = files.iter().find(|(name, text)| {
            (self.runs_for)(name, event) && self.is_ours(text, cmd, subcommand)
        }) {
            return Ok(name.clone());
        }
        let taken = |n: &str| files.iter().any(|(name, _)| name.eq_ignore_ascii_case(n));
        names
            .clone()
            .find(|n| !taken(n))
            .ok_or_else(|| InstallError::Shape {
                path: event.to_owned(),
                message: format!(
                    "every name lidguard's hook file for {event} could take ({}) is a file of \
                     someone else's; they stay as they are: rename one and install again",
                    names.collect::<Vec<_>>().join(", ")
                ),
            })
    }

    /// The (event, file name) lidguard's install writes, for a directory holding `files`; the
    /// event and why when one cannot be written (nothing should be then).
    pub fn install_targets(
        &self,
        files: &[(String, String)],
        cmd: &HookCommand,
        subcommand: &str,
    ) -> Result<Vec<(&'static str, String)>, (&'static str, InstallError)> {
        let mut targets = Vec::new();
        for event in self.events {
            let name = self
                .place(event, files, cmd, subcommand)
                .map_err(|e| (*event, e))?;
            let existing = files.iter().find(|(n, _)| *n == name).map(|(_, t)| t);
            self.install(existing.map(String::as_str), cmd, subcommand, event)
                .map_err(|e| (*event, e))?;
            targets.push((*event, name));
        }
        Ok(targets)
    }

    /// The (event, file name) of every file of lidguard's in a directory holding `files`,
    /// whatever name it took; an event without one gets its own name (there is nothing to
    /// remove there: a file of someone else's by that name stays).
    pub fn remove_targets(
        &self,
        files: &[(String, String)],
        cmd: &HookCommand,
        subcommand: &str,
    ) -> Vec<(&'static str, String)> {
        let mut targets = Vec::new();
        for event in self.events {
            let before = targets.len();
            targets.extend(
                files
                    .iter()
                    .filter(|(name, text)| {
                        (self.runs_for)(name, event) && self.is_ours(text, cmd, subcommand)
                    })
                    .map(|(name, _)| (*event, name.clone())),
            );
            if targets.len() == before {
                targets.push((*event, (*event).to_owned()));
            }
        }
        targets
    }

    /// Whether the agent runs a file called `name` for one of lidguard's events.
    pub fn runs_for_any(&self, name: &str) -> bool {
        self.events.iter().any(|e| (self.runs_for)(name, e))
    }

    /// Writes or corrects lidguard's file for `event` (`existing`: the file at the name
    /// [`EventFiles::place`] chose, if any). A file of the user's there is refused.
    pub fn install(
        &self,
        existing: Option<&str>,
        cmd: &HookCommand,
        subcommand: &str,
        event: &str,
    ) -> Result<Change, InstallError> {
        let text = (self.text)(cmd, event)?;
        match existing {
            Some(current) if current == text => Ok(Change::Unchanged),
            Some(current) if !self.is_ours(current, cmd, subcommand) => Err(InstallError::Shape {
                path: event.to_owned(),
                message: format!(
                    "this hook file for {event} is not lidguard's and stays as it is; \
                     install again and lidguard's takes another name next to it"
                ),
            }),
            _ => Ok(Change::Changed { new_text: text }),
        }
    }

    /// Takes lidguard's file away; anyone else's stays.
    pub fn remove(&self, existing: &str, cmd: &HookCommand, subcommand: &str) -> Change {
        if self.is_ours(existing, cmd, subcommand) {
            Change::Delete
        } else {
            Change::Unchanged
        }
    }

    /// Compares the directory's files (name, text) with what install writes.
    pub fn status(
        &self,
        files: &[(String, String)],
        cmd: &HookCommand,
        subcommand: &str,
    ) -> Result<HookStatus, InstallError> {
        let mut status = HookStatus::missing(&[]);
        let mut ours = 0;
        for event in self.events {
            let expected = (self.text)(cmd, event)?;
            let mine: Vec<&str> = files
                .iter()
                .filter(|(name, text)| {
                    (self.runs_for)(name, event) && self.is_ours(text, cmd, subcommand)
                })
                .map(|(_, text)| text.as_str())
                .collect();
            match mine.as_slice() {
                [] => status.missing_events.push((*event).to_owned()),
                [text] if *text == expected => ours += 1,
                [_] => {
                    ours += 1;
                    status
                        .drift
                        .push(format!("{event}: runs another command than install writes"));
                }
                [..] => {
                    ours += 1;
                    status.drift.push(format!(
                        "{event}: {} files of lidguard's, so it hears the event more than once",
                        mine.len()
                    ));
                }
            }
        }
        for (name, text) in files {
            if self.is_ours(text, cmd, subcommand) {
                for line in text.lines() {
                    status.saw_program(crate::install::program_in(line, subcommand));
                }
            }
            let decides = self
                .deciding
                .iter()
                .find(|event| (self.runs_for)(name, event));
            if let Some(&event) = decides
                && !self.is_ours(text, cmd, subcommand)
            {
                status.foreign_hooks.push(crate::install::ForeignHook {
                    event: event.to_owned(),
                    matcher: None,
                    handler_type: "command".to_owned(),
                    summary: name.clone(),
                    source: crate::install::HookSource::Config,
                });
            }
        }
        status.state = match (
            ours,
            status.missing_events.is_empty(),
            status.drift.is_empty(),
        ) {
            (0, _, _) => InstallState::Missing,
            (_, true, true) => InstallState::Installed,
            _ => InstallState::Drifted,
        };
        Ok(status)
    }
}

/// An agent's own hook file editor.
pub struct OwnEdit {
    /// Adds or corrects lidguard's entries (`None`: no file yet; the timeout in seconds).
    pub install: fn(Option<&str>, &HookCommand, u32) -> Result<Change, InstallError>,
    /// Removes them; the last argument is the file as it was before lidguard's install.
    pub remove: fn(&str, &HookCommand, Option<&str>) -> Result<Change, InstallError>,
    /// Compares the file with what install writes.
    pub status: fn(Option<&str>, &HookCommand, u32) -> Result<HookStatus, InstallError>,
}

impl HookEdit {
    /// Edited by the JSON engine as `spec` describes.
    pub(crate) const fn json(spec: &'static Spec) -> Self {
        Self(EditKind::Json(spec))
    }

    /// Edited by the agent's own functions.
    pub const fn own(edit: OwnEdit) -> Self {
        Self(EditKind::Own(edit))
    }

    /// One file of lidguard's per event in a directory.
    pub const fn files(files: &'static EventFiles) -> Self {
        Self(EditKind::Files(files))
    }
}

impl HookFile {
    /// A file at `locate` edited by `edit`, whose entries carry the hook timeout, with neither
    /// related files nor trust records (set them with struct update syntax).
    pub const fn new(
        locate: fn(Env<'_>) -> Option<Location>,
        edit: HookEdit,
        evidence: &'static [&'static str],
    ) -> Self {
        Self {
            locate,
            edit,
            timeouts: true,
            evidence,
            related: None,
            shadows: None,
            trust: None,
        }
    }

    /// A file the JSON engine edits as `spec` describes, whose events are the evidence
    /// `hook-status` shows.
    pub(crate) const fn json(locate: fn(Env<'_>) -> Option<Location>, spec: &'static Spec) -> Self {
        Self::new(locate, HookEdit::json(spec), spec.events)
    }

    /// Adds or corrects lidguard's entries (`existing`: `None` when there is no file yet;
    /// `timeout` in seconds).
    pub fn install(
        &self,
        existing: Option<&str>,
        cmd: &HookCommand,
        timeout: u32,
    ) -> Result<Change, InstallError> {
        match &self.edit.0 {
            EditKind::Json(spec) => engine::install(existing, spec, cmd, timeout),
            EditKind::Own(own) => (own.install)(existing, cmd, timeout),
            EditKind::Files(_) => Err(not_one_file()),
        }
    }

    /// Removes lidguard's entries; `before` is the file as it was before lidguard's install,
    /// when known (containers it had stay).
    pub fn remove(
        &self,
        existing: &str,
        cmd: &HookCommand,
        before: Option<&str>,
    ) -> Result<Change, InstallError> {
        match &self.edit.0 {
            EditKind::Json(spec) => engine::remove(existing, spec, cmd, before),
            EditKind::Own(own) => (own.remove)(existing, cmd, before),
            EditKind::Files(_) => Err(not_one_file()),
        }
    }

    /// Compares the file with what [`HookFile::install`] writes.
    pub fn status(
        &self,
        existing: Option<&str>,
        cmd: &HookCommand,
        timeout: u32,
    ) -> Result<HookStatus, InstallError> {
        match &self.edit.0 {
            EditKind::Json(spec) => engine::status(existing, spec, cmd, timeout),
            EditKind::Own(own) => (own.status)(existing, cmd, timeout),
            EditKind::Files(_) => Err(not_one_file()),
        }
    }

    /// The per-event files, when the agent's hooks are a directory of them (then the single
    /// file methods refuse, and the caller edits each file).
    pub fn event_files(&self) -> Option<&'static EventFiles> {
        match self.edit.0 {
            EditKind::Files(files) => Some(files),
            EditKind::Json(_) | EditKind::Own(_) => None,
        }
    }

    /// What [`HookFile::install`] writes into a missing file.
    pub fn fresh(&self, cmd: &HookCommand, timeout: u32) -> String {
        engine::fresh(self.install(None, cmd, timeout))
    }
}

/// The single-file edits asked of a directory of hook files.
fn not_one_file() -> InstallError {
    InstallError::Shape {
        path: "hooks".to_owned(),
        message: "this agent's hooks are one file per event in a directory, edited one by one"
            .to_owned(),
    }
}

/// Other files whose hooks an agent runs next to lidguard's (`hook-status` lists their
/// conflicting hooks, and lidguard's own entries there, which would run twice).
pub struct RelatedHooks {
    /// The files, given the hook file's location and the directory the command runs in.
    pub files: fn(&Location, Option<&Path>) -> Vec<PathBuf>,
    /// Their conflicting hooks and the events on which they run lidguard itself.
    pub scan: fn(&str, &HookCommand) -> Result<Scan, InstallError>,
}

/// Another file's conflicting hooks, and the events on which it runs lidguard itself.
pub type Scan = (Vec<ForeignHook>, Vec<String>);

/// An agent's record of which hooks the user trusts (Codex): hooks it skips until trusted.
pub struct TrustRecords {
    /// The file holding the records.
    pub file: fn(&Location) -> PathBuf,
    /// The hook file's path as the records name it.
    pub key_path: fn(&Location) -> String,
    /// How the records treat lidguard's entries (key path, hook file text, records text).
    pub check: fn(&str, &str, Option<&str>, &HookCommand) -> Result<CodexTrust, InstallError>,
    /// Records lidguard's entries as trusted.
    pub record: fn(&str, &str, Option<&str>, &HookCommand) -> Result<Change, InstallError>,
    /// Takes the records of lidguard's entries away (remove).
    pub forget: fn(&str, &str, Option<&str>, &HookCommand) -> Result<Change, InstallError>,
}

/// One of the agent's own settings that `hook-status` reports.
pub struct AgentSetting {
    /// The file it is in.
    pub file: fn(&Location) -> PathBuf,
    /// What to say about it (`None`: nothing worth saying, or unreadable).
    pub read: fn(Option<&str>) -> Option<String>,
}

/// One format of a snippet printer.
pub struct Snippet {
    /// Its name on the command line: `settings-json`.
    pub format: &'static str,
    /// What it is, for the help.
    pub help: &'static str,
    /// The text, for the entries' command and timeout.
    pub text: SnippetText,
}

impl Snippet {
    /// The hook file as `hook-install` writes it into a missing file.
    pub const fn hook_file(format: &'static str, help: &'static str) -> Self {
        Self {
            format,
            help,
            text: SnippetText::HookFile,
        }
    }
}

/// What a snippet prints.
pub enum SnippetText {
    /// What `hook-install` writes into a missing hook file.
    HookFile,
    /// Another form, for the entries' command and timeout.
    Own(fn(&HookCommand, u32) -> String),
}

impl Agent {
    /// The snippet in `format`, for the entries' command and timeout (`None`: no such
    /// format).
    pub fn snippet(&self, format: &str, cmd: &HookCommand, timeout: u32) -> Option<String> {
        let snippet = self.snippets.iter().find(|s| s.format == format)?;
        Some(match snippet.text {
            SnippetText::HookFile => self.hooks.fresh(cmd, timeout),
            SnippetText::Own(print) => print(cmd, timeout),
        })
    }
}

/// An agent's MCP configuration and lidguard's entry in it.
pub struct McpFile {
    /// Where the file is.
    pub locate: fn(Env<'_>) -> Option<Location>,
    /// lidguard's `mcp-server` entry there.
    pub entry: McpEntry,
}

impl McpFile {
    /// lidguard's entry as a server object in a JSON file at `locate`.
    pub const fn json(
        locate: fn(Env<'_>) -> Option<Location>,
        entry: fn(&str) -> crate::install::mcp::JsonEntry,
    ) -> Self {
        Self {
            locate,
            entry: McpEntry::Json(entry),
        }
    }
}

/// How lidguard's server entry is written.
pub enum McpEntry {
    /// A server object in a JSON container, for the executable (most agents).
    Json(fn(&str) -> crate::install::mcp::JsonEntry),
    /// The agent's own format (Codex's TOML).
    Own {
        /// Adds or refreshes the entry (`force` takes over one of that name lidguard did not
        /// write).
        install: fn(Option<&str>, &str, bool) -> Result<Change, InstallError>,
        /// Removes it (or puts back the one it replaced; the last argument is the file
        /// before).
        remove: fn(&str, &str, Option<&str>) -> Result<Change, InstallError>,
        /// Compares the entry the agent reads with what install writes.
        status: fn(Option<&str>, &str) -> Result<crate::install::mcp::McpStatus, InstallError>,
    },
}

impl McpFile {
    /// Adds or refreshes lidguard's entry running `exe` (`None`: no file yet).
    pub fn install(
        &self,
        text: Option<&str>,
        exe: &str,
        force: bool,
    ) -> Result<Change, InstallError> {
        match &self.entry {
            McpEntry::Json(entry) => crate::install::mcp::install_json(text, &entry(exe), force),
            McpEntry::Own { install, .. } => install(text, exe, force),
        }
    }

    /// Removes it; `before` is the file as it was before lidguard's install, when known.
    pub fn remove(
        &self,
        text: &str,
        exe: &str,
        before: Option<&str>,
    ) -> Result<Change, InstallError> {
        match &self.entry {
            McpEntry::Json(entry) => crate::install::mcp::remove_json(text, &entry(exe), before),
            McpEntry::Own { remove, .. } => remove(text, exe, before),
        }
    }

    /// Compares the entry the agent reads with what install writes.
    pub fn status(
        &self,
        text: Option<&str>,
        exe: &str,
    ) -> Result<crate::install::mcp::McpStatus, InstallError> {
        match &self.entry {
            McpEntry::Json(entry) => crate::install::mcp::status_json(text, &entry(exe)),
            McpEntry::Own { status, .. } => status(text, exe),
        }
    }
}

/// How to read an agent's transcript.
pub struct TranscriptRules {
    /// The activity reason recorded for plain growth.
    pub activity_reason: &'static str,
    /// The stop (an interrupt or abort) the latest records show.
    pub stop: fn(&[Value]) -> Option<&'static str>,
    /// Background work a record says finished (ids the hooks track).
    pub finished_work: fn(&Value) -> Vec<String>,
    /// Whether a record asks the user something or answers it (a question tool call).
    pub question: fn(&Value) -> Question,
    /// The soft-lock reason while a question waits.
    pub question_reason: &'static str,
    /// Finds a session's transcript when the hooks give no path.
    pub discover: fn(&str, &Path, Env<'_>) -> Discovery,
}

/// What a transcript record does to the agent's questions to the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Question {
    /// Nothing.
    None,
    /// The agent asks (the call's id).
    Asked(String),
    /// The answer to that call arrived.
    Answered(String),
}

/// The result of looking for a session's transcript when its hooks gave no path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Discovery {
    /// Exactly one file matches.
    Found(PathBuf),
    /// No file matches (yet).
    NotFound,
    /// Several files match; none is chosen.
    Ambiguous(usize),
}
