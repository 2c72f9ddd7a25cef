//! `lidguard mcp-server`: sessions and settings for any MCP client. It never starts the
//! daemon; without one it says so in every result.

use lidguard_core::settings::{Os, fields_for};
use lidguard_ipc::Places;
use lidguard_ipc::protocol::{Outcome, Request, SessionRef};
use lidguard_ipc::settings_file;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Implementation, JsonObject, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::args::{ProviderArg, SessionSoftLockArgs, reason, session_id};
use crate::runtime::{Answer, NOT_RUNNING, Runtime, RuntimeView};
use crate::{reply, update};
use lidguard_config::NoHookProgram;
use lidguard_config::settings::{HookTimeouts, Pushed};
use lidguard_providers::install::HookCommand;

/// Arguments of `remove_session`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RemoveArgs {
    /// The session id exactly as `list_sessions` shows it.
    #[serde(alias = "sessionIdentifier")]
    session_id: String,
    /// Only sessions of this agent.
    #[serde(default)]
    provider: Option<ProviderArg>,
    /// Only Provider MCP sessions with this provider name (with provider `mcp`).
    #[serde(default)]
    provider_name: Option<String>,
}

/// The stored and in-force settings with the runtime view.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SettingsStatus {
    summary: String,
    settings_file: String,
    stored_settings: Option<serde_json::Value>,
    settings_error: Option<String>,
    runtime_settings: Option<serde_json::Value>,
    user_only_settings: Vec<String>,
    runtime: RuntimeView,
}

/// The `mcp-server` tools.
#[derive(Clone, Debug)]
pub struct ControlServer {
    runtime: Runtime,
    os: Os,
    tool_router: ToolRouter<ControlServer>,
    /// The command lidguard's hook entries run, for refreshing their timeouts when
    /// `update_settings` moves the managed timeout (why it is unknown, otherwise).
    hook_command: Result<HookCommand, NoHookProgram>,
}

#[tool_router]
impl ControlServer {
    /// A server using lidguard's files and socket under `places`; `hook_command` is what
    /// lidguard's installed hook entries run (`Err`: why it is not known; then a timeout change
    /// says to rerun `hook-install`).
    pub fn new(places: Places, hook_command: Result<HookCommand, NoHookProgram>) -> ControlServer {
        let os = Os::current();
        let mut tool_router = Self::tool_router();
        if let Some(route) = tool_router.map.get_mut("update_settings") {
            route.attr.input_schema = update::input_schema(os);
        }
        ControlServer {
            runtime: Runtime::new(places),
            os,
            tool_router,
            hook_command,
        }
    }

    #[tool(
        description = "Read lidguard's settings: the stored file, the settings the running runtime uses, which fields only the user may change, and the sessions. Read-only.",
        annotations(read_only_hint = true)
    )]
    async fn get_settings_status(&self) -> CallToolResult {
        let path = self.runtime.places().settings_file();
        let (stored, settings_error) = match settings_file::load_or_default(&path, self.os) {
            Ok(s) => (Some(s.redacted_json()), None),
            Err(e) => (None, Some(e.to_string())),
        };
        let status = self.runtime.status().await;
        let runtime_settings = status.as_ref().ok().map(|s| s.settings.redacted_json());
        let runtime = RuntimeView::from(status.as_deref());
        let summary = match &settings_error {
            Some(e) => format!("The settings file cannot be used: {e}"),
            None => format!(
                "Settings read from {}. {}",
                path.display(),
                runtime.runtime_message
            ),
        };
        reply::ok(&SettingsStatus {
            summary,
            settings_file: path.display().to_string(),
            stored_settings: stored,
            settings_error,
            runtime_settings,
            user_only_settings: fields_for(self.os)
                .filter(|s| s.user_only())
                .map(|s| s.mcp_name())
                .collect(),
            runtime,
        })
    }

    #[tool(
        description = "List the agent sessions lidguard tracks, with the lid state, display counts and whether keep-awake protection is held. Read-only; does not start lidguard's runtime.",
        annotations(read_only_hint = true)
    )]
    async fn list_sessions(&self) -> CallToolResult {
        let view = self.runtime.view().await;
        let summary = view.runtime_message.clone();
        let mut value = json!(view);
        value["summary"] = json!(summary);
        reply::ok(&value)
    }

    #[tool(
        description = "Change several lidguard settings in one call; they are validated like `lidguard settings` and saved together, or nothing is saved. Omitted fields keep their values. A running runtime uses the new values at once; the runtime is never started. Fields that decide what happens without the user (closed-lid permission answers), where data is sent (webhook URLs) or guard the hardware (emergency hibernation) can only be changed by the user with the CLI: passing them is refused and changes nothing."
    )]
    async fn update_settings(&self, args: JsonObject) -> CallToolResult {
        let places = self.runtime.places().clone();
        let path = places.settings_file();
        let os = self.os;
        let hook_command = self.hook_command.clone();
        let applied =
            tokio::task::spawn_blocking(move || update::apply(&places, &args, os, hook_command))
                .await;
        let update = match applied {
            Ok(Ok(update)) => update,
            Ok(Err(message)) => return reply::error(message),
            Err(e) => return reply::error(format!("the update failed: {e}")),
        };
        let mut pushed = match &update.pushed {
            Pushed::NothingToSend => "No setting changed.".to_owned(),
            Pushed::Taken => "The running runtime uses them now.".to_owned(),
            Pushed::Refused(message) => format!("The running runtime did not take them: {message}"),
            Pushed::NotRunning => "No runtime is running; it reads them when it starts.".to_owned(),
            Pushed::Unreachable(e) => {
                format!("The runtime could not be reached ({e}); it reads them when it restarts.")
            }
        };
        let hooks: Vec<String> = update.hooks.lines().into_iter().map(|l| l.text).collect();
        if let HookTimeouts::Refreshed { new, .. } = &update.hooks
            && hooks.is_empty()
        {
            pushed.push_str(&format!(
                " The managed hook timeout is now {new} s; no installed hooks needed a change."
            ));
        }
        for line in hooks {
            pushed.push(' ');
            pushed.push_str(line.trim());
        }
        let summary = if update.changes.is_empty() {
            pushed
        } else {
            let names: Vec<&str> = update.changes.iter().map(|c| c.name.as_str()).collect();
            format!("Saved {} to {}. {pushed}", names.join(", "), path.display())
        };
        reply::ok(&json!({
            "summary": summary,
            "resetToDefaults": update.reset,
            "hadEffectiveChanges": !update.changes.is_empty(),
            "appliedChanges": update.changes,
            "previousStoredSettings": update.previous.redacted_json(),
            "updatedStoredSettings": update.updated.redacted_json(),
        }))
    }

    #[tool(
        description = "Stop tracking sessions by hand: every session with this id, optionally only of one provider (and, for provider `mcp`, one provider name). Does not start lidguard's runtime."
    )]
    async fn remove_session(&self, Parameters(args): Parameters<RemoveArgs>) -> CallToolResult {
        let id = match session_id(&args.session_id) {
            Ok(id) => id,
            Err(e) => return reply::error(e),
        };
        let provider_name = args
            .provider_name
            .map(|n| n.trim().to_owned())
            .filter(|n| !n.is_empty());
        let request = Request::RemoveSession {
            all: false,
            session_id: Some(id.clone()),
            provider: args.provider.map(|p| p.0),
            provider_name,
        };
        match self.runtime.send(request).await {
            Answer::Reply(r) if r.ok => reply::ok(&json!({
                "summary": r.message,
                "requestedSessionId": id,
                "removedSessions": r.sessions,
                "runtime": self.runtime.view().await,
            })),
            Answer::Reply(r) => reply::error(r.message),
            Answer::NotRunning => reply::ok(&json!({
                "summary": NOT_RUNNING,
                "requestedSessionId": id,
                "removedSessions": Vec::<SessionRef>::new(),
                "runtime": self.runtime.view().await,
            })),
            Answer::Unreachable(e) => reply::error(e),
        }
    }

    #[tool(
        description = "Mark a tracked session as waiting for the user (soft-locked): it stays tracked but no longer keeps the machine awake, until activity or clear_session_soft_lock. Does not start lidguard's runtime."
    )]
    async fn set_session_soft_lock(
        &self,
        Parameters(args): Parameters<SessionSoftLockArgs>,
    ) -> CallToolResult {
        self.session_command(&args, "mcp_set_session_soft_lock", |session, reason| {
            Request::SoftLock { session, reason }
        })
        .await
    }

    #[tool(
        description = "Clear a session's soft-lock: the session counts as working again and keeps the machine awake. Does not start lidguard's runtime."
    )]
    async fn clear_session_soft_lock(
        &self,
        Parameters(args): Parameters<SessionSoftLockArgs>,
    ) -> CallToolResult {
        self.session_command(&args, "mcp_clear_session_soft_lock", |session, reason| {
            Request::Activity { session, reason }
        })
        .await
    }
}

impl ControlServer {
    async fn session_command(
        &self,
        args: &SessionSoftLockArgs,
        default_reason: &str,
        request: impl FnOnce(SessionRef, String) -> Request,
    ) -> CallToolResult {
        let (session, reason) = match args
            .session()
            .and_then(|s| Ok((s, reason(args.reason.as_deref(), default_reason)?)))
        {
            Ok(both) => both,
            Err(e) => return reply::error(e),
        };
        let key = session.key().to_string();
        match self.runtime.send(request(session, reason)).await {
            Answer::Reply(r) if r.outcome == Outcome::UnknownSession => reply::error(format!(
                "lidguard tracks no session {key}; list_sessions shows the tracked ones."
            )),
            Answer::Reply(r) if r.ok => reply::ok(&json!({
                "summary": r.message,
                "session": key,
                "runtime": self.runtime.view().await,
            })),
            Answer::Reply(r) => reply::error(r.message),
            Answer::NotRunning => reply::error(NOT_RUNNING),
            Answer::Unreachable(e) => reply::error(e),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for ControlServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("lidguard", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "lidguard keeps the laptop awake, lid closed included, while coding agents work. \
                 These tools read its sessions and settings and change the settings a model may \
                 change; they never start its runtime.",
            )
    }
}
