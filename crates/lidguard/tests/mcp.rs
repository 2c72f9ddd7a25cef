//! The MCP servers over real stdio pipes with raw JSON-RPC: the tools/list snapshot (schema
//! drift shows up as a diff), protocol errors that leave the server serving, and a Provider MCP
//! session seen by `status`. The full client-side suite with the official Python SDK is
//! `tests/e2e/mcp/mcp_suite.py`.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

use crate::util::{Home, eventually};

/// A server process and its pipes.
pub(crate) struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Server {
    pub(crate) fn start(home: &Home, args: &[&str]) -> Server {
        let mut child = home
            .cmd(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = Server {
            stdin: child.stdin.take(),
            child,
            lines,
        };
        let init = server.call(
            1,
            "initialize",
            &json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "lidguard-tests", "version": "0"}}),
        );
        assert_eq!(
            init["result"]["serverInfo"]["version"],
            env!("CARGO_PKG_VERSION")
        );
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
        server
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    fn read(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(20))
            .expect("the server answers");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}"))
    }

    fn call(&mut self, id: u64, method: &str, params: &Value) -> Value {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        let answer = self.read();
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }

    pub(crate) fn tool(&mut self, id: u64, name: &str, arguments: &Value) -> Value {
        self.call(
            id,
            "tools/call",
            &json!({"name": name, "arguments": arguments}),
        )["result"]
            .clone()
    }

    /// Closes stdin and waits for a clean exit.
    pub(crate) fn close(mut self) {
        drop(self.stdin.take());
        let exited = eventually(Duration::from_secs(5), || {
            matches!(self.child.try_wait(), Ok(Some(_)))
        });
        assert!(exited, "the server exits when stdin closes");
        assert!(self.child.wait().unwrap().success());
    }
}

fn snapshot_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(format!("{name}.tools.json"))
}

/// tools/list as committed; `LIDGUARD_BLESS=1` rewrites the snapshot after a deliberate change.
fn assert_snapshot(name: &str, tools: &Value) {
    let path = snapshot_path(name);
    let text = serde_json::to_string_pretty(tools).unwrap() + "\n";
    if std::env::var_os("LIDGUARD_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (LIDGUARD_BLESS=1 writes it)", path.display()));
    assert!(
        expected == text,
        "{name} tools/list changed; review the diff and run with LIDGUARD_BLESS=1 if intended:\n{}",
        similar::TextDiff::from_lines(&expected, &text).unified_diff()
    );
}

fn sorted_tools(answer: &Value) -> Value {
    let mut tools = answer["result"]["tools"].as_array().unwrap().clone();
    tools.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    Value::Array(tools)
}

#[test]
fn tools_list_matches_the_snapshots() {
    let home = Home::new();
    let mut control = Server::start(&home, &["mcp-server"]);
    assert_snapshot(
        "mcp-server",
        &sorted_tools(&control.call(2, "tools/list", &json!({}))),
    );
    control.close();
    let mut provider = Server::start(&home, &["provider-mcp-server", "--provider-name", "gemini"]);
    assert_snapshot(
        "provider-mcp-server",
        &sorted_tools(&provider.call(2, "tools/list", &json!({}))),
    );
    provider.close();
    assert!(home.daemon_pid().is_none(), "listing tools starts nothing");
}

#[test]
fn protocol_errors_leave_the_server_serving() {
    let home = Home::new();
    let mut server = Server::start(&home, &["mcp-server"]);
    server.send("{ this is not json");
    let parse = server.read();
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    assert!(parse["id"].is_null());

    let unknown_method = server.call(3, "no/such/method", &json!({}));
    assert!(unknown_method["error"].is_object(), "{unknown_method}");
    let unknown_tool = server.call(4, "tools/call", &json!({"name": "nope", "arguments": {}}));
    assert!(
        unknown_tool["error"].is_object() || unknown_tool["result"]["isError"] == true,
        "{unknown_tool}"
    );
    let wrong_type = server.tool(5, "remove_session", &json!({"sessionId": 7}));
    assert_eq!(wrong_type["isError"], true, "{wrong_type}");
    let unknown_field = server.tool(6, "remove_session", &json!({"session": "x"}));
    assert_eq!(unknown_field["isError"], true, "{unknown_field}");

    let listed = server.tool(7, "list_sessions", &json!({}));
    assert_eq!(listed["isError"], false, "{listed}");
    assert_eq!(listed["structuredContent"]["runtimeReachable"], false);
    server.close();
}

#[test]
fn a_refused_setting_changes_nothing_on_disk() {
    let home = Home::new();
    home.ok(&["settings", "--suspend-mode", "hibernate"]);
    let before = std::fs::read(home.places.settings_file()).unwrap();
    let mut server = Server::start(&home, &["mcp-server"]);
    let refused = server.tool(
        2,
        "update_settings",
        &json!({"postStopSuspendDelaySeconds": 30, "closedLidPermissionRequestDecision": "allow"}),
    );
    assert_eq!(refused["isError"], true);
    let message = refused["content"][0]["text"].as_str().unwrap();
    assert!(
        message.contains("lidguard settings --closed-lid-permission-request-decision"),
        "{message}"
    );
    assert_eq!(std::fs::read(home.places.settings_file()).unwrap(), before);

    let accepted = server.tool(
        3,
        "update_settings",
        &json!({"postStopSuspendDelaySeconds": 30}),
    );
    assert_eq!(accepted["isError"], false, "{accepted}");
    let saved = home.ok(&["settings", "--json"]);
    let saved: Value = serde_json::from_str(&saved).unwrap();
    assert_eq!(saved["postStopSuspendDelaySeconds"], 30);
    assert_eq!(saved["suspendMode"], "Hibernate", "other fields kept");
    server.close();
}

#[test]
fn a_provider_mcp_session_through_its_lifecycle() {
    let home = Home::new();
    let mut server = Server::start(&home, &["provider-mcp-server", "--provider-name", "gemini"]);
    let started = server.tool(
        2,
        "provider_start_session",
        &json!({"workingDirectory": "/w"}),
    );
    assert_eq!(started["isError"], false, "{started}");
    let id = started["structuredContent"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let session = home.session(&id).expect("tracked");
    assert_eq!(session["provider"], "mcp");
    assert_eq!(session["providerName"], "gemini");
    assert_eq!(
        session["watchedPid"],
        Value::Null,
        "Provider MCP never watches a process"
    );

    let locked = server.tool(
        3,
        "provider_set_soft_lock",
        &json!({"sessionId": id, "reason": "waiting_for_approval"}),
    );
    assert_eq!(locked["isError"], false, "{locked}");
    let status = home.status();
    assert_eq!(status["sessions"][0]["state"], "softLocked");
    assert_eq!(
        status["protection"]["wanted"], false,
        "the only session waits for the user"
    );

    let cleared = server.tool(4, "provider_clear_soft_lock", &json!({"sessionId": id}));
    assert_eq!(cleared["isError"], false);
    assert_eq!(home.status()["protection"]["wanted"], true);

    let stopped = server.tool(5, "provider_stop_session", &json!({"sessionId": id}));
    assert_eq!(stopped["isError"], false);
    assert!(home.session(&id).is_none());
    let again = server.tool(6, "provider_stop_session", &json!({"sessionId": id}));
    assert_eq!(
        again["isError"], false,
        "a second stop is harmless: {again}"
    );
    server.close();
}

/// The model may change the ask-before-sleep delays; installed hooks must then get the new
/// managed timeout, as with `lidguard settings` (README, Ask before sleep: hook timeouts).
#[test]
fn update_settings_refreshes_the_timeout_of_installed_hooks() {
    let home = Home::new();
    let claude = home.path().join("user-home/.claude");
    std::fs::create_dir_all(&claude).unwrap();
    home.ok(&["hook-install", "--provider", "claude"]);
    home.ok(&[
        "settings",
        "--closed-lid-stop-follow-up-webhook-url",
        "http://127.0.0.1:9/ask",
    ]);
    let timeouts = || -> Vec<u64> {
        let text = std::fs::read_to_string(claude.join("settings.json")).unwrap();
        let config: Value = serde_json::from_str(&text).unwrap();
        let mut found = Vec::new();
        for groups in config["hooks"].as_object().unwrap().values() {
            for group in groups.as_array().unwrap() {
                for hook in group["hooks"].as_array().unwrap() {
                    if hook["args"][0] == "claude-hook" {
                        found.push(hook["timeout"].as_u64().unwrap());
                    }
                }
            }
        }
        found
    };
    assert!(timeouts().iter().all(|t| *t == 490), "{:?}", timeouts());
    let mut server = Server::start(&home, &["mcp-server"]);
    let answer = server.tool(
        2,
        "update_settings",
        &json!({"closedLidStopFollowUpDelaySeconds": 60}),
    );
    assert_eq!(answer["isError"], false, "{answer}");
    let text = answer["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("refreshed the hook timeout for claude (490 s → 370 s)"),
        "{text}"
    );
    let now = timeouts();
    assert!(!now.is_empty() && now.iter().all(|t| *t == 370), "{now:?}");
    server.close();
}
