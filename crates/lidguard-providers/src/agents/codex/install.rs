//! Codex CLI: `$CODEX_HOME/hooks.json` (else `~/.codex/hooks.json`).
//!
//! Same three levels as Claude, as Codex 0.171.0 accepted it in `tests/e2e/capture/codex/`:
//! `{"hooks": {"<Event>": [{"hooks": [{"type": "command", "command": "<cmd>", "timeout": N}]}]}}`.
//! Hooks are on by default since 0.124 (`[features] hooks = false` in `config.toml` turns them
//! off). The top level may hold only `description` and `hooks`: Codex refuses the whole file
//! otherwise, so install refuses such a file and status reports it. Codex also asks the user to
//! trust every new or changed hook in `/hooks` before it runs it.

use jsonc_parser::cst::CstInputValue;

use crate::install::duplicates::DuplicateKeys;
use crate::install::engine::{self, Handler, Layout, Spec};
use crate::install::{HookCommand, HookShell};

/// The subcommand that marks lidguard's entries.
pub const SUBCOMMAND: &str = "codex-hook";

/// Codex's `hooks.json` for the JSON engine.
pub(crate) static SPEC: Spec = Spec::named("Codex hooks.json", SUBCOMMAND, REQUIRED_EVENTS)
    .handlers(Layout::Nested, handler, conflicts)
    .root_keys(&["description", "hooks"])
    .duplicates(DuplicateKeys::FileIgnored);

/// The events lidguard needs.
pub const REQUIRED_EVENTS: &[&str] = &[
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PermissionRequest",
    "Stop",
    "SessionEnd",
    "Interrupt",
    "SubagentStart",
    "SubagentStop",
];

/// The longest timeout Codex accepts for `SessionEnd` and `Interrupt` hooks: it clamps larger
/// ones to this and warns on every start (seen with codex-cli 0.171.0; the docs give "default 1,
/// clamped to ≤ 3").
pub const END_EVENT_TIMEOUT_LIMIT: u32 = 3;

/// Codex runs a hook's command with `sh -c`, or on Windows with `%COMSPEC% /C` (codex-rs
/// `hooks/src/engine/command_runner.rs`), so a PowerShell-quoted program is quoted for cmd.
fn handler(cmd: &HookCommand, event: &str, timeout: u32) -> Handler {
    let cmd = &HookCommand {
        shell: match cmd.shell {
            HookShell::PowerShell | HookShell::Cmd => HookShell::Cmd,
            HookShell::Posix => HookShell::Posix,
        },
        ..cmd.clone()
    };
    let timeout = if matches!(event, "SessionEnd" | "Interrupt") {
        timeout.min(END_EVENT_TIMEOUT_LIMIT)
    } else {
        timeout
    };
    vec![
        ("type".to_owned(), "command".into()),
        ("command".to_owned(), cmd.render(SUBCOMMAND).into()),
        ("timeout".to_owned(), CstInputValue::from(timeout)),
    ]
}

/// Stop hooks can keep Codex going; permission hooks answer what lidguard answers. (Codex
/// skips prompt and agent handlers, so PreToolUse ones cannot conflict.)
fn conflicts(event: &str, _handler_type: &str) -> bool {
    matches!(event, "Stop" | "SubagentStop" | "PermissionRequest")
}

/// The same hooks in Codex's inline `config.toml` form (`[[hooks.<Event>]]` groups holding
/// `[[hooks.<Event>.hooks]]` handlers, accepted since 0.124 next to `hooks.json`), for users
/// who keep everything in `config.toml`. Codex runs hooks from both places, so this is an
/// alternative to `hook-install`'s `hooks.json`, never an addition.
pub fn config_toml_snippet(cmd: &HookCommand, timeout: u32) -> String {
    use toml_edit::{ArrayOfTables, DocumentMut, Item, Table, value};

    let json: serde_json::Value = serde_json::from_str(&engine::fresh_text(&SPEC, cmd, timeout))
        .unwrap_or_else(|e| unreachable!("our own hooks.json parses: {e}"));
    let mut hooks = Table::new();
    hooks.set_implicit(true);
    for event in REQUIRED_EVENTS {
        let mut groups = ArrayOfTables::new();
        for group in json["hooks"][event].as_array().into_iter().flatten() {
            let mut handlers = ArrayOfTables::new();
            for handler in group["hooks"].as_array().into_iter().flatten() {
                let mut t = Table::new();
                // In the order hooks.json has them (serde_json's map would sort them).
                for key in ["type", "command", "timeout"] {
                    let Some(v) = handler.get(key) else { continue };
                    match v {
                        serde_json::Value::String(s) => t.insert(key, value(s.as_str())),
                        serde_json::Value::Number(n) => {
                            t.insert(key, value(n.as_i64().unwrap_or_default()))
                        }
                        other => unreachable!("handlers hold strings and numbers, not {other}"),
                    };
                }
                handlers.push(t);
            }
            let mut g = Table::new();
            g.insert("hooks", Item::ArrayOfTables(handlers));
            groups.push(g);
        }
        hooks.insert(event, Item::ArrayOfTables(groups));
    }
    let mut doc = DocumentMut::new();
    doc.insert("hooks", Item::Table(hooks));
    format!(
        "# lidguard's Codex hooks in config.toml form: use this OR `lidguard hook-install --provider codex`\n\
         # (hooks.json), not both; Codex runs hooks from both places.\n{doc}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_toml_snippet_holds_the_same_hooks_as_hooks_json() {
        let cmd = HookCommand::new("/opt/lidguard");
        let toml_text = config_toml_snippet(&cmd, 30);
        let parsed: toml_edit::DocumentMut = toml_text.parse().unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&engine::fresh_text(&SPEC, &cmd, 30)).unwrap();
        for event in REQUIRED_EVENTS {
            let groups = parsed["hooks"][event].as_array_of_tables().unwrap();
            assert_eq!(groups.len(), 1, "{event}");
            let handler = groups.get(0).unwrap()["hooks"]
                .as_array_of_tables()
                .unwrap()
                .get(0)
                .unwrap();
            let want = &json["hooks"][event][0]["hooks"][0];
            assert_eq!(handler["command"].as_str(), want["command"].as_str());
            assert_eq!(handler["timeout"].as_integer(), want["timeout"].as_i64());
            assert_eq!(handler["type"].as_str(), Some("command"));
        }
        assert!(
            toml_text.contains("[[hooks.Stop]]\n\n[[hooks.Stop.hooks]]\ntype = \"command\""),
            "{toml_text}"
        );
        assert!(!toml_text.contains("\n[hooks]\n"), "no empty parent table");
    }
}
