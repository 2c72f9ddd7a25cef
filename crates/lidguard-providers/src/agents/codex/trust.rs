//! What the agents' own settings say around lidguard's hooks: whether Codex trusts lidguard's
//! hook entries, and whether an agent keeps the machine awake by itself.
//!
//! Pure functions, like the rest of [`install`](super): the caller reads the files (passing
//! `None` for a file that does not exist) and writes what comes back.
//!
//! # Codex hook trust (verified with codex-cli 0.171.0)
//!
//! Codex runs a hook from `hooks.json` only when the user trusted it; untrusted hooks are skipped
//! (silently in `codex exec`; the TUI asks at start and in `/hooks`). Trust is one table per
//! handler in the user's `$CODEX_HOME/config.toml`:
//!
//! ```toml
//! [hooks.state."/home/me/.codex/hooks.json:pre_tool_use:0:0"]
//! trusted_hash = "sha256:8bb912ec06e297aa21de88437c6d40190c3d9669251a6ae73aed819a8d207c9a"
//! enabled = false   # only after "turn off" in /hooks: the hook is then skipped while trusted
//! ```
//!
//! - The key is `<hooks.json path>:<event in snake_case>:<matcher group index>:<handler index>`
//!   (indexes into the event's array and the group's `hooks` array, from 0). Codex resolves
//!   symlinks in `CODEX_HOME` but not a symlinked `hooks.json` itself: the path is
//!   `<canonical CODEX_HOME>/hooks.json`.
//! - The hash is `sha256:` + the lowercase hex SHA-256 of compact JSON with sorted keys
//!   (serde_json escaping, UTF-8 as is) of
//!   `{"event_name": <snake event>, "hooks": [{"async", "command", "statusMessage"?, "timeout",
//!   "type"}], "matcher"?}`:
//!   - `async` defaults to `false`; `statusMessage` only when the handler has one;
//!   - `timeout` is the effective one: default 600 (`SessionEnd`/`Interrupt`: 1), at least 1,
//!     and at most 3 for `SessionEnd`/`Interrupt`;
//!   - `matcher` is the group's matcher as written (`""` and `"*"` included) except on
//!     `UserPromptSubmit`, `Stop` and `Interrupt`, which ignore matchers; a missing or `null`
//!     matcher is left out;
//!   - other handler keys (`commandWindows`, unknown keys) are not part of it.
//!
//! So any change of command, timeout, matcher, position or file path makes Codex ask again. See
//! `tests/fixtures/codex/trust/README.md` for how this was captured and checked.

use serde_json::Value;
use sha2::{Digest, Sha256};
use toml_edit::{DocumentMut, Item, Table, TableLike};

use super::install as codex;
use crate::install::engine::{Doc, shape};
use crate::install::toml::parse_toml;
use crate::install::{Change, HookCommand, InstallError};

/// Codex's hook events: the name in `hooks.json`, the snake_case name in trust keys, and
/// whether a group's matcher applies (and so is part of the hash). In the order of Codex's
/// `/hooks` list, which is the order its "trust all" writes the records in.
const CODEX_EVENTS: &[(&str, &str, bool)] = &[
    ("PreToolUse", "pre_tool_use", true),
    ("PermissionRequest", "permission_request", true),
    ("PostToolUse", "post_tool_use", true),
    ("PreCompact", "pre_compact", true),
    ("PostCompact", "post_compact", true),
    ("SessionStart", "session_start", true),
    ("SessionEnd", "session_end", true),
    ("UserPromptSubmit", "user_prompt_submit", false),
    ("SubagentStart", "subagent_start", true),
    ("SubagentStop", "subagent_stop", true),
    ("Stop", "stop", false),
    ("Interrupt", "interrupt", false),
];

pub use crate::install::CodexTrust;

/// One lidguard handler in `hooks.json`, with what Codex's trust record for it must say.
struct Entry {
    name: String,
    key: String,
    hash: String,
    /// The handler is exactly what `hook-install` writes to run `cmd` (safe to trust).
    canonical: bool,
}

/// Compares lidguard's entries in `hooks.json` with the trust records in `config.toml`.
///
/// `hooks_json_path` is the path Codex uses in its keys: `<canonical CODEX_HOME>/hooks.json`
/// (symlinks in `CODEX_HOME` resolved; on Windows without the `\\?\` prefix). `hooks_json` is
/// the file's text; `config_toml` is `$CODEX_HOME/config.toml` (`None`: it does not exist).
/// Entries are lidguard's by the same test as [`codex::status`] (`cmd` widens it to its
/// program).
pub fn codex_trust(
    hooks_json_path: &str,
    hooks_json: &str,
    config_toml: Option<&str>,
    cmd: &HookCommand,
) -> Result<CodexTrust, InstallError> {
    let entries = lidguard_entries(hooks_json_path, hooks_json, cmd)?;
    let doc = parse_toml(config_toml)?;
    let state = doc
        .get("hooks")
        .and_then(Item::as_table_like)
        .and_then(|hooks| hooks.get("state"))
        .and_then(Item::as_table_like);
    let mut out = CodexTrust::default();
    for entry in entries {
        let record = state
            .and_then(|s| s.get(&entry.key))
            .and_then(Item::as_table_like);
        let enabled = record
            .and_then(|r| r.get("enabled"))
            .and_then(Item::as_bool)
            .unwrap_or(true);
        let recorded = record
            .and_then(|r| r.get("trusted_hash"))
            .and_then(Item::as_str);
        let list = match recorded {
            _ if !enabled => &mut out.disabled,
            Some(hash) if hash == entry.hash => &mut out.trusted,
            Some(_) => &mut out.stale,
            None => &mut out.untrusted,
        };
        list.push(entry.name);
    }
    Ok(out)
}

/// `config.toml` with a trust record for each of lidguard's current entries in `hooks.json`,
/// for an explicit opt-in (the user asks lidguard to trust its own hooks).
///
/// Only entries that are exactly what `hook-install` writes for `cmd` (`type` `command`, the
/// command `cmd` renders, no `commandWindows`) are trusted; any other entry that merely looks
/// like lidguard's is left for the user to review in `/hooks`. Existing records get the new
/// hash; `enabled = false` stays. Everything else in the file — comments, order, other tables,
/// other hooks' records — keeps its text (a `toml_edit` round trip). Records are added the way
/// Codex's `/hooks` "trust all" writes them: under an explicit `[hooks.state]`, one
/// `[hooks.state."<key>"]` table each. `Unchanged` when every entry is already trusted or
/// there is nothing to trust (a missing `config.toml` is then not created).
pub fn codex_trust_lidguard(
    hooks_json_path: &str,
    hooks_json: &str,
    config_toml: Option<&str>,
    cmd: &HookCommand,
) -> Result<Change, InstallError> {
    let entries = lidguard_entries(hooks_json_path, hooks_json, cmd)?;
    let mut doc = parse_toml(config_toml)?;
    for entry in entries.iter().filter(|e| e.canonical) {
        let state = state_table(&mut doc)?;
        if !state.contains_key(&entry.key) {
            let mut record = Table::new();
            record.set_implicit(false);
            state.insert(&entry.key, Item::Table(record));
        }
        let record = state
            .get_mut(&entry.key)
            .and_then(Item::as_table_like_mut)
            .ok_or_else(|| {
                shape(
                    &format!("hooks.state.\"{}\"", entry.key),
                    "is not a table; fix or remove it in Codex's config.toml",
                )
            })?;
        match record.get_mut("trusted_hash") {
            Some(Item::Value(old)) if old.as_str() == Some(entry.hash.as_str()) => {}
            Some(Item::Value(old)) => {
                // Keep the comment and spacing around the old value.
                let decor = old.decor().clone();
                *old = entry.hash.as_str().into();
                *old.decor_mut() = decor;
            }
            _ => {
                record.insert("trusted_hash", toml_edit::value(entry.hash.as_str()));
            }
        }
    }
    Ok(doc.change_from(config_toml))
}

/// Codex's `config.toml` without the trust records of lidguard's entries in `hooks_json` (what
/// `hook-remove` takes away with the entries; records of anyone else's hooks stay). An empty
/// `[hooks.state]` (and `[hooks]` holding only it) goes too, and a file left with nothing in it
/// is deleted. `Unchanged` when there is no such record.
pub fn codex_forget_lidguard(
    hooks_json_path: &str,
    hooks_json: &str,
    config_toml: Option<&str>,
    cmd: &HookCommand,
) -> Result<Change, InstallError> {
    let Some(text) = config_toml else {
        return Ok(Change::Unchanged);
    };
    let entries = lidguard_entries(hooks_json_path, hooks_json, cmd)?;
    let mut doc = parse_toml(Some(text))?;
    let Some(hooks) = doc.get_mut("hooks").and_then(Item::as_table_like_mut) else {
        return Ok(Change::Unchanged);
    };
    let Some(state) = hooks.get_mut("state").and_then(Item::as_table_like_mut) else {
        return Ok(Change::Unchanged);
    };
    let mut removed = false;
    for entry in &entries {
        removed |= state.remove(&entry.key).is_some();
    }
    if !removed {
        return Ok(Change::Unchanged);
    }
    if state.is_empty() {
        hooks.remove("state");
    }
    if hooks.is_empty() {
        doc.remove("hooks");
    }
    Ok(match doc.change_from(Some(text)) {
        Change::Changed { new_text } if new_text.trim().is_empty() => Change::Delete,
        other => other,
    })
}

/// Whether Codex keeps the machine awake by itself: the experimental feature
/// `[features] prevent_idle_sleep = true` in `config.toml` ("Prevent sleep while running: keep
/// your computer awake while Codex is running a thread", `/experimental` in the TUI,
/// `codex features enable prevent_idle_sleep`). `None` when it is off, unset, or the file is
/// missing or does not parse.
pub fn codex_keep_awake(config_toml: Option<&str>) -> Option<String> {
    let doc = config_toml?.parse::<DocumentMut>().ok()?;
    let on = doc
        .get("features")
        .and_then(Item::as_table_like)
        .and_then(|f| f.get("prevent_idle_sleep"))
        .and_then(Item::as_bool)?;
    on.then(|| "[features] prevent_idle_sleep = true".to_owned())
}

// ---- Codex trust internals ------------------------------------------------------------------

/// Every lidguard handler under a Codex event in `hooks.json`, in Codex's order.
fn lidguard_entries(
    path: &str,
    hooks_json: &str,
    cmd: &HookCommand,
) -> Result<Vec<Entry>, InstallError> {
    let doc = Doc::parse(Some(hooks_json), "Codex hooks.json")?;
    let root = doc.object()?.to_serde_value().unwrap_or(Value::Null);
    let Some(hooks) = root.get("hooks").and_then(Value::as_object) else {
        return Ok(Vec::new());
    };
    let canonical_command = cmd.render(codex::SUBCOMMAND);
    let mut out = Vec::new();
    for &(event, snake, uses_matcher) in CODEX_EVENTS {
        let Some(groups) = hooks.get(event).and_then(Value::as_array) else {
            continue;
        };
        let mut seen = 0;
        for (gi, group) in groups.iter().enumerate() {
            let Some(handlers) = group.get("hooks").and_then(Value::as_array) else {
                continue;
            };
            let matcher = group
                .get("matcher")
                .and_then(Value::as_str)
                .filter(|_| uses_matcher);
            for (hi, handler) in handlers.iter().enumerate() {
                if !cmd.is_ours(&command_text(handler), codex::SUBCOMMAND) {
                    continue;
                }
                seen += 1;
                let field = |k: &str| handler.get(k).and_then(Value::as_str);
                out.push(Entry {
                    name: if seen == 1 {
                        event.to_owned()
                    } else {
                        format!("{event}#{seen}")
                    },
                    key: format!("{path}:{snake}:{gi}:{hi}"),
                    hash: trust_hash(event, snake, matcher, handler),
                    canonical: field("type") == Some("command")
                        && field("command") == Some(canonical_command.as_str())
                        && handler.get("commandWindows").is_none()
                        && handler.get("command_windows").is_none(),
                });
            }
        }
    }
    Ok(out)
}

/// What a Codex handler runs, for the ownership test (as the installer's status reads it).
fn command_text(handler: &Value) -> String {
    ["command", "commandWindows", "command_windows"]
        .iter()
        .filter_map(|k| handler.get(k).and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Codex's `trusted_hash` for one handler (see the module docs).
fn trust_hash(event: &str, snake: &str, matcher: Option<&str>, handler: &Value) -> String {
    let end_event = matches!(event, "SessionEnd" | "Interrupt");
    let timeout = handler
        .get("timeout")
        .and_then(Value::as_u64)
        .unwrap_or(if end_event { 1 } else { 600 })
        .max(1);
    let timeout = if end_event {
        timeout.min(u64::from(codex::END_EVENT_TIMEOUT_LIMIT))
    } else {
        timeout
    };
    let text = |k: &str| handler.get(k).and_then(Value::as_str).unwrap_or_default();
    let json = |s: &str| Value::String(s.to_owned()).to_string();
    // Keys in sorted order, written by hand so the result never depends on serde_json's
    // `preserve_order` feature.
    let mut canonical = format!(
        r#"{{"event_name":{},"hooks":[{{"async":{},"command":{},"#,
        json(snake),
        handler
            .get("async")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        json(text("command")),
    );
    if let Some(message) = handler.get("statusMessage").and_then(Value::as_str) {
        canonical += &format!(r#""statusMessage":{},"#, json(message));
    }
    canonical += &format!(r#""timeout":{timeout},"type":{}}}]"#, json(text("type")));
    if let Some(matcher) = matcher {
        canonical += &format!(r#","matcher":{}"#, json(matcher));
    }
    canonical.push('}');
    let digest = Sha256::digest(canonical.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// `hooks.state`, created like Codex does when missing (`hooks` implicit, `[hooks.state]`
/// written out).
fn state_table(doc: &mut DocumentMut) -> Result<&mut dyn TableLike, InstallError> {
    let hooks = doc.entry("hooks").or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let hooks = hooks
        .as_table_like_mut()
        .ok_or_else(|| shape("hooks", "is not a table in Codex's config.toml"))?;
    if !hooks.contains_key("state") {
        let mut t = Table::new();
        t.set_implicit(false);
        hooks.insert("state", Item::Table(t));
    }
    hooks
        .get_mut("state")
        .and_then(Item::as_table_like_mut)
        .ok_or_else(|| shape("hooks.state", "is not a table in Codex's config.toml"))
}
