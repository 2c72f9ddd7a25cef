//! What a permission request is shown as on the phone: the command or the path it acts on,
//! secrets masked, and whatever is left out said.

use serde_json::Value;

use crate::event::truncate_chars;
use crate::text::escape_controls;

/// The most of a command or path shown on the phone, in characters (ntfy keeps a message to
/// 4 KiB).
pub const SHOWN_CHARS: usize = 1200;

/// What a permission request is shown as on the phone: the whole command (every line, secrets
/// masked), or the path or URL it acts on. Whatever is left out is said, after [`NOT_SHOWN`]
/// (file contents, other fields, a URL's query, the rest of a command past [`SHOWN_CHARS`]);
/// text is escaped so no control, bidi or invisible character can change how it reads.
pub fn safe_summary(input: &Value) -> Option<String> {
    let fields = input.as_object()?;
    let text = |key: &str| fields.get(key).and_then(Value::as_str);
    let command = ["command", "cmd"]
        .iter()
        .find_map(|k| match fields.get(*k) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Array(words)) => Some(
                words
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            _ => None,
        });
    if let Some(command) = command {
        let mut any_masked = false;
        let shown: Vec<String> = command
            .lines()
            .map(|line| {
                let (line, masked) = mask_secrets(line);
                any_masked |= masked;
                escape_controls(&line).into_owned()
            })
            .collect();
        let shown = shorten(&shown.join("\n"));
        // Masked text is text the user does not see: the request is not shown whole.
        let left_out = if any_masked {
            vec!["what looked like a secret (***)".to_owned()]
        } else {
            Vec::new()
        };
        return Some(with_hidden(shown, &left_out));
    }
    // Everything but the path (or URL) and the agent's description of it is not shown.
    let hidden = |shown_key: &str| -> Vec<String> {
        fields
            .iter()
            .filter(|(k, _)| k.as_str() != shown_key && k.as_str() != "description")
            .map(|(k, v)| {
                let bytes = v.as_str().map_or_else(|| v.to_string().len(), str::len);
                format!("{} ({bytes} bytes)", escape_controls(k))
            })
            .collect()
    };
    let path_key = ["file_path", "filePath", "notebook_path", "path", "filename"]
        .into_iter()
        .find(|k| text(k).is_some());
    if let Some(key) = path_key {
        let path = text(key).unwrap_or_default();
        return Some(with_hidden(shorten(&escape_controls(path)), &hidden(key)));
    }
    let url = text("url")?;
    let safe = safe_url(url);
    let mut left_out = hidden("url");
    if safe != url {
        left_out.insert(0, "the URL's user, query or fragment".to_owned());
    }
    Some(with_hidden(shorten(&escape_controls(&safe)), &left_out))
}

/// Marks a summary that does not show the whole request: what follows says what is left out.
pub const NOT_SHOWN: &str = " [not shown: ";

/// Whether a summary shows the whole request (nothing cut or left out), so the phone may
/// offer Allow for it.
pub fn shows_whole(summary: Option<&str>) -> bool {
    summary.is_some_and(|s| !s.contains(NOT_SHOWN))
}

fn with_hidden(mut shown: String, hidden: &[String]) -> String {
    if !hidden.is_empty() {
        shown.push_str(NOT_SHOWN);
        shown.push_str(&hidden.join(", "));
        shown.push(']');
    }
    shown
}

/// At most [`SHOWN_CHARS`] characters; a longer text says how much was cut.
pub(super) fn shorten(text: &str) -> String {
    let count = text.chars().count();
    if count <= SHOWN_CHARS {
        return text.to_owned();
    }
    format!(
        "{}…{NOT_SHOWN}{} more characters]",
        truncate_chars(text, SHOWN_CHARS),
        count - SHOWN_CHARS
    )
}

/// A URL without user info, query or fragment.
fn safe_url(text: &str) -> String {
    match url::Url::parse(text) {
        Ok(mut url) => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.set_query(None);
            url.set_fragment(None);
            url.to_string()
        }
        Err(_) => "(a URL)".to_owned(),
    }
}

/// Names whose values are masked: `NAME=value` words and `--name value` pairs.
const SECRET_NAMES: [&str; 10] = [
    "token",
    "secret",
    "password",
    "passwd",
    "pass",
    "key",
    "auth",
    "credential",
    "cookie",
    "bearer",
];

fn secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    SECRET_NAMES.iter().any(|s| lower.contains(s))
}

/// A long run of letters and digits, like an API key (a path or a file name, with `/` or `.`,
/// is never one: masking it would hide what a command acts on).
fn looks_like_key(word: &str) -> bool {
    word.len() >= 24
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+=_-".contains(&b))
        && word.bytes().any(|b| b.is_ascii_digit())
        && word.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Whether a value may be masked: shell syntax that runs something (`$(…)`, backticks, `;`,
/// pipes, redirections) is always shown, and so is a path (`/`, `~`, `.` first): a mask never
/// hides what a command does or what it acts on.
fn maskable(value: &str) -> bool {
    !value.contains(['$', '`', '(', ')', ';', '|', '&', '<', '>', '/'])
        && !value.starts_with(['~', '.'])
}

/// Where a command line's words stand in command substitutions (`$(…)`, backticks).
#[derive(Default)]
struct Substitutions {
    depth: usize,
    in_backticks: bool,
}

impl Substitutions {
    /// Whether `word` is in a substitution or has one; moves past it.
    fn step(&mut self, word: &str) -> bool {
        let ticks = word.matches('`').count();
        let opens = word.matches("$(").count();
        let inside = self.depth > 0 || self.in_backticks || ticks > 0 || opens > 0;
        self.depth = (self.depth + opens).saturating_sub(word.matches(')').count());
        if ticks % 2 == 1 {
            self.in_backticks = !self.in_backticks;
        }
        inside
    }
}

/// Masks what looks secret in one command line: `NAME=value` with a secret-sounding name,
/// the word after `--token`, `-p`, `Authorization: Bearer` and the like, user info in URLs, and
/// long key-like words — never inside a command substitution, never a path or shell syntax.
/// Says whether it masked anything: masked text is text the user does not see, so a request
/// with some is never one the phone may allow.
pub fn mask_secrets(line: &str) -> (String, bool) {
    let mut out = Vec::new();
    let (mut mask_next, mut masked) = (false, false);
    let mut substitutions = Substitutions::default();
    for word in line.split_whitespace() {
        let bare = word.trim_matches(|c| c == '"' || c == '\'');
        if substitutions.step(bare) {
            // What a substitution runs is shown whole, and what it yields is nobody's secret.
            out.push(word.to_owned());
            mask_next = false;
            continue;
        }
        if mask_next {
            mask_next = false;
            // `Authorization: Bearer <token>`: the scheme's word is shown, the secret follows.
            if bare.eq_ignore_ascii_case("bearer") || bare.eq_ignore_ascii_case("basic") {
                out.push(word.to_owned());
                mask_next = true;
                continue;
            }
            if maskable(bare) {
                out.push("***".to_owned());
                masked = true;
                continue;
            }
        }
        if let Some((name, value)) = bare.split_once('=')
            && secret_name(name.trim_start_matches('-'))
            && maskable(value)
        {
            out.push(format!("{name}=***"));
            masked = true;
            continue;
        }
        let flag = bare.trim_start_matches('-');
        if (bare.starts_with('-') && (secret_name(flag) || flag == "p" || flag == "u"))
            || bare.eq_ignore_ascii_case("bearer")
            || bare.eq_ignore_ascii_case("authorization:")
        {
            out.push(word.to_owned());
            mask_next = true;
            continue;
        }
        if let Some((scheme, rest)) = bare.split_once("://")
            && let Some((_, host)) = rest.split_once('@')
        {
            out.push(format!("{scheme}://***@{host}"));
            masked = true;
            continue;
        }
        if looks_like_key(bare) {
            out.push("***".to_owned());
            masked = true;
            continue;
        }
        out.push(word.to_owned());
    }
    (out.join(" "), masked)
}
