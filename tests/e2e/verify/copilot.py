#!/usr/bin/env python3
"""Verify lidguard against the REAL GitHub Copilot CLI (offline, loopback only).

Usage (as root; `tests/e2e/verify/run.sh copilot` builds lidguard first, then runs this):
    copilot.py [scenario ...] [--out DIR]
    copilot.py --list

Each scenario is a `Run` (harness/run.py: its own HOME, XDG folders, `git init` project, fake lid
and display tree, LIDGUARD_HOME, the fake chat-completions model on 127.0.0.1). The hooks are
installed by the real `lidguard hook-install --provider copilot` (COPILOT_HOME pointing into the
run) and `hook-status` must say `installed` before the client starts; Copilot then runs exactly
what hook-install wrote. What lidguard received and decided comes from `lidguard hook-events
--json`; what Copilot got back from its own logs (`<run>/copilot/session-state/*/events.jsonl`:
every hook run with its input and success; `<run>/logs/*.log`: `[hook stdout]` lines at log level
all); session states from a `status --json` poller.

Scenarios:
  copilot-bash-tool         -p, one bash call, lid open: tracked from the prompt to the end
  copilot-permission-allow  -p, lid closed, policy allow: lidguard allows the tool, the file is made
  copilot-permission-deny   -p, lid closed, policy deny: lidguard prints nothing, Copilot's own prompt
                            denies, the session waits (soft-locked) meanwhile
  copilot-async-shell       -p, an async shell outlives the turn: the session stays until it ends
  copilot-tui-ask-user      the TUI under tmux, lid closed: ask_user is refused, no dialog

Prints PASS/FAIL per check and finally `N passed, M failed`; exits 1 on any failure.
"""
import glob
import json
import os
import re
import subprocess
import time
from harness import cli, lgverify
from harness.clients import COPILOT, COPILOT_VERSION, COPILOT_XDG_CACHE
from harness.constants import MODEL_DELAY
from harness.procs import spawn, stop_popen
from harness.results import check
from harness.run import (FAKE, Run, TOUCH, check_run_evidence, ev_summary, no_session_left, session_of,
                         tool_result_texts)
from harness.screen import Tmux, tui_submit

LOG_LINE = re.compile(r"^(\d{4}-\d\d-\d\dT[\d:.]+Z) \[\w+\] \[rust:hooks\] \[hook (stdout|stderr)\] ?(.*)$")


def copilot_hooks(run):
    """Every hook run Copilot recorded: [{t, t_end, event, input, success, stdout, stderr}] in start
    order. events.jsonl gives hook.start (hookType, Copilot's form of the payload) and hook.end
    (success); `[hook stdout]`/`[hook stderr]` lines of its log (level all) are attributed to the
    run whose start..end holds their timestamp."""
    runs = {}
    for path in glob.glob(run.path("copilot", "session-state", "*", "events.jsonl")):
        with open(path) as f:
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                if e.get("type") not in ("hook.start", "hook.end"):
                    continue
                d = e.get("data") or {}
                r = runs.setdefault(d.get("hookInvocationId"), {"event": d.get("hookType"), "t": None, "t_end": None,
                                                                 "input": None, "success": None,
                                                                 "stdout": "", "stderr": ""})
                t = lgverify.parse_at(e["timestamp"])
                if e["type"] == "hook.start":
                    r.update(t=t, input=d.get("input") or {})
                else:
                    r.update(t_end=t, success=d.get("success"))
    recs = sorted((r for r in runs.values() if r["t"] is not None), key=lambda r: r["t"])
    for path in glob.glob(run.path("logs", "*.log")):
        with open(path, errors="replace") as f:
            for line in f:
                m = LOG_LINE.match(line.rstrip("\n"))
                if not m:
                    continue
                t = lgverify.parse_at(m.group(1))
                owners = [r for r in recs if r["t"] - 0.002 <= t <= (r["t_end"] or t) + 0.002]
                if owners:
                    owners[-1][m.group(2)] += m.group(3)
                else:
                    recs.append({"event": "?", "t": t, "t_end": t, "input": {}, "success": None,
                                 "stdout" if m.group(2) == "stdout" else "stderr": m.group(3),
                                 "stderr" if m.group(2) == "stdout" else "stdout": ""})
    with open(run.path("copilot-hooks.json"), "w") as f:
        json.dump(recs, f, indent=1)
    return recs


def field(inp, snake):
    """A payload field in Copilot's snake_case stdin form or its camelCase session-log form."""
    camel = re.sub(r"_(\w)", lambda m: m.group(1).upper(), snake)
    return (inp or {}).get(snake, (inp or {}).get(camel))


def tool_names(inp):
    return [c.get("name") for c in field(inp, "tool_calls") or []] + ([field(inp, "tool_name")] if field(inp, "tool_name") else [])


def check_copilot_hooks_ok(run):
    """Every hook Copilot ran succeeded and none wrote to stderr (lidguard's hooks always exit 0)."""
    recs = copilot_hooks(run)
    bad = [f"{r['event']}: success={r['success']} stderr={r['stderr'][:80]!r}" for r in recs
           if r["success"] is not True or r["stderr"]]
    return check(f"{run.name}: every hook run succeeded with no stderr (Copilot's session log)",
                 recs and not bad, f"{len(recs)} hook runs" + (f"; bad: {bad[:3]}" if bad else ""))


def copilot_prepare(run):
    os.makedirs(run.path("copilot"), exist_ok=True)
    run.install("copilot", COPILOT_HOME=run.path("copilot"))


def copilot_env(run):
    env = run.base_env()
    env.update(XDG_CACHE_HOME=COPILOT_XDG_CACHE, COPILOT_HOME=run.path("copilot"), COPILOT_OFFLINE="true",
               COPILOT_PROVIDER_BASE_URL=f"http://127.0.0.1:{run.port}/v1", COPILOT_PROVIDER_API_KEY="fake-key",
               COPILOT_MODEL="fake-model", COPILOT_AUTO_UPDATE="false")
    return env


def copilot_print(run, flags, prompt="run the scripted step", poll=None, timeout=120):
    """`copilot -p`; while it runs, poll(run) is called every 0.25 s. Returns the exit code."""
    env = copilot_env(run)
    env["TERM"] = "dumb"
    p = spawn([COPILOT, "-p", prompt, *flags, "--log-level", "all", "--log-dir", run.path("logs")],
              cwd=run.proj, env=env, stdin=subprocess.DEVNULL,
              stdout=open(run.path("stdout"), "w"), stderr=open(run.path("stderr"), "w"))
    end = time.time() + timeout
    while p.poll() is None and time.time() < end:
        if poll:
            poll(run)
        time.sleep(0.25)
    if p.poll() is None:
        stop_popen(p)
        return None
    # fire-and-forget hooks (sessionEnd) may land after the exit: bounded wait on lidguard's hook log
    run.wait_event("sessionEnd", timeout=5)
    if poll:
        poll(run)
    return p.returncode


@cli.scenario
def copilot_bash_tool(root):
    run = Run(root, "copilot-bash-tool", lid="open", decision="deny")
    try:
        run.start_fake([{"tool": "bash", "args": {"command": "echo hello", "description": "Say hello"},
                         "delay": MODEL_DELAY}, {"text": "Done: hello.", "delay": MODEL_DELAY}])
        copilot_prepare(run)
        rc = copilot_print(run, ["--allow-all-tools"])
        evs = [e for e in run.events() if e.get("provider") == "copilot"]
        summ = ev_summary(evs)
        check("copilot-bash-tool: copilot -p exit 0", rc == 0, f"exit {rc}")
        kinds = [e.get("kind") for e in evs]
        started = [e for e in evs if e.get("hookEvent") == "userPromptSubmitted" and e.get("outcome") == "started"]
        check("copilot-bash-tool: userPromptSubmitted started the session", started, summ)
        stopped = [e for e in evs if e.get("kind") in ("turn-stopped", "session-ended") and e.get("outcome") == "stopped"]
        ok = (started and stopped and kinds.index("prompt-submitted") < kinds.index(stopped[0]["kind"])
              and "tool-starting" in kinds and "tool-finished" in kinds)
        check("copilot-bash-tool: hook-events prompt-submitted, tool-starting/finished, then turn-stopped/session-ended(stopped)",
              ok, summ)
        recs = copilot_hooks(run)
        perm = [r for r in recs if r["event"] == "permissionRequest"]
        dec = [e.get("decision") for e in evs if e.get("hookEvent") == "permissionRequest"]
        check("copilot-bash-tool: permissionRequest with the lid open prints nothing (Copilot's log: the hook ran "
              "and succeeded, no output; hook-events: no decision)",
              perm and all(r["stdout"] == "" and r["success"] is True for r in perm) and dec and not any(dec),
              [(r["stdout"], r["success"]) for r in perm] + [dec])
        check_run_evidence(run, "copilot", "userPromptSubmitted",
                           lambda e: e.get("outcome") == "stopped")
        check_copilot_hooks_ok(run)
        no_session_left(run, "copilot", "copilot-bash-tool: status --json has no session at the end")
    finally:
        run.finish()


@cli.scenario
def copilot_permission_allow(root):
    run = Run(root, "copilot-permission-allow", lid="closed", decision="allow")
    try:
        run.start_fake(TOUCH)
        copilot_prepare(run)
        rc = copilot_print(run, [])  # no --allow-all-tools: Copilot itself would deny in -p
        recs = copilot_hooks(run)
        names = [r["event"] for r in recs]
        created = os.path.exists(os.path.join(run.proj, "newfile.txt"))
        check("copilot-permission-allow: lidguard's allow makes the write command run (newfile.txt created)",
              created and rc == 0, f"created={created} exit={rc} hooks={names} tool results={tool_result_texts(run)}")
        perm = [r for r in recs if r["event"] == "permissionRequest"]
        printed = [(r["event"], r["stdout"]) for r in recs if r["stdout"]]
        check('copilot-permission-allow: permissionRequest printed exactly {"behavior":"allow"} (Copilot\'s log; '
              'no other hook printed anything)',
              perm and all(r["stdout"].strip() == '{"behavior":"allow"}' and r["success"] is True for r in perm)
              and all(e == "permissionRequest" for e, _ in printed), printed)
        check("copilot-permission-allow: no permission_prompt notification, postToolUse fired",
              "postToolUse" in names and not any(
                  r["event"] == "notification" and field(r["input"], "notification_type") == "permission_prompt"
                  for r in recs), names)
        evs = run.events()
        dec = [e.get("decision") for e in evs if e.get("hookEvent") == "permissionRequest"]
        check("copilot-permission-allow: hook-events records decision allowPermission (lid Closed)",
              dec and all(d and d.get("action") == "allowPermission" for d in dec), dec)
        check_copilot_hooks_ok(run)
        no_session_left(run, "copilot", "copilot-permission-allow: no session at the end")
    finally:
        run.finish()


@cli.scenario
def copilot_permission_deny(root):
    run = Run(root, "copilot-permission-deny", lid="closed", decision="deny")
    seen = []

    def poll(r):
        for s in session_of(r.sessions(), "copilot"):
            if s.get("softLockReason"):
                seen.append(s)

    try:
        run.start_fake(TOUCH)
        copilot_prepare(run)
        rc = copilot_print(run, [], poll=poll)
        recs = copilot_hooks(run)
        names = [r["event"] for r in recs]
        created = os.path.exists(os.path.join(run.proj, "newfile.txt"))
        check("copilot-permission-deny: the write command did not run (Copilot's own -p denial)",
              not created and rc == 0, f"created={created} exit={rc}")
        perm = [r for r in recs if r["event"] == "permissionRequest"]
        check("copilot-permission-deny: permissionRequest printed nothing (deny relies on Copilot's own prompt; "
              "Copilot's log)", perm and all(r["stdout"] == "" and r["success"] is True for r in perm),
              [(r["stdout"], r["success"]) for r in perm])
        notif = [r for r in recs if r["event"] == "notification"
                 and field(r["input"], "notification_type") == "permission_prompt"]
        check("copilot-permission-deny: Copilot's own flow fired notification(permission_prompt)", notif, names)
        denied = [t for t in tool_result_texts(run) if "ermission denied" in t]
        check("copilot-permission-deny: the model got Copilot's own permission-denied tool result", denied,
              tool_result_texts(run))
        check("copilot-permission-deny: status showed the session soft-locked with reason permission_prompt while it ran",
              any(s.get("softLockReason") == "permission_prompt" for s in seen),
              seen[:2] or "never seen soft-locked")
        evs = run.events()
        rec = [e for e in evs if e.get("kind") == "waiting-for-user"
               and (e.get("event") or {}).get("stateReason", "permission_prompt") == "permission_prompt"]
        check("copilot-permission-deny: hook-events has notification -> waiting-for-user (recorded)",
              rec and rec[0].get("outcome") == "recorded", ev_summary(evs))
        check_copilot_hooks_ok(run)
        no_session_left(run, "copilot", "copilot-permission-deny: no session at the end (agentStop after the denial)")
    finally:
        run.finish()


@cli.scenario
def copilot_async_shell(root):
    run = Run(root, "copilot-async-shell", lid="open", decision="deny")
    snaps = []  # (t, [copilot sessions])

    def poll(r):
        snaps.append((time.time(), session_of(r.sessions(), "copilot")))

    try:
        run.start_fake([{"tool": "bash", "args": {"command": "sleep 6; echo bg-done", "description": "Background sleep",
                                                  "mode": "async", "shellId": "bg2"}},
                        {"text": "Waiting for the background shell."}])
        copilot_prepare(run)
        rc = copilot_print(run, ["--allow-all-tools"], poll=poll)
        recs = copilot_hooks(run)
        names = [r["event"] for r in recs]
        check("copilot-async-shell: copilot -p exit 0", rc == 0, f"exit {rc}")
        first_end = next((r["t_end"] or r["t"] for r in recs if r["event"] in ("sessionEnd", "agentStop")), None)
        notif = next((r for r in recs if r["event"] == "notification"
                      and field(r["input"], "notification_type") == "shell_completed"), None)
        check("copilot-async-shell: Copilot fired notification(shell_completed)", notif, names)
        ends = [r for r in recs if r["event"] in ("sessionEnd", "agentStop")]
        if first_end and notif:
            window = [s for t, s in snaps if first_end < t < notif["t"]]
            pending = [s for s in window if s and all(x.get("pendingProviderWork") for x in s)]
            check("copilot-async-shell: after the turn's agentStop/sessionEnd the session stays with pendingProviderWork: true",
                  pending and len(pending) >= max(1, len(window) - 2),
                  f"{len(pending)}/{len(window)} snapshots pending; first={json.dumps(window[:1])[:400]}")
            after = [r for r in ends if r["t"] > notif["t"]]
            check("copilot-async-shell: another agentStop/sessionEnd after shell_completed", after, names)
        else:
            check("copilot-async-shell: after the turn's agentStop/sessionEnd the session stays with pendingProviderWork: true",
                  False, f"no first stop or notification: {names}")
        evs = [e for e in run.events() if e.get("provider") == "copilot"]
        summ = ev_summary(evs)
        deferred = [e for e in evs if e.get("outcome") == "stop-deferred"]
        work_started = [e for e in evs if e.get("kind") == "work-started"]
        work_finished = [e for e in evs if e.get("kind") == "work-finished"]
        stopped = [e for e in evs if e.get("outcome") == "stopped"]
        ok = deferred and work_started and work_finished and stopped and \
            evs.index(deferred[0]) < evs.index(work_finished[0]) < evs.index(stopped[-1])
        check("copilot-async-shell: hook-events work-started, stop-deferred, work-finished (shell_completed), then stopped",
              ok, summ)
        check_copilot_hooks_ok(run)
        no_session_left(run, "copilot", "copilot-async-shell: no session at the end")
    finally:
        run.finish()


@cli.scenario
def copilot_tui_ask_user(root):
    run = Run(root, "copilot-tui-ask-user", lid="closed", decision="deny")
    tm = Tmux(run)
    try:
        run.start_fake([{"tool": "ask_user", "args": {"message": "Which colour?", "requestedSchema": {
            "properties": {"colour": {"type": "string", "title": "Colour", "enum": ["red", "blue"]}},
            "required": ["colour"]}}}, {"text": "Thanks, noted."}])
        copilot_prepare(run)
        env = copilot_env(run)
        env["TERM"] = "xterm-256color"
        tm.start_client(env, [COPILOT, "--log-level", "all", "--log-dir", run.path("logs")])
        if not tm.wait_screen("Do you trust the files"):
            tm.snap("trust")
            check("copilot-tui-ask-user: TUI started (folder trust dialog)", False, "no trust dialog within 60 s")
            return
        for _ in range(3):  # accept the folder trust dialog (Enter again while it stays up)
            tm.key("Enter")
            time.sleep(1.5)
            if "Do you trust the files" not in tm.screen():
                break
        time.sleep(1.5)
        if not check("copilot-tui-ask-user: prompt submitted (userPromptSubmitted in lidguard's hook log)",
                     tui_submit(run, tm, "go", "userPromptSubmitted"), tm.screen()[-600:]):
            return
        pre = run.wait_event("preToolUse", timeout=60)
        stop = run.wait_event("agentStop", timeout=30)  # nobody touches the keyboard meanwhile
        time.sleep(2)  # let the screen settle
        tm.snap("after")
        recs = copilot_hooks(run)
        names = [r["event"] for r in recs]
        check("copilot-tui-ask-user: the turn ended without anyone answering (agentStop, no key pressed)", stop, names)
        asks = [r for r in recs if r["event"] == "preToolUse" and "ask_user" in tool_names(r["input"])]
        outs = [r["stdout"].strip() for r in asks]
        ok = False
        if outs and pre:
            try:
                j = json.loads(outs[0])
                ok = list(j) == ["permissionDecision", "permissionDecisionReason"] and \
                    j["permissionDecision"] == "deny" and j["permissionDecisionReason"] and asks[0]["success"] is True
            except ValueError:
                pass
        check('copilot-tui-ask-user: preToolUse(ask_user) printed exactly {"permissionDecision":"deny","permissionDecisionReason":"…"} '
              "(Copilot's log)", ok, outs)
        elicit = [r for r in recs if r["event"] == "notification"
                  and field(r["input"], "notification_type") == "elicitation_dialog"]
        screen = open(run.path("screen-after.txt")).read()
        check("copilot-tui-ask-user: no question dialog (no elicitation_dialog notification, screen has no 'Copilot needs information')",
              not elicit and "needs information" not in screen, f"elicit={len(elicit)} screen tail={screen[-600:]!r}")
        evs = run.events()
        dec = [e.get("decision") for e in evs if e.get("hookEvent") == "preToolUse" and e.get("tool") == "ask_user"]
        reason = (dec[0] or {}).get("message", "") if dec else ""
        got = [t for t in tool_result_texts(run) if reason and reason[:40] in t]
        check("copilot-tui-ask-user: the model received lidguard's deny reason as the ask_user result",
              got and (not outs or reason in outs[0]), f"decision={dec} tool results={tool_result_texts(run)}")
        tm.send("/exit")
        time.sleep(0.3)
        tm.key("Enter")
        if not run.wait_event("sessionEnd", timeout=10):
            tm.key("Enter")  # bounded retry: the Enter may have been taken by the command menu
            run.wait_event("sessionEnd", timeout=10)
        check_copilot_hooks_ok(run)
        no_session_left(run, "copilot", "copilot-tui-ask-user: no session after /exit")
    finally:
        tm.stop()
        run.finish()


if __name__ == "__main__":
    cli.main(__file__, __doc__, f"lidguard vs Copilot CLI {COPILOT_VERSION}", [FAKE, COPILOT])
