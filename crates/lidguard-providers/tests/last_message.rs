//! `lastAssistantMessage` from real transcripts captured from Claude Code 2.1.332, Codex
//! 0.171.0 and Copilot CLI 1.0.102 (`tests/fixtures/transcripts/`, see its README).
#![allow(
    clippy::disallowed_methods,
    reason = "tests write fixtures and read the environment"
)]

use std::path::PathBuf;

use lidguard_providers::last_message::{last_assistant_message, last_assistant_message_in};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/transcripts")
}

fn transcripts() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for provider in ["claude", "codex", "copilot"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(provider))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        files.sort();
        out.extend(files);
    }
    out
}

/// The transcript's lines, each with its newline, byte for byte.
fn lines(name: &str) -> Vec<Vec<u8>> {
    std::fs::read(root().join(name))
        .unwrap()
        .split_inclusive(|b| *b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

/// What each captured transcript's newest assistant answer is, read from the files.
const EXPECTED: [(&str, Option<&str>); 21] = [
    (
        "claude/background-notification.jsonl",
        Some("The background sleep finished."),
    ),
    (
        "claude/background-pending.jsonl",
        Some("Started a background sleep; ending my turn."),
    ),
    // Escape while streaming: the aborted record holds the text streamed so far.
    ("claude/stream-interrupt.jsonl", Some("Thinking about")),
    (
        "claude/tool-interrupt-then-prompt.jsonl",
        Some("Resumed answer: done."),
    ),
    // The only assistant record holds only a tool_use block.
    ("claude/tool-interrupt.jsonl", None),
    // The question was answered, the model's reply is still held back.
    ("codex/request-user-input-answered.jsonl", None),
    (
        "codex/request-user-input-complete.jsonl",
        Some("You chose a colour; done."),
    ),
    (
        "codex/request-user-input-default-mode.jsonl",
        Some("I will pick red myself."),
    ),
    ("codex/request-user-input-pending.jsonl", None),
    ("codex/stream-interrupt.jsonl", None),
    ("codex/tool-interrupt.jsonl", None),
    (
        "codex/tool-interrupt-then-prompt.jsonl",
        Some("Resumed answer: done."),
    ),
    (
        "copilot/background-agent-completed.jsonl",
        Some("The background agent finished."),
    ),
    (
        "copilot/background-agent-failed.jsonl",
        Some("The background agent finished."),
    ),
    (
        "copilot/background-agent-running.jsonl",
        Some("Started the sub task; ending my turn."),
    ),
    (
        "copilot/background-shell-completed.jsonl",
        Some("The background shell finished."),
    ),
    (
        "copilot/background-shell-running.jsonl",
        Some("Started a background shell; ending my turn."),
    ),
    (
        "copilot/detached-shell-completed.jsonl",
        Some("The detached shell finished."),
    ),
    (
        "copilot/detached-shell-running.jsonl",
        Some("Started a detached shell; ending my turn."),
    ),
    // The only assistant message is the aborted tool call (`content: ""`).
    ("copilot/tool-abort.jsonl", None),
    (
        "copilot/tool-abort-then-prompt.jsonl",
        Some("Resumed answer: done."),
    ),
];

#[test]
fn every_captured_transcript_gives_its_newest_answer() {
    for (name, want) in EXPECTED {
        let path = root().join(name);
        assert!(path.is_file(), "{name} is gone: update EXPECTED");
        assert_eq!(last_assistant_message_in(&path).as_deref(), want, "{name}");
    }
    // Fixtures added later: the reader and the pure function agree, and an answer is trimmed
    // text.
    let all = transcripts();
    assert!(all.len() >= EXPECTED.len(), "{} transcripts", all.len());
    for path in all {
        let whole = std::fs::read(&path).unwrap();
        let got = last_assistant_message_in(&path);
        assert_eq!(got, last_assistant_message(&whole), "{}", path.display());
        if let Some(text) = got {
            assert!(
                !text.is_empty() && text.trim() == text,
                "{}",
                path.display()
            );
        }
    }
}

#[test]
fn a_tool_call_only_message_leaves_the_previous_answer() {
    // Copilot CLI, a real byte prefix: after the background shell's notification it calls
    // `read_bash` itself (line 15: `content: ""`, one `toolRequest`).
    let shell = lines("copilot/background-shell-completed.jsonl");
    assert!(String::from_utf8_lossy(&shell[14]).contains("\"name\":\"read_bash\""));
    assert_eq!(
        last_assistant_message(&shell[..15].concat()).as_deref(),
        Some("Started a background shell; ending my turn.")
    );

    // Same with `read_agent`; the sub-agent's own newer "Subagent says hi." (top-level
    // `agentId`, line 20) is not the session's answer either.
    let agent = lines("copilot/background-agent-completed.jsonl");
    assert!(String::from_utf8_lossy(&agent[23]).contains("\"name\":\"read_agent\""));
    assert!(String::from_utf8_lossy(&agent[19]).contains("Subagent says hi."));
    assert_eq!(
        last_assistant_message(&agent[..24].concat()).as_deref(),
        Some("Started the sub task; ending my turn.")
    );

    // Claude Code writes each content block as its own assistant record, so a text answer is
    // followed by a tool_use-only record when the model goes on with a tool. Composed from
    // real records: the pending transcript, then its own tool_use record (line 15) again.
    assert_eq!(
        last_assistant_message(&with_line_again(
            "claude/background-pending.jsonl",
            15,
            "\"type\":\"tool_use\""
        ))
        .as_deref(),
        Some("Started a background sleep; ending my turn.")
    );

    // Codex: a function_call after the answer (the complete session, then its own
    // request_user_input call, line 5, again).
    assert_eq!(
        last_assistant_message(&with_line_again(
            "codex/request-user-input-complete.jsonl",
            5,
            "\"type\":\"function_call\""
        ))
        .as_deref(),
        Some("You chose a colour; done.")
    );
}

/// The whole fixture, then its 1-based line `n` (which holds `holding`) once more.
fn with_line_again(fixture: &str, n: usize, holding: &str) -> Vec<u8> {
    let records = lines(fixture);
    let again = &records[n - 1];
    assert!(String::from_utf8_lossy(again).contains(holding));
    let mut composed = records.concat();
    composed.extend_from_slice(again);
    composed
}

#[test]
fn a_transcript_read_from_inside_drops_its_cut_first_line() {
    // Only the tail end of the answer's line is given, as when the 1 MiB window starts inside
    // it: that line is not read; the whole file still gives it.
    let name = "codex/tool-interrupt-then-prompt.jsonl";
    let all = lines(name);
    let answer = &all[14];
    assert!(String::from_utf8_lossy(answer).contains("Resumed answer: done."));
    let cut = answer.len() / 2;
    let tail: Vec<u8> = [&answer[cut..], &all[15..].concat()[..]].concat();
    let lines_only = lidguard_providers::last_message::drop_partial_first_line(&tail, false);
    assert_eq!(last_assistant_message(lines_only), None);
    assert_eq!(
        last_assistant_message_in(&root().join(name)).as_deref(),
        Some("Resumed answer: done.")
    );
}
