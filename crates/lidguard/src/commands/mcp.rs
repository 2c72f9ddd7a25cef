//! `mcp-server` and `provider-mcp-server`: stdio MCP servers. stdout carries MCP frames only;
//! diagnostics go to the log file.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use lidguard_ipc::Places;
use lidguard_mcp::{ControlServer, ProviderServer};

pub(crate) fn serve_control(places: Places) -> anyhow::Result<ExitCode> {
    let hook_command = lidguard_config::hook_command();
    serve(lidguard_mcp::serve_stdio(ControlServer::new(
        places,
        hook_command,
    )))
}

pub(crate) fn serve_provider(places: Places, provider_name: &str) -> anyhow::Result<ExitCode> {
    let name = provider_name.trim();
    if name.is_empty() {
        bail!(
            "--provider-name must not be empty; give the agent's name, e.g. --provider-name gemini"
        );
    }
    serve(lidguard_mcp::serve_stdio(ProviderServer::new(places, name)))
}

fn serve(
    server: impl Future<Output = Result<(), lidguard_mcp::ServeError>>,
) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(server);
    // A request still waiting on the daemon must not hold the exit.
    runtime.shutdown_timeout(Duration::from_millis(200));
    match result {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            tracing::error!(error = %e, "MCP server failed");
            bail!("the MCP server stopped: {e}")
        }
    }
}
