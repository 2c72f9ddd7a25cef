#!/usr/bin/env python3
"""Recording pass-through around `lidguard <provider>-hook`, for tests/e2e/verify/claude_codex.py.

Usage (as the agent's hook command):  claude_codex_hook.py <logdir> <lidguard binary> <subcommand>

Runs `<lidguard> <subcommand>` with the agent's stdin and environment, copies lidguard's stdout
to the agent byte for byte and exits with lidguard's exit code, so the agent sees exactly what
lidguard printed. It also appends one JSON line to <logdir>/hooks.jsonl:
{t, event, stdin, stdout, stderr, rc, ms, status, t_end}. `status` is `lidguard status --json` (only
`running`, `lid`, `externalDisplays`, `sessions`) taken right after lidguard handled the event,
while the agent is still blocked on the hook, so it is the session state at that exact point;
`ms` is lidguard's own run time, `t_end` when this wrapper hands the answer back.
The record has the `event` and `stdin` fields that tests/e2e/capture/claude/common.py's HookLog
reads. lidguard walks up the process tree to find the agent, so one extra process between
them (this script) changes nothing.
"""
import json
import os
import subprocess
import sys
import time


def main():
    logdir, lidguard, sub = sys.argv[1:4]
    raw = sys.stdin.buffer.read()
    t0 = time.time()
    p = subprocess.run([lidguard, sub], input=raw, capture_output=True)
    ms = round((time.time() - t0) * 1000, 1)
    try:
        event = json.loads(raw).get("hook_event_name")
    except (ValueError, AttributeError):
        event = None
    status = None
    try:
        s = subprocess.run([lidguard, "status", "--json"], capture_output=True, text=True, timeout=5)
        full = json.loads(s.stdout)
        status = {k: full.get(k) for k in ("running", "lid", "externalDisplays", "sessions")}
    except (subprocess.TimeoutExpired, ValueError, OSError) as e:
        status = {"error": repr(e)}
    rec = {"t": t0, "event": event or "unknown", "stdin": raw.decode(errors="replace"),
           "stdout": p.stdout.decode(errors="replace"), "stderr": p.stderr.decode(errors="replace")[-2000:],
           "rc": p.returncode, "ms": ms, "status": status, "t_end": time.time()}
    os.makedirs(logdir, exist_ok=True)
    fd = os.open(os.path.join(logdir, "hooks.jsonl"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (json.dumps(rec) + "\n").encode())  # one write: concurrent hooks do not interleave
    finally:
        os.close(fd)
    sys.stdout.buffer.write(p.stdout)
    sys.stdout.flush()
    sys.exit(p.returncode)


if __name__ == "__main__":
    main()
