//! Tool arguments shared by both servers, and their JSON schemas.

use std::borrow::Cow;

use lidguard_core::provider::Provider;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Deserialize;

/// An argument a model passed that lidguard does not take; the text is the tool's error.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BadArg {
    #[error("sessionId must not be empty")]
    EmptySessionId,
    #[error("reason must be one short line (at most 200 characters), e.g. waiting_for_user_input")]
    LongReason,
    #[error("provider `mcp` sessions also need providerName (as list_sessions shows it)")]
    NoProviderName,
}

impl From<BadArg> for String {
    fn from(bad: BadArg) -> String {
        bad.to_string()
    }
}

/// A session id as a model passes it: trimmed, never empty.
pub(crate) fn session_id(raw: &str) -> Result<String, BadArg> {
    let id = raw.trim();
    if id.is_empty() {
        return Err(BadArg::EmptySessionId);
    }
    Ok(id.to_owned())
}

/// A soft-lock reason: one short line; a default when none is given.
pub(crate) fn reason(raw: Option<&str>, default: &str) -> Result<String, BadArg> {
    let text = raw
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .unwrap_or(default);
    if text.chars().count() > 200 || text.contains(['\n', '\r']) {
        return Err(BadArg::LongReason);
    }
    Ok(text.to_owned())
}

/// A provider name as the user gives it (`codex`, `claude`, ...).
#[derive(Clone, Debug, Deserialize)]
#[serde(try_from = "String")]
pub(crate) struct ProviderArg(pub(crate) Provider);

impl TryFrom<String> for ProviderArg {
    type Error = String;

    fn try_from(value: String) -> Result<Self, Self::Error> {
        value.parse().map(ProviderArg).map_err(|e| e.to_string())
    }
}

impl JsonSchema for ProviderArg {
    fn schema_name() -> Cow<'static, str> {
        "Provider".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let names: Vec<&str> = Provider::ALL.iter().map(|p| p.as_str()).collect();
        json_schema!({
            "type": "string",
            "enum": names,
            "description": "The agent (mcp: Provider MCP sessions, which also need providerName)."
        })
    }
}

/// Names the session of another agent (`mcp-server`'s soft-lock tools).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SessionSoftLockArgs {
    /// The agent that owns the session.
    pub(crate) provider: ProviderArg,
    /// The session id exactly as `list_sessions` shows it.
    #[serde(alias = "sessionIdentifier")]
    pub(crate) session_id: String,
    /// For provider `mcp` only: the provider name of the session.
    #[serde(default)]
    pub(crate) provider_name: Option<String>,
    /// A short machine-readable reason, e.g. `waiting_for_user_input`.
    #[serde(default)]
    pub(crate) reason: Option<String>,
}

impl SessionSoftLockArgs {
    /// The session on the wire, checking the provider-name rule.
    pub(crate) fn session(&self) -> Result<lidguard_ipc::protocol::SessionRef, BadArg> {
        let name = self
            .provider_name
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty());
        if self.provider.0 == Provider::Mcp && name.is_none() {
            return Err(BadArg::NoProviderName);
        }
        Ok(lidguard_ipc::protocol::SessionRef {
            provider: self.provider.0,
            session_id: session_id(&self.session_id)?,
            provider_name: name
                .filter(|_| self.provider.0 == Provider::Mcp)
                .map(str::to_owned),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_schema_lists_every_provider_and_parsing_agrees() {
        let schema = serde_json::to_value(schemars::schema_for!(ProviderArg)).unwrap();
        let names = schema["enum"].as_array().unwrap();
        assert_eq!(names.len(), Provider::ALL.len());
        for name in names {
            let parsed: ProviderArg = serde_json::from_value(name.clone()).unwrap();
            assert_eq!(parsed.0.as_str(), name.as_str().unwrap());
        }
        let err = serde_json::from_value::<ProviderArg>("nope".into()).unwrap_err();
        assert!(err.to_string().contains("expected one of"), "{err}");
    }

    #[test]
    fn reasons_are_one_short_line() {
        assert_eq!(reason(None, "d").unwrap(), "d");
        assert_eq!(reason(Some("  "), "d").unwrap(), "d");
        assert_eq!(
            reason(Some(" waiting_for_approval "), "d").unwrap(),
            "waiting_for_approval"
        );
        assert!(reason(Some("a\nb"), "d").is_err());
        assert!(reason(Some(&"x".repeat(201)), "d").is_err());
        assert!(session_id(" ").is_err());
    }
}
