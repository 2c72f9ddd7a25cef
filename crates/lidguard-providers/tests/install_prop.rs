//! Property tests of the Claude, Codex and Copilot installers over generated user configs.
//!
//! A config is generated as an ordered JSON model and rendered in one of several styles
//! (indent width, tabs, comments, CRLF), with foreign events, matcher groups and handlers,
//! unknown keys, and sometimes lidguard entries already present in stale forms. Checked:
//! install is idempotent and gives `Installed`; install and remove never lose, add or reorder
//! anything but lidguard's entries; remove after install gives back the original bytes when
//! the original had no lidguard entry.
#![allow(
    clippy::disallowed_methods,
    reason = "tests write fixtures and read the environment"
)]

use lidguard_providers::agent::HookFile;
use lidguard_providers::agents::{claude, codex, copilot};
use lidguard_providers::install::{
    Change, HookCommand, HookShell, HookStatus, InstallError, InstallState,
};
use proptest::prelude::*;
use serde_json::Value;

/// An ordered JSON value (serde_json's map may sort keys).
#[derive(Clone, Debug)]
enum J {
    S(String),
    N(u32),
    B(bool),
    A(Vec<J>),
    O(Vec<(String, J)>),
}

fn s(text: &str) -> J {
    J::S(text.to_owned())
}

impl J {
    fn value(&self) -> Value {
        match self {
            J::S(s) => Value::String(s.clone()),
            J::N(n) => Value::from(*n),
            J::B(b) => Value::Bool(*b),
            J::A(items) => Value::Array(items.iter().map(J::value).collect()),
            J::O(props) => {
                Value::Object(props.iter().map(|(k, v)| (k.clone(), v.value())).collect())
            }
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Style {
    indent: &'static str,
    comments: bool,
    crlf: bool,
}

/// Pretty-prints `j` with every non-empty container on several lines, and with comments above
/// some properties when asked.
fn render(j: &J, style: Style) -> String {
    fn go(j: &J, style: Style, depth: usize, out: &mut String) {
        let pad = |d: usize| style.indent.repeat(d);
        match j {
            J::S(s) => out.push_str(&serde_json::to_string(s).unwrap()),
            J::N(n) => out.push_str(&n.to_string()),
            J::B(b) => out.push_str(&b.to_string()),
            J::A(items) if items.is_empty() => out.push_str("[]"),
            J::O(props) if props.is_empty() => out.push_str("{}"),
            J::A(items) => {
                out.push_str("[\n");
                for (i, item) in items.iter().enumerate() {
                    out.push_str(&pad(depth + 1));
                    go(item, style, depth + 1, out);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                out.push_str(&pad(depth));
                out.push(']');
            }
            J::O(props) => {
                out.push_str("{\n");
                for (i, (key, value)) in props.iter().enumerate() {
                    if style.comments && i % 2 == 0 {
                        out.push_str(&format!("{}// about {key}\n", pad(depth + 1)));
                    }
                    out.push_str(&format!(
                        "{}{}: ",
                        pad(depth + 1),
                        serde_json::to_string(key).unwrap()
                    ));
                    go(value, style, depth + 1, out);
                    out.push_str(if i + 1 < props.len() { ",\n" } else { "\n" });
                }
                out.push_str(&pad(depth));
                out.push('}');
            }
        }
    }
    let mut out = String::new();
    go(j, style, 0, &mut out);
    out.push('\n');
    if style.crlf {
        out.replace('\n', "\r\n")
    } else {
        out
    }
}

fn style() -> impl Strategy<Value = Style> {
    (
        prop::sample::select(vec!["  ", "    ", "\t"]),
        any::<bool>(),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(indent, comments, crlf)| Style {
            indent,
            comments,
            crlf,
        })
}

/// Which installer a case is for.
#[derive(Clone, Copy, Debug)]
enum Provider {
    Claude,
    Codex,
    Copilot,
}

impl Provider {
    fn required(self) -> &'static [&'static str] {
        match self {
            Provider::Claude => claude::install::REQUIRED_EVENTS,
            Provider::Codex => codex::install::REQUIRED_EVENTS,
            Provider::Copilot => copilot::install::REQUIRED_EVENTS,
        }
    }
    fn subcommand(self) -> &'static str {
        match self {
            Provider::Claude => "claude-hook",
            Provider::Codex => "codex-hook",
            Provider::Copilot => "copilot-hook",
        }
    }
    fn nested(self) -> bool {
        !matches!(self, Provider::Copilot)
    }
    fn hooks(self) -> &'static HookFile {
        match self {
            Provider::Claude => claude::AGENT.hooks,
            Provider::Codex => codex::AGENT.hooks,
            Provider::Copilot => copilot::AGENT.hooks,
        }
    }
    fn install(self, text: Option<&str>, timeout: u32) -> Result<Change, InstallError> {
        self.hooks().install(text, &cmd(), timeout)
    }
    fn remove(self, text: &str) -> Result<Change, InstallError> {
        self.hooks().remove(text, &cmd(), None)
    }
    fn status(self, text: &str, timeout: u32) -> HookStatus {
        self.hooks().status(Some(text), &cmd(), timeout).unwrap()
    }
}

fn cmd() -> HookCommand {
    HookCommand {
        program: "/usr/local/bin/lidguard".to_owned(),
        shell: HookShell::Posix,
    }
}

/// The ownership rule, restated independently of the crate.
fn is_ours(handler: &Value, subcommand: &str) -> bool {
    // The exec form's `args` count as part of the command line.
    let args = handler.get("args").and_then(Value::as_array);
    let text = ["command", "bash", "powershell"]
        .iter()
        .filter_map(|k| handler.get(k).and_then(Value::as_str))
        .chain(args.into_iter().flatten().filter_map(Value::as_str))
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_lowercase();
    text.contains("lidguard") && text.split_whitespace().any(|w| w == subcommand)
}

fn handler(provider: Provider, event: &'static str, ours: bool) -> impl Strategy<Value = J> {
    let command_key = if provider.nested() { "command" } else { "bash" };
    let timeout_key = if provider.nested() {
        "timeout"
    } else {
        "timeoutSec"
    };
    let sub = provider.subcommand();
    let event_arg = if provider.nested() {
        String::new()
    } else {
        format!(" --event {event}")
    };
    if ours {
        (
            prop::sample::select(vec![
                "lidguard",
                "/old/lidguard",
                "/usr/local/bin/lidguard",
                "'/x y/LidGuard'",
            ]),
            prop::option::of(prop::sample::select(vec![10u32, 30, 490])),
            any::<bool>(),
        )
            .prop_map(move |(program, timeout, status_message)| {
                let mut h = vec![
                    ("type".to_owned(), s("command")),
                    (
                        command_key.to_owned(),
                        J::S(format!("{program} {sub}{event_arg}")),
                    ),
                ];
                if let Some(t) = timeout {
                    h.push((timeout_key.to_owned(), J::N(t)));
                }
                if status_message {
                    h.push(("statusMessage".to_owned(), s("Starting LidGuard")));
                }
                J::O(h)
            })
            .boxed()
    } else {
        prop_oneof![
            (
                prop::sample::select(vec![
                    "notify-send done",
                    "~/bin/guard.sh",
                    "./lidguard-notes.sh",
                    "lidguard status"
                ]),
                prop::option::of(1u32..700),
                any::<bool>(),
            )
                .prop_map(move |(c, timeout, is_async)| {
                    let mut h = vec![
                        ("type".to_owned(), s("command")),
                        (command_key.to_owned(), s(c)),
                    ];
                    if let Some(t) = timeout {
                        h.push((timeout_key.to_owned(), J::N(t)));
                    }
                    if is_async {
                        h.push(("async".to_owned(), J::B(true)));
                    }
                    J::O(h)
                }),
            Just(J::O(vec![
                ("type".to_owned(), s("prompt")),
                ("prompt".to_owned(), s("Is this safe?"))
            ])),
            Just(J::O(vec![
                ("type".to_owned(), s("http")),
                ("url".to_owned(), s("https://hooks.example/x"))
            ])),
        ]
        .boxed()
    }
}

/// A list of handlers, each lidguard's with probability `p_ours`.
fn handlers(
    provider: Provider,
    event: &'static str,
    p_ours: f64,
    max: usize,
) -> impl Strategy<Value = Vec<J>> {
    prop::collection::vec(prop::bool::weighted(p_ours), 0..=max).prop_flat_map(move |flags| {
        flags
            .into_iter()
            .map(|ours| handler(provider, event, ours))
            .collect::<Vec<_>>()
    })
}

fn group(provider: Provider, event: &'static str, p_ours: f64) -> impl Strategy<Value = J> {
    (
        prop::option::of(prop::sample::select(vec!["", "*", "Bash", "Edit|Write"])),
        handlers(provider, event, p_ours, 3),
        any::<bool>(),
    )
        .prop_map(|(matcher, handlers, note)| {
            let mut g = Vec::new();
            if let Some(m) = matcher {
                g.push(("matcher".to_owned(), s(m)));
            }
            g.push(("hooks".to_owned(), J::A(handlers)));
            if note {
                g.push(("x-note".to_owned(), s("kept")));
            }
            J::O(g)
        })
}

/// An event's array: never empty (an empty array the user wrote is not told apart from one
/// install created; see the module docs).
fn event_array(provider: Provider, event: &'static str, p_ours: f64) -> BoxedStrategy<J> {
    if provider.nested() {
        prop::collection::vec(group(provider, event, p_ours), 1..=3)
            .prop_map(J::A)
            .boxed()
    } else {
        handlers(provider, event, p_ours, 3)
            .prop_filter("non-empty", |h| !h.is_empty())
            .prop_map(J::A)
            .boxed()
    }
}

fn config(provider: Provider, p_ours: f64) -> impl Strategy<Value = J> {
    let mut pool: Vec<&'static str> = provider.required().to_vec();
    pool.extend(if provider.nested() {
        ["SessionStart", "PreCompact", "CwdChanged"]
    } else {
        ["preCompact", "userPromptTransformed", "Stop"]
    });
    let events = prop::sample::subsequence(pool, 0..=6).prop_shuffle();
    let hooks = events.prop_flat_map(move |events| {
        events
            .into_iter()
            .map(|e| event_array(provider, e, p_ours).prop_map(move |a| (e.to_owned(), a)))
            .collect::<Vec<_>>()
    });
    (hooks, any::<bool>(), any::<bool>()).prop_map(move |(events, extra_before, extra_after)| {
        let mut root = Vec::new();
        match provider {
            Provider::Claude if extra_before => root.push(("model".to_owned(), s("opus"))),
            Provider::Codex if extra_before => root.push(("description".to_owned(), s("my hooks"))),
            Provider::Copilot => root.push(("version".to_owned(), J::N(1))),
            _ => {}
        }
        if !events.is_empty() {
            root.push(("hooks".to_owned(), J::O(events)));
        }
        if extra_after && matches!(provider, Provider::Claude) {
            root.push((
                "permissions".to_owned(),
                J::O(vec![("allow".to_owned(), J::A(vec![s("Bash(git *)")]))]),
            ));
        }
        J::O(root)
    })
}

/// `value` without lidguard's handlers, dropping each group, event array and `hooks` object
/// that removing them left empty (one that was empty already stays).
fn strip(value: &Value, provider: Provider) -> Value {
    let sub = provider.subcommand();
    let mut value = value.clone();
    let Some(hooks) = value.get_mut("hooks").and_then(Value::as_object_mut) else {
        return value;
    };
    let mut removed_any = false;
    let mut emptied = Vec::new();
    for (event, array) in hooks.iter_mut() {
        let Some(array) = array.as_array_mut() else {
            continue;
        };
        let before = array.len();
        let mut removed_here = false;
        if provider.nested() {
            array.retain_mut(|group| {
                let Some(inner) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                    return true;
                };
                let n = inner.len();
                inner.retain(|h| !is_ours(h, sub));
                if inner.len() < n {
                    removed_here = true;
                }
                !(inner.len() < n && inner.is_empty())
            });
        } else {
            array.retain(|h| {
                let ours = is_ours(h, sub);
                removed_here |= ours;
                !ours
            });
        }
        removed_any |= removed_here;
        if removed_here && before > 0 && array.is_empty() {
            emptied.push(event.clone());
        }
    }
    for event in emptied {
        hooks.remove(&event);
    }
    if removed_any && hooks.is_empty() {
        value.as_object_mut().unwrap().remove("hooks");
    }
    value
}

fn text_of(change: Change, before: &str) -> Option<String> {
    match change {
        Change::Unchanged => Some(before.to_owned()),
        Change::Changed { new_text } => Some(new_text),
        Change::Delete => None,
    }
}

/// JSONC → JSON for serde_json: drop the `// about` comment lines `render` writes.
fn semantic(text: &str) -> Value {
    let json: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    serde_json::from_str(json.trim_start_matches('\u{feff}'))
        .unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn has_ours(value: &Value, provider: Provider) -> bool {
    strip(value, provider) != *value
}

fn check(provider: Provider, model: &J, style: Style, timeout: u32) -> Result<(), TestCaseError> {
    let x = render(model, style);
    let x_value = model.value();
    prop_assert_eq!(&semantic(&x), &x_value);
    let had_ours = has_ours(&x_value, provider);

    // Status agrees with what install would do.
    let before = provider.status(&x, timeout);
    let first = provider.install(Some(&x), timeout).unwrap();
    if !had_ours {
        prop_assert_eq!(before.state, InstallState::Missing);
    }
    prop_assert_eq!(
        before.state == InstallState::Installed,
        first == Change::Unchanged,
        "{:?}",
        before
    );

    let y = text_of(first, &x).unwrap();
    // Idempotent, and reported installed.
    prop_assert_eq!(
        provider.install(Some(&y), timeout).unwrap(),
        Change::Unchanged
    );
    let after = provider.status(&y, timeout);
    prop_assert_eq!(after.state, InstallState::Installed, "{:?}\n{}", after, y);
    // Nothing but lidguard's entries changed: same foreign handlers, groups, order and keys.
    let y_value = semantic(&y);
    prop_assert_eq!(
        strip(&y_value, provider),
        strip(&x_value, provider),
        "{}",
        y
    );
    // Each required event has exactly one lidguard handler.
    for event in provider.required() {
        let arr = y_value["hooks"][event].as_array().unwrap();
        let ours: usize = if provider.nested() {
            // ... in a group that runs for every occurrence of the event.
            let runs_always = |g: &&Value| g.get("matcher").is_none_or(|m| m == "" || m == "*");
            arr.iter()
                .filter(runs_always)
                .flat_map(|g| g["hooks"].as_array().unwrap())
                .filter(|h| is_ours(h, provider.subcommand()))
                .count()
        } else {
            arr.iter()
                .filter(|h| is_ours(h, provider.subcommand()))
                .count()
        };
        prop_assert_eq!(ours, 1, "{}", event);
    }

    // Remove after install: the original without lidguard's entries, byte for byte when it
    // had none.
    let removed = text_of(provider.remove(&y).unwrap(), &y);
    let want = strip(&x_value, provider);
    match removed {
        Some(z) => {
            prop_assert_eq!(&semantic(&z), &want);
            if !had_ours {
                prop_assert_eq!(&z, &x);
            }
        }
        None => {
            // Only Copilot's own file is deleted, and only when nothing else is in it.
            prop_assert!(matches!(provider, Provider::Copilot));
            let hooks_empty = want
                .get("hooks")
                .is_none_or(|h| h.as_object().is_some_and(|o| o.is_empty()));
            prop_assert!(hooks_empty, "{}", want);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn claude_configs(model in config(Provider::Claude, 0.25), style in style(), timeout in prop::sample::select(vec![30u32, 490])) {
        check(Provider::Claude, &model, style, timeout)?;
    }

    #[test]
    fn claude_configs_without_lidguard(model in config(Provider::Claude, 0.0), style in style()) {
        check(Provider::Claude, &model, style, 30)?;
    }

    #[test]
    fn codex_configs(model in config(Provider::Codex, 0.25), style in style(), timeout in prop::sample::select(vec![30u32, 490])) {
        check(Provider::Codex, &model, style, timeout)?;
    }

    #[test]
    fn codex_configs_without_lidguard(model in config(Provider::Codex, 0.0), style in style()) {
        check(Provider::Codex, &model, style, 30)?;
    }

    #[test]
    fn copilot_files(model in config(Provider::Copilot, 0.3), style in style()) {
        check(Provider::Copilot, &model, style, 30)?;
    }
}
