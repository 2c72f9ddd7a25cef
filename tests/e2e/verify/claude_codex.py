#!/usr/bin/env python3
"""Verify against the real Claude Code and Codex CLIs that they honour lidguard's hook answers.

Started by tests/e2e/verify/run.sh inside a loopback-only network namespace:

    claude_codex.py claude|codex|all [scenario ...]     (scenario names: --list)

Every scenario gets /tmp/lidguard-verify.<ts>/<scenario>/ with
  lg/home (LIDGUARD_HOME), lg/proc + lg/sys (fake lid and an internal eDP panel),
  home/, cfg/ (CLAUDE_CONFIG_DIR) or codex/ (CODEX_HOME), proj/ (git init),
  model.jsonl (requests the fake model saw), screen-*.txt (tmux), hook-events.json,
  status-polls.json, claude-debug.txt (Claude's own hook log), final-status.json.
The hooks are installed by the real `lidguard hook-install --provider claude|codex` (with
CLAUDE_CONFIG_DIR / CODEX_HOME pointing into the run) and run unmodified: the agent runs exactly
the command hook-install wrote. What lidguard received and decided comes from
`lidguard hook-events --json`; what the agent got back from Claude's `--debug-file` log (each hook
command, its exit status and the JSON it printed) or Codex's screen and model requests; session
states from a `lidguard status --json` poller (lgverify.StatusPoller) in windows the fake model
guarantees by delaying its answers (fakemodel_delay.py). The first prompt hook starts lidguard's
daemon with the agent's environment (LIDGUARD_HOME, LIDGUARD_PROC_ROOT, LIDGUARD_SYS_ROOT,
DBUS_SYSTEM_BUS_ADDRESS: /nonexistent, or in the *-ask-timeout scenarios the private bus of
a real systemd-logind from target/debug/lidguard-private-logind). The *-ask-* scenarios (ask before
sleep) also start target/debug/lidguard-test-receiver (receiver.py) as the StopFollowUp webhook and
answer or cancel its questions. Each check prints one PASS/FAIL line; the last line is
"N passed, M failed"; exit 1 on any failure. Every process a scenario started (client, hooks,
lidguard daemon, tmux server) is found by its LIDGUARD_HOME in /proc/<pid>/environ and stopped by
pid when the scenario ends.
"""
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree
sys.path.insert(0, os.path.join(REPO, "tests", "e2e", "capture", "claude"))
sys.path.insert(0, HERE)
import common  # noqa: E402  (fake model, tmux, netns check: shared with the capture drivers)
import lgverify  # noqa: E402
from receiver import Receiver  # noqa: E402  (lidguard-test-receiver: the ask-before-sleep webhook + replies)
import phone as phone_mod  # noqa: E402  (lidguard-test-ntfy: the phone of the remote-decision scenarios)
import sshremote  # noqa: E402  (sshd on loopback and the account lgremote: the far side of `lidguard ssh`)

common.FAKEMODEL = os.path.join(HERE, "fakemodel_delay.py")  # fakemodel.py + per-step "delay"

LIDGUARD = os.environ.get("LIDGUARD_BIN", os.path.join(REPO, "target", "debug", "lidguard"))
CLAUDE_VERSION = os.environ.get("CLAUDE_VERSION", "2.1.332")
CODEX_VERSION = os.environ.get("CODEX_VERSION", "0.171.0")
NPM = os.path.join(REPO, ".ci", "cache", "npm")
CLAUDE = os.environ.get("VERIFY_CLAUDE") or os.path.join(
    NPM, f"@anthropic-ai+claude-code@{CLAUDE_VERSION}", "node_modules", ".bin", "claude")
CODEX = os.environ.get("VERIFY_CODEX") or os.path.join(
    NPM, f"@openai+codex@{CODEX_VERSION}", "node_modules", ".bin", "codex")
# The Agent SDK platform package's Claude Code (newer than the CLI package's): `claude-sdk-*`.
CLAUDE_SDK_VERSION = os.environ.get("CLAUDE_SDK_VERSION", "0.3.337")
CLAUDE_SDK = os.environ.get("VERIFY_CLAUDE_SDK") or os.path.join(
    NPM, f"@anthropic-ai+claude-agent-sdk-linux-x64@{CLAUDE_SDK_VERSION}", "node_modules", "@anthropic-ai",
    "claude-agent-sdk-linux-x64", "claude")
KEY = "sk-ant-fake-key-for-offline-verify-0123456789"

CLAUDE_DIALOG = "Do you want to proceed?"
CODEX_DIALOG = "Would you like to run the following command?"
LID_MSG = "lid is closed"
MODEL_DELAY = 1.5  # seconds the fake model waits before each scripted answer (status-poll windows)

BASH = lambda cmd, desc, **kw: {"tool": "Bash", "input": dict(command=cmd, description=desc, **kw)}  # noqa: E731
SH = lambda cmd, **kw: {"tool": "exec_command", "input": dict(cmd=cmd, **kw)}  # noqa: E731


def delayed(steps):
    return [dict(s, delay=MODEL_DELAY) for s in steps]


# ---- results -------------------------------------------------------------------------------
class Results:
    def __init__(self):
        self.passed, self.failed, self.lines = 0, 0, []

    def check(self, scenario, name, ok, detail=""):
        ok = bool(ok)
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
    """Dirs, env, lidguard helpers, lidguard's hook log and the status poller of one scenario."""

    def __init__(self, out, name, provider, lid, policy):
        self.name, self.provider, self.lid, self.policy = name, provider, lid, policy
        self.run = os.path.join(out, name)
        shutil.rmtree(self.run, ignore_errors=True)
        self.home, self.proj = os.path.join(self.run, "home"), os.path.join(self.run, "proj")
        self.lg = os.path.join(self.run, "lg")
        for d in (self.home, self.proj, os.path.join(self.run, "tmp")):
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
        self.poller = None
        self.debug_log = os.path.join(self.run, "claude-debug.txt")

    def set_lid(self, state):
        d = os.path.join(self.lg, "proc", "acpi", "button", "lid", "LID0")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "state"), "w") as f:
            f.write(f"state:      {state}\n")

    def env(self, port):
        env = common.base_env(self.home, port)
        env.update(self.lg_env)
        return env

    def cli_env(self, **extra):
        env = {k: os.environ[k] for k in ("PATH", "LANG") if k in os.environ}
        env.update(self.lg_env, HOME=self.home, **extra)
        return env

    def lidguard(self, *args, check=False):
        return subprocess.run([LIDGUARD, *args], env=self.cli_env(), capture_output=True, text=True, timeout=20,
                              check=check)

    def status(self):
        p = self.lidguard("status", "--json")
        try:
            return json.loads(p.stdout)
        except ValueError:
            return {"error": p.stdout + p.stderr}

    def install(self, **config_env):
        """The real `hook-install --provider <p>` with the agent's config-dir variable(s)."""
        env = self.cli_env(**config_env)
        ok, detail, _ = lgverify.install_hooks(LIDGUARD, env, self.provider)
        R.check(self.name, lgverify.install_label(self.provider), ok, detail)
        self.install_env = env
        return ok

    def start_poller(self):
        self.poller = lgverify.StatusPoller(LIDGUARD, self.cli_env()).start()

    def stop_poller(self, sid=None):
        if self.poller and not self.poller.stopping.is_set():
            self.poller.stop()
            self.poller.dump(os.path.join(self.run, "status-polls.json"), sid)

    # lidguard's hook log (`hook-events --json`)
    def events(self, save=True):
        evs = lgverify.hook_events(LIDGUARD, self.cli_env())
        if save:
            common.write_json(os.path.join(self.run, "hook-events.json"), evs)
        return evs

    def recs(self, event=None, pred=None):
        return [e for e in self.events(save=False)
                if (event is None or e.get("hookEvent") == event) and (pred is None or pred(e))]

    def names(self):
        return [e.get("hookEvent") for e in self.events(save=False)]

    def wait(self, event, timeout, count=1, pred=None):
        end = time.time() + timeout
        while True:
            got = self.recs(event, pred)
            if len(got) >= count:
                return got
            if time.time() > end:
                return None
            time.sleep(0.2)

    def session_id(self):
        ups = self.recs("UserPromptSubmit")
        return ups[0].get("sessionId") if ups else None

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


def window(c, sid, a, b):
    """This session in every status poll between a and b: (snapshots, [session or None])."""
    snaps = c.poller.between(a, b)
    return snaps, [(lgverify.sessions_in(s, sid) or [None])[0] for s in snaps]


def check_window(c, sid, a, b, label, want, min_snaps=2):
    """Every poll between a and b shows the session and want(session) holds."""
    snaps, ses = window(c, sid, a, b)
    bad = [brief(s) for s in ses if not (s and want(s))]
    return R.check(c.name, label, len(snaps) >= min_snaps and not bad,
                   f"{len(snaps) - len(bad)}/{len(snaps)} polls in {b - a:.1f} s"
                   + (f"; e.g. {bad[0]}" if bad else (f"; {brief(ses[0])}" if ses else "")))


def check_gone_after(c, sid, t, label):
    snap = c.poller.first_after(t)
    ses = lgverify.sessions_in(snap, sid) if snap else None
    return R.check(c.name, label, snap is not None and not ses,
                   "no poll after it" if snap is None else (brief(ses[0]) if ses else "no session"))


ACTIVE = lambda s: s.get("state") == "active"  # noqa: E731


# ---- Claude's own hook log (--debug-file) --------------------------------------------------
CLAUDE_RUN = re.compile(r"^(\S+) \[DEBUG\] (?:Hooks: )?(\w+)(?::(\S+))? \[(.*)\] (?:finished|completed) with status (-?\d+)")
CLAUDE_OUT = re.compile(r'^(\S+) \[DEBUG\] ("Hook \w+.*)$')


def claude_debug(c):
    """(runs, outputs) from Claude's debug log: runs = [{t, event, cmd, status}] (each hook command
    Claude ran and its exit status), outputs = [{t, event, stdout}] (each hook's JSON output)."""
    runs, outs = [], []
    try:
        lines = open(c.debug_log, errors="replace").read().splitlines()
    except OSError:
        return runs, outs
    for line in lines:
        m = CLAUDE_RUN.match(line)
        if m:
            runs.append({"t": lgverify.parse_at(m.group(1)), "event": m.group(2), "cmd": m.group(4),
                         "status": int(m.group(5))})
            continue
        m = CLAUDE_OUT.match(line)
        if m:
            try:
                text = json.loads(m.group(2))
            except ValueError:
                continue
            head, _, body = text.partition(" success:\n")
            if body:
                outs.append({"t": lgverify.parse_at(m.group(1)), "event": head.split()[1].split(":")[0],
                             "stdout": body})
    return runs, outs


def expected_claude_json(behavior):
    """lidguard's PermissionRequest answer: exactly the deny/allow JSON (checked as a predicate)."""
    def ok(got):
        if not (isinstance(got, dict) and set(got) == {"hookSpecificOutput"}):
            return False
        hso = got["hookSpecificOutput"]
        d = hso.get("decision") or {}
        if hso.get("hookEventName") != "PermissionRequest" or set(hso) != {"hookEventName", "decision"}:
            return False
        if behavior == "deny":
            return set(d) == {"behavior", "message"} and d["behavior"] == "deny" and LID_MSG in d["message"]
        return d == {"behavior": "allow"}
    return ok


def check_claude_answer(c, sid, behavior):
    """What Claude got back from lidguard on PermissionRequest, from Claude's own debug log: the
    exact deny/allow JSON (equal to the decision lidguard logged), or no output at all. Claude
    writes its debug log lazily: wait (5 s at most) until the hook's run is in it."""
    deadline = time.time() + 5
    while True:
        runs, outs = claude_debug(c)
        pr_runs = [r for r in runs if r["event"] == "PermissionRequest"]
        pr_outs = [o for o in outs if o["event"] == "PermissionRequest"]
        if pr_runs or time.time() >= deadline:
            break
        time.sleep(0.2)
    if behavior is None:
        return R.check(c.name, "lidguard printed nothing on PermissionRequest (Claude's debug log: the hook ran, "
                               "exit 0, no output)",
                       pr_runs and all(r["status"] == 0 for r in pr_runs) and not pr_outs,
                       f"runs={[(r['cmd'], r['status']) for r in pr_runs]} outputs={[o['stdout'] for o in pr_outs]}")
    try:
        got = json.loads(pr_outs[-1]["stdout"]) if pr_outs else None
    except ValueError:
        got = {"_unparsed": pr_outs[-1]["stdout"]}
    dec = [e.get("decision") for e in c.recs("PermissionRequest") if e.get("sessionId") == sid]
    msg_same = behavior != "deny" or (
        got and dec and dec[-1] and got["hookSpecificOutput"]["decision"].get("message") == dec[-1].get("message"))
    return R.check(c.name, f"Claude got lidguard's {behavior} JSON on PermissionRequest (Claude's debug log; "
                           f"same message as hook-events)",
                   len(pr_outs) == 1 and expected_claude_json(behavior)(got) and msg_same
                   and pr_runs and all(r["status"] == 0 for r in pr_runs),
                   f"stdout={pr_outs[-1]['stdout'] if pr_outs else None!r}")


def check_provenance(c, sid, behavior, setting="closedLidPermissionRequestDecision", value=None, nth=-1):
    evs = [e for e in c.events() if e.get("hookEvent") == "PermissionRequest" and e.get("sessionId") == sid]
    d = evs[nth].get("decision") if len(evs) > max(nth, -nth - 1) else "missing"
    if behavior is None:
        return R.check(c.name, "hook-events: PermissionRequest recorded without a decision",
                       bool(evs) and d is None, f"decision={json.dumps(d)}")
    prov = (d or {}).get("provenance") or {} if isinstance(d, dict) else {}
    action = {"deny": "denyPermission", "allow": "allowPermission"}[behavior]
    value = value or behavior
    ok = (isinstance(d, dict) and d.get("action") == action and prov.get("lid") == "Closed"
          and prov.get("externalDisplays") == 0 and prov.get("setting") == setting
          and prov.get("value") == value)
    return R.check(c.name, f"hook-events: PermissionRequest decision {action} with provenance {setting}={value}",
                   ok, f"decision={json.dumps(d)}")


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


def check_run_evidence(c, sid):
    """One prompt, one tool call: hook-status shows the hooks installed and this run's events
    observed; status --json showed the session started and ended."""
    evs = c.events()
    ok, detail = lgverify.check_hook_status_after_run(LIDGUARD, c.install_env, c.provider, evs)
    R.check(c.name, f"hook-status --provider {c.provider} --json after the run: installed, this run's events observed",
            ok, detail)
    ups = [e for e in evs if e.get("hookEvent") == "UserPromptSubmit" and e.get("sessionId") == sid]
    stops = [e for e in evs if e.get("hookEvent") == "Stop" and e.get("sessionId") == sid]
    if ups and stops:
        ok, detail = lgverify.check_started_and_ended(c.poller, sid, c.provider, ups[0]["t"], stops[-1]["t"])
    else:
        ok, detail = False, f"no UserPromptSubmit/Stop in hook-events: {c.names()}"
    R.check(c.name, "status --json: the session started (active) during the turn and ended at Stop", ok, detail)


def event_sequence(c, sid):
    return [(e.get("hookEvent"), e.get("kind"), e.get("outcome")) for e in c.events() if e.get("sessionId") == sid]


def subsequence(seq, want):
    it = iter(seq)
    return all(any(x == w for x in it) for w in want)


def fmt_seq(seq):
    return " ".join(f"{h}->{k}({o})" for h, k, o in seq)


def check_lidguard_log(c, extra_ok, label, detail):
    """lidguard's log has no WARN/ERROR line except the expected "keep-awake protection
    unavailable" (no system bus here); exactly one daemon started (by the first prompt hook)."""
    log = os.path.join(c.lg_env["LIDGUARD_HOME"], "state", "lidguard.log")
    lines = open(log).read().splitlines() if os.path.exists(log) else []
    allowed = ["protection unavailable"] + list(getattr(c, "log_ok", []))
    odd = [x[:160] for x in lines if (" WARN " in x or " ERROR " in x) and not any(a in x for a in allowed)]
    starts = sum(1 for x in lines if "daemon started" in x)
    R.check(c.name, label, extra_ok and not odd and starts == 1,
            f"{detail}; {starts} daemon start(s)" + (f"; log: {odd[:3]}" if odd else ""))


def check_claude_health(c):
    runs, _ = claude_debug(c)
    cmd = f"{lgverify.hook_executable(LIDGUARD)} claude-hook"
    ours = [r for r in runs if r["cmd"] == cmd]
    others = [r for r in runs if r["cmd"] != cmd]
    bad = [f"{r['event']}: status {r['status']}" for r in ours if r["status"] != 0]
    received = len(c.events(save=False))
    check_lidguard_log(c, bool(ours) and not bad and not others,
                       "lidguard: every hook run exited 0 (Claude's debug log), no unexpected WARN/ERROR, one daemon",
                       f"{len(ours)} runs of {cmd!r}, {received} events in hook-events"
                       + (f"; bad: {bad[:3]}" if bad else "") + (f"; other commands: {others[:2]}" if others else ""))


def check_codex_health(c, problems):
    check_lidguard_log(c, not problems, "lidguard: no hook failure reported by Codex, no unexpected WARN/ERROR, one daemon",
                       f"{len(c.events(save=False))} events in hook-events" + (f"; Codex: {problems[:3]}" if problems else ""))


def check_no_hook_error(c, t):
    """The client's own screen reports no failing hook (Codex: "Hook failed / hook returned invalid
    permission-request JSON output"; Claude: "... hook error")."""
    bad = [line.strip() for line in t.screen().splitlines()
           if "hook" in line.lower() and any(x in line.lower() for x in ("error", "fail", "invalid"))]
    R.check(c.name, "the client shows no hook error", not bad, "; ".join(bad)[:300])
    return bad


def check_no_dialog(c, w, t_answer, label):
    """lidguard answered: a dialog may flash while the hook runs, but none may remain 1.5 s after
    the hook handed its answer back."""
    late = w.after(t_answer + 1.5)
    flash = f"; dialog flashed while the hook ran ({w.describe(t_answer)})" if w.seen else ""
    return R.check(c.name, label, not late, (f"dialog still visible {late[:3]} s after the hook's answer"
                                             if late else "no dialog after the hook's answer") + flash)


class ScreenWatch:
    """Polls the tmux screen (every ~0.15 s) and remembers when the permission dialog was visible;
    waits for hook events in lidguard's hook log meanwhile."""

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
            time.sleep(0.1)
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
                f"{self.seen[-1] - t_ref:+.2f} s from the PermissionRequest hook's answer")


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


def tui_ready(t, pred, timeout):
    """Wait for the TUI's input prompt; not fatal (submit_prompt retries on the hook log)."""
    try:
        t.wait_screen(pred, timeout)
        return True
    except common.Timeout:
        return False


def submit_prompt(c, t, text):
    """Type the prompt and press Enter; bounded retries until lidguard's hook log has the
    UserPromptSubmit (a key sent before the TUI listens is lost): Enter again, then retype."""
    for attempt, action in enumerate(("type", "enter", "type", "enter")):
        if action == "type":
            t.type_line(text)
        else:
            t.keys("Enter")
        if c.wait("UserPromptSubmit", 10 if attempt < 3 else 20):
            if attempt:
                print(f"    (prompt submitted on attempt {attempt + 1})", flush=True)
            return True
    return R.check(c.name, "prompt submitted (UserPromptSubmit in lidguard's hook log)", False,
                   f"screen: {t.screen()[-400:]!r}")


def approve(c, t, dialog):
    """Enter approves the preselected "Yes"; pressed again (bounded) while the dialog stays up."""
    for _ in range(3):
        t.keys("Enter")
        if c.wait("Stop", 8) or c.recs("PostToolUse"):
            break
        if dialog not in t.screen():
            break
    return c.wait("Stop", 40)


# ---- Claude --------------------------------------------------------------------------------
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
        if not submit_prompt(c, t, "Create a file named newfile.txt."):
            return
        w = ScreenWatch(c, t, CLAUDE_DIALOG)
        if not R.check(c.name, "PermissionRequest hook fired", w.until("PermissionRequest", 45),
                       f"events={c.names()}"):
            return
        sid = c.session_id()
        ups, pr = c.recs("UserPromptSubmit")[0], c.recs("PermissionRequest")[-1]
        check_window(c, sid, ups["t"], pr["t"], "status from the prompt to PreToolUse/PermissionRequest: session active "
                     "(working)", ACTIVE)
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


def permission_denials(c):
    """The `permission_denials` of claude -p's stream-json result line."""
    denials = []
    with open(os.path.join(c.run, "client.out")) as f:
        for line in f:
            o = json.loads(line) if line.strip().startswith("{") else {}
            if o.get("type") == "result":
                denials = o.get("permission_denials") or []
    return denials


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
        check_run_evidence(c, sid)
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
    c.install(CODEX_HOME=chome)
    env = c.env(port)
    env.update(CODEX_HOME=chome)
    c.start_poller()
    return env


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
        t.start(f"{shlex.quote(CODEX)} --no-alt-screen --dangerously-bypass-hook-trust")
        tui_ready(t, lambda s: "\u203a" in s or "context left" in s, 40)
        time.sleep(2)
        if remote:
            tapper = PhoneTapper(c, phone, [{"tap": "Allow" if expect == "allow" else "Deny"}])
        if not submit_prompt(c, t, "Create a file named newfile.txt outside the sandbox."):
            return
        w = ScreenWatch(c, t, CODEX_DIALOG)
        if not R.check(c.name, "PermissionRequest hook fired", w.until("PermissionRequest", 45),
                       f"events={c.names()}"):
            return
        sid = c.session_id()
        ups, pr = c.recs("UserPromptSubmit")[0], c.recs("PermissionRequest")[-1]
        check_window(c, sid, ups["t"], pr["t"], "status from the prompt to PreToolUse/PermissionRequest: session active "
                     "(working)", ACTIVE)
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
        t.start(f"{shlex.quote(CODEX)} --no-alt-screen --dangerously-bypass-hook-trust")
        tui_ready(t, lambda s: "\u203a" in s or "context left" in s, 40)
        time.sleep(2)
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
    check_run_evidence(c, sid)
    check_no_session_at_end(c, sid)
    c.stop_poller(sid)


# ---- ask before sleep (StopFollowUp) -------------------------------------------------------
POST_STOP_DELAY = 10  # postStopSuspendDelaySeconds: the minimum with ask before sleep on
REPLY_WAIT = 20  # closedLidStopFollowUpDelaySeconds: the minimum reply wait
ASK_REPLY = "also update the README"
LOGIND_BIN = os.path.join(REPO, "target", "debug", "lidguard-private-logind")
RECEIVER_BIN = os.path.join(REPO, "target", "debug", "lidguard-test-receiver")


class PrivateLogind:
    """target/debug/lidguard-private-logind (crates/lidguard-testbus): the real systemd-logind on a
    private system bus, started from inside the namespace. It serves only where logind answers
    CanSuspend=na and CanHibernate=na (so no suspend request can reach the real machine), prints
    one JSON line ({"address": ...} or {"error": ...}) and stops logind when its stdin closes."""

    def __init__(self, run):
        self.err = os.path.join(run, "private-logind.txt")
        with open(self.err, "w") as err:
            self.proc = subprocess.Popen([LOGIND_BIN], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                         text=True)
        line = self.proc.stdout.readline()  # bounded: the bin waits at most 120 s for another private logind
        try:
            self.info = json.loads(line)
        except ValueError:
            self.info = {"error": f"no ready line ({line!r}); see {self.err}"}
        self.address = self.info.get("address")

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()  # the bin stops logind and its bus, then exits
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.terminate()
                try:
                    self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()


def start_private_logind(c):
    """The private logind for a scenario, its bus in the scenario's DBUS_SYSTEM_BUS_ADDRESS; None
    when it cannot serve here. It refuses where logind could really suspend the machine (not
    CanSuspend=na): then the scenario goes on without it (no bus, as the others) and says so.
    Any other failure is a FAIL under CI (which must run it, as the logind tests) and a note
    elsewhere."""
    logind = PrivateLogind(c.run)
    if logind.address:
        c.lg_env["DBUS_SYSTEM_BUS_ADDRESS"] = logind.address
        R.check(c.name, "private systemd-logind up (lidguard-private-logind: CanSuspend=na, CanHibernate=na)", True,
                json.dumps(logind.info))
        return logind
    logind.close()
    error = logind.info.get("error", "")
    if "refusing to serve" not in error and os.environ.get("CI"):
        R.check(c.name, "private systemd-logind up (CI must run it)", False, error)
    else:
        print(f"INFO [{c.name}] no private logind ({error}); the suspend request goes to no bus", flush=True)
    return None


def hook_pids(c, provider):
    """This scenario's running `lidguard-hook <provider>-hook` (or `lidguard <provider>-hook`)
    processes."""
    marker = f"LIDGUARD_HOME={c.lg_env['LIDGUARD_HOME']}".encode()
    found = []
    for pid in pids_with_env(marker):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        exe = argv[0].rsplit(b"/", 1)[-1]
        if len(argv) > 1 and argv[1] == f"{provider}-hook".encode() and exe in (b"lidguard", b"lidguard-hook"):
            found.append(pid)
    return found


def alive(pids):
    """Those of pids that still run (a zombie has ended)."""
    found = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                    found.append(pid)
        except OSError:
            pass
    return found


def wait_gone(pids, timeout):
    """Waits until none of pids runs; returns the time it happened, or None."""
    end = time.time() + timeout
    while alive(pids):
        if time.time() > end:
            return None
        time.sleep(0.1)
    return time.time()


def history(c, command):
    """`lidguard suspend-history|webhook-history --json` as a list ([] if it printed no list)."""
    p = c.lidguard(command, "--json")
    try:
        got = json.loads(p.stdout)
    except ValueError:
        return [{"error": (p.stdout + p.stderr)[:400]}]
    return [e for e in got if isinstance(e, dict)] if isinstance(got, list) else [{"error": got}]


def wait_history(c, command, count, timeout):
    end = time.time() + timeout
    while True:
        got = history(c, command)
        if len(got) >= count or time.time() > end:
            return got
        time.sleep(0.3)


def installed_stop_timeout(c):
    """The timeout hook-install wrote on lidguard's Stop entry (Claude settings.json, Codex hooks.json)."""
    path = os.path.join(c.run, "cfg", "settings.json") if c.provider == "claude" else \
        os.path.join(c.run, "codex", "hooks.json")
    try:
        groups = json.load(open(path))["hooks"]["Stop"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        return f"<{path}: {e}>"
    return [h.get("timeout") for g in groups for h in g.get("hooks") or [] if "-hook" in (h.get("command") or "")]


def model_session(step):
    """The session a model request belongs to, from what the client sends with it."""
    h, b = step.get("headers") or {}, step.get("body") or {}
    for k in ("x-claude-code-session-id", "session_id", "conversation_id"):
        if h.get(k):
            return f"{k}={h[k]}"
    uid = (b.get("metadata") or {}).get("user_id")
    if uid:
        try:
            return "metadata.user_id.session_id=" + json.loads(uid)["session_id"]
        except (ValueError, KeyError, TypeError):
            return f"metadata.user_id={uid}"
    if b.get("prompt_cache_key"):
        return f"prompt_cache_key={b['prompt_cache_key']}"
    return None


def ask_status(c):
    """status --json: (askBeforeSleep, pendingSuspend.ask or None, the whole status)."""
    st = c.status()
    ask = ((st.get("pendingSuspend") or {}).get("ask")) if isinstance(st, dict) else None
    return st.get("askBeforeSleep"), ask, st


def ask_key_sid(ask):
    key = (ask or {}).get("key") or {}
    return key.get("sessionId") or key.get("session_id")


def start_agent(c, env, prompt):
    if c.provider == "claude":
        cmd = [CLAUDE, "-p", prompt, "--output-format", "stream-json", "--verbose", "--debug-file", c.debug_log]
    else:
        cmd = [CODEX, "exec", "--skip-git-repo-check", "--json", "--dangerously-bypass-hook-trust", prompt]
    out = open(os.path.join(c.run, "client.out"), "w")
    err = open(os.path.join(c.run, "client.err"), "w")
    return subprocess.Popen(cmd, cwd=c.proj, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)


def wait_exit(p, timeout):
    try:
        return p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


def claude_stop_runs(c, count):
    """Claude's debug log: the Stop hook runs [(t, status)] and their outputs [(t, stdout)]; waits
    (5 s at most) until `count` runs are in it (Claude writes the log lazily)."""
    end = time.time() + 5
    while True:
        runs, outs = claude_debug(c)
        runs = [(r["t"], r["status"]) for r in runs if r["event"] == "Stop"]
        if len(runs) >= count or time.time() > end:
            return runs, [(o["t"], o["stdout"]) for o in outs if o["event"] == "Stop"]
        time.sleep(0.2)


def check_waiting_at_question(c, p, hooks, n_steps, t_stop, q, label_extra=""):
    """When the question arrives the Stop hook still waits: its process lives, the agent has not
    exited, the model has had no further request; the question came after the post-stop delay."""
    running = alive(hooks)
    R.check(c.name, f"the Stop hook still waits when the question arrives{label_extra} (hook process alive, agent "
            "running, no new model request)",
            bool(running) and p.poll() is None and len(c.model_steps()) == n_steps,
            f"hook pids {running} of {hooks}; agent rc={p.poll()}; model step requests {len(c.model_steps())} "
            f"(before: {n_steps})")
    gap = lgverify.parse_at(q["createdAtUtc"]) - t_stop
    R.check(c.name, f"the question came after the post-stop delay ({POST_STOP_DELAY} s){label_extra}",
            POST_STOP_DELAY - 0.5 <= gap <= POST_STOP_DELAY + 6, f"{gap:.1f} s after Stop")


def check_awaiting(c, sid, label):
    state, ask, st = ask_status(c)
    ok = state == "on" and ask and ask.get("status") == "awaiting-reply" and ask_key_sid(ask) == sid \
        and ask.get("replyDeadline")
    return R.check(c.name, label, ok, f"askBeforeSleep={state!r} pendingSuspend.ask={json.dumps(ask)}")


def ask_scenario(c, port, expect):
    """Ask before sleep with the real agent (claude -p / codex exec). expect: reply | timeout."""
    prov = c.provider
    # the suspend request at the end fails (no bus, or logind's CanSuspend=na): lidguard logs it as an ERROR
    c.log_ok = ["suspend failed mode=Sleep"]
    rcv, logind = Receiver(REPO), None
    p, sid = None, None
    try:
        if expect == "timeout":
            logind = start_private_logind(c)
        c.lidguard("settings", "--closed-lid-stop-follow-up-webhook-url", rcv.webhook_url,
                   "--closed-lid-stop-follow-up-delay-seconds", str(REPLY_WAIT),
                   "--post-stop-suspend-delay-seconds", str(POST_STOP_DELAY), check=True)
        env = claude_setup(c, port) if prov == "claude" else codex_setup(c, port)
        want_timeout = POST_STOP_DELAY + REPLY_WAIT + 300
        got = installed_stop_timeout(c)
        R.check(c.name, f"hook-install wrote the ask-before-sleep timeout on Stop ({want_timeout} s = "
                f"{POST_STOP_DELAY} + {REPLY_WAIT} + 300)", got == [want_timeout], f"Stop timeouts: {got}")
        p = start_agent(c, env, "Fix the typo in README.md.")
        if logind and c.wait("UserPromptSubmit", 30):
            # the fake model answers 1.5 s after the prompt: the session works meanwhile
            end, prot = time.time() + 1.2, {}
            while time.time() < end and not prot.get("held"):
                prot = c.status().get("protection") or {}
            R.check(c.name, "while the turn runs lidguard holds its inhibitors on the private logind (status --json "
                    "protection)", prot.get("held") is True and "sleep" in (prot.get("inhibitors") or [])
                    and not prot.get("unavailableReason"), json.dumps(prot))
        stops = c.wait("Stop", 60)
        if not R.check(c.name, "the turn reached Stop", stops, f"events={c.names()} rc={p.poll()}"):
            return
        sid = c.session_id()
        t_stop = stops[0]["t"]
        n_steps = len(c.model_steps())
        time.sleep(0.5)
        state, ask, _ = ask_status(c)
        R.check(c.name, "status --json right after Stop: askBeforeSleep on, pendingSuspend.ask waiting-for-delay "
                "for this session", state == "on" and ask and ask.get("status") == "waiting-for-delay"
                and ask_key_sid(ask) == sid, f"askBeforeSleep={state!r} ask={json.dumps(ask)}")
        hooks = hook_pids(c, prov)
        q = rcv.wait_for_question(POST_STOP_DELAY + 15)
        if not R.check(c.name, "the receiver got the StopFollowUp question", q, f"requests={rcv.requests()}"):
            return
        check_waiting_at_question(c, p, hooks, n_steps, t_stop, q)
        check_awaiting(c, sid, "status --json: pendingSuspend.ask awaiting-reply for this session")
        prot = c.status().get("protection") or {}
        print(f"INFO [{c.name}] protection while the Stop hook awaits the reply (lid closed): "
              f"held={prot.get('held')} inhibitors={prot.get('inhibitors')} backend={prot.get('backend')!r}", flush=True)
        hist = history(c, "suspend-history")
        R.check(c.name, "no suspend requested while the Stop hook waits (suspend-history empty)", hist == [],
                json.dumps(hist)[:300])
        posts = [r for r in rcv.requests() if r.get("method") == "POST" and "/webhooks/" in (r.get("path") or "")]
        body = (posts[0].get("json") or {}) if posts else {}
        common.write_json(os.path.join(c.run, "stop-follow-up-1.json"), {"question": q, "webhook": posts[:1]})
        R.check(c.name, "the StopFollowUp webhook names the session and the reply wait",
                body.get("eventType") == "StopFollowUp" and sid and sid in json.dumps(body)
                and body.get("replyWaitSeconds") == REPLY_WAIT,
                f"eventType={body.get('eventType')} replyWaitSeconds={body.get('replyWaitSeconds')} "
                f"keys={sorted(body)[:12]}")
        if expect == "reply":
            ask_reply_rest(c, p, rcv, q, sid, hooks, n_steps)
        else:
            ask_timeout_rest(c, p, rcv, sid, hooks, t_stop, logind)
        rc = wait_exit(p, 30)
        R.check(c.name, f"{'claude -p' if prov == 'claude' else 'codex exec'} exited 0", rc == 0, f"rc={rc}")
        c.wait("SessionEnd", 5)
        if prov == "codex":
            c.codex_problems = codex_exec_problems(c)
        st = c.status()
        common.write_json(os.path.join(c.run, "final-status.json"), st)
        R.check(c.name, "status --json at the end: no session, no pending suspend",
                session_in(st, sid) is None and not st.get("pendingSuspend") and "error" not in st,
                f"sessions={[brief(s) for s in st.get('sessions') or []]} pendingSuspend={st.get('pendingSuspend')}")
        common.write_json(os.path.join(c.run, "webhook-history.json"), history(c, "webhook-history"))
        common.write_json(os.path.join(c.run, "suspend-history.json"), history(c, "suspend-history"))
        common.write_json(os.path.join(c.run, "receiver-requests.json"), rcv.requests())
    finally:
        try:
            if p and p.poll() is None:
                p.kill()
                p.wait(10)
        finally:  # the receiver and the private logind are no scenario process: stop them here, always
            c.stop_poller(sid)
            rcv.close()
            if logind:
                logind.close()


def ask_reply_rest(c, p, rcv, q, sid, hooks, n_steps):
    t_reply = time.time()
    res = rcv.reply(q["id"], ASK_REPLY)
    R.check(c.name, f"the driver's reply {ASK_REPLY!r} was taken by lidguard (receiver: replyConsumed)",
            isinstance(res, dict) and res.get("succeeded") is True and res.get("replyConsumed") is True,
            json.dumps(res)[:300])
    end = time.time() + 30
    cont = []
    while time.time() < end and not cont:
        cont = [s for s in c.model_steps()[n_steps:] if ASK_REPLY in json.dumps(s.get("body"))]
        time.sleep(0.2)
    steps = c.model_steps()
    first = model_session(steps[0]) if steps else None
    R.check(c.name, "the model received the reply in the next request", bool(cont),
            f"{len(steps)} model step requests; {ASK_REPLY!r} {'found' if cont else 'absent'} after the first")
    R.check(c.name, "that request belongs to the same session (the client's session id is unchanged)",
            bool(cont) and first is not None and model_session(cont[0]) == first,
            f"first: {first}; continuation: {model_session(cont[0]) if cont else None}")
    R.check(c.name, "the first Stop hook ended, and the agent went on, only after the reply",
            bool(cont) and cont[0]["t"] > t_reply and wait_gone(hooks, 5) is not None,
            f"continuation request {cont[0]['t'] - t_reply:+.1f} s from the reply" if cont else "no continuation")
    if c.provider == "claude":
        runs, outs = claude_stop_runs(c, 1)
        got = None
        try:
            got = json.loads(outs[0][1]) if outs else None
        except ValueError:
            got = outs[0][1]
        R.check(c.name, "Claude got exactly {\"decision\":\"block\",\"reason\":<the reply>} from the Stop hook, "
                "after the reply (Claude's debug log)",
                got == {"decision": "block", "reason": ASK_REPLY} and runs and runs[0][1] == 0
                and outs[0][0] >= t_reply - 0.5, f"runs={runs[:2]} output={outs[0][1] if outs else None!r} "
                f"at {outs[0][0] - t_reply:+.1f} s from the reply" if outs else f"runs={runs[:2]} no output")
    snap = c.poller.first_after(t_reply + 1.0)
    s = (lgverify.sessions_in(snap, sid) or [None])[0] if snap else None
    R.check(c.name, "status after the reply: the session is working again", bool(s) and s.get("state") == "active",
            brief(s))
    stops = c.wait("Stop", 40, count=2)
    active = [(e.get("event") or {}).get("stopHookActive") for e in stops or []]
    R.check(c.name, "the second turn ran to a second Stop in the same session, with stop_hook_active",
            bool(stops) and all(e.get("sessionId") == sid for e in stops) and active == [False, True]
            and not c.recs("UserPromptSubmit", lambda e: e.get("sessionId") != sid),
            f"events={c.names()}; stopHookActive={active}")
    if not stops:
        return
    common.write_json(os.path.join(c.run, "stops.json"), stops)
    hooks2 = hook_pids(c, c.provider)
    n2 = len(c.model_steps())
    q2 = rcv.wait_for_question(POST_STOP_DELAY + 15, exclude={q["id"]})
    if not R.check(c.name, "the second Stop (stop_hook_active) asks again", q2, f"questions={rcv.questions()}"):
        return
    check_waiting_at_question(c, p, hooks2, n2, stops[1]["t"], q2, " (second)")
    check_awaiting(c, sid, "status --json: pendingSuspend.ask awaiting-reply again")
    hist = history(c, "suspend-history")
    R.check(c.name, "no suspend requested before the cancel (suspend-history empty)", hist == [],
            json.dumps(hist)[:300])
    t_cancel = time.time()
    res = rcv.cancel(q2["id"])
    gone = wait_gone(hooks2, 15)
    R.check(c.name, "the cancel let the second Stop hook go", gone is not None,
            f"{gone - t_cancel:.1f} s after the cancel" if gone else f"cancel: {res}")
    if c.provider == "claude":
        runs, outs = claude_stop_runs(c, 2)
        R.check(c.name, "the second Stop hook printed nothing (Claude's debug log)",
                len(runs) >= 2 and runs[1][1] == 0 and len(outs) == 1, f"runs={runs} outputs={[o[1] for o in outs]}")
    time.sleep(1)
    R.check(c.name, "the agent did not continue after the cancel (no further model request)",
            len(c.model_steps()) == n2, f"{len(c.model_steps())} model step requests (before: {n2})")
    hist = wait_history(c, "suspend-history", 1, 10)
    R.check(c.name, "after the cancel the suspend was requested and recorded (suspend-history)",
            len(hist) == 1 and hist[0].get("succeeded") is False and hist[0].get("reason") == "Completed",
            json.dumps(hist)[:400])
    wh = [w for w in history(c, "webhook-history") if w.get("eventType") == "StopFollowUp"]
    results = [w.get("result") for w in wh]
    R.check(c.name, "webhook-history: two StopFollowUp entries (reply received, then canceled)",
            len(wh) == 2 and all(str(w.get("host")).startswith("127.0.0.1") and w.get("sessionId") == sid for w in wh)
            and results[0].startswith("reply-received") and results[1].startswith("canceled"), json.dumps(wh)[:600])
    check_log_sequence(c, ["stop-follow-up-awaiting-reply", "stop-follow-up-reply-received", "suspend-canceled",
                           "session-continued", "session-stopped", "stop-follow-up-awaiting-reply",
                           "stop-follow-up-canceled", "suspend-requested"],
                       "lidguard's log: asked, reply received, session continued; asked again, canceled, then the "
                       "suspend request")


def ask_timeout_rest(c, p, rcv, sid, hooks, t_stop, logind):
    gone = wait_gone(hooks, REPLY_WAIT + 25)
    took = (gone - t_stop) if gone else None
    want = POST_STOP_DELAY + REPLY_WAIT
    R.check(c.name, f"with no reply the Stop hook ended after about delay + reply wait ({want} s)",
            took is not None and want - 1 <= took <= want + 8, f"{took:.1f} s after Stop" if took else "still running")
    if c.provider == "claude":
        runs, outs = claude_stop_runs(c, 1)
        R.check(c.name, "the Stop hook printed nothing and exited 0 (Claude's debug log)",
                runs and runs[0][1] == 0 and not outs, f"runs={runs} outputs={[o[1] for o in outs]}")
    n = len(c.model_steps())
    time.sleep(1)
    R.check(c.name, "the agent did not continue (one model request, one Stop)",
            n == 1 and len(c.model_steps()) == 1 and len(c.recs("Stop")) == 1,
            f"{len(c.model_steps())} model step requests; events={c.names()}")
    hist = wait_history(c, "suspend-history", 1, 10)
    entry = hist[0] if hist else {}
    err = entry.get("error") or ""
    via = "logind's refusal (CanSuspend=na)" if logind else "no bus (no private logind here)"
    ok = len(hist) == 1 and entry.get("succeeded") is False and entry.get("reason") == "Completed" \
        and ("CanSuspend=na" in err if logind else bool(err))
    R.check(c.name, f"the suspend request was attempted and recorded in suspend-history: {via}", ok,
            json.dumps(hist)[:500])
    wh = [w for w in history(c, "webhook-history") if w.get("eventType") == "StopFollowUp"]
    R.check(c.name, "webhook-history: one StopFollowUp entry, result timed-out",
            len(wh) == 1 and str(wh[0].get("result", "")).startswith("timed-out")
            and str(wh[0].get("host")).startswith("127.0.0.1") and wh[0].get("sessionId") == sid, json.dumps(wh)[:500])
    check_log_sequence(c, ["session-stopped", "suspend-scheduled", "stop-follow-up-awaiting-reply",
                           "stop-follow-up-timed-out", "suspend-requested", "suspend-failed"],
                       "lidguard's log: asked, timed out, then the suspend request (failed)")


# ---- the phone (policy remote) ------------------------------------------------------------
PHONE_BIN = os.path.join(REPO, "target", "debug", "lidguard-test-ntfy")
REMOTE_WAIT = 20  # remoteDecisionTimeoutSeconds: room for the 5 s polls of the reply topic
REMOTE_DENY = "denied this action from their phone"
REMOTE_TIMEOUT = "nobody answered this permission request on the phone in time"


def remote_settings(c, phone):
    """ntfy on (the stand-in, with its token) before hook-install, so the managed hook timeout
    covers the remote wait."""
    c.lidguard("settings", "--ntfy-url", phone.topic_url, "--ntfy-token", phone_mod.TOKEN,
               "--remote-decision-timeout-seconds", str(REMOTE_WAIT), check=True)


class PhoneTapper:
    """Answers the permission questions on the phone, one plan step per question, on a thread.
    A step: {"tap": label} taps that button; {"before": [...]} first sends junk replies
    ("wrong-code", "reuse-first", "forge-request") and waits one poll; {"tap": None} answers nothing."""

    def __init__(self, c, phone, plan):
        self.c, self.phone, self.plan = c, phone, plan
        self.questions, self.done = [], []
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        for n, step in enumerate(self.plan, 1):
            q = self.phone.wait_for_notice(n, 90)
            if not q:
                return
            self.questions.append(q)
            for junk in step.get("before", []):
                if junk == "wrong-code":
                    status = self.phone.reply("aaaa-bbbb-cccc-dddd allow")
                elif junk == "reuse-first":
                    status = self.phone.tap(self.questions[0], "Allow")
                else:  # forge-request: this question's Allow body naming the first question
                    body = json.loads(self.button(q, "Allow")["body"])
                    body["request"] = json.loads(self.button(self.questions[0], "Allow")["body"])["request"]
                    status = self.phone.reply(json.dumps(body))
                self.done.append((junk, status))
            if step.get("before"):
                time.sleep(1)  # the junk is posted first (replies are judged in the order ntfy took them)
            if step.get("tap"):
                self.done.append((step["tap"], self.phone.tap(q, step["tap"])))

    @staticmethod
    def button(q, label):
        return next((a for a in q.get("actions", []) if a.get("label") == label), {})

    def check_question(self, i, tool, command):
        """The i-th question as the phone showed it: tool, command, buttons bound to the reply topic."""
        q = self.questions[i] if len(self.questions) > i else {}
        allow = self.button(q, "Allow")
        ok = (tool in (q.get("title") or "") and (q.get("message") or "").startswith(f"{tool}: {command}")
              and [a.get("label") for a in q.get("actions", [])] == ["Allow", "Deny"]
              and allow.get("url") == self.phone.reply_url
              and allow.get("headers", {}).get("Authorization") == "Bearer " + phone_mod.TOKEN
              and q.get("priority") == 4)
        return R.check(self.c.name, f"question {i + 1} on the phone: '{tool}: {command}', Allow/Deny posting to the "
                                    "reply topic with the token", ok, json.dumps(q)[:500])


def lidguard_stream(c):
    p = c.lidguard("events", "--json")
    return [json.loads(x) for x in p.stdout.splitlines() if x.strip()]


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


def check_log_sequence(c, want, label):
    """lidguard's log has these `event=` names in this order (others may come between)."""
    log = os.path.join(c.lg_env["LIDGUARD_HOME"], "state", "lidguard.log")
    lines = open(log).read().splitlines() if os.path.exists(log) else []
    got = [m.group(1) for m in (re.search(r" event=(\S+)", x) for x in lines) if m]
    return R.check(c.name, label, subsequence(got, want), " ".join(x for x in got if "cleanup" not in x))


# ---- scenarios -----------------------------------------------------------------------------
TOUCH_CLAUDE = delayed([BASH("touch newfile.txt", "Create newfile.txt"), {"text": "Handled the permission answer; done."}])
TOUCH_CODEX = delayed([SH("touch newfile.txt", sandbox_permissions="require_escalated",
                          justification="Need to create newfile.txt"), {"text": "Handled the approval answer; done."}])

# ask before sleep: the first turn ends at once; the reply's turn answers once more
ASK_SCRIPT = delayed([{"text": "Fixed the typo."}, {"text": "Updated the README as asked."}])

TWO_TOUCHES = delayed([BASH("touch first.txt", "Create first.txt"), BASH("touch second.txt", "Create second.txt"),
                       {"text": "Handled both answers; done."}])


def with_phone(runner):
    """Runs `runner(c, port, phone)` with the ntfy stand-in up for the scenario."""
    def run(c, port):
        with phone_mod.Phone(REPO) as phone:
            runner(c, port, phone)
    return run


# name -> (provider, lid, policy, fake-model script, runner)
SCENARIOS = {
    "claude-tmux-closed-deny": ("claude", "closed", "deny", TOUCH_CLAUDE, lambda c, p: claude_tmux(c, p, "deny")),
    "claude-tmux-closed-allow": ("claude", "closed", "allow", TOUCH_CLAUDE, lambda c, p: claude_tmux(c, p, "allow")),
    "claude-tmux-open": ("claude", "open", "deny", TOUCH_CLAUDE, lambda c, p: claude_tmux(c, p, "open")),
    "claude-tmux-closed-ask": ("claude", "closed", "ask", TOUCH_CLAUDE, lambda c, p: claude_tmux(c, p, "ask")),
    "claude-print-bash": ("claude", "closed", "deny", delayed([BASH("echo hello", "Print hello"), {"text": "Done."}]),
                          lambda c, p: claude_print(c, p, "bash")),
    "claude-print-background": ("claude", "closed", "deny",
                                [BASH("sleep 5; echo slept", "Short background sleep", run_in_background=True),
                                 {"text": "Started a background sleep; ending my turn."},
                                 {"text": "The background sleep finished."}],
                                lambda c, p: claude_print(c, p, "background")),
    "claude-print-closed-deny": ("claude", "closed", "deny", TOUCH_CLAUDE, lambda c, p: claude_print(c, p, "permission")),
    "claude-print-closed-allow": ("claude", "closed", "allow", TOUCH_CLAUDE,
                                  lambda c, p: claude_print(c, p, "permission")),
    "claude-ssh-print-bash": ("claude", "closed", "deny",
                              delayed([BASH("echo hello", "Print hello"), {"text": "Done."}]), claude_ssh),
    "claude-print-ask-reply": ("claude", "closed", "deny", ASK_SCRIPT, lambda c, p: ask_scenario(c, p, "reply")),
    "claude-print-ask-timeout": ("claude", "closed", "deny", ASK_SCRIPT, lambda c, p: ask_scenario(c, p, "timeout")),
    "claude-sdk-tmux-cron": ("claude", "closed", "deny",
                             [{"tool": "ToolSearch", "input": {"query": "select:CronCreate"}},
                              {"tool": "CronCreate", "input": {"cron": "*/1 * * * *", "prompt": "Check the build.",
                                                               "recurring": True}},
                              {"text": "Scheduled: I will check the build every minute."},
                              {"text": "The build is green."},
                              {"hang": True, "text": "Thinking about"}],
                             claude_sdk_cron),
    "codex-tui-closed-deny": ("codex", "closed", "deny", TOUCH_CODEX, lambda c, p: codex_tui(c, p, "deny")),
    "codex-tui-closed-allow": ("codex", "closed", "allow", TOUCH_CODEX, lambda c, p: codex_tui(c, p, "allow")),
    "codex-tui-open": ("codex", "open", "deny", TOUCH_CODEX, lambda c, p: codex_tui(c, p, "open")),
    "codex-tui-closed-ask": ("codex", "closed", "ask", TOUCH_CODEX, lambda c, p: codex_tui(c, p, "ask")),
    "codex-tui-question-open": ("codex", "open", "deny",
                                [{"tool": "request_user_input", "input": QUESTION_ARGS},
                                 {"text": "You chose a colour; done.", "delay": 4}],
                                lambda c, p: codex_question(c, p, "open")),
    "codex-tui-question-closed": ("codex", "closed", "deny",
                                  [{"tool": "request_user_input", "input": QUESTION_ARGS},
                                   {"text": "I will assume red.", "delay": 2}],
                                  lambda c, p: codex_question(c, p, "closed")),
    "codex-exec-bash": ("codex", "closed", "deny", delayed([SH("echo hello"), {"text": "Done: it printed hello."}]),
                        lambda c, p: codex_exec(c, p)),
    "codex-exec-ask-reply": ("codex", "closed", "deny", ASK_SCRIPT, lambda c, p: ask_scenario(c, p, "reply")),
    "codex-exec-ask-timeout": ("codex", "closed", "deny", ASK_SCRIPT, lambda c, p: ask_scenario(c, p, "timeout")),
    "claude-print-remote-mixed": ("claude", "closed", "remote", TWO_TOUCHES,
                                  with_phone(lambda c, p, ph: claude_remote(c, p, ph, "mixed"))),
    "claude-print-remote-deny": ("claude", "closed", "remote", TOUCH_CLAUDE,
                                 with_phone(lambda c, p, ph: claude_remote(c, p, ph, "deny"))),
    "codex-tui-remote-allow": ("codex", "closed", "remote", TOUCH_CODEX,
                               with_phone(lambda c, p, ph: codex_tui(c, p, "remote-allow", ph))),
    "codex-tui-remote-deny": ("codex", "closed", "remote", TOUCH_CODEX,
                              with_phone(lambda c, p, ph: codex_tui(c, p, "remote-deny", ph))),
}


# VERIFY_OUT/claude-codex/<name>/lg/home/run/lidguard.sock must fit a unix socket address (108
# bytes) with CI's VERIFY_OUT (/tmp/lidguard-verify.<date>-<time>): names of at most 31 characters.
LONGEST_NAME = 31
assert all(len(n) <= LONGEST_NAME for n in SCENARIOS), [n for n in SCENARIOS if len(n) > LONGEST_NAME]


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
    asks = any("-ask-" in n for n in names)
    for binary in (LIDGUARD, CLAUDE if any(SCENARIOS[n][0] == "claude" for n in names) else None,
                   CLAUDE_SDK if any(n.startswith("claude-sdk-") for n in names) else None,
                   CODEX if any(SCENARIOS[n][0] == "codex" for n in names) else None,
                   RECEIVER_BIN if asks else None, LOGIND_BIN if asks else None,
                   PHONE_BIN if any("-remote-" in n for n in names) else None):
        if binary and not os.access(binary, os.X_OK):
            sys.exit(f"missing executable {binary} (run.sh builds lidguard, the test receiver and the private "
                     "logind; install_clients.sh installs the clients)")
    out = os.environ.get("VERIFY_OUT") or f"/tmp/lidguard-verify.{time.strftime('%Y%m%d-%H%M%S')}"
    os.makedirs(out, exist_ok=True)
    print(f"lidguard verify: {' '.join(names)}\noutput: {out}", flush=True)
    t_all = time.time()
    for name in names:
        provider, lid, policy, script, runner = SCENARIOS[name]
        print(f"--- {name} (lid {lid}, policy {policy})", flush=True)
        t0 = time.time()
        try:
            c = Ctx(out, name, provider, lid, policy)
        except (OSError, subprocess.SubprocessError) as e:
            R.check(name, "scenario set up (dirs, lidguard settings)", False, f"{type(e).__name__}: {e}")
            continue
        c.codex_problems = None
        try:
            with common.FakeModel(c.run, script) as fm:
                runner(c, fm.port)
            if provider == "claude":
                check_claude_health(c)
            elif c.codex_problems is not None:
                check_codex_health(c, c.codex_problems)
        except Exception as e:  # a crashed scenario is a failure, not an abort of the whole run
            import traceback
            traceback.print_exc()
            R.check(name, "scenario ran without an exception", False, f"{type(e).__name__}: {e}")
        finally:
            c.stop_poller()
            left = c.cleanup()
            if left:
                R.check(name, "all scenario processes stopped", False, f"still alive: {left}")
        connects = [json.loads(x) for x in open(os.path.join(c.run, "model.jsonl"))
                    if '"connect-refused"' in x] if os.path.exists(os.path.join(c.run, "model.jsonl")) else []
        print(f"    ({time.time() - t0:.1f} s; hook events: {' '.join(x or '?' for x in c.names())}"
              f"{'; refused CONNECTs: ' + str(len(connects)) if connects else ''})", flush=True)
    common.write_json(os.path.join(out, "results.json"), {"lines": R.lines, "passed": R.passed, "failed": R.failed,
                                                          "seconds": round(time.time() - t_all, 1)})
    print(f"total {time.time() - t_all:.0f} s; output: {out}")
    print(f"{R.passed} passed, {R.failed} failed")
    return 1 if R.failed else 0


if __name__ == "__main__":
    sys.exit(main())
