//! Writing, checking and removing lidguard's hook entries in each agent's own config.
//!
//! Everything here is pure: the caller reads the file (or passes `None` when it does not
//! exist), gets back a [`Change`], and does the atomic write, backup or delete itself.
//!
//! **Ownership.** A hook entry is lidguard's when its command mentions lidguard — the word
//! `lidguard` (any case) or the program of the [`HookCommand`] in use — *and* carries the
//! provider's subcommand as a whole word (`claude-hook`, `codex-hook`, `copilot-hook`,
//! `opencode-hook`). Install makes lidguard's entries exactly the canonical set (one per
//! required event, with the given command and timeout) and touches nothing else; remove deletes
//! lidguard's entries and nothing else.
//!
//! **Formatting.** JSON and JSONC files are edited through a concrete syntax tree
//! (`jsonc-parser`'s `cst`), never re-serialized: key order, indentation, newline style,
//! trailing commas and comments stay as the user wrote them. Removing what install added gives
//! back the same bytes whenever the file was multi-line (a single-line container that install
//! expanded stays expanded; the content is the same).
//!
//! **Empty containers.** Remove deletes a matcher group, an event array or the `hooks` object
//! when removing lidguard's entries left it empty — unless the file as it was before install
//! (`before`, which the caller keeps) already had it: then it stays, empty, as the user had it.
//!
//! **Bytes.** A byte order mark and CRLF line endings are kept ([`envelope`]); a file that was
//! blank or only comments before install is given back as it was.
//!
//! **Duplicate keys.** A file with a key written twice where lidguard edits is refused, and
//! status judges the copy the agent reads ([`duplicates`]).

pub(crate) mod engine;
mod envelope;
mod jsonc;

pub mod duplicates;
pub mod mcp;
pub mod toml;

/// The shell that runs the hook command, which decides how the program is quoted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookShell {
    /// `sh`/`bash` (Claude's default on Linux and macOS, Copilot's `bash` key, Codex's shell).
    Posix,
    /// PowerShell (Codex's session shell and Copilot's `powershell` key on Windows; Claude
    /// entries then carry `"shell": "powershell"`, because its own default there is Git Bash
    /// when installed and PowerShell otherwise).
    PowerShell,
    /// `cmd.exe /C` (Codex on Windows runs a hook's command with `%COMSPEC% /C` when no shell is
    /// configured: codex-rs `hooks/src/engine/command_runner.rs`). A bare path without spaces
    /// reads the same in cmd and PowerShell, so only a path that needs quoting differs.
    Cmd,
}

impl HookShell {
    /// The shell hooks run in on the platform this was built for.
    pub const NATIVE: HookShell = if cfg!(windows) {
        HookShell::PowerShell
    } else {
        HookShell::Posix
    };
}

/// How hook entries invoke lidguard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookCommand {
    /// An absolute path to the executable, or `lidguard` when it is found on `PATH`.
    pub program: String,
    /// How the program is quoted in command strings.
    pub shell: HookShell,
}

impl HookCommand {
    /// `program` run by this platform's shell.
    pub fn new(program: impl Into<String>) -> Self {
        Self {
            program: program.into(),
            shell: HookShell::NATIVE,
        }
    }

    /// The command line `<program> <subcommand>`, the program quoted when the shell would
    /// otherwise split or expand it.
    pub fn render(&self, subcommand: &str) -> String {
        match self.shell {
            HookShell::Posix if is_plain(&self.program, "_-.,/+:@%=") => {
                format!("{} {subcommand}", self.program)
            }
            HookShell::Posix => {
                format!("'{}' {subcommand}", self.program.replace('\'', r"'\''"))
            }
            HookShell::PowerShell if is_plain(&self.program, "_-.\\/:") => {
                format!("{} {subcommand}", self.program)
            }
            // A quoted string alone is an expression in PowerShell; `&` makes it a call.
            HookShell::PowerShell => {
                format!(
                    "& '{}' {subcommand}",
                    powershell_single_quoted(&self.program)
                )
            }
            HookShell::Cmd if is_plain(&self.program, "_-.\\/:") => {
                format!("{} {subcommand}", self.program)
            }
            // Windows paths cannot contain `"`, so plain double quotes are enough for cmd.
            HookShell::Cmd => format!("\"{}\" {subcommand}", self.program),
        }
    }

    /// Whether `command` is one of lidguard's entries for `subcommand` (see the module docs).
    pub fn is_ours(&self, command: &str, subcommand: &str) -> bool {
        let lower = command.to_ascii_lowercase();
        let names_us = lower.contains("lidguard")
            || (!self.program.is_empty() && command.contains(self.program.as_str()));
        names_us && has_word(&lower, subcommand)
    }
}

/// `text` for the inside of a PowerShell single-quoted string: every character PowerShell takes
/// as a single quote — the ASCII apostrophe and U+2018–U+201B, as in `O’Brien` — doubled.
fn powershell_single_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    for c in text.chars() {
        if matches!(c, '\'' | '\u{2018}'..='\u{201b}') {
            out.push(c);
        }
        out.push(c);
    }
    out
}

/// The inverse of [`powershell_single_quoted`]: each doubled quote character made single.
fn powershell_unquoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if matches!(c, '\'' | '\u{2018}'..='\u{201b}') && chars.peek() == Some(&c) {
            chars.next();
        }
    }
    out
}

/// Safe to leave unquoted: non-empty, and only ASCII letters, digits and `extra`.
fn is_plain(program: &str, extra: &str) -> bool {
    !program.is_empty()
        && program
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || extra.contains(c))
}

/// `word` occurs in `text` not glued to other word characters (`claude-hooks.sh` is not
/// `claude-hook`).
fn has_word(text: &str, word: &str) -> bool {
    word_at(text, word).is_some()
}

/// Where `word` first stands alone in `text` (not glued to letters, digits, `-` or `_`).
fn word_at(text: &str, word: &str) -> Option<usize> {
    let glued = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || "-_".contains(c));
    text.match_indices(word).map(|(at, _)| at).find(|&at| {
        !glued(text[..at].chars().next_back()) && !glued(text[at + word.len()..].chars().next())
    })
}

/// The program a lidguard entry runs, read back from its command text as [`HookCommand::render`]
/// writes it for any shell (also a shebang line or an `exec` line); `None` when `subcommand` is
/// not in it. `hook-status` uses it to say that an entry's program is gone.
pub fn program_in(command: &str, subcommand: &str) -> Option<String> {
    let head = command[..word_at(command, subcommand)?].trim();
    let head = ["#!", "exec "].iter().fold(head, |h, prefix| {
        h.strip_prefix(prefix).unwrap_or(h).trim_start()
    });
    let quoted = |h: &str, q: char| Some(h.strip_prefix(q)?.strip_suffix(q)?.to_owned());
    let program = match head.strip_prefix("& ") {
        // PowerShell doubles a quote inside single quotes.
        Some(call) => quoted(call.trim_start(), '\'').map(|p| powershell_unquoted(&p)),
        None => quoted(head, '\'')
            .map(|p| p.replace(r"'\''", "'"))
            .or_else(|| quoted(head, '"')),
    };
    let program = program.unwrap_or_else(|| head.to_owned());
    (!program.is_empty()).then_some(program)
}

/// What to do with the config file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// Nothing to write: the file already is what was asked for.
    Unchanged,
    /// Write this text (atomically).
    Changed {
        /// The whole new file.
        new_text: String,
    },
    /// Delete the file: it is lidguard's own and has nothing left in it.
    Delete,
}

/// Why a config could not be changed; nothing was changed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InstallError {
    /// The file is not valid JSON (comments and trailing commas are accepted).
    #[error("{what} does not parse: {message} at line {line}, column {column}")]
    Parse {
        /// Which file, in words ("Claude Code settings").
        what: String,
        /// 1-based.
        line: usize,
        /// 1-based, in characters.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// A key lidguard would edit is written twice; the agent reads another copy than the one
    /// an edit would change (or none at all).
    #[error("{what}: {message}")]
    DuplicateKey {
        /// Which file, in words.
        what: String,
        /// The keys, their lines, and what the agent does with them.
        message: String,
    },
    /// An entry with lidguard's name that lidguard did not write (install refuses it unless
    /// forced; remove leaves it).
    #[error("{path}: {message}")]
    Foreign {
        /// Where: `mcpServers.lidguard`.
        path: String,
        /// What it runs and what to do.
        message: String,
    },
    /// The file parses but something lidguard must write into has another shape, or the file
    /// is one lidguard must not overwrite.
    #[error("{path}: {message}")]
    Shape {
        /// Where: a dotted JSON path (`hooks.PreToolUse`) or a file name.
        path: String,
        /// What is wrong and what to do.
        message: String,
    },
}

/// Whether lidguard's hooks are installed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstallState {
    /// No lidguard entry at all.
    Missing,
    /// lidguard's entries are all there and current (a timeout longer than needed counts:
    /// install would write the exact value).
    Installed,
    /// lidguard entries exist but differ (see `missing_events` and `drift`); install fixes it.
    Drifted,
}

impl InstallState {
    /// The word `hook-status` and `mcp-status` print: `missing`, `installed` or `drifted`
    /// (`hook-status` says `broken` instead when the program the entries run is gone).
    pub fn as_str(self) -> &'static str {
        match self {
            InstallState::Missing => "missing",
            InstallState::Installed => "installed",
            InstallState::Drifted => "drifted",
        }
    }
}

/// What `status` found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookStatus {
    /// The verdict.
    pub state: InstallState,
    /// Required events without a lidguard entry (all of them when `Missing`).
    pub missing_events: Vec<String>,
    /// Each difference from what install writes, one line each
    /// (`PreToolUse: timeout 10, expected 30`).
    pub drift: Vec<String>,
    /// Other tools' hooks on events where they can block, continue or answer what lidguard
    /// answers (see the README: such hooks must not run next to lidguard's).
    pub foreign_hooks: Vec<ForeignHook>,
    /// Facts that do not change the verdict but may stop the hooks from running
    /// (`disableAllHooks is true`, an unreadable Copilot `settings.json`).
    pub warnings: Vec<String>,
    /// The programs lidguard's entries found in the file run, each once, as written (the
    /// caller checks that they are there: a moved or removed executable fails every event).
    pub programs: Vec<String>,
}

impl HookStatus {
    pub(crate) fn missing(events: &[&str]) -> Self {
        Self {
            state: InstallState::Missing,
            missing_events: events.iter().map(|e| (*e).to_owned()).collect(),
            drift: Vec::new(),
            foreign_hooks: Vec::new(),
            warnings: Vec::new(),
            programs: Vec::new(),
        }
    }

    /// Notes `program` among [`HookStatus::programs`] unless it is there already.
    pub(crate) fn saw_program(&mut self, program: Option<String>) {
        if let Some(p) = program
            && !self.programs.contains(&p)
        {
            self.programs.push(p);
        }
    }
}

/// Another tool's hook on an event that can block or answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForeignHook {
    /// The event it is registered on, as spelled in the file.
    pub event: String,
    /// Its matcher, when it has one.
    pub matcher: Option<String>,
    /// The handler type (`command` when the entry names none).
    pub handler_type: String,
    /// What it runs: the command, URL, prompt, or `server tool` of an MCP tool hook.
    pub summary: String,
    /// The file it was found in.
    pub source: HookSource,
}

/// Which file a [`ForeignHook`] was found in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookSource {
    /// The config file the status was asked about.
    Config,
    /// Another file whose hooks the agent runs next to lidguard's; the caller names it.
    OtherFile,
}

/// Whether `text` says nothing: blank, or an empty JSON object (what removing everything
/// lidguard wrote from a file it created leaves behind). Comments count as content.
pub fn is_empty_config(text: &str) -> bool {
    let (_, body) = envelope::Envelope::open(text);
    if body.trim().is_empty() {
        return true;
    }
    let compact: String = body.chars().filter(|c| !c.is_whitespace()).collect();
    compact == "{}"
}

/// How Codex treats each of lidguard's entries in `hooks.json`. Entries are named by their
/// event (`PreToolUse`); when an event holds several lidguard handlers, the second and later
/// are named `PreToolUse#2`, `PreToolUse#3`, ... in file order. Every entry is in exactly one
/// list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CodexTrust {
    /// Codex runs them: a trust record with the entry's current hash.
    pub trusted: Vec<String>,
    /// No trust record (or one without a hash): Codex skips them until they are trusted.
    pub untrusted: Vec<String>,
    /// A trust record with another hash: the entry changed since it was trusted (new command,
    /// timeout, matcher or position); Codex skips it until it is trusted again.
    pub stale: Vec<String>,
    /// Turned off in Codex's `/hooks` (`enabled = false` in the record): Codex skips them even
    /// when trusted, and `codex_trust_lidguard` leaves that choice alone.
    pub disabled: Vec<String>,
}

impl CodexTrust {
    /// Whether Codex runs every lidguard entry found.
    pub fn all_trusted(&self) -> bool {
        self.untrusted.is_empty() && self.stale.is_empty() && self.disabled.is_empty()
    }
}
