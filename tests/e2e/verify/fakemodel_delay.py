#!/usr/bin/env python3
"""tests/e2e/fakemodel.py plus one step field for the verifier: {"delay": seconds} makes the
fake model wait that long before answering the request that consumes the step.

The verifier uses it to give lidguard's `status --json` poller a guaranteed window while the
agent waits for the model (for example between UserPromptSubmit and PreToolUse), instead of
relying on a wrapper around the hook command. Same command line as fakemodel.py.
"""
import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fakemodel  # noqa: E402

_next_step = fakemodel.next_step


def next_step(channel):
    i, step = _next_step(channel)
    if isinstance(step, dict) and step.get("delay"):
        time.sleep(float(step["delay"]))
    return i, step


fakemodel.next_step = next_step  # the handlers look next_step up in the module at call time

if __name__ == "__main__":
    fakemodel.main()
