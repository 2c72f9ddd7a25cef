//! Provider dialects: everything that differs between agent harnesses lives here.
//!
//! Each module turns one agent's hook payload into provider-neutral
//! [`AgentEvent`](lidguard_core::event::AgentEvent)s and renders lidguard's
//! [`Decision`](lidguard_core::event::Decision)s into that agent's own output JSON. Wire types
//! mirror each agent's JSON exactly and tolerate unknown fields; well-formed but uninteresting
//! input gives an event of kind `Telemetry` (so it is still counted), and only malformed input
//! is an error. Output types are separate per provider even where shapes look alike: the
//! contracts are not standardized and drift independently.
//!
//! Every provider fact is backed by a captured payload in `tests/fixtures/<provider>/` or names
//! its documented source in a comment.
// Unit tests write fixtures and set variables directly; the lib build (clippy --all-targets
// checks it without cfg(test)) keeps the one-writer and injected-environment rules.
#![cfg_attr(
    test,
    allow(clippy::disallowed_methods, reason = "tests write fixtures")
)]

pub mod agent;
pub mod agents;
mod evidence;
pub mod install;
/// The assistant's last answer from the tail of an agent's transcript (for webhooks).
pub mod last_message;
pub mod owner;
pub mod transcript;

pub use agent::Agent;
pub use agents::{AGENTS, agent, by_hook_command};

use lidguard_core::event::{
    AgentEvent, Decision, EventKind, RAW_EXCERPT_BYTES, WorkKind, truncate_bytes,
};
use lidguard_core::provider::Provider;
use lidguard_core::session::derived_session_id;

/// One hook invocation's input.
#[derive(Clone, Copy, Debug)]
pub struct HookInput<'a> {
    /// stdin, as received.
    pub stdin: &'a [u8],
    /// The `--event` argument (Copilot and OpenCode name the event there).
    pub event_arg: Option<&'a str>,
    /// The hook process's working directory, for payloads without `cwd`.
    pub process_cwd: Option<&'a str>,
    /// The local time, asked only by a payload that needs it (Claude's scheduled wake-ups).
    pub now: fn() -> jiff::ZonedDateTime,
}

/// Why a payload could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// Not JSON, or not the expected shape.
    #[error("the {provider} hook payload is not valid JSON: {source}")]
    Json {
        /// Which dialect.
        provider: Provider,
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// No event name anywhere.
    #[error("the {0} hook payload names no event; pass --event <name>")]
    NoEvent(Provider),
    /// This provider has no hook dialect.
    #[error("{0} has no hook dialect")]
    Unsupported(Provider),
}

/// Parses one hook invocation of `provider`.
pub fn parse(provider: Provider, input: &HookInput<'_>) -> Result<Vec<AgentEvent>, ParseError> {
    let agent = agent(provider).ok_or(ParseError::Unsupported(provider))?;
    let mut events = (agent.dialect.parse)(input)?;
    let raw = String::from_utf8_lossy(truncate_bytes_raw(input.stdin)).into_owned();
    for event in &mut events {
        event.raw = Some(raw.clone());
    }
    Ok(events)
}

/// The stdout that tells `provider` about `decision` for `hook_event`, or `None` when that
/// event has no way to carry it (then the hook prints nothing).
pub fn render(provider: Provider, hook_event: &str, decision: &Decision) -> Option<String> {
    agent(provider).and_then(|a| (a.dialect.render)(hook_event, decision))
}

/// The hook output that continues an agent's turn with the user's reply (ask before sleep):
/// one line, printed by the hook of a continuable stop.
pub fn render_continuation(provider: Provider, reply: &str) -> Option<String> {
    agent(provider).and_then(|a| (a.dialect.render_continuation)(reply))
}

fn truncate_bytes_raw(stdin: &[u8]) -> &[u8] {
    let end = stdin.len().min(RAW_EXCERPT_BYTES);
    // Cut on a UTF-8 boundary when the bytes are text.
    match std::str::from_utf8(&stdin[..end]) {
        Ok(_) => &stdin[..end],
        Err(e) => &stdin[..e.valid_up_to()],
    }
}

/// The session id to use: the provider's, else one derived from the working directory.
pub(crate) fn session_id(provider: Provider, given: Option<&str>, cwd: Option<&str>) -> String {
    match given.map(str::trim).filter(|s| !s.is_empty()) {
        Some(id) => id.to_owned(),
        None => derived_session_id(provider, cwd.unwrap_or("/")),
    }
}

/// A prompt cut to what the log keeps.
pub(crate) fn prompt_text(prompt: Option<&str>) -> Option<String> {
    prompt.map(|p| lidguard_core::event::truncate_chars(p, lidguard_core::event::PROMPT_CHARS))
}

/// Text cut for storage, on a character boundary.
pub(crate) fn bounded(text: Option<&str>, max: usize) -> Option<String> {
    text.map(|t| truncate_bytes(t, max).to_owned())
}

/// Permission requests: what the phone is shown (a safe summary of the command or path) and
/// the digest a remote answer binds to (`sha256:<hex>` of the tool input as JSON, keys in
/// order). Nothing of the input besides that summary leaves the machine.
pub(crate) fn permission_details(event: &mut AgentEvent, input: Option<&serde_json::Value>) {
    use sha2::Digest;
    if !matches!(
        event.kind,
        lidguard_core::event::EventKind::PermissionRequested { .. }
    ) {
        return;
    }
    let Some(input) = input else {
        return;
    };
    event.tool_summary = lidguard_core::remote::safe_summary(input);
    let bytes = serde_json::to_vec(input).unwrap_or_default();
    let digest = sha2::Sha256::digest(&bytes);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    event.tool_input_digest = Some(format!("sha256:{hex}"));
}

/// The event a payload is for: the name it carries, else the `--event` argument.
pub(crate) fn event_name(
    provider: Provider,
    in_payload: Option<&str>,
    input: &HookInput<'_>,
) -> Result<String, ParseError> {
    in_payload
        .or(input.event_arg)
        .map(str::to_owned)
        .ok_or(ParseError::NoEvent(provider))
}

/// A piece of work (a subagent, a task) starting or finishing, by its id; without an id there
/// is nothing to follow, so it is telemetry.
pub(crate) fn work_event(id: Option<&String>, work: WorkKind, starting: bool) -> EventKind {
    match id {
        Some(id) if starting => EventKind::WorkStarted {
            work_id: id.clone(),
            work,
        },
        Some(id) => EventKind::WorkFinished {
            work_id: id.clone(),
        },
        None => EventKind::Telemetry,
    }
}

/// Parses JSON, naming the provider on failure.
pub(crate) fn from_json<T: serde::de::DeserializeOwned>(
    provider: Provider,
    stdin: &[u8],
) -> Result<T, ParseError> {
    serde_json::from_slice(stdin).map_err(|source| ParseError::Json { provider, source })
}
