#!/usr/bin/env python3
"""Verify against the real Claude Code and Codex CLIs that they honour lidguard's hook answers.

Started by tests/e2e/verify/run.sh inside a loopback-only network namespace:

    claude_codex.py claude|codex|all [scenario ...]     (scenario names: --list)

Every scenario gets /tmp/lidguard-verify.<ts>/<scenario>/ with
  lg/home (LIDGUARD_HOME), lg/proc + lg/sys (fake lid and an internal eDP panel),
  home/, cfg/ (CLAUDE_CONFIG_DIR) or codex/ (CODEX_HOME), proj/ (git init),
  logs/hooks.jsonl (claude_codex_hook.py: each hook's stdin, lidguard's stdout, a status snapshot),
  model.jsonl (requests the fake model saw), screen-*.txt (tmux), hook-events.json, final-status.json.
The hooks are `claude_codex_hook.py <logs> <lidguard> claude-hook|codex-hook`: a pass-through that
records what lidguard printed. The first prompt hook starts lidguard's daemon with the agent's
environment (LIDGUARD_HOME, LIDGUARD_PROC_ROOT, LIDGUARD_SYS_ROOT, DBUS_SYSTEM_BUS_ADDRESS).
Each check prints one PASS/FAIL line; the last line is "N passed, M failed"; exit 1 on any failure.
Every process a scenario started (client, hooks, lidguard daemon, tmux server) is found by its
LIDGUARD_HOME in /proc/<pid>/environ and stopped by pid when the scenario ends.
"""
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree
sys.path.insert(0, os.path.join(REPO, "tests", "e2e", "capture", "claude"))
import common  # noqa: E402  (fake model, tmux, hook log, netns check: shared with the capture drivers)

LIDGUARD = os.environ.get("LIDGUARD_BIN", os.path.join(REPO, "target", "debug", "lidguard"))
CLAUDE_VERSION = os.environ.get("CLAUDE_VERSION", "2.1.332")
CODEX_VERSION = os.environ.get("CODEX_VERSION", "0.171.0")
NPM = os.path.join(REPO, ".ci", "cache", "npm")
CLAUDE = os.environ.get("VERIFY_CLAUDE") or os.path.join(
    NPM, f"@anthropic-ai+claude-code@{CLAUDE_VERSION}", "node_modules", ".bin", "claude")
CODEX = os.environ.get("VERIFY_CODEX") or os.path.join(
    NPM, f"@openai+codex@{CODEX_VERSION}", "node_modules", ".bin", "codex")
HOOK = os.path.join(HERE, "claude_codex_hook.py")
KEY = "sk-ant-fake-key-for-offline-verify-0123456789"

CLAUDE_EVENTS = """UserPromptSubmit PreToolUse PostToolUse PostToolUseFailure PermissionRequest Notification
Stop StopFailure SessionEnd SubagentStart SubagentStop Elicitation""".split()
CODEX_EVENTS = "UserPromptSubmit PreToolUse PostToolUse PermissionRequest Stop SessionEnd Interrupt".split()

CLAUDE_DIALOG = "Do you want to proceed?"
CODEX_DIALOG = "Would you like to run the following command?"
LID_MSG = "lid is closed"

BASH = lambda cmd, desc, **kw: {"tool": "Bash", "input": dict(command=cmd, description=desc, **kw)}  # noqa: E731
SH = lambda cmd, **kw: {"tool": "exec_command", "input": dict(cmd=cmd, **kw)}  # noqa: E731


# ---- results -------------------------------------------------------------------------------
class Results:
    def __init__(self):
        self.passed, self.failed, self.lines = 0, 0, []

    def check(self, scenario, name, ok, detail=""):
        line = f"{'PASS' if ok else 'FAIL'}  [{scenario}] {name}" + (f" -- {detail}" if detail else "")
        print(line, flush=True)
        self.lines.append(line)
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        return ok


R = Results()


# ---- per-scenario context ------------------------------------------------------------------
class Ctx:
    """Dirs, env, lidguard helpers and the hook log of one scenario."""

    def __init__(self, out, name, lid, policy):
        self.name, self.lid, self.policy = name, lid, policy
        self.run = os.path.join(out, name)
        shutil.rmtree(self.run, ignore_errors=True)
        self.home, self.proj, self.logs = (os.path.join(self.run, d) for d in ("home", "proj", "logs"))
        self.lg = os.path.join(self.run, "lg")
        for d in (self.home, self.proj, self.logs, os.path.join(self.run, "tmp")):
            os.makedirs(d, exist_ok=True)
        self.lg_env = {"LIDGUARD_HOME": os.path.join(self.lg, "home"),
                       "LIDGUARD_PROC_ROOT": os.path.join(self.lg, "proc"),
                       "LIDGUARD_SYS_ROOT": os.path.join(self.lg, "sys"),
                       "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent"}
        self.set_lid(lid)
        panel = os.path.join(self.lg, "sys", "class", "drm", "card0-eDP-1")
        os.makedirs(panel, exist_ok=True)
        with open(os.path.join(panel, "status"), "w") as f:
            f.write("connected\n")
        if policy != "deny":  # deny is the default: leave the settings file alone
            self.lidguard("settings", "--closed-lid-permission-request-decision", policy, check=True)
        self.hl = common.HookLog(self.logs)

    def set_lid(self, state):
        d = os.path.join(self.lg, "proc", "acpi", "button", "lid", "LID0")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "state"), "w") as f:
            f.write(f"state:      {state}\n")

    def env(self, port):
        env = common.base_env(self.home, port)
        env.update(self.lg_env)
        return env

    def hook_cmd(self, sub):
        return " ".join(shlex.quote(a) for a in ("python3", HOOK, self.logs, LIDGUARD, sub))

    def lidguard(self, *args, check=False):
        env = {k: os.environ[k] for k in ("PATH", "LANG") if k in os.environ}
        env.update(self.lg_env, HOME=self.home)
        return subprocess.run([LIDGUARD, *args], env=env, capture_output=True, text=True, timeout=20, check=check)

    def status(self):
        p = self.lidguard("status", "--json")
        try:
            return json.loads(p.stdout)
        except ValueError:
            return {"error": p.stdout + p.stderr}

    def hook_events(self, session_id=None):
        p = self.lidguard("hook-events", "--json", "--count", "50")
        try:
            evs = json.loads(p.stdout)
        except ValueError:
            evs = []
        common.write_json(os.path.join(self.run, "hook-events.json"), evs)
        return [e for e in evs if session_id is None or e.get("sessionId") == session_id]

    # hook-log helpers (records written by claude_codex_hook.py)
    def recs(self, event=None):
        return [r for r in self.hl.records() if event is None or r["event"] == event]

    def wait(self, event, timeout, count=1, pred=None):
        return self.hl.wait(lambda r: r["event"] == event and (pred is None or pred(r)), timeout,
                            count=count, fail=False)

    def session_id(self):
        for r in self.recs("UserPromptSubmit"):
            try:
                return json.loads(r["stdin"]).get("session_id")
            except ValueError:
                pass
        return None

    def model_steps(self):
        path = os.path.join(self.run, "model.jsonl")
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return [e for e in (json.loads(x) for x in f if x.strip()) if e.get("kind") == "step"]

    def cleanup(self):
        """Stop every process of this scenario: those whose environment holds our LIDGUARD_HOME."""
        marker = f"LIDGUARD_HOME={self.lg_env['LIDGUARD_HOME']}".encode()
        for sig, pause in ((signal.SIGTERM, 1.5), (signal.SIGKILL, 0.5)):
            pids = pids_with_env(marker)
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            if not pids:
                return []
            time.sleep(pause)
        left = pids_with_env(marker)
        if left:
            print(f"WARNING: [{self.name}] processes still alive after SIGKILL: {left}", file=sys.stderr)
        return left


def pids_with_env(marker):
    me = os.getpid()
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == me:
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as f:
                if marker + b"\0" in f.read() + b"\0":
                    found.append(int(d))
        except OSError:
            pass
    return found


def session_in(status, sid):
    for s in (status or {}).get("sessions") or []:
        if s.get("sessionId") == sid:
            return s
    return None


def brief(s):
    if not s:
        return "no session"
    return (f"state={s.get('state')} softLockReason={s.get('softLockReason')} "
            f"pendingProviderWork={s.get('pendingProviderWork')} ({s.get('pendingProviderWorkReason')})")


def parse_out(rec):
    out = (rec or {}).get("stdout", "").strip()
    if not out:
        return None
    try:
        return json.loads(out)
    except ValueError:
        return {"_unparsed": out}


def check_decision_output(c, rec, behavior):
    """lidguard's stdout on PermissionRequest: exactly the deny/allow JSON, or nothing."""
    got = parse_out(rec)
    if behavior is None:
        return R.check(c.name, "lidguard printed nothing on PermissionRequest", rec is not None and got is None,
                       f"stdout={rec and rec['stdout']!r}")
    ok = (isinstance(got, dict) and set(got) == {"hookSpecificOutput"}
          and got["hookSpecificOutput"].get("hookEventName") == "PermissionRequest"
          and (got["hookSpecificOutput"].get("decision") or {}).get("behavior") == behavior)
    msg = ((got or {}).get("hookSpecificOutput", {}).get("decision") or {}).get("message") if ok else None
    if behavior == "deny":
        ok = ok and isinstance(msg, str) and LID_MSG in msg
    else:
        ok = ok and msg is None
    return R.check(c.name, f"lidguard printed its {behavior} JSON on PermissionRequest", ok,
                   f"stdout={rec and rec['stdout'].strip()!r}")


def check_provenance(c, sid, behavior):
    evs = [e for e in c.hook_events(sid) if e.get("hookEvent") == "PermissionRequest"]
    d = evs[-1].get("decision") if evs else "missing"
    if behavior is None:
        return R.check(c.name, "hook-events: PermissionRequest recorded without a decision",
                       bool(evs) and d is None, f"decision={json.dumps(d)}")
    prov = (d or {}).get("provenance") or {} if isinstance(d, dict) else {}
    action = {"deny": "denyPermission", "allow": "allowPermission"}[behavior]
    ok = (isinstance(d, dict) and d.get("action") == action and prov.get("lid") == "Closed"
          and prov.get("externalDisplays") == 0 and prov.get("setting") == "closedLidPermissionRequestDecision"
          and prov.get("value") == behavior)
    return R.check(c.name, f"hook-events: PermissionRequest decision {action} with provenance", ok,
                   f"decision={json.dumps(d)}")


def check_model_got(c, needle, min_steps, label):
    steps = c.model_steps()
    later = [json.dumps(s.get("body")) for s in steps[1:]]
    ok = len(steps) >= min_steps and any(needle in b for b in later)
    return R.check(c.name, label, ok, f"{len(steps)} model step requests; needle {needle!r} "
                   f"{'found' if any(needle in b for b in later) else 'absent'} after the first")


def check_no_session_at_end(c, sid):
    st = c.status()
    common.write_json(os.path.join(c.run, "final-status.json"), st)
    R.check(c.name, "status --json: no session left at the end", session_in(st, sid) is None and "error" not in st,
            f"running={st.get('running')} sessions={[brief(s) for s in st.get('sessions') or []]}")


def event_sequence(c, sid):
    return [(e.get("hookEvent"), e.get("kind"), e.get("outcome")) for e in c.hook_events(sid)]


# ---- Claude --------------------------------------------------------------------------------
def claude_setup(c, port):
    cfg = os.path.join(c.run, "cfg")
    os.makedirs(cfg, exist_ok=True)
    common.git_init(c.proj, {"CLAUDE.md": "# Verify project\nScratch project for lidguard verification.\n"})
    hook = c.hook_cmd("claude-hook")
    common.write_json(os.path.join(cfg, "settings.json"), {"hooks": {
        ev: [{"hooks": [{"type": "command", "command": hook, "timeout": 30}]}] for ev in CLAUDE_EVENTS}})
    common.write_json(os.path.join(cfg, ".claude.json"), {
        "hasCompletedOnboarding": True, "lastOnboardingVersion": CLAUDE_VERSION, "theme": "dark",
        "customApiKeyResponses": {"approved": [KEY[-20:]], "rejected": []},
        "projects": {c.proj: {"hasTrustDialogAccepted": True, "allowedTools": []}}})
    env = c.env(port)
    env.update(CLAUDE_CONFIG_DIR=cfg, ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}", ANTHROPIC_API_KEY=KEY,
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1",
               DISABLE_AUTOUPDATER="1", DISABLE_INSTALLATION_CHECKS="1",
               CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL="1", CLAUDE_CODE_MAX_RETRIES="0",
               CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS="10000", CLAUDE_CODE_TMPDIR=os.path.join(c.run, "tmp"))
    return env


class ScreenWatch:
    """Polls the tmux screen (every 0.15 s) and remembers when the permission dialog was visible."""

    def __init__(self, c, t, dialog):
        self.c, self.t, self.dialog, self.seen = c, t, dialog, []

    def poll(self):
        if self.dialog in self.t.screen():
            self.seen.append(time.time())
            if len(self.seen) == 1:
                self.t.snapshot("dialog")

    def until(self, event, timeout):
        end = time.time() + timeout
        while time.time() < end:
            self.poll()
            if self.c.recs(event):
                return True
            time.sleep(0.15)
        return False

    def sleep(self, seconds):
        end = time.time() + seconds
        while time.time() < end:
            self.poll()
            time.sleep(0.15)

    def after(self, t):
        """Dialog sightings later than t (seconds after t)."""
        return [round(x - t, 2) for x in self.seen if x > t]

    def describe(self, t_ref):
        if not self.seen:
            return "never on screen"
        return (f"visible in {len(self.seen)} screen polls, {self.seen[0] - t_ref:+.2f} s .. "
                f"{self.seen[-1] - t_ref:+.2f} s from the PermissionRequest hook start")


def stop_tmux(t):
    """Stop the private tmux server (by pid) and remove its socket file."""
    t.stop()
    sock = os.path.join(os.environ.get("TMUX_TMPDIR", "/tmp"), f"tmux-{os.getuid()}", t.sock)
    for _ in range(10):
        try:
            os.remove(sock)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.2)


def check_lidguard_health(c):
    """Every hook call exited 0 with an empty stderr; lidguard's log has no WARN/ERROR line except
    the expected "keep-awake protection unavailable" (no system bus here); one daemon started."""
    recs = c.recs()
    bad = [f"{r['event']}: rc={r['rc']} stderr={r['stderr'][:120]!r}" for r in recs if r["rc"] != 0 or r["stderr"]]
    log = os.path.join(c.lg_env["LIDGUARD_HOME"], "state", "lidguard.log")
    lines = open(log).read().splitlines() if os.path.exists(log) else []
    odd = [x[:160] for x in lines if (" WARN " in x or " ERROR " in x) and "protection unavailable" not in x]
    starts = sum(1 for x in lines if "daemon started" in x)
    R.check(c.name, "lidguard: hooks exit 0 with empty stderr, no unexpected WARN/ERROR, one daemon",
            bool(recs) and not bad and not odd and starts == 1,
            f"{len(recs)} hook calls; {starts} daemon start(s)" + (f"; bad: {bad[:3]}" if bad else "")
            + (f"; log: {odd[:3]}" if odd else ""))


def check_no_hook_error(c, t):
    """The client's own screen reports no failing hook (Codex: "Hook failed / hook returned invalid
    permission-request JSON output"; Claude: "... hook error")."""
    bad = [line.strip() for line in t.screen().splitlines()
           if "hook" in line.lower() and any(x in line.lower() for x in ("error", "fail", "invalid"))]
    R.check(c.name, "the client shows no hook error", not bad, "; ".join(bad)[:300])


def check_no_dialog(c, w, pr, label):
    """lidguard answered: a dialog may flash while the hook runs, but none may remain 1.5 s after
    the hook handed its answer back."""
    late = w.after(pr["t_end"] + 1.5)
    flash = f"; dialog flashed while the hook ran ({w.describe(pr['t'])})" if w.seen else ""
    return R.check(c.name, label, not late, (f"dialog still visible {late[:3]} s after the hook's answer"
                                             if late else "no dialog after the hook's answer") + flash)


def claude_tmux(c, port, expect):
    """expect: deny | allow (lidguard answers, no dialog) | open | ask (dialog, lidguard silent)."""
    env = claude_setup(c, port)
    t = common.Tmux(f"lidguard-verify-{os.getpid()}-{c.name}", env, c.proj, snapdir=c.run)
    try:
        t.start(" ".join(shlex.quote(a) for a in [CLAUDE, "--permission-mode", "default"]))
        t.wait_screen(lambda s: "\u276f" in s, 40)
        time.sleep(2)
        t.type_line("Create a file named newfile.txt.")
        w = ScreenWatch(c, t, CLAUDE_DIALOG)
        if not R.check(c.name, "PermissionRequest hook fired", w.until("PermissionRequest", 45),
                       f"events={c.hl.events()}"):
            return
        sid = c.session_id()
        pre = c.recs("PreToolUse")
        s = session_in(pre[-1]["status"], sid) if pre else None
        R.check(c.name, "status at PreToolUse: session active (working)", bool(s) and s["state"] == "active", brief(s))
        pr = c.recs("PermissionRequest")[-1]
        if expect in ("deny", "allow"):
            check_decision_output(c, pr, expect)
            R.check(c.name, "turn continued to Stop", w.until("Stop", 40), f"events={c.hl.events()}")
            # Notification(permission_prompt) comes ~6 s after a dialog opens: give it 8 s to show up
            w.sleep(8)
            check_no_dialog(c, w, pr, "no permission dialog left for the user")
            notes = [r for r in c.recs("Notification") if "permission_prompt" in r["stdin"]]
            R.check(c.name, "no Notification(permission_prompt)", not notes, f"{len(notes)} seen")
            created = os.path.exists(os.path.join(c.proj, "newfile.txt"))
            if expect == "deny":
                R.check(c.name, "tool did not run (newfile.txt absent)", not created)
                post = c.recs("PostToolUse") + c.recs("PostToolUseFailure")
                R.check(c.name, "no PostToolUse/PostToolUseFailure for the denied tool", not post,
                        f"{[r['event'] for r in post]}")
                check_model_got(c, LID_MSG, 2, "model received the deny message in the tool_result")
            else:
                R.check(c.name, "tool ran (newfile.txt created)", created)
                R.check(c.name, "PostToolUse fired", bool(c.recs("PostToolUse")))
        else:
            check_decision_output(c, pr, None)
            s = session_in(pr["status"], sid)
            if expect == "ask":
                R.check(c.name, "status at PermissionRequest: softLocked closed_lid_permission_request_ask",
                        bool(s) and s["state"] == "softLocked"
                        and s["softLockReason"] == "closed_lid_permission_request_ask", brief(s))
            else:
                R.check(c.name, "status at PermissionRequest: session still active (lid open)",
                        bool(s) and s["state"] == "active", brief(s))
            try:
                t.wait_screen(lambda scr: CLAUDE_DIALOG in scr, 20)
                dialog = True
            except common.Timeout:
                dialog = False
            t.snapshot("dialog")
            R.check(c.name, "the normal permission dialog is shown", dialog, f"screen: {c.run}/screen-dialog.txt")
            got_n = c.wait("Notification", 15, pred=lambda r: "permission_prompt" in r["stdin"])
            if got_n:
                s = session_in(c.recs("Notification")[-1]["status"], sid)
                R.check(c.name, "status after Notification(permission_prompt): softLocked",
                        bool(s) and s["state"] == "softLocked", brief(s))
            else:
                R.check(c.name, "Notification(permission_prompt) fired", False, f"events={c.hl.events()}")
            R.check(c.name, "tool waits for the user (newfile.txt absent while the dialog is up)",
                    not os.path.exists(os.path.join(c.proj, "newfile.txt")))
            t.keys("Enter")  # "1. Yes" is preselected
            stopped = c.wait("Stop", 40)
            R.check(c.name, "approved in the dialog: tool ran and the turn reached Stop",
                    stopped and os.path.exists(os.path.join(c.proj, "newfile.txt")), f"events={c.hl.events()}")
            check_provenance(c, sid, None)
        if expect in ("deny", "allow"):
            check_provenance(c, sid, expect)
        stops = c.recs("Stop")
        if stops:
            s = session_in(stops[-1]["status"], sid)
            R.check(c.name, "status right after Stop: session gone", s is None, brief(s))
        t.snapshot("final")
        check_no_hook_error(c, t)
        t.type_line("/exit")
        c.wait("SessionEnd", 15)
        check_no_session_at_end(c, sid)
    finally:
        t.snapshot("last")
        stop_tmux(t)


def claude_print(c, port, script_kind):
    env = claude_setup(c, port)
    prompt = {"bash": "Run echo hello in the shell.", "background": "Start a short background sleep.",
              "permission": "Create a file named newfile.txt."}[script_kind]
    cmd = [CLAUDE, "-p", prompt, "--output-format", "stream-json", "--verbose"]
    with open(os.path.join(c.run, "client.out"), "w") as out, open(os.path.join(c.run, "client.err"), "w") as err:
        p = subprocess.Popen(cmd, cwd=c.proj, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        try:
            rc = p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            rc = "timeout"
    time.sleep(1.5)  # SessionEnd hooks may land just after the client exits
    R.check(c.name, "claude -p exited 0", rc == 0, f"rc={rc}")
    sid = c.session_id()
    seq = event_sequence(c, sid)
    pairs = [(h, k) for h, k, _ in seq]
    if script_kind == "bash":
        want = [("UserPromptSubmit", "prompt-submitted"), ("PreToolUse", None), ("PostToolUse", None),
                ("Stop", "turn-stopped")]
        ok = subsequence([h for h, _ in pairs], [w for w, _ in want]) and \
            ("UserPromptSubmit", "prompt-submitted") in pairs and ("Stop", "turn-stopped") in pairs
        started = any(h == "UserPromptSubmit" and o == "started" for h, _, o in seq)
        R.check(c.name, "hook-events: UserPromptSubmit->prompt-submitted (started) ... Stop->turn-stopped",
                ok and started, fmt_seq(seq))
        stops = c.recs("Stop")
        s = session_in(stops[-1]["status"], sid) if stops else "no Stop"
        R.check(c.name, "status right after Stop: session gone", stops and s is None,
                brief(s) if s is None or isinstance(s, dict) else str(s))
        pre = c.recs("PreToolUse")
        s = session_in(pre[-1]["status"], sid) if pre else None
        R.check(c.name, "status at PreToolUse: session active (working)", bool(s) and s["state"] == "active", brief(s))
    elif script_kind == "permission":
        # 2.1.332 fires PermissionRequest in -p too; with no user the tool is denied unless a hook allows it
        pr = c.recs("PermissionRequest")
        R.check(c.name, "PermissionRequest hook fired in -p", bool(pr), f"events={c.hl.events()}")
        check_decision_output(c, pr[-1] if pr else None, c.policy)
        created = os.path.exists(os.path.join(c.proj, "newfile.txt"))
        denials = []
        with open(os.path.join(c.run, "client.out")) as f:
            for line in f:
                o = json.loads(line) if line.strip().startswith("{") else {}
                if o.get("type") == "result":
                    denials = o.get("permission_denials") or []
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
                f"events={c.hl.events()}")
        if stops:
            s1 = session_in(stops[0]["status"], sid)
            R.check(c.name, "status after the first Stop: session kept, pendingProviderWork true",
                    bool(s1) and s1.get("pendingProviderWork") is True, brief(s1))
        if len(stops) >= 2:
            s2 = session_in(stops[1]["status"], sid)
            R.check(c.name, "status after the second Stop: session gone", s2 is None, brief(s2))
            gap = stops[1]["t"] - stops[0]["t"]
            R.check(c.name, "the second Stop came after the background sleep (>= 4 s later)", gap >= 4,
                    f"{gap:.1f} s")
        R.check(c.name, "hook-events: UserPromptSubmit->prompt-submitted ... Stop->turn-stopped x2",
                pairs.count(("Stop", "turn-stopped")) == 2 and ("UserPromptSubmit", "prompt-submitted") in pairs,
                fmt_seq(seq))
    check_no_session_at_end(c, sid)


def subsequence(seq, want):
    it = iter(seq)
    return all(any(x == w for x in it) for w in want)


def fmt_seq(seq):
    return " ".join(f"{h}->{k}({o})" for h, k, o in seq)


# ---- Codex ---------------------------------------------------------------------------------
def codex_setup(c, port):
    chome = os.path.join(c.run, "codex")
    os.makedirs(chome, exist_ok=True)
    common.git_init(c.proj, {"README.md": "# Verify project\n"})
    with open(os.path.join(chome, "config.toml"), "w") as f:
        f.write(f'''model = "gpt-fake"
model_provider = "fake"
approval_policy = "on-request"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "http://127.0.0.1:{port}/v1"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[projects."{c.proj}"]
trust_level = "trusted"
''')
    hook = c.hook_cmd("codex-hook")
    common.write_json(os.path.join(chome, "hooks.json"), {"hooks": {
        ev: [{"hooks": [{"type": "command", "command": hook, "timeout": 30}]}] for ev in CODEX_EVENTS}})
    env = c.env(port)
    env.update(CODEX_HOME=chome)
    return env


def codex_tui(c, port, expect):
    env = codex_setup(c, port)
    t = common.Tmux(f"lidguard-verify-{os.getpid()}-{c.name}", env, c.proj, snapdir=c.run)
    try:
        t.start(f"{shlex.quote(CODEX)} --no-alt-screen --dangerously-bypass-hook-trust")
        t.wait_screen(lambda s: "\u203a" in s or "context left" in s, 40)
        time.sleep(2)
        t.type_line("Create a file named newfile.txt outside the sandbox.")
        w = ScreenWatch(c, t, CODEX_DIALOG)
        if not R.check(c.name, "PermissionRequest hook fired", w.until("PermissionRequest", 45),
                       f"events={c.hl.events()}"):
            return
        sid = c.session_id()
        pre = c.recs("PreToolUse")
        s = session_in(pre[-1]["status"], sid) if pre else None
        R.check(c.name, "status at PreToolUse: session active (working)", bool(s) and s["state"] == "active", brief(s))
        pr = c.recs("PermissionRequest")[-1]
        created = lambda: os.path.exists(os.path.join(c.proj, "newfile.txt"))  # noqa: E731
        if expect in ("deny", "allow"):
            check_decision_output(c, pr, expect)
            R.check(c.name, "turn continued to Stop", w.until("Stop", 40), f"events={c.hl.events()}")
            w.sleep(3)
            check_no_dialog(c, w, pr, "no approval dialog left for the user")
            if expect == "deny":
                R.check(c.name, "command did not run (newfile.txt absent)", not created())
                R.check(c.name, "no PostToolUse for the denied command", not c.recs("PostToolUse"),
                        f"events={c.hl.events()}")
                check_model_got(c, LID_MSG, 2, "model received the deny message in the function_call_output")
            else:
                R.check(c.name, "command ran (newfile.txt created)", created())
                R.check(c.name, "PostToolUse fired", bool(c.recs("PostToolUse")))
            check_provenance(c, sid, expect)
        else:
            check_decision_output(c, pr, None)
            s = session_in(pr["status"], sid)
            if expect == "ask":
                R.check(c.name, "status at PermissionRequest: softLocked closed_lid_permission_request_ask",
                        bool(s) and s["state"] == "softLocked"
                        and s["softLockReason"] == "closed_lid_permission_request_ask", brief(s))
            else:
                R.check(c.name, "status at PermissionRequest: session still active (lid open)",
                        bool(s) and s["state"] == "active", brief(s))
            try:
                t.wait_screen(lambda scr: CODEX_DIALOG in scr, 20)
                dialog = True
            except common.Timeout:
                dialog = False
            t.snapshot("dialog")
            R.check(c.name, "the normal approval prompt is shown", dialog, f"screen: {c.run}/screen-dialog.txt")
            if expect == "open":
                # Codex has no Notification hook: nothing soft-locks the session while the prompt
                # waits (a documented provider limit; lidguard-behaviour.md "Provider limits")
                s = session_in(c.status(), sid)
                R.check(c.name, "status while the prompt waits: still active (Codex has no notification hook)",
                        bool(s) and s["state"] == "active", brief(s))
            R.check(c.name, "command waits for the user (newfile.txt absent)", not created())
            t.keys("Enter")  # "Yes, proceed" is preselected
            stopped = c.wait("Stop", 40)
            R.check(c.name, "approved: command ran and the turn reached Stop", stopped and created(),
                    f"events={c.hl.events()}")
            check_provenance(c, sid, None)
        stops = c.recs("Stop")
        if stops:
            s = session_in(stops[-1]["status"], sid)
            R.check(c.name, "status right after Stop: session gone", s is None, brief(s))
        t.snapshot("final")
        check_no_hook_error(c, t)
        warnings = codex_warnings(t)
        common.write_json(os.path.join(c.run, "codex-warnings.json"), warnings)
        bad = [w for w in warnings if "\u00b7 Startup" not in w.splitlines()[0]
               or any(x in w.lower() for x in ("invalid", "failed", "error"))]
        R.check(c.name, "Codex warnings list (F2): only startup warnings, none from a hook run",
                bool(warnings) and not bad,
                f"{len(warnings)} startup warnings (codex-warnings.json)" if not bad else f"unexpected: {bad}")
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


def codex_exec(c, port):
    env = codex_setup(c, port)
    cmd = [CODEX, "exec", "--skip-git-repo-check", "--json", "--dangerously-bypass-hook-trust",
           "Run echo hello in the shell."]
    with open(os.path.join(c.run, "client.out"), "w") as out, open(os.path.join(c.run, "client.err"), "w") as err:
        p = subprocess.Popen(cmd, cwd=c.proj, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        try:
            rc = p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            rc = "timeout"
    time.sleep(1)
    R.check(c.name, "codex exec exited 0", rc == 0, f"rc={rc}")
    sid = c.session_id()
    seq = event_sequence(c, sid)
    pairs = [(h, k) for h, k, _ in seq]
    ok = subsequence([h for h, _ in pairs], ["UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"]) and \
        ("UserPromptSubmit", "prompt-submitted") in pairs and ("Stop", "turn-stopped") in pairs and \
        any(h == "UserPromptSubmit" and o == "started" for h, _, o in seq)
    R.check(c.name, "hook-events: UserPromptSubmit->prompt-submitted (started) ... Stop->turn-stopped", ok,
            fmt_seq(seq))
    pre = c.recs("PreToolUse")
    s = session_in(pre[-1]["status"], sid) if pre else None
    R.check(c.name, "status at PreToolUse: session active (working)", bool(s) and s["state"] == "active", brief(s))
    stops = c.recs("Stop")
    s = session_in(stops[-1]["status"], sid) if stops else "no Stop"
    R.check(c.name, "status right after Stop: session gone", bool(stops) and s is None,
            brief(s) if s is None or isinstance(s, dict) else str(s))
    check_no_session_at_end(c, sid)


# ---- scenarios -----------------------------------------------------------------------------
TOUCH_CLAUDE = [BASH("touch newfile.txt", "Create newfile.txt"), {"text": "Handled the permission answer; done."}]
TOUCH_CODEX = [SH("touch newfile.txt", sandbox_permissions="require_escalated",
                  justification="Need to create newfile.txt"), {"text": "Handled the approval answer; done."}]

# name -> (provider, lid, policy, fake-model script, runner)
SCENARIOS = {
    "claude-tmux-closed-deny": ("claude", "closed", "deny", TOUCH_CLAUDE, lambda c, p: claude_tmux(c, p, "deny")),
    "claude-tmux-closed-allow": ("claude", "closed", "allow", TOUCH_CLAUDE, lambda c, p: claude_tmux(c, p, "allow")),
    "claude-tmux-open": ("claude", "open", "deny", TOUCH_CLAUDE, lambda c, p: claude_tmux(c, p, "open")),
    "claude-tmux-closed-ask": ("claude", "closed", "ask", TOUCH_CLAUDE, lambda c, p: claude_tmux(c, p, "ask")),
    "claude-print-bash": ("claude", "closed", "deny", [BASH("echo hello", "Print hello"), {"text": "Done."}],
                          lambda c, p: claude_print(c, p, "bash")),
    "claude-print-background": ("claude", "closed", "deny",
                                [BASH("sleep 5; echo slept", "Short background sleep", run_in_background=True),
                                 {"text": "Started a background sleep; ending my turn."},
                                 {"text": "The background sleep finished."}],
                                lambda c, p: claude_print(c, p, "background")),
    "claude-print-closed-deny": ("claude", "closed", "deny", TOUCH_CLAUDE, lambda c, p: claude_print(c, p, "permission")),
    "claude-print-closed-allow": ("claude", "closed", "allow", TOUCH_CLAUDE,
                                  lambda c, p: claude_print(c, p, "permission")),
    "codex-tui-closed-deny": ("codex", "closed", "deny", TOUCH_CODEX, lambda c, p: codex_tui(c, p, "deny")),
    "codex-tui-closed-allow": ("codex", "closed", "allow", TOUCH_CODEX, lambda c, p: codex_tui(c, p, "allow")),
    "codex-tui-open": ("codex", "open", "deny", TOUCH_CODEX, lambda c, p: codex_tui(c, p, "open")),
    "codex-tui-closed-ask": ("codex", "closed", "ask", TOUCH_CODEX, lambda c, p: codex_tui(c, p, "ask")),
    "codex-exec-bash": ("codex", "closed", "deny", [SH("echo hello"), {"text": "Done: it printed hello."}],
                        lambda c, p: codex_exec(c, p)),
}


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if "--list" in sys.argv:
        for n, sc in SCENARIOS.items():
            print(f"{n:28} lid={sc[1]:6} policy={sc[2]}")
        return 0
    group = args[0] if args and args[0] in ("claude", "codex", "all") else None
    rest = args[1:] if group else args
    unknown = [a for a in rest if a not in SCENARIOS]
    if unknown:
        sys.exit(f"unknown scenario(s) {unknown}; use claude|codex|all [name ...] with names from --list")
    names = rest or [n for n, sc in SCENARIOS.items() if group in (None, "all") or sc[0] == group]
    common.check_netns()
    for binary in (LIDGUARD, CLAUDE if any(SCENARIOS[n][0] == "claude" for n in names) else None,
                   CODEX if any(SCENARIOS[n][0] == "codex" for n in names) else None):
        if binary and not os.access(binary, os.X_OK):
            sys.exit(f"missing executable {binary} (run.sh builds lidguard and installs the clients)")
    out = os.environ.get("VERIFY_OUT") or f"/tmp/lidguard-verify.{time.strftime('%Y%m%d-%H%M%S')}"
    os.makedirs(out, exist_ok=True)
    print(f"lidguard verify: {' '.join(names)}\noutput: {out}", flush=True)
    t_all = time.time()
    for name in names:
        provider, lid, policy, script, runner = SCENARIOS[name]
        print(f"--- {name} (lid {lid}, policy {policy})", flush=True)
        t0 = time.time()
        try:
            c = Ctx(out, name, lid, policy)
        except (OSError, subprocess.SubprocessError) as e:
            R.check(name, "scenario set up (dirs, lidguard settings)", False, f"{type(e).__name__}: {e}")
            continue
        try:
            with common.FakeModel(c.run, script) as fm:
                runner(c, fm.port)
            check_lidguard_health(c)
        except Exception as e:  # a crashed scenario is a failure, not an abort of the whole run
            R.check(name, "scenario ran without an exception", False, f"{type(e).__name__}: {e}")
        finally:
            left = c.cleanup()
            if left:
                R.check(name, "all scenario processes stopped", False, f"still alive: {left}")
        connects = [json.loads(x) for x in open(os.path.join(c.run, "model.jsonl"))
                    if '"connect-refused"' in x] if os.path.exists(os.path.join(c.run, "model.jsonl")) else []
        print(f"    ({time.time() - t0:.1f} s; hook events: {' '.join(c.hl.events())}"
              f"{'; refused CONNECTs: ' + str(len(connects)) if connects else ''})", flush=True)
    common.write_json(os.path.join(out, "results.json"), {"lines": R.lines, "passed": R.passed, "failed": R.failed,
                                                          "seconds": round(time.time() - t_all, 1)})
    print(f"total {time.time() - t_all:.0f} s; output: {out}")
    print(f"{R.passed} passed, {R.failed} failed")
    return 1 if R.failed else 0


if __name__ == "__main__":
    sys.exit(main())
