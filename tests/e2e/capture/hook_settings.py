#!/usr/bin/env python3
"""Writes a capture run's hook entries (Gemini CLI, Qwen Code, Factory Droid): every event runs
tests/e2e/hooklog.py, and the event a scripted reply may block blocks exactly once.

    hook_settings.py <run dir> <file> <blocking event> <timeout> <settings JSON> EVENT...

<file> gets the settings with the entries under "hooks"; with `-` for the settings, the entries
alone (Droid's hooks.json)."""
import json
import os
import sys

HOOKLOG = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "hooklog.py"))


def main():
    d, path, blocking, timeout, settings, *events = sys.argv[1:]

    def command(ev):
        cmd = f"python3 {HOOKLOG} {d}/hooklog {ev}"
        if ev == blocking:  # a scripted reply blocks exactly once
            cmd += f"; rc=$?; rm -f {d}/hooklog/replies/{ev}.json; exit $rc"
        return cmd

    hooks = {ev: [{"hooks": [{"type": "command", "command": command(ev), "timeout": int(timeout)}]}] for ev in events}
    doc = hooks if settings == "-" else dict(json.loads(settings), hooks=hooks)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)


if __name__ == "__main__":
    main()
