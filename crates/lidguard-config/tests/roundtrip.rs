//! Install then remove through the real file layer, over generated agent configs: every agent
//! config lidguard edits, in every shape a user's file takes (indentation, one-line
//! containers, comments, CRLF, a BOM, empty containers, a key written twice, lidguard's own
//! entries from an older install, an entry of lidguard's name that is the user's), with every
//! file mode and behind symlinks (one hop, two hops, relative, dangling).
//!
//! Checked for each case:
//! - a refusal (a key twice, a read-only file without `--force`, a foreign `lidguard` entry, an
//!   agent's own file at lidguard's path, Codex's extra top-level key) leaves the file, its mode
//!   and its link exactly as they were;
//! - otherwise install keeps the mode (a new file is 0600), the link (the target is edited),
//!   saves a backup with the file's own mode in a 0700 folder, and status says `installed`;
//! - remove then gives back the original bytes (or no file, when there was none), the mode and
//!   the link; with lidguard entries from before, it gives what removing them alone gives.
//!
//! The number of cases per agent config is `LIDGUARD_PROPTEST_CASES` (CI: 10,000; default
//! 1,000 for a quick local run).
#![allow(
    clippy::disallowed_methods,
    reason = "tests write fixtures and read the environment"
)]

use std::ffi::OsString;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use lidguard_config::hooks::{self, Setup};
use lidguard_config::mcp::{self as config_mcp, ProviderEntry, Removed};
use lidguard_config::{ConfigError, Location, Options, agents};
use lidguard_core::provider::Provider;
use lidguard_ipc::Places;
use lidguard_providers::install::{HookCommand, InstallError};
use proptest::prelude::*;
use serde_json::Value;

/// The program lidguard's entries run: a file that exists (an entry whose program is gone is
/// `broken`, which these cases are not about), named `lidguard` as an install names it.
fn exe() -> &'static str {
    static EXE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    EXE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("lidguard-roundtrip-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        let exe = dir.join("bin").join("lidguard");
        std::fs::write(&exe, b"").unwrap();
        exe.display().to_string()
    })
}

fn cases() -> u32 {
    std::env::var("LIDGUARD_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}

// ----- JSON models and how they are written -----

/// An ordered JSON value.
#[derive(Clone, Debug)]
enum J {
    S(String),
    N(u32),
    A(Vec<J>),
    O(Vec<(String, J)>),
}

fn s(text: &str) -> J {
    J::S(text.to_owned())
}

fn o(props: Vec<(&str, J)>) -> J {
    J::O(props.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

/// How a file is laid out.
#[derive(Clone, Copy, Debug)]
struct Style {
    indent: &'static str,
    /// Containers at this depth or deeper are written on one line (0: the whole file).
    inline_from: usize,
    comments: bool,
    crlf: bool,
    bom: bool,
    final_newline: bool,
}

fn style(comments_allowed: bool) -> impl Strategy<Value = Style> {
    (
        prop::sample::select(vec!["  ", "    ", "\t"]),
        prop::sample::select(vec![0usize, 1, 2, 3, 99, 99, 99]),
        any::<bool>(),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.1),
        prop::bool::weighted(0.9),
    )
        .prop_map(
            move |(indent, inline_from, comments, crlf, bom, final_newline)| Style {
                indent,
                inline_from,
                comments: comments && comments_allowed,
                crlf,
                bom,
                final_newline,
            },
        )
}

fn render(j: &J, st: Style) -> String {
    fn go(j: &J, st: Style, depth: usize, out: &mut String) {
        let pad = |d: usize| st.indent.repeat(d);
        let inline = depth >= st.inline_from;
        match j {
            J::S(s) => out.push_str(&serde_json::to_string(s).unwrap()),
            J::N(n) => out.push_str(&n.to_string()),
            J::A(items) if items.is_empty() => out.push_str("[]"),
            J::O(props) if props.is_empty() => out.push_str("{}"),
            J::A(items) if inline => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    go(item, st, depth + 1, out);
                }
                out.push(']');
            }
            J::O(props) if inline => {
                out.push('{');
                for (i, (k, v)) in props.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&serde_json::to_string(k).unwrap());
                    out.push_str(": ");
                    go(v, st, depth + 1, out);
                }
                out.push('}');
            }
            J::A(items) => {
                out.push_str("[\n");
                for (i, item) in items.iter().enumerate() {
                    out.push_str(&pad(depth + 1));
                    go(item, st, depth + 1, out);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                out.push_str(&pad(depth));
                out.push(']');
            }
            J::O(props) => {
                out.push_str("{\n");
                for (i, (k, v)) in props.iter().enumerate() {
                    if st.comments && i % 2 == 1 {
                        out.push_str(&format!("{}// about {k}\n", pad(depth + 1)));
                    }
                    out.push_str(&pad(depth + 1));
                    out.push_str(&serde_json::to_string(k).unwrap());
                    out.push_str(": ");
                    go(v, st, depth + 1, out);
                    out.push_str(if i + 1 < props.len() { ",\n" } else { "\n" });
                }
                out.push_str(&pad(depth));
                out.push('}');
            }
        }
    }
    let mut out = String::new();
    if st.comments {
        out.push_str("// my settings\n");
    }
    go(j, st, 0, &mut out);
    if st.final_newline {
        out.push('\n');
    }
    if st.crlf {
        out = out.replace('\n', "\r\n");
    }
    if st.bom {
        out.insert(0, '\u{feff}');
    }
    out
}

// ----- the agents' configs -----

/// One config file lidguard edits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    ClaudeHooks,
    CodexHooks,
    CopilotHooks,
    OpenCodePlugin,
    ClaudeMcp,
    CodexMcp,
    CopilotMcp,
    OpenCodeMcp,
    ProviderMcp,
}

impl Kind {
    fn provider(self) -> Provider {
        match self {
            Kind::ClaudeHooks | Kind::ClaudeMcp | Kind::ProviderMcp => Provider::Claude,
            Kind::CodexHooks | Kind::CodexMcp => Provider::Codex,
            Kind::CopilotHooks | Kind::CopilotMcp => Provider::Copilot,
            Kind::OpenCodePlugin | Kind::OpenCodeMcp => Provider::OpenCode,
        }
    }

    fn is_hooks(self) -> bool {
        matches!(
            self,
            Kind::ClaudeHooks | Kind::CodexHooks | Kind::CopilotHooks | Kind::OpenCodePlugin
        )
    }
}

/// A generated file and what it holds.
#[derive(Clone, Debug)]
struct Content {
    /// `None`: no file.
    text: Option<String>,
    /// It must be refused without `--force` (read-only aside).
    refused: bool,
    /// It must be refused even with `--force`.
    refused_always: bool,
    /// It already holds lidguard's entries.
    had_ours: bool,
}

fn handler(kind: Kind, ours: bool, stale: bool) -> BoxedStrategy<J> {
    let command = |sub: &str| {
        if stale {
            format!("/old/place/lidguard {sub}")
        } else {
            format!("{} {sub}", exe())
        }
    };
    match kind {
        Kind::CopilotHooks if ours => Just(o(vec![
            ("type", s("command")),
            (
                "bash",
                J::S(format!("{} --event agentStop", command("copilot-hook"))),
            ),
            ("timeoutSec", J::N(10)),
        ]))
        .boxed(),
        Kind::CopilotHooks => prop::sample::select(vec!["./notify.sh", "echo done", "say hi"])
            .prop_map(|c| o(vec![("type", s("command")), ("bash", s(c))]))
            .boxed(),
        _ if ours => {
            let sub = if kind == Kind::CodexHooks {
                "codex-hook"
            } else {
                "claude-hook"
            };
            Just(o(vec![
                ("type", s("command")),
                ("command", J::S(command(sub))),
                ("timeout", J::N(10)),
            ]))
            .boxed()
        }
        _ => prop::sample::select(vec!["notify-send done", "./lint.sh", "true"])
            .prop_map(|c| o(vec![("type", s("command")), ("command", s(c))]))
            .boxed(),
    }
}

fn event_value(kind: Kind, ours: bool) -> BoxedStrategy<J> {
    let nested = kind != Kind::CopilotHooks;
    (
        prop::collection::vec(handler(kind, false, false), 0..3),
        any::<bool>(),
        prop::option::of(prop::sample::select(vec!["Bash", "*", ""])),
    )
        .prop_flat_map(move |(theirs, stale, matcher)| {
            handler(kind, true, stale).prop_map(move |mine| {
                let mut theirs = theirs.clone();
                if ours {
                    theirs.push(mine);
                }
                if !nested {
                    return J::A(theirs.clone());
                }
                if theirs.is_empty() {
                    return J::A(Vec::new());
                }
                let mut group = Vec::new();
                if let Some(m) = matcher.filter(|_| !ours) {
                    group.push(("matcher".to_owned(), s(m)));
                }
                group.push(("hooks".to_owned(), J::A(theirs.clone())));
                J::A(vec![J::O(group)])
            })
        })
        .boxed()
}

/// A hook config: `hooks` absent, empty or with events; other keys around it.
fn hooks_content(kind: Kind) -> impl Strategy<Value = (J, bool, bool)> {
    let events: Vec<&'static str> = match kind {
        Kind::CopilotHooks => vec!["agentStop", "preToolUse", "sessionEnd", "errorOccurred"],
        _ => vec!["Stop", "PreToolUse", "Notification", "SessionStart"],
    };
    (
        prop::sample::subsequence(events, 0..=3),
        prop::bool::weighted(0.15),
        prop::sample::select(vec![0u8, 1, 2, 2, 2]),
        prop::bool::weighted(0.08),
        prop::bool::weighted(0.05),
    )
        .prop_flat_map(move |(names, ours, hooks_shape, duplicate, extra_root)| {
            let values: Vec<BoxedStrategy<J>> = names
                .iter()
                .enumerate()
                .map(|(i, _)| event_value(kind, ours && i == 0))
                .collect();
            (
                Just(names),
                values,
                Just((ours, hooks_shape, duplicate, extra_root)),
            )
        })
        .prop_map(
            move |(names, values, (ours, hooks_shape, duplicate, extra_root))| {
                let ours = ours && !names.is_empty() && hooks_shape == 2;
                let mut root: Vec<(String, J)> = Vec::new();
                if kind == Kind::CopilotHooks {
                    root.push(("version".into(), J::N(1)));
                } else if kind == Kind::CodexHooks {
                    root.push(("description".into(), s("my hooks")));
                } else {
                    root.push(("model".into(), s("opus")));
                    root.push(("env".into(), o(vec![("API_KEY", s("secret"))])));
                }
                match hooks_shape {
                    0 => {}
                    1 => root.push(("hooks".into(), J::O(Vec::new()))),
                    _ => root.push((
                        "hooks".into(),
                        J::O(names.iter().map(|n| (*n).to_owned()).zip(values).collect()),
                    )),
                }
                let duplicate = duplicate && hooks_shape != 0;
                if duplicate {
                    root.insert(0, ("hooks".into(), J::O(Vec::new())));
                }
                let extra = extra_root && kind == Kind::CodexHooks;
                if extra {
                    root.push(("$schema".into(), s("x")));
                }
                (J::O(root), ours, duplicate || extra)
            },
        )
}

/// An MCP config: the container absent, empty or with servers; maybe an entry named lidguard,
/// the user's or lidguard's.
fn mcp_content(kind: Kind) -> impl Strategy<Value = (J, bool, bool, bool)> {
    let container = if kind == Kind::OpenCodeMcp {
        "mcp"
    } else {
        "mcpServers"
    };
    let name = if kind == Kind::ProviderMcp {
        "lidguard-provider"
    } else {
        "lidguard"
    };
    (
        prop::collection::vec(prop::sample::select(vec!["github", "fs", "db"]), 0..3),
        prop::sample::select(vec![0u8, 1, 2, 2]),
        prop::sample::select(vec![0u8, 0, 0, 1, 2]),
        prop::bool::weighted(0.08),
    )
        .prop_map(move |(servers, shape, named, duplicate)| {
            let mut root: Vec<(String, J)> = vec![("numStartups".into(), J::N(3))];
            let server = |command: &str, args: Vec<&str>| {
                if kind == Kind::OpenCodeMcp {
                    let mut all = vec![s(command)];
                    all.extend(args.into_iter().map(s));
                    o(vec![("type", s("local")), ("command", J::A(all))])
                } else {
                    o(vec![
                        ("command", s(command)),
                        ("args", J::A(args.into_iter().map(s).collect())),
                        ("env", o(vec![("TOKEN", s("secret"))])),
                    ])
                }
            };
            let mut entries: Vec<(String, J)> = Vec::new();
            let mut seen = Vec::new();
            for srv in servers {
                if !seen.contains(&srv) {
                    seen.push(srv);
                    entries.push((srv.to_owned(), server("npx", vec![srv])));
                }
            }
            let (mut foreign, mut ours) = (false, false);
            if shape == 2 {
                match named {
                    1 => {
                        foreign = true;
                        entries.push((name.to_owned(), server("node", vec!["my-lidguard.js"])));
                    }
                    2 => {
                        ours = true;
                        let sub = if kind == Kind::ProviderMcp {
                            vec!["provider-mcp-server", "--provider-name", "gemini"]
                        } else {
                            vec!["mcp-server"]
                        };
                        entries.push((name.to_owned(), server("/old/place/lidguard", sub)));
                    }
                    _ => {}
                }
            }
            match shape {
                0 => {}
                1 => root.push((container.into(), J::O(Vec::new()))),
                _ => root.push((container.into(), J::O(entries))),
            }
            let duplicate = duplicate && shape != 0;
            if duplicate {
                root.push((container.into(), J::O(Vec::new())));
            }
            (J::O(root), ours, foreign, duplicate)
        })
}

/// Codex's `config.toml`, written as text.
fn codex_toml() -> impl Strategy<Value = (String, bool, bool)> {
    (
        any::<bool>(),
        prop::collection::vec(prop::sample::select(vec!["github", "fs"]), 0..3),
        prop::sample::select(vec![0u8, 0, 1, 2]),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(model, servers, named, empty_header, comments)| {
            let mut t = String::new();
            if comments {
                t.push_str("# my config\n");
            }
            if model {
                t.push_str("model = \"o3\"\n");
            }
            if empty_header {
                t.push_str("\n[mcp_servers]\n");
            }
            let mut seen = Vec::new();
            for srv in servers {
                if seen.contains(&srv) {
                    continue;
                }
                seen.push(srv);
                t.push_str(&format!(
                    "\n[mcp_servers.{srv}]\ncommand = \"npx\"\nargs = [\"{srv}\"]{}\nenv = {{ TOKEN = \"secret\" }}\n",
                    if comments { " # mine" } else { "" }
                ));
            }
            let (ours, foreign) = (named == 2, named == 1);
            if foreign {
                t.push_str("\n[mcp_servers.lidguard]\ncommand = \"node\"\nargs = [\"my.js\"]\n");
            }
            if ours {
                t.push_str(
                    "\n[mcp_servers.lidguard]\ncommand = \"/old/place/lidguard\"\nargs = [\"mcp-server\"]\n",
                );
            }
            (t, ours, foreign)
        })
}

fn finish(text: String, crlf: bool, bom: bool) -> String {
    let mut text = if crlf {
        text.replace('\n', "\r\n")
    } else {
        text
    };
    if bom {
        text.insert(0, '\u{feff}');
    }
    text
}

fn content(kind: Kind) -> BoxedStrategy<Content> {
    let absent = prop::bool::weighted(0.1);
    match kind {
        Kind::ClaudeHooks | Kind::CodexHooks | Kind::CopilotHooks => {
            (absent, hooks_content(kind), style(kind != Kind::CodexHooks))
                .prop_map(|(absent, (j, ours, refused), st)| Content {
                    text: (!absent).then(|| render(&j, st)),
                    refused: !absent && refused,
                    refused_always: !absent && refused,
                    had_ours: !absent && ours,
                })
                .boxed()
        }
        Kind::OpenCodePlugin => prop::sample::select(vec![0u8, 1, 2, 3])
            .prop_map(|which| {
                let plugin = lidguard_providers::agents::opencode::install::plugin_text(
                    &HookCommand::new("/old/place/lidguard"),
                );
                match which {
                    0 => Content {
                        text: None,
                        refused: false,
                        refused_always: false,
                        had_ours: false,
                    },
                    1 => Content {
                        text: Some(plugin),
                        refused: false,
                        refused_always: false,
                        had_ours: true,
                    },
                    2 => Content {
                        text: Some("export const Mine = async () => ({})\n".into()),
                        refused: true,
                        refused_always: true,
                        had_ours: false,
                    },
                    _ => Content {
                        text: Some(String::new()),
                        refused: false,
                        refused_always: false,
                        had_ours: false,
                    },
                }
            })
            .boxed(),
        Kind::CodexMcp => (
            absent,
            codex_toml(),
            prop::bool::weighted(0.2),
            prop::bool::weighted(0.1),
        )
            .prop_map(|(absent, (text, ours, foreign), crlf, bom)| Content {
                text: (!absent).then(|| finish(text, crlf, bom)),
                refused: !absent && foreign,
                refused_always: false,
                had_ours: !absent && ours,
            })
            .boxed(),
        _ => (absent, mcp_content(kind), style(kind != Kind::CopilotMcp))
            .prop_map(|(absent, (j, ours, foreign, duplicate), st)| Content {
                text: (!absent).then(|| render(&j, st)),
                refused: !absent && (foreign || duplicate),
                refused_always: !absent && duplicate,
                had_ours: !absent && ours,
            })
            .boxed(),
    }
}

// ----- the file around it -----

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Link {
    None,
    Relative,
    Absolute,
    TwoHops,
}

#[derive(Clone, Debug)]
struct Case {
    content: Content,
    mode: u32,
    link: Link,
    force: bool,
    timeout: u32,
}

fn case(kind: Kind) -> impl Strategy<Value = Case> {
    (
        content(kind),
        prop::sample::select(vec![0o600u32, 0o600, 0o644, 0o640, 0o400, 0o444]),
        prop::sample::select(vec![
            Link::None,
            Link::None,
            Link::Relative,
            Link::Absolute,
            Link::TwoHops,
        ]),
        prop::bool::weighted(0.2),
        prop::sample::select(vec![30u32, 490]),
    )
        .prop_map(|(content, mode, link, force, timeout)| Case {
            content,
            mode,
            link,
            force,
            timeout,
        })
}

/// What a file looks like from outside: its bytes, mode, and the link that leads to it.
#[derive(Debug, PartialEq, Eq)]
struct Snapshot {
    bytes: Option<Vec<u8>>,
    mode: Option<u32>,
    link: Option<PathBuf>,
}

fn snapshot(path: &Path) -> Snapshot {
    let link = std::fs::read_link(path).ok();
    let meta = std::fs::metadata(path).ok();
    Snapshot {
        bytes: std::fs::read(path).ok(),
        mode: meta.map(|m| m.permissions().mode() & 0o7777),
        link,
    }
}

fn mode_of(path: &Path) -> u32 {
    lidguard_files::private::mode_of(path).unwrap()
}

/// Lays the file out: at `location.file`, or in a dotfiles folder behind links.
fn materialize(root: &Path, file: &Path, case: &Case) {
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let real = match case.link {
        Link::None => file.to_path_buf(),
        _ => {
            let dots = root.join("dotfiles");
            std::fs::create_dir_all(&dots).unwrap();
            let real = dots.join(file.file_name().unwrap());
            match case.link {
                Link::Absolute => symlink(&real, file).unwrap(),
                Link::TwoHops => {
                    let hop = root.join("hop");
                    symlink(&real, &hop).unwrap();
                    symlink(&hop, file).unwrap();
                }
                _ => {
                    // A relative link, as stow writes them.
                    let depth = file.strip_prefix(root).unwrap().components().count() - 1;
                    let mut rel = PathBuf::new();
                    for _ in 0..depth {
                        rel.push("..");
                    }
                    symlink(rel.join("dotfiles").join(real.file_name().unwrap()), file).unwrap();
                }
            }
            real
        }
    };
    if let Some(text) = &case.content.text {
        std::fs::write(&real, text).unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(case.mode)).unwrap();
    }
}

/// The file's meaning (JSONC or TOML), for comparing removals that cannot be byte-exact.
fn meaning(kind: Kind, text: Option<&[u8]>) -> Option<Value> {
    let text = String::from_utf8(text?.to_vec()).ok()?;
    let text = text.trim_start_matches('\u{feff}');
    if kind == Kind::CodexMcp {
        let doc: toml_edit::DocumentMut = text.parse().ok()?;
        return Some(Value::String(
            doc.to_string()
                .lines()
                .filter(|l| !l.trim().is_empty())
                .collect::<Vec<_>>()
                .join("\n"),
        ));
    }
    if text.trim().is_empty() {
        return Some(Value::Object(Default::default()));
    }
    let root = jsonc_parser::cst::CstRootNode::parse(text, &Default::default()).ok()?;
    root.value()?.to_serde_value()
}

struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    places: Places,
    env: Vec<(&'static str, OsString)>,
}

impl World {
    fn new() -> World {
        // A memory file system when there is one: the same file semantics (modes, links,
        // renames), without waiting for the disk on every fsync.
        let tmp = match std::path::Path::new("/dev/shm") {
            shm if shm.is_dir() => tempfile::tempdir_in(shm),
            _ => tempfile::tempdir(),
        }
        .unwrap();
        let root = tmp.path().to_path_buf();
        let home = root.join("home");
        std::fs::create_dir_all(&home).unwrap();
        World {
            places: Places::under(&root.join("lidguard")),
            env: vec![("HOME", home.into_os_string())],
            root,
            _tmp: tmp,
        }
    }

    fn var(&self) -> impl Fn(&str) -> Option<OsString> + '_ {
        |name| {
            self.env
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.clone())
        }
    }

    fn location(&self, kind: Kind) -> Location {
        let var = self.var();
        if kind == Kind::ProviderMcp {
            let file = self.root.join("home/.gemini/settings.json");
            return Location {
                root: file.parent().unwrap().to_path_buf(),
                file,
            };
        }
        if kind.is_hooks() {
            agents::hooks(kind.provider(), &var).unwrap()
        } else {
            agents::mcp(kind.provider(), &var).unwrap()
        }
    }
}

fn provider_entry(install: bool) -> ProviderEntry {
    ProviderEntry {
        server: "lidguard-provider".into(),
        provider_name: install.then(|| "gemini".into()),
    }
}

fn install(w: &World, kind: Kind, loc: &Location, case: &Case) -> Result<(), ConfigError> {
    let options = Options {
        dry_run: false,
        force: case.force,
    };
    let setup = Setup {
        cmd: HookCommand::new(exe()),
        timeout: case.timeout,
    };
    let p = kind.provider();
    match kind {
        Kind::ProviderMcp => config_mcp::provider_install(
            &w.places,
            &loc.file,
            &provider_entry(true),
            exe(),
            options,
        )
        .map(drop),
        _ if kind.is_hooks() => hooks::install(&w.places, p, loc, &setup, options, false).map(drop),
        _ => config_mcp::install(&w.places, p, loc, exe(), options).map(drop),
    }
}

fn remove(w: &World, kind: Kind, loc: &Location, force: bool) -> Result<(), ConfigError> {
    let options = Options {
        dry_run: false,
        force,
    };
    let p = kind.provider();
    let done = |r: Removed| match r {
        Removed::Done(_) => Ok(()),
        Removed::LeftAlone { reason, .. } => panic!("left alone after install: {reason}"),
    };
    match kind {
        Kind::ProviderMcp => done(config_mcp::provider_remove(
            &w.places,
            &loc.file,
            &provider_entry(false),
            exe(),
            options,
        )?),
        _ if kind.is_hooks() => {
            hooks::remove(&w.places, p, loc, &HookCommand::new(exe()), options).map(drop)
        }
        _ => done(config_mcp::remove(&w.places, p, loc, exe(), options)?),
    }
}

fn installed_state(w: &World, kind: Kind, loc: &Location, timeout: u32) -> Option<&'static str> {
    match kind {
        Kind::ProviderMcp => {
            config_mcp::provider_status(&loc.file, &provider_entry(false), exe()).state
        }
        _ if kind.is_hooks() => {
            let setup = Setup {
                cmd: HookCommand::new(exe()),
                timeout,
            };
            hooks::status(kind.provider(), loc, &setup, &Default::default(), None).state
        }
        _ => config_mcp::status(kind.provider(), loc, exe()).state,
    }
    .filter(|_| w.root.exists())
}

/// Files no edit may leave behind: temporary files next to the config.
fn leftovers(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".tmp"))
        .collect()
}

fn check(kind: Kind, case: &Case) -> Result<(), TestCaseError> {
    let w = World::new();
    let loc = w.location(kind);
    materialize(&w.root, &loc.file, case);
    let before = snapshot(&loc.file);
    let read_only = case.content.text.is_some() && case.mode & 0o200 == 0;

    let result = install(&w, kind, &loc, case);
    let must_refuse = case.content.refused_always
        || (case.content.refused && !case.force)
        || (read_only && !case.force);
    if must_refuse || result.is_err() {
        prop_assert!(
            must_refuse,
            "install failed unexpectedly: {:?}",
            result.err()
        );
        let err = result.expect_err("a refusal");
        let expected = matches!(
            &err,
            ConfigError::Refused {
                source: InstallError::DuplicateKey { .. }
                    | InstallError::Foreign { .. }
                    | InstallError::Shape { .. },
                ..
            } | ConfigError::Edit(lidguard_files::edit::EditError::ReadOnlyFile { .. })
        );
        prop_assert!(expected, "unexpected error: {err}");
        prop_assert_eq!(snapshot(&loc.file), before, "a refusal changed nothing");
        return Ok(());
    }

    // Installed: the mode and the link stay, the bytes are the target's.
    let after = snapshot(&loc.file);
    prop_assert_eq!(&after.link, &before.link, "the link stays");
    match before.mode {
        Some(mode) => prop_assert_eq!(after.mode, Some(mode), "the mode stays"),
        None => prop_assert_eq!(after.mode, Some(0o600), "a new file is private"),
    }
    prop_assert_eq!(
        installed_state(&w, kind, &loc, case.timeout),
        Some("installed")
    );
    if let Some(mode) = before.mode {
        let dir = std::fs::read_dir(w.places.state_dir.join("backups"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        prop_assert_eq!(mode_of(&dir), 0o700);
        let backup = std::fs::read_dir(&dir)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        prop_assert_eq!(mode_of(&backup), mode & 0o777, "the backup keeps the mode");
        prop_assert_eq!(&std::fs::read(&backup).ok(), &before.bytes);
    }

    // Removed: the original is back.
    remove(&w, kind, &loc, case.force).map_err(|e| TestCaseError::fail(format!("remove: {e}")))?;
    let back = snapshot(&loc.file);
    prop_assert_eq!(&back.link, &before.link, "the link stays after remove");
    // An MCP entry running another lidguard (`/old/place/lidguard`) may be the user's own build:
    // install refreshes it, and remove puts it back as it was (the original bytes, below).
    let mcp = matches!(
        kind,
        Kind::ClaudeMcp | Kind::CodexMcp | Kind::CopilotMcp | Kind::OpenCodeMcp | Kind::ProviderMcp
    );
    if case.content.had_ours && !mcp {
        // lidguard's old hook entries are gone with the new ones; everything else is as it was.
        let w2 = World::new();
        let loc2 = w2.location(kind);
        let plain = Case {
            link: Link::None,
            force: true,
            ..case.clone()
        };
        materialize(&w2.root, &loc2.file, &plain);
        remove(&w2, kind, &loc2, true)
            .map_err(|e| TestCaseError::fail(format!("remove alone: {e}")))?;
        let alone = snapshot(&loc2.file);
        prop_assert_eq!(
            back.mode.is_some(),
            alone.mode.is_some(),
            "the file stays or goes"
        );
        prop_assert_eq!(
            meaning(kind, back.bytes.as_deref()),
            meaning(kind, alone.bytes.as_deref()),
            "install + remove = remove alone"
        );
    } else {
        prop_assert_eq!(back.mode, before.mode);
        prop_assert_eq!(
            back.bytes
                .as_ref()
                .map(|b| String::from_utf8_lossy(b).into_owned()),
            before
                .bytes
                .as_ref()
                .map(|b| String::from_utf8_lossy(b).into_owned()),
            "remove gives back the original bytes"
        );
    }
    prop_assert!(leftovers(loc.file.parent().unwrap()).is_empty());
    prop_assert!(leftovers(&w.root.join("dotfiles")).is_empty());
    Ok(())
}

macro_rules! roundtrip {
    ($($name:ident: $kind:expr;)*) => {
        proptest! {
            #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]
            $(
                #[test]
                fn $name(c in case($kind)) {
                    check($kind, &c)?;
                }
            )*
        }
    };
}

roundtrip! {
    claude_settings_hooks: Kind::ClaudeHooks;
    codex_hooks_json: Kind::CodexHooks;
    copilot_hooks_file: Kind::CopilotHooks;
    opencode_plugin: Kind::OpenCodePlugin;
    claude_json_mcp: Kind::ClaudeMcp;
    codex_config_toml_mcp: Kind::CodexMcp;
    copilot_mcp_config: Kind::CopilotMcp;
    opencode_json_mcp: Kind::OpenCodeMcp;
    provider_mcp_json: Kind::ProviderMcp;
}
