//! The one way settings change, for `lidguard settings` and the MCP server's `update_settings`
//! alike: apply the changes to the settings as they are in the file at this moment, validate,
//! save under the settings lock, hand them to a running daemon (never starting one), and when
//! the managed hook timeout moved, refresh it in the agent configs that hold lidguard's hooks.
//! Callers only turn the typed [`Applied`] into their own words.

use std::time::Duration;

use lidguard_core::settings::{FieldSpec, Os, Settings};
use lidguard_ipc::client::ClientError;

use lidguard_ipc::{Daemon, Places, settings_file};
use lidguard_providers::install::HookCommand;

use crate::agents::Env;
use crate::hooks::{self, Refreshed};
use crate::report::{Line, trust_lines};

/// What to change.
#[derive(Clone, Debug, Default)]
pub struct Changes {
    /// Start from the defaults (fields only the user may change keep their values).
    pub reset: bool,
    /// (CLI flag, value as the CLI takes it), applied in order.
    pub fields: Vec<(&'static str, String)>,
}

/// Why nothing was saved.
#[derive(Debug, thiserror::Error)]
pub enum Rejected {
    /// A value does not fit its field (the message names the flag).
    #[error("{message}")]
    Field {
        /// The field's CLI flag.
        flag: &'static str,
        /// What is wrong with the value.
        message: String,
    },
    /// The settings together break a rule (each reason on its own line).
    #[error("{}", .0.join("\n"))]
    Invalid(Vec<String>),
    /// The settings file could not be read or written.
    #[error(transparent)]
    File(#[from] settings_file::SettingsFileError),
}

/// What a running daemon made of the new settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pushed {
    /// Nothing changed, so nothing was sent.
    NothingToSend,
    /// It uses them now.
    Taken,
    /// It answered and refused them.
    Refused(String),
    /// No daemon runs; it reads the file when it starts.
    NotRunning,
    /// It could not be reached; it reads the file when it restarts.
    Unreachable(String),
}

/// The hook timeouts after the change.
#[derive(Debug)]
pub enum HookTimeouts {
    /// The managed timeout did not move.
    Unchanged,
    /// It moved from `old` to `new` seconds; each agent's refresh.
    Refreshed {
        /// Seconds before.
        old: u32,
        /// Seconds now.
        new: u32,
        /// Per agent whose entries carry a timeout.
        agents: Vec<Refreshed>,
        /// Windows: what was refreshed (or failed) inside WSL distros, a line each.
        wsl: Vec<String>,
    },
    /// It moved, but lidguard's own executable could not be found to write the entries.
    NotRefreshed(String),
}

/// An accepted change.
#[derive(Debug)]
pub struct Applied {
    /// The settings before.
    pub old: Settings,
    /// The settings now (equal to `old` when nothing changed; then nothing was written).
    pub new: Settings,
    /// The fields whose value changed.
    pub changed: Vec<&'static FieldSpec>,
    /// What the running daemon did with them.
    pub pushed: Pushed,
    /// The installed hooks' timeouts.
    pub hooks: HookTimeouts,
}

/// Windows: the WSL distros' managed hooks follow the new timeout (see
/// [`crate::wsl::refresh_timeouts`]); nothing elsewhere.
fn refresh_wsl(places: &Places, timeout: u32) -> Vec<String> {
    if !cfg!(windows) {
        return Vec::new();
    }
    let Ok(program) = crate::hook_exe() else {
        return Vec::new();
    };
    let program = lidguard_files::text::plain_path(&program);
    crate::wsl::refresh_timeouts(places, &crate::wsl::WslExe::from_env(), &program, timeout)
}

/// Applies `changes`; on any rejection the file is untouched. `hook_command` gives the command
/// lidguard's hook entries run (asked only when the timeout moved).
pub fn apply(
    places: &Places,
    os: Os,
    changes: &Changes,
    hook_command: impl FnOnce() -> Result<HookCommand, crate::NoHookProgram>,
    var: Env<'_>,
) -> Result<Applied, Rejected> {
    let settings_file::Updated { old, new } =
        settings_file::update(&places.settings_file(), os, |current| {
            let mut new = if changes.reset {
                current.defaults_keeping_user_only(os)
            } else {
                current.clone()
            };
            for (flag, value) in &changes.fields {
                new.set_field(flag, value, os)
                    .map_err(|e| Rejected::Field {
                        flag,
                        message: e.to_string(),
                    })?;
            }
            settings_file::check_sound_files(&new).map_err(|e| Rejected::Invalid(vec![e]))?;
            new.validate(os).map_err(|errors| {
                Rejected::Invalid(errors.iter().map(ToString::to_string).collect())
            })?;
            let ignored = new.ignored_after_change(current);
            if !ignored.is_empty() {
                return Err(Rejected::Invalid(ignored));
            }
            Ok::<_, Rejected>(new)
        })?;
    let changed = old.changed_fields(&new, os);
    let pushed = if changed.is_empty() {
        Pushed::NothingToSend
    } else {
        push(places, &new)
    };
    // A stop hook may wait for the ask-before-sleep reply: installed hooks must outlive it.
    let (before, after) = (
        old.managed_hook_timeout_seconds(),
        new.managed_hook_timeout_seconds(),
    );
    let hooks = if before == after {
        HookTimeouts::Unchanged
    } else {
        match hook_command() {
            Ok(cmd) => HookTimeouts::Refreshed {
                old: before,
                new: after,
                agents: hooks::refresh_timeouts(places, &cmd, (before, after), var),
                wsl: refresh_wsl(places, after),
            },
            Err(e) => HookTimeouts::NotRefreshed(e.to_string()),
        }
    };
    Ok(Applied {
        old,
        new,
        changed,
        pushed,
        hooks,
    })
}

fn push(places: &Places, settings: &Settings) -> Pushed {
    let daemon = Daemon::new(places).with_timeout(Duration::from_secs(5));
    match daemon.use_settings(settings) {
        Ok(_) => Pushed::Taken,
        Err(ClientError::Refused(message)) => Pushed::Refused(message),
        Err(ClientError::NotRunning { .. }) => Pushed::NotRunning,
        Err(e) => Pushed::Unreachable(e.to_string()),
    }
}

impl Pushed {
    /// The report line, `None` when there is nothing to say.
    pub fn line(&self) -> Option<Line> {
        match self {
            Pushed::NothingToSend | Pushed::NotRunning => None,
            Pushed::Taken => Some(Line::info("The running daemon uses them now.".into())),
            Pushed::Refused(message) => Some(Line::warning(format!(
                "the running daemon did not take them: {message}"
            ))),
            Pushed::Unreachable(e) => Some(Line::warning(format!(
                "could not reach the running daemon ({e}); it will read them when it restarts"
            ))),
        }
    }
}

impl HookTimeouts {
    /// What happened to the installed hooks, one line per agent config touched or failed.
    pub fn lines(&self) -> Vec<Line> {
        let (old, new, agents, wsl) = match self {
            HookTimeouts::Unchanged => return Vec::new(),
            HookTimeouts::NotRefreshed(e) => {
                return vec![Line::warning(format!(
                    "could not refresh the hook timeouts ({e}); run `lidguard hook-install --provider all`"
                ))];
            }
            HookTimeouts::Refreshed {
                old,
                new,
                agents,
                wsl,
            } => (old, new, agents, wsl),
        };
        let mut lines = Vec::new();
        for refreshed in agents {
            let p = refreshed.provider.as_str();
            match &refreshed.result {
                Ok(None) => {}
                Ok(Some(refresh)) => {
                    let what = if refresh.only_timeouts {
                        format!("refreshed the hook timeout for {p} ({old} s → {new} s)")
                    } else {
                        format!(
                            "refreshed lidguard's hooks for {p} (timeout {new} s; they had also drifted from what hook-install writes, now corrected)"
                        )
                    };
                    lines.push(Line::info(format!(
                        "{what}: {}",
                        refresh.outcome.file.display()
                    )));
                    if let Some(b) = &refresh.outcome.backup {
                        lines.push(Line::info(format!(
                            "  previous version saved as {}",
                            b.display()
                        )));
                    }
                    lines.extend(trust_lines(refreshed.provider, refresh.trust.as_ref()));
                }
                Err(e) => lines.push(Line::warning(format!(
                    "could not refresh the hook timeout for {p} ({e}); its hooks still carry the old \
                     timeout: fix that, then run `lidguard hook-install --provider {p}`"
                ))),
            }
        }
        lines.extend(wsl.iter().map(|line| Line::info(line.clone())));
        lines
    }
}
