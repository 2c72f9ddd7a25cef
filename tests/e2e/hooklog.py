#!/usr/bin/env python3
"""Hook logger for capturing what real agents send to their hooks.

Configured as the hook command in an agent's config, it records one JSON line per invocation
in <logdir>/hooks.jsonl: the event (from argv, else the payload's hook_event_name), argv, the raw
stdin, the process ancestry and the agent-specific environment. If <logdir>/replies/<event>.json
exists, its content is printed as the hook's stdout (to script decisions); the exit code comes
from <logdir>/replies/<event>.exit when present, else 0.

Usage: hooklog.py <logdir> [event]
"""
import json
import os
import sys
import time


def ancestry(pid, depth=12):
    chain = []
    while pid > 1 and len(chain) < depth:
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            break
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        chain.append({"pid": pid, "comm": comm, "cmdline": cmdline[:300]})
        pid = ppid
    return chain


def main():
    logdir = sys.argv[1]
    raw = sys.stdin.buffer.read().decode(errors="replace")
    event = sys.argv[2] if len(sys.argv) > 2 else None
    if event is None:
        try:
            event = json.loads(raw).get("hook_event_name")
        except (ValueError, AttributeError):
            event = None
    event = event or "unknown"
    keep = ("CLAUDE", "CODEX", "COPILOT", "OPENCODE", "GEMINI", "FACTORY", "DROID")
    env = {k: v for k, v in os.environ.items() if k.startswith(keep)}
    record = {
        "t": time.time(),
        "event": event,
        "argv": sys.argv[1:],
        "stdin": raw,
        "ancestry": ancestry(os.getppid()),
        "env": env,
    }
    os.makedirs(logdir, exist_ok=True)
    with open(os.path.join(logdir, "hooks.jsonl"), "a") as f:
        f.write(json.dumps(record) + "\n")
    reply = os.path.join(logdir, "replies", f"{event}.json")
    if os.path.exists(reply):
        with open(reply) as f:
            sys.stdout.write(f.read())
    code = os.path.join(logdir, "replies", f"{event}.exit")
    if os.path.exists(code):
        with open(code) as f:
            sys.exit(int(f.read().strip() or 0))
    sys.exit(0)


if __name__ == "__main__":
    main()
