#!/usr/bin/env python3
"""Turn a Gemini CLI capture run (run.sh output dir) into tests/fixtures/gemini/*.json, or with
`--agent qwen|cline` (what tests/e2e/capture/{qwen,cline}/fixtures.py pass) a Qwen Code or Cline
CLI one into tests/fixtures/<agent>/: the same hook logger and variant rules.

Usage: fixtures.py <capture-dir> [--out DIR] [--date YYYY-MM-DD] [--agent gemini|qwen|cline|droid]

One fixture per distinct (scenario, event): <scenario>__<Event>.json, from the first occurrence.
A later occurrence whose variant differs (other key set, stop_hook_active, notification_type,
tool_name, source, reason, an empty prompt) gets <scenario>__<Event>.<n>.json. Payloads are verbatim, except
values over 20 KB (the model events carry the whole conversation), dropped with a note.
The conformance test (crates/lidguard/tests/conformance.rs) adds each fixture's `expect`
(`LIDGUARD_BLESS=1`), to be reviewed before committing.
"""
import argparse
import datetime
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fixture_file  # noqa: E402  (the fixture file every capture writes)

# Per agent: its npm package, the hook whose block continues a turn, each scenario in words.
AGENTS = {
    "gemini": {
        "client": "@google/gemini-cli",
        "stop_hook": "AfterAgent",
        "descriptions": {
            "print-shell": "gemini -p --yolo, one run_shell_command (echo hello)",
            "print-tool-failure": "gemini -p --yolo, read_file of a missing file (the tool fails)",
            "print-after-agent-block": "gemini -p --yolo, the first AfterAgent hook answers {\"decision\":\"block\",\"reason\":\"also update the README\"}",
            "print-http-400": "gemini -p --yolo, the model call answers HTTP 400 (the CLI exits 1)",
            "tui-permission": "interactive TUI under tmux, default approval mode: run_shell_command needs confirmation, approved; then /quit",
            "tui-ask-user": "interactive TUI under tmux (--yolo): the ask_user tool, answered in the TUI; then /quit",
        },
    },
    "qwen": {
        "client": "@qwen-code/qwen-code",
        "stop_hook": "Stop",
        "descriptions": {
            "print-shell": "qwen -p --yolo, one run_shell_command (echo hello)",
            "print-tool-failure": "qwen -p --yolo, read_file without its file_path parameter (refused by validation before PreToolUse)",
            "print-permission-deny": "qwen -p --approval-mode default, run_shell_command needs approval (no PermissionRequest fires headless: the call is refused)",
            "print-stop-block": "qwen -p --yolo, the first Stop hook answers {\"decision\":\"block\",\"reason\":\"also update the README\"}",
            "print-http-400": "qwen -p --yolo, the model call answers HTTP 400 (the CLI exits 1; no Stop, no StopFailure)",
            "tui-permission": "interactive TUI under tmux, default approval mode: run_shell_command needs confirmation, approved in the dialog; then /quit",
            "tui-permission-deny": "interactive TUI under tmux, default approval mode: the PermissionRequest hook prints lidguard's closed-lid deny; no dialog; then /quit",
            "tui-ask-user": "interactive TUI under tmux (--yolo): ask_user_question, answered in the TUI; then /quit",
            "tui-interrupt": "interactive TUI under tmux (--yolo): a long run_shell_command interrupted with Escape while it runs; then /quit",
        },
    },
    "droid": {
        "client": "@factory/cli-linux-x64",
        "stop_hook": "Stop",
        "descriptions": {
            "exec-shell": "droid exec --auto low \"<prompt>\", one Execute (echo hello)",
            "exec-http-400": "droid exec, the model call answers HTTP 400 (the CLI exits 1)",
            "exec-stop-block": "droid exec, the first Stop hook answers {\"decision\":\"block\",\"reason\":\"also update the README\"}",
            "tui-permission": "interactive TUI under tmux, Auto (Off): a medium-risk Execute asks, allowed in the dialog; then /quit",
            "tui-permission-refused": "interactive TUI under tmux, Auto (Off): a medium-risk Execute asks, refused (No, cancel); then /quit",
            "tui-escape-tool": "interactive TUI under tmux (--auto low): Escape while a long Execute runs; then /quit",
            "tui-escape-model": "interactive TUI under tmux: Escape while the model is still answering; then /quit",
            "tui-http-400": "interactive TUI under tmux: the model call answers HTTP 400; then /quit",
            "tui-prompts": "interactive TUI under tmux (--auto low): two prompts, the first with an Execute; then /quit",
        },
    },
    "cline": {
        "client": "cline",
        "stop_hook": "TaskComplete",
        "descriptions": {
            "print-shell": "cline \"<prompt>\" (act mode, tools auto-approved), one run_commands (echo hello)",
            "print-second-run": "two cline runs in one HOME: the second runs in Cline's background hub (cline --cline-hub-daemon), which runs its hooks",
            "print-http-500": "cline \"<prompt>\", every model call answers HTTP 500 (retried, then the CLI exits 1)",
            "print-ask-deny": "cline \"<prompt>\", the ask_question tool; the PreToolUse hook prints lidguard's closed-lid refusal {\"cancel\": true, \"errorMessage\"} (the run aborts)",
            "print-interrupt": "cline \"<prompt>\", a long run_commands; the CLI gets SIGINT while it runs",
            "tui-prompts-escape": "interactive TUI under tmux: two prompts, a third whose long run_commands is cancelled with Escape while it runs, a fourth; then Ctrl+C twice",
        },
    },
}


def variant(p):
    if not isinstance(p, dict):
        return ("raw", p)
    g = p.get
    return (tuple(sorted(p.keys())), g("stop_hook_active"), g("notification_type"), g("tool_name"),
            g("source"), g("reason"), g("trigger"), g("prompt") == "",
            (g("tool_call") or {}).get("name"))


def describe(p, base, stop_hook):
    if not isinstance(p, dict):
        return base + " (stdin empty: the CLI was exiting)" if p == "" else base
    g = p.get
    bits = []
    if g("stop_hook_active") is True:
        bits.append(f"after the {stop_hook} hook blocked (stop_hook_active=true)")
    if g("notification_type"):
        bits.append(f"notification_type={g('notification_type')}")
    tool = g("tool_name") or (g("tool_call") or g("tool_result") or {}).get("name")
    if tool:
        bits.append(f"tool {tool}")
    return base + (f" ({'; '.join(bits)})" if bits else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("capture_dir")
    ap.add_argument("--agent", choices=sorted(AGENTS), default="gemini")
    ap.add_argument("--out")
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    a = ap.parse_args()
    agent = AGENTS[a.agent]
    a.out = a.out or os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../fixtures", a.agent)
    version = open(os.path.join(a.capture_dir, "client-version")).read().strip()
    os.makedirs(a.out, exist_ok=True)
    written = []
    for hooks in sorted(glob.glob(os.path.join(a.capture_dir, "*", "hooklog", "hooks.jsonl"))):
        scen = hooks.split(os.sep)[-3]
        base = agent["descriptions"].get(scen, scen)
        seen = {}
        for line in open(hooks):
            rec = json.loads(line)
            ev = rec["event"]
            try:
                payload = json.loads(rec["stdin"])
            except ValueError:  # kept verbatim: what the hook got
                payload = rec["stdin"]
            v = variant(payload)
            if v in seen.setdefault(ev, []):
                continue
            seen[ev].append(v)
            n = len(seen[ev])
            head = {"provider": a.agent, "client": f"{agent['client']}@{version}", "captured": a.date, "scenario": describe(payload, base, agent["stop_hook"])}
            written.append(fixture_file.write(a.out, scen, ev, n, head, payload))
    fixture_file.report(written, a.out)


if __name__ == "__main__":
    main()
