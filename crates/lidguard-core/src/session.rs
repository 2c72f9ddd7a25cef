//! One agent conversation and the key that names it.

use std::collections::BTreeMap;
use std::fmt;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::provider::Provider;

/// What kind of background work an agent left running.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum WorkKind {
    /// A subagent (Claude `SubagentStart`, Copilot `subagentStart`).
    Subagent,
    /// A background or detached shell.
    Shell,
    /// A background agent or task (Claude `Agent`/`Task` in the background, `TaskCreated`,
    /// Copilot background `task`).
    Task,
    /// A monitor (Claude `Monitor`).
    Monitor,
}

/// Identifies a session: (provider, session id, provider name). The provider name is only
/// meaningful for [`Provider::Mcp`] and is empty for every other provider.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionKey {
    /// The agent harness.
    pub provider: Provider,
    /// The provider's session id, compared exactly.
    pub session_id: String,
    /// For `mcp` sessions, the `--provider-name` of the server; empty otherwise.
    pub provider_name: String,
}

impl SessionKey {
    /// Builds a key, trimming the provider name and dropping it for providers other than `mcp`.
    pub fn new(provider: Provider, session_id: impl Into<String>, provider_name: &str) -> Self {
        let provider_name = if provider == Provider::Mcp {
            provider_name.trim().to_owned()
        } else {
            String::new()
        };
        SessionKey {
            provider,
            session_id: session_id.into(),
            provider_name,
        }
    }

    /// The provider name, or `None` when it does not apply.
    pub fn provider_name(&self) -> Option<&str> {
        (self.provider == Provider::Mcp).then_some(self.provider_name.as_str())
    }
}

impl fmt::Display for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.provider_name() {
            Some(name) => write!(f, "{}:{}:{}", self.provider, name, self.session_id),
            None => write!(f, "{}:{}", self.provider, self.session_id),
        }
    }
}

/// The session id used when a provider gives none: the provider and the normalized
/// working directory, e.g. `claude:/home/me/project`. `cwd` must already be absolute.
pub fn derived_session_id(provider: Provider, cwd: &str) -> String {
    format!("{provider}:{}", normalize_dir(cwd))
}

/// Lexically normalizes an absolute path: collapses `//`, `.` and `..`, drops a trailing
/// separator. Pure string work; symlinks are not resolved.
pub fn normalize_dir(path: &str) -> String {
    let windows_style = path.contains('\\') && !path.starts_with('/');
    let sep = if windows_style { '\\' } else { '/' };
    let mut parts: Vec<&str> = Vec::new();
    let mut prefix = String::new();
    for (i, part) in path.split(['/', '\\']).enumerate() {
        if i == 0 && part.ends_with(':') {
            prefix = part.to_owned();
            continue;
        }
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    let mut out = prefix;
    out.push(sep);
    out.push_str(&parts.join(&sep.to_string()));
    out
}

/// Why a session is waiting for the user.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SoftLock {
    /// The exact reason string (e.g. `permission_prompt`).
    pub reason: String,
    /// When the soft-lock began.
    pub since: Timestamp,
}

/// Background work that outlives the agent's turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingWork {
    /// What is still running, as the provider said.
    pub reason: String,
    /// When the stop was deferred.
    pub since: Timestamp,
    /// Not background work but the agent's own scheduled wake-up, due then: the session is
    /// held until it comes (and its inactivity timeout counts from it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wakes_at: Option<Timestamp>,
}

/// One tracked agent session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    /// The session's identity.
    pub key: SessionKey,
    /// The agent's working directory (metadata only).
    pub cwd: Option<String>,
    /// The agent's transcript file, when known.
    pub transcript_path: Option<String>,
    /// The agent process whose exit ends the session.
    pub watched_pid: Option<u32>,
    /// The tool whose work this is when it is not the provider itself: a program that runs the
    /// provider's hook files (Cursor, Devin CLI with Claude Code's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_by: Option<String>,
    /// The relay a session on another machine comes through (`lidguard ssh`): its processes
    /// and transcript are not this machine's, and it ends with the relay's lease.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// When lidguard first saw the session.
    pub started_at: Timestamp,
    /// The last evidence of work.
    pub last_activity_at: Timestamp,
    /// Set while the session waits for the user.
    pub soft_lock: Option<SoftLock>,
    /// Set while a stop is deferred for background work.
    pub pending_work: Option<PendingWork>,
    /// Background work the agent's hooks reported as started and not yet finished, by id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub background: BTreeMap<String, WorkKind>,
    /// The last prompt, previewed for webhooks (at most 50 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_preview: Option<String>,
    /// The agent's last answer as its hooks reported it, for webhooks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_assistant_message: Option<String>,
}

impl Session {
    /// Whether this session needs the machine awake: it is not waiting for the user, or it
    /// still has background work running.
    pub fn needs_protection(&self) -> bool {
        self.soft_lock.is_none() || self.pending_work.is_some()
    }

    /// The process whose life is this session's work: a command's session (`run`, `start
    /// --provider custom --parent-pid`) with a watched process. Such a session is not subject to
    /// the inactivity timeout; like `systemd-inhibit` or `caffeinate -w`, it holds until the
    /// process exits. Agents' sessions keep the timeout: an agent can wait for the user without
    /// any hook saying so.
    pub fn lasts_while_process(&self) -> Option<u32> {
        (self.key.provider == Provider::Custom)
            .then_some(self.watched_pid)
            .flatten()
    }
}

/// How a session ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopKind {
    /// The provider reported a normal end of work (Claude `Stop`, Codex `Stop`, ...).
    ProviderEnd,
    /// The provider reported an abnormal end (failure, interrupt, transcript abort).
    Interrupted,
    /// The watched process exited or orphan cleanup found it gone.
    ProcessGone,
    /// The user or a tool removed it.
    Removed,
    /// Plain `lidguard stop`.
    Manual,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_name_only_counts_for_mcp() {
        let k = SessionKey::new(Provider::Claude, "s1", "ignored");
        assert_eq!(k.provider_name(), None);
        assert_eq!(k.to_string(), "claude:s1");
        let k = SessionKey::new(Provider::Mcp, "ab12cd34", " gemini ");
        assert_eq!(k.provider_name(), Some("gemini"));
        assert_eq!(k.to_string(), "mcp:gemini:ab12cd34");
    }

    #[test]
    fn derived_ids_use_the_normalized_directory() {
        assert_eq!(
            derived_session_id(Provider::Codex, "/home/u//proj/./sub/../"),
            "codex:/home/u/proj"
        );
        assert_eq!(derived_session_id(Provider::Claude, "/"), "claude:/");
        assert_eq!(normalize_dir(r"C:\Users\u\proj\"), r"C:\Users\u\proj");
    }
}
