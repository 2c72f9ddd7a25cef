#!/usr/bin/env python3
"""tests/e2e/fakemodel.py plus one step option: {"delay": seconds} waits before answering.

Same command line as fakemodel.py. Used by capture.py to hold a model reply back for a few seconds
so that a transcript can be copied while the turn is still running (e.g. right after Codex writes
a function_call_output, before the final answer and task_complete).
"""
import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import fakemodel  # noqa: E402

_responses, _anthropic = fakemodel.Handler.responses_reply, fakemodel.Handler.anthropic_reply


def responses_reply(self, step):
    if isinstance(step, dict) and step.get("delay"):
        time.sleep(float(step["delay"]))
    return _responses(self, step)


def anthropic_reply(self, model, step, stream):
    if isinstance(step, dict) and step.get("delay"):
        time.sleep(float(step["delay"]))
    return _anthropic(self, model, step, stream)


fakemodel.Handler.responses_reply = responses_reply
fakemodel.Handler.anthropic_reply = anthropic_reply

if __name__ == "__main__":
    fakemodel.main()
