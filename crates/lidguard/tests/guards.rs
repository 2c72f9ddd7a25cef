//! House rules a test checks: nothing under `tests/` is left out of the test binary, the
//! published event schema names exactly the providers lidguard knows, every provider with
//! hooks has an agent entry, and no two source files of a crate need each other.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

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

/// Every provider whose sessions come from an agent's hooks has its entry in the agent table;
/// only `custom` (by hand, scripts, `run`) and `mcp` (the provider MCP server) come from
/// elsewhere.
#[test]
fn every_provider_with_hooks_has_an_agent_entry() {
    let without_hooks = [Provider::Custom, Provider::Mcp];
    for &provider in Provider::ALL {
        let entry = lidguard_providers::agent(provider);
        assert_eq!(
            entry.is_some(),
            !without_hooks.contains(&provider),
            "{provider}: an agent entry exactly when it has hooks"
        );
        if let Some(entry) = entry {
            assert_eq!(entry.provider, provider);
        }
    }
}

/// Each part of the daemon and the core stays small enough to read whole: no daemon file over
/// 600 lines, no core file over 800 (the settings field table and test files aside).
#[test]
fn daemon_and_core_files_stay_readable() {
    let crates = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut long = Vec::new();
    for (krate, limit) in [("lidguard-daemon", 600), ("lidguard-core", 800)] {
        for (module, path) in modules(&crates.join(krate).join("src")) {
            let aside =
                module.last().is_some_and(|m| m == "tests") || module == ["settings", "table"];
            let lines = std::fs::read_to_string(&path).unwrap().lines().count();
            if !aside && lines > limit {
                long.push(format!(
                    "{krate}/{}: {lines} lines (at most {limit})",
                    module.join("/")
                ));
            }
        }
    }
    assert!(long.is_empty(), "{long:#?}");
}

/// The e2e harness is shaped like the agent folders: each driver (a file that runs
/// `cli.main`) is named after one agent lidguard knows, and no file of it, the shared
/// `harness/` package included, is over 600 lines.
#[test]
fn the_e2e_harness_has_one_driver_per_agent() {
    let verify = tests_dir().join("../../../tests/e2e/verify");
    let agents: BTreeSet<&str> = Provider::ALL.iter().map(|p| p.as_str()).collect();
    let mut wrong = Vec::new();
    let mut drivers = BTreeSet::new();
    for dir in [verify.clone(), verify.join("harness")] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "py") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let lines = text.lines().count();
            if lines > 600 {
                wrong.push(format!("{}: {lines} lines (at most 600)", path.display()));
            }
            if dir == verify && text.contains("cli.main(") {
                if !agents.contains(name.as_str()) {
                    wrong.push(format!(
                        "{name}.py drives agents but is not named after one agent"
                    ));
                }
                drivers.insert(name);
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert!(drivers.len() >= 9, "drivers found: {drivers:?}");
}

/// lidguard's own code never depends on the CPU (`target_arch`): CI type-checks macOS for one
/// CPU (aarch64) and that stands for the other.
#[test]
fn no_code_of_ours_depends_on_the_cpu() {
    let mut found = Vec::new();
    for src in crate_sources() {
        for path in modules(&src).into_values() {
            let text = std::fs::read_to_string(&path).unwrap();
            if text.contains(concat!("target", "_arch")) {
                found.push(path.display().to_string());
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}

/// One place decides that a session now waits for the user (`lidguard_core::notice`): a
/// notice channel — a file that says "needs you" or "works again", or shows a notice on the
/// desktop or the phone — only tells the moments it is handed. One that looked at soft-locks
/// or saved sessions itself would tell the user something the others do not.
#[test]
fn only_the_core_decides_that_a_session_waits_for_you() {
    let decider = Path::new("lidguard-core/src/notice.rs");
    let channel_marks = [
        "needs_you_notice(",
        "resumed_notice(",
        "Notifier::new(",
        "Ntfy::from_settings(",
    ];
    let detection_marks = ["soft_lock", "waits_for_user(", "SaveSession"];
    let mut found = Vec::new();
    for src in crate_sources() {
        for path in modules(&src).into_values() {
            let text = std::fs::read_to_string(&path).unwrap();
            let shown = path.components().rev().take(3).collect::<Vec<_>>();
            let shown: PathBuf = shown.into_iter().rev().collect();
            if shown == decider {
                continue;
            }
            // A use, not the definition.
            let uses = |mark: &str| {
                text.matches(mark).count() > text.matches(&format!("fn {mark}")).count()
            };
            if uses("waits_for_user(") {
                found.push(format!("{}: asks waits_for_user itself", shown.display()));
            }
            if channel_marks.iter().any(|m| uses(m)) {
                for mark in detection_marks.iter().filter(|m| uses(m)) {
                    found.push(format!(
                        "{}: a notice channel that reads `{mark}`",
                        shown.display()
                    ));
                }
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}

/// The `src/` folder of every crate in the workspace.
fn crate_sources() -> Vec<PathBuf> {
    let crates = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_dir(&crates)
        .unwrap()
        .flatten()
        .map(|krate| krate.path().join("src"))
        .filter(|src| src.is_dir())
        .collect()
}

/// The files of one crate's `src/` by module path (`lib.rs`, `main.rs` and `mod.rs` name their
/// folder; the binaries under `src/bin/` are crates of their own and left out).
fn modules(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut found = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                if path != src.join("bin") {
                    dirs.push(path);
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = relative
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            if parts.len() == 1 && ["lib", "main"].contains(&parts[0].as_str())
                || parts.last().is_some_and(|p| p == "mod")
            {
                parts.pop();
            }
            found.insert(parts, path);
        }
    }
    found
}

/// The paths `text` names through `crate::`, `super::` and `self::` (grouped `use` lists
/// spelled out), made absolute for a file at module `at`. Comments and a trailing
/// `#[cfg(test)] mod tests` are left out: a file's tests may use what they like.
fn paths_named(text: &str, at: &[String]) -> Vec<Vec<String>> {
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let bytes = code.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut named = Vec::new();
    for head in ["crate::", "super::", "self::"] {
        for (start, _) in code.match_indices(head) {
            if start > 0 && (ident(bytes[start - 1]) || bytes[start - 1] == b':') {
                continue;
            }
            let mut base: Vec<String> = match head {
                "crate::" => Vec::new(),
                "super::" => at[..at.len().saturating_sub(1)].to_vec(),
                _ => at.to_vec(),
            };
            let rest = &code[start + head.len()..];
            let mut rest = rest;
            while let Some(after) = rest.strip_prefix("super::") {
                base.pop();
                rest = after;
            }
            spell_out(rest, base, &mut named);
        }
    }
    // Plain paths (`claude::AGENT`, `use menu::Entry`) name a child module of this one when
    // there is such a file; anything else they name (a crate, `std`) resolves to this module
    // itself and is no edge.
    for (start, _) in code.match_indices("::") {
        let head = code[..start]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(0, |i| i + 1);
        let before = code[..head].chars().next_back();
        if head == start || before.is_some_and(|c| c == ':' || c.is_ascii_alphanumeric()) {
            continue;
        }
        if ["crate", "super", "self", "Self"].contains(&&code[head..start]) {
            continue;
        }
        spell_out(&code[head..], at.to_vec(), &mut named);
    }
    named
}

/// The path at the start of `rest` after `prefix`: one path, or each of a `{…}` group.
fn spell_out(rest: &str, mut prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut rest = rest;
    loop {
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        prefix.push(rest[..end].to_owned());
        match rest[end..].strip_prefix("::") {
            Some(after) => rest = after,
            None => {
                rest = "";
                break;
            }
        }
    }
    if let Some(group) = rest.strip_prefix('{') {
        let mut depth = 0;
        let mut item = String::new();
        for c in group.chars() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    spell_out(item.trim(), prefix.clone(), out);
                    item.clear();
                    continue;
                }
                _ => {}
            }
            item.push(c);
        }
        spell_out(item.trim(), prefix, out);
        return;
    }
    out.push(prefix);
}

/// No two files of a crate need each other, directly or around a circle: each module's
/// dependencies point one way, so a part can be read (and moved) without the rest.
#[test]
fn no_import_circles_between_files() {
    let mut circles = Vec::new();
    for src in crate_sources() {
        let files = modules(&src);
        let mut edges: BTreeMap<&Vec<String>, BTreeSet<&Vec<String>>> = BTreeMap::new();
        for (module, path) in &files {
            let text = std::fs::read_to_string(path).unwrap();
            let targets = edges.entry(module).or_default();
            for named in paths_named(&text, module) {
                // The longest prefix of the path that is a file of this crate.
                let target = (0..=named.len())
                    .rev()
                    .find_map(|n| files.get_key_value(&named[..n]).map(|(k, _)| k));
                // A module's own folder (a parent, `lib.rs`) holds it: using what the folder
                // declares is no circle; a parent using its child is an edge like any other.
                let holds_it = |t: &Vec<String>| module.starts_with(t);
                if let Some(target) = target.filter(|t| !holds_it(t)) {
                    targets.insert(target);
                }
            }
        }
        // Two modules in one circle reach each other.
        let reach = |from: &Vec<String>| {
            let mut seen = BTreeSet::new();
            let mut todo = vec![from];
            while let Some(m) = todo.pop() {
                for next in edges.get(m).into_iter().flatten() {
                    if seen.insert(*next) {
                        todo.push(next);
                    }
                }
            }
            seen
        };
        for (module, targets) in &edges {
            for target in targets {
                if module < target && reach(target).contains(module) {
                    circles.push(format!(
                        "{}: {} <-> {}",
                        src.parent().unwrap().file_name().unwrap().to_string_lossy(),
                        module.join("/"),
                        target.join("/")
                    ));
                }
            }
        }
    }
    assert!(circles.is_empty(), "import circles: {circles:#?}");
}

/// The README stays a front door (at most 300 lines), and every relative link in it, in
/// `docs/` (its folders too) and in the changelog points at a file that exists.
#[test]
fn the_readme_is_short_and_the_docs_links_resolve() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(repo.join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 300, "README.md has {lines} lines (at most 300)");
    let mut pages = vec![repo.join("README.md"), repo.join("CHANGELOG.md")];
    let mut folders = vec![repo.join("docs")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    let mut broken = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for (at, _) in text.match_indices("](") {
            let rest = &text[at + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = &rest[..end];
            if target.starts_with("http") || target.starts_with('#') || target.is_empty() {
                continue;
            }
            let file = target.split('#').next().unwrap_or(target);
            if !page.parent().unwrap().join(file).exists() {
                broken.push(format!("{}: {target}", page.display()));
            }
        }
    }
    assert!(broken.is_empty(), "links to nothing: {broken:#?}");
}
