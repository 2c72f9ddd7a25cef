#!/usr/bin/env python3
"""Check tests/fixtures/transcripts/*/*.jsonl against their .expect.json with a small reference
detector (the rules in each agent's README, crates/lidguard-providers/src/agents/*/README.md,
applied to the whole file read in order). Not a test of lidguard itself: it shows that the fixtures carry the records the
Rust detectors are to look for, and how the rules read on real files.

    python3 tests/e2e/capture/transcripts/check.py [fixtures dir]      -> PASS/FAIL per fixture
"""
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.join(HERE, "..", "..", "..", "fixtures", "transcripts")
MARKERS = ("[Request interrupted by user]", "[Request interrupted by user for tool use]")


def records(path):
    with open(path, "rb") as f:
        return [json.loads(line) for line in f if line.strip()]


def codex(recs):
    """Last of task_started / turn_aborted / task_complete decides stop; an unanswered
    request_user_input function_call is a soft lock."""
    last_turn_event, pending, reason = None, {}, None
    for r in recs:
        p = r.get("payload") or {}
        if r.get("type") == "event_msg" and p.get("type") in ("task_started", "turn_aborted", "task_complete"):
            last_turn_event = p["type"]
        if r.get("type") == "response_item" and p.get("type") == "function_call" and p.get("name") == "request_user_input":
            pending[p.get("call_id")] = True
        if r.get("type") == "response_item" and p.get("type") == "function_call_output":
            pending.pop(p.get("call_id"), None)
    out = {}
    if last_turn_event == "turn_aborted":
        out.update(last_signal="stop", reason="turn_aborted")
    elif pending:
        out.update(last_signal="soft_lock", reason="codex_transcript_request_user_input_pending",
                   call_id=next(iter(pending)))
    else:
        out.update(last_signal="activity")
    return out


def texts(r):
    c = (r.get("message") or {}).get("content")
    if isinstance(c, str):
        return [c]
    return [b.get("text") for b in c or [] if isinstance(b, dict) and b.get("type") == "text"]


def tool_results(r):
    c = (r.get("message") or {}).get("content")
    return [b for b in c if isinstance(b, dict) and b.get("type") == "tool_result"] if isinstance(c, list) else []


def claude(recs):
    """The latest `user` record decides: its text exactly a marker -> stop. Background shells:
    started by a tool_result 'Command running in background with ID: X', finished by a user record
    holding <task-notification> with <task-id>X</task-id>."""
    last_user, started, delivered = None, [], []
    for r in recs:
        if r.get("type") != "user":
            continue
        last_user = r
        for tr in tool_results(r):
            content = tr.get("content")
            content = content if isinstance(content, str) else json.dumps(content)
            m = re.match(r"Command running in background with ID: (\w+)", content)
            if m:
                started.append(m.group(1))
        for t in texts(r):
            if "<task-notification>" in t:
                delivered += re.findall(r"<task-id>\s*([^<\s]+)\s*</task-id>", t)
    out = {"pending_background_tasks": [t for t in started if t not in delivered],
           "delivered_task_notifications": delivered}
    marker = next((t for t in texts(last_user or {}) if t in MARKERS), None)
    if marker:
        out.update(last_signal="stop", reason="interrupted", marker=marker)
    else:
        out.update(last_signal="activity")
    return out


def copilot(recs):
    """The latest of abort / user.message / assistant.turn_start decides: abort -> stop."""
    last = None
    for r in recs:
        if r.get("type") in ("abort", "user.message", "assistant.turn_start"):
            last = r
    if last and last["type"] == "abort":
        return {"last_signal": "stop", "reason": "abort", "abort_reason": (last.get("data") or {}).get("reason")}
    return {"last_signal": "activity"}


DETECT = {"codex": codex, "claude": claude, "copilot": copilot}
COMPARED = ("last_signal", "reason", "call_id", "marker", "pending_background_tasks", "delivered_task_notifications")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else DEFAULT
    failed = 0
    for exp_path in sorted(glob.glob(os.path.join(root, "*", "*.expect.json"))):
        with open(exp_path) as f:
            exp = json.load(f)
        got = DETECT[exp["provider"]](records(exp_path.replace(".expect.json", ".jsonl")))
        diff = {k: (exp[k], got.get(k)) for k in COMPARED if k in exp and exp[k] != got.get(k)}
        name = os.path.relpath(exp_path, root).replace(".expect.json", "")
        print(f"{'FAIL' if diff else 'PASS'}  {name:45} {got}" + (f"  differs: {diff}" if diff else ""))
        failed += bool(diff)
    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
