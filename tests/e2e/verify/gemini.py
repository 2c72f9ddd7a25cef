#!/usr/bin/env python3
"""Verify lidguard against the REAL Gemini CLI (offline, loopback only).

Usage (as root; `tests/e2e/verify/run.sh gemini` builds lidguard first, then runs this):
    gemini.py [scenario ...] [--out DIR]
    gemini.py --list

Each scenario has its own run directory (HOME, `git init` project, fake lid/display tree,
LIDGUARD_HOME), exactly as harness/run.py sets them up (its Run class is reused). The whole
run is inside a private network namespace (`unshare -n`, only `lo`): the fake Gemini API
(tests/e2e/fakemodel.py on 127.0.0.1, GOOGLE_GEMINI_BASE_URL), `gemini` itself (`-p`, or the TUI
under a private tmux server), lidguard's hooks and its daemon, and the ask-before-sleep test
receiver.

The user settings (`~/.gemini/settings.json`: the API-key auth type, no telemetry, no update
checks) are written first; then the real `lidguard hook-install --provider gemini` adds lidguard's
hooks next to them and `hook-status` must say installed. What lidguard received and decided comes
from `lidguard hook-events --json`, what the model saw from the fake model's request log, session
states from a `status --json` poller.

Scenarios:
  gemini-print-basic     -p --yolo, one shell tool call, lid open: the turn is tracked from
                         BeforeAgent to AfterAgent and the session ends with the run
  gemini-print-error     -p, the model answers HTTP 400: Gemini exits 1 with no AfterAgent; its
                         SessionEnd ends the session
  gemini-tui-ask-closed  TUI, lid closed: the model calls ask_user; lidguard's BeforeTool answer
                         refuses it, no question dialog appears and the model gets the refusal
  gemini-print-ask       -p, lid closed, ask before sleep: the AfterAgent hook waits, the reply
                         goes to the model as the next prompt of the same session

Prints PASS/FAIL per check and finally `N passed, M failed`; exits 1 on any failure.
"""
import json
import os
import subprocess
import time

from harness import run as base
from harness import cli, lgverify
from harness.ask import PrintAsk, print_ask
from harness.clients import GEMINI, GEMINI_VERSION
from harness.constants import LID_MSG, MODEL_DELAY, REPO
from harness.procs import spawn, stop_popen
from harness.results import check
from harness.run import check_events_in_order, check_run_evidence, ev_summary, no_session_left
from harness.screen import Tmux, tui_submit

FAKE = os.path.join(REPO, "tests", "e2e", "fakemodel.py")
MODEL = "gemini-2.5-flash"
GEMINI_HOOK = "gemini-hook"  # what its hook entries run: `lidguard-hook gemini-hook`


class Run(base.Run):
    """harness/run.py's run directory, with the Gemini fake model and user settings."""
    fake_model = FAKE

    def prepare(self):
        """The user's own settings, then lidguard's hook-install next to them."""
        os.makedirs(self.path("home", ".gemini"), exist_ok=True)
        with open(self.path("home", ".gemini", "settings.json"), "w") as f:
            json.dump({"security": {"auth": {"selectedType": "gemini-api-key"}},
                       "privacy": {"usageStatisticsEnabled": False},
                       "general": {"disableAutoUpdate": True, "disableUpdateNag": True}}, f, indent=2)
        return self.install("gemini")

    def gemini_env(self):
        env = self.base_env()
        env.update(GOOGLE_GEMINI_BASE_URL=f"http://127.0.0.1:{self.port}", GEMINI_API_KEY="fake-key",
                   GEMINI_CLI_NO_RELAUNCH="true", GEMINI_CLI_TRUST_WORKSPACE="true")
        return env

    def steps(self):
        """The model requests that consumed a scripted step (the CLI's side calls do not)."""
        return [r for r in self.model_requests() if r.get("kind") == "step"]


def gemini_print(run, flags, prompt="run the scripted step", timeout=120):
    """`gemini -p`; returns the exit code (None when it had to be stopped)."""
    env = run.gemini_env()
    env["TERM"] = "dumb"
    p = spawn(["node", GEMINI, "-m", MODEL, "-p", prompt, *flags, "-o", "text"], cwd=run.proj, env=env,
              stdin=subprocess.DEVNULL, stdout=open(run.path("stdout"), "w"),
              stderr=open(run.path("stderr"), "w"))
    try:
        rc = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop_popen(p)
        return None
    run.wait_event("SessionEnd", timeout=5)  # the CLI does not wait for SessionEnd hooks
    return rc


def contents(req):
    """(role, [text or functionResponse summary]) of one Gemini request's conversation."""
    out = []
    for c in (req.get("body") or {}).get("contents") or []:
        parts = []
        for p in c.get("parts") or []:
            if "text" in p:
                parts.append(p["text"])
            elif "functionResponse" in p:
                parts.append(json.dumps(p["functionResponse"]))
            elif "functionCall" in p:
                parts.append("call " + p["functionCall"].get("name", "?"))
        out.append((c.get("role"), parts))
    return out


# --- scenarios -------------------------------------------------------------------------------

@cli.scenario
def gemini_print_basic(root):
    tag = "gemini-print-basic"
    run = Run(root, tag, lid="open", decision="deny")
    try:
        run.start_fake([{"tool": "run_shell_command", "input": {"command": "echo hello", "description": "Say hello"},
                         "delay": MODEL_DELAY},
                        {"text": "Done: hello.", "delay": MODEL_DELAY}])
        if not run.prepare():
            return
        rc = gemini_print(run, ["--yolo"])
        check(f"{tag}: gemini -p exit 0 and the scripted answer", rc == 0 and "Done: hello." in
              open(run.path("stdout")).read(), f"exit {rc}: {open(run.path('stderr')).read()[-400:]}")
        evs = [e for e in run.events() if e.get("provider") == "gemini"]
        check_events_in_order(tag, evs, [("BeforeAgent", "prompt-submitted"), ("BeforeTool", "tool-starting"),
                                         ("AfterTool", "tool-finished"), ("AfterAgent", "turn-stopped"),
                                         ("SessionEnd", "session-ended")])
        stop = next((e for e in evs if e.get("hookEvent") == "AfterAgent"), {})
        check(f"{tag}: AfterAgent stopped the session with the lid open (no question, no output)",
              stop.get("outcome") == "stopped" and not stop.get("decision"), json.dumps(stop)[:400])
        check_run_evidence(run, "gemini", "BeforeAgent",
                           lambda e: e.get("hookEvent") == "AfterAgent" and e.get("outcome") == "stopped")
        no_session_left(run, "gemini", f"{tag}: no session at the end")
    finally:
        run.finish()


@cli.scenario
def gemini_print_error(root):
    tag = "gemini-print-error"
    run = Run(root, tag, lid="open", decision="deny")
    try:
        run.start_fake([{"error": 400, "message": "scripted bad request", "delay": MODEL_DELAY}])
        if not run.prepare():
            return
        rc = gemini_print(run, ["--yolo"])
        check(f"{tag}: gemini -p exits 1 on the model's HTTP 400", rc == 1, f"exit {rc}")
        evs = [e for e in run.events() if e.get("provider") == "gemini"]
        names = [e.get("hookEvent") for e in evs]
        check(f"{tag}: BeforeAgent started the session, no AfterAgent, SessionEnd ended it",
              "BeforeAgent" in names and "AfterAgent" not in names
              and any(e.get("hookEvent") == "SessionEnd" and e.get("outcome") == "stopped" for e in evs),
              ev_summary(evs))
        start = next((e for e in evs if e.get("hookEvent") == "BeforeAgent"), None)
        end = next((e for e in evs if e.get("hookEvent") == "SessionEnd"), None)
        if start and end:
            ok, detail = lgverify.check_started_and_ended(run.poller, start.get("sessionId"), "gemini",
                                                          start["t"], end["t"])
        else:
            ok, detail = False, ev_summary(evs)
        check(f"{tag}: status --json: the session was working during the failing call and ended", ok, detail)
        no_session_left(run, "gemini", f"{tag}: no session at the end")
    finally:
        run.finish()


@cli.scenario
def gemini_tui_ask_closed(root):
    tag = "gemini-tui-ask-closed"
    run = Run(root, tag, lid="closed", decision="deny")
    tm = None
    try:
        question = {"questions": [{"question": "Which colour?", "header": "Colour", "type": "choice",
                                   "options": [{"label": "red", "description": "Red"},
                                               {"label": "blue", "description": "Blue"}]}]}
        run.start_fake([{"tool": "ask_user", "input": question, "delay": MODEL_DELAY},
                        {"text": "I will assume red.", "delay": MODEL_DELAY}])
        if not run.prepare():
            return
        env = run.gemini_env()
        env["TERM"] = "xterm-256color"
        tm = Tmux(run)
        tm.start_client(env, ["node", GEMINI, "-m", MODEL, "--yolo"])
        # (SessionStart reaches no daemon yet: only a prompt starts it)
        check(f"{tag}: the TUI starts", tm.wait_screen("Type your message", timeout=60), tm.screen()[-600:])
        time.sleep(1)
        check(f"{tag}: the prompt is submitted (BeforeAgent)", tui_submit(run, tm, "ask me", "BeforeAgent"),
              tm.screen()[-600:])
        done = run.wait_event("AfterAgent", timeout=60)
        tm.snap("after")
        evs = [e for e in run.events() if e.get("provider") == "gemini"]
        before = next((e for e in evs if e.get("hookEvent") == "BeforeTool"), {})
        check(f"{tag}: lidguard answered ask_user's BeforeTool with a closed-lid refusal",
              (before.get("event") or {}).get("toolName") == "ask_user" and before.get("decision"),
              json.dumps(before)[:600])
        check(f"{tag}: no question dialog: no Notification(ToolPermission), the screen never asked",
              not any(e.get("hookEvent") == "Notification" for e in evs) and "Which colour?" not in tm.screen(),
              ev_summary(evs))
        steps = run.steps()
        last = contents(steps[-1]) if len(steps) > 1 else []
        refusal = [t for role, parts in last for t in parts if "ask_user" in t and LID_MSG in t]
        check(f"{tag}: the model's next request carries ask_user's refusal (the tool did not run)",
              len(steps) == 2 and refusal, json.dumps(last)[-800:])
        check(f"{tag}: the turn ended (AfterAgent) with the model's own answer", bool(done),
              ev_summary(evs))
        tm.send("/quit")
        time.sleep(1)
        tm.key("Enter")
        run.wait_event("SessionEnd", timeout=20)
        no_session_left(run, "gemini", f"{tag}: no session after /quit")
    finally:
        if tm:
            tm.stop()
        run.finish()


def gemini_start(run, prompt):
    env = run.gemini_env()
    env["TERM"] = "dumb"
    return spawn(["node", GEMINI, "-m", MODEL, "-p", prompt, "--yolo", "-o", "text"], cwd=run.proj, env=env,
                 stdin=subprocess.DEVNULL, stdout=open(run.path("stdout"), "w"),
                 stderr=open(run.path("stderr"), "w"))


def user_prompts(req):
    return [" ".join(t.strip() for t in parts) for role, parts in contents(req) if role == "user"]


# SessionStart comes before the prompt that starts the daemon: noted, not an error.
GEMINI_ASK = PrintAsk("gemini", "Gemini", "AfterAgent", GEMINI_HOOK, gemini_start, user_prompts,
                      allowed=("SessionStart: the daemon is not running",))


@cli.scenario
def gemini_print_ask(root):
    print_ask(Run(root, "gemini-print-ask", lid="closed", decision="deny"), GEMINI_ASK)


if __name__ == "__main__":
    cli.main(__file__, __doc__, f"lidguard vs Gemini CLI {GEMINI_VERSION}", [FAKE, GEMINI])
