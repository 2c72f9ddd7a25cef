//! lidguard's two stdio MCP servers, built on the official Rust MCP SDK (`rmcp`):
//!
//! - [`ControlServer`] (`lidguard mcp-server`): read the settings and sessions, change the
//!   settings a model may change, remove sessions, set and clear soft-locks.
//! - [`ProviderServer`] (`lidguard provider-mcp-server --provider-name N`): lets a model that
//!   has no hooks report its own session's lifecycle. Best effort: it works only as well as the
//!   model calls the tools.
//!
//! Both talk to the daemon through the same socket protocol as the CLI. stdout carries MCP
//! frames only; diagnostics go through `tracing` (the caller sends them to stderr or the log).

mod args;
mod control;
mod provider;
mod reply;
mod runtime;
mod stdio;
mod update;

pub use control::ControlServer;
pub use provider::ProviderServer;

use rmcp::ServerHandler;

/// Why a server stopped other than by its client closing stdin.
pub type ServeError = Box<dyn std::error::Error + Send + Sync>;

/// Serves `server` on stdin and stdout until the client closes stdin.
pub async fn serve_stdio<S: ServerHandler>(server: S) -> Result<(), ServeError> {
    stdio::serve(server).await
}
