#!/usr/bin/env python3
"""Verify lidguard against the REAL Cline CLI (offline, loopback only).

Usage (as root; `tests/e2e/verify/run.sh cline` builds lidguard first, then runs this):
    cline.py [scenario ...] [--out DIR]
    cline.py --list

Each scenario has its own run directory (HOME, `git init` project, fake lid/display tree,
LIDGUARD_HOME), as harness/run.py sets them up (its Run class is reused). The whole run is
inside a private network namespace (`unshare -n`, only `lo`): the fake OpenAI chat-completions
server (tests/e2e/fakemodel_chat.py on 127.0.0.1, set with `cline auth -p openai -b <url>`),
`cline "<prompt>"` (its native binary from the npm registry), lidguard's hooks and its daemon.

`cline auth` writes the user's provider settings first; then the real
`lidguard hook-install --provider cline` writes lidguard's hook files into ~/.cline/hooks next
to the user's own hook file (a `TaskComplete.sh` that logs), and `hook-status` must say installed.

Scenarios:
  cline-print-basic     one run_commands call, lid open: TaskStart starts the session,
                        TaskComplete ends it; the user's own TaskComplete.sh ran too
  cline-print-error     every model call answers HTTP 500: TaskError ends the turn; exit 1
  cline-closed-ask      lid closed, policy deny: the ask_question call's PreToolUse gets
                        lidguard's {"cancel": true, "errorMessage"}; Cline stops the run
  cline-print-interrupt SIGINT while a long command runs: the SessionShutdown hook gets no
                        payload; lidguard ends the session when the process it watches exits
  cline-hub-run         a second run, which Cline runs in its background hub: the session is
                        tracked and ends on TaskComplete although the hub lives on
  cline-tui-prompts     the interactive TUI under tmux: each prompt's TaskStart protects and its
                        TaskComplete releases; Escape during a long command (SessionShutdown,
                        no TaskCancel) releases; the next prompt protects again
  cline-mcp             `lidguard mcp-install cline` next to the user's own server in
                        cline_mcp_settings.json: Cline starts lidguard's MCP server and offers its
                        tools to the model; `mcp-remove cline` gives back the user's exact bytes

Prints PASS/FAIL per check and finally `N passed, M failed`; exits 1 on any failure.
"""
import json
import os
import signal
import subprocess
import time

from harness import run as base
from harness import cli, lgverify
from harness.clients import CLINE, CLINE_VERSION
from harness.constants import LIDGUARD, MODEL_DELAY
from harness.procs import spawn, stop_pid, wait_or_stop
from harness.results import check
from harness.run import FAKE, active_during, check_events_in_order, check_run_evidence, ev_summary, no_session_left
from harness.screen import Tmux

USER_HOOK = "#!/bin/sh\ncat > /dev/null\necho ran >> \"$HOME/user-hook.log\"\n"
# The user's own logger by the event's own name, as a new user has it (lidguard's file then takes
# another name beside it: `TaskStart.sh`).
USER_START = "#!/bin/sh\ncat > /dev/null\necho start >> \"$HOME/user-hook.log\"\n"


class Run(base.Run):
    """harness/run.py's run directory, with Cline's provider set to the fake model."""

    def prepare(self):
        """`cline auth` (the user's provider settings), the user's own hook file, then
        lidguard's hook-install next to it."""
        env = self.cline_env()
        r = subprocess.run([CLINE, "auth", "-p", "openai", "-k", "fake-key", "-m", "fake-model",
                            "-b", f"http://127.0.0.1:{self.port}/v1"], env=env, cwd=self.proj,
                           capture_output=True, text=True, timeout=60)
        if not check(f"{self.name}: cline auth sets the fake model", r.returncode == 0,
                     (r.stdout + r.stderr)[-400:]):
            return False
        hooks = self.path("home", ".cline", "hooks")
        os.makedirs(hooks, exist_ok=True)
        with open(os.path.join(hooks, "TaskComplete.sh"), "w") as f:
            f.write(USER_HOOK)
        with open(os.path.join(hooks, "TaskStart"), "w") as f:
            f.write(USER_START)
        self.users_hooks = self.hook_files()
        return self.install("cline")

    def hook_files(self):
        hooks = self.path("home", ".cline", "hooks")
        return {n: open(os.path.join(hooks, n), "rb").read() for n in sorted(os.listdir(hooks))}

    def cline_env(self):
        env = self.base_env()
        env.update(TERM="dumb")
        return env


def cline_run(run, prompt="run the scripted step", out="stdout"):
    """Starts `cline "<prompt>"`; returns the process."""
    return spawn([CLINE, prompt], cwd=run.proj, env=run.cline_env(), stdin=subprocess.DEVNULL,
                 stdout=open(run.path(out), "w"), stderr=open(run.path(out + ".err"), "w"))


def steps(run):
    """The model requests that consumed a scripted step (not the refused telemetry connects)."""
    return [r for r in run.model_requests() if (r.get("body") or {}).get("tools")]


def cline_events(run):
    return [e for e in run.events() if e.get("provider") == "cline"]


def cmdline(pid):
    """A process's command line; empty when it has exited since /proc was listed."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def stop_hub(run):
    """Cline's background hub outlives the CLI: stop the one this run's HOME started."""
    home = run.path("home").encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if b"cline" in cmd and b"HOME=" + home + b"\0" in env:
            stop_pid(int(pid))


# --- scenarios -------------------------------------------------------------------------------

@cli.scenario
def cline_print_basic(root):
    tag = "cline-print-basic"
    run = Run(root, tag, lid="open", decision="deny")
    try:
        run.start_fake([{"tool": "run_commands", "args": {"commands": ["echo hello"]}, "delay": MODEL_DELAY},
                        {"text": "Done: hello.", "delay": MODEL_DELAY}])
        if not run.prepare():
            return
        rc = wait_or_stop(cline_run(run), 150)
        out = open(run.path("stdout")).read()
        check(f"{tag}: cline exits 0 with the scripted answer", rc == 0 and "Done: hello." in out,
              f"exit {rc}: {out[-300:]} {open(run.path('stdout.err')).read()[-300:]}")
        run.wait_event("TaskComplete", timeout=10)
        evs = cline_events(run)
        check_events_in_order(tag, evs, [("TaskStart", "prompt-submitted"), ("PreToolUse", "tool-starting"),
                                         ("PostToolUse", "tool-finished"), ("TaskComplete", "turn-stopped")])
        logged = open(run.path("home", "user-hook.log")).read() if os.path.exists(run.path("home", "user-hook.log")) else ""
        check(f"{tag}: the user's own TaskStart and TaskComplete.sh ran next to lidguard's TaskStart.sh and "
              "TaskComplete", logged == "start\nran\n" and os.path.exists(run.path("home", ".cline", "hooks", "TaskStart.sh")),
              repr(logged))
        check_run_evidence(run, "cline", "TaskStart",
                           lambda e: e.get("hookEvent") == "TaskComplete" and e.get("outcome") == "stopped")
        no_session_left(run, "cline", f"{tag}: no session at the end")
        out = subprocess.run([LIDGUARD, "hook-remove", "--provider", "cline"], env=run.install_env,
                             capture_output=True, text=True, timeout=60)
        check(f"{tag}: hook-remove leaves exactly the user's hook files, byte for byte",
              out.returncode == 0 and run.hook_files() == run.users_hooks,
              f"{out.stdout}{out.stderr} left={sorted(run.hook_files())}")
    finally:
        stop_hub(run)
        run.finish()


@cli.scenario
def cline_print_error(root):
    tag = "cline-print-error"
    run = Run(root, tag, lid="open", decision="deny")
    try:
        run.start_fake([{"status": 500}] * 8)
        if not run.prepare():
            return
        rc = wait_or_stop(cline_run(run), 150)
        check(f"{tag}: cline exits 1 after the model's HTTP 500s", rc == 1, f"exit {rc}")
        failed = run.wait_event("TaskError", timeout=10)
        check(f"{tag}: TaskError recorded as a failed turn",
              failed and failed[0].get("kind") == "turn-failed", ev_summary(cline_events(run)))
        run.wait_ended("cline")
        no_session_left(run, "cline", f"{tag}: no session after the failed run")
    finally:
        stop_hub(run)
        run.finish()


@cli.scenario
def cline_closed_ask(root):
    tag = "cline-closed-ask"
    run = Run(root, tag, lid="closed", decision="deny")
    try:
        run.start_fake([{"tool": "ask_question", "args": {"question": "Which colour?", "options": ["red", "blue"]},
                         "delay": MODEL_DELAY},
                        {"text": "Asked.", "delay": MODEL_DELAY}])
        if not run.prepare():
            return
        rc = wait_or_stop(cline_run(run), 150)
        out = open(run.path("stdout")).read()
        evs = cline_events(run)
        pre = next((e for e in evs if e.get("hookEvent") == "PreToolUse"), {})
        check(f"{tag}: lidguard refused ask_question with the closed-lid policy",
              (pre.get("event") or {}).get("toolName") == "ask_question" and pre.get("decision"),
              json.dumps(pre)[:600])
        check(f"{tag}: Cline stopped the run (no second model call, the abort on stdout)",
              len(steps(run)) == 1 and "abort" in out, f"exit {rc}: {out[-300:]}")
        run.wait_event("SessionShutdown", timeout=10)
        run.wait_ended("cline")
        no_session_left(run, "cline", f"{tag}: no session after the stopped run")
    finally:
        stop_hub(run)
        run.finish()


@cli.scenario
def cline_print_interrupt(root):
    tag = "cline-print-interrupt"
    run = Run(root, tag, lid="open", decision="deny")
    try:
        run.start_fake([{"tool": "run_commands",
                         "args": {"commands": ["sleep 30 # intentional-sleep: the test interrupts it"]}},
                        {"text": "Waited."}])
        if not run.prepare():
            return
        p = cline_run(run)
        active_during(run, "cline", "PreToolUse", f"{tag}: while the command runs the session is active")
        os.kill(p.pid, signal.SIGINT)
        wait_or_stop(p, timeout=30)
        t0 = time.time()
        run.wait_ended("cline", timeout=15)
        no_session_left(run, "cline", f"{tag}: the session ended with the process lidguard watched "
                                      f"({time.time() - t0:.1f} s after the exit)")
    finally:
        stop_hub(run)
        run.finish()


@cli.scenario
def cline_hub_run(root):
    tag = "cline-hub-run"
    run = Run(root, tag, lid="open", decision="deny")
    try:
        run.start_fake([{"text": "First answer.", "delay": MODEL_DELAY},
                        {"text": "Second answer.", "delay": MODEL_DELAY}])
        if not run.prepare():
            return
        rc1 = wait_or_stop(cline_run(run, out="stdout1"), 150)
        run.wait_event("TaskComplete", timeout=10)
        run.wait_ended("cline")
        rc2 = wait_or_stop(cline_run(run, out="stdout2"), 150)
        check(f"{tag}: both runs exit 0", rc1 == 0 and rc2 == 0, f"{rc1} {rc2}")
        done = run.wait_event("TaskComplete", count=2, timeout=15)
        evs = cline_events(run)
        starts = [e for e in evs if e.get("hookEvent") == "TaskStart"]
        check(f"{tag}: two sessions, each started by TaskStart and stopped by TaskComplete",
              done and len(starts) == 2 and len({e.get("sessionId") for e in starts}) == 2
              and all(e.get("outcome") == "stopped" for e in done), ev_summary(evs))
        hub = [pid for pid in os.listdir("/proc")
               if pid.isdigit() and b"--cline-hub-daemon" in cmdline(pid)]
        check(f"{tag}: Cline's hub is still running after the second run", bool(hub), "no hub process")
        no_session_left(run, "cline", f"{tag}: no session while the hub lives on")
    finally:
        stop_hub(run)
        run.finish()


USER_MCP = '{\n  "mcpServers": {\n    "mine": {"command": "/bin/true", "args": [], "disabled": true}\n  }\n}\n'


def tui_prompt(run, tm, text, n):
    """Types `text` and Enter until lidguard's hook log has the `n`th TaskStart (keys sent
    before the TUI listens are lost)."""
    for _ in range(3):
        tm.send(text)
        time.sleep(0.3)
        tm.key("Enter")
        if run.wait_event("TaskStart", count=n, timeout=15):
            return True
        tm.key("C-u")
    return False


@cli.scenario
def cline_tui_prompts(root):
    tag = "cline-tui-prompts"
    run = Run(root, tag, lid="open", decision="deny")
    tm = None
    try:
        run.start_fake([{"text": "First answer.", "delay": MODEL_DELAY},
                        {"tool": "run_commands",
                         "args": {"commands": ["sleep 30 # intentional-sleep: the test cancels it"]}},
                        {"text": "After the cancel.", "delay": MODEL_DELAY}])
        if not run.prepare():
            return
        env = run.cline_env()
        env["TERM"] = "xterm-256color"
        tm = Tmux(run)
        tm.start_client(env, [CLINE])
        # Its input line, or first a promotion over it ("any other key to close"), which
        # Escape closes.
        up = False
        for _ in range(200):
            screen = tm.screen()
            if "any other key to close" in screen:
                tm.key("Escape")
                time.sleep(1)
            elif "Act (Tab)" in screen:
                up = True
                break
            time.sleep(0.3)
        check(f"{tag}: the TUI starts", up, tm.screen()[-600:])
        check(f"{tag}: the first prompt fires TaskStart", tui_prompt(run, tm, "say something", 1),
              tm.screen()[-600:])
        check(f"{tag}: its answer's TaskComplete ends the turn",
              bool(run.wait_event("TaskComplete", timeout=30)), ev_summary(cline_events(run)))
        run.wait_ended("cline")
        no_session_left(run, "cline", f"{tag}: nothing held after the first answer")
        check(f"{tag}: the second prompt fires TaskStart again (no UserPromptSubmit)",
              tui_prompt(run, tm, "run the long step", 2), tm.screen()[-600:])
        active_during(run, "cline", "PreToolUse", f"{tag}: while the long command runs the session is active",
                      timeout=30)
        tm.key("Escape")
        check(f"{tag}: Escape fires SessionShutdown (not TaskCancel)",
              bool(run.wait_event("SessionShutdown", timeout=20))
              and not run.wait_event("TaskCancel", timeout=0),
              ev_summary(cline_events(run)))
        tm.snap("cancelled")
        run.wait_ended("cline")
        no_session_left(run, "cline", f"{tag}: the cancel ended the turn")
        check(f"{tag}: the TUI stays open and the next prompt fires TaskStart",
              tui_prompt(run, tm, "after the cancel", 3), tm.screen()[-600:])
        done = run.wait_event("TaskComplete", count=2, timeout=30)
        check(f"{tag}: its answer's TaskComplete comes", bool(done), ev_summary(cline_events(run)))
        run.wait_ended("cline")
        third = run.wait_event("TaskStart", count=3, timeout=0)
        if third and done:
            ok, detail = lgverify.check_started_and_ended(
                run.poller, third[2].get("sessionId"), "cline", third[2]["t"], done[1]["t"])
        else:
            ok, detail = False, ev_summary(cline_events(run))
        check(f"{tag}: status --json: that prompt protects again (active) until its answer", ok, detail)
        no_session_left(run, "cline", f"{tag}: no session at the end")
        check(f"{tag}: no UserPromptSubmit in the whole TUI session",
              not run.wait_event("UserPromptSubmit", timeout=0), ev_summary(cline_events(run)))
        tm.key("C-c")
        time.sleep(1)
        tm.key("C-c")
    finally:
        if tm:
            tm.stop()
        stop_hub(run)
        run.finish()


@cli.scenario
def cline_mcp(root):
    tag = "cline-mcp"
    run = Run(root, tag, lid="open", decision="deny")
    try:
        run.start_fake([{"text": "No tools needed.", "delay": MODEL_DELAY}])
        if not run.prepare():
            return
        settings = run.path("home", ".cline", "data", "settings", "cline_mcp_settings.json")
        os.makedirs(os.path.dirname(settings), exist_ok=True)
        with open(settings, "w") as f:
            f.write(USER_MCP)
        r = subprocess.run([LIDGUARD, "mcp-install", "cline"], env=run.cli_env(),
                           capture_output=True, text=True, timeout=30)
        entry = (json.load(open(settings)).get("mcpServers") or {}).get("lidguard") or {}
        check(f"{tag}: mcp-install cline writes lidguard's server next to the user's",
              r.returncode == 0 and entry.get("args") == ["mcp-server"]
              and "mine" in json.load(open(settings))["mcpServers"], r.stdout + r.stderr)
        rc = wait_or_stop(cline_run(run), 150)
        offered = [t.get("function", t).get("name", "") for t in
                   ((steps(run) or [{}])[0].get("body") or {}).get("tools") or []]
        check(f"{tag}: Cline started lidguard's MCP server and offered its tools to the model",
              rc == 0 and "lidguard__list_sessions" in offered, f"exit {rc}: {offered}")
        r = subprocess.run([LIDGUARD, "mcp-remove", "cline"], env=run.cli_env(),
                           capture_output=True, text=True, timeout=30)
        check(f"{tag}: mcp-remove cline gives back the user's exact bytes",
              r.returncode == 0 and open(settings).read() == USER_MCP, r.stdout + r.stderr)
    finally:
        stop_hub(run)
        run.finish()


if __name__ == "__main__":
    cli.main(__file__, __doc__, f"lidguard vs Cline CLI {CLINE_VERSION}", [FAKE, CLINE])
