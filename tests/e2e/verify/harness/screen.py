"""The agents' terminal UIs under a private tmux server: `ScreenWatch` and the helpers of the
`Ctx` scenarios (tests/e2e/capture/claude/common.py's Tmux), `Tmux` for the `Run` scenarios."""
import json
import os
import subprocess
import time

from .procs import stop_pid
from .results import R, say
from .scene import ACTIVE, check_window, common


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


def prompt_until_permission_request(c, t, prompt, dialog):
    """Types `prompt` into the TUI and waits for the PermissionRequest hook, watching the screen
    for `dialog`; the session must be active from the prompt on. (the screen watch, the session
    id, the PermissionRequest event), or None when it did not come."""
    if not submit_prompt(c, t, prompt):
        return None
    w = ScreenWatch(c, t, dialog)
    if not R.check(c.name, "PermissionRequest hook fired", w.until("PermissionRequest", 45), f"events={c.names()}"):
        return None
    sid = c.session_id()
    ups, pr = c.recs("UserPromptSubmit")[0], c.recs("PermissionRequest")[-1]
    check_window(c, sid, ups["t"], pr["t"], "status from the prompt to PreToolUse/PermissionRequest: session active "
                 "(working)", ACTIVE)
    return w, sid, pr


def approve(c, t, dialog):
    """Enter approves the preselected "Yes"; pressed again (bounded) while the dialog stays up."""
    for _ in range(3):
        t.keys("Enter")
        if c.wait("Stop", 8) or c.recs("PostToolUse"):
            break
        if dialog not in t.screen():
            break
    return c.wait("Stop", 40)


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
