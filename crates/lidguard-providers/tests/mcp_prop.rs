//! Property tests of the MCP entry installers over generated user configs: random foreign
//! servers (some sharing a prefix with ours), unknown top-level keys, comments, indentation and
//! line endings for JSON; random tables, comments and inline tables for Codex's TOML. Checked:
//! install gives `Installed` and is idempotent; no foreign server or key is lost or changed;
//! remove after install gives back the original bytes (an originally empty server container
//! is dropped, as the hook installer does).
#![allow(
    clippy::disallowed_methods,
    reason = "tests write fixtures and read the environment"
)]

use lidguard_providers::agents::{claude, codex::mcp as codex, copilot, opencode};
use lidguard_providers::install::mcp::{self, JsonEntry};
use lidguard_providers::install::{Change, InstallError, InstallState};
use proptest::prelude::*;
use serde_json::{Value, json};

const EXE: &str = "/usr/local/bin/lidguard";

fn text(change: Change, before: &str) -> String {
    match change {
        Change::Changed { new_text } => new_text,
        Change::Unchanged => before.to_owned(),
        Change::Delete => unreachable!("MCP configs are never deleted"),
    }
}

fn name() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "github",
        "lidguard-provider",
        "lidguard2",
        "my_server",
        "Lidguard",
        "files",
        "x-y",
    ])
    .prop_map(str::to_owned)
}

fn server() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec!["stdio", "local", "remote", "http"]),
        "[a-z/]{1,12}",
        prop::collection::vec("[a-z-]{1,6}", 0..3),
        any::<bool>(),
    )
        .prop_map(|(t, command, args, enabled)| {
            json!({"type": t, "command": command, "args": args, "enabled": enabled})
        })
}

/// Pretty JSON with the given indent, optional comments and CRLF.
fn render(value: &Value, indent: &str, comments: bool, crlf: bool) -> String {
    fn go(v: &Value, indent: &str, comments: bool, depth: usize, out: &mut String) {
        let pad = |d: usize| indent.repeat(d);
        match v {
            Value::Object(map) if !map.is_empty() => {
                out.push_str("{\n");
                for (i, (k, v)) in map.iter().enumerate() {
                    if comments && i % 2 == 0 {
                        out.push_str(&format!("{}// about {k}\n", pad(depth + 1)));
                    }
                    out.push_str(&format!(
                        "{}{}: ",
                        pad(depth + 1),
                        serde_json::to_string(k).unwrap()
                    ));
                    go(v, indent, comments, depth + 1, out);
                    out.push_str(if i + 1 < map.len() { ",\n" } else { "\n" });
                }
                out.push_str(&pad(depth));
                out.push('}');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    go(value, indent, comments, 0, &mut out);
    out.push('\n');
    if crlf { out.replace('\n', "\r\n") } else { out }
}

fn json_config(container: &'static str) -> impl Strategy<Value = (String, Value)> {
    (
        prop::collection::btree_map(name(), server(), 0..4),
        prop::collection::btree_map("[a-z]{1,8}", any::<u16>(), 0..3),
        any::<bool>(),
        prop::sample::select(vec!["  ", "    ", "\t"]),
        any::<bool>(),
        prop::bool::weighted(0.2),
    )
        .prop_map(
            move |(servers, extra, with_container, indent, comments, crlf)| {
                let mut root = serde_json::Map::new();
                // A foreign key named like the container is a container that is no object:
                // install refuses that (`a_server_container_that_is_no_object_is_refused`).
                for (k, v) in extra.into_iter().filter(|(k, _)| k != container) {
                    root.insert(k, json!(v));
                }
                if with_container {
                    root.insert(container.to_owned(), json!(servers));
                }
                let value = Value::Object(root);
                (render(&value, indent, comments, crlf), value)
            },
        )
}

#[test]
fn a_server_container_that_is_no_object_is_refused() {
    for before in ["{\"mcp\": 0}\n", "{\"mcp\": [1]}\n", "{\"mcp\": \"x\"}\n"] {
        let err = mcp::install_json(Some(before), &opencode::mcp_entry(EXE), false).unwrap_err();
        assert!(
            matches!(&err, InstallError::Shape { path, .. } if path == "mcp"),
            "{before}: {err:?}"
        );
    }
}

fn check_json(entry: &JsonEntry, before: &str, model: &Value) -> Result<(), TestCaseError> {
    let installed = text(
        mcp::install_json(Some(before), entry, false).unwrap(),
        before,
    );
    prop_assert_eq!(
        mcp::install_json(Some(&installed), entry, false).unwrap(),
        Change::Unchanged
    );
    prop_assert_eq!(
        mcp::status_json(Some(&installed), entry).unwrap().state,
        InstallState::Installed
    );
    // The generated comments are whole lines; without them the file is plain JSON.
    let plain: String = installed
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let parsed: Value = serde_json::from_str(&plain).unwrap();
    // Everything that was there is still there, unchanged.
    for (k, v) in model.as_object().unwrap() {
        if k == entry.container {
            for (server, config) in v.as_object().unwrap() {
                prop_assert_eq!(&parsed[k][server], config);
            }
        } else {
            prop_assert_eq!(&parsed[k], v);
        }
    }
    let removed = text(
        mcp::remove_json(&installed, entry, None).unwrap(),
        &installed,
    );
    let had_empty_container = model[entry.container]
        .as_object()
        .is_some_and(serde_json::Map::is_empty);
    if had_empty_container {
        // Remove cannot tell an empty container that was there from one install created, and
        // drops it (see the install module docs); everything else is as it was.
        let mut without = model.clone();
        without.as_object_mut().unwrap().remove(entry.container);
        let plain: String = removed
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        prop_assert_eq!(serde_json::from_str::<Value>(&plain).unwrap(), without);
    } else {
        prop_assert_eq!(removed, before);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn claude_json((before, model) in json_config("mcpServers")) {
        check_json(&claude::mcp_entry(EXE), &before, &model)?;
    }

    #[test]
    fn copilot_json((before, model) in json_config("mcpServers")) {
        check_json(&copilot::mcp_entry(EXE), &before, &model)?;
    }

    #[test]
    fn opencode_jsonc((before, model) in json_config("mcp")) {
        check_json(&opencode::mcp_entry(EXE), &before, &model)?;
    }

    #[test]
    fn provider_json((before, model) in json_config("mcpServers"), provider in "[a-z]{1,8}") {
        check_json(&JsonEntry::provider(EXE, &provider, "lidguard-provider-x"), &before, &model)?;
    }

    #[test]
    fn codex_toml(
        keys in prop::collection::btree_map("[a-z]{1,8}", "[a-z ]{0,8}", 0..3),
        servers in prop::collection::btree_map(name(), "[a-z/]{1,10}", 0..3),
        comments in any::<bool>(),
        inline in any::<bool>(),
    ) {
        let mut before = String::new();
        if comments { before.push_str("# my Codex config\n"); }
        for (k, v) in &keys { before.push_str(&format!("{k} = {v:?}\n")); }
        for (server, command) in &servers {
            if inline {
                before.push_str(&format!("\n[mcp_servers]\n{server:?} = {{ command = {command:?} }}\n"));
                break;
            }
            before.push_str(&format!("\n[mcp_servers.{server:?}]\ncommand = {command:?}"));
            before.push_str(if comments { " # mine\n" } else { "\n" });
        }
        let installed = text(codex::install_codex(Some(&before), EXE, false).unwrap(), &before);
        prop_assert_eq!(codex::install_codex(Some(&installed), EXE, false).unwrap(), Change::Unchanged);
        prop_assert_eq!(codex::status_codex(Some(&installed), EXE).unwrap().state, InstallState::Installed);
        let doc: toml_edit::DocumentMut = installed.parse().unwrap();
        for (k, v) in &keys { prop_assert_eq!(doc[k.as_str()].as_str(), Some(v.as_str())); }
        let removed = text(codex::remove_codex(&installed, EXE, None).unwrap(), &installed);
        prop_assert_eq!(removed, before);
    }
}
