//! lidguard's MCP server entries in each agent's MCP config, and the Provider MCP entry in any
//! JSON config with an `mcpServers` object.
//!
//! lidguard's entry has lidguard's name (`lidguard`, or the server name given for Provider
//! MCP) *and* runs a lidguard executable's `mcp-server` or `provider-mcp-server`. An entry of
//! that name that runs anything else is the user's: install refuses it unless forced (then it
//! replaces the command and arguments and keeps the user's other keys), and remove leaves it.
//! Install writes the keys below and leaves any other key the user added to the entry (an
//! `env`, a `timeout`) and every other server untouched; remove deletes the entry — or, when
//! install had replaced one of the user's, puts that one back — and the container when that
//! left it empty and it was not there before install. Edits go through the same CST
//! (JSON/JSONC) and `toml_edit` (TOML) round trips as the hook installer, so unrelated text
//! keeps its bytes.
//!
//! The shapes are what each agent's own `mcp add` writes, captured from the pinned CLIs:
//! `claude mcp add --scope user lidguard -- <exe> mcp-server` (Claude Code 2.1.332, user
//! `.claude.json`), `copilot mcp add lidguard -- <exe> mcp-server` (Copilot CLI 1.0.102,
//! `mcp-config.json`), `codex mcp add lidguard -- <exe> mcp-server` (Codex 0.171.0,
//! `config.toml`); OpenCode has no such command and documents the `mcp` object of
//! `opencode.json` (<https://opencode.ai/docs/mcp-servers/>): `type` `local`, `command` array,
//! `enabled`. tests/e2e/verify checks that each real CLI lists what install wrote.

use jsonc_parser::cst::{CstInputValue, CstObject};
use serde_json::Value;

use super::duplicates::{self, DuplicateKeys};
use super::engine::{Doc, conform, empty_container, shape};
use super::{Change, InstallError, InstallState};

/// Claude Code, Copilot CLI and OpenCode read their MCP configs with JavaScript parsers.
const JSON_DUPLICATES: DuplicateKeys = DuplicateKeys::LastWins;

/// The name lidguard's `mcp-server` is registered under.
pub const SERVER_NAME: &str = "lidguard";
/// The default name of a Provider MCP entry.
pub const PROVIDER_SERVER_NAME: &str = "lidguard-provider";

/// One server entry in a JSON config.
#[derive(Clone, Debug)]
pub struct JsonEntry {
    /// The file in words, for errors.
    pub what: &'static str,
    /// The top-level object holding servers (`mcpServers`, `mcp`).
    pub container: &'static str,
    /// The server's name in it.
    pub name: String,
    /// The keys install writes, in order.
    pub keys: Vec<(String, Value)>,
}

impl JsonEntry {
    /// lidguard's `mcp-server` entry: `keys` in the order the agent's own `mcp add` writes
    /// them, in the container `container` of the file described as `what`.
    pub fn server(
        what: &'static str,
        container: &'static str,
        keys: Vec<(&str, Value)>,
    ) -> JsonEntry {
        JsonEntry {
            what,
            container,
            name: SERVER_NAME.to_owned(),
            keys: keys.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
        }
    }

    /// lidguard's `mcp-server` entry as `{command, args}` in `mcpServers` (Gemini CLI's shape,
    /// which Cursor and Qwen Code read too).
    pub fn command_server(what: &'static str, exe: &str) -> JsonEntry {
        JsonEntry::server(
            what,
            "mcpServers",
            vec![
                ("command", Value::from(exe)),
                ("args", Value::from(vec!["mcp-server"])),
            ],
        )
    }

    /// The program this entry runs.
    pub fn program(&self) -> Option<String> {
        let keys: serde_json::Map<String, Value> = self.keys.iter().cloned().collect();
        program_of(&Value::Object(keys)).map(str::to_owned)
    }

    /// A Provider MCP entry named `server_name` running `provider-mcp-server`.
    pub fn provider(exe: &str, provider_name: &str, server_name: &str) -> JsonEntry {
        JsonEntry {
            what: "MCP config",
            container: "mcpServers",
            name: server_name.to_owned(),
            keys: vec![
                ("type".to_owned(), Value::from("stdio")),
                ("command".to_owned(), Value::from(exe)),
                (
                    "args".to_owned(),
                    Value::from(vec![
                        "provider-mcp-server",
                        "--provider-name",
                        provider_name,
                    ]),
                ),
            ],
        }
    }
}

/// What `mcp-status` found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpStatus {
    /// The verdict.
    pub state: InstallState,
    /// What differs from what install writes, one line each.
    pub drift: Vec<String>,
    /// Facts that do not change the verdict (a key written twice: the verdict is about the
    /// copy the agent reads).
    pub warnings: Vec<String>,
    /// An entry of lidguard's name is there but is not lidguard's.
    pub foreign: bool,
}

impl McpStatus {
    pub(crate) fn from_drift(found: bool, drift: Vec<String>) -> McpStatus {
        let state = match (found, drift.is_empty()) {
            (false, _) => InstallState::Missing,
            (true, true) => InstallState::Installed,
            (true, false) => InstallState::Drifted,
        };
        McpStatus {
            state,
            drift,
            warnings: Vec::new(),
            foreign: false,
        }
    }
}

/// Whether an MCP entry runs lidguard: its program (`command`, or the first element of a
/// command array) is a `lidguard` executable in any directory, and its arguments start one of
/// lidguard's MCP servers.
pub fn runs_lidguard(entry: &Value) -> bool {
    fn strings(v: Option<&Value>) -> impl Iterator<Item = &str> {
        v.and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
    }
    let is_lidguard = program_of(entry).is_some_and(|p| {
        let name = p.rsplit(['/', '\\']).next().unwrap_or_default();
        let name = name.to_ascii_lowercase();
        name == "lidguard" || name == "lidguard.exe"
    });
    // The arguments: `args`, and the rest of a command array.
    let mut args = strings(entry.get("command"))
        .skip(1)
        .chain(strings(entry.get("args")));
    is_lidguard && args.any(|a| a == "mcp-server" || a == "provider-mcp-server")
}

/// The program an entry runs: its `command`, or the first string of a command array.
pub(crate) fn program_of(entry: &Value) -> Option<&str> {
    match entry.get("command")? {
        Value::String(c) => Some(c),
        Value::Array(a) => a.iter().find_map(Value::as_str),
        _ => None,
    }
}

/// Whether remove may take `found` away: it runs lidguard, and either it runs this lidguard
/// (`exe`) or lidguard's install of it is on record (`installed`). An entry that runs another
/// lidguard (a build of the user's elsewhere) with no such record is the user's.
pub(crate) fn removable(found: &Value, exe: Option<&str>, installed: bool) -> bool {
    runs_lidguard(found) && (installed || program_of(found) == exe)
}

/// Whether an entry from before lidguard's install is put back by remove: anything but an entry
/// running this very lidguard.
pub(crate) fn restorable(previous: &Value, exe: Option<&str>) -> bool {
    !(runs_lidguard(previous) && program_of(previous) == exe)
}

/// What an entry runs, in a few words.
pub(crate) fn what_it_runs(entry: &Value) -> String {
    let mut parts: Vec<String> = Vec::new();
    match entry.get("command") {
        Some(Value::String(c)) => parts.push(c.clone()),
        Some(Value::Array(a)) => {
            parts.extend(a.iter().filter_map(|x| x.as_str().map(str::to_owned)))
        }
        _ => {}
    }
    if let Some(args) = entry.get("args").and_then(Value::as_array) {
        parts.extend(args.iter().filter_map(|x| x.as_str().map(str::to_owned)));
    }
    if parts.is_empty() {
        entry
            .get("url")
            .and_then(Value::as_str)
            .map_or_else(|| "no lidguard command".to_owned(), str::to_owned)
    } else {
        parts.join(" ")
    }
}

pub(crate) fn foreign_on_install(path: &str, entry: &Value) -> InstallError {
    InstallError::Foreign {
        path: path.to_owned(),
        message: format!(
            "is not lidguard's: it runs `{}`. lidguard does not take over an entry it did not \
             write. Rename yours, or pass --force to make it lidguard's (its command and \
             arguments are replaced, your other keys stay; mcp-remove puts it back as it was)",
            what_it_runs(entry)
        ),
    }
}

pub(crate) fn foreign_on_remove(path: &str, entry: &Value) -> InstallError {
    InstallError::Foreign {
        path: path.to_owned(),
        message: format!(
            "is not lidguard's (it runs `{}`, and lidguard has no record of writing it); left as \
             it is",
            what_it_runs(entry)
        ),
    }
}

fn input(v: &Value) -> CstInputValue {
    match v {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(input).collect()),
        Value::Object(map) => {
            CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

/// A value from a parsed file as input for another, keys in their order.
fn cst_input(node: &jsonc_parser::cst::CstNode) -> CstInputValue {
    if let Some(object) = node.as_object() {
        CstInputValue::Object(
            object
                .properties()
                .iter()
                .filter_map(|p| Some((p.decoded_name()?, cst_input(&p.value()?))))
                .collect(),
        )
    } else if let Some(array) = node.as_array() {
        CstInputValue::Array(array.elements().iter().map(cst_input).collect())
    } else {
        input(&node.to_serde_value().unwrap_or(Value::Null))
    }
}

fn container(root: &CstObject, entry: &JsonEntry) -> Result<Option<CstObject>, InstallError> {
    match root.get(entry.container) {
        None => Ok(None),
        Some(prop) => prop
            .object_value()
            .map(Some)
            .ok_or_else(|| shape(entry.container, "is not an object")),
    }
}

/// Adds or refreshes the entry; other keys of an existing entry stay. An entry of that name
/// that is not lidguard's is refused unless `force`.
pub fn install_json(
    existing: Option<&str>,
    entry: &JsonEntry,
    force: bool,
) -> Result<Change, InstallError> {
    let doc = Doc::parse(existing, entry.what)?;
    doc.refuse_duplicates(&[entry.container], entry.what, JSON_DUPLICATES)?;
    let root = doc.object()?;
    let servers = match container(&root, entry)? {
        Some(servers) => servers,
        None => root.object_value_or_set(entry.container),
    };
    let path = format!("{}.{}", entry.container, entry.name);
    match servers.get(&entry.name) {
        Some(prop) => {
            let server = prop
                .object_value()
                .ok_or_else(|| shape(&path, "is not an object"))?;
            let found = server.to_serde_value().unwrap_or(Value::Null);
            if !force && !runs_lidguard(&found) {
                return Err(foreign_on_install(&path, &found));
            }
            for (key, want) in &entry.keys {
                match server.get(key) {
                    Some(p)
                        if p.value().and_then(|v| v.to_serde_value()).as_ref() == Some(want) => {}
                    Some(p) => p.set_value(input(want)),
                    None => {
                        server.append(key, input(want));
                    }
                }
            }
        }
        None => {
            let fields = entry
                .keys
                .iter()
                .map(|(k, v)| (k.clone(), input(v)))
                .collect();
            servers.append(&entry.name, CstInputValue::Object(Vec::new()));
            if let Some(server) = servers.get(&entry.name).and_then(|p| p.object_value()) {
                conform(&server, &fields);
            }
        }
    }
    Ok(doc.change_from(existing))
}

/// Deletes lidguard's entry (and the container when that left it empty), or puts back the
/// entry it replaced. `before`: the file as it was before lidguard's install, when known.
/// An entry of that name that is not lidguard's is left alone ([`InstallError::Foreign`]).
pub fn remove_json(
    existing: &str,
    entry: &JsonEntry,
    before: Option<&str>,
) -> Result<Change, InstallError> {
    let doc = Doc::parse(Some(existing), entry.what)?;
    doc.refuse_duplicates(&[entry.container], entry.what, JSON_DUPLICATES)?;
    let root = doc.object()?;
    let Some(servers) = container(&root, entry)? else {
        return Ok(Change::Unchanged);
    };
    let Some(prop) = servers.get(&entry.name) else {
        return Ok(Change::Unchanged);
    };
    let found = prop
        .value()
        .and_then(|v| v.to_serde_value())
        .unwrap_or(Value::Null);
    let ours = entry.program();
    if !removable(&found, ours.as_deref(), before.is_some()) {
        return Err(foreign_on_remove(
            &format!("{}.{}", entry.container, entry.name),
            &found,
        ));
    }
    // What the file had before install: its container, and the user's entry of this name.
    let (had_container, previous) = match before.and_then(|b| Doc::parse(Some(b), entry.what).ok())
    {
        Some(old) => {
            let servers = old
                .object()
                .ok()
                .and_then(|r| r.get(entry.container))
                .and_then(|p| p.object_value());
            let previous = servers
                .as_ref()
                .and_then(|s| s.get(&entry.name))
                .and_then(|p| p.value())
                .filter(|v| {
                    v.to_serde_value()
                        .is_some_and(|v| restorable(&v, ours.as_deref()))
                })
                .map(|v| cst_input(&v));
            (servers.is_some(), previous)
        }
        None => (false, None),
    };
    match previous {
        Some(value) => prop.set_value(value),
        None => prop.remove(),
    }
    if servers.properties().is_empty()
        && let Some(p) = root.get(entry.container)
    {
        if had_container {
            empty_container(&p);
        } else {
            p.remove();
        }
    }
    Ok(doc.change_back(existing, before))
}

/// Compares the entry the agent reads with what install writes.
pub fn status_json(existing: Option<&str>, entry: &JsonEntry) -> Result<McpStatus, InstallError> {
    let doc = Doc::parse(existing, entry.what)?;
    let root = doc.object()?;
    let repeated = doc.duplicates(&[entry.container]);
    let warnings = if repeated.is_empty() {
        Vec::new()
    } else {
        duplicates::keep_last(&root, &[entry.container]);
        vec![duplicates::warning(JSON_DUPLICATES, &repeated)]
    };
    let found = container(&root, entry)?
        .and_then(|servers| servers.get(&entry.name))
        .and_then(|p| p.value())
        .and_then(|v| v.to_serde_value());
    let mut status = match found {
        None => McpStatus::from_drift(false, Vec::new()),
        Some(found) if !runs_lidguard(&found) => McpStatus {
            foreign: true,
            ..McpStatus::from_drift(
                true,
                vec![format!(
                    "the `{}` entry is not lidguard's: it runs `{}` (install refuses it without --force)",
                    entry.name,
                    what_it_runs(&found)
                )],
            )
        },
        Some(found) => McpStatus::from_drift(true, differences(&found, &entry.keys)),
    };
    status.warnings = warnings;
    Ok(status)
}

/// The `--provider-name` of the Provider MCP entry `server` in `text`, if it has one.
pub fn provider_name_in(text: &str, server: &str) -> Option<String> {
    let doc = Doc::parse(Some(text), "MCP config").ok()?;
    let found = doc
        .object()
        .ok()?
        .get("mcpServers")?
        .object_value()?
        .get(server)?;
    let value = found.value()?.to_serde_value()?;
    let args = value.get("args")?.as_array()?;
    let at = args.iter().position(|a| a == "--provider-name")?;
    args.get(at + 1)?.as_str().map(str::to_owned)
}

pub(crate) fn differences(found: &Value, keys: &[(String, Value)]) -> Vec<String> {
    let Some(found) = found.as_object() else {
        return vec!["the entry is not an object".to_owned()];
    };
    keys.iter()
        .filter(|(k, want)| found.get(k) != Some(want))
        .map(|(k, want)| match found.get(k) {
            Some(actual) => format!("{k} is {actual}, expected {want}"),
            None => format!("no {k}, expected {want}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXE: &str = "/opt/lidguard/bin/lidguard";

    use crate::install::engine::fresh as changed;

    #[test]
    fn claude_entry_round_trips_and_keeps_other_servers_byte_for_byte() {
        let before = "{\n  \"numStartups\": 3,\n  \"mcpServers\": {\n    \"mine\": {\"command\": \"x\"}\n  },\n  \"tips\": {}\n}\n";
        let entry = crate::agents::claude::mcp_entry(EXE);
        let after = changed(install_json(Some(before), &entry, false));
        assert!(after.contains("\"mine\": {\"command\": \"x\"}"), "{after}");
        let v: Value = serde_json::from_str(&after).unwrap();
        assert_eq!(v["mcpServers"]["lidguard"]["command"], EXE);
        assert_eq!(v["mcpServers"]["lidguard"]["args"][0], "mcp-server");
        assert_eq!(
            install_json(Some(&after), &entry, false).unwrap(),
            Change::Unchanged
        );
        assert_eq!(
            status_json(Some(&after), &entry).unwrap().state,
            InstallState::Installed
        );
        assert_eq!(changed(remove_json(&after, &entry, None)), before);
    }

    #[test]
    fn a_stale_entry_is_drift_and_install_refreshes_it_keeping_user_keys() {
        let before = r#"{"mcp": {"lidguard": {"type": "local", "command": ["/old/lidguard", "mcp-server"], "enabled": false, "environment": {"A": "1"}}}}"#;
        let entry = crate::agents::opencode::mcp_entry(EXE);
        let status = status_json(Some(before), &entry).unwrap();
        assert_eq!(status.state, InstallState::Drifted);
        assert_eq!(status.drift.len(), 2, "{:?}", status.drift);
        let after = changed(install_json(Some(before), &entry, false));
        let v: Value = serde_json::from_str(&after).unwrap();
        assert_eq!(v["mcp"]["lidguard"]["enabled"], true);
        assert_eq!(v["mcp"]["lidguard"]["environment"]["A"], "1");
        assert_eq!(
            status_json(Some(&after), &entry).unwrap().state,
            InstallState::Installed
        );
    }

    #[test]
    fn another_lidguard_of_the_users_is_left_alone_or_put_back() {
        let entry = crate::agents::claude::mcp_entry(EXE);
        let users = r#"{"mcpServers": {"lidguard": {"type": "stdio", "command": "/home/u/dev/lidguard", "args": ["mcp-server"]}}}"#;
        assert!(matches!(
            remove_json(users, &entry, None),
            Err(InstallError::Foreign { .. })
        ));
        let after = changed(install_json(Some(users), &entry, false));
        assert!(after.contains(EXE));
        assert_eq!(changed(remove_json(&after, &entry, Some(users))), users);
        // This lidguard's own entry goes, with or without a record.
        let ours = changed(install_json(None, &entry, false));
        assert!(matches!(
            remove_json(&ours, &entry, None),
            Ok(Change::Changed { .. })
        ));
    }

    #[test]
    fn new_file_and_empty_container_are_removed_again() {
        let entry = JsonEntry::provider(EXE, "gemini", PROVIDER_SERVER_NAME);
        let after = changed(install_json(None, &entry, false));
        let v: Value = serde_json::from_str(&after).unwrap();
        assert_eq!(
            v["mcpServers"]["lidguard-provider"]["args"],
            serde_json::json!(["provider-mcp-server", "--provider-name", "gemini"])
        );
        let removed = changed(remove_json(&after, &entry, None));
        assert_eq!(
            serde_json::from_str::<Value>(&removed).unwrap(),
            serde_json::json!({})
        );
        assert_eq!(remove_json("{}", &entry, None).unwrap(), Change::Unchanged);
    }

    #[test]
    fn jsonc_comments_survive_and_bad_files_are_refused() {
        let before = "// mine\n{\n  \"mcp\": {\n    // keep\n    \"a\": {\"type\": \"remote\", \"url\": \"https://x\"},\n  },\n}\n";
        let entry = crate::agents::opencode::mcp_entry(EXE);
        let after = changed(install_json(Some(before), &entry, false));
        assert!(
            after.contains("// mine") && after.contains("// keep"),
            "{after}"
        );
        assert_eq!(changed(remove_json(&after, &entry, None)), before);
        assert!(matches!(
            install_json(Some("{\"mcp\": [}"), &entry, false),
            Err(InstallError::Parse { .. })
        ));
        assert!(matches!(
            install_json(Some("{\"mcp\": []}"), &entry, false),
            Err(InstallError::Shape { .. })
        ));
    }
}
