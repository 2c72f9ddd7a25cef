//! `mcp-server` and `provider-mcp-server`: stdio MCP servers. stdout carries MCP frames only;
//! diagnostics go to the log file.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use lidguard_ipc::Places;
use lidguard_mcp::{ControlServer, ProviderServer};

pub(crate) fn serve_control(places: Places) -> anyhow::Result<ExitCode> {
    let server = ControlServer::new(places).on_hook_timeout_change(Arc::new(refresh_hooks));
    serve(lidguard_mcp::serve_stdio(server))
}

/// What `settings` does when the managed hook timeout changes, run as its own process so its
/// report is captured for the tool reply (this process's stdout carries MCP frames only).
fn refresh_hooks(old: u32, new: u32) -> String {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            return format!(
                "Installed hooks were not refreshed ({e}); run `lidguard hook-install --provider all`."
            );
        }
    };
    let out = std::process::Command::new(exe)
        .args(["refresh-hook-timeouts", &old.to_string(), &new.to_string()])
        .stdin(std::process::Stdio::null())
        .output();
    match out {
        Ok(out) => {
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
            if text.is_empty() {
                format!(
                    "The managed hook timeout is now {new} s; no installed hooks needed a change."
                )
            } else {
                text
            }
        }
        Err(e) => format!(
            "Installed hooks were not refreshed ({e}); run `lidguard hook-install --provider all`."
        ),
    }
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
