//! Tool results: structured JSON (camelCase) with the same JSON as text for clients that only
//! read text, or an error result whose text says what to do.

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;

/// A successful result carrying `value` as structured content.
pub(crate) fn ok(value: &impl Serialize) -> CallToolResult {
    match serde_json::to_value(value) {
        Ok(json) => CallToolResult::structured(json),
        Err(e) => error(format!("lidguard could not encode its answer: {e}")),
    }
}

/// A tool error: the call did not do what was asked, and `message` says why and what to do.
pub(crate) fn error(message: impl Into<String>) -> CallToolResult {
    let message = message.into();
    tracing::info!(%message, "MCP tool error");
    CallToolResult::error(vec![ContentBlock::text(message)])
}
