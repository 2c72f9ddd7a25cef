"""What the drivers read from lidguard itself (python3 stdlib only).

- install_hooks(): the real `lidguard hook-install --provider P` with the agent's config-dir
  variables, then `lidguard hook-status --provider P --json` must say `installed` with nothing
  observed yet. The agents then run exactly the command hook-install wrote (no wrapper).
- hook_events(): `lidguard hook-events --json` (lidguard's own hook log: one entry per event it
  received, with kind, outcome and any closed-lid decision), with `at` as epoch seconds (`t`).
- StatusPoller: polls `lidguard status --json` every ~0.1 s in a thread. lidguard stamps a hook
  event (`at`) in the daemon's single request owner before applying it, so a snapshot whose
  request was sent after `at` always shows the state after that event.
- check_hook_status_after_run(): `hook-status --json` after a run: installed, and the evidence
  (receipts) observed exactly for the events hook-events recorded, with the same counts.
"""
import datetime
import json
import os
import subprocess
import threading
import time

INSTALL_VARS = {  # the variables hook-install reads for each agent's config location
    "claude": ("CLAUDE_CONFIG_DIR",),
    "codex": ("CODEX_HOME",),
    "copilot": ("COPILOT_HOME",),
    "opencode": ("OPENCODE_CONFIG_DIR", "XDG_CONFIG_HOME"),
}


def hook_executable(lidguard):
    """What hook-install writes into the configs: the small `lidguard-hook` next to lidguard
    (cargo builds both), else lidguard itself."""
    exe = os.path.realpath(lidguard)
    hook = os.path.join(os.path.dirname(exe), "lidguard-hook")
    return hook if os.path.isfile(hook) else exe


def parse_at(at):
    """'2026-11-30T00:35:56.13528207Z' -> epoch seconds (float)."""
    base, _, frac = at.rstrip("Z").partition(".")
    t = datetime.datetime.strptime(base, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc).timestamp()
    return t + (float("0." + frac) if frac else 0.0)


def run_lidguard(lidguard, env, *args, timeout=30):
    return subprocess.run([lidguard, *args], env=env, capture_output=True, text=True, timeout=timeout)


def hook_events(lidguard, env, provider=None, count=1000):
    args = ["hook-events", "--json", "--count", str(count)]
    if provider:
        args += ["--provider", provider]
    p = run_lidguard(lidguard, env, *args)
    try:
        evs = json.loads(p.stdout)
    except ValueError:
        return []
    for e in evs:
        try:
            e["t"] = parse_at(e["at"])
        except (KeyError, ValueError):
            e["t"] = 0.0
    return evs


def hook_status(lidguard, env, provider):
    p = run_lidguard(lidguard, env, "hook-status", "--provider", provider, "--json")
    try:
        reports = json.loads(p.stdout)
    except ValueError:
        reports = []
    report = next((r for r in reports if r.get("provider") == provider), None)
    return p.returncode, report, p.stdout + p.stderr


def health(provider, rc, report, foreign_ok=None):
    """hook-status's verdict as the suite expects it: (ok, note). Installed with no missing event,
    drift or foreign hook (but those `foreign_ok` accepts: the test's own); exit 0 -- except Codex: the suite runs Codex with
    --dangerously-bypass-hook-trust and records no trust, so hook-status must list every entry as
    not trusted (codexTrust.untrusted) and exit 1 (README "Installing the hooks")."""
    foreign = [f for f in report.get("foreignHooks") or [] if not (foreign_ok and foreign_ok(f))]
    base = (report.get("state") == "installed" and not report.get("missingEvents") and not report.get("drift")
            and not foreign)
    if provider != "codex":
        return base and rc == 0, f"rc={rc}"
    trust = report.get("codexTrust") or {}
    untrusted = trust.get("untrusted") or []
    events = [e.get("event") for e in report.get("evidence") or []]
    ok = (base and rc == 1 and sorted(untrusted) == sorted(events)
          and not any(trust.get(k) for k in ("trusted", "stale", "disabled")))
    return ok, f"rc={rc} (expected 1: not trusted), codexTrust.untrusted={len(untrusted)}/{len(events)} entries"


def install_label(provider):
    extra = "; every entry listed as not trusted: the suite bypasses Codex's trust" if provider == "codex" else ""
    return f"hook-install --provider {provider}: hook-status says installed (nothing observed yet{extra})"


def install_hooks(lidguard, env, provider, foreign_ok=None):
    """`hook-install --provider P` then `hook-status --provider P --json`.
    Returns (ok, detail, report). ok: exit 0, the file named in hook-status exists and runs this
    lidguard, state installed, no missing events, no drift, no foreign hooks, nothing observed."""
    inst = run_lidguard(lidguard, env, "hook-install", "--provider", provider)
    rc, report, raw = hook_status(lidguard, env, provider)
    if inst.returncode != 0 or report is None:
        return False, f"hook-install rc={inst.returncode} {inst.stdout.strip()!r} {inst.stderr.strip()!r}; " \
                      f"hook-status rc={rc} {raw[:400]!r}", report
    path = report.get("file") or ""
    try:
        if os.path.isdir(path):  # a directory of hook files (Cline): all of them
            text = "".join(open(os.path.join(path, n)).read() for n in sorted(os.listdir(path)))
        else:
            text = open(path).read()
    except OSError as e:
        text = f"<{e}>"
    exe = hook_executable(lidguard)
    observed = [e["event"] for e in report.get("evidence") or [] if e.get("observed")]
    healthy, note = health(provider, rc, report, foreign_ok)
    ok = healthy and exe in text and not observed and "installed lidguard's hooks in" in inst.stdout
    detail = (f"{path}: {note} state={report.get('state')} missing={report.get('missingEvents')} "
              f"drift={report.get('drift')} foreign={len(report.get('foreignHooks') or [])} "
              f"observed-before-run={observed} runs {exe if exe in text else '(not this lidguard!)'}")
    return ok, detail, report


def check_hook_status_after_run(lidguard, env, provider, events):
    """hook-status after a run: still installed, and every evidence event observed exactly when
    (and as often as) lidguard's hook log recorded it in this run. Returns (ok, detail)."""
    rc, report, raw = hook_status(lidguard, env, provider)
    if report is None:
        return False, f"hook-status rc={rc}: {raw[:400]!r}"
    counts = {}
    for e in events:
        if e.get("provider") == provider:
            counts[e.get("hookEvent")] = counts.get(e.get("hookEvent"), 0) + 1
    bad, seen = [], []
    for ev in report.get("evidence") or []:
        name, want = ev.get("event"), counts.get(ev.get("event"), 0)
        got = ev.get("count", 0) if ev.get("observed") else 0
        if got != want or bool(ev.get("observed")) != (want > 0):
            bad.append(f"{name}: observed={ev.get('observed')} count={got}, hook-events has {want}")
        elif want:
            seen.append(f"{name}x{want}")
    healthy, note = health(provider, rc, report)
    ok = healthy and not bad and bool(seen)
    return ok, (f"state={report.get('state')} {note}; observed: {' '.join(seen)}"
                + (f"; mismatches: {bad}" if bad else ""))


class StatusPoller:
    """`lidguard status --json` every `interval` s; snapshots are (t_sent, t_received, status)."""

    def __init__(self, lidguard, env, interval=0.1):
        self.lidguard, self.env, self.interval = lidguard, env, interval
        self.snaps = []
        self.pid_names = {}  # watchedPid -> the process's command line when first seen
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        while not self.stopping.is_set():
            t0 = time.time()
            try:
                p = run_lidguard(self.lidguard, self.env, "status", "--json", timeout=10)
                st = json.loads(p.stdout)
                st = {k: st.get(k) for k in ("running", "sessions", "daemonPid")}
            except (ValueError, subprocess.SubprocessError, OSError):
                st = None
            t1 = time.time()
            if st is not None:
                for s in st.get("sessions") or []:
                    pid = s.get("watchedPid")
                    if pid and pid not in self.pid_names:
                        try:
                            with open(f"/proc/{pid}/cmdline", "rb") as f:
                                self.pid_names[pid] = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
                        except OSError:
                            self.pid_names[pid] = "(gone)"
                with self.lock:
                    self.snaps.append((t0, t1, st))
            self.stopping.wait(self.interval)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.stopping.set()
        self.thread.join(timeout=15)

    def between(self, a, b=None):
        """Snapshots whose request was sent after a and answered before b."""
        with self.lock:
            return [s for s in self.snaps if s[0] >= a and (b is None or s[1] <= b)]

    def first_after(self, a, wait=3.0):
        """The first snapshot sent after a (waits up to `wait` s for one)."""
        end = time.time() + wait
        while True:
            got = self.between(a)
            if got or time.time() > end:
                return got[0] if got else None
            time.sleep(0.05)

    def dump(self, path, sid=None):
        with self.lock:
            rows = [{"t0": round(t0, 3), "t1": round(t1, 3), "running": st.get("running"),
                     "sessions": [s for s in st.get("sessions") or [] if sid is None or s.get("sessionId") == sid]}
                    for t0, t1, st in self.snaps]
        with open(path, "w") as f:
            json.dump(rows, f, indent=1)


def sessions_in(snap, sid=None, provider=None):
    if not snap:
        return []
    return [s for s in snap[2].get("sessions") or []
            if (sid is None or s.get("sessionId") == sid) and (provider is None or s.get("provider") == provider)]


def check_started_and_ended(poller, sid, provider, t_start, t_stop):
    """status --json showed the session (active, startedAt set) while the turn ran (between the
    event that started it and the one that stopped it) and no longer after the stop."""
    during = poller.between(t_start, t_stop)
    seen = [s for snap in during for s in sessions_in(snap, sid, provider)]
    active = [s for s in seen if s.get("state") == "active" and s.get("startedAt")]
    after = poller.first_after(t_stop)
    gone = after is not None and not sessions_in(after, sid, provider)
    ok = bool(active) and len(active) == len(during) and gone
    pids = sorted({s.get("watchedPid") for s in active if s.get("watchedPid")})
    print(f"INFO {provider}: watchedPid {pids}: " + "; ".join(f"{p} = {poller.pid_names.get(p, '?')[:120]}" for p in pids),
          flush=True)
    return ok, (f"{len(active)}/{len(during)} snapshots between start and stop show it active "
                f"(startedAt={active[0].get('startedAt') if active else None}); "
                f"first snapshot after the stop: {'no session' if gone else sessions_in(after, sid, provider)}")
