#!/usr/bin/env python3
"""Verify lidguard against the REAL Factory Droid (offline, loopback only).

Usage (as root; `tests/e2e/verify/run.sh droid` builds lidguard first, then runs this):
    droid.py [scenario ...] [--out DIR]
    droid.py --list

Each scenario has its own run directory (HOME, `git init` project, fake lid/display tree,
LIDGUARD_HOME), as harness/run.py sets them up (its Run class is reused). The whole run is
inside a private network namespace (`unshare -n`, only `lo`): the fake Anthropic Messages server
(tests/e2e/fakemodel.py on 127.0.0.1), Droid 0.225.2's native binary (`droid exec`, or the TUI
with FACTORY_AIRGAP_ENABLED=1 under a private tmux server), lidguard's hooks and its daemon.

The user's own Droid config is written first: `~/.factory/settings.json` (a bring-your-own-key
model `custom:fake` whose baseUrl is the fake server, the project trusted) and
`~/.factory/hooks.json` with a logger hook of the user's on every event; then the real
`lidguard hook-install --provider droid` adds lidguard's entries next to it, and every scenario
checks that the user's logger still ran. At the end `hook-remove` must give hooks.json back byte
for byte.

Scenarios:
  droid-exec-basic         droid exec --auto low, one Execute: SessionStart of a one-shot exec
                           starts the session, it is active while the command runs, Stop ends it
  droid-exec-error         droid exec, the model answers HTTP 400: Stop ends the session
  droid-tui-permission     TUI, Auto (Off): the dialog soft-locks the session (permission_prompt),
                           allowing it makes it active again, Stop ends it, /quit leaves nothing
  droid-tui-refused        TUI: the dialog refused (No, cancel): Stop ends the session
  droid-tui-escape-tool    TUI --auto low: Escape while a long Execute runs: Stop ends it
  droid-tui-escape-model   TUI: Escape while the model still answers: Notification idle_prompt
                           (no Stop comes) ends it

Prints PASS/FAIL per check and finally `N passed, M failed`; exits 1 on any failure.
"""
import json
import os
import subprocess
import time

from harness import run as base
from harness import cli
from harness.clients import DROID, DROID_VERSION
from harness.constants import LIDGUARD, REPO
from harness.procs import spawn, wait_or_stop
from harness.results import check
from harness.run import active_during, check_events_in_order, ev_summary, no_session_left, session_of
from harness.screen import Tmux, tui_submit

FAKE = os.path.join(REPO, "tests", "e2e", "fakemodel.py")
EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Notification", "Stop",
          "SubagentStop", "PreCompact", "SessionEnd"]


def execute(command, risk="low"):
    return {"tool": "Execute", "input": {"command": command, "riskLevel": risk,
                                         "riskLevelReason": "the scripted step"}}


class Run(base.Run):
    """harness/run.py's run directory, with Droid's own config and the Anthropic fake model."""
    fake_model = FAKE

    def factory(self, *parts):
        return self.path("home", ".factory", *parts)

    def prepare(self):
        """The user's own settings and logger hooks, then lidguard's hook-install next to them."""
        os.makedirs(self.factory(), exist_ok=True)
        with open(self.factory("settings.json"), "w") as f:
            json.dump({"customModels": [{"model": "fake", "id": "custom:fake", "provider": "anthropic",
                                         "baseUrl": f"http://127.0.0.1:{self.port}", "apiKey": "fake-key"}],
                       "sessionDefaultSettings": {"model": "custom:fake"},
                       "trustedFolders": {self.proj: {"trustedAt": "2026-12-07T00:00:00Z"}}}, f, indent=2)
        mine = f"python3 {REPO}/tests/e2e/hooklog.py {self.path('user-hooks')}"
        with open(self.factory("hooks.json"), "w") as f:
            json.dump({ev: [{"hooks": [{"type": "command", "command": f"{mine} {ev}"}]}] for ev in EVENTS},
                      f, indent=2)
        with open(self.factory("hooks.json"), "rb") as f:
            self.users_hooks = f.read()
        # hook-status lists the user's Stop hooks (a Stop hook can keep Droid going): expected
        return self.install("droid", foreign_ok=lambda f: "hooklog.py" in (f.get("summary") or ""))

    def droid_env(self, term):
        env = self.base_env()
        env.update(TERM=term, FACTORY_AIRGAP_ENABLED="1")
        return env

    def user_hook_events(self):
        try:
            return [json.loads(l)["event"] for l in open(self.path("user-hooks", "hooks.jsonl"))]
        except OSError:
            return []

    def finish_droid(self, tag):
        """The user's hooks ran next to lidguard's; hook-remove gives hooks.json back."""
        mine = [e for e in self.events() if e.get("provider") == "droid"]
        theirs = self.user_hook_events()
        lidguards = [e.get("hookEvent") for e in mine]
        check(f"{tag}: the user's own hooks ran for every event lidguard heard",
              theirs and all(e in theirs for e in lidguards if e in EVENTS), f"user={theirs} lidguard={lidguards}")
        out = subprocess.run([LIDGUARD, "hook-remove", "--provider", "droid"], env=self.install_env,
                             capture_output=True, text=True, timeout=60)
        with open(self.factory("hooks.json"), "rb") as f:
            back = f.read()
        check(f"{tag}: hook-remove gives hooks.json back byte for byte",
              out.returncode == 0 and back == self.users_hooks, out.stdout + out.stderr)


def droid_exec(run, flags, prompt="run the scripted step"):
    return spawn([DROID, "exec", "-m", "custom:fake", *flags, prompt], cwd=run.proj,
                 env=run.droid_env("dumb"), stdin=subprocess.DEVNULL,
                 stdout=open(run.path("stdout"), "w"), stderr=open(run.path("stderr"), "w"))


def start_tui(run, tag, flags):
    tm = Tmux(run)
    tm.start_client(run.droid_env("xterm-256color"), [DROID, *flags])
    check(f"{tag}: the TUI starts", tm.wait_screen("for help", timeout=60), tm.screen()[-600:])
    time.sleep(2)
    return tm


def quit_tui(run, tm, tag):
    tm.send("/quit")
    time.sleep(1)
    tm.key("Enter")
    run.wait_event("SessionEnd", timeout=20)
    run.wait_ended("droid", timeout=5)
    no_session_left(run, "droid", f"{tag}: nothing left after /quit")


# --- scenarios -------------------------------------------------------------------------------

@cli.scenario
def droid_exec_basic(root):
    tag = "droid-exec-basic"
    run = Run(root, tag, lid="open", decision="deny")
    try:
        run.start_fake([execute("sleep 4; echo hello"), {"text": "Done: hello."}])
        if not run.prepare():
            return
        p = droid_exec(run, ["--auto", "low"])
        active_during(run, "droid", "PreToolUse",
                      f"{tag}: the exec's SessionStart started the session; active while Execute runs")
        rc = wait_or_stop(p)
        check(f"{tag}: droid exec exit 0 and the scripted answer",
              rc == 0 and "Done: hello." in open(run.path("stdout")).read(),
              f"exit {rc}: {open(run.path('stderr')).read()[-400:]}")
        evs = [e for e in run.events() if e.get("provider") == "droid"]
        check_events_in_order(tag, evs, [("SessionStart", "prompt-submitted"),
                                         ("PreToolUse", "tool-starting"), ("PostToolUse", "tool-finished"),
                                         ("Stop", "turn-stopped")],
                              "SessionStart (as the prompt), PreToolUse, PostToolUse, Stop in order")
        stop = next((e for e in evs if e.get("hookEvent") == "Stop"), {})
        check(f"{tag}: Stop stopped the session", stop.get("outcome") == "stopped", json.dumps(stop)[:400])
        run.wait_ended("droid")
        no_session_left(run, "droid", f"{tag}: no session at the end")
        run.finish_droid(tag)
    finally:
        run.finish()


@cli.scenario
def droid_exec_error(root):
    tag = "droid-exec-error"
    run = Run(root, tag, lid="open", decision="deny")
    try:
        run.start_fake([{"error": 400, "message": "scripted bad request"}])
        if not run.prepare():
            return
        rc = wait_or_stop(droid_exec(run, ["--auto", "low"]))
        check(f"{tag}: droid exec exits 1 on the model's HTTP 400", rc == 1, f"exit {rc}")
        evs = [e for e in run.events() if e.get("provider") == "droid"]
        names = [(e.get("hookEvent"), e.get("outcome")) for e in evs]
        check(f"{tag}: the session started and Stop stopped it",
              ("Stop", "stopped") in names and evs and evs[0].get("kind") == "prompt-submitted",
              ev_summary(evs))
        run.wait_ended("droid")
        no_session_left(run, "droid", f"{tag}: no session at the end")
        run.finish_droid(tag)
    finally:
        run.finish()


def tui_dialog(root, tag, refuse):
    run = Run(root, tag, lid="open", decision="deny")
    tm = None
    try:
        run.start_fake([execute("touch newfile.txt", risk="medium"), {"text": "Created newfile.txt."}])
        if not run.prepare():
            return
        tm = start_tui(run, tag, [])
        check(f"{tag}: the prompt is submitted (UserPromptSubmit)",
              tui_submit(run, tm, "make a file", "UserPromptSubmit"), tm.screen()[-600:])
        run.wait_event("Notification", timeout=60)
        check(f"{tag}: the dialog is on screen", tm.wait_screen("No, cancel", timeout=20), tm.screen()[-600:])
        time.sleep(1)
        ses = session_of(run.sessions(), "droid")
        check(f"{tag}: while the dialog is open the session is soft-locked (permission_prompt)",
              ses and ses[0].get("softLockReason") == "permission_prompt", ses)
        if refuse:
            tm.key("Down")
            tm.key("Down")
        tm.key("Enter")
        stop = run.wait_event("Stop", timeout=60)
        tm.snap("answered")
        made = os.path.exists(os.path.join(run.proj, "newfile.txt"))
        check(f"{tag}: the command {'did not run' if refuse else 'ran'}", made != refuse, tm.screen()[-600:])
        evs = [e for e in run.events() if e.get("provider") == "droid"]
        check(f"{tag}: {'no PostToolUse; ' if refuse else 'PostToolUse, then '}Stop stopped the session",
              stop and stop[0].get("outcome") == "stopped"
              and any(e.get("hookEvent") == "PostToolUse" for e in evs) != refuse, ev_summary(evs))
        run.wait_ended("droid")
        no_session_left(run, "droid", f"{tag}: no session after the turn")
        quit_tui(run, tm, tag)
        run.finish_droid(tag)
    finally:
        if tm:
            tm.stop()
        run.finish()


@cli.scenario
def droid_tui_permission(root):
    tui_dialog(root, "droid-tui-permission", refuse=False)


@cli.scenario
def droid_tui_refused(root):
    tui_dialog(root, "droid-tui-refused", refuse=True)


@cli.scenario
def droid_tui_escape_tool(root):
    tag = "droid-tui-escape-tool"
    run = Run(root, tag, lid="open", decision="deny")
    tm = None
    try:
        run.start_fake([execute("sleep 30 # intentional-sleep: the test interrupts it"), {"text": "Waited."}])
        if not run.prepare():
            return
        tm = start_tui(run, tag, ["--auto", "low"])
        check(f"{tag}: the prompt is submitted (UserPromptSubmit)",
              tui_submit(run, tm, "wait a while", "UserPromptSubmit"), tm.screen()[-600:])
        active_during(run, "droid", "PreToolUse", f"{tag}: while Execute runs the session is active")
        tm.key("Escape")
        stop = run.wait_event("Stop", timeout=20)
        tm.snap("interrupted")
        check(f"{tag}: Escape during the tool: Stop stopped the session",
              stop and stop[0].get("outcome") == "stopped", ev_summary(run.events()))
        run.wait_ended("droid", timeout=5)
        no_session_left(run, "droid", f"{tag}: no session after the Escape")
        quit_tui(run, tm, tag)
        run.finish_droid(tag)
    finally:
        if tm:
            tm.stop()
        run.finish()


@cli.scenario
def droid_tui_escape_model(root):
    tag = "droid-tui-escape-model"
    run = Run(root, tag, lid="open", decision="deny")
    tm = None
    try:
        run.start_fake([{"hang": True, "text": "Thinking"}, {"text": "Next."}])
        if not run.prepare():
            return
        tm = start_tui(run, tag, [])
        check(f"{tag}: the prompt is submitted (UserPromptSubmit)",
              tui_submit(run, tm, "think for a while", "UserPromptSubmit"), tm.screen()[-600:])
        time.sleep(3)
        ses = session_of(run.sessions(), "droid")
        check(f"{tag}: while the model answers the session is active", ses and ses[0].get("state") == "active", ses)
        tm.key("Escape")
        note = run.wait_event("Notification", timeout=20)
        tm.snap("interrupted")
        check(f"{tag}: Escape while the model answers: Notification idle_prompt, read as interrupted",
              note and note[0].get("kind") == "interrupted", ev_summary(run.events()))
        run.wait_ended("droid", timeout=5)
        no_session_left(run, "droid", f"{tag}: the session ended without a Stop")
        check(f"{tag}: no Stop came", not any(e.get("hookEvent") == "Stop" for e in run.events()),
              ev_summary(run.events()))
        quit_tui(run, tm, tag)
        run.finish_droid(tag)
    finally:
        if tm:
            tm.stop()
        run.finish()


if __name__ == "__main__":
    cli.main(__file__, __doc__, f"lidguard vs Factory Droid {DROID_VERSION}", [FAKE, DROID])
