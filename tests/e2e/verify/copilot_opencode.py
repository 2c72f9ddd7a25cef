#!/usr/bin/env python3
"""Verify lidguard against the REAL GitHub Copilot CLI and OpenCode (offline, loopback only).

Usage (as root; `tests/e2e/verify/run.sh copilot|opencode` builds lidguard first, then runs this):
    copilot_opencode.py copilot|opencode|all [scenario ...] [--only NAME,...] [--out DIR]
    copilot_opencode.py --list
The output root defaults to $VERIFY_OUT, else /tmp/lidguard-verify-copilot-opencode.<ts>.

Every scenario gets its own run directory with its own HOME, XDG dirs, client config, `git init`
project, fake lid/display tree and LIDGUARD_HOME (so its own lidguard daemon, store and log). The
whole run happens inside a private network namespace (`unshare -n`, only `lo` up): the fake model
(tests/e2e/fakemodel_chat.py, 127.0.0.1 only), the clients, the lidguard hooks and the daemon the
first prompt hook starts, and tmux for the Copilot TUI scenario. Proxy variables point at the fake
as a second safety net. The script refuses to run if the namespace has any link besides `lo`.

Hooks are installed by the real `lidguard hook-install --provider copilot|opencode` (COPILOT_HOME,
XDG_CONFIG_HOME or OPENCODE_CONFIG_DIR pointing into the run) and `hook-status` must say
`installed` before the client starts; the clients then run exactly what hook-install wrote. What
lidguard received and decided comes from `lidguard hook-events --json`; what Copilot got back from
its own logs (`<run>/copilot/session-state/*/events.jsonl`: every hook run with its input and
success; `<run>/logs/*.log`: `[hook stdout]` lines at log level all); what OpenCode did with the
answer from its event stream and the model's requests; session states from a `status --json`
poller (lgverify.StatusPoller) in windows the fake model's `delay` guarantees.

Ask before sleep (opencode-serve-ask, opencode-run-ask): the test receiver
(`target/debug/lidguard-test-receiver` through receiver.py; run.sh builds it, a direct run of this
script builds it when missing; started inside the namespace) is
lidguard's `closedLidStopFollowUpWebhookUrl`; the driver answers its question like a phone would.
Continuation works under `opencode serve` (the reply comes back into the same session); `opencode
run` exits at the first session.idle, so a reply is never sent back there.

Prints `PASS <check>` / `FAIL <check>: <why>` per check and finally `N passed, M failed`; exits 1 on
any failure. Every process started is stopped by its pid (the lidguard daemon by the pid from
`lidguard status --json`, a tmux server by its own `-L` socket and pid).
"""
import argparse
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree
sys.path.insert(0, HERE)
import lgverify  # noqa: E402
import receiver  # noqa: E402

LIDGUARD = os.environ.get("LIDGUARD_BIN", os.path.join(REPO, "target", "debug", "lidguard"))
FAKE = os.path.join(REPO, "tests", "e2e", "fakemodel_chat.py")
RECEIVER_BIN = os.path.join(REPO, "target", "debug", "lidguard-test-receiver")
COPILOT_VERSION = os.environ.get("COPILOT_VERSION", "1.0.102")
OPENCODE_VERSION = os.environ.get("OPENCODE_VERSION", "1.18.33")
COPILOT = os.path.join(REPO, ".ci/cache/npm", f"@github+copilot@{COPILOT_VERSION}", "node_modules/.bin/copilot")
COPILOT_XDG_CACHE = os.path.join(REPO, ".ci/cache/copilot-xdg-cache")
OPENCODE = os.path.join(REPO, ".ci/cache/npm", f"opencode-ai@{OPENCODE_VERSION}",
                        "node_modules/opencode-ai/bin/opencode.exe")
LID_MSG = "lid is closed"
MODEL_DELAY = 1.5  # seconds the fake model waits before the scripted answers (status-poll windows)

NOPROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never use a proxy

RESULTS = []  # (ok, name, detail)
STARTED = []  # Popen objects started by this script (stopped by pid at the end)


def say(msg):
    print(msg, flush=True)


def check(name, ok, detail=""):
    RESULTS.append((bool(ok), name, detail))
    say(f"PASS {name}" if ok else f"FAIL {name}: {detail}")
    return bool(ok)


# --- processes -----------------------------------------------------------------------------------

def stop_pid(pid, group=False, wait=3.0):
    """SIGTERM then SIGKILL one pid (or the process group we created with it as leader)."""
    if not pid:
        return
    kill = os.killpg if group else os.kill
    try:
        kill(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    end = time.time() + wait
    while time.time() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        try:  # reap our own children
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        except ChildProcessError:
            pass
        time.sleep(0.1)
    try:
        kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def stop_popen(p):
    if p is None:
        return
    if p.poll() is None:
        stop_pid(p.pid, group=True)
    try:
        p.wait(timeout=3)
    except subprocess.TimeoutExpired:
        pass


def spawn(args, **kw):
    p = subprocess.Popen(args, start_new_session=True, **kw)
    STARTED.append(p)
    return p


# --- a run directory ---------------------------------------------------------------------------

# --- a run directory ---------------------------------------------------------------------------

class Run:
    def __init__(self, root, name, lid="closed", decision="deny"):
        self.name = name
        self.d = os.path.join(root, name)
        shutil.rmtree(self.d, ignore_errors=True)
        for sub in ("home", "xdg/config", "xdg/data", "xdg/state", "xdg/cache", "proj",
                    "logs", "proc/acpi/button/lid/LID0", "sys/class/drm/card0-eDP-1"):
            os.makedirs(os.path.join(self.d, sub), exist_ok=True)
        self.proj = os.path.join(self.d, "proj")
        subprocess.run(["git", "-C", self.proj, "init", "-q"], check=True)
        with open(os.path.join(self.proj, "README.md"), "w") as f:
            f.write("# scratch project\n")
        self.set_lid(lid)
        with open(os.path.join(self.d, "sys/class/drm/card0-eDP-1/status"), "w") as f:
            f.write("connected\n")  # the internal panel: not an external display
        self.lgenv = {
            "LIDGUARD_HOME": os.path.join(self.d, "lg"),
            "LIDGUARD_PROC_ROOT": os.path.join(self.d, "proc"),
            "LIDGUARD_SYS_ROOT": os.path.join(self.d, "sys"),
            "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent",
            "LIDGUARD_LOG": "debug",
        }
        self.fake = None
        self.port = None
        self.poller = None
        self.install_env = None
        self.extra_env = {}  # agent config variables (also given to the client)
        self.lg("settings", "--closed-lid-permission-request-decision", decision)

    def path(self, *p):
        return os.path.join(self.d, *p)

    def set_lid(self, state):
        with open(self.path("proc/acpi/button/lid/LID0/state"), "w") as f:
            f.write(f"state:      {state}\n")

    def cli_env(self, **extra):
        return dict(PATH=os.environ.get("PATH", "/usr/bin:/bin"), HOME=self.path("home"), **self.lgenv, **extra)

    # lidguard CLI with this run's isolated environment
    def lg(self, *args):
        r = subprocess.run([LIDGUARD, *args], env=self.cli_env(), capture_output=True, text=True, timeout=30)
        return r.stdout

    def status(self):
        try:
            return json.loads(self.lg("status", "--json"))
        except ValueError:
            return {}

    def sessions(self):
        return self.status().get("sessions") or []

    def events(self):
        """lidguard's hook log (`hook-events --json`), oldest first, `t` = epoch seconds."""
        evs = lgverify.hook_events(LIDGUARD, self.cli_env())
        with open(self.path("hook-events.json"), "w") as f:
            json.dump(evs, f, indent=1)
        return evs

    def wait_event(self, hook_event, count=1, timeout=60, pred=None):
        """Bounded wait on lidguard's hook log for `count` events named hook_event."""
        end = time.time() + timeout
        while True:
            got = [e for e in self.events() if e.get("hookEvent") == hook_event and (pred is None or pred(e))]
            if len(got) >= count:
                return got
            if time.time() > end:
                return None
            time.sleep(0.25)

    def install(self, provider, foreign_ok=None, **config_env):
        """The real `hook-install --provider P` with the agent's config-dir variable(s), then
        `hook-status` must say installed (foreign hooks only those `foreign_ok` accepts); the
        client gets the same variables."""
        self.extra_env = dict(config_env)
        self.install_env = self.cli_env(**config_env)
        ok, detail, _ = lgverify.install_hooks(LIDGUARD, self.install_env, provider, foreign_ok)
        check(f"{self.name}: {lgverify.install_label(provider)}", ok, detail)
        self.poller = lgverify.StatusPoller(LIDGUARD, self.cli_env()).start()
        return ok

    def stop_daemon(self):
        pid = self.status().get("daemonPid")
        if pid:
            stop_pid(int(pid))

    # the fake model
    def start_fake(self, script):
        with open(self.path("script.json"), "w") as f:
            json.dump(script, f)
        portfile = self.path("port")
        self.fake = spawn([sys.executable, FAKE, "--port", "0", "--port-file", portfile,
                           "--script", self.path("script.json"), "--log", self.path("model.jsonl")],
                          stdout=subprocess.DEVNULL, stderr=open(self.path("fake.stderr"), "w"))
        for _ in range(100):
            if os.path.exists(portfile) and open(portfile).read().strip():
                break
            time.sleep(0.1)
        self.port = int(open(portfile).read().strip())
        return self.port

    def model_requests(self):
        try:
            with open(self.path("model.jsonl")) as f:
                return [json.loads(l) for l in f]
        except OSError:
            return []

    def base_env(self):
        proxy = f"http://127.0.0.1:{self.port}"
        env = dict(PATH=os.environ.get("PATH", "/usr/bin:/bin"), LANG="C.UTF-8", HOME=self.path("home"),
                   XDG_CONFIG_HOME=self.path("xdg/config"), XDG_DATA_HOME=self.path("xdg/data"),
                   XDG_STATE_HOME=self.path("xdg/state"), XDG_CACHE_HOME=self.path("xdg/cache"),
                   HTTPS_PROXY=proxy, HTTP_PROXY=proxy, https_proxy=proxy, http_proxy=proxy,
                   NO_PROXY="127.0.0.1,localhost,::1", no_proxy="127.0.0.1,localhost,::1")
        env.update(self.lgenv)
        env.update(self.extra_env)
        return env

    def finish(self):
        if self.poller:
            self.poller.stop()
            self.poller.dump(self.path("status-polls.json"))
        self.stop_daemon()
        stop_popen(self.fake)


def ev_summary(events):
    return [f"{e.get('hookEvent')}:{e.get('kind')}:{e.get('outcome')}" for e in events]


def session_of(sessions, provider):
    return [s for s in sessions if s.get("provider") == provider]


def active_during(run, provider, hook_event, name, timeout=60):
    """Waits for `hook_event` (the work began), then, a moment later, checks that status shows
    the provider's session active."""
    started = run.wait_event(hook_event, timeout=timeout)
    time.sleep(1)
    working = session_of(run.sessions(), provider)
    check(name, started and working and working[0].get("state") == "active", working)


def no_session_left(run, provider, name):
    left = session_of(run.sessions(), provider)
    return check(name, not left, f"sessions left: {json.dumps(left)[:400]}")


def check_run_evidence(run, provider, start_event, stop_pred):
    """One prompt, one tool call: hook-status shows the hooks installed and this run's events
    observed; status --json showed the session started (active) and ended."""
    evs = [e for e in run.events() if e.get("provider") == provider]
    ok, detail = lgverify.check_hook_status_after_run(LIDGUARD, run.install_env, provider, evs)
    check(f"{run.name}: hook-status --provider {provider} --json after the run: installed, this run's events observed",
          ok, detail)
    start = next((e for e in evs if e.get("hookEvent") == start_event and e.get("outcome") == "started"), None)
    stop = next((e for e in evs if stop_pred(e)), None)
    if start and stop:
        ok, detail = lgverify.check_started_and_ended(run.poller, start.get("sessionId"), provider,
                                                      start["t"], stop["t"])
    else:
        ok, detail = False, f"no start/stop in hook-events: {ev_summary(evs)}"
    check(f"{run.name}: status --json: the session started (active) during the turn and ended "
          f"({stop.get('hookEvent') if stop else '?'})", ok, detail)


# --- Copilot's own record of the hooks it ran ----------------------------------------------------

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


# --- Copilot -------------------------------------------------------------------------------------

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


TOUCH = [{"tool": "bash", "args": {"command": "touch newfile.txt", "description": "Create a file"}},
         {"text": "Finished the file step.", "delay": 4}]


def tool_result_texts(run):
    """The tool-result messages the model received."""
    out = []
    for r in run.model_requests():
        for m in (r.get("body") or {}).get("messages") or []:
            if m.get("role") == "tool":
                c = m.get("content")
                out.append(c if isinstance(c, str) else json.dumps(c))
    return out


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


class Tmux:
    def __init__(self, run):
        self.sock = f"lgv-{os.getpid()}-{run.name}"
        self.run = run
        self.pid = None

    def t(self, *args, **kw):
        return subprocess.run(["tmux", "-L", self.sock, *args], capture_output=True, text=True, **kw)

    def start(self, cmdfile):
        self.t("new-session", "-d", "-s", "v", "-x", "160", "-y", "45",
               f"bash {cmdfile}; echo EXITED $? > {self.run.path('tui.exit')}; sleep 1")
        r = self.t("display-message", "-p", "-t", "v", "#{pid}")
        try:
            self.pid = int(r.stdout.strip())
        except ValueError:
            self.pid = None

    def start_client(self, env, argv):
        """Starts `argv` in the run's project with exactly `env` (written to tui.cmd, each word
        JSON-quoted)."""
        words = ["env", "-i"] + [f"{k}={v}" for k, v in env.items()] + list(argv)
        with open(self.run.path("tui.cmd"), "w") as f:
            f.write("cd " + json.dumps(self.run.proj) + " && exec " + " ".join(json.dumps(w) for w in words) + "\n")
        self.start(self.run.path("tui.cmd"))

    def screen(self):
        return self.t("capture-pane", "-p", "-t", "v").stdout

    def snap(self, name):
        with open(self.run.path(f"screen-{name}.txt"), "w") as f:
            f.write(self.screen())

    def wait_screen(self, text, timeout=60):
        end = time.time() + timeout
        while time.time() < end:
            if text in self.screen():
                return True
            time.sleep(0.3)
        return False

    def send(self, text):
        self.t("send-keys", "-t", "v", "-l", text)

    def key(self, k):
        self.t("send-keys", "-t", "v", k)

    def stop(self):
        self.t("kill-server")
        if self.pid:
            stop_pid(self.pid)




def tui_submit(run, tm, text, event):
    """Send the prompt and Enter; bounded retries until lidguard's hook log has `event` (keys sent
    before the TUI listens are lost): Enter again, then retype."""
    for attempt, action in enumerate(("type", "enter", "type", "enter")):
        if action == "type":
            tm.send(text)
            time.sleep(0.3)
        tm.key("Enter")
        if run.wait_event(event, timeout=10 if attempt < 3 else 20):
            if attempt:
                say(f"   (prompt submitted on attempt {attempt + 1})")
            return True
    return False


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


# --- OpenCode ------------------------------------------------------------------------------------

class Flavor:
    """OpenCode, or Kilo CLI (its fork with the same plugin API, server and run mode)."""

    def __init__(self, name, binary, version, plugin_package, env_prefix, schema):
        self.name, self.binary, self.version = name, binary, version
        self.plugin_package, self.env_prefix, self.schema = plugin_package, env_prefix, schema


OPENCODE_FLAVOR = Flavor("opencode", OPENCODE, OPENCODE_VERSION, "@opencode-ai/plugin", "OPENCODE",
                         "https://opencode.ai/config.json")
FLAVOR = OPENCODE_FLAVOR  # kilo.py sets its own before running the shared scenarios


def opencode_prepare(run, permission, config_dir_var=False):
    """Startup-stall workaround and project config, then the real hook-install: the plugin goes to
    $XDG_CONFIG_HOME/<flavor>/plugins/ or, with config_dir_var, $<FLAVOR>_CONFIG_DIR/plugins/."""
    dirs = [run.path("xdg", "config", FLAVOR.name)]
    if config_dir_var:
        dirs.append(run.path(f"{FLAVOR.name}-config"))
    for cfg in dirs:
        os.makedirs(os.path.join(cfg, "node_modules"), exist_ok=True)
        # startup-stall workaround: the agent believes its plugin package is installed already
        deps = {FLAVOR.plugin_package: FLAVOR.version}
        with open(os.path.join(cfg, "package.json"), "w") as f:
            json.dump({"dependencies": deps}, f)
        with open(os.path.join(cfg, "package-lock.json"), "w") as f:
            json.dump({"lockfileVersion": 3, "packages": {"": {"dependencies": deps}}}, f)
    conf = {"$schema": FLAVOR.schema, "model": "fake/fake-model", "small_model": "fake/fake-model",
            "autoupdate": False, "share": "disabled", "permission": permission,
            "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake",
                                  "options": {"baseURL": f"http://127.0.0.1:{run.port}/v1", "apiKey": "fake-key"},
                                  "models": {"fake-model": {"name": "Fake model", "tool_call": True,
                                                            "limit": {"context": 128000, "output": 4096}}}}}}
    with open(os.path.join(run.proj, f"{FLAVOR.name}.json"), "w") as f:
        json.dump(conf, f, indent=1)
    if config_dir_var:
        run.install(FLAVOR.name, **{f"{FLAVOR.env_prefix}_CONFIG_DIR": dirs[-1]},
                    XDG_CONFIG_HOME=run.path("xdg", "config"))
    else:
        run.install(FLAVOR.name, XDG_CONFIG_HOME=run.path("xdg", "config"))


def opencode_env(run):
    env = run.base_env()
    env["TERM"] = "dumb"
    for what in ("MODELS_FETCH", "AUTOUPDATE", "LSP_DOWNLOAD", "SHARE", "DEFAULT_PLUGINS"):
        env[f"{FLAVOR.env_prefix}_DISABLE_{what}"] = "1"
    return env


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Serve:
    """`opencode serve` plus a reader of its /event SSE stream."""

    def __init__(self, run):
        self.run = run
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc = spawn([FLAVOR.binary, "serve", "--hostname", "127.0.0.1", "--port", str(self.port),
                           "--print-logs", "--log-level", "INFO"], cwd=run.proj, env=opencode_env(run),
                          stdin=subprocess.DEVNULL, stdout=open(run.path("serve.stdout"), "w"),
                          stderr=open(run.path("serve.stderr"), "w"))
        self.events = []
        self.lock = threading.Lock()
        self.stream = None

    def call(self, method, path, body=None, timeout=60):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with NOPROXY.open(req, timeout=timeout) as r:
                status, text = r.status, r.read().decode(errors="replace")
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read().decode(errors="replace")
        except Exception as e:  # noqa: BLE001
            status, text = None, repr(e)
        with open(self.run.path("api.jsonl"), "a") as f:
            f.write(json.dumps({"t": time.time(), "method": method, "path": path, "body": body,
                                "status": status, "response": text[:5000]}) + "\n")
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text

    def wait_up(self, timeout=60):
        end = time.time() + timeout
        while time.time() < end:
            if self.proc.poll() is not None:
                return False
            st, _ = self.call("GET", "/session", timeout=2)
            if st == 200:
                return True
            time.sleep(0.3)
        return False

    def _read_events(self):
        try:
            self.stream = NOPROXY.open(urllib.request.Request(self.base + "/event"), timeout=300)
            with open(self.run.path("sse.jsonl"), "a") as log:
                for raw in self.stream:
                    line = raw.decode(errors="replace").strip()
                    if not line.startswith("data:"):
                        continue
                    try:
                        ev = json.loads(line[5:])
                    except ValueError:
                        continue
                    ev["_t"] = time.time()
                    log.write(json.dumps(ev) + "\n")
                    log.flush()
                    with self.lock:
                        self.events.append(ev)
        except Exception:  # noqa: BLE001 - the stream ends when the server stops
            pass

    def listen(self):
        threading.Thread(target=self._read_events, daemon=True).start()
        time.sleep(0.5)

    def of(self, typ, sid=None):
        with self.lock:
            return [e for e in self.events if e.get("type") == typ
                    and (sid is None or (e.get("properties") or {}).get("sessionID") == sid)]

    def wait(self, typ, sid=None, timeout=30, count=1):
        end = time.time() + timeout
        while time.time() < end:
            evs = self.of(typ, sid)
            if len(evs) >= count:
                return evs
            time.sleep(0.2)
        return None

    def stop(self):
        stop_popen(self.proc)




def opencode_serve_permission(root, case):
    """case: deny | allow | open."""
    lid = "open" if case == "open" else "closed"
    decision = "deny" if case == "open" else case
    tag = f"{FLAVOR.name}-serve-{case if case != 'open' else 'lid-open'}"
    run = Run(root, tag, lid=lid, decision=decision)
    srv = None
    try:
        run.start_fake(TOUCH)
        opencode_prepare(run, {"bash": "ask"})
        srv = Serve(run)
        if not check(f"{tag}: {FLAVOR.name} serve is up", srv.wait_up(), open(run.path("serve.stderr")).read()[-800:]):
            return
        srv.listen()
        st, sess = srv.call("POST", "/session", {})
        sid = sess["id"]
        threading.Thread(target=srv.call, args=("POST", f"/session/{sid}/message",
                                                {"parts": [{"type": "text", "text": "go"}]}, 120), daemon=True).start()
        asked = srv.wait("permission.asked", sid, timeout=60)
        if not check(f"{tag}: {FLAVOR.name} asked permission.asked for bash", asked, [e.get("type") for e in srv.events][-20:]):
            return
        perm_id = asked[0]["properties"]["id"]
        newfile = os.path.join(run.proj, "newfile.txt")
        if case in ("deny", "allow"):
            want = "reject" if case == "deny" else "once"
            replied = srv.wait("permission.replied", sid, timeout=20)
            reply = replied[0]["properties"].get("reply") if replied else None
            check(f"{tag}: permission.replied with {want!r} arrived on the event stream (the plugin answered)",
                  reply == want, f"reply={reply}")
            srv.wait("session.idle", sid, timeout=30)
            run.wait_event("session.idle", timeout=10)
            created = os.path.exists(newfile)
            check(f"{tag}: newfile.txt {'not ' if case == 'deny' else ''}created",
                  created == (case == "allow"), f"created={created}")
            st, msgs = srv.call("GET", f"/session/{sid}/message")
            tool_parts = [p for m in (msgs if isinstance(msgs, list) else []) for p in m.get("parts", [])
                          if p.get("type") == "tool"]
            states = [(p.get("tool"), (p.get("state") or {}).get("status"), (p.get("state") or {}).get("error"))
                      for p in tool_parts]
            want_state = "error" if case == "deny" else "completed"
            check(f"{tag}: the session's bash tool part is {want_state}",
                  states and states[0][1] == want_state, states)
            evs = run.events()
            dec = [e.get("decision") for e in evs if e.get("hookEvent") == "permission.asked" and e.get("decision")]
            action = "denyPermission" if case == "deny" else "allowPermission"
            if case == "deny":
                # what lidguard printed ({"status":"deny","message":…}) as OpenCode used it: the plugin
                # replied reject with lidguard's message, which the model gets as the rejection feedback
                msg = (dec[0] or {}).get("message", "") if dec else ""
                fed = [t for t in tool_result_texts(run) if msg and msg in t]
                calls = [r for r in run.model_requests() if r.get("served") != "fixed"]
                check(f"{tag}: lidguard's deny message (hook-events) reached the model as the rejection feedback; "
                      "the turn continued", LID_MSG in msg and fed and len(calls) > 1,
                      f"message={msg!r} model calls={len(calls)} tool results={tool_result_texts(run)}")
            else:
                check(f"{tag}: lidguard's allow carries no message (hook-events decision)",
                      dec and "message" not in dec[0], dec)
            check(f"{tag}: hook-events shows the decision {action}", dec and dec[0].get("action") == action,
                  f"{dec} / {ev_summary(evs)}")
            stopped = [e for e in evs if e.get("hookEvent") == "session.idle" and e.get("outcome") == "stopped"]
            check(f"{tag}: session.idle stopped the session", stopped, ev_summary(evs))
        else:
            time.sleep(5)  # nobody answers: no automatic reply may arrive
            replied = srv.of("permission.replied", sid)
            st, pending = srv.call("GET", "/permission")
            still = [p for p in (pending if isinstance(pending, list) else []) if p.get("id") == perm_id]
            check(f"{tag}: no automatic reply: no permission.replied after 5 s and GET /permission still lists it",
                  not replied and still, f"replied={replied} pending={pending}")
            asked_evs = [e for e in run.events() if e.get("hookEvent") == "permission.asked"]
            check(f"{tag}: lidguard printed nothing on permission.asked (hook-events: recorded without a decision)",
                  asked_evs and not any(e.get("decision") for e in asked_evs), ev_summary(asked_evs))
            ses = session_of(run.sessions(), FLAVOR.name)
            check(f"{tag}: status --json shows the session soft-locked with reason permission.asked",
                  ses and ses[0].get("softLockReason") == "permission.asked", ses)
            # the driver answers it now (reject), as the user would
            srv.call("POST", f"/permission/{perm_id}/reply", {"reply": "reject"})
            replied = srv.wait("permission.replied", sid, timeout=20)
            srv.wait("session.idle", sid, timeout=30)
            run.wait_event("session.idle", timeout=10)
            check(f"{tag}: after the driver's reply the soft-lock clears and session.idle stops the session",
                  replied and not session_of(run.sessions(), FLAVOR.name),
                  f"replied={bool(replied)} sessions={run.sessions()} events={ev_summary(run.events())}")
            check(f"{tag}: newfile.txt not created (driver rejected)", not os.path.exists(newfile))
        srv.call("DELETE", f"/session/{sid}")
        srv.wait("session.deleted", sid, timeout=10)
        run.wait_event("session.deleted", timeout=5)
        no_session_left(run, FLAVOR.name, f"{tag}: no session at the end")
    finally:
        if srv:
            srv.stop()
        run.finish()


def opencode_serve_interrupt(root):
    """The user stops a turn while a long bash call runs (POST /session/{id}/abort, what Escape
    does in the TUI): the session must end at once, not wait for an idle that means nothing."""
    tag = f"{FLAVOR.name}-serve-interrupt"
    run = Run(root, tag, lid="open", decision="deny")
    srv = None
    try:
        run.start_fake([{"tool": "bash", "args": {"command": "sleep 30", "description": "Wait"}},
                        {"text": "Waited."}])
        opencode_prepare(run, {"bash": "allow"})
        srv = Serve(run)
        if not check(f"{tag}: {FLAVOR.name} serve is up", srv.wait_up(),
                     open(run.path("serve.stderr")).read()[-800:]):
            return
        srv.listen()
        st, sess = srv.call("POST", "/session", {})
        sid = sess["id"]
        threading.Thread(target=srv.call, args=("POST", f"/session/{sid}/message",
                                                {"parts": [{"type": "text", "text": "go"}]}, 120), daemon=True).start()
        active_during(run, FLAVOR.name, "tool.execute.before", f"{tag}: while bash runs the session is active")
        t_abort = time.time()
        srv.call("POST", f"/session/{sid}/abort", {})
        end = time.time() + 10
        while session_of(run.sessions(), FLAVOR.name) and time.time() < end:
            time.sleep(0.2)
        gone = not session_of(run.sessions(), FLAVOR.name)
        check(f"{tag}: the abort ended the session within 10 s ({time.time() - t_abort:.1f} s)", gone,
              ev_summary(run.events()))
        srv.call("DELETE", f"/session/{sid}")
    finally:
        if srv:
            srv.stop()
        run.finish()


def opencode_run(root):
    tag = f"{FLAVOR.name}-run"
    run = Run(root, tag, lid="open", decision="deny")
    try:
        run.start_fake([{"tool": "bash", "args": {"command": "echo hello", "description": "Say hello"},
                         "delay": MODEL_DELAY}, {"text": "Done: hello.", "delay": MODEL_DELAY}])
        opencode_prepare(run, {}, config_dir_var=True)
        p = spawn([FLAVOR.binary, "run", "--print-logs", "--log-level", "INFO", "go"], cwd=run.proj,
                  env=opencode_env(run), stdin=subprocess.DEVNULL,
                  stdout=open(run.path("stdout"), "w"), stderr=open(run.path("stderr"), "w"))
        try:
            rc = p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            stop_popen(p)
            rc = None
        run.wait_event("session.idle", timeout=5)
        check(f"{tag}: {FLAVOR.name} run exit 0", rc == 0, f"exit {rc}")
        evs = [e for e in run.events() if e.get("provider") == FLAVOR.name]
        summ = ev_summary(evs)
        started = [e for e in evs if e.get("hookEvent") == "chat.message" and e.get("outcome") == "started"]
        check(f"{tag}: chat.message started the session", started, summ)
        kinds = [e.get("kind") for e in evs]
        check(f"{tag}: tool.execute.before/after recorded as tool-starting/tool-finished",
              "tool-starting" in kinds and "tool-finished" in kinds, summ)
        idle = [e for e in evs if e.get("hookEvent") == "session.idle" and e.get("outcome") == "stopped"]
        check(f"{tag}: session.idle ended the session (turn-stopped, outcome stopped)", idle, summ)
        check_run_evidence(run, FLAVOR.name, "chat.message",
                           lambda e: e.get("hookEvent") == "session.idle" and e.get("outcome") == "stopped")
        no_session_left(run, FLAVOR.name, f"{tag}: status --json has no session at the end")
    finally:
        run.finish()


# --- OpenCode: ask before sleep ------------------------------------------------------------------

ASK_REPLY = "also update the README"
ASK_DELAY = 10   # postStopSuspendDelaySeconds: the least that lets lidguard ask
ASK_WAIT = 20    # closedLidStopFollowUpDelaySeconds: the least reply wait


def ask_setup(run):
    """The receiver (tests/e2e/verify/receiver.py; started here, inside the namespace, like the
    agent) and the settings that make lidguard ask before sleep. Returns the receiver or None."""
    if not os.path.exists(RECEIVER_BIN):
        check(f"{run.name}: the test receiver is built", False,
              f"missing {RECEIVER_BIN} (cargo build -p lidguard-testreceiver)")
        return None
    rcv = receiver.Receiver(REPO)
    try:
        r = subprocess.run([LIDGUARD, "settings", "--closed-lid-stop-follow-up-webhook-url", rcv.webhook_url,
                            "--closed-lid-stop-follow-up-delay-seconds", str(ASK_WAIT),
                            "--post-stop-suspend-delay-seconds", str(ASK_DELAY),
                            "--repeat-closed-lid-stop-follow-up", "false"],
                           env=run.cli_env(), capture_output=True, text=True, timeout=30)
    except BaseException:
        rcv.close()
        raise
    if r.returncode != 0:
        check(f"{run.name}: lidguard settings for ask before sleep", False, r.stdout + r.stderr)
        rcv.close()
        return None
    return rcv


def lidguard_log(run):
    try:
        with open(run.path("lg", "state", "lidguard.log"), errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return []


def log_has(lines, *words):
    return [l for l in lines if all(w in l for w in words)]


def wait_log(run, *words, timeout=30):
    end = time.time() + timeout
    while True:
        got = log_has(lidguard_log(run), *words)
        if got or time.time() > end:
            return got
        time.sleep(0.25)


def hook_processes(run, subcommand=b"opencode-hook"):
    """Live `lidguard <subcommand>` processes of this run (by their LIDGUARD_HOME)."""
    home = ("LIDGUARD_HOME=" + run.lgenv["LIDGUARD_HOME"]).encode()
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
            if subcommand not in cmd:
                continue
            with open(f"/proc/{pid}/environ", "rb") as f:
                if home not in f.read().split(b"\0"):
                    continue
            out.append((int(pid), b" ".join(cmd).decode(errors="replace")))
        except OSError:
            pass
    return out


def user_texts(req):
    """The user messages' text in one model request."""
    out = []
    for m in (req.get("body") or {}).get("messages") or []:
        if m.get("role") != "user":
            continue
        c = m.get("content")
        out.append(c if isinstance(c, str) else " ".join(p.get("text", "") for p in c or [] if isinstance(p, dict)))
    return out


def check_ask_log(run, tag, allowed=()):
    """lidguard's log: no WARN/ERROR but the expected ones (no system bus here: no protection, the
    suspend request fails), one daemon."""
    lines = lidguard_log(run)
    ok_words = ["protection unavailable", "suspend failed", *allowed]
    odd = [l[:200] for l in lines if (" WARN " in l or " ERROR " in l) and not any(w in l for w in ok_words)]
    starts = len(log_has(lines, "daemon started"))
    check(f"{tag}: lidguard's log: no unexpected WARN/ERROR, one daemon", not odd and starts == 1,
          f"{starts} daemon start(s); {odd[:3]}")


def opencode_serve_ask(root):
    """`opencode serve`, lid closed, ask before sleep on: the turn ends (session.idle), lidguard's
    hook holds the stop while OpenCode goes on delivering events, the receiver gets the question,
    the driver replies, and the plugin sends the reply back into the same session: the model gets
    it as the next user message of that session. The continued turn's stop says stopHookActive
    (repeat off: lidguard then sleeps at once)."""
    tag = "opencode-serve-ask"
    run = Run(root, tag, lid="closed", decision="deny")
    srv = rcv = None
    try:
        rcv = ask_setup(run)
        if not rcv:
            return
        run.start_fake([{"text": "First answer."}, {"text": "README updated."}])
        opencode_prepare(run, {})
        srv = Serve(run)
        if not check(f"{tag}: opencode serve is up", srv.wait_up(), open(run.path("serve.stderr")).read()[-800:]):
            return
        srv.listen()
        st, sess = srv.call("POST", "/session", {})
        sid = sess["id"]
        srv.call("POST", f"/session/{sid}/message", {"parts": [{"type": "text", "text": "go"}]}, 120)
        idle = run.wait_event("session.idle", timeout=30)
        first = (idle or [{}])[0]
        ev1 = first.get("event") or {}
        check(f"{tag}: the first session.idle is a continuable stop (canContinue, stopHookActive false)",
              first.get("outcome") == "stopped" and ev1.get("canContinue") is True and ev1.get("stopHookActive") is False,
              json.dumps(first)[:600])
        if not idle:
            return
        # While lidguard holds that stop: OpenCode goes on delivering events to the plugin (a scratch
        # session's deletion reaches lidguard) and the hook is still waiting.
        st, scratch = srv.call("POST", "/session", {})
        srv.call("DELETE", f"/session/{scratch.get('id')}")
        deleted = run.wait_event("session.deleted", timeout=8,
                                 pred=lambda e: e.get("sessionId") == scratch.get("id"))
        held = hook_processes(run)
        check(f"{tag}: while lidguard holds the stop, other plugin events still reach it (a scratch session's "
              "session.deleted) and the session.idle hook is still waiting",
              deleted and any("session.idle" in c for _, c in held) and not rcv.questions(),
              f"deleted={bool(deleted)} hooks={held} questions={len(rcv.questions())}")
        q = rcv.wait_for_question(timeout=ASK_DELAY + 20)
        t_q = time.time()
        body = next((r.get("json") for r in rcv.requests()
                     if (r.get("json") or {}).get("eventType") == "StopFollowUp"), None) or {}
        check(f"{tag}: {ASK_DELAY} s after session.idle the receiver got the StopFollowUp question for this session "
              "(with the last answer)",
              q and body.get("sessionIdentifier") == sid and body.get("provider", "").lower() == "opencode"
              and body.get("lastAssistantMessage") == "First answer." and t_q - first["t"] >= ASK_DELAY - 1,
              f"after {t_q - first['t']:.1f} s: {json.dumps(body)[:600]}")
        if not q:
            return
        res = rcv.reply(q["id"], ASK_REPLY)
        got = None
        end = time.time() + 30
        while time.time() < end and not got:
            got = [r for r in run.model_requests() if r.get("served") != "fixed"
                   and any(ASK_REPLY in t for t in user_texts(r))]
            time.sleep(0.25)
        reqs = [r for r in run.model_requests() if r.get("served") != "fixed"]
        texts = user_texts(got[0]) if got else []
        check(f"{tag}: the driver's reply ({ASK_REPLY!r}) reached the model as the next user message of the same "
              "session (after the first turn's 'go')",
              res.get("replyConsumed") and texts and texts[-1].strip() == ASK_REPLY and "go" in texts[0],
              f"reply={res} user texts per request={[user_texts(r) for r in reqs]}")
        second = srv.wait("session.idle", sid, timeout=30, count=2)
        idles = run.wait_event("session.idle", count=2, timeout=10) or []
        ev2 = (idles[1].get("event") or {}) if len(idles) > 1 else {}
        check(f"{tag}: the continued turn ended with a second session.idle carrying stopHookActive true",
              second and ev2.get("stopHookActive") is True and ev2.get("lastAssistantMessage") == "README updated.",
              json.dumps(idles)[:800])
        st, msgs = srv.call("GET", f"/session/{sid}/message")
        conv = [((m.get("info") or {}).get("role"),
                 " ".join(p.get("text", "") for p in m.get("parts", []) if p.get("type") == "text").strip())
                for m in (msgs if isinstance(msgs, list) else [])]
        check(f"{tag}: the OpenCode session holds go / First answer. / the reply / README updated.",
              conv == [("user", "go"), ("assistant", "First answer."), ("user", ASK_REPLY), ("assistant", "README updated.")],
              conv)
        log = lidguard_log(run)
        order = ["stop-follow-up-awaiting-reply", "stop-follow-up-reply-received", "session-continued",
                 "stop-follow-up-skipped", "suspend-requested"]
        wait_log(run, "suspend-requested", timeout=5)
        log = lidguard_log(run)
        idx = [next((i for i, l in enumerate(log) if f"event={w} " in l), None) for w in order]
        check(f"{tag}: lidguard's log: asked, reply received, session continued; the second stop skipped the "
              "question (repeat off) and the suspend went on", None not in idx and idx == sorted(idx),
              dict(zip(order, idx)))
        check(f"{tag}: one question only", len(rcv.questions()) == 1, rcv.questions())
        srv.call("DELETE", f"/session/{sid}")
        run.wait_event("session.deleted", timeout=5, pred=lambda e: e.get("sessionId") == sid)
        check(f"{tag}: no lidguard hook process left", not hook_processes(run), hook_processes(run))
        check_ask_log(run, tag)
        no_session_left(run, "opencode", f"{tag}: no session at the end")
    finally:
        if srv:
            srv.stop()
        if rcv:
            rcv.close()
        run.finish()


def opencode_run_ask(root):
    """`opencode run`, lid closed, ask before sleep on. `run` exits right after the first
    session.idle, so a reply could never be sent back: lidguard's hook for that idle outlives the
    process (it waits in the daemon, stdout to a dead pipe). Nothing may hang: run exits at once;
    after the post-stop delay lidguard sees the process is gone, asks nothing, lets the hook go
    and the suspend goes on."""
    tag = "opencode-run-ask"
    run = Run(root, tag, lid="closed", decision="deny")
    rcv = None
    try:
        rcv = ask_setup(run)
        if not rcv:
            return
        run.start_fake([{"text": "First answer."}, {"text": "README updated."}])
        opencode_prepare(run, {}, config_dir_var=True)
        p = spawn([OPENCODE, "run", "--print-logs", "--log-level", "INFO", "go"], cwd=run.proj,
                  env=opencode_env(run), stdin=subprocess.DEVNULL,
                  stdout=open(run.path("stdout"), "w"), stderr=open(run.path("stderr"), "w"))
        try:
            rc = p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            stop_popen(p)
            rc = None
        t_exit = time.time()
        held = hook_processes(run)
        idle = run.wait_event("session.idle", timeout=5)
        t_idle = idle[0]["t"] if idle else None
        check(f"{tag}: opencode run exits 0 right after session.idle, while lidguard's hook for it still waits",
              rc == 0 and t_idle and t_exit - t_idle < 5 and any("session.idle" in c for _, c in held),
              f"exit {rc}, {t_exit - t_idle if t_idle else None} s after session.idle; hooks {held}")
        # The post-stop delay passes; then lidguard sees the agent's process is gone and does not
        # ask (a reply could not be delivered): the hook is let go and the suspend goes on.
        end = time.time() + ASK_DELAY + 15
        while time.time() < end and (hook_processes(run) or session_of(run.sessions(), "opencode")):
            time.sleep(0.25)
        say(f"INFO {tag}: hook gone and no session {time.time() - t_exit:.1f} s after the exit")
        left = hook_processes(run)
        check(f"{tag}: lidguard's hook exits and no session is left", not left and not session_of(run.sessions(), "opencode"),
              f"hooks {left} sessions {run.sessions()}")
        check(f"{tag}: no question went out (the agent's process was gone)", rcv.questions() == [],
              rcv.questions())
        time.sleep(0.5)
        log = lidguard_log(run)
        names = [l.split("event=")[1].split(" ")[0] for l in log if "event=" in l]
        say("INFO " + tag + ": " + "; ".join(l.split("event=")[1][:90] for l in log
                                             if "event=" in l and ("stop-follow-up" in l or "session-" in l
                                                                   or "watched" in l or "suspend" in l)))
        ok = ("stop-follow-up-canceled" in names and "suspend-requested" in names
              and names.index("stop-follow-up-canceled") < names.index("suspend-requested")
              and "session-continued" not in names)
        check(f"{tag}: the wait ends as canceled (agent exited) and the suspend goes on", ok,
              [l.split("event=")[1][:120] for l in log if "event=" in l and ("suspend" in l or "stop-follow" in l)])
        calls = [r for r in run.model_requests() if r.get("served") != "fixed"]
        check(f"{tag}: the reply never reached the model (run mode cannot continue a session)",
              not any(ASK_REPLY in t for r in calls for t in user_texts(r)), [user_texts(r) for r in calls])
        check_ask_log(run, tag, allowed=("cannot write the hook output",))
    finally:
        if rcv:
            rcv.close()
        run.finish()


# --- main ----------------------------------------------------------------------------------------

COPILOT_SCENARIOS = [("copilot-bash-tool", copilot_bash_tool),
                     ("copilot-permission-allow", copilot_permission_allow),
                     ("copilot-permission-deny", copilot_permission_deny),
                     ("copilot-async-shell", copilot_async_shell),
                     ("copilot-tui-ask-user", copilot_tui_ask_user)]
OPENCODE_SCENARIOS = [("opencode-serve-deny", lambda r: opencode_serve_permission(r, "deny")),
                      ("opencode-serve-allow", lambda r: opencode_serve_permission(r, "allow")),
                      ("opencode-serve-lid-open", lambda r: opencode_serve_permission(r, "open")),
                      ("opencode-serve-interrupt", opencode_serve_interrupt),
                      ("opencode-run", opencode_run),
                      ("opencode-serve-ask", opencode_serve_ask),
                      ("opencode-run-ask", opencode_run_ask)]


def inside(args):
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout.splitlines()
    if not links or any(": lo:" not in l for l in links):
        say("refusing: the network namespace has links besides lo:\n" + "\n".join(links))
        sys.exit(2)
    for path, what in ((LIDGUARD, "lidguard (cargo build -p lidguard)"), (FAKE, "fake model")):
        if not os.path.exists(path):
            say(f"missing {what}: {path}")
            sys.exit(2)
    scen = []
    if args.which in ("copilot", "all"):
        if not os.path.exists(COPILOT):
            say(f"missing Copilot CLI {COPILOT} (tests/e2e/verify/install_clients.sh installs it)")
            sys.exit(2)
        scen += COPILOT_SCENARIOS
    if args.which in ("opencode", "all"):
        if not os.path.exists(OPENCODE):
            say(f"missing OpenCode {OPENCODE} (tests/e2e/verify/install_clients.sh installs it)")
            sys.exit(2)
        scen += OPENCODE_SCENARIOS
    want = set(args.names or []) | set((args.only or "").split(",")) - {""}
    if want:
        unknown = want - {s[0] for s in COPILOT_SCENARIOS + OPENCODE_SCENARIOS}
        if unknown:
            say(f"unknown scenario(s): {' '.join(sorted(unknown))} (see --list)")
            sys.exit(2)
        scen = [s for s in scen if s[0] in want]
    os.makedirs(args.out, exist_ok=True)
    say(f"# lidguard vs Copilot {COPILOT_VERSION} / OpenCode {OPENCODE_VERSION}; runs in {args.out}")
    t0 = time.time()
    for name, fn in scen:
        say(f"== {name}")
        t = time.time()
        try:
            fn(args.out)
        except Exception as e:  # noqa: BLE001 - a crashed scenario is a failure, not an abort
            import traceback
            traceback.print_exc()
            check(f"{name}: scenario ran", False, repr(e))
        say(f"   ({time.time() - t:.1f} s)")
    for p in STARTED:
        stop_popen(p)
    passed = sum(1 for ok, _, _ in RESULTS if ok)
    failed = len(RESULTS) - passed
    say(f"# total {time.time() - t0:.0f} s")
    say(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed or not RESULTS else 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("which", nargs="?", default="all", choices=["copilot", "opencode", "all"])
    ap.add_argument("names", nargs="*", help="scenario names (default: all of the chosen client)")
    ap.add_argument("--only", help="comma-separated scenario names")
    ap.add_argument("--out", default=os.environ.get("VERIFY_OUT"))
    ap.add_argument("--list", action="store_true", help="list the scenarios")
    ap.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.list:
        for name, _ in COPILOT_SCENARIOS + OPENCODE_SCENARIOS:
            say(name)
        return
    if args.inside:
        inside(args)
        return
    if os.geteuid() != 0:
        say("needs root (for unshare -n)")
        sys.exit(2)
    if args.which in ("opencode", "all") and not os.path.exists(RECEIVER_BIN) and shutil.which("cargo"):
        # the ask-before-sleep scenarios run the test receiver (run.sh builds it; this is for direct runs)
        subprocess.run(["cargo", "build", "-q", "-p", "lidguard-testreceiver"], cwd=REPO)
    out = args.out or f"/tmp/lidguard-verify-copilot-opencode.{time.strftime('%Y%m%d-%H%M%S')}"
    cmd = ["unshare", "-n", sys.executable, os.path.abspath(__file__), args.which, *args.names,
           "--out", out, "--inside"]
    if args.only:
        cmd += ["--only", args.only]
    os.execvp("unshare", cmd)


if __name__ == "__main__":
    main()
