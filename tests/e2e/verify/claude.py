#!/usr/bin/env python3
"""Verify against the real Claude Code CLI that it honours lidguard's hook answers (offline,
loopback only).

Usage (as root; `tests/e2e/verify/run.sh claude` builds lidguard and the helpers first):
    claude.py [scenario ...] [--out DIR]
    claude.py --list

Each scenario is a `Ctx` (harness/scene.py: its folders, lidguard's environment, the fake
Anthropic API with a delay per step, the status poller), plus cfg/ (CLAUDE_CONFIG_DIR) and
claude-debug.txt (Claude's own hook log, claude_log.py). The hooks are installed by the real
`lidguard hook-install --provider claude` and run unmodified. What lidguard received and decided
comes from `lidguard hook-events --json`; what Claude got back from its `--debug-file` log; session
states from the `status --json` poller in the windows the fake model's delays guarantee. The first
prompt hook starts lidguard's daemon with the agent's environment (DBUS_SYSTEM_BUS_ADDRESS:
/nonexistent, or in claude-print-ask-timeout the private bus of a real systemd-logind from
target/debug/lidguard-private-logind).

Scenarios: the TUI under tmux with each closed-lid decision and the lid open; `claude -p` with a
tool call, a background command and a permission request; the far side of `lidguard ssh` (a real
sshd on loopback, harness/sshremote.py); ask before sleep answered and timed out (harness/ask.py);
the Agent SDK's Claude Code with a cron task; the permission decided on the phone
(harness/phone.py).

Prints PASS/FAIL per check and finally `N passed, M failed`; exits 1 on any failure.
"""
import json
import os
import shlex
import subprocess
import time

from claude_log import check_claude_answer, check_claude_health, claude_debug, claude_stop_runs, permission_denials
from harness import cli, lgverify, sshremote
from harness.ask import ASK_SCRIPT, AskAgent, ask_scenario, start_client
from harness.clients import CLAUDE, CLAUDE_SDK, CLAUDE_SDK_VERSION, CLAUDE_VERSION
from harness.constants import LIDGUARD, LID_MSG, LOGIND_BIN, PHONE_BIN, RECEIVER_BIN
from harness.phone import (PhoneTapper, REMOTE_DENY, REMOTE_TIMEOUT, REMOTE_WAIT, lidguard_stream, remote_settings,
                           with_phone)
from harness.results import R
from harness.scene import (ACTIVE, BASH, brief, check_ctx_evidence, check_gone_after, check_model_got,
                           check_no_session_at_end, check_provenance, check_window, common, ctx_scenario, delayed,
                           event_sequence, fmt_seq, history, subsequence)
from harness.screen import (approve, check_no_dialog, check_no_hook_error, prompt_until_permission_request, stop_tmux,
                            submit_prompt, tui_ready)

KEY = "sk-ant-fake-key-for-offline-verify-0123456789"
CLAUDE_DIALOG = "Do you want to proceed?"


def claude_setup(c, port, version=CLAUDE_VERSION):
    cfg = os.path.join(c.run, "cfg")
    os.makedirs(cfg, exist_ok=True)
    common.git_init(c.proj, {"CLAUDE.md": "# Verify project\nScratch project for lidguard verification.\n"})
    common.write_json(os.path.join(cfg, ".claude.json"), {
        "hasCompletedOnboarding": True, "lastOnboardingVersion": version, "theme": "dark",
        "customApiKeyResponses": {"approved": [KEY[-20:]], "rejected": []},
        "projects": {c.proj: {"hasTrustDialogAccepted": True, "allowedTools": []}}})
    c.install(CLAUDE_CONFIG_DIR=cfg)
    env = c.env(port)
    env.update(CLAUDE_CONFIG_DIR=cfg, ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}", ANTHROPIC_API_KEY=KEY,
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1",
               DISABLE_AUTOUPDATER="1", DISABLE_INSTALLATION_CHECKS="1",
               CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL="1", CLAUDE_CODE_MAX_RETRIES="0",
               CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS="10000", CLAUDE_CODE_TMPDIR=os.path.join(c.run, "tmp"))
    c.start_poller()
    return env


def exit_claude_tui(c, t, sid):
    """The end of an interactive Claude scenario: no hook error on its screen, `/exit`, and no
    session left in lidguard."""
    t.snapshot("final")
    check_no_hook_error(c, t)
    t.type_line("/exit")
    c.wait("SessionEnd", 15)
    check_no_session_at_end(c, sid)


def claude_tmux(c, port, expect):
    """expect: deny | allow (lidguard answers, no dialog) | open | ask (dialog, lidguard silent)."""
    env = claude_setup(c, port)
    t = common.Tmux(f"lidguard-verify-{os.getpid()}-{c.name}", env, c.proj, snapdir=c.run)
    sid = None
    try:
        t.start(" ".join(shlex.quote(a) for a in [CLAUDE, "--permission-mode", "default", "--debug-file", c.debug_log]))
        tui_ready(t, lambda s: "\u276f" in s, 40)
        time.sleep(2)
        got = prompt_until_permission_request(c, t, "Create a file named newfile.txt.", CLAUDE_DIALOG)
        if not got:
            return
        w, sid, pr = got
        if expect in ("deny", "allow"):
            check_claude_answer(c, sid, expect)
            R.check(c.name, "turn continued to Stop", w.until("Stop", 40), f"events={c.names()}")
            stops = c.recs("Stop")
            if stops:
                check_window(c, sid, pr["t"], stops[-1]["t"], "status after lidguard's answer, while the model works: "
                             "session still active", ACTIVE)
            # Notification(permission_prompt) comes ~6 s after a dialog opens: give it 8 s to show up
            w.sleep(8)
            check_no_dialog(c, w, pr["t"], "no permission dialog left for the user")
            notes = c.recs("Notification", lambda e: (e.get("event") or {}).get("stateReason") == "permission_prompt")
            R.check(c.name, "no Notification(permission_prompt)", not notes, f"{len(notes)} seen")
            created = os.path.exists(os.path.join(c.proj, "newfile.txt"))
            if expect == "deny":
                R.check(c.name, "tool did not run (newfile.txt absent)", not created)
                post = c.recs("PostToolUse") + c.recs("PostToolUseFailure")
                R.check(c.name, "no PostToolUse/PostToolUseFailure for the denied tool", not post,
                        f"{[e['hookEvent'] for e in post]}")
                check_model_got(c, LID_MSG, 2, "model received the deny message in the tool_result")
            else:
                R.check(c.name, "tool ran (newfile.txt created)", created)
                R.check(c.name, "PostToolUse fired", bool(c.recs("PostToolUse")))
            check_provenance(c, sid, expect)
        else:
            check_claude_answer(c, sid, None)
            if expect == "ask":
                want = lambda s: s.get("state") == "softLocked" and \
                    s.get("softLockReason") == "closed_lid_permission_request_ask"  # noqa: E731
                first = lgverify.sessions_in(c.poller.first_after(pr["t"]), sid)
                R.check(c.name, "status at PermissionRequest: softLocked closed_lid_permission_request_ask",
                        first and first[0].get("state") == "softLocked"
                        and first[0].get("softLockReason") == "closed_lid_permission_request_ask",
                        brief(first[0] if first else None))
            else:
                want = ACTIVE
                first = lgverify.sessions_in(c.poller.first_after(pr["t"]), sid)
                R.check(c.name, "status at PermissionRequest: session still active (lid open)",
                        first and first[0].get("state") == "active", brief(first[0] if first else None))
            dialog = tui_ready(t, lambda scr: CLAUDE_DIALOG in scr, 20)
            t.snapshot("dialog")
            R.check(c.name, "the normal permission dialog is shown", dialog, f"screen: {c.run}/screen-dialog.txt")
            got_n = c.wait("Notification", 15,
                           pred=lambda e: (e.get("event") or {}).get("stateReason") == "permission_prompt")
            if got_n:
                check_window(c, sid, pr["t"], got_n[0]["t"], "status from PermissionRequest to the Notification: "
                             + ("softLocked (ask)" if expect == "ask" else "active (lid open)"), want, min_snaps=5)
                snap = c.poller.first_after(got_n[0]["t"])
                s = (lgverify.sessions_in(snap, sid) or [None])[0]
                R.check(c.name, "status after Notification(permission_prompt): softLocked",
                        bool(s) and s["state"] == "softLocked", brief(s))
            else:
                R.check(c.name, "Notification(permission_prompt) fired", False, f"events={c.names()}")
            R.check(c.name, "tool waits for the user (newfile.txt absent while the dialog is up)",
                    not os.path.exists(os.path.join(c.proj, "newfile.txt")))
            stopped = approve(c, t, CLAUDE_DIALOG)  # "1. Yes" is preselected
            R.check(c.name, "approved in the dialog: tool ran and the turn reached Stop",
                    stopped and os.path.exists(os.path.join(c.proj, "newfile.txt")), f"events={c.names()}")
            check_provenance(c, sid, None)
        stops = c.recs("Stop")
        if stops:
            check_gone_after(c, sid, stops[-1]["t"], "status right after Stop: session gone")
        exit_claude_tui(c, t, sid)
    finally:
        t.snapshot("last")
        stop_tmux(t)
        c.stop_poller(sid)


def sdk_version():
    p = subprocess.run([CLAUDE_SDK, "--version"], capture_output=True, text=True, timeout=30)
    return p.stdout.split()[0] if p.stdout.split() else "?"


def claude_sdk_cron(c, port):
    """Claude Code 2.1.337 (the Agent SDK's platform package), lid closed: the model schedules a
    check every minute (CronCreate) and ends its turn. Its Stop names the cron: lidguard holds the
    session until the wake-up (status: wakesAt), the machine is not put to sleep, the cron's prompt
    starts the next turn; then the user's Escape while the model answers ends the session; /exit
    leaves nothing."""
    env = claude_setup(c, port, sdk_version())
    t = common.Tmux(f"lidguard-verify-{os.getpid()}-{c.name}", env, c.proj, snapdir=c.run)
    sid = None
    try:
        t.start(" ".join(shlex.quote(a) for a in [CLAUDE_SDK, "--permission-mode", "default",
                                                  "--debug-file", c.debug_log]))
        tui_ready(t, lambda s: "\u276f" in s, 40)
        time.sleep(2)
        if not submit_prompt(c, t, "Check the build every minute."):
            return
        sid = c.session_id()
        first = c.wait("Stop", 40)
        if not R.check(c.name, "the turn that scheduled the cron reached Stop", first, f"events={c.names()}"):
            return
        t_stop = first[0]["t"]
        snap = c.poller.first_after(t_stop)
        s = (lgverify.sessions_in(snap, sid) or [None])[0]
        wakes = (s or {}).get("wakesAt")
        R.check(c.name, "status after Stop: held for its wake-up (active, pending, wakesAt set)",
                bool(s) and s.get("state") == "active" and s.get("pendingProviderWork") and wakes, brief(s))
        text = c.lidguard("status").stdout
        held = [x.strip() for x in text.splitlines() if "scheduled wake-up" in x]
        R.check(c.name, "`status` says the session is held for its own scheduled wake-up",
                any("held for its own scheduled wake-up" in x for x in held), str(held or text[-300:]))
        fired = c.wait("UserPromptSubmit", 150, count=2)
        if not R.check(c.name, "the cron fired: Claude submitted its prompt (UserPromptSubmit)", fired,
                       f"events={c.names()}"):
            return
        t_fire = fired[1]["t"]
        check_window(c, sid, t_stop, t_fire, "status from Stop to the wake-up: the session is held", ACTIVE)
        if wakes:
            # Claude fires a recurring cron up to half its period late (at most 30 s here).
            due = lgverify.parse_at(wakes)
            R.check(c.name, "the wake-up came when lidguard said, at most 35 s after it (recurring jitter)",
                    -2 <= t_fire - due <= 35, f"wakesAt {wakes}, fired {t_fire - due:+.1f} s from it")
        R.check(c.name, "no suspend while held for the wake-up (lid closed)",
                not [h for h in history(c, "suspend-history")], f"{history(c, 'suspend-history')}")
        R.check(c.name, "the wake-up's turn reached Stop", c.wait("Stop", 40, count=2), f"events={c.names()}")
        # The user's own prompt; the model's answer hangs; Escape. hook-install does not register
        # 2.1.337's Interrupt yet (older Claude warns about it at every start: README): the
        # transcript's interrupt record ends the session.
        t.type_line("Say hi slowly.")
        if R.check(c.name, "the user's prompt was submitted", c.wait("UserPromptSubmit", 20, count=3),
                   f"events={c.names()}"):
            time.sleep(3)
            t_esc = time.time()
            t.keys("Escape")
            gone = None
            while time.time() < t_esc + 15 and gone is None:
                if not [x for x in c.status().get("sessions") or [] if x.get("sessionId") == sid]:
                    gone = time.time()
                time.sleep(0.25)
            log = open(os.path.join(c.lg_env["LIDGUARD_HOME"], "state", "lidguard.log")).read()
            R.check(c.name, "Escape while the model answers ends the session (the transcript's interrupt)",
                    gone is not None and "claude-transcript-interrupted" in log,
                    f"gone {gone - t_esc:.1f} s after Escape" if gone else "still tracked 15 s after Escape")
        # Lid closed, the last session ended: lidguard asks the OS to sleep, and there is no
        # power backend in the namespace.
        c.log_ok = ["suspend failed mode=Sleep"]
        exit_claude_tui(c, t, sid)
    finally:
        t.snapshot("last")
        stop_tmux(t)
        c.stop_poller(sid)


def run_claude_print(c, env, prompt, timeout):
    """`claude -p PROMPT` (stream-json, debug log) in the project; its exit code or "timeout".
    Waits a moment for SessionEnd, whose hooks may land just after the client exits."""
    cmd = [CLAUDE, "-p", prompt, "--output-format", "stream-json", "--verbose", "--debug-file", c.debug_log]
    with open(os.path.join(c.run, "client.out"), "w") as out, open(os.path.join(c.run, "client.err"), "w") as err:
        p = subprocess.Popen(cmd, cwd=c.proj, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            rc = "timeout"
    c.wait("SessionEnd", 5)
    return rc


def claude_print(c, port, script_kind):
    env = claude_setup(c, port)
    prompt = {"bash": "Run echo hello in the shell.", "background": "Start a short background sleep.",
              "permission": "Create a file named newfile.txt."}[script_kind]
    rc = run_claude_print(c, env, prompt, 90)
    R.check(c.name, "claude -p exited 0", rc == 0, f"rc={rc}")
    sid = c.session_id()
    seq = event_sequence(c, sid)
    pairs = [(h, k) for h, k, _ in seq]
    ups = c.recs("UserPromptSubmit")
    if script_kind == "bash":
        want = ["UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"]
        ok = subsequence([h for h, _ in pairs], want) and \
            ("UserPromptSubmit", "prompt-submitted") in pairs and ("Stop", "turn-stopped") in pairs
        started = any(h == "UserPromptSubmit" and o == "started" for h, _, o in seq)
        R.check(c.name, "hook-events: UserPromptSubmit->prompt-submitted (started) ... Stop->turn-stopped",
                ok and started, fmt_seq(seq))
        stops = c.recs("Stop")
        if stops:
            check_gone_after(c, sid, stops[-1]["t"], "status right after Stop: session gone")
        else:
            R.check(c.name, "status right after Stop: session gone", False, "no Stop")
        pre = c.recs("PreToolUse")
        if ups and pre:
            check_window(c, sid, ups[0]["t"], pre[0]["t"], "status from the prompt to PreToolUse: session active "
                         "(working)", ACTIVE)
        else:
            R.check(c.name, "status from the prompt to PreToolUse: session active (working)", False, fmt_seq(seq))
        check_ctx_evidence(c, sid)
    elif script_kind == "permission":
        # 2.1.332 fires PermissionRequest in -p too; with no user the tool is denied unless a hook allows it
        pr = c.recs("PermissionRequest")
        R.check(c.name, "PermissionRequest hook fired in -p", bool(pr), f"events={c.names()}")
        check_claude_answer(c, sid, c.policy)
        created = os.path.exists(os.path.join(c.proj, "newfile.txt"))
        denials = permission_denials(c)
        if c.policy == "allow":
            R.check(c.name, "-p ran the tool on lidguard's allow (newfile.txt created, no permission_denials)",
                    created and not denials, f"created={created} permission_denials={len(denials)}")
        else:
            R.check(c.name, "-p did not run the tool (newfile.txt absent, listed in permission_denials)",
                    not created and len(denials) == 1, f"created={created} permission_denials={len(denials)}")
            check_model_got(c, LID_MSG, 2, "model received the deny message in the tool_result")
        check_provenance(c, sid, c.policy)
        R.check(c.name, "hook-events: ... Stop->turn-stopped", ("Stop", "turn-stopped") in pairs, fmt_seq(seq))
    else:
        stops = c.recs("Stop")
        R.check(c.name, "two Stops (turn end, then the task-notification turn)", len(stops) == 2,
                f"events={c.names()}")
        if stops:
            nxt = [e["t"] for e in c.recs("UserPromptSubmit") if e["t"] > stops[0]["t"]]
            end = min(nxt + [stops[1]["t"] if len(stops) > 1 else time.time()])
            check_window(c, sid, stops[0]["t"], end, "status after the first Stop: session kept, pendingProviderWork true",
                         lambda s: s.get("pendingProviderWork") is True, min_snaps=5)
        if len(stops) >= 2:
            check_gone_after(c, sid, stops[1]["t"], "status after the second Stop: session gone")
            gap = stops[1]["t"] - stops[0]["t"]
            R.check(c.name, "the second Stop came after the background sleep (>= 4 s later)", gap >= 4,
                    f"{gap:.1f} s")
        R.check(c.name, "hook-events: UserPromptSubmit->prompt-submitted ... Stop->turn-stopped x2",
                pairs.count(("Stop", "turn-stopped")) == 2 and ("UserPromptSubmit", "prompt-submitted") in pairs,
                fmt_seq(seq))
    check_no_session_at_end(c, sid)
    c.stop_poller(sid)


def relayed_kinds(c, place):
    """The kinds of the daemon's events about sessions that came through `place`'s relays."""
    out = c.lidguard("events", "--since", "all").stdout
    kinds = []
    for line in out.splitlines():
        fields = [f for f in line.split("  ") if f.strip()]
        if len(fields) >= 3 and f" {place}/" in f" {fields[1].strip()}":
            kinds.append(fields[2].strip())
    return kinds, out


def claude_ssh(c, port):
    """The real Claude Code on the far side of `lidguard ssh`: the account lgremote behind a real
    sshd on loopback, its hooks installed there by `lidguard hook-install` and reaching this
    machine's daemon only through the socket sshd forwards. Tracked from the prompt to Stop."""
    lack = sshremote.missing()
    if lack:
        R.check(c.name, "the ssh scenario can run here", False, f"missing {lack}")
        return
    remote = os.path.join(c.run, "remote")
    cfg, proj, tmp = (os.path.join(remote, d) for d in ("cfg", "proj", "tmp"))
    for d in (cfg, proj, tmp):
        os.makedirs(d, exist_ok=True)
    common.git_init(proj, {"CLAUDE.md": "# Verify project\nScratch project on the remote side.\n"})
    common.write_json(os.path.join(cfg, ".claude.json"), {
        "hasCompletedOnboarding": True, "lastOnboardingVersion": CLAUDE_VERSION, "theme": "dark",
        "customApiKeyResponses": {"approved": [KEY[-20:]], "rejected": []},
        "projects": {proj: {"hasTrustDialogAccepted": True, "allowedTools": []}}})
    # Claude's own hook log, written on the far side (the health check reads it there).
    c.debug_log = os.path.join(remote, "claude-debug.txt")
    sshremote.give_to_remote(remote)
    base = {"HOME": remote, "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
    install = subprocess.run(
        sshremote.as_remote([LIDGUARD, "hook-install", "--provider", "claude"],
                            dict(base, CLAUDE_CONFIG_DIR=cfg, LIDGUARD_HOME=os.path.join(remote, "lg"))),
        capture_output=True, text=True, timeout=60)
    R.check(c.name, "hook-install --provider claude as the remote account", install.returncode == 0,
            install.stdout + install.stderr)
    claude_env = dict(base, CLAUDE_CONFIG_DIR=cfg, ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}",
                      ANTHROPIC_API_KEY=KEY, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1",
                      DISABLE_ERROR_REPORTING="1", DISABLE_AUTOUPDATER="1", DISABLE_INSTALLATION_CHECKS="1",
                      CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL="1", CLAUDE_CODE_MAX_RETRIES="0",
                      CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS="10000", CLAUDE_CODE_TMPDIR=tmp)
    command = (f"cd {shlex.quote(proj)} && exec env "
               + " ".join(shlex.quote(f"{k}={v}") for k, v in claude_env.items())
               + f" {shlex.quote(CLAUDE)} -p {shlex.quote('Run echo hello in the shell.')}"
               f" --output-format stream-json --verbose --debug-file {shlex.quote(c.debug_log)}")
    sshd = sshremote.Sshd(c.run)
    c.start_poller()
    t0 = time.time()
    try:
        with open(os.path.join(c.run, "client.out"), "w") as out, \
                open(os.path.join(c.run, "client.err"), "w") as err:
            p = subprocess.Popen([LIDGUARD, "ssh", *sshd.destination(), command], env=c.cli_env(),
                                 stdout=out, stderr=err, stdin=subprocess.DEVNULL)
            try:
                rc = p.wait(timeout=120)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                rc = "timeout"
    finally:
        sshd.close()
    R.check(c.name, "claude -p on the far side of lidguard ssh exited 0", rc == 0,
            f"rc={rc}; {open(os.path.join(c.run, 'client.err')).read()[-600:]}")
    place = f"ssh:{sshremote.REMOTE_USER}@127.0.0.1"
    via = f"ssh {sshremote.REMOTE_USER}@127.0.0.1"
    seen = [s for snap in c.poller.between(t0) for s in lgverify.sessions_in(snap)
            if s.get("via") == via]
    R.check(c.name, f"status showed the session working on '{via}', with no pid or transcript of the far side",
            any(s.get("state") == "active" for s in seen)
            and all(s.get("watchedPid") is None and s.get("transcriptPath") is None for s in seen),
            json.dumps(seen[:1]))
    kinds, text = relayed_kinds(c, place)
    R.check(c.name, "the daemon's events for it: prompt-submitted ... turn-stopped",
            subsequence(kinds, ["prompt-submitted", "turn-stopped"]), " ".join(kinds) or text[-1500:])
    check_model_got(c, "hello", 2, "the model received the remote shell's output (hello)")
    end = time.time() + 10
    while time.time() < end and any(s.get("via") == via for s in lgverify.sessions_in(c.poller.first_after(time.time()))):
        time.sleep(0.2)
    last = c.poller.first_after(time.time())
    R.check(c.name, "after the turn no relayed session is left",
            not any(s.get("via") == via for s in lgverify.sessions_in(last)), json.dumps(last[2] if last else None))
    c.stop_poller()


def claude_remote(c, port, phone, how):
    """claude -p, policy remote. mixed: the first request is allowed on the phone after a reply with
    a wrong code; the second gets a reused reply (the first's Allow) and one with its code but the
    first's request id, then nothing: the fallback denies it. deny: Deny tapped."""
    remote_settings(c, phone)
    env = claude_setup(c, port)
    mixed = how == "mixed"
    plan = ([{"before": ["wrong-code"], "tap": "Allow"}, {"before": ["reuse-first", "forge-request"], "tap": None}]
            if mixed else [{"tap": "Deny"}])
    prompt = "Create the files first.txt and second.txt." if mixed else "Create a file named newfile.txt."
    tapper = PhoneTapper(c, phone, plan)
    t0 = time.time()
    rc = run_claude_print(c, env, prompt, 150)
    took = time.time() - t0
    tapper.thread.join(5)
    common.write_json(os.path.join(c.run, "phone.json"), {"questions": tapper.questions, "done": tapper.done})
    R.check(c.name, "claude -p exited 0", rc == 0, f"rc={rc}")
    sid = c.session_id()
    prs = c.recs("PermissionRequest")
    R.check(c.name, f"{len(plan)} PermissionRequest hook(s) fired", len(prs) == len(plan), f"events={c.names()}")
    tapper.check_question(0, "Bash", "touch first.txt" if mixed else "touch newfile.txt")
    denials = permission_denials(c)
    _, outs = claude_debug(c)
    answers = [json.loads(o["stdout"]) for o in outs if o["event"] == "PermissionRequest"]
    behaviors = [((a.get("hookSpecificOutput") or {}).get("decision") or {}).get("behavior") for a in answers]
    exists = lambda name: os.path.exists(os.path.join(c.proj, name))  # noqa: E731
    if mixed:
        R.check(c.name, "the phone's Allow ran the first tool (first.txt created); the second did not run "
                        "(second.txt absent, one permission_denial)",
                exists("first.txt") and not exists("second.txt") and len(denials) == 1,
                f"first={exists('first.txt')} second={exists('second.txt')} denials={len(denials)}")
        R.check(c.name, "Claude got allow, then deny (Claude's debug log)", behaviors == ["allow", "deny"],
                f"{behaviors}")
        check_provenance(c, sid, "allow", value="remote", nth=0)
        check_provenance(c, sid, "deny", setting="remoteDecisionFallback", value="deny", nth=1)
        check_model_got(c, REMOTE_TIMEOUT, 3, "model received the fallback's deny message in the tool_result")
        R.check(c.name, f"the run waited out the remote wait once (>= {REMOTE_WAIT} s)", took >= REMOTE_WAIT,
                f"{took:.1f} s")
        stream = lidguard_stream(c)
        ignored = [e["observation"]["detail"] for e in stream if e["observation"]["kind"] == "remote-reply-ignored"]
        want = ["did not issue", "answered already", "another request"]
        R.check(c.name, "lidguard ignored and recorded the wrong code, the reused reply and the reply naming another "
                        "request (events: remote-reply-ignored)",
                all(any(w in d for d in ignored) for w in want), f"{ignored}")
        decided = [e for e in stream if e["observation"]["kind"] == "remote-decision"]
        R.check(c.name, "events: two remote-decision lines (allow answered on the phone, then deny by the fallback)",
                [e["authority"]["decision"] for e in decided] == ["allow", "deny"]
                and decided[0]["authority"]["provenance"]["reason"].startswith("answered allow on the phone at ")
                and "fallback deny" in decided[1]["authority"]["provenance"]["reason"],
                json.dumps([e["authority"] for e in decided])[:600])
    else:
        R.check(c.name, "the phone's Deny stopped the tool (newfile.txt absent, one permission_denial)",
                not exists("newfile.txt") and len(denials) == 1, f"denials={len(denials)}")
        R.check(c.name, "Claude got deny (Claude's debug log)", behaviors == ["deny"], f"{behaviors}")
        check_provenance(c, sid, "deny", value="remote")
        check_model_got(c, REMOTE_DENY, 2, "model received the phone's deny message in the tool_result")
    check_no_session_at_end(c, sid)
    c.stop_poller(sid)


TOUCH_CLAUDE = delayed([BASH("touch newfile.txt", "Create newfile.txt"), {"text": "Handled the permission answer; done."}])
TWO_TOUCHES = delayed([BASH("touch first.txt", "Create first.txt"), BASH("touch second.txt", "Create second.txt"),
                       {"text": "Handled both answers; done."}])


def start_claude(c, env, prompt):
    return start_client(c, env, [CLAUDE, "-p", prompt, "--output-format", "stream-json", "--verbose",
                                 "--debug-file", c.debug_log])


ASK = AskAgent("claude -p", claude_setup, start_claude, lambda c: os.path.join(c.run, "cfg", "settings.json"),
               stop_runs=claude_stop_runs)


def claude(name, lid, policy, script, runner):
    return ctx_scenario(name, "claude", lid, policy, script, runner, check_claude_health)


SCENARIOS = [
    claude("claude-tmux-closed-deny", "closed", "deny", TOUCH_CLAUDE, lambda c, p: claude_tmux(c, p, "deny")),
    claude("claude-tmux-closed-allow", "closed", "allow", TOUCH_CLAUDE, lambda c, p: claude_tmux(c, p, "allow")),
    claude("claude-tmux-open", "open", "deny", TOUCH_CLAUDE, lambda c, p: claude_tmux(c, p, "open")),
    claude("claude-tmux-closed-ask", "closed", "ask", TOUCH_CLAUDE, lambda c, p: claude_tmux(c, p, "ask")),
    claude("claude-print-bash", "closed", "deny", delayed([BASH("echo hello", "Print hello"), {"text": "Done."}]),
           lambda c, p: claude_print(c, p, "bash")),
    claude("claude-print-background", "closed", "deny",
           [BASH("sleep 5; echo slept", "Short background sleep", run_in_background=True),
            {"text": "Started a background sleep; ending my turn."},
            {"text": "The background sleep finished."}],
           lambda c, p: claude_print(c, p, "background")),
    claude("claude-print-closed-deny", "closed", "deny", TOUCH_CLAUDE, lambda c, p: claude_print(c, p, "permission")),
    claude("claude-print-closed-allow", "closed", "allow", TOUCH_CLAUDE, lambda c, p: claude_print(c, p, "permission")),
    claude("claude-ssh-print-bash", "closed", "deny", delayed([BASH("echo hello", "Print hello"), {"text": "Done."}]),
           claude_ssh),
    claude("claude-print-ask-reply", "closed", "deny", ASK_SCRIPT, lambda c, p: ask_scenario(ASK, c, p, "reply")),
    claude("claude-print-ask-timeout", "closed", "deny", ASK_SCRIPT, lambda c, p: ask_scenario(ASK, c, p, "timeout")),
    claude("claude-sdk-tmux-cron", "closed", "deny",
           [{"tool": "ToolSearch", "input": {"query": "select:CronCreate"}},
            {"tool": "CronCreate", "input": {"cron": "*/1 * * * *", "prompt": "Check the build.", "recurring": True}},
            {"text": "Scheduled: I will check the build every minute."},
            {"text": "The build is green."},
            {"hang": True, "text": "Thinking about"}],
           claude_sdk_cron),
    claude("claude-print-remote-mixed", "closed", "remote", TWO_TOUCHES,
           with_phone(lambda c, p, ph: claude_remote(c, p, ph, "mixed"))),
    claude("claude-print-remote-deny", "closed", "remote", TOUCH_CLAUDE,
           with_phone(lambda c, p, ph: claude_remote(c, p, ph, "deny"))),
]

if __name__ == "__main__":
    cli.main(__file__, __doc__, f"lidguard vs Claude Code {CLAUDE_VERSION} (Agent SDK {CLAUDE_SDK_VERSION})", [CLAUDE, CLAUDE_SDK, RECEIVER_BIN, LOGIND_BIN, PHONE_BIN], SCENARIOS)
