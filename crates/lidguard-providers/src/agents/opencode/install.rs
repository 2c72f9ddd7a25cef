//! OpenCode: the plugin file `<config dir>/plugins/lidguard.js`, which lidguard owns whole.
//!
//! OpenCode has no shell hooks; lidguard's plugin ([`crate::agents::opencode::plugin_js`]) forwards
//! the events to `lidguard opencode-hook --event <name>`, spawning the program directly (no
//! shell, so the program is never quoted). A file at that path is lidguard's when it starts
//! with the `<lidguard OpenCode plugin start>` marker (any case: the reference
//! implementation's `<LidGuard OpenCode plugin start>` counts too, and is replaced); any other
//! file there is the user's and is never overwritten or deleted.

use crate::install::{Change, HookCommand, HookStatus, InstallError, InstallState};

/// The plugin's file name in OpenCode's `plugins/` directory.
pub const FILE_NAME: &str = "lidguard.js";

/// The subcommand the plugin runs.
pub const SUBCOMMAND: &str = "opencode-hook";

/// lidguard's plugin for one agent of OpenCode's plugin family.
pub struct Plugin {
    /// The agent's `--provider` name, named in the file's header.
    pub provider: &'static str,
    /// The subcommand the plugin runs.
    pub subcommand: &'static str,
}

/// OpenCode's plugin.
pub static OPENCODE: Plugin = Plugin {
    provider: "opencode",
    subcommand: SUBCOMMAND,
};

const START_MARKER: &str = "<lidguard opencode plugin start>";
const VERSION_PREFIX: &str = "// lidguard opencode plugin version:";
const COMMAND_PREFIX: &str = "const COMMAND = ";

/// OpenCode's plugin file for `cmd`.
pub fn plugin_text(cmd: &HookCommand) -> String {
    OPENCODE.text(cmd)
}

/// Writes OpenCode's plugin (`None`: no file yet).
pub fn install(existing: Option<&str>, cmd: &HookCommand) -> Result<Change, InstallError> {
    OPENCODE.install(existing, cmd)
}

/// Deletes OpenCode's plugin.
pub fn remove(existing: &str) -> Result<Change, InstallError> {
    OPENCODE.remove(existing)
}

/// Compares OpenCode's plugin with what install writes.
pub fn status(existing: Option<&str>, cmd: &HookCommand) -> HookStatus {
    OPENCODE.status(existing, cmd)
}

impl Plugin {
    /// The plugin file for `cmd`.
    pub fn text(&self, cmd: &HookCommand) -> String {
        crate::agents::opencode::dialect::plugin_js_for(
            self.provider,
            &[cmd.program.clone(), self.subcommand.to_owned()],
        )
    }

    /// Writes the plugin (`None`: no file yet). Refuses to overwrite a file lidguard did not
    /// write.
    pub fn install(
        &self,
        existing: Option<&str>,
        cmd: &HookCommand,
    ) -> Result<Change, InstallError> {
        let new_text = self.text(cmd);
        match existing {
            Some(text) if text == new_text => Ok(Change::Unchanged),
            Some(text) if !is_ours(text) => Err(not_ours()),
            _ => Ok(Change::Changed { new_text }),
        }
    }

    /// Deletes the plugin; refuses when the file is not lidguard's.
    pub fn remove(&self, existing: &str) -> Result<Change, InstallError> {
        if is_ours(existing) {
            Ok(Change::Delete)
        } else {
            Err(not_ours())
        }
    }

    /// Compares the file with the plugin this lidguard writes: the version marker, the command
    /// literal, then the whole text.
    pub fn status(&self, existing: Option<&str>, cmd: &HookCommand) -> HookStatus {
        let mut status = HookStatus::missing(&[FILE_NAME]);
        let Some(text) = existing.filter(|t| !t.trim().is_empty()) else {
            return status;
        };
        if !is_ours(text) {
            status.drift.push(not_ours().to_string());
            return status;
        }
        status.missing_events.clear();
        status.saw_program(
            command(text)
                .and_then(|literal| serde_json::from_str::<Vec<String>>(&literal).ok())
                .and_then(|argv| argv.into_iter().next()),
        );
        let want = self.text(cmd);
        if text == want {
            status.state = InstallState::Installed;
            return status;
        }
        status.state = InstallState::Drifted;
        let (found_version, want_version) = (version(text), version(&want));
        if found_version != want_version {
            let show = |v: Option<u32>| v.map_or_else(|| "none".to_owned(), |v| v.to_string());
            status.drift.push(format!(
                "plugin version {}, expected {}",
                show(found_version),
                show(want_version)
            ));
        }
        let (found_command, want_command) = (command(text), command(&want));
        if found_command != want_command {
            status.drift.push(format!(
                "runs {}, expected {}",
                found_command.as_deref().unwrap_or("an unknown command"),
                want_command.as_deref().unwrap_or_default()
            ));
        }
        if status.drift.is_empty() {
            status.drift.push(
                "the plugin differs from the one this lidguard writes (edited, or from another \
                 build)"
                    .to_owned(),
            );
        }
        status
    }
}

/// Blank, or starts with lidguard's marker.
fn is_ours(text: &str) -> bool {
    let first = text.trim_start().lines().next().unwrap_or_default();
    text.trim().is_empty() || first.to_ascii_lowercase().contains(START_MARKER)
}

fn not_ours() -> InstallError {
    InstallError::Shape {
        path: FILE_NAME.to_owned(),
        message: "was not written by lidguard (it lacks the `<lidguard OpenCode plugin start>` \
                  line); move it away first"
            .to_owned(),
    }
}

/// The number on the version marker line.
fn version(text: &str) -> Option<u32> {
    text.lines().find_map(|line| {
        let line = line.trim().to_ascii_lowercase();
        line.strip_prefix(VERSION_PREFIX)?.trim().parse().ok()
    })
}

/// The command literal the plugin spawns (a JSON array), as written.
fn command(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let literal = line.trim().strip_prefix(COMMAND_PREFIX)?;
        Some(literal.trim_end().trim_end_matches(';').to_owned())
    })
}
