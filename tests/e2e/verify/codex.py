#!/usr/bin/env python3
"""Verify against the real Codex CLI that it honours lidguard's hook answers (offline, loopback
only).

Usage (as root; `tests/e2e/verify/run.sh codex` builds lidguard and the helpers first):
    codex.py [scenario ...] [--out DIR]
    codex.py --list

Each scenario is a `Ctx` (harness/scene.py: its folders, lidguard's environment, the fake OpenAI
Responses API with a delay per step, the status poller), plus codex/ (CODEX_HOME). The hooks are
installed by the real `lidguard hook-install --provider codex` and run unmodified. What lidguard
received and decided comes from `lidguard hook-events --json`; what Codex did with the answer from
its screen (the TUI under tmux) and the requests the model got; session states from the `status
--json` poller in the windows the fake model's delays guarantee.

Scenarios: the TUI with each closed-lid decision and the lid open; a `request_user_input` question
with the lid open and closed (Codex has no hook for it: lidguard reads the transcript); `codex exec`
with a tool call; ask before sleep answered and timed out (harness/ask.py); the approval decided on
the phone (harness/phone.py).

Prints PASS/FAIL per check and finally `N passed, M failed`; exits 1 on any failure.
"""
import json
import os
import shlex
import subprocess
import time
from harness import cli, lgverify
from harness.ask import ASK_SCRIPT, AskAgent, ask_scenario, start_client
from harness.clients import CODEX, CODEX_VERSION
from harness.constants import LID_MSG, LOGIND_BIN, PHONE_BIN, RECEIVER_BIN
from harness.phone import PhoneTapper, REMOTE_DENY, remote_settings, with_phone
from harness.results import R
from harness.scene import (ACTIVE, SH, brief, check_ctx_evidence, check_gone_after, check_lidguard_log,
                           check_model_got, check_no_session_at_end, check_provenance, check_window, common,
                           ctx_scenario, delayed, event_sequence, fmt_seq, session_in, subsequence)
from harness.screen import (approve, check_no_dialog, check_no_hook_error, prompt_until_permission_request, stop_tmux,
                            submit_prompt, tui_ready)

CODEX_DIALOG = "Would you like to run the following command?"


def codex_setup(c, port):
    chome = os.path.join(c.run, "codex")
    os.makedirs(chome, exist_ok=True)
    common.git_init(c.proj, {"README.md": "# Verify project\n"})
    common.write_codex_config(os.path.join(chome, "config.toml"), port, c.proj)
    c.install(CODEX_HOME=chome)
    env = c.env(port)
    env.update(CODEX_HOME=chome)
    c.start_poller()
    return env


def start_tui(t):
    """Codex's TUI in the scenario's tmux, once its prompt shows."""
    t.start(f"{shlex.quote(CODEX)} --no-alt-screen --dangerously-bypass-hook-trust")
    tui_ready(t, lambda s: "\u203a" in s or "context left" in s, 40)
    time.sleep(2)


def check_codex_answer(c, sid, t, behavior, needle=LID_MSG):
    """lidguard's answer as Codex shows it: deny -> "Blocked by hook" with lidguard's message (the
    one hook-events logged with the decision); allow -> no block; none -> no decision logged."""
    dec = [e.get("decision") for e in c.recs("PermissionRequest") if e.get("sessionId") == sid]
    d = dec[-1] if dec else "missing"
    screen = " ".join(open(os.path.join(c.run, "screen-final.txt")).read().split())
    if behavior == "deny":
        msg = (d or {}).get("message", "") if isinstance(d, dict) else ""
        ok = bool(msg) and needle in msg and f"Blocked by hook \u2514 {msg}" in screen
        return R.check(c.name, "lidguard's deny reached Codex: screen shows 'Blocked by hook' with the exact message "
                               "hook-events logged", ok, f"message={msg!r}")
    if behavior == "allow":
        ok = isinstance(d, dict) and d.get("action") == "allowPermission" and "message" not in d \
            and "Blocked by hook" not in screen
        return R.check(c.name, "lidguard's allow reached Codex: decision without a message, nothing blocked", ok,
                       f"decision={json.dumps(d)}")
    return R.check(c.name, "lidguard printed nothing on PermissionRequest (no decision; Codex blocked nothing)",
                   d is None and "Blocked by hook" not in screen, f"decision={json.dumps(d)}")


def codex_tui(c, port, expect, phone=None):
    """expect: deny | allow | open | ask, or remote-deny | remote-allow (the phone answers)."""
    remote = expect.startswith("remote-")
    expect = expect.removeprefix("remote-")
    needle = REMOTE_DENY if remote else LID_MSG
    if remote:
        remote_settings(c, phone)
    env = codex_setup(c, port)
    t = common.Tmux(f"lidguard-verify-{os.getpid()}-{c.name}", env, c.proj, snapdir=c.run)
    sid = None
    try:
        start_tui(t)
        if remote:
            tapper = PhoneTapper(c, phone, [{"tap": "Allow" if expect == "allow" else "Deny"}])
        got = prompt_until_permission_request(c, t, "Create a file named newfile.txt outside the sandbox.", CODEX_DIALOG)
        if not got:
            return
        w, sid, pr = got
        created = lambda: os.path.exists(os.path.join(c.proj, "newfile.txt"))  # noqa: E731
        if expect in ("deny", "allow"):
            R.check(c.name, "turn continued to Stop", w.until("Stop", 40), f"events={c.names()}")
            stops = c.recs("Stop")
            if stops:
                check_window(c, sid, pr["t"], stops[-1]["t"], "status after lidguard's answer, while the model works: "
                             "session still active", ACTIVE)
            w.sleep(3)
            t.snapshot("final")
            check_codex_answer(c, sid, t, expect, needle)
            if remote:
                tapper.check_question(0, "Bash", "touch newfile.txt")
            check_no_dialog(c, w, pr["t"], "no approval dialog left for the user")
            if expect == "deny":
                R.check(c.name, "command did not run (newfile.txt absent)", not created())
                R.check(c.name, "no PostToolUse for the denied command", not c.recs("PostToolUse"),
                        f"events={c.names()}")
                check_model_got(c, needle, 2, "model received the deny message in the function_call_output")
            else:
                R.check(c.name, "command ran (newfile.txt created)", created())
                R.check(c.name, "PostToolUse fired", bool(c.recs("PostToolUse")))
            check_provenance(c, sid, expect, value="remote" if remote else None)
        else:
            first = lgverify.sessions_in(c.poller.first_after(pr["t"]), sid)
            s = first[0] if first else None
            if expect == "ask":
                R.check(c.name, "status at PermissionRequest: softLocked closed_lid_permission_request_ask",
                        bool(s) and s["state"] == "softLocked"
                        and s["softLockReason"] == "closed_lid_permission_request_ask", brief(s))
            else:
                R.check(c.name, "status at PermissionRequest: session still active (lid open)",
                        bool(s) and s["state"] == "active", brief(s))
            dialog = tui_ready(t, lambda scr: CODEX_DIALOG in scr, 20)
            t.snapshot("dialog")
            R.check(c.name, "the normal approval prompt is shown", dialog, f"screen: {c.run}/screen-dialog.txt")
            if expect == "open":
                # Codex has no Notification hook: nothing soft-locks the session while the prompt
                # waits (a documented provider limit; lidguard-behaviour.md "Provider limits")
                s = session_in(c.status(), sid)
                R.check(c.name, "status while the prompt waits: still active (Codex has no notification hook)",
                        bool(s) and s["state"] == "active", brief(s))
            else:
                time.sleep(max(0.0, pr["t"] + 2.0 - time.time()))
                check_window(c, sid, pr["t"], time.time(), "status while the prompt waits: softLocked "
                             "closed_lid_permission_request_ask throughout",
                             lambda x: x.get("softLockReason") == "closed_lid_permission_request_ask", min_snaps=5)
            R.check(c.name, "command waits for the user (newfile.txt absent)", not created())
            stopped = approve(c, t, CODEX_DIALOG)  # "Yes, proceed" is preselected
            R.check(c.name, "approved: command ran and the turn reached Stop", stopped and created(),
                    f"events={c.names()}")
            t.snapshot("final")
            check_codex_answer(c, sid, t, None)
            check_provenance(c, sid, None)
        stops = c.recs("Stop")
        if stops:
            check_gone_after(c, sid, stops[-1]["t"], "status right after Stop: session gone")
        problems = check_no_hook_error(c, t)
        warnings = codex_warnings(t)
        common.write_json(os.path.join(c.run, "codex-warnings.json"), warnings)
        bad = [w for w in warnings if "\u00b7 Startup" not in w.splitlines()[0]
               or any(x in w.lower() for x in ("invalid", "failed", "error"))]
        R.check(c.name, "Codex warnings list (F2): only startup warnings, none from a hook run",
                bool(warnings) and not bad,
                f"{len(warnings)} startup warnings (codex-warnings.json)" if not bad else f"unexpected: {bad}")
        clamp = [w.replace("\n", " ") for w in warnings if "clamping" in w.lower()]
        R.check(c.name, "no 'clamping ... hook timeout' warning (hook-install's timeouts fit Codex's limits)",
                not clamp, "; ".join(clamp)[:300])
        problems += bad
        t.keys("Escape")
        time.sleep(0.5)
        t.keys("C-c")
        time.sleep(0.5)
        t.keys("C-c")
        c.wait("SessionEnd", 10)
        check_no_session_at_end(c, sid)
        c.codex_problems = problems
    finally:
        t.snapshot("last")
        stop_tmux(t)
        c.stop_poller(sid)


QUESTION_ARGS = {"questions": [{
    "id": "colour", "header": "Colour", "question": "Which colour should I use?",
    "options": [{"label": "Red (Recommended)", "description": "A warm colour."},
                {"label": "Blue", "description": "A cool colour."}]}]}
QUESTION = "Which colour should I use?"
PENDING = "codex_transcript_request_user_input_pending"


def codex_question(c, port, lid):
    """Codex TUI in Plan mode (request_user_input only works there), the model asks a question.
    Lid open: the session waits (the transcript monitor's soft-lock) from the question's own
    PreToolUse until the answer, and answering clears it. Which of the two lands first varies
    with the monitor's ~50 ms detection; the order in which the PreToolUse used to clear the
    lock is pinned by `a_codex_question_stays_waiting_through_its_own_pre_tool_use` in
    crates/lidguard/tests/hooks.rs. Lid closed:
    lidguard's PreToolUse answer refuses the question (permissionDecision deny): no question on
    screen, the model gets lidguard's reason, the turn goes on to Stop."""
    env = codex_setup(c, port)
    t = common.Tmux(f"lidguard-verify-{os.getpid()}-{c.name}", env, c.proj, snapdir=c.run)
    sid = None
    try:
        start_tui(t)
        t.keys("-l", "/plan")
        time.sleep(1.5)
        for _ in range(3):
            t.keys("Enter")
            time.sleep(2)
            if "\u203a /plan" not in t.screen():
                break
        t.snapshot("plan-mode")
        if not submit_prompt(c, t, "Ask me which colour to use."):
            return
        sid = c.session_id()
        pre = c.wait("PreToolUse", 40, pred=lambda e: (e.get("event") or {}).get("toolName") == "request_user_input")
        if not R.check(c.name, "PreToolUse fired for request_user_input", bool(pre), f"events={c.names()}"):
            return
        t_pre = c.recs("PreToolUse")[-1]["t"]
        if lid == "open":
            shown = tui_ready(t, lambda scr: QUESTION in scr, 20)
            t.snapshot("question")
            R.check(c.name, "the question is on screen", shown, f"screen: {c.run}/screen-question.txt")
            time.sleep(max(0.0, t_pre + 3.0 - time.time()))
            check_window(c, sid, t_pre + 0.5, time.time(),
                         f"status after the question's own PreToolUse: softLocked {PENDING} throughout",
                         lambda x: x.get("softLockReason") == PENDING, min_snaps=5)
            dec = (c.recs("PreToolUse")[-1].get("decision"))
            R.check(c.name, "lid open: lidguard printed nothing on the question's PreToolUse", dec is None,
                    f"decision={json.dumps(dec)}")
            for _ in range(4):  # the first option is preselected; a confirm step may follow
                t.keys("Enter")
                if c.wait("PostToolUse", 4):
                    break
            R.check(c.name, "answered: PostToolUse for request_user_input, the turn reaches Stop",
                    bool(c.recs("PostToolUse")) and c.wait("Stop", 40), f"events={c.names()}")
            post = c.recs("PostToolUse")
            if post:
                check_window(c, sid, post[-1]["t"] + 0.3, (c.recs("Stop") or [{"t": time.time()}])[-1]["t"],
                             "status after the answer: active again (working)", ACTIVE, min_snaps=1)
        else:
            dec = c.recs("PreToolUse")[-1].get("decision") or {}
            R.check(c.name, "lid closed: lidguard refused the question on its PreToolUse (denyAskUser)",
                    isinstance(dec, dict) and dec.get("action") == "denyAskUser", f"decision={json.dumps(dec)}")
            R.check(c.name, "the turn goes on to Stop without anyone answering", c.wait("Stop", 40),
                    f"events={c.names()}")
            t.snapshot("final")
            screen = open(os.path.join(c.run, "screen-final.txt")).read()
            R.check(c.name, "no question was shown", QUESTION not in screen, f"screen: {c.run}/screen-final.txt")
            check_model_got(c, LID_MSG, 2, "the model got lidguard's reason as the question tool's output")
        stops = c.recs("Stop")
        if stops:
            check_gone_after(c, sid, stops[-1]["t"], "status right after Stop: session gone")
        c.codex_problems = check_no_hook_error(c, t)
        t.keys("Escape")
        time.sleep(0.5)
        t.keys("C-c")
        time.sleep(0.5)
        t.keys("C-c")
        c.wait("SessionEnd", 10)
        check_no_session_at_end(c, sid)
    finally:
        t.snapshot("last")
        stop_tmux(t)
        c.stop_poller(sid)


def codex_warnings(t):
    """The TUI's "N warnings" list (F2), one entry per warning (text between its header line and
    the key help line); pages with the right arrow."""
    t.keys("F2")
    texts = []
    for _ in range(12):
        time.sleep(0.8)
        lines = t.screen().splitlines()
        head = [i for i, line in enumerate(lines) if line.strip().startswith("Warnings \u00b7")]
        if not head:
            break
        body = []
        for line in lines[head[-1]:]:
            if "esc dismiss" in line:
                break
            body.append(line.strip())
        text = "\n".join(x for x in body if x)
        if text in texts:
            break
        texts.append(text)
        t.keys("Right")
    return texts


def codex_exec_problems(c):
    """Codex reports hook problems (failed runs, invalid output, clamped timeouts) as error items
    of `codex exec --json` (but see the README: it does not report failing hooks at all)."""
    items = []
    with open(os.path.join(c.run, "client.out")) as f:
        for line in f:
            try:
                items.append(json.loads(line))
            except ValueError:
                pass
    msgs = [(i.get("item") or {}).get("message", "") for i in items if (i.get("item") or {}).get("type") == "error"]
    return [m for m in msgs if "hook" in m.lower() and "--dangerously-bypass-hook-trust" not in m]


def codex_exec(c, port):
    env = codex_setup(c, port)
    cmd = [CODEX, "exec", "--skip-git-repo-check", "--json", "--dangerously-bypass-hook-trust",
           "Run echo hello in the shell."]
    with open(os.path.join(c.run, "client.out"), "w") as out, open(os.path.join(c.run, "client.err"), "w") as err:
        p = subprocess.Popen(cmd, cwd=c.proj, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        try:
            rc = p.wait(timeout=90)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            rc = "timeout"
    c.wait("SessionEnd", 5)
    R.check(c.name, "codex exec exited 0", rc == 0, f"rc={rc}")
    sid = c.session_id()
    seq = event_sequence(c, sid)
    pairs = [(h, k) for h, k, _ in seq]
    ok = subsequence([h for h, _ in pairs], ["UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"]) and \
        ("UserPromptSubmit", "prompt-submitted") in pairs and ("Stop", "turn-stopped") in pairs and \
        any(h == "UserPromptSubmit" and o == "started" for h, _, o in seq)
    R.check(c.name, "hook-events: UserPromptSubmit->prompt-submitted (started) ... Stop->turn-stopped", ok,
            fmt_seq(seq))
    ups, pre, stops = c.recs("UserPromptSubmit"), c.recs("PreToolUse"), c.recs("Stop")
    if ups and pre:
        check_window(c, sid, ups[0]["t"], pre[0]["t"], "status from the prompt to PreToolUse: session active (working)",
                     ACTIVE)
    else:
        R.check(c.name, "status from the prompt to PreToolUse: session active (working)", False, fmt_seq(seq))
    if stops:
        check_gone_after(c, sid, stops[-1]["t"], "status right after Stop: session gone")
    else:
        R.check(c.name, "status right after Stop: session gone", False, "no Stop")
    c.codex_problems = codex_exec_problems(c)
    check_ctx_evidence(c, sid)
    check_no_session_at_end(c, sid)
    c.stop_poller(sid)


def check_codex_health(c, problems):
    check_lidguard_log(c, not problems, "lidguard: no hook failure reported by Codex, no unexpected WARN/ERROR, one daemon",
                       f"{len(c.events(save=False))} events in hook-events" + (f"; Codex: {problems[:3]}" if problems else ""))


TOUCH_CODEX = delayed([SH("touch newfile.txt", sandbox_permissions="require_escalated",
                          justification="Need to create newfile.txt"), {"text": "Handled the approval answer; done."}])


def start_codex(c, env, prompt):
    return start_client(c, env, [CODEX, "exec", "--skip-git-repo-check", "--json", "--dangerously-bypass-hook-trust",
                                 prompt])


def keep_exec_problems(c):
    c.codex_problems = codex_exec_problems(c)


ASK = AskAgent("codex exec", codex_setup, start_codex, lambda c: os.path.join(c.run, "codex", "hooks.json"),
               after_exit=keep_exec_problems)


def codex_health(c):
    """The warnings Codex showed or logged, where the scenario read them (c.codex_problems)."""
    problems = getattr(c, "codex_problems", None)
    if problems is not None:
        check_codex_health(c, problems)


def codex(name, lid, policy, script, runner):
    return ctx_scenario(name, "codex", lid, policy, script, runner, codex_health)


SCENARIOS = [
    codex("codex-tui-closed-deny", "closed", "deny", TOUCH_CODEX, lambda c, p: codex_tui(c, p, "deny")),
    codex("codex-tui-closed-allow", "closed", "allow", TOUCH_CODEX, lambda c, p: codex_tui(c, p, "allow")),
    codex("codex-tui-open", "open", "deny", TOUCH_CODEX, lambda c, p: codex_tui(c, p, "open")),
    codex("codex-tui-closed-ask", "closed", "ask", TOUCH_CODEX, lambda c, p: codex_tui(c, p, "ask")),
    codex("codex-tui-question-open", "open", "deny",
          [{"tool": "request_user_input", "input": QUESTION_ARGS}, {"text": "You chose a colour; done.", "delay": 4}],
          lambda c, p: codex_question(c, p, "open")),
    codex("codex-tui-question-closed", "closed", "deny",
          [{"tool": "request_user_input", "input": QUESTION_ARGS}, {"text": "I will assume red.", "delay": 2}],
          lambda c, p: codex_question(c, p, "closed")),
    codex("codex-exec-bash", "closed", "deny", delayed([SH("echo hello"), {"text": "Done: it printed hello."}]),
          codex_exec),
    codex("codex-exec-ask-reply", "closed", "deny", ASK_SCRIPT, lambda c, p: ask_scenario(ASK, c, p, "reply")),
    codex("codex-exec-ask-timeout", "closed", "deny", ASK_SCRIPT, lambda c, p: ask_scenario(ASK, c, p, "timeout")),
    codex("codex-tui-remote-allow", "closed", "remote", TOUCH_CODEX,
          with_phone(lambda c, p, ph: codex_tui(c, p, "remote-allow", ph))),
    codex("codex-tui-remote-deny", "closed", "remote", TOUCH_CODEX,
          with_phone(lambda c, p, ph: codex_tui(c, p, "remote-deny", ph))),
]

if __name__ == "__main__":
    cli.main(__file__, __doc__, f"lidguard vs Codex {CODEX_VERSION}", [CODEX, RECEIVER_BIN, LOGIND_BIN, PHONE_BIN], SCENARIOS)
