//! `update_settings`: several fields in one call, validated like the CLI, saved together,
//! handed to a running daemon. Fields only the user may change are refused with the CLI
//! command that changes them, and nothing is saved.

use std::sync::Arc;

use lidguard_config::NoHookProgram;
use lidguard_config::settings::{self, Changes, HookTimeouts, Pushed, Rejected};
use lidguard_core::settings::{FieldKind, FieldSpec, Os, Settings, fields_for};
use lidguard_ipc::Places;
use lidguard_providers::install::HookCommand;
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
    /// What the running daemon did with them.
    pub(crate) pushed: Pushed,
    /// The installed hooks' timeouts.
    pub(crate) hooks: HookTimeouts,
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

/// Applies `args` through the one settings path (`lidguard_config::settings`, as `lidguard
/// settings` does): the settings file is untouched on any error; the hooks' timeouts are
/// refreshed with `hook_command` when the managed timeout moved.
pub(crate) fn apply(
    places: &Places,
    args: &JsonObject,
    os: Os,
    hook_command: Result<HookCommand, NoHookProgram>,
) -> Result<Update, String> {
    let reset = match args.get(RESET) {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => return Err(format!("{RESET} must be true or false, not {other}")),
    };
    // Refusals and malformed values first, so such a call never changes anything.
    let mut refused = Vec::new();
    let mut fields = Vec::new();
    for (name, value) in args.iter().filter(|(k, _)| *k != RESET) {
        let Some(spec) = field_for(name, os) else {
            return Err(format!(
                "unknown setting `{name}`; the settable names are the properties of this tool's input schema. Nothing was changed."
            ));
        };
        if spec.user_only() {
            refused.push(refusal(spec));
            continue;
        }
        let raw = match value {
            Value::Null => continue,
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => n.to_string(),
            Value::String(s) => s.clone(),
            other => {
                return Err(format!(
                    "`{name}` expects {}, not {other}. Nothing was changed.",
                    spec.expected()
                ));
            }
        };
        fields.push((spec.flag, raw));
    }
    if !refused.is_empty() {
        refused.push("Nothing was changed.".into());
        return Err(refused.join("\n"));
    }
    let changes = Changes { reset, fields };
    let var = lidguard_files::environment::var;
    let applied =
        settings::apply(places, os, &changes, || hook_command, &var).map_err(|e| match e {
            Rejected::Field { flag, message } => {
                let name = field_for(flag, os).map_or_else(|| flag.to_owned(), FieldSpec::mcp_name);
                format!("`{name}`: {message}. Nothing was changed.")
            }
            Rejected::Invalid(reasons) => format!("{}\nNothing was changed.", reasons.join("\n")),
            Rejected::File(e) => e.to_string(),
        })?;
    let changes = applied
        .changed
        .iter()
        .map(|spec| AppliedChange {
            name: spec.mcp_name(),
            flag: spec.flag,
            previous: applied.old.shown_value(spec),
            current: applied.new.shown_value(spec),
        })
        .collect();
    Ok(Update {
        reset,
        changes,
        previous: applied.old,
        updated: applied.new,
        pushed: applied.pushed,
        hooks: applied.hooks,
    })
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

    fn no_hooks() -> Result<HookCommand, NoHookProgram> {
        Err(NoHookProgram("no hook program in unit tests".into()))
    }

    /// Applies the fields of `value` on Linux, where the hook program is never found.
    fn on_linux(places: &Places, value: Value) -> Result<Update, String> {
        apply(places, &object(value), Os::Linux, no_hooks())
    }

    fn object(value: Value) -> JsonObject {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn refused_fields_change_nothing_and_name_the_cli_command() {
        let dir = tempfile::tempdir().unwrap();
        let places = Places::under(dir.path());
        let path = places.settings_file();
        let err = on_linux(
            &places,
            json!({"suspendMode": "hibernate", "closedLidPermissionRequestDecision": "allow"}),
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
        let places = Places::under(dir.path());
        let path = places.settings_file();
        let update = on_linux(&places, json!({"suspendMode": "Hibernate", "sessionTimeoutMinutes": 30, "preventDisplaySleep": true}))
        .unwrap();
        let names: Vec<&str> = update.changes.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names.len(), 3, "{names:?}");
        let saved = lidguard_ipc::settings_file::load(&path, Os::Linux)
            .unwrap()
            .unwrap();
        assert_eq!(saved, update.updated);

        let before = std::fs::read(&path).unwrap();
        let err = on_linux(
            &places,
            json!({"suspendMode": "sleep", "sessionTimeoutMinutes": 0}),
        )
        .unwrap_err();
        assert!(err.contains("sessionTimeoutMinutes"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), before);

        let err = on_linux(&places, json!({"suspendMode": ["sleep"]})).unwrap_err();
        assert!(err.contains("expects one of"), "{err}");
        let err = on_linux(&places, json!({"bogus": 1})).unwrap_err();
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
