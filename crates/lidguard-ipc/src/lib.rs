//! What the lidguard CLI, hooks, MCP servers and daemon share: where files live, the
//! settings file, and the local-socket protocol with its synchronous client.
//!
//! The client is plain `std` so a hook process can use it without starting an async runtime:
//! connect, write one JSON line, read one JSON line.
// Unit tests write fixtures and set variables directly; the lib build (clippy --all-targets
// checks it without cfg(test)) keeps the one-writer and injected-environment rules.
#![cfg_attr(
    test,
    allow(clippy::disallowed_methods, reason = "tests write fixtures")
)]

pub mod client;
pub mod places;
pub mod protocol;
pub mod relay;
pub mod settings_file;
pub mod stream;
#[cfg(windows)]
pub mod windows_identity;
pub mod words;

pub use client::Daemon;
pub use places::Places;
pub use protocol::{PROTOCOL_VERSION, Request, Response};
