//! Captured agent sessions replayed, event by event, through the real hook binary against a
//! real daemon, checking the session state `status --json` shows after the events that change
//! it. The payloads are the conformance fixtures, in the order the agent sent them.

use std::path::Path;

use serde_json::Value;

use crate::util::{Home, hook_args, pipe};

fn fixture(provider: &str, name: &str) -> (String, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(provider)
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let fixture: Value = serde_json::from_str(&text).unwrap();
    let stdin = match &fixture["stdin"] {
        Value::String(s) => s.clone(),
        other => serde_json::to_string(other).unwrap(),
    };
    (fixture["event"].as_str().unwrap().to_owned(), stdin)
}

/// Sends one fixture through `lidguard <provider>-hook`; returns stdout.
fn send(home: &Home, provider: &str, name: &str) -> String {
    let (event, stdin) = fixture(provider, name);
    let args = hook_args(provider, &event);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = pipe(home.cmd(&args), stdin.as_bytes());
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

/// The one agent session in `status --json` (other than none), or `None` when it ended.
fn only_session(home: &Home) -> Option<Value> {
    let status = home.status();
    let sessions = status["sessions"].as_array()?;
    assert!(sessions.len() <= 1, "{status}");
    sessions.first().cloned()
}

#[track_caller]
fn assert_state(home: &Home, state: &str, reason: Option<&str>, pending: bool) {
    let s = only_session(home).expect("the session is tracked");
    assert_eq!(s["state"], state, "{s}");
    assert_eq!(s["softLockReason"].as_str(), reason, "{s}");
    assert_eq!(s["pendingProviderWork"], pending, "{s}");
}

#[test]
fn claude_background_shell_keeps_the_session_until_its_notice_and_the_next_stop() {
    let home = Home::new();
    let c = |name: &str| send(&home, "claude", &format!("print-background-bash__{name}"));
    c("SessionStart");
    assert!(
        home.daemon_pid().is_none(),
        "SessionStart does not start the daemon"
    );
    c("UserPromptSubmit");
    assert_state(&home, "active", None, false);
    c("PreToolUse");
    c("PostToolUse");
    c("Stop");
    assert_state(&home, "active", None, true);
    let s = only_session(&home).unwrap();
    assert!(
        crate::util::text(&s["pendingProviderWorkReason"]).contains("background"),
        "{s}"
    );
    // The completion notice arrives as a prompt: it finishes the work, it is no new session.
    c("UserPromptSubmit.2");
    assert_state(&home, "active", None, true);
    c("Stop.2");
    assert!(
        only_session(&home).is_none(),
        "the second Stop ends the session"
    );
    c("SessionEnd");
    assert!(only_session(&home).is_none());
}

#[test]
fn claude_async_subagent_defers_the_stop_until_it_reports_back() {
    let home = Home::new();
    let c = |name: &str| send(&home, "claude", &format!("print-subagent__{name}"));
    c("UserPromptSubmit");
    c("PreToolUse");
    c("PostToolUse");
    c("SubagentStart");
    c("Stop");
    assert_state(&home, "active", None, true);
    c("SubagentStop");
    c("UserPromptSubmit.2");
    c("Stop.2");
    assert!(only_session(&home).is_none());
}

#[test]
fn claude_permission_prompt_soft_locks_and_the_approved_tool_clears_it() {
    let home = Home::new();
    let c = |name: &str| send(&home, "claude", &format!("tmux-permission__{name}"));
    c("UserPromptSubmit");
    c("PreToolUse");
    assert_eq!(
        c("PermissionRequest"),
        "",
        "lid unknown here: the normal prompt appears"
    );
    assert_state(&home, "active", None, false);
    c("Notification");
    assert_state(&home, "softLocked", Some("permission_prompt"), false);
    assert_eq!(home.status()["protection"]["wanted"], false);
    c("PostToolUse");
    assert_state(&home, "active", None, false);
    c("Stop");
    assert!(only_session(&home).is_none());
    // The idle notification a minute later changes nothing.
    c("Notification.2");
    assert!(only_session(&home).is_none());
}

#[test]
fn claude_elicitation_waits_and_its_result_resumes() {
    let home = Home::new();
    let c = |name: &str| send(&home, "claude", &format!("tmux-elicitation__{name}"));
    c("UserPromptSubmit");
    c("PreToolUse");
    assert_eq!(c("Elicitation"), "");
    c("ElicitationResult");
    assert_state(&home, "active", None, false);
}

#[test]
fn claude_api_error_ends_the_turn_with_stop_failure() {
    let home = Home::new();
    send(&home, "claude", "tmux-api-error__UserPromptSubmit");
    assert_state(&home, "active", None, false);
    send(&home, "claude", "tmux-api-error__StopFailure");
    assert!(only_session(&home).is_none());
    let events: Value = serde_json::from_str(&home.ok(&["hook-events", "--json"])).unwrap();
    let last = events.as_array().unwrap().last().unwrap();
    assert_eq!(last["kind"], "turn-failed");
    assert_eq!(last["outcome"], "stopped");
}

#[test]
fn claude_session_cron_holds_the_session_until_it_wakes_it_and_the_wake_up_works() {
    // Claude Code 2.1.337: CronCreate every minute, the turn ends, the cron fires a minute later.
    let home = Home::new();
    let c = |name: &str| send(&home, "claude", &format!("sdk-tmux-cron__{name}"));
    c("UserPromptSubmit");
    for name in ["PreToolUse", "PostToolUse", "PreToolUse.2", "PostToolUse.2"] {
        c(name);
    }
    c("Stop");
    // Its Stop names the cron (`*/1 * * * *`): the next whole minute, within the timeout.
    assert_state(&home, "active", None, true);
    let s = only_session(&home).unwrap();
    let wakes: jiff::Timestamp = s["wakesAt"].as_str().expect("wakesAt").parse().unwrap();
    let ahead = wakes.duration_since(jiff::Timestamp::now());
    assert!(ahead.as_secs() > 0 && ahead.as_secs() <= 60, "{s}");
    let text = home.ok(&["status"]);
    assert!(
        text.contains("held for its own scheduled wake-up"),
        "{text}"
    );
    // Claude says it waits for input (idle_prompt): the wake-up still holds the session.
    c("Notification");
    assert!(only_session(&home).unwrap()["pendingProviderWork"] == true);
    // The cron fires: Claude submits its prompt, a new turn works.
    c("UserPromptSubmit.2");
    assert_state(&home, "active", None, false);
    c("Stop.2");
    assert_state(&home, "active", None, true);
}

#[test]
fn claude_interrupt_ends_the_turn_whatever_stopped_it() {
    // Claude Code 2.1.337's Interrupt: Esc while the model answers, during a tool, and a
    // permission refused with Esc; each is the turn's only end (no Stop follows).
    for scenario in [
        "sdk-tmux-interrupt",
        "sdk-tmux-interrupt-tool",
        "sdk-tmux-permission-refused",
    ] {
        let home = Home::new();
        let c = |name: &str| send(&home, "claude", &format!("{scenario}__{name}"));
        c("UserPromptSubmit");
        assert_state(&home, "active", None, false);
        c("Interrupt");
        assert!(only_session(&home).is_none(), "{scenario}: ended");
    }
}

#[test]
fn codex_turn_interrupt_and_permission() {
    let home = Home::new();
    let x = |name: &str| send(&home, "codex", name);
    x("exec-bash__SessionStart");
    x("exec-bash__UserPromptSubmit");
    assert_state(&home, "active", None, false);
    x("exec-bash__PreToolUse");
    x("exec-bash__PostToolUse");
    x("exec-bash__Stop");
    assert!(only_session(&home).is_none());
    x("exec-bash__SessionEnd");

    x("tui-interrupt__UserPromptSubmit");
    assert_state(&home, "active", None, false);
    x("tui-interrupt__Interrupt");
    assert!(
        only_session(&home).is_none(),
        "an interrupt ends the turn; no Stop follows"
    );

    x("tui-permission__UserPromptSubmit");
    assert_eq!(x("tui-permission__PermissionRequest"), "");
    x("tui-permission__PostToolUse");
    x("tui-permission__Stop");
    assert!(only_session(&home).is_none());
}

#[test]
fn codex_subagent_is_tracked_until_it_stops() {
    let home = Home::new();
    let x = |name: &str| send(&home, "codex", &format!("exec-subagent__{name}"));
    x("UserPromptSubmit");
    x("PreToolUse");
    x("PostToolUse");
    x("SubagentStart");
    // The child's own prompt shares the parent's session id: an update, not a second session.
    x("UserPromptSubmit.2");
    assert_state(&home, "active", None, false);
    x("SubagentStop");
    x("Stop");
    assert!(only_session(&home).is_none());
}

#[test]
fn copilot_async_shell_defers_the_stop_until_its_completion_notice() {
    let home = Home::new();
    let p = |name: &str| send(&home, "copilot", &format!("async-shell-notify__{name}"));
    p("userPromptSubmitted");
    p("sessionStart");
    assert_state(&home, "active", None, false);
    p("preToolUse");
    assert_eq!(
        p("permissionRequest"),
        "",
        "Copilot asks for every tool: not answered"
    );
    p("postToolUse");
    p("agentStop");
    assert_state(&home, "active", None, true);
    p("sessionEnd");
    assert_state(&home, "active", None, true);
    // Copilot's own turn for the completion: a notice, not a prompt.
    p("userPromptSubmitted.2");
    assert_state(&home, "active", None, true);
    p("notification");
    p("agentStop");
    assert!(only_session(&home).is_none());
}

#[test]
fn copilot_permission_prompt_soft_locks_until_the_turn_ends() {
    let home = Home::new();
    let p = |name: &str| send(&home, "copilot", &format!("permission-denied__{name}"));
    p("userPromptSubmitted");
    p("preToolUse");
    p("permissionRequest");
    assert_state(&home, "active", None, false);
    p("notification");
    assert_state(&home, "softLocked", Some("permission_prompt"), false);
    p("agentStop");
    assert!(only_session(&home).is_none());
}

#[test]
fn opencode_question_waits_and_the_answer_resumes() {
    let home = Home::new();
    let o = |name: &str| send(&home, "opencode", &format!("serve-question__{name}"));
    o("chat.message");
    assert_state(&home, "active", None, false);
    o("tool.execute.before");
    o("question.asked");
    assert_state(&home, "softLocked", Some("question.asked"), false);
    o("question.replied");
    assert_state(&home, "active", None, false);
    o("tool.execute.after");
    o("session.idle");
    assert!(only_session(&home).is_none());
}

#[test]
fn opencode_and_kilo_questions_wait_and_a_reply_or_a_dismissal_resumes() {
    // OpenCode 1.18.33 and Kilo 7.7.7 (`serve`): `question.asked` waits for the user like a
    // permission prompt; `question.replied` and `question.rejected` end the wait.
    for (provider, scenario, answer) in [
        ("opencode", "serve-question-reject", "question.rejected"),
        ("kilo", "serve-question", "question.replied"),
        ("kilo", "serve-question-reject", "question.rejected"),
    ] {
        let home = Home::new();
        let o = |name: &str| send(&home, provider, &format!("{scenario}__{name}"));
        o("chat.message");
        assert_state(&home, "active", None, false);
        o("tool.execute.before");
        o("question.asked");
        assert_state(&home, "softLocked", Some("question.asked"), false);
        o(answer);
        assert_state(&home, "active", None, false);
        o("session.idle");
        assert!(only_session(&home).is_none(), "{provider} {scenario}");
    }
}

#[test]
fn opencode_permission_waits_until_answered_and_an_api_error_ends_the_session() {
    let home = Home::new();
    let o = |name: &str| {
        send(
            &home,
            "opencode",
            &format!("serve-permission-plugin-reply__{name}"),
        )
    };
    o("chat.message");
    o("tool.execute.before");
    assert_eq!(
        o("permission.asked"),
        "",
        "lid unknown here: nothing answered"
    );
    assert_state(&home, "softLocked", Some("permission.asked"), false);
    o("permission.replied");
    assert_state(&home, "active", None, false);
    o("session.idle");
    assert!(only_session(&home).is_none());

    let e = |name: &str| send(&home, "opencode", &format!("http-400__{name}"));
    e("chat.message");
    assert_state(&home, "active", None, false);
    e("session.error");
    assert!(only_session(&home).is_none());
    e("session.idle");
    assert!(only_session(&home).is_none());
}

/// Cline's interactive TUI: each prompt fires `TaskStart` again (the same task; no
/// `UserPromptSubmit`), Escape during a tool fires `SessionShutdown` (no `TaskCancel`), and the
/// next prompt's `TaskStart` protects again.
#[test]
fn cline_tui_prompts_each_start_a_turn_and_escape_ends_it() {
    let home = Home::new();
    let c = |name: &str| send(&home, "cline", &format!("tui-prompts-escape__{name}"));
    for _ in 0..2 {
        c("TaskStart");
        assert_state(&home, "active", None, false);
        c("TaskComplete");
        assert!(only_session(&home).is_none(), "the turn ended");
    }
    c("TaskStart");
    c("PreToolUse");
    assert_state(&home, "active", None, false);
    c("PostToolUse");
    c("SessionShutdown");
    assert!(only_session(&home).is_none(), "Escape ended the turn");
    c("TaskStart");
    assert_state(&home, "active", None, false);
    c("TaskComplete");
    assert!(only_session(&home).is_none());
}
