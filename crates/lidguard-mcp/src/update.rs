//! `update_settings`: several fields in one call, validated like the CLI, saved together,
//! handed to a running daemon. Fields only the user may change are refused with the CLI
//! command that changes them, and nothing is saved.

use std::sync::Arc;

use lidguard_core::settings::{FieldKind, FieldSpec, Os, Settings, fields_for};
use lidguard_ipc::settings_file;
use rmcp::model::JsonObject;
use serde::Serialize;
use serde_json::{Value, json};

/// The argument that resets every model-settable field to its default.
pub(crate) const RESET: &str = "resetToDefaults";

/// One field that changed.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AppliedChange {
    /// The argument name.
    pub(crate) name: String,
    /// The CLI flag (`lidguard settings --<flag>`).
    pub(crate) flag: &'static str,
    /// The value before, as the CLI shows it.
    pub(crate) previous: String,
    /// The value now.
    pub(crate) current: String,
}

/// What an accepted update did.
#[derive(Debug)]
pub(crate) struct Update {
    pub(crate) reset: bool,
    pub(crate) changes: Vec<AppliedChange>,
    pub(crate) previous: Settings,
    pub(crate) updated: Settings,
}

/// The field a tool argument names: its MCP name, or its CLI flag.
fn field_for(name: &str, os: Os) -> Option<&'static FieldSpec> {
    fields_for(os).find(|spec| spec.mcp_name() == name || spec.matches(name))
}

/// What a user-only field's refusal says.
pub(crate) fn refusal(spec: &FieldSpec) -> String {
    format!(
        "`{}` can only be changed by the user, not through MCP: it decides what happens without \
         asking the user, where data is sent, or guards the hardware. Ask the user to run \
         `lidguard settings --{} {}` if they want it changed.",
        spec.mcp_name(),
        spec.flag,
        spec.value_hint
    )
}

/// Applies `args` to the settings file at `path` and saves; the file is untouched on any error.
pub(crate) fn apply(path: &std::path::Path, args: &JsonObject, os: Os) -> Result<Update, String> {
    let reset = match args.get(RESET) {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => return Err(format!("{RESET} must be true or false, not {other}")),
    };
    // Refusals first, so a refused call never changes anything.
    let mut refused = Vec::new();
    for name in args.keys().filter(|k| *k != RESET) {
        match field_for(name, os) {
            Some(spec) if spec.user_only() => refused.push(refusal(spec)),
            Some(_) => {}
            None => {
                return Err(format!(
                    "unknown setting `{name}`; the settable names are the properties of this tool's input schema. Nothing was changed."
                ));
            }
        }
    }
    if !refused.is_empty() {
        refused.push("Nothing was changed.".into());
        return Err(refused.join("\n"));
    }

    // Read, change and save under the settings lock: a concurrent `lidguard settings` is
    // applied before or after this, never lost.
    let updated = settings_file::update(path, os, |current| {
        let mut new = if reset {
            current.defaults_keeping_user_only(os)
        } else {
            current.clone()
        };
        for (name, value) in args.iter().filter(|(k, _)| *k != RESET) {
            let Some(spec) = field_for(name, os) else {
                continue;
            };
            let raw = match value {
                Value::Null => continue,
                Value::Bool(b) => b.to_string(),
                Value::Number(n) => n.to_string(),
                Value::String(s) => s.clone(),
                other => {
                    return Err(Refusal(format!(
                        "`{name}` expects {}, not {other}. Nothing was changed.",
                        spec.expected()
                    )));
                }
            };
            new.set_field(spec.flag, &raw, os)
                .map_err(|e| Refusal(format!("`{name}`: {e}. Nothing was changed.")))?;
        }
        settings_file::check_sound_files(&new)
            .map_err(|e| Refusal(format!("{e}. Nothing was changed.")))?;
        if let Err(errors) = new.validate(os) {
            let reasons: Vec<String> = errors.iter().map(ToString::to_string).collect();
            return Err(Refusal(format!(
                "{}\nNothing was changed.",
                reasons.join("\n")
            )));
        }
        Ok(new)
    })
    .map_err(|Refusal(message)| message)?;
    let (current, new) = (updated.old, updated.new);
    let changes: Vec<AppliedChange> = current
        .changed_fields(&new, os)
        .into_iter()
        .map(|spec| AppliedChange {
            name: spec.mcp_name(),
            flag: spec.flag,
            previous: current.get_field(spec.flag).unwrap_or_default(),
            current: new.get_field(spec.flag).unwrap_or_default(),
        })
        .collect();
    Ok(Update {
        reset,
        changes,
        previous: current,
        updated: new,
    })
}

/// Why an update was refused, in words for the model.
struct Refusal(String);

impl From<settings_file::SettingsFileError> for Refusal {
    fn from(e: settings_file::SettingsFileError) -> Refusal {
        Refusal(e.to_string())
    }
}

/// The input schema of `update_settings`, built from the settings table so it cannot drift
/// from the CLI: every model-settable field of this OS, each optional.
pub(crate) fn input_schema(os: Os) -> Arc<JsonObject> {
    let mut properties = serde_json::Map::new();
    properties.insert(
        RESET.into(),
        json!({"type": "boolean", "default": false,
               "description": "Reset every field a model may change to its default first (fields only the user may change keep their values); the other arguments then apply on top."}),
    );
    for spec in fields_for(os).filter(|s| !s.user_only()) {
        let description = format!(
            "{} Accepted: {}. Omit to keep the current value. CLI: --{}.",
            spec.help,
            spec.expected(),
            spec.flag
        );
        let mut schema = match spec.kind {
            FieldKind::Bool => json!({"type": "boolean"}),
            FieldKind::Choice(choices) => json!({"type": "string", "enum": choices}),
            FieldKind::Number {
                min,
                max,
                off: false,
                ..
            } => {
                json!({"type": "integer", "minimum": min, "maximum": max})
            }
            FieldKind::Number { .. } => json!({"type": ["integer", "string"]}),
            _ => json!({"type": "string"}),
        };
        schema["description"] = Value::String(description);
        properties.insert(spec.mcp_name(), schema);
    }
    let schema = json!({
        "type": "object",
        "properties": properties,
    });
    match schema {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("built as an object"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: Value) -> JsonObject {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn refused_fields_change_nothing_and_name_the_cli_command() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        let err = apply(
            &path,
            &object(
                json!({"suspendMode": "hibernate", "closedLidPermissionRequestDecision": "allow"}),
            ),
            Os::Linux,
        )
        .unwrap_err();
        assert!(
            err.contains("lidguard settings --closed-lid-permission-request-decision"),
            "{err}"
        );
        assert!(err.contains("Nothing was changed."));
        assert!(!path.exists());
    }

    #[test]
    fn several_fields_apply_together_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        let update = apply(
            &path,
            &object(json!({"suspendMode": "Hibernate", "sessionTimeoutMinutes": 30, "preventDisplaySleep": true})),
            Os::Linux,
        )
        .unwrap();
        let names: Vec<&str> = update.changes.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names.len(), 3, "{names:?}");
        let saved = settings_file::load(&path, Os::Linux).unwrap().unwrap();
        assert_eq!(saved, update.updated);

        let before = std::fs::read(&path).unwrap();
        let err = apply(
            &path,
            &object(json!({"suspendMode": "sleep", "sessionTimeoutMinutes": 0})),
            Os::Linux,
        )
        .unwrap_err();
        assert!(err.contains("sessionTimeoutMinutes"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), before);

        let err = apply(&path, &object(json!({"suspendMode": ["sleep"]})), Os::Linux).unwrap_err();
        assert!(err.contains("expects one of"), "{err}");
        let err = apply(&path, &object(json!({"bogus": 1})), Os::Linux).unwrap_err();
        assert!(err.contains("unknown setting `bogus`"), "{err}");
    }

    #[test]
    fn schema_covers_exactly_the_model_settable_fields() {
        let schema = input_schema(Os::Linux);
        let props = schema["properties"].as_object().unwrap();
        for spec in fields_for(Os::Linux) {
            assert_eq!(
                props.contains_key(&spec.mcp_name()),
                !spec.user_only(),
                "{}",
                spec.flag
            );
        }
        assert!(props.contains_key(RESET));
        assert!(!props.contains_key("preventAwayModeSleep"), "Windows only");
    }
}
