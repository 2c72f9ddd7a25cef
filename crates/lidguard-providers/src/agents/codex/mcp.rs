//! Codex's MCP servers: `[mcp_servers.<name>]` tables in `config.toml`, lidguard's as
//! `codex mcp add lidguard -- <exe> mcp-server` writes it (Codex 0.171.0: `command` and
//! `args`; an entry the user turned off with `enabled = false` is turned back on).

use serde_json::Value;
use toml_edit::{Array, Item, Table, value};

use crate::install::engine::shape;
use crate::install::mcp::{
    McpStatus, SERVER_NAME, differences, foreign_on_install, foreign_on_remove, removable,
    restorable, runs_lidguard, what_it_runs,
};
use crate::install::toml::parse_toml;
use crate::install::{Change, InstallError};

/// The keys of lidguard's Codex entry (`[mcp_servers.lidguard]`).
fn codex_keys(exe: &str) -> Vec<(String, Value)> {
    vec![
        ("command".to_owned(), Value::from(exe)),
        ("args".to_owned(), Value::from(vec!["mcp-server"])),
    ]
}

/// A TOML entry as JSON, for the ownership test.
pub(crate) fn toml_entry(item: &Item) -> Value {
    let Some(table) = item.as_table_like() else {
        return Value::Null;
    };
    let mut found = serde_json::Map::new();
    for (k, item) in table.iter() {
        let v = match item.as_value() {
            Some(toml_edit::Value::String(s)) => Value::from(s.value().as_str()),
            Some(toml_edit::Value::Boolean(b)) => Value::Bool(*b.value()),
            Some(toml_edit::Value::Array(a)) => Value::Array(
                a.iter()
                    .map(|v| v.as_str().map_or(Value::Null, Value::from))
                    .collect(),
            ),
            _ => Value::Null,
        };
        found.insert(k.to_owned(), v);
    }
    Value::Object(found)
}

/// Adds or refreshes `[mcp_servers.lidguard]` in Codex's `config.toml`. An entry of that name
/// that is not lidguard's is refused unless `force`.
pub fn install_codex(
    existing: Option<&str>,
    exe: &str,
    force: bool,
) -> Result<Change, InstallError> {
    let mut doc = parse_toml(existing)?;
    // `mcp_servers = { … }` written inline: lidguard's entry goes inside it, inline too.
    let inline = doc.get("mcp_servers").is_some_and(Item::is_inline_table);
    let servers = match doc.get_mut("mcp_servers") {
        None => {
            let mut t = Table::new();
            // `[mcp_servers.lidguard]` alone, without an empty `[mcp_servers]` header above it.
            t.set_implicit(true);
            doc.insert("mcp_servers", Item::Table(t));
            doc.get_mut("mcp_servers").and_then(Item::as_table_like_mut)
        }
        Some(item) => item.as_table_like_mut(),
    }
    .ok_or_else(|| shape("mcp_servers", "is not a table"))?;
    match servers.get(SERVER_NAME) {
        None if inline => {
            servers.insert(
                SERVER_NAME,
                Item::Value(toml_edit::Value::InlineTable(toml_edit::InlineTable::new())),
            );
        }
        None => {
            servers.insert(SERVER_NAME, Item::Table(Table::new()));
        }
        Some(item) => {
            let found = toml_entry(item);
            if !force && !runs_lidguard(&found) {
                return Err(foreign_on_install("mcp_servers.lidguard", &found));
            }
        }
    }
    let server = servers
        .get_mut(SERVER_NAME)
        .and_then(Item::as_table_like_mut)
        .ok_or_else(|| shape("mcp_servers.lidguard", "is not a table"))?;
    let args: Array = ["mcp-server"].into_iter().collect();
    if server.get("command").and_then(Item::as_str) != Some(exe) {
        server.insert("command", value(exe));
    }
    let args_now: Option<Vec<&str>> = server
        .get("args")
        .and_then(Item::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect());
    if args_now.as_deref() != Some(&["mcp-server"][..]) {
        server.insert("args", value(args));
    }
    if server.get("enabled").and_then(Item::as_bool) == Some(false) {
        server.insert("enabled", value(true));
    }
    Ok(doc.change_from(existing))
}

/// Removes `[mcp_servers.lidguard]` (and an `[mcp_servers]` table left empty that `before`, the
/// file before lidguard's install when known, did not have), or puts back the user's entry
/// install replaced. An entry of that name that is not lidguard's is left alone.
pub fn remove_codex(
    existing: &str,
    exe: &str,
    before: Option<&str>,
) -> Result<Change, InstallError> {
    let mut doc = parse_toml(Some(existing))?;
    let old = before.and_then(|b| parse_toml(Some(b)).ok());
    let old_servers = old.as_ref().and_then(|d| d.get("mcp_servers"));
    let previous = old_servers
        .and_then(|s| s.get(SERVER_NAME))
        .filter(|item| restorable(&toml_entry(item), Some(exe)))
        .cloned();
    let Some(servers) = doc.get_mut("mcp_servers").and_then(Item::as_table_like_mut) else {
        return Ok(Change::Unchanged);
    };
    let Some(found) = servers.get(SERVER_NAME) else {
        return Ok(Change::Unchanged);
    };
    let found = toml_entry(found);
    if !removable(&found, Some(exe), before.is_some()) {
        return Err(foreign_on_remove("mcp_servers.lidguard", &found));
    }
    match previous {
        Some(item) => {
            servers.insert(SERVER_NAME, item);
        }
        None => {
            servers.remove(SERVER_NAME);
        }
    }
    if servers.is_empty() && old_servers.is_none() {
        doc.remove("mcp_servers");
    }
    Ok(doc.change_from(Some(existing)))
}

/// Compares `[mcp_servers.lidguard]` with what install writes.
pub fn status_codex(existing: Option<&str>, exe: &str) -> Result<McpStatus, InstallError> {
    let doc = parse_toml(existing)?;
    let Some(server) = doc.get("mcp_servers").and_then(|s| s.get(SERVER_NAME)) else {
        return Ok(McpStatus::from_drift(false, Vec::new()));
    };
    if server.as_table_like().is_none() {
        return Ok(McpStatus::from_drift(
            true,
            vec!["the entry is not a table".into()],
        ));
    }
    let found = toml_entry(server);
    if !runs_lidguard(&found) {
        return Ok(McpStatus {
            foreign: true,
            ..McpStatus::from_drift(
                true,
                vec![format!(
                    "the `lidguard` entry is not lidguard's: it runs `{}` (install refuses it without --force)",
                    what_it_runs(&found)
                )],
            )
        });
    }
    let mut drift = differences(&found, &codex_keys(exe));
    if found.get("enabled") == Some(&Value::Bool(false)) {
        drift.push("enabled is false".into());
    }
    Ok(McpStatus::from_drift(true, drift))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::InstallState;

    const EXE: &str = "/opt/lidguard/bin/lidguard";

    use crate::install::engine::fresh as changed;

    #[test]
    fn codex_table_round_trips_with_comments() {
        let before =
            "# my config\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\" # theirs\n";
        let after = changed(install_codex(Some(before), EXE, false));
        assert!(after.starts_with(before), "{after}");
        assert!(after.contains("[mcp_servers.lidguard]\ncommand = \"/opt/lidguard/bin/lidguard\"\nargs = [\"mcp-server\"]"), "{after}");
        assert_eq!(
            install_codex(Some(&after), EXE, false).unwrap(),
            Change::Unchanged
        );
        assert_eq!(
            status_codex(Some(&after), EXE).unwrap().state,
            InstallState::Installed
        );
        assert_eq!(
            status_codex(Some(&after), "/elsewhere/lidguard")
                .unwrap()
                .state,
            InstallState::Drifted
        );
        assert_eq!(changed(remove_codex(&after, EXE, None)), before);

        let fresh = changed(install_codex(None, EXE, false));
        assert!(
            !fresh.contains("[mcp_servers]\n"),
            "no empty parent header: {fresh}"
        );
        assert_eq!(changed(remove_codex(&fresh, EXE, None)).trim(), "");

        // `mcp_servers` written inline: edited inline, and removed back to the same bytes.
        let inline = "mcp_servers = { other = { command = \"x\" } }\n";
        let after = changed(install_codex(Some(inline), EXE, false));
        let doc: toml_edit::DocumentMut = after.parse().unwrap();
        assert_eq!(
            doc["mcp_servers"]["lidguard"]["command"].as_str(),
            Some(EXE)
        );
        assert_eq!(doc["mcp_servers"]["other"]["command"].as_str(), Some("x"));
        assert_eq!(changed(remove_codex(&after, EXE, Some(inline))), inline);

        // Another lidguard of the user's (a build elsewhere) under this name, with no record of
        // lidguard writing it: remove leaves it; after install and remove it is back as it was.
        let users =
            "[mcp_servers.lidguard]\ncommand = \"/home/u/dev/lidguard\"\nargs = [\"mcp-server\"]\n";
        assert!(matches!(
            remove_codex(users, EXE, None),
            Err(InstallError::Foreign { .. })
        ));
        let after = changed(install_codex(Some(users), EXE, false));
        assert!(after.contains(EXE));
        assert_eq!(changed(remove_codex(&after, EXE, Some(users))), users);
        assert!(matches!(
            install_codex(Some("mcp_servers = 3"), EXE, false),
            Err(InstallError::Shape { .. })
        ));
        assert!(matches!(
            install_codex(Some("[broken"), EXE, false),
            Err(InstallError::Parse { .. })
        ));
    }
}
