//! `lidguard provider-mcp-server --provider-name N`: a model without lidguard hooks reports
//! its own session's lifecycle. Sessions are keyed by (`mcp`, session id, provider name), so
//! two provider names never share a session. Best effort: this works only as well as the model
//! calls the tools at the right moments. Ask-before-sleep continuation is not offered here.

use lidguard_core::provider::Provider;
use lidguard_core::session::StopKind;
use lidguard_ipc::Places;
use lidguard_ipc::protocol::{Outcome, Request, SessionRef};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::args::{reason, session_id};
use crate::reply;
use crate::runtime::{Answer, NOT_RUNNING, Runtime};

/// Arguments of `provider_start_session`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct StartArgs {
    /// The directory the work happens in, if known (shown in `lidguard status`).
    #[serde(default)]
    working_directory: Option<String>,
}

/// Arguments of `provider_stop_session`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct StopArgs {
    /// The id provider_start_session returned for this session, verbatim.
    #[serde(alias = "sessionIdentifier")]
    session_id: String,
}

/// Arguments of `provider_set_soft_lock`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SetSoftLockArgs {
    /// The id provider_start_session returned for this session, verbatim.
    #[serde(alias = "sessionIdentifier")]
    session_id: String,
    /// Why the turn waits, as a short machine reason: waiting_for_user_input,
    /// waiting_for_clarification, waiting_for_approval, waiting_for_credentials or
    /// waiting_for_manual_step.
    reason: String,
}

/// Arguments of `provider_clear_soft_lock`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ClearSoftLockArgs {
    /// The id provider_start_session returned earlier for this session, verbatim.
    #[serde(alias = "sessionIdentifier")]
    session_id: String,
    /// Optional short reason, e.g. resumed_after_user_reply.
    #[serde(default)]
    reason: Option<String>,
}

/// The `provider-mcp-server` tools for one provider name.
#[derive(Clone, Debug)]
pub struct ProviderServer {
    runtime: Runtime,
    provider_name: String,
    tool_router: ToolRouter<ProviderServer>,
}

/// A new session id: the first 8 lowercase hex characters of a random UUID.
fn new_session_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..8].to_owned()
}

#[tool_router]
impl ProviderServer {
    /// A server for the provider name `provider_name` (already checked non-empty).
    pub fn new(places: Places, provider_name: &str) -> ProviderServer {
        ProviderServer {
            runtime: Runtime::new(places),
            provider_name: provider_name.trim().to_owned(),
            tool_router: Self::tool_router(),
        }
    }

    fn session(&self, id: String) -> SessionRef {
        SessionRef {
            provider: Provider::Mcp,
            session_id: id,
            provider_name: Some(self.provider_name.clone()),
        }
    }

    #[tool(
        description = "Call once at the start of a brand-new session, before autonomous work \
        begins, so lidguard keeps the machine awake (lid closed included) while you work. \
        lidguard generates the session id and returns it as sessionId: do not invent one. Save \
        that id and reuse it verbatim with provider_set_soft_lock, provider_clear_soft_lock and \
        provider_stop_session until the work is truly complete. Do not call this again for the \
        same session: when the user replies after a soft-lock, call provider_clear_soft_lock \
        with the earlier id instead. Best effort: lidguard only knows what these calls tell it."
    )]
    async fn provider_start_session(
        &self,
        Parameters(args): Parameters<StartArgs>,
    ) -> CallToolResult {
        let id = new_session_id();
        let cwd = args
            .working_directory
            .map(|d| d.trim().to_owned())
            .filter(|d| !d.is_empty());
        let request = Request::Start {
            session: self.session(id.clone()),
            cwd,
            transcript_path: None,
            // Provider MCP sessions never watch a process: the server's parent is the client,
            // which may outlive or predate the session.
            watched_pid: None,
        };
        match self.runtime.send_starting(request).await {
            Answer::Reply(r) if r.ok => {
                self.result(
                    "provider_start_session",
                    &id,
                    format!(
                        "Started lidguard session {id}. Reuse sessionId \"{id}\" verbatim with \
                     provider_set_soft_lock, provider_clear_soft_lock and provider_stop_session; \
                     do not start another session for this work."
                    ),
                )
                .await
            }
            Answer::Reply(r) => {
                reply::error(format!("lidguard did not start the session: {}", r.message))
            }
            Answer::NotRunning => reply::error(
                "lidguard's runtime could not be started; the machine is not kept awake. Tell the user to check `lidguard status`.",
            ),
            Answer::Unreachable(e) => reply::error(format!(
                "lidguard's runtime could not be reached ({e}); the machine is not kept awake."
            )),
        }
    }

    #[tool(
        description = "Call only right before ending your turn when the work is truly \
        complete and the machine no longer needs to stay awake for it. lidguard then stops \
        tracking the session and may let the machine sleep. Do not call this when you pause to \
        wait for the user: use provider_set_soft_lock for that. Pass the sessionId \
        provider_start_session returned."
    )]
    async fn provider_stop_session(
        &self,
        Parameters(args): Parameters<StopArgs>,
    ) -> CallToolResult {
        let id = match session_id(&args.session_id) {
            Ok(id) => id,
            Err(e) => return reply::error(e),
        };
        let request = Request::Stop {
            session: self.session(id.clone()),
            kind: StopKind::ProviderEnd,
            end_reason: Some("provider_stop_session".into()),
            pending_work: None,
        };
        match self.runtime.send(request).await {
            Answer::Reply(r) if r.outcome == Outcome::UnknownSession => {
                reply::error(self.unknown(&id))
            }
            Answer::Reply(r) if r.outcome == Outcome::AlreadyStopped => {
                let summary = format!("Session {id} {}; nothing more to do.", r.message);
                self.result("provider_stop_session", &id, summary).await
            }
            Answer::Reply(r) if r.ok => {
                self.result(
                    "provider_stop_session",
                    &id,
                    format!("Stopped lidguard session {id}."),
                )
                .await
            }
            Answer::Reply(r) => reply::error(r.message),
            // Nothing runs, so nothing keeps the machine awake: the stop has nothing to undo.
            Answer::NotRunning => {
                self.result(
                    "provider_stop_session",
                    &id,
                    format!("Session {id} is not tracked: {NOT_RUNNING}"),
                )
                .await
            }
            Answer::Unreachable(e) => reply::error(e),
        }
    }

    #[tool(
        description = "Soft-lock: call right before you end a turn to wait for the user \
        (a missing decision, approval of a risky action, credentials, a manual step). The session \
        stays tracked but stops keeping the machine awake, so a closed laptop can sleep while \
        nobody answers. This tool cannot end your turn for you: after calling it, stop working \
        and hand control back to the user yourself. Do not call it while you can still continue, \
        while tools run, for progress updates, or when the work is done (use \
        provider_stop_session). Pass the sessionId provider_start_session returned."
    )]
    async fn provider_set_soft_lock(
        &self,
        Parameters(args): Parameters<SetSoftLockArgs>,
    ) -> CallToolResult {
        let (id, reason) = match (
            session_id(&args.session_id),
            reason(Some(&args.reason), "waiting_for_user_input"),
        ) {
            (Ok(id), Ok(reason)) => (id, reason),
            (Err(e), _) | (_, Err(e)) => return reply::error(e),
        };
        let request = Request::SoftLock {
            session: self.session(id.clone()),
            reason: reason.clone(),
        };
        self.command(
            "provider_set_soft_lock",
            &id,
            request,
            format!("Session {id} is soft-locked ({reason}). End your turn now."),
        )
        .await
    }

    #[tool(
        description = "Call right after the user replies to a turn you ended with \
        provider_set_soft_lock, before continuing the work: it clears the soft-lock so lidguard \
        keeps the machine awake again. Use the sessionId provider_start_session returned \
        earlier; do not start a new session."
    )]
    async fn provider_clear_soft_lock(
        &self,
        Parameters(args): Parameters<ClearSoftLockArgs>,
    ) -> CallToolResult {
        let (id, reason) = match (
            session_id(&args.session_id),
            reason(args.reason.as_deref(), "resumed_after_user_reply"),
        ) {
            (Ok(id), Ok(reason)) => (id, reason),
            (Err(e), _) | (_, Err(e)) => return reply::error(e),
        };
        let request = Request::Activity {
            session: self.session(id.clone()),
            reason,
        };
        self.command(
            "provider_clear_soft_lock",
            &id,
            request,
            format!("Session {id} is active again."),
        )
        .await
    }
}

impl ProviderServer {
    /// Soft-lock commands: never start the runtime; an unknown session is an error that says
    /// what to do.
    async fn command(
        &self,
        tool: &str,
        id: &str,
        request: Request,
        done: String,
    ) -> CallToolResult {
        match self.runtime.send(request).await {
            Answer::Reply(r) if r.outcome == Outcome::UnknownSession => {
                reply::error(self.unknown(id))
            }
            Answer::Reply(r) if r.ok => self.result(tool, id, done).await,
            Answer::Reply(r) => reply::error(r.message),
            Answer::NotRunning => reply::error(format!(
                "{NOT_RUNNING} Session {id} is not tracked; call provider_start_session when new work begins."
            )),
            Answer::Unreachable(e) => reply::error(e),
        }
    }

    fn unknown(&self, id: &str) -> String {
        format!(
            "lidguard tracks no session {id} for provider name {}. Use the exact sessionId \
             provider_start_session returned; if that session already ended, start a new one \
             with provider_start_session when new work begins.",
            self.provider_name
        )
    }

    async fn result(&self, tool: &str, id: &str, summary: String) -> CallToolResult {
        reply::ok(&json!({
            "summary": summary,
            "requestedCommand": tool,
            "sessionId": id,
            "sessionIdToReuse": id,
            "provider": Provider::Mcp,
            "providerName": self.provider_name,
            "runtime": self.runtime.view().await,
        }))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for ProviderServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "lidguard-provider",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
                "lidguard keeps the laptop awake, lid closed included, while you work. Start a \
                 session with provider_start_session when new work begins and reuse its sessionId; \
                 soft-lock before ending a turn that waits for the user; clear the soft-lock when \
                 the user replies; stop only when the work is truly complete. This depends on you \
                 calling the tools at those moments; nothing else tells lidguard.",
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_are_eight_lowercase_hex_characters() {
        let a = new_session_id();
        assert_eq!(a.len(), 8);
        assert!(
            a.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()),
            "{a}"
        );
        assert_ne!(a, new_session_id());
    }
}
