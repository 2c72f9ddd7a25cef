//! Keys written twice in one JSON object.
//!
//! JSON allows it; the agents do not agree on what it means. Claude Code, Copilot CLI and
//! OpenCode read their configs with JavaScript's `JSON.parse` (or a JSONC parser that builds
//! objects the same way), where the last occurrence wins (ECMA-262, `JSON.parse`: properties
//! are created in order, a later one replaces an earlier one). Codex deserializes `hooks.json`
//! into Rust structs with serde (`codex-rs/hooks/src/engine/discovery.rs`, `load_hooks_json`),
//! where a repeated field is an error and Codex skips the whole file with a warning.
//!
//! lidguard's edit engine finds properties by name, which means the first occurrence: an edit
//! there could land where the agent never looks. So install and remove refuse such files, and
//! status judges the copy the agent actually reads.

use jsonc_parser::ast::{Object, Value as Ast};
use jsonc_parser::cst::{CstNode, CstObject};
use jsonc_parser::{CollectOptions, CommentCollectionStrategy};

use super::InstallError;

/// How an agent's parser treats a key written twice in one object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DuplicateKeys {
    /// The last occurrence wins (JavaScript's `JSON.parse`).
    LastWins,
    /// The file is refused as a whole (serde structs).
    FileIgnored,
}

/// One key that appears more than once in the same object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Duplicate {
    /// Where: `hooks`, or a dotted path below it (`hooks.Stop[0].hooks`).
    pub key: String,
    /// The 1-based lines of its occurrences.
    pub lines: Vec<usize>,
}

impl std::fmt::Display for Duplicate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lines: Vec<String> = self.lines.iter().map(ToString::to_string).collect();
        write!(
            f,
            "`{}` appears {} times (lines {})",
            self.key,
            self.lines.len(),
            lines.join(", ")
        )
    }
}

impl DuplicateKeys {
    /// What the agent makes of such a file, in words.
    pub fn consequence(self) -> &'static str {
        match self {
            DuplicateKeys::LastWins => "the agent reads only the last one",
            DuplicateKeys::FileIgnored => {
                "the agent refuses a file with a key written twice and runs none of its hooks"
            }
        }
    }
}

/// The duplicates among the top-level keys named in `scope` and anywhere inside their values.
/// `body` must parse (the caller parsed it already).
pub(crate) fn find(body: &str, scope: &[&str]) -> Vec<Duplicate> {
    let options = CollectOptions {
        comments: CommentCollectionStrategy::Off,
        tokens: false,
    };
    let Ok(parsed) = jsonc_parser::parse_to_ast(body, &options, &super::jsonc::parse_options())
    else {
        return Vec::new();
    };
    let Some(Ast::Object(root)) = parsed.value else {
        return Vec::new();
    };
    let line = |offset: usize| body[..offset.min(body.len())].matches('\n').count() + 1;
    let mut found = Vec::new();
    for name in scope {
        let props: Vec<_> = root
            .properties
            .iter()
            .filter(|p| p.name.as_str() == *name)
            .collect();
        if props.len() > 1 {
            found.push(Duplicate {
                key: (*name).to_owned(),
                lines: props.iter().map(|p| line(p.range.start)).collect(),
            });
        }
        for prop in props {
            walk(&prop.value, name, &line, &mut found);
        }
    }
    found
}

fn walk(value: &Ast<'_>, path: &str, line: &dyn Fn(usize) -> usize, found: &mut Vec<Duplicate>) {
    match value {
        Ast::Object(object) => walk_object(object, path, line, found),
        Ast::Array(array) => {
            for (i, element) in array.elements.iter().enumerate() {
                walk(element, &format!("{path}[{i}]"), line, found);
            }
        }
        _ => {}
    }
}

fn walk_object(
    object: &Object<'_>,
    path: &str,
    line: &dyn Fn(usize) -> usize,
    found: &mut Vec<Duplicate>,
) {
    let mut seen: Vec<(&str, Vec<usize>)> = Vec::new();
    for prop in &object.properties {
        let name = prop.name.as_str();
        match seen.iter_mut().find(|(n, _)| *n == name) {
            Some((_, lines)) => lines.push(line(prop.range.start)),
            None => seen.push((name, vec![line(prop.range.start)])),
        }
        walk(&prop.value, &format!("{path}.{name}"), line, found);
    }
    found.extend(
        seen.into_iter()
            .filter(|(_, lines)| lines.len() > 1)
            .map(|(name, lines)| Duplicate {
                key: format!("{path}.{name}"),
                lines,
            }),
    );
}

/// The refusal of an edit: nothing was changed.
pub(crate) fn refusal(what: &str, agent: DuplicateKeys, duplicates: &[Duplicate]) -> InstallError {
    let list: Vec<String> = duplicates.iter().map(ToString::to_string).collect();
    InstallError::DuplicateKey {
        what: what.to_owned(),
        message: format!(
            "{}; {}, so an edit could land where it is never read. Merge the copies into one, \
             then try again",
            list.join("; "),
            agent.consequence()
        ),
    }
}

/// The status line about them.
pub(crate) fn warning(agent: DuplicateKeys, duplicates: &[Duplicate]) -> String {
    let list: Vec<String> = duplicates.iter().map(ToString::to_string).collect();
    format!(
        "{}; {}; install and remove refuse this file until the copies are merged into one",
        list.join("; "),
        agent.consequence()
    )
}

/// Removes every occurrence but the last of each repeated key, in the top-level keys named in
/// `scope` and inside their values: what a last-wins parser sees.
pub(crate) fn keep_last(root: &CstObject, scope: &[&str]) {
    dedupe(root, Some(scope));
}

fn dedupe(object: &CstObject, only: Option<&[&str]>) {
    let props = object.properties();
    let names: Vec<Option<String>> = props.iter().map(|p| p.decoded_name()).collect();
    for (i, prop) in props.into_iter().enumerate() {
        let Some(name) = &names[i] else { continue };
        if only.is_some_and(|scope| !scope.contains(&name.as_str())) {
            continue;
        }
        if names[i + 1..].iter().any(|n| n.as_ref() == Some(name)) {
            prop.remove();
            continue;
        }
        if let Some(value) = prop.value() {
            dedupe_node(&value);
        }
    }
}

fn dedupe_node(node: &CstNode) {
    if let Some(object) = node.as_object() {
        dedupe(&object, None);
    } else if let Some(array) = node.as_array() {
        for element in array.elements() {
            dedupe_node(&element);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_repeats_in_scope_with_their_lines() {
        let body = "{\n  \"hooks\": {},\n  \"model\": 1,\n  \"model\": 2,\n  \"hooks\": {\n    \"Stop\": [{\"hooks\": [], \"hooks\": []}]\n  }\n}\n";
        let found = find(body, &["hooks"]);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].key, "hooks");
        assert_eq!(found[0].lines, vec![2, 5]);
        assert_eq!(found[1].key, "hooks.Stop[0].hooks");
        assert!(
            found[0]
                .to_string()
                .contains("appears 2 times (lines 2, 5)")
        );
        assert!(find("{\"a\": 1, \"a\": 2}", &["hooks"]).is_empty());
    }

    #[test]
    fn keep_last_leaves_what_json_parse_sees() {
        let text = r#"{"hooks": {"A": []}, "x": 1, "x": 2, "hooks": {"B": [], "B": [1]}}"#;
        let root =
            jsonc_parser::cst::CstRootNode::parse(text, &super::super::jsonc::parse_options())
                .unwrap();
        let object = root.object_value().unwrap();
        keep_last(&object, &["hooks"]);
        // Only the view matters here (status reads it; nothing is written).
        assert_eq!(
            root.to_string().replace(' ', ""),
            r#"{"x":1,"x":2,"hooks":{"B":[1]}}"#
        );
    }
}
