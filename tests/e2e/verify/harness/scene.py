"""A scenario of Claude Code or Codex (`Ctx`): its folders, lidguard's environment and settings,
lidguard's hook log, the `status --json` poller, the fake model of tests/e2e/capture (Anthropic
Messages / OpenAI Responses, with a per-step delay) and the checks these scenarios share.

Every scenario gets <out>/<scenario>/ with lg/home (LIDGUARD_HOME), lg/proc + lg/sys (fake lid and
an internal eDP panel), home/, the agent's config folder, proj/ (git init), model.jsonl (requests
the fake model saw), screen-*.txt (tmux), hook-events.json, status-polls.json and
final-status.json. Every process a scenario started (client, hooks, lidguard daemon, tmux server)
is found by its LIDGUARD_HOME in /proc/<pid>/environ and stopped by pid when the scenario ends."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

from . import lgverify
from .constants import LIDGUARD, MODEL_DELAY, REPO
from .procs import pids_with_env
from .results import R, say

sys.path.insert(0, os.path.join(REPO, "tests", "e2e", "capture", "claude"))
import common  # noqa: E402  (fake model, tmux, git and json helpers: shared with the capture drivers)

BASH = lambda cmd, desc, **kw: {"tool": "Bash", "input": dict(command=cmd, description=desc, **kw)}  # noqa: E731


SH = lambda cmd, **kw: {"tool": "exec_command", "input": dict(cmd=cmd, **kw)}  # noqa: E731


def delayed(steps):
    return [dict(s, delay=MODEL_DELAY) for s in steps]


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


def check_ctx_evidence(c, sid):
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


def check_log_sequence(c, want, label):
    """lidguard's log has these `event=` names in this order (others may come between)."""
    log = os.path.join(c.lg_env["LIDGUARD_HOME"], "state", "lidguard.log")
    lines = open(log).read().splitlines() if os.path.exists(log) else []
    got = [m.group(1) for m in (re.search(r" event=(\S+)", x) for x in lines) if m]
    return R.check(c.name, label, subsequence(got, want), " ".join(x for x in got if "cleanup" not in x))


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


# VERIFY_OUT/<agent>/<name>/lg/home/run/lidguard.sock must fit a unix socket address (108 bytes)
# with CI's VERIFY_OUT (/tmp/lidguard-verify.<date>-<time>): names of at most 31 characters.
LONGEST_NAME = 31


def ctx_scenario(name, provider, lid, policy, script, runner, health=None):
    """(name, fn(root)) for harness.cli: a Ctx for the scenario, the fake model with `script`, then
    `runner(c, port)` and `health(c)`; whatever happens, the poller and every process of the
    scenario are stopped."""
    assert len(name) <= LONGEST_NAME, name

    def run(root):
        say(f"--- {name} (lid {lid}, policy {policy})")
        try:
            c = Ctx(root, name, provider, lid, policy)
        except (OSError, subprocess.SubprocessError) as e:
            R.check(name, "scenario set up (dirs, lidguard settings)", False, f"{type(e).__name__}: {e}")
            return
        try:
            with common.FakeModel(c.run, script) as fm:
                runner(c, fm.port)
            if health:
                health(c)
        finally:
            c.stop_poller()
            left = c.cleanup()
            if left:
                R.check(name, "all scenario processes stopped", False, f"still alive: {left}")
        model_log = os.path.join(c.run, "model.jsonl")
        connects = [x for x in open(model_log) if '"connect-refused"' in x] if os.path.exists(model_log) else []
        say(f"    (hook events: {' '.join(x or '?' for x in c.names())}"
            f"{'; refused CONNECTs: ' + str(len(connects)) if connects else ''})")
    return name, run
