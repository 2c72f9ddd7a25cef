"""A scenario of the drivers built on the chat-completions fake model (`Run`: Copilot, OpenCode,
Kilo, Gemini, Qwen, Cline, Droid): its own HOME, XDG folders, `git init` project, fake lid and
display tree and LIDGUARD_HOME (its own lidguard daemon, store and log), the fake model
(tests/e2e/fakemodel_chat.py on 127.0.0.1, or a driver's own), the `status --json` poller, and the
checks on what lidguard logged and showed."""
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request

from . import lgverify
from .constants import LIDGUARD, REPO
from .procs import hook_processes, spawn, stop_pid, stop_popen
from .results import check

NOPROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never use a proxy
FAKE = os.path.join(REPO, "tests", "e2e", "fakemodel_chat.py")


class Run:
    fake_model = FAKE  # the chat-completions fake; a driver's Run may name its own
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

    def wait_ended(self, provider, timeout=15):
        """Bounded wait until lidguard tracks no session of `provider`."""
        end = time.time() + timeout
        while session_of(self.sessions(), provider) and time.time() < end:
            time.sleep(0.25)

    def hook_processes(self, subcommand):
        """This run's running `lidguard-hook <subcommand>` processes: [(pid, command line)]."""
        return hook_processes(self.lgenv["LIDGUARD_HOME"], subcommand)

    def stop_daemon(self):
        pid = self.status().get("daemonPid")
        if pid:
            stop_pid(int(pid))

    # the fake model
    def start_fake(self, script):
        """The fake model (`fake_model`) on a free port of 127.0.0.1, playing `script`."""
        with open(self.path("script.json"), "w") as f:
            json.dump(script, f)
        portfile = self.path("port")
        self.fake = spawn([sys.executable, self.fake_model, "--port", "0", "--port-file", portfile,
                           "--script", self.path("script.json"), "--log", self.path("model.jsonl")],
                          stdout=subprocess.DEVNULL, stderr=open(self.path("fake.stderr"), "w"))
        end = time.time() + 15
        while not (os.path.exists(portfile) and open(portfile).read().strip()) and time.time() < end:
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


def check_events_in_order(tag, evs, want, label=None):
    """hook-events holds each (hookEvent, kind) of `want`, in that order."""
    kinds = [(e.get("hookEvent"), e.get("kind")) for e in evs]
    idx = [kinds.index(w) if w in kinds else None for w in want]
    label = label or f"hook-events {', '.join(w[0] for w in want)} in order"
    return check(f"{tag}: {label}", None not in idx and idx == sorted(idx), ev_summary(evs))


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


def user_texts(req):
    """The user messages' text in one model request."""
    out = []
    for m in (req.get("body") or {}).get("messages") or []:
        if m.get("role") != "user":
            continue
        c = m.get("content")
        out.append(c if isinstance(c, str) else " ".join(p.get("text", "") for p in c or [] if isinstance(p, dict)))
    return out
