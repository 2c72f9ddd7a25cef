#!/usr/bin/env python3
"""Verify lidguard against the REAL Qwen Code (offline, loopback only).

Usage (as root; `tests/e2e/verify/run.sh qwen` builds lidguard first, then runs this):
    qwen.py [scenario ...] [--out DIR]
    qwen.py --list

Each scenario has its own run directory (HOME, `git init` project, fake lid/display tree,
LIDGUARD_HOME), as harness/run.py sets them up (its Run class is reused). The whole run is
inside a private network namespace (`unshare -n`, only `lo`): the fake OpenAI chat-completions
server (tests/e2e/fakemodel_chat.py on 127.0.0.1, OPENAI_BASE_URL), `qwen` itself (Node.js 22
from the registry; `-p`, or the TUI under a private tmux server), lidguard's hooks and its
daemon, and the ask-before-sleep test receiver.

The user settings (`~/.qwen/settings.json`: the OpenAI auth type, no telemetry, no update checks)
are written first; then the real `lidguard hook-install --provider qwen` adds lidguard's hooks
next to them and `hook-status` must say installed.

Scenarios:
  qwen-print-basic       -p --yolo, one shell tool call, lid open: the turn is tracked from
                         UserPromptSubmit to Stop (the continuation's empty UserPromptSubmit is
                         the same turn) and the session ends with the run
  qwen-print-error       -p, the model answers HTTP 400: Qwen exits 1 with no Stop; lidguard ends
                         the session when the process it watches exits
  qwen-tui-closed-deny   TUI, lid closed, policy deny: the shell call's PermissionRequest gets
                         lidguard's deny, no dialog shows, the model reads lidguard's message
  qwen-print-ask         -p, lid closed, ask before sleep: the Stop hook waits, the reply goes to
                         the model as the next prompt of the same turn
  qwen-tui-interrupt     TUI: Escape while a long shell call runs; PostToolUseFailure with
                         is_interrupt ends the session at once (no Stop follows)

Prints PASS/FAIL per check and finally `N passed, M failed`; exits 1 on any failure.
"""
import json
import os
import subprocess
import time

from harness import run as base
from harness import cli
from harness.ask import PrintAsk, print_ask
from harness.clients import QWEN, QWEN_NODE, QWEN_NODE_VERSION, QWEN_VERSION
from harness.constants import LID_MSG, MODEL_DELAY
from harness.procs import spawn, wait_or_stop
from harness.results import check
from harness.run import (FAKE, active_during, check_events_in_order, check_run_evidence, ev_summary, no_session_left,
                         tool_result_texts, user_texts)
from harness.screen import Tmux, tui_submit


class Run(base.Run):
    """harness/run.py's run directory, with Qwen's user settings and model variables."""

    def prepare(self):
        """The user's own settings, then lidguard's hook-install next to them."""
        os.makedirs(self.path("home", ".qwen"), exist_ok=True)
        with open(self.path("home", ".qwen", "settings.json"), "w") as f:
            json.dump({"security": {"auth": {"selectedType": "openai"}},
                       "privacy": {"usageStatisticsEnabled": False},
                       "general": {"disableAutoUpdate": True, "disableUpdateNag": True}}, f, indent=2)
        return self.install("qwen")

    def qwen_env(self, term):
        env = self.base_env()
        env.update(OPENAI_BASE_URL=f"http://127.0.0.1:{self.port}/v1", OPENAI_API_KEY="fake-key",
                   OPENAI_MODEL="fake-model", TERM=term)
        return env

    def steps(self):
        """The model requests that consumed a scripted step (the CLI's side calls do not)."""
        return [r for r in self.model_requests() if (r.get("body") or {}).get("tools")]


def qwen_print(run, flags, prompt="run the scripted step", timeout=120):
    """Starts `qwen -p`; returns the process."""
    return spawn([QWEN_NODE, QWEN, "-p", prompt, *flags], cwd=run.proj, env=run.qwen_env("dumb"),
                 stdin=subprocess.DEVNULL, stdout=open(run.path("stdout"), "w"),
                 stderr=open(run.path("stderr"), "w"))


# --- scenarios -------------------------------------------------------------------------------

@cli.scenario
def qwen_print_basic(root):
    tag = "qwen-print-basic"
    run = Run(root, tag, lid="open", decision="deny")
    try:
        run.start_fake([{"tool": "run_shell_command", "args": {"command": "echo hello", "description": "Say hello"},
                         "delay": MODEL_DELAY},
                        {"text": "Done: hello.", "delay": MODEL_DELAY}])
        if not run.prepare():
            return
        rc = wait_or_stop(qwen_print(run, ["--yolo"]))
        check(f"{tag}: qwen -p exit 0 and the scripted answer", rc == 0 and "Done: hello." in
              open(run.path("stdout")).read(), f"exit {rc}: {open(run.path('stderr')).read()[-400:]}")
        evs = [e for e in run.events() if e.get("provider") == "qwen"]
        check_events_in_order(tag, evs, [("UserPromptSubmit", "prompt-submitted"),
                                         ("PreToolUse", "tool-starting"), ("PostToolUse", "tool-finished"),
                                         ("Stop", "turn-stopped")])
        prompts = [e for e in evs if e.get("hookEvent") == "UserPromptSubmit"]
        check(f"{tag}: two UserPromptSubmit (the prompt, then the continuation after the tool result)",
              len(prompts) == 2, ev_summary(evs))
        stop = next((e for e in evs if e.get("hookEvent") == "Stop"), {})
        check(f"{tag}: Stop stopped the session with the lid open (no question, no output)",
              stop.get("outcome") == "stopped" and not stop.get("decision"), json.dumps(stop)[:400])
        check_run_evidence(run, "qwen", "UserPromptSubmit",
                           lambda e: e.get("hookEvent") == "Stop" and e.get("outcome") == "stopped")
        no_session_left(run, "qwen", f"{tag}: no session at the end")
    finally:
        run.finish()


@cli.scenario
def qwen_print_error(root):
    tag = "qwen-print-error"
    run = Run(root, tag, lid="open", decision="deny")
    try:
        run.start_fake([{"status": 400, "delay": MODEL_DELAY}])
        if not run.prepare():
            return
        rc = wait_or_stop(qwen_print(run, ["--yolo"]))
        check(f"{tag}: qwen -p exits 1 on the model's HTTP 400", rc == 1, f"exit {rc}")
        evs = [e for e in run.events() if e.get("provider") == "qwen"]
        names = [e.get("hookEvent") for e in evs]
        check(f"{tag}: UserPromptSubmit started the session; no Stop, no StopFailure",
              "UserPromptSubmit" in names and "Stop" not in names and "StopFailure" not in names,
              ev_summary(evs))
        run.wait_ended("qwen")
        no_session_left(run, "qwen", f"{tag}: the session ended with the process lidguard watched")
    finally:
        run.finish()


@cli.scenario
def qwen_tui_closed_deny(root):
    tag = "qwen-tui-closed-deny"
    run = Run(root, tag, lid="closed", decision="deny")
    tm = None
    try:
        run.start_fake([{"tool": "run_shell_command",
                         "args": {"command": "touch newfile.txt", "description": "Create a file"},
                         "delay": MODEL_DELAY},
                        {"text": "I could not create the file.", "delay": MODEL_DELAY}])
        if not run.prepare():
            return
        env = run.qwen_env("xterm-256color")
        tm = Tmux(run)
        tm.start_client(env, [QWEN_NODE, QWEN, "--approval-mode", "default"])
        check(f"{tag}: the TUI starts", tm.wait_screen("Type your message", timeout=60), tm.screen()[-600:])
        time.sleep(2)
        check(f"{tag}: the prompt is submitted (UserPromptSubmit)",
              tui_submit(run, tm, "make a file", "UserPromptSubmit"), tm.screen()[-600:])
        done = run.wait_event("Stop", timeout=60)
        tm.snap("after")
        evs = [e for e in run.events() if e.get("provider") == "qwen"]
        req = next((e for e in evs if e.get("hookEvent") == "PermissionRequest"), {})
        check(f"{tag}: lidguard answered the shell call's PermissionRequest with the closed-lid deny",
              (req.get("event") or {}).get("toolName") == "run_shell_command" and req.get("decision"),
              json.dumps(req)[:600])
        check(f"{tag}: no dialog: no Notification(permission_prompt), the file was not made",
              not any(e.get("hookEvent") == "Notification" and e.get("kind") == "waiting-for-user" for e in evs)
              and not os.path.exists(os.path.join(run.proj, "newfile.txt")), ev_summary(evs))
        texts = tool_result_texts(run)
        check(f"{tag}: the model read lidguard's message as the tool's result",
              any(LID_MSG in t for t in texts), texts[-2:])
        check(f"{tag}: the turn ended (Stop)", bool(done), ev_summary(evs))
        tm.send("/quit")
        time.sleep(1)
        tm.key("Enter")
        run.wait_event("SessionEnd", timeout=20)
        no_session_left(run, "qwen", f"{tag}: no session after /quit")
    finally:
        if tm:
            tm.stop()
        run.finish()


@cli.scenario
def qwen_tui_interrupt(root):
    tag = "qwen-tui-interrupt"
    run = Run(root, tag, lid="open", decision="deny")
    tm = None
    try:
        run.start_fake([{"tool": "run_shell_command",
                         "args": {"command": "sleep 30 # intentional-sleep: the test interrupts it",
                                  "description": "Wait"}},
                        {"text": "Waited."}])
        if not run.prepare():
            return
        env = run.qwen_env("xterm-256color")
        tm = Tmux(run)
        tm.start_client(env, [QWEN_NODE, QWEN, "--yolo"])
        check(f"{tag}: the TUI starts", tm.wait_screen("Type your message", timeout=60), tm.screen()[-600:])
        time.sleep(2)
        check(f"{tag}: the prompt is submitted (UserPromptSubmit)",
              tui_submit(run, tm, "wait a while", "UserPromptSubmit"), tm.screen()[-600:])
        active_during(run, "qwen", "PreToolUse", f"{tag}: while the shell call runs the session is active")
        tm.key("Escape")
        failed = run.wait_event("PostToolUseFailure", timeout=20)
        tm.snap("interrupted")
        check(f"{tag}: PostToolUseFailure (is_interrupt) recorded as interrupted",
              failed and failed[0].get("kind") == "interrupted", ev_summary(run.events()))
        run.wait_ended("qwen", timeout=5)
        no_session_left(run, "qwen", f"{tag}: the interrupt ended the session (no Stop came)")
        check(f"{tag}: no Stop after the interrupt",
              not any(e.get("hookEvent") == "Stop" for e in run.events()), ev_summary(run.events()))
        tm.send("/quit")
        time.sleep(1)
        tm.key("Enter")
        run.wait_event("SessionEnd", timeout=20)
    finally:
        if tm:
            tm.stop()
        run.finish()


QWEN_ASK = PrintAsk("qwen", "Qwen", "Stop", "qwen-hook", lambda run, prompt: qwen_print(run, ["--yolo"], prompt=prompt),
                    user_texts, allowed=("SessionStart: the daemon is not running",
                                         "Notification: the daemon is not running"))


@cli.scenario
def qwen_print_ask(root):
    print_ask(Run(root, "qwen-print-ask", lid="closed", decision="deny"), QWEN_ASK)


if __name__ == "__main__":
    cli.main(__file__, __doc__, f"lidguard vs Qwen Code {QWEN_VERSION} (Node.js {QWEN_NODE_VERSION})", [FAKE, QWEN, QWEN_NODE])
