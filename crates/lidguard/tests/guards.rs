//! House rules a test checks: nothing under `tests/` is left out of the test binary, and the
//! published event schema names exactly the providers lidguard knows.

use std::path::PathBuf;

use lidguard_core::provider::Provider;

fn tests_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// This crate builds one test binary (`autotests = false`): a file under `tests/` that
/// `integration.rs` does not name as a module would never run, silently.
#[test]
fn every_file_under_tests_is_part_of_the_test_binary() {
    let integration = std::fs::read_to_string(tests_dir().join("integration.rs")).unwrap();
    let mut forgotten = Vec::new();
    for entry in std::fs::read_dir(tests_dir()).unwrap().flatten() {
        let path = entry.path();
        let Some(name) = path.file_stem().and_then(|n| n.to_str()) else {
            continue;
        };
        if path.extension().is_some_and(|e| e == "rs")
            && name != "integration"
            && !integration
                .lines()
                .any(|l| l.trim() == format!("mod {name};"))
        {
            forgotten.push(name.to_owned());
        }
    }
    assert!(forgotten.is_empty(), "not in integration.rs: {forgotten:?}");
}

/// `schema/events.schema.json` lists the providers a line may name: exactly `Provider::ALL`
/// (and null, for events about no session).
#[test]
fn the_event_schema_names_every_provider() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../schema/events.schema.json");
    let text = std::fs::read_to_string(path).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut found = Vec::new();
    find_provider_enums(&schema, &mut found);
    assert!(!found.is_empty(), "no provider enum in the schema");
    let mut expected: Vec<serde_json::Value> = vec![serde_json::Value::Null];
    expected.extend(Provider::ALL.iter().map(|p| p.as_str().into()));
    for listed in found {
        assert_eq!(listed, expected);
    }
}

fn find_provider_enums(value: &serde_json::Value, found: &mut Vec<Vec<serde_json::Value>>) {
    match value {
        serde_json::Value::Object(fields) => {
            for (key, item) in fields {
                if key == "provider"
                    && let Some(list) = item.get("enum").and_then(|e| e.as_array())
                {
                    found.push(list.clone());
                }
                find_provider_enums(item, found);
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                find_provider_enums(item, found);
            }
        }
        _ => {}
    }
}
