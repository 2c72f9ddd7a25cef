//! What the agents' own rules are built from, apart from the lookups that find an agent's rule
//! (`owner`, `transcript`): a process's name and command line as the rules compare them, and
//! the transcript files a rule found.

use std::path::{Path, PathBuf};

use crate::agent::Discovery;

/// Script runners an agent may be wrapped in (`npx @openai/codex`, a Bun-built binary, ...).
const WRAPPERS: [&str; 4] = ["node", "npm", "npx", "bun"];

/// What the agents' rules look at: the process name normalized, the command line in lowercase,
/// and whether the process is a script runner an agent may be wrapped in.
pub(crate) fn parts(name: &str, cmdline: &str) -> (String, String, bool) {
    let name = normalize_name(name);
    let wrapper = WRAPPERS.contains(&name.as_str());
    (name, cmdline.to_ascii_lowercase(), wrapper)
}

/// The file name without extension, lowercase, without the `-` of a login shell.
fn normalize_name(name: &str) -> String {
    let name = name.trim().trim_start_matches('-');
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let stem = base.strip_suffix(".exe").unwrap_or(base);
    stem.to_ascii_lowercase()
}

/// The one file of `files`, or why there is none.
pub(crate) fn one_of(mut files: Vec<PathBuf>) -> Discovery {
    files.sort();
    files.dedup();
    match files.len() {
        0 => Discovery::NotFound,
        1 => Discovery::Found(files.remove(0)),
        n => Discovery::Ambiguous(n),
    }
}

/// Calls `visit` for every file below `dir`, at most `depth` levels down.
pub(crate) fn walk(dir: &Path, depth: usize, visit: &mut dyn FnMut(&Path)) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() && depth > 0 => walk(&path, depth - 1, visit),
            Ok(t) if t.is_file() => visit(&path),
            _ => {}
        }
    }
}
