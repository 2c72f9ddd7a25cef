//! The assistant's last answer, taken from the end of an agent's transcript, for webhooks whose
//! Stop hook carried no last assistant message.
//!
//! Rule (the reference system's, so receivers see the same text): look at the last 1 MiB / 1024 lines
//! ([`TAIL_BYTES`](crate::last_message::TAIL_BYTES),
//! [`TAIL_LINES`](crate::last_message::TAIL_LINES)) of the transcript (JSONL) and walk its
//! records newest first. A record is the assistant's when its `role` is `assistant`, its
//! `type` is `assistant` or `assistant_message`, or its `author.role` is `assistant`, at the
//! record's root or under its `message` / `payload` / `data` (Codex records are
//! `{"type":"response_item","payload":{…}}`). Text is gathered recursively from `content` /
//! `text` / `message` / `output` / `response` / `delta` fields and joined with single spaces;
//! records whose text is empty are skipped; the newest one's trimmed text is the answer.
//!
//! Beyond the rule, because real transcripts need it (record shapes in
//! `tests/fixtures/transcripts/`, see its README):
//! - Blocks that are not an answer are skipped while gathering: Claude Code's `thinking`,
//!   `redacted_thinking` and `tool_use` blocks (an assistant record may hold only a tool call;
//!   the newest record with real text must win) and Codex's `reasoning` / `function_call`
//!   payloads.
//! - Copilot CLI's `events.jsonl` names its answers `{"type":"assistant.message","data":
//!   {"content":"…","toolRequests":[…]}}`: that type marks the assistant too (exactly that one;
//!   `assistant.turn_start` / `assistant.turn_end` do not), and a record marked at its root is
//!   read through its `payload` / `data` wrapper. A tool-call-only message has `content: ""`
//!   and is skipped as empty.
//! - Sub-agent records are not the session's answer: Copilot CLI writes a background
//!   sub-agent's records into the same file, marked by a top-level `agentId` (captured);
//!   Claude Code's records carry `isSidechain`, `true` for a sub-agent's (the captures hold
//!   only `false`). Both are skipped.
//!
//! [`last_assistant_message`](crate::last_message::last_assistant_message) is pure;
//! [`read_tail`](crate::last_message::read_tail) is the only I/O.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::{Map, Value};

/// How much of the transcript's end is read.
pub const TAIL_BYTES: u64 = 1 << 20;
/// How many of the transcript's last lines are looked at.
pub const TAIL_LINES: usize = 1024;

/// Fields whose values hold a message's text (searched recursively).
const TEXT_KEYS: [&str; 6] = ["content", "text", "message", "output", "response", "delta"];
/// Where a record may carry the message it wraps.
const WRAPPERS: [&str; 3] = ["message", "payload", "data"];
/// `type` values that mark the assistant: the rule's two, plus Copilot CLI's `assistant.message`.
const ASSISTANT_TYPES: [&str; 3] = ["assistant", "assistant_message", "assistant.message"];
/// Block / payload `type`s whose text is not an answer: Claude Code's thinking and tool blocks
/// (and a user turn's `tool_result`), Codex's reasoning and tool-call payloads.
const NOT_ANSWERS: [&str; 9] = [
    "thinking",
    "redacted_thinking",
    "tool_use",
    "server_tool_use",
    "tool_result",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
];

/// The newest assistant answer in `tail`, the transcript's last lines (JSONL, every line
/// whole; see [`drop_partial_first_line`]). `None` when no assistant record there has text.
/// Malformed lines are skipped.
pub fn last_assistant_message(tail: &[u8]) -> Option<String> {
    tail.split(|b| *b == b'\n').rev().find_map(answer_in)
}

/// `tail` without its first line when it does not start at the file's start (that line is
/// probably the end of a longer one); unchanged otherwise.
pub fn drop_partial_first_line(tail: &[u8], starts_at_file_start: bool) -> &[u8] {
    if starts_at_file_start {
        return tail;
    }
    match tail.iter().position(|b| *b == b'\n') {
        Some(newline) => &tail[newline + 1..],
        None => &[],
    }
}

/// Reads the end of the file at `path`: at most its last [`TAIL_BYTES`] bytes, and of those at
/// most the last [`TAIL_LINES`] lines. The flag is `true` when the bytes begin at the file's
/// start; when it is `false` their first line is partial (or empty) and is to be dropped with
/// [`drop_partial_first_line`], which leaves at most [`TAIL_LINES`] whole lines.
pub fn read_tail(path: &Path) -> io::Result<(Vec<u8>, bool)> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let start = len.saturating_sub(TAIL_BYTES);
    file.seek(SeekFrom::Start(start))?;
    let mut buf = Vec::with_capacity(usize::try_from(len - start).unwrap_or(0));
    // `take`: the file may grow while it is read; never hold more than the window.
    file.take(TAIL_BYTES).read_to_end(&mut buf)?;
    Ok(keep_last_lines(buf, start == 0))
}

/// The newest assistant answer in the transcript at `path` ([`read_tail`], then
/// [`last_assistant_message`]). `None` also when the file cannot be read.
pub fn last_assistant_message_in(path: &Path) -> Option<String> {
    let (tail, starts_at_file_start) = read_tail(path).ok()?;
    last_assistant_message(drop_partial_first_line(&tail, starts_at_file_start))
}

/// Keeps the last [`TAIL_LINES`] lines of `buf` (a line being written, without its newline,
/// counts as one). When lines are cut, the newline ending the line before them is kept, so the
/// result starts with an empty "partial" line and is marked as not starting at the file start.
fn keep_last_lines(mut buf: Vec<u8>, starts_at_file_start: bool) -> (Vec<u8>, bool) {
    let body = buf.strip_suffix(b"\n").unwrap_or(&buf);
    let cut = body
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, b)| **b == b'\n')
        .nth(TAIL_LINES - 1)
        .map(|(at, _)| at);
    match cut {
        Some(at) => {
            buf.drain(..at);
            (buf, false)
        }
        None => (buf, starts_at_file_start),
    }
}

/// The answer in one line, if it is an assistant record with text.
fn answer_in(line: &[u8]) -> Option<String> {
    let record: Value = serde_json::from_slice(line).ok()?;
    let root = record.as_object()?;
    if is_subagent(root) {
        return None;
    }
    let node = if marks_assistant(root) {
        root
    } else {
        WRAPPERS
            .iter()
            .filter_map(|key| root.get(*key)?.as_object())
            .find(|inner| marks_assistant(inner))?
    };
    if is_not_answer(node) {
        return None;
    }
    let mut pieces = Vec::new();
    gather_fields(node, &TEXT_KEYS, &mut pieces);
    if std::ptr::eq(node, root) {
        // Marked at the root (Copilot CLI's `assistant.message`): the text may be under a
        // wrapper that is no text field.
        gather_fields(root, &["payload", "data"], &mut pieces);
    }
    let text = pieces.join(" ");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// Whether this object's `role`, `type` or `author.role` names the assistant.
fn marks_assistant(object: &Map<String, Value>) -> bool {
    let str_of = |key: &str| object.get(key).and_then(Value::as_str);
    str_of("role") == Some("assistant")
        || str_of("type").is_some_and(|t| ASSISTANT_TYPES.contains(&t))
        || object
            .get("author")
            .and_then(|author| author.get("role"))
            .and_then(Value::as_str)
            == Some("assistant")
}

/// A sub-agent's record: Copilot CLI's top-level `agentId`, Claude Code's `isSidechain`.
fn is_subagent(root: &Map<String, Value>) -> bool {
    root.get("agentId").is_some_and(|id| !id.is_null())
        || root.get("isSidechain").and_then(Value::as_bool) == Some(true)
}

fn is_not_answer(object: &Map<String, Value>) -> bool {
    object
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| NOT_ANSWERS.contains(&t))
}

/// Text under `keys` of `object`, recursively.
fn gather_fields<'a>(object: &'a Map<String, Value>, keys: &[&str], out: &mut Vec<&'a str>) {
    for key in keys {
        if let Some(value) = object.get(*key) {
            gather(value, out);
        }
    }
}

fn gather<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(text) => {
            let text = text.trim();
            if !text.is_empty() {
                out.push(text);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| gather(item, out)),
        Value::Object(object) if !is_not_answer(object) => gather_fields(object, &TEXT_KEYS, out),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn jsonl(records: &[Value]) -> Vec<u8> {
        let mut out = Vec::new();
        for record in records {
            out.extend_from_slice(record.to_string().as_bytes());
            out.push(b'\n');
        }
        out
    }

    fn last(records: &[Value]) -> Option<String> {
        last_assistant_message(&jsonl(records))
    }

    fn claude(content: &Value) -> Value {
        serde_json::json!({
            "type": "assistant",
            "isSidechain": false,
            "message": {"type": "message", "role": "assistant", "content": content},
        })
    }

    #[test]
    fn claude_text_wins_over_a_newer_tool_use_only_record() {
        let records = [
            claude(&serde_json::json!([{"type": "text", "text": "Old answer."}])),
            serde_json::json!({"type": "user", "message": {"role": "user", "content": "next"}}),
            claude(&serde_json::json!([{"type": "text", "text": "  I'll run it.\n"}])),
            claude(&serde_json::json!([
                {"type": "tool_use", "id": "t1", "name": "Bash",
                 "input": {"command": "echo hi", "description": "say", "content": "not text"}}
            ])),
            serde_json::json!({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "hi"}]}}),
            serde_json::json!({"type": "system", "subtype": "turn_duration", "content": "x"}),
        ];
        assert_eq!(last(&records).as_deref(), Some("I'll run it."));
    }

    #[test]
    fn thinking_blocks_are_not_the_answer() {
        let records = [
            claude(&serde_json::json!([{"type": "text", "text": "Answer."}])),
            claude(&serde_json::json!([
                {"type": "thinking", "thinking": "hmm", "text": "hidden", "signature": "s"},
                {"type": "redacted_thinking", "data": "xyz", "content": "hidden"},
            ])),
        ];
        assert_eq!(last(&records).as_deref(), Some("Answer."));
        let mixed = [claude(&serde_json::json!([
            {"type": "thinking", "thinking": "hmm", "text": "hidden"},
            {"type": "text", "text": "Part one."},
            {"type": "tool_use", "name": "Read", "input": {"text": "hidden"}},
            {"type": "text", "text": "Part two."},
        ]))];
        assert_eq!(last(&mixed).as_deref(), Some("Part one. Part two."));
    }

    #[test]
    fn codex_response_items() {
        let message = |role: &str, kind: &str, text: &str| {
            serde_json::json!({"type": "response_item", "payload": {
                "type": "message", "role": role,
                "content": [{"type": kind, "text": text, "annotations": []}]},
                "metadata": {"retained_source": {"id": {"role": "assistant"}}}})
        };
        let records = [
            message("assistant", "output_text", "Done: red."),
            serde_json::json!({"type": "response_item", "payload": {"type": "reasoning",
                "summary": [{"type": "summary_text", "text": "thinking"}],
                "content": [{"type": "reasoning_text", "text": "thinking"}]}}),
            serde_json::json!({"type": "response_item", "payload": {"type": "function_call",
                "role": "assistant", "name": "exec_command", "arguments": "{}", "call_id": "c"}}),
            serde_json::json!({"type": "response_item", "payload": {
                "type": "function_call_output", "call_id": "c", "output": "ok"}}),
            message("user", "input_text", "Thanks."),
            serde_json::json!({"type": "event_msg", "payload": {"type": "task_complete",
                "last_agent_message": "Done: red."}}),
        ];
        assert_eq!(last(&records).as_deref(), Some("Done: red."));
    }

    #[test]
    fn copilot_assistant_messages() {
        let records = [
            serde_json::json!({"type": "assistant.message", "data": {
                "content": "Started it.", "toolRequests": []}, "id": "1"}),
            serde_json::json!({"type": "assistant.message", "data": {
                "content": "Sub-agent says hi.", "toolRequests": []}, "agentId": "7fe3"}),
            serde_json::json!({"type": "assistant.message", "data": {"content": "",
                "toolRequests": [{"name": "read_agent",
                    "arguments": {"agent_id": "7fe3", "message": "not text"}}]}}),
            serde_json::json!({"type": "assistant.turn_end", "data": {"turnId": "0"}}),
        ];
        assert_eq!(last(&records).as_deref(), Some("Started it."));
    }

    #[test]
    fn every_marker_and_wrapper() {
        let cases = [
            serde_json::json!({"role": "assistant", "content": "root role"}),
            serde_json::json!({"type": "assistant_message", "text": "root type"}),
            serde_json::json!({"author": {"role": "assistant"}, "message": "author role"}),
            serde_json::json!({"message": {"role": "assistant", "content": "message role"}}),
            serde_json::json!({"payload": {"type": "assistant", "output": "payload type"}}),
            serde_json::json!({"data": {"author": {"role": "assistant"}, "response": "data"}}),
            serde_json::json!({"type": "assistant", "data": {"content": "root, under data"}}),
            serde_json::json!({"type": "chunk", "data": {"role": "assistant", "delta": "d"}}),
        ];
        let expected = [
            "root role",
            "root type",
            "author role",
            "message role",
            "payload type",
            "data",
            "root, under data",
            "d",
        ];
        for (record, want) in cases.iter().zip(expected) {
            assert_eq!(
                last(std::slice::from_ref(record)).as_deref(),
                Some(want),
                "{record}"
            );
        }
        let not_assistant = [
            serde_json::json!({"role": "user", "content": "no"}),
            serde_json::json!({"type": "assistant.turn_start", "data": {"turnId": "0"}}),
            serde_json::json!({"type": "assistant.reasoning", "data": {"content": "no"}}),
            serde_json::json!({"author": "assistant", "content": "no"}),
            serde_json::json!({"extra": {"role": "assistant", "content": "no"}}),
            serde_json::json!({"type": "assistant", "isSidechain": true, "content": "no"}),
        ];
        assert_eq!(last(&not_assistant), None);
    }

    #[test]
    fn nested_text_is_joined_with_single_spaces() {
        let record = serde_json::json!({"role": "assistant", "content": [
            "first",
            {"type": "text", "text": "  second\n"},
            {"content": [{"output": {"response": ["third", 4, null, true]}}]},
            {"message": {"delta": "fourth"}, "name": "ignored", "input": "ignored"},
            {"text": ""},
            [["fifth"]],
        ]});
        assert_eq!(
            last(&[record]).as_deref(),
            Some("first second third fourth fifth")
        );
        // Inner newlines stay: only the pieces' ends are trimmed.
        let record = serde_json::json!({"role": "assistant", "content": "line 1\nline 2\n"});
        assert_eq!(last(&[record]).as_deref(), Some("line 1\nline 2"));
    }

    #[test]
    fn empty_records_are_skipped() {
        let records = [
            serde_json::json!({"role": "assistant", "content": "Real."}),
            serde_json::json!({"role": "assistant", "content": "   \n "}),
            serde_json::json!({"role": "assistant", "content": []}),
            serde_json::json!({"role": "assistant"}),
        ];
        assert_eq!(last(&records).as_deref(), Some("Real."));
        assert_eq!(last(&records[1..]), None);
        assert_eq!(last_assistant_message(b""), None);
    }

    #[test]
    fn malformed_lines_are_skipped() {
        let mut tail = jsonl(&[serde_json::json!({"role": "assistant", "content": "Kept."})]);
        for junk in [
            &b"not json"[..],
            b"{\"role\":\"assistant\",\"content\":\"cut",
            b"[{\"role\":\"assistant\",\"content\":\"array\"}]",
            b"\"assistant\"",
            b"{\"role\":\"assistant\",\"content\":\"bad \xff utf8\"}",
            b"{\"role\":\"assistant\",\"content\":\"a\"} trailing",
            b"",
            b"   ",
        ] {
            tail.extend_from_slice(junk);
            tail.push(b'\n');
        }
        tail.extend_from_slice(b"{\"role\":\"assistant\",\"content\":\"unterminated");
        assert_eq!(last_assistant_message(&tail).as_deref(), Some("Kept."));
        // CRLF line ends are whitespace to JSON.
        let crlf = b"{\"role\":\"assistant\",\"content\":\"crlf\"}\r\n\r\n";
        assert_eq!(last_assistant_message(crlf).as_deref(), Some("crlf"));
    }

    #[test]
    fn a_partial_first_line_is_dropped() {
        let tail = b"{\"role\":\"assistant\",\"content\":\"tail end of a line\"}\n\
            {\"role\":\"user\",\"content\":\"whole\"}\n";
        assert_eq!(
            last_assistant_message(drop_partial_first_line(tail, false)),
            None
        );
        assert_eq!(
            last_assistant_message(drop_partial_first_line(tail, true)).as_deref(),
            Some("tail end of a line")
        );
        assert_eq!(drop_partial_first_line(b"no newline", false), b"");
        assert_eq!(drop_partial_first_line(b"ab\ncd", false), b"cd");
        assert_eq!(drop_partial_first_line(b"\ncd", false), b"cd");
    }

    fn write(path: &Path, bytes: &[u8]) {
        let mut file = File::create(path).unwrap();
        file.write_all(bytes).unwrap();
    }

    #[test]
    fn read_tail_of_a_small_file_is_the_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let bytes = jsonl(&[serde_json::json!({"role": "assistant", "content": "Hi."})]);
        write(&path, &bytes);
        assert_eq!(read_tail(&path).unwrap(), (bytes, true));
        assert_eq!(last_assistant_message_in(&path).as_deref(), Some("Hi."));
        write(&path, b"");
        assert_eq!(read_tail(&path).unwrap(), (Vec::new(), true));
        assert_eq!(last_assistant_message_in(&path), None);
    }

    #[test]
    fn read_tail_reads_at_most_the_last_mebibyte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.jsonl");
        let answer = |text: &str| serde_json::json!({"role": "assistant", "content": text});
        let mut bytes = jsonl(&[answer("Too old.")]);
        // One long line that straddles the window's start: its end must not be read as a record.
        let straddling = answer(&"x".repeat(usize::try_from(TAIL_BYTES).unwrap()));
        bytes.extend(jsonl(&[straddling]));
        bytes.extend(jsonl(&[
            serde_json::json!({"role": "user", "content": "q"}),
        ]));
        write(&path, &bytes);
        let (tail, from_start) = read_tail(&path).unwrap();
        assert!(!from_start);
        assert_eq!(tail.len() as u64, TAIL_BYTES);
        assert!(bytes.ends_with(&tail));
        assert_eq!(last_assistant_message_in(&path), None);

        let mut grown = bytes.clone();
        grown.extend(jsonl(&[answer("Newest.")]));
        write(&path, &grown);
        assert_eq!(last_assistant_message_in(&path).as_deref(), Some("Newest."));
    }

    #[test]
    fn read_tail_keeps_at_most_the_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lines.jsonl");
        let filler = serde_json::json!({"role": "user", "content": "filler"});
        let answer = serde_json::json!({"role": "assistant", "content": "Edge."});
        let file_with = |answer_at_from_end: usize| {
            let mut records = vec![filler.clone(); 2000];
            records[2000 - answer_at_from_end] = answer.clone();
            jsonl(&records)
        };
        // The answer is exactly the TAIL_LINES-th line from the end: seen.
        write(&path, &file_with(TAIL_LINES));
        let (tail, from_start) = read_tail(&path).unwrap();
        assert!(!from_start);
        let lines = drop_partial_first_line(&tail, from_start);
        assert_eq!(lines.iter().filter(|b| **b == b'\n').count(), TAIL_LINES);
        assert_eq!(last_assistant_message_in(&path).as_deref(), Some("Edge."));
        // One line further back: not seen.
        write(&path, &file_with(TAIL_LINES + 1));
        assert_eq!(last_assistant_message_in(&path), None);
        // Exactly TAIL_LINES lines (and a line still being written): nothing is cut.
        let mut bytes = jsonl(&vec![filler.clone(); TAIL_LINES - 1]);
        bytes.extend_from_slice(b"{\"role\":\"assistant\",\"content\":\"Half");
        write(&path, &bytes);
        assert_eq!(read_tail(&path).unwrap(), (bytes, true));
    }

    #[test]
    fn a_missing_file_has_no_message() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("absent.jsonl");
        assert_eq!(
            read_tail(&path).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        assert_eq!(last_assistant_message_in(&path), None);
    }
}
