#!/usr/bin/env python3
"""Turn a Copilot capture run (run.sh output dir) into tests/fixtures/copilot/*.json.

Usage: fixtures.py <capture-dir> [--out DIR] [--date YYYY-MM-DD]

One fixture per distinct (scenario, event): <scenario>__<event>.json, from the first occurrence.
A later occurrence of the same event whose *variant* differs (other key set, stop_hook_active,
notification_type, toolName, a sub-agent's payload, a <system_notification> prompt, ...) gets
<scenario>__<event>.<n>.json. Payloads are verbatim; values over 20 KB are dropped with a note.
"""
import argparse
import datetime
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fixture_file  # noqa: E402  (the fixture file every capture writes)

DESCRIPTIONS = {
    "bash-tool": "print mode (-p --allow-all-tools), one bash tool call (echo hello)",
    "bash-nonzero": "print mode, bash command that exits 3 (the shell tool still reports success)",
    "resume": "two print-mode runs; the second uses --resume=<sessionId of the first>",
    "tool-failure": "print mode, one view tool call on a missing file (tool fails)",
    "permission-denied": "print mode without --allow-all-tools, bash `touch newfile.txt` (denied: no interactive user)",
    "http-400": "print mode, the model call answers HTTP 400",
    "ask-user": "print mode, the model calls ask_user although -p does not offer it (unknown tool)",
    "async-shell": "print mode, bash mode=async shellId=bg1, then read_bash waits for it",
    "async-shell-notify": "print mode, bash mode=async, the turn ends before the shell finishes (shell_completed notification starts a new turn)",
    "detached-shell": "print mode, bash mode=async detach=true; -p exits before the detached shell finishes",
    "task-agent": "print mode, task tool with mode=background (general-purpose sub-agent 'hi-agent'); agent_idle notification starts a new turn",
    "stop-block": "print mode, the agentStop hook answers {\"decision\":\"block\",\"reason\":\"continue\"} once",
    "interactive-ask-user": "interactive TUI under tmux, ask_user tool (structured form) answered in the TUI, then /compact and /exit",
    "interactive-permission-detached": "interactive TUI under tmux without --allow-all-tools: permission dialog approved, detached bash finishes while idle, then /exit",
}


def variant(event, p):
    keys = tuple(sorted(p.keys())) if isinstance(p, dict) else ()
    g = p.get if isinstance(p, dict) else (lambda k, d=None: d)
    prompt = g("prompt") or ""
    return (keys, g("stop_hook_active"), g("notification_type"), g("toolName") or g("tool_name"),
            prompt.startswith("<system_notification>"), prompt == "continue", g("reason"), g("source"))


def describe(event, p, base):
    g = p.get
    bits = []
    if g("agentId") or g("agent_id"):
        bits.append("payload of the sub-agent" if event not in ("subagentStart", "SubagentStart", "subagentStop", "SubagentStop") else "")
    if (g("prompt") or "").startswith("<system_notification>"):
        bits.append("prompt injected by a completion notification")
    if g("prompt") == "continue":
        bits.append("prompt = the agentStop block reason")
    if g("stop_hook_active") is True:
        bits.append("after the stop hook blocked (stop_hook_active=true)")
    if g("notification_type"):
        bits.append(f"notification_type={g('notification_type')}")
    if g("toolName") or g("tool_name"):
        bits.append(f"tool {g('toolName') or g('tool_name')}")
    bits = [b for b in bits if b]
    return base + (f" ({'; '.join(bits)})" if bits else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("capture_dir")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "../../../fixtures/copilot"))
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    a = ap.parse_args()
    version = open(os.path.join(a.capture_dir, "client-version")).read().strip()
    os.makedirs(a.out, exist_ok=True)
    written = []
    for hooks in sorted(glob.glob(os.path.join(a.capture_dir, "*", "hooklog", "hooks.jsonl"))):
        scen = hooks.split(os.sep)[-3]
        pascal = scen.startswith("pascal-")
        base = DESCRIPTIONS.get(scen[7:] if pascal else scen, scen)
        if pascal:
            base += "; hooks registered under PascalCase event names"
        seen = {}
        for line in open(hooks):
            rec = json.loads(line)
            ev, payload = rec["event"], json.loads(rec["stdin"])
            v = variant(ev, payload)
            if v in seen.setdefault(ev, []):
                continue
            seen[ev].append(v)
            n = len(seen[ev])
            head = {"provider": "copilot", "client": f"@github/copilot@{version}", "captured": a.date, "scenario": describe(ev, payload, base)}
            written.append(fixture_file.write(a.out, scen, ev, n, head, payload))
    fixture_file.report(written, a.out)


if __name__ == "__main__":
    main()
