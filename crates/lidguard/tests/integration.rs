//! Integration tests: the real `lidguard` binary, the real daemon, real sockets and SQLite,
//! and the real systemd-logind on a private system bus.
#![allow(clippy::print_stderr, reason = "skipped tests say why")]
#![allow(
    clippy::disallowed_methods,
    reason = "tests write fixtures and read the environment"
)]

// Test helpers: a private LIDGUARD_HOME per test, commands, the raw socket.
mod util;

// Every captured agent payload through the real hook binary, lid open and closed.
mod conformance;
// Session lifecycle through the CLI and the socket; `status --json` as a contract.
mod daemon;
// hook-install / hook-status / hook-remove and the snippets.
mod hook_config;
// `lidguard events`: the stream, checked against its schema, under load.
mod events;
// `lidguard live-status` under tmux.
mod live_status;
// Hooks: fail open, launch rules, closed-lid decisions, concurrency.
mod hooks;
// The MCP servers over stdio: tools/list snapshots, protocol errors, a Provider MCP session.
mod mcp;
// The phone over a loopback ntfy: remote decisions, needs-you notices, ask before sleep.
mod phone;
// The closed-lid suspend flow with fake lid, display and thermal trees; the diagnostics.
mod power;
// Captured agent sessions replayed through the real hooks, with the state after each step.
mod scenarios;
// Keep-awake through systemd-logind: inhibitors held, released, and gone after kill -9.
mod logind;
// Hostile or broken surroundings: bad requests, other users, corrupt files, bad directories.
mod robustness;
// The daemon watching agents: process exit (cancel path), transcripts and their detectors.
mod watchers;
// The WSL bridge commands with a stand-in for wsl.exe.
mod wsl;
// `lidguard service`: the user units verified, and socket activation.
mod service;
// `lidguard run -- CMD`: exit code, output and signals pass through; a session meanwhile.
mod run;
// macOS's plain parts: macos-permission's files, SleepDisabled put back after a dead daemon.
mod macos;
// Webhooks to a receiver on loopback.
mod webhooks;
// Ask before sleep against a receiver that speaks the reference receiver's protocol.
mod ask;
// `lidguard settings` and `help`.
mod settings;
// What lidguard writes keeps the user's permissions, links and bytes.
mod trust;
// House rules: every test file compiled; the event schema's providers.
mod guards;
// `lidguard ssh` against a real sshd on loopback: the relay, its limits and its lease.
mod relay;
// The far side as the less trusted party: a relay's bounds, a TCP relay's secret first.
mod far_side;
// `lidguard tray`: the StatusNotifierItem and its menu on a private session bus.
mod tray;
