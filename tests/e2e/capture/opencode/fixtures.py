#!/usr/bin/env python3
"""Turn an OpenCode capture run (run.sh output dir) into tests/fixtures/opencode/*.json.

Usage: fixtures.py <capture-dir> [--out DIR] [--date YYYY-MM-DD] [--agent opencode|kilo]

`--agent kilo` (what tests/e2e/capture/kilo/fixtures.py passes) writes tests/fixtures/kilo/ from a
Kilo CLI capture (the same plugin API and scenarios).

stdin of each fixture = the raw {hook, input, output} object the capture plugin received.
One fixture per distinct (scenario, event) from the first occurrence: <scenario>__<event>.json;
a later occurrence whose *variant* differs (status type, part type/state, sub-agent session, reply,
tool, ...) gets <scenario>__<event>.<n>.json. Lifecycle-noise events (NOISE) are kept only from the
bash-tool scenario, and variants of GLOBAL_VARIANTS events only the first time any scenario shows
them (tool parts in state "error" excepted). The capture plugin's own records (capture.*) are not fixtures. Values over
20 KB are dropped with a note.
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
    "bash-tool": "opencode run, one bash tool call (echo hello)",
    "tool-failure": "opencode run, one read tool call on a missing file (tool errors)",
    "permission-ask-run": "opencode run without --auto, permission {bash: ask}, bash `touch newfile.txt` (run auto-rejects)",
    "http-400": "opencode run, the model call answers HTTP 400",
    "question": "opencode run, the model calls `question`, which run mode does not offer (becomes the `invalid` tool)",
    "command": "opencode run --command hello (custom slash command from opencode.json)",
    "task-subagent": "opencode run, task tool with subagent_type general, which runs in a child session",
    "serve-question": "opencode serve, question tool answered via POST /question/{requestID}/reply",
    "serve-question-reject": "opencode serve, question tool dismissed via POST /question/{requestID}/reject",
    "serve-permission-plugin-reply": "opencode serve, permission {bash: ask}, the plugin answers `once` from its permission.asked handler via client.postSessionIdPermissionsPermissionId",
    "serve-permission-http-reply": "opencode serve, permission {bash: ask}, answered via POST /permission/{requestID}/reply {reply: once}",
    "serve-reprompt-delete": "opencode serve, bash tool call; the plugin calls client.session.prompt on the first session.idle (a second turn runs), then DELETE /session/{id}",
}
NOISE = {"session.updated", "session.diff", "plugin.added", "catalog.updated", "reference.updated",
         "integration.updated", "message.part.delta", "message.updated", "plugin.init"}
# events whose variants do not depend on the scenario: a variant is written only the first time
# it is seen in any scenario (scenarios are processed bash-tool first)
GLOBAL_VARIANTS = {"message.part.updated", "session.status"}


def variant(ev, p, children):
    inp = p.get("input") or {}
    props = (inp.get("event") or {}).get("properties") or {}
    sid = props.get("sessionID") or inp.get("sessionID")
    part = props.get("part") or {}
    info = props.get("info") or {}
    return (
        tuple(sorted(inp.keys())), sid in children, (props.get("status") or {}).get("type"),
        part.get("type"), (part.get("state") or {}).get("status"), bool(part.get("text")),
        tuple(sorted((part.get("time") or {}).keys())) if part.get("type") == "text" else None,
        bool(info.get("parentID")), info.get("role"), info.get("finish"), props.get("reply"),
        inp.get("tool"), ((p.get("output") or {}).get("parts") or [{}])[0].get("text"),
    )


def describe(ev, p, base, children):
    inp = p.get("input") or {}
    props = (inp.get("event") or {}).get("properties") or {}
    bits = []
    sid = props.get("sessionID") or inp.get("sessionID")
    if sid in children:
        bits.append("child (sub-agent) session")
    if (props.get("status") or {}).get("type"):
        bits.append(f"status {props['status']['type']}")
    part = props.get("part") or {}
    if part.get("type") == "text":
        t = part.get("time") or {}
        bits.append("part type text, " + ("user prompt (no time)" if not t else
                    "assistant text complete (time.end set)" if "end" in t else
                    "assistant text started (time.start only)") + ("" if part.get("text") else ", empty text"))
    elif part.get("type"):
        s = (part.get("state") or {}).get("status")
        bits.append(f"part type {part['type']}" + (f", state {s}" if s else ""))
    if props.get("reply"):
        bits.append(f"reply {props['reply']}")
    if inp.get("tool"):
        bits.append(f"tool {inp['tool']}")
    return base + (f" ({'; '.join(bits)})" if bits else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("capture_dir")
    ap.add_argument("--agent", choices=["opencode", "kilo"], default="opencode")
    ap.add_argument("--out")
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    a = ap.parse_args()
    a.out = a.out or os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../fixtures", a.agent)
    client = {"opencode": "opencode-ai", "kilo": "@kilocode/cli"}[a.agent]
    version = open(os.path.join(a.capture_dir, "client-version")).read().strip()
    os.makedirs(a.out, exist_ok=True)
    written, global_seen = [], {}
    runs = sorted(glob.glob(os.path.join(a.capture_dir, "*", "hooklog", "hooks.jsonl")),
                  key=lambda h: (h.split(os.sep)[-3] != "bash-tool", h))
    for hooks in runs:
        scen = hooks.split(os.sep)[-3]
        base = DESCRIPTIONS.get(scen, scen).replace("opencode ", f"{a.agent} ").replace("opencode.json", f"{a.agent}.json")
        seen, children, emitted = {}, set(), {}
        for line in open(hooks):
            rec = json.loads(line)
            ev, payload = rec["event"], json.loads(rec["stdin"])
            if ev.startswith("capture.") or (ev in NOISE and scen != "bash-tool"):
                continue
            info = (((payload.get("input") or {}).get("event") or {}).get("properties") or {}).get("info") or {}
            if ev == "session.created" and info.get("parentID"):
                children.add(info["id"])
            v = variant(ev, payload, children)
            if v in seen.setdefault(ev, []):
                continue
            seen[ev].append(v)
            if ev in GLOBAL_VARIANTS and v[4] != "error":  # tool errors differ per scenario
                if v in global_seen.setdefault(ev, []):
                    continue
                global_seen[ev].append(v)
            emitted[ev] = n = emitted.get(ev, 0) + 1
            head = {"provider": a.agent, "client": f"{client}@{version}", "captured": a.date, "scenario": describe(ev, payload, base, children)}
            written.append(fixture_file.write(a.out, scen, ev, n, head, payload))
    fixture_file.report(written, a.out)


if __name__ == "__main__":
    main()
