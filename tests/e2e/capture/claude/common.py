"""Helpers shared by the Claude and Codex capture drivers (codex/capture.py imports this file).

Fake model lifecycle, per-run env, private tmux server, hook-log polling, fixture writing.
Everything here runs inside the loopback-only namespace that run.sh creates.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
FAKEMODEL = os.path.join(REPO, "tests", "e2e", "fakemodel.py")
MAX_FIELD = 20_000


class Timeout(Exception):
    pass


def check_netns():
    """Refuse to run unless the only network interface is loopback (escape hatch: NO_NETNS=1)."""
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout.strip().splitlines()
    names = [line.split(":")[1].strip() for line in links]
    if os.environ.get("LIDGUARD_CAPTURE_NO_NETNS") == "1":
        print(f"WARNING: no private network namespace; interfaces: {names}", file=sys.stderr)
        return
    if names != ["lo"]:
        sys.exit(f"refusing to run: interfaces {names} (expected only lo; start via run.sh)")


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


def git_init(proj, files):
    for name, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(proj, name)), exist_ok=True)
        with open(os.path.join(proj, name), "w") as f:
            f.write(text)
    q = dict(cwd=proj, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], **q)
    subprocess.run(["git", "-c", "user.name=capture", "-c", "user.email=capture@example.invalid",
                    "commit", "-q", "--allow-empty", "-m", "init"], **q)


def write_codex_config(path, port, proj, comment=""):
    """Codex's config.toml for a run: the fake model at 127.0.0.1:<port> as its only provider
    (Responses API, no retries), approvals on request, `proj` trusted, no update check."""
    with open(path, "w") as f:
        f.write((f"# {comment}\n" if comment else "") + f'''model = "gpt-fake"
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

[projects."{proj}"]
trust_level = "trusted"
''')


def base_env(home, port):
    proxy = f"http://127.0.0.1:{port}"
    env = {k: os.environ[k] for k in ("PATH", "LANG", "USER", "LOGNAME", "SHELL") if k in os.environ}
    env.update(HOME=home, TERM="xterm-256color", HTTPS_PROXY=proxy, HTTP_PROXY=proxy, https_proxy=proxy,
               http_proxy=proxy, NO_PROXY="127.0.0.1,localhost,::1", no_proxy="127.0.0.1,localhost,::1")
    env.setdefault("LANG", "C.UTF-8")
    return env


def stop_found(find):
    """SIGTERM every pid `find()` returns, SIGKILL those still found 3 s later (by pid, never by name)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in find():
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        end = time.time() + 3
        while time.time() < end and find():
            time.sleep(0.2)


class FakeModel:
    """Runs tests/e2e/fakemodel.py (or the `server` a subclass names, else FAKEMODEL as set at
    the time) for one scenario; stopped by pid on exit."""
    server = None

    def __init__(self, run, script):
        self.run = run
        self.script = os.path.join(run, "script.json")
        write_json(self.script, script)

    def __enter__(self):
        pf = os.path.join(self.run, "model.port")
        self.proc = subprocess.Popen(
            [sys.executable, self.server or FAKEMODEL, "--port", "0", "--port-file", pf, "--script", self.script,
             "--log", os.path.join(self.run, "model.jsonl")],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.run, "model.err"), "w"))
        for _ in range(100):
            if os.path.exists(pf):
                self.port = int(open(pf).read())
                return self
            time.sleep(0.1)
        self.proc.kill()
        raise RuntimeError("fake model did not start")

    def __exit__(self, *exc):
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class HookLog:
    def __init__(self, logdir):
        self.path = os.path.join(logdir, "hooks.jsonl")

    def records(self):
        if not os.path.exists(self.path):
            return []
        with open(self.path) as f:
            return [json.loads(line) for line in f if line.strip()]

    def events(self):
        return [r["event"] for r in self.records()]

    def wait(self, pred, timeout, count=1, fail=True):
        end = time.time() + timeout
        while time.time() < end:
            if sum(1 for r in self.records() if pred(r)) >= count:
                return True
            time.sleep(0.3)
        if fail:
            raise Timeout(f"hook wait ({count}) timed out after {timeout}s; events so far: {self.events()}")
        return False


class Tmux:
    """A private tmux server (unique -L socket) started inside the namespace with the run's env."""

    def __init__(self, sock, env, cwd, snapdir=None):
        self.sock, self.env, self.cwd, self.pid = sock, env, cwd, None
        self.snapdir = snapdir or os.path.dirname(cwd)

    def tmux(self, *args, **kw):
        return subprocess.run(["tmux", "-L", self.sock, "-f", "/dev/null", *args], env=self.env,
                              capture_output=True, text=True, **kw)

    def start(self, command):
        self.tmux("new-session", "-d", "-s", "cap", "-x", "200", "-y", "50", "-c", self.cwd, command, check=True)
        self.pid = int(self.tmux("display-message", "-p", "#{pid}").stdout.strip())
        self.tmux("set-option", "-g", "remain-on-exit", "on")

    def screen(self):
        return self.tmux("capture-pane", "-p", "-t", "cap").stdout

    def snapshot(self, label):
        with open(os.path.join(self.snapdir, f"screen-{label}.txt"), "w") as f:
            f.write(self.screen())

    def wait_screen(self, pred, timeout):
        end = time.time() + timeout
        while time.time() < end:
            if pred(self.screen()):
                return
            time.sleep(0.5)
        self.snapshot("timeout")
        raise Timeout("screen wait timed out")

    def keys(self, *keys):
        self.tmux("send-keys", "-t", "cap", *keys)

    def type_line(self, text):
        self.tmux("send-keys", "-t", "cap", "-l", text)
        time.sleep(0.5)
        self.keys("Enter")

    def stop(self):
        if self.pid:
            pane_pid = self.tmux("display-message", "-p", "#{pane_pid}").stdout.strip()
            for pid in (pane_pid, self.pid):
                try:
                    os.kill(int(pid), signal.SIGTERM)
                except (ValueError, ProcessLookupError):
                    pass
            self.pid = None


def kebab(s):
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")


def shrink(payload):
    """Drop fields larger than 20 KB (none expected); returns (payload, note or None)."""
    dropped = []
    for k, v in list(payload.items()):
        size = len(json.dumps(v))
        if size > MAX_FIELD:
            payload[k] = f"<dropped: {size} bytes>"
            dropped.append(f"{k} ({size} bytes)")
    return payload, ("dropped large fields: " + ", ".join(dropped)) if dropped else None


def write_fixtures(out, names, scenarios, provider, client_id, dest, max_per_event=4):
    """One file per (scenario, event): the first occurrence is <scenario>__<Event>.json, later
    occurrences (up to max_per_event) are <scenario>__<Event>.<n>.json."""
    os.makedirs(dest, exist_ok=True)
    date = time.strftime("%Y-%m-%d")
    written = []
    for name in names:
        seen = {}
        for r in HookLog(os.path.join(out, name, "logs")).records():
            ev = r["event"]
            seen[ev] = seen.get(ev, 0) + 1
            if seen[ev] > max_per_event:
                continue
            try:
                payload = json.loads(r["stdin"])
            except ValueError:
                payload = r["stdin"]
            fx = {"provider": provider, "client": scenarios[name].get("client_id", client_id), "captured": date,
                  "scenario": scenarios[name]["desc"], "event": ev, "stdin": payload}
            if isinstance(payload, dict):
                fx["stdin"], note = shrink(payload)
                if note:
                    fx["note"] = note
            suffix = "" if seen[ev] == 1 else f".{seen[ev]}"
            fname = f"{kebab(name)}__{ev}{suffix}.json"
            write_json(os.path.join(dest, fname), fx)
            written.append(fname)
    print(f"wrote {len(written)} fixtures to {dest}")
    return written


def main(provider, client_id, scenarios, run_one):
    """CLI shared by both drivers: [--list] [--fixtures] [scenario ...]."""
    names = [a for a in sys.argv[1:] if not a.startswith("--")] or list(scenarios)
    if "--list" in sys.argv:
        for n, sc in scenarios.items():
            print(f"{n:32} {sc['desc']}")
        return 0
    check_netns()
    out = os.environ.get("CAPTURE_OUT") or f"/tmp/lidguard-capture-{provider}.{time.strftime('%Y%m%d-%H%M%S')}"
    results = {}
    for name in names:
        sc = scenarios[name]
        run = os.path.join(out, name)
        shutil.rmtree(run, ignore_errors=True)
        os.makedirs(run)
        t0 = time.time()
        with FakeModel(run, sc["script"]) as fm:
            try:
                rc = run_one(name, sc, run, fm.port)
            except Timeout as e:
                rc = f"timeout: {e}"
        events = HookLog(os.path.join(run, "logs")).events()
        results[name] = dict(rc=rc, seconds=round(time.time() - t0, 1), events=events)
        print(f"[{name}] rc={rc} {results[name]['seconds']}s events: {' '.join(events)}", flush=True)
    write_json(os.path.join(out, "summary.json"), results)
    if "--fixtures" in sys.argv:
        write_fixtures(out, names, scenarios, provider, client_id, os.path.join(REPO, "tests", "fixtures", provider))
    print(f"output: {out}")
    return 0
