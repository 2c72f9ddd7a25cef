#!/usr/bin/env python3
"""The Windows `lidguard.exe` under Wine: the daemon over its named pipe, the lid-close action
with its backup and crash restore, and the installers' round trips in a Windows user profile.

Usage: suite.py WINE EXE_DIR WORK_DIR

What Wine 8.0 implements is asserted as such (SetThreadExecutionState holds keep-awake because
PowerCreateRequest is a stub answering error 120; the display configuration API reports one
external DisplayPort path). The lid-close action goes through the LIDGUARD_SYS_ROOT seam
(`<root>/power/lid-action.json`), since Wine has no PowerReadACValueIndex.
"""

import getpass
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from winerun import run as run_exe, windows_path

wine, exe_dir, work = sys.argv[1], Path(sys.argv[2]).resolve(), Path(sys.argv[3])
passed = 0
BALANCED = "381b4222-f694-41f0-9685-ff5bb260df2e"


def check(condition, what, detail=""):
    global passed
    if not condition:
        sys.exit(f"FAILED: {what}\n{detail}")
    passed += 1
    print(f"  ok: {what}")


class Env:
    def __init__(self, name, exe=exe_dir, **extra):
        self.root = work / name
        shutil.rmtree(self.root, ignore_errors=True)
        self.root.mkdir(parents=True)
        self.exe = exe
        self.env = dict(os.environ)
        self.env.update(
            {"LIDGUARD_HOME": windows_path(self.root / "lidguard"), "WINEDEBUG": "-all"}
        )
        self.env.update(extra)

    def run(self, *args, stdin=b""):
        return run_exe(wine, self.exe / "lidguard.exe", args, self.env, stdin)

    def status(self):
        return json.loads(self.run("status", "--json").stdout)

    def daemon_unix_pids(self):
        """The Unix pids of this home's daemon (Wine runs each Windows process as one)."""
        return self.unix_pids(b"run-server")

    def unix_pids(self, command):
        """The Unix pids of this home's lidguard processes running `command`."""
        pids = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                cmdline = (proc / "cmdline").read_bytes()
                environ = (proc / "environ").read_bytes()
            except OSError:
                continue
            if command in cmdline and self.env["LIDGUARD_HOME"].encode() in environ:
                pids.append(int(proc.name))
        return pids

    def wait_until(self, predicate, what, seconds=20):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(0.2)
        return False


def daemon_over_the_named_pipe():
    print("daemon over the named pipe")
    e = Env("daemon")
    out = e.run("settings", "--server-runtime-cleanup-delay-minutes", "0")
    check(out.returncode == 0, "settings written", out.stderr)
    out = e.run("start", "--provider", "custom", "--session", "pipe-1")
    check(out.returncode == 0, "`start` starts the daemon on demand", out.stderr)
    s = e.status()
    check(s["running"] and s["daemonPid"], "status: the daemon answers over the pipe", s)
    check([x["sessionId"] for x in s["sessions"]] == ["pipe-1"], "status: the session is there", s)
    backend = s["protection"].get("backend", "")
    check(
        s["protection"]["held"]
        and "SetThreadExecutionState (power requests unavailable here, error 120)" in backend,
        "keep-awake held with SetThreadExecutionState where power requests are a stub (Wine)",
        s["protection"],
    )
    check(s["visibleDisplays"] == 1 and s["externalDisplays"] == 1,
          "displays from QueryDisplayConfig (Wine: one external DisplayPort path)", s)
    first = e.daemon_unix_pids()
    out = e.run("start", "--provider", "custom", "--session", "pipe-2")
    check(out.returncode == 0 and e.daemon_unix_pids() == first,
          "a second command reuses the running daemon (single instance)", out.stderr)
    e.run("stop", "--provider", "custom", "--session", "pipe-1")
    e.run("stop", "--provider", "custom", "--session", "pipe-2")
    check(e.wait_until(lambda: not e.daemon_unix_pids(), "exit"),
          "idle exit: the daemon leaves once no session is left (cleanup delay 0)")
    check(not e.status()["running"], "status after exit: not running")
    # A hook starts the daemon too, and fails open without one for events that need none.
    out = e.run("claude-hook", stdin=b'{"hook_event_name":"UserPromptSubmit","session_id":"h1","cwd":"C:\\\\x","prompt":"p"}')
    check(out.returncode == 0 and out.stdout == b"" and out.stderr == b"", "a hook starts the daemon, prints nothing", out.stderr)
    check(any(x["sessionId"] == "h1" for x in e.status()["sessions"]), "the hook's session is tracked")
    out = e.run("claude-hook", stdin=b"{not json")
    check(out.returncode == 0 and out.stdout == b"", "a malformed payload fails open")
    # The pipe's server is checked before anything is sent: a server that is not the user's
    # own (the expected user set to another SID, since Wine runs every process as one user)
    # gets no payload; the hook fails open and says why in lidguard's log.
    impostor = dict(e.env, LIDGUARD_TEST_PIPE_SERVER_SID="S-1-5-21-0-0-0-4242")
    out = run_exe(wine, e.exe / "lidguard-hook.exe", ["claude-hook"], impostor,
                  b'{"hook_event_name":"UserPromptSubmit","session_id":"spy","cwd":"C:\\\\x","prompt":"p"}')
    check(out.returncode == 0 and out.stdout == b"" and out.stderr == b"",
          "a hook facing a pipe served by another user fails open, prints nothing", out.stderr)
    sessions = [x["sessionId"] for x in e.status()["sessions"]]
    check("spy" not in sessions, "that server got no payload: no session from it", sessions)
    log = (e.root / "lidguard" / "state" / "lidguard.log").read_text(errors="replace")
    check("not as you (S-1-5-21-0-0-0-4242); nothing was sent" in log,
          "the log names who serves the pipe", log[-600:])
    out = run_exe(wine, e.exe / "lidguard-hook.exe", ["claude-hook"], e.env,
                  b'{"hook_event_name":"UserPromptSubmit","session_id":"spy","cwd":"C:\\\\x","prompt":"p"}')
    check(any(x["sessionId"] == "spy" for x in e.status()["sessions"]),
          "the same hook facing the user's own daemon is heard (the check passes its own user)")
    e.run("stop", "--provider", "claude", "--session", "spy")
    e.run("stop", "--provider", "claude", "--session", "h1")
    e.wait_until(lambda: not e.daemon_unix_pids(), "exit")
    # pause and resume over the pipe: the power request goes, and comes back.
    e.run("start", "--provider", "custom", "--session", "pause-1")
    out = e.run("pause", "--for", "30m")
    check(out.returncode == 0 and b"protection paused for 30 min" in out.stdout,
          "pause over the pipe", out.stdout + out.stderr)
    s = e.status()
    check(not s["protection"]["held"] and s["protection"]["paused"],
          "paused: nothing held, status says until when", s["protection"])
    out = e.run("resume")
    check(out.returncode == 0 and b"protection resumed" in out.stdout,
          "resume over the pipe", out.stdout + out.stderr)
    check(e.wait_until(lambda: e.status()["protection"]["held"], "held", seconds=5),
          "the power request is held again after resume")
    without_desktop = {k: v for k, v in e.env.items() if k != "DISPLAY"}
    out = run_exe(wine, e.exe / "lidguard.exe", ["tray"], without_desktop)
    check(out.returncode == 1 and b"The tray needs a desktop with a notification area" in out.stderr,
          "`tray` without a desktop says what it needs, exit 1", out.stderr)
    e.run("stop", "--provider", "custom", "--session", "pause-1")
    e.wait_until(lambda: not e.daemon_unix_pids(), "exit")
    # daemon-stop: a Shutdown request over the pipe; the command returns once the lock is free.
    e.run("start", "--provider", "custom", "--session", "stop-1")
    check(e.daemon_unix_pids(), "a daemon runs again")
    out = e.run("daemon-stop")
    check(out.returncode == 0 and out.stdout.startswith(b"stopped the daemon (pid "),
          "daemon-stop over the pipe", out.stdout + out.stderr)
    check(e.wait_until(lambda: not e.daemon_unix_pids(), "exit", seconds=5),
          "the daemon's process is gone after daemon-stop")
    out = e.run("daemon-stop")
    check(out.returncode == 0 and b"no lidguard daemon is running" in out.stdout,
          "daemon-stop without a daemon says so, exit 0", out.stdout)


def doctor_checks_what_wine_can_answer():
    print("doctor")
    e = Env("doctor")
    out = e.run("doctor", "--json")
    report = json.loads(out.stdout)
    checks = {c["area"]: c for c in report["checks"]}
    check(checks["executables"]["ok"] and "lidguard-hook.exe" in checks["executables"]["detail"],
          "doctor: lidguard.exe and lidguard-hook.exe found", checks["executables"])
    check(checks["daemon"]["ok"], "doctor: the daemon check answers over the pipe", checks["daemon"])
    check(checks["power"]["ok"] and "SetThreadExecutionState" in checks["power"]["detail"],
          "doctor: a test keep-awake granted and released (SetThreadExecutionState under Wine)",
          checks["power"])
    lid = checks["closed lid"]
    check(not lid["ok"] and "PowerReadACValueIndex" in lid["detail"]
          and "polkit" not in lid["detail"] + lid["fix"] and "linux-permission" not in lid["fix"],
          "doctor: the lid-close action Wine cannot read is a ✗ with a Windows remedy, not Linux's",
          lid)
    check(out.returncode == (0 if report["ok"] else 1), "doctor's exit code follows its verdict")


def event_stream_over_the_pipe():
    print("the event stream over the named pipe")
    e = Env("events")
    e.run("settings", "--server-runtime-cleanup-delay-minutes", "0")
    follower = subprocess.Popen(
        [wine, str(e.exe / "lidguard.exe"), "events", "--follow", "--json", "--since", "all"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
        env=e.env, cwd="/",
    )
    lines = []
    threading.Thread(
        target=lambda: [lines.append(line) for line in follower.stdout], daemon=True
    ).start()
    try:
        check(e.wait_until(lambda: e.daemon_unix_pids(), "daemon"),
              "`events --follow` starts the daemon")
        prompt = b'{"hook_event_name":"UserPromptSubmit","session_id":"ev1","cwd":"C:\\\\x","prompt":"p"}'
        out = e.run("claude-hook", stdin=prompt)
        check(out.returncode == 0 and out.stdout == b"", "a hook while someone follows", out.stderr)

        def seen(kind):
            for line in list(lines):
                event = json.loads(line)
                if event["observation"]["kind"] == kind and event["observation"]["sessionId"] == "ev1":
                    return event
            return None

        check(e.wait_until(lambda: seen("session-started"), "seen"),
              "the follower receives the hook event and its consequence", lines)
        event = seen("prompt-submitted")
        check(event["observation"]["source"] == "hook"
              and event["observation"]["payloadDigest"].startswith("sha256:")
              and event["observation"]["cwd"] == "C:\\x",
              "the hook event's observation: source, payload digest, Windows cwd", event)
        e.run("stop", "--provider", "claude", "--session", "ev1")
        check(e.wait_until(lambda: seen("session-stopped"), "seen"), "the stop reaches the follower too")
        time.sleep(1)
        check(e.daemon_unix_pids(), "no idle exit while someone follows (cleanup delay 0)")
    finally:
        follower.kill()
        follower.wait()
    check(e.wait_until(lambda: not e.daemon_unix_pids(), "exit"),
          "the follower gone, the postponed idle exit happens")


# The tray icon's colours (the same disc as on Linux): idle, and agents working.
IDLE = "#9E9E9E"
PROTECTING = "#2E7D32"
# A notice's balloon in Wine's notification area: a white box with the notice's text, over
# the Wine desktop's background.
BALLOON = "#FFFFFF"
DESKTOP = "#256F95"


def screenshot(display):
    """The X screen as `xwd` writes it. A capture can fail while a window is being mapped
    (X_GetImage answers BadMatch; seen once as the balloon appeared): it is taken again."""
    for _ in range(20):
        shot = subprocess.run(["xwd", "-root", "-silent", "-display", display],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if shot.returncode == 0:
            return shot.stdout
        print(f"  (xwd failed, taken again: {shot.stderr.decode().splitlines()[:1]})")
        time.sleep(0.2)
    sys.exit(f"FAILED: xwd cannot capture the screen {display}: {shot.stderr.decode()}")


def save_screenshot(display, path):
    subprocess.run(["convert", "xwd:-", str(path)], input=screenshot(display), check=True)
    print(f"  (screenshot: {path})")


def screen_colours(display):
    """How many pixels of each colour the X screen shows."""
    shot = screenshot(display)
    histogram = subprocess.run(["convert", "xwd:-", "-format", "%c", "histogram:info:-"],
                               input=shot, stdout=subprocess.PIPE, check=True).stdout.decode()
    counts = {}
    for line in histogram.splitlines():
        count, _, rest = line.strip().partition(":")
        colour = next((w for w in rest.split() if w.startswith("#")), None)
        if colour and count.isdigit():
            counts[colour[:7].upper()] = int(count)
    return counts


def where_on_screen(display, colour):
    """The centre of the pixels of `colour` on the X screen, or None."""
    ppm = subprocess.run(["convert", "xwd:-", "ppm:-"], input=screenshot(display),
                         stdout=subprocess.PIPE, check=True).stdout
    header, rest = [], ppm
    while len(header) < 4:  # P6, width, height, maximum; comments skipped
        line, rest = rest.split(b"\n", 1)
        header += line.split(b"#", 1)[0].split()
    width, pixels = int(header[1]), rest
    target, xs, ys, at = bytes.fromhex(colour[1:]), [], [], pixels.find(bytes.fromhex(colour[1:]))
    while at >= 0:
        if at % 3 == 0:
            xs.append(at // 3 % width)
            ys.append(at // 3 // width)
        at = pixels.find(target, at + 1)
    return (sum(xs) // len(xs), sum(ys) // len(ys)) if xs else None


def pick_from_tray_menu(display, icon, downs):
    """Right-clicks the icon at `icon` and picks the menu's entry `downs` rows down, by the
    keyboard, as a user may (X input through xdotool, on the Wine desktop)."""
    env = dict(os.environ, DISPLAY=display)
    x, y = icon
    subprocess.run(["xdotool", "mousemove", str(x), str(y), "click", "3"], env=env, check=True)
    time.sleep(1)
    subprocess.run(["xdotool", "key", "--delay", "150", *(["Down"] * downs), "Return"],
                   env=env, check=True)
    # The pointer leaves the icon, whose tooltip would otherwise come up over the desktop.
    subprocess.run(["xdotool", "mousemove", "500", "300"], env=env, check=True)


def tray_in_a_wine_desktop():
    print("the tray icon in a Wine desktop on Xvfb")
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", "1", "-screen", "0", "1024x768x24"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    display = ":" + xvfb.stdout.readline().decode().strip()
    e = Env("tray", DISPLAY=display)
    e.run("settings", "--server-runtime-cleanup-delay-minutes", "0")
    # Started as at login: through lidguard-tray.exe, the GUI-subsystem program the Run key
    # names, which starts `lidguard.exe tray` with no console window and returns.
    desktop = subprocess.Popen(
        [wine, "explorer", "/desktop=lidguard,1000x700", str(e.exe / "lidguard-tray.exe")],
        env=e.env, cwd="/", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # The tray starts the daemon and shows its idle disc.
        check(e.wait_until(lambda: screen_colours(display).get(IDLE, 0) > 100, "idle", seconds=60),
              "the icon is in the notification area, grey while nothing works",
              screen_colours(display))
        # The desktop's background with nothing over it, to tell when it is clear again.
        clear = screen_colours(display).get(DESKTOP, 0)
        out = e.run("tray")
        check(out.returncode == 1 and b"lidguard's tray already runs (pid " in out.stderr,
              "a second tray is refused while the first runs", out.stderr)
        e.run("start", "--provider", "claude", "--session", "t1")
        def green():
            colours = screen_colours(display)
            return colours.get(PROTECTING, 0) > 100 and colours.get(IDLE, 0) < 100
        check(e.wait_until(green, "green"),
              "an agent session turns it green, its grey gone (the tray follows the event stream)",
              screen_colours(display))
        save_screenshot(display, work / "wine-tray.png")
        # Its menu, clicked: the headline, the session, then "Pause protection for 30 min";
        # paused, the same row is "Resume protection".
        icon = where_on_screen(display, PROTECTING)
        pick_from_tray_menu(display, icon, 3)
        check(e.wait_until(lambda: e.status()["protection"]["paused"] is not None, "paused"),
              "the menu's 'Pause protection for 30 min', clicked, pauses protection",
              e.status()["protection"])
        until = e.status()["protection"]["paused"]["until"]
        left = datetime.fromisoformat(until.replace("Z", "+00:00")) - datetime.now(timezone.utc)
        check(timedelta(minutes=29) < left <= timedelta(minutes=30)
              and screen_colours(display).get(PROTECTING, 0) == 0,
              "for 30 min, and the icon turns grey", (until, screen_colours(display)))
        pick_from_tray_menu(display, icon, 3)
        check(e.wait_until(lambda: e.status()["protection"]["paused"] is None, "resumed"),
              "its 'Resume protection', clicked, takes protection back", e.status()["protection"])
        check(e.wait_until(green, "green again"), "and the icon is green again",
              screen_colours(display))
        # The session waits for the user, lid open: the daemon (started by the tray, on this
        # desktop) tells them with a balloon of a notification-area icon of its own. The screen
        # is compared with one where nothing covers the desktop (the clean-clone run of f0f63d2
        # had the icon's tooltip up there, under the pointer the menu had left on the icon).
        check(e.wait_until(lambda: screen_colours(display).get(DESKTOP, 0) == clear, "clear"),
              "nothing covers the desktop before the notice (no menu, no tooltip)",
              (clear, screen_colours(display)))
        before = screen_colours(display)
        waiting = (b'{"hook_event_name":"Notification","session_id":"t1","cwd":"C:\\\\x",'
                   b'"notification_type":"permission_prompt",'
                   b'"message":"Claude needs your permission to use Bash"}')
        asked = time.monotonic()
        out = e.run("claude-hook", stdin=waiting)
        check(out.returncode == 0 and out.stdout == b"", "a permission prompt's hook", out.stderr)
        log = lambda: (e.root / "lidguard/state/lidguard.log").read_text(errors="replace")
        check(e.wait_until(lambda: "desktop notified id=1 summary=Claude Code in Z: needs you"
                           in log(), "notified"),
              "the daemon logs the notice it showed", log()[-2000:])
        # Wine shows a balloon 2 s after its icon comes, for the notice's 30 s. It is told by the
        # desktop it covers (over 8000 pixels) and the white it brings; the white alone may
        # mislead, as the balloon also covers some of the white taskbar. Every capture is kept
        # for the failure's detail.
        seen = []
        def balloon():
            now = screen_colours(display)
            covered = before.get(DESKTOP, 0) - now.get(DESKTOP, 0)
            whiter = now.get(BALLOON, 0) - before.get(BALLOON, 0)
            seen.append((round(time.monotonic() - asked, 1), covered, whiter))
            return covered > 8000 and whiter > 3000
        check(e.wait_until(balloon, "balloon", seconds=30),
              "a session waiting for the user, lid open: a balloon notice on the screen "
              "(a white box covering over 8000 pixels of the desktop by the notification area)",
              {"before": before, "seconds, desktop covered, white added": seen})
        save_screenshot(display, work / "wine-notice.png")
        e.run("stop", "--provider", "claude", "--session", "t1")
        check(e.wait_until(lambda: screen_colours(display).get(PROTECTING, 0) == 0, "grey"),
              "its end turns it back", screen_colours(display))
        # `uninstall` stops a running tray by closing its window, as its menu's Quit does: the
        # icon leaves the notification area and the tray exits (run on the tray's desktop).
        out = subprocess.run(
            [wine, "explorer", "/desktop=lidguard,1000x700", str(e.exe / "lidguard.exe"),
             "uninstall", "--yes"],
            env=e.env, cwd="/", stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60)
        check(b"stopped the tray (pid " in out.stdout, "uninstall stops the running tray", out.stdout)
        check(e.wait_until(lambda: not e.unix_pids(b" tray"), "tray gone"),
              "the tray process exited")
        check(e.wait_until(lambda: screen_colours(display).get(IDLE, 0) < 100, "icon gone"),
              "and its icon left the notification area", screen_colours(display))
    finally:
        for pid in e.unix_pids(b"tray"):
            os.kill(pid, 9)
        desktop.kill()
        e.run("daemon-stop")
        xvfb.kill()


def write_lid_action(sys_root: Path, ac: int, dc: int):
    (sys_root / "power").mkdir(parents=True, exist_ok=True)
    (sys_root / "power/lid-action.json").write_text(json.dumps(
        {"activeScheme": BALANCED, "schemes": {BALANCED: {"ac": ac, "dc": dc}}}))


def read_lid_action(sys_root: Path):
    v = json.loads((sys_root / "power/lid-action.json").read_text())["schemes"][BALANCED]
    return v["ac"], v["dc"]


def write_plan_value(sys_root: Path, name: str, ac: int, dc: int):
    (sys_root / "power").mkdir(parents=True, exist_ok=True)
    (sys_root / f"power/{name}.json").write_text(json.dumps(
        {"activeScheme": BALANCED, "schemes": {BALANCED: {"ac": ac, "dc": dc}}}))


def read_plan_value(sys_root: Path, name: str):
    v = json.loads((sys_root / f"power/{name}.json").read_text())["schemes"][BALANCED]
    return (v["ac"], v["dc"])


def modern_standby_battery_timeout():
    """On a Modern Standby machine a power request on battery ends 5 minutes after the sleep
    timeout: while it holds, lidguard sets that timeout (DC) to never, and puts it back exactly
    — on release, and after a kill with the next command. The capabilities come from the seam
    (Wine reports no Modern Standby)."""
    print("Modern Standby: the battery sleep timeout")
    e = Env("standby")
    sys_root = e.root / "sys"
    write_lid_action(sys_root, 1, 1)
    write_plan_value(sys_root, "standby-idle", 1800, 300)
    (sys_root / "power/capabilities.json").write_text(json.dumps(
        {"SystemS3": False, "SystemS4": True, "HiberFilePresent": True, "AoAc": True}))
    e.env["LIDGUARD_SYS_ROOT"] = windows_path(sys_root)
    e.run("start", "--provider", "custom", "--session", "ms")
    check(read_plan_value(sys_root, "standby-idle") == (1800, 0),
          "Modern Standby, held: the sleep timeout on battery is never (0), on AC untouched")
    e.run("stop", "--provider", "custom", "--session", "ms")
    check(e.wait_until(lambda: read_plan_value(sys_root, "standby-idle") == (1800, 300), "restore"),
          "released: the user's 1800 s on AC and 300 s on battery are back exactly")
    e.run("start", "--provider", "custom", "--session", "ms2")
    check(read_plan_value(sys_root, "standby-idle") == (1800, 0), "held again")
    for pid in e.daemon_unix_pids():
        os.kill(pid, 9)
    check(e.wait_until(lambda: not e.daemon_unix_pids(), "killed"), "daemon killed (SIGKILL)")
    out = e.run("settings")
    check(read_plan_value(sys_root, "standby-idle") == (1800, 300)
          and b"your sleep timeout on battery (AC 1800, DC 300)" in out.stderr,
          "after the kill the next command put the timeout back and said so", out.stderr)
    out = e.run("doctor", "--json")
    report = json.loads(out.stdout)
    power = next(c for c in report["checks"] if c["area"] == "power")
    check("Modern Standby" in power["detail"],
          "doctor says how this machine sleeps (Modern Standby: the display turned off)", power)
    # Without Modern Standby nothing of the sort is touched.
    (sys_root / "power/capabilities.json").write_text(json.dumps({"SystemS3": True, "AoAc": False}))
    e.run("start", "--provider", "custom", "--session", "s3")
    check(read_plan_value(sys_root, "standby-idle") == (1800, 300),
          "an S3 machine's sleep timeout is left alone")
    e.run("stop", "--provider", "custom", "--session", "s3")
    e.wait_until(lambda: not e.daemon_unix_pids(), "exit")


def lid_action_backup_and_restore():
    print("lid-close action: backup, change, restore, crash restore")
    for ac, dc in ((1, 2), (0, 0)):
        e = Env(f"lid-{ac}{dc}")
        sys_root = e.root / "sys"
        write_lid_action(sys_root, ac, dc)
        e.env["LIDGUARD_SYS_ROOT"] = windows_path(sys_root)
        e.run("start", "--provider", "custom", "--session", "lid")
        check(read_lid_action(sys_root) == (0, 0), f"[user had {ac},{dc}] held: AC and DC set to do nothing")
        check("handle-lid-switch" in e.status()["protection"]["inhibitors"], "status lists the lid hold")
        e.run("stop", "--provider", "custom", "--session", "lid")
        check(e.wait_until(lambda: read_lid_action(sys_root) == (ac, dc), "restore"),
              f"[user had {ac},{dc}] released: the user's values are back")
        # Killed while held: the next command (any) restores.
        e.run("start", "--provider", "custom", "--session", "lid2")
        check(read_lid_action(sys_root) == (0, 0), "held again")
        for pid in e.daemon_unix_pids():
            os.kill(pid, 9)
        check(e.wait_until(lambda: not e.daemon_unix_pids(), "killed"), "daemon killed (SIGKILL)")
        check(read_lid_action(sys_root) == (0, 0), "after the kill the lid action is still changed")
        out = e.run("settings")
        check(read_lid_action(sys_root) == (ac, dc),
              f"[user had {ac},{dc}] the next command (`settings`) restored the user's values",
              out.stderr)
        if (ac, dc) != (0, 0):
            check(b"restored your lid-close action" in out.stderr, "and said so on stderr", out.stderr)
        out = e.run("settings")
        check(b"restored" not in out.stderr and read_lid_action(sys_root) == (ac, dc),
              "the backup is gone: nothing is restored twice")
        # A kill again, then a new daemon: it restores at its start, before holding anything.
        e.run("start", "--provider", "custom", "--session", "lid3")
        for pid in e.daemon_unix_pids():
            os.kill(pid, 9)
        e.wait_until(lambda: not e.daemon_unix_pids(), "killed")
        e.run("start", "--provider", "custom", "--session", "lid4")
        check(read_lid_action(sys_root) == (0, 0), "a new daemon holds again")
        e.run("stop", "--provider", "custom", "--session", "lid3")
        e.run("stop", "--provider", "custom", "--session", "lid4")
        check(e.wait_until(lambda: read_lid_action(sys_root) == (ac, dc), "restore"),
              f"[user had {ac},{dc}] after the restart and release the user's values are back (not lidguard's 0)")
        e.wait_until(lambda: not e.daemon_unix_pids(), "exit")
    modern_standby_battery_timeout()
    # Without the seam Wine has no lid-action API: the lid hold is refused, keep-awake still held.
    e = Env("lid-wine")
    e.run("start", "--provider", "custom", "--session", "w")
    s = e.status()
    check(s["protection"]["held"] and "handle-lid-switch" not in s["protection"]["inhibitors"],
          "Wine without the seam: keep-awake held, the lid hold refused (no PowerReadACValueIndex)", s)
    e.run("stop", "--provider", "custom", "--session", "w")
    e.wait_until(lambda: not e.daemon_unix_pids(), "exit")
    # Temperatures come from WMI, queried for real: Wine answers both thermal-zone classes with
    # no zone, so the command says so (exit 1) instead of guessing.
    out = e.run("current-temperature")
    check(out.returncode == 1 and b"unavailable: WMI reports no readable thermal zone" in out.stdout,
          "current-temperature asks WMI (Wine: no thermal zone, said so, exit 1)", out.stdout + out.stderr)


AGENT_DIRS = [".claude", ".codex", ".copilot", ".config/opencode", ".gemini", ".cursor", ".qwen", ".config/kilo"]


RUN_KEY = r"HKCU\Software\Microsoft\Windows\CurrentVersion\Run"


def reg(e, *args):
    """Wine's own reg.exe, on the prefix's registry."""
    return subprocess.run([wine, "reg", *args], env=e.env, cwd="/", stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, timeout=60)


def run_value(e):
    """The `lidguard tray` value of the user's Run key, or None."""
    out = reg(e, "query", RUN_KEY, "/v", "lidguard tray")
    for line in out.stdout.decode(errors="replace").splitlines():
        name, _, rest = line.strip().partition("    REG_SZ    ")
        if rest and name.strip() == "lidguard tray":
            return rest.strip()
    return None


def installers_round_trip():
    print("installers in a Windows user profile")
    # Wine sets USERPROFILE from its prefix (an inherited value is ignored): the Wine user's
    # own profile, emptied of agent directories first.
    profile = Path(os.environ["WINEPREFIX"]) / "drive_c/users" / getpass.getuser()
    for d in AGENT_DIRS + [".claude.json"]:
        target = profile / d
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
    for d in AGENT_DIRS:
        (profile / d).mkdir(parents=True)
    # The user's own entries, which must survive byte for byte.
    claude = profile / ".claude/settings.json"
    claude.write_text('{\r\n  // mine\r\n  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]},\r\n  "model": "x"\r\n}\r\n')
    claude_json = profile / ".claude.json"
    claude_json.write_text('{"mcpServers": {"mine": {"command": "mine.exe"}}}\n')
    codex_toml = profile / ".codex/config.toml"
    codex_toml.write_text('[mcp_servers.mine]\ncommand = "mine.exe"\n')
    gemini = profile / ".gemini/settings.json"
    gemini.write_text('{"theme": "dark"}\n')
    agent_files = lambda: {
        p: p.read_bytes()
        for d in AGENT_DIRS
        for p in (profile / d).rglob("*")
        if p.is_file()
    } | {claude_json: claude_json.read_bytes()}
    before = agent_files()
    e = Env("installers")
    out = e.run("hook-install", "--provider", "all")
    check(out.returncode == 0, "hook-install --provider all", out.stderr)
    text = claude.read_text()
    check('"shell"' not in text and '"args": ["claude-hook"]' in text and "echo mine" in text,
          "Claude entries in exec form (no shell, no PowerShell) next to the user's own", text)
    exe = windows_path(exe_dir / "lidguard-hook.exe")
    check(json.loads(text.replace("// mine", "").replace("\r", ""))["hooks"]["Stop"][1]["hooks"][0]["command"] == exe,
          "the hook names this exe by its absolute path (no \\\\?\\ prefix)")
    copilot = (profile / ".copilot/hooks/lidguard-copilot-cli.json").read_text()
    check('"powershell":' in copilot and '"bash":' not in copilot, "Copilot entries use the powershell key")
    for agent in ("claude", "copilot", "opencode", "gemini", "cursor", "qwen", "kilo"):
        out = e.run("hook-status", "--provider", agent)
        check(out.returncode == 0, f"hook-status --provider {agent}: installed", out.stdout + out.stderr)
    out = e.run("hook-status", "--provider", "codex")
    check(out.returncode == 1 and b"not trusted by Codex yet" in out.stdout,
          "hook-status --provider codex: installed, not yet trusted by Codex (exit 1)", out.stdout)
    codex_hooks = (profile / ".codex/hooks.json").read_text()
    check("& '" not in codex_hooks and "codex-hook" in codex_hooks,
          "Codex entries are quoted for cmd.exe, not PowerShell", codex_hooks[:300])
    other = work / "other-exe"
    shutil.rmtree(other, ignore_errors=True)
    # Hard links: the same executables under another path, without copying them.
    shutil.copytree(exe_dir, other, copy_function=os.link)
    moved = Env("installers-moved", exe=other)
    out = moved.run("hook-status", "--provider", "claude")
    check(out.returncode == 1 and b"drifted" in out.stdout,
          "hook-status from another lidguard.exe: needs an update (exit 1)", out.stdout)
    out = e.run("mcp-install", "all")
    check(out.returncode == 0, "mcp-install all", out.stderr)
    check(b"mine.exe" in claude_json.read_bytes() and b"mcp-server" in claude_json.read_bytes(),
          "Claude's MCP entry next to the user's server")
    out = e.run("mcp-status", "all")
    check(out.returncode == 0, "mcp-status: registered", out.stdout + out.stderr)
    out = e.run("mcp-remove", "all")
    check(out.returncode == 0, "mcp-remove all", out.stderr)
    out = e.run("hook-remove", "--provider", "all")
    check(out.returncode == 0, "hook-remove --provider all", out.stderr)
    after = agent_files()
    changed = [str(p) for p in before if after.get(p) != before[p]]
    check(not changed, "after remove every user file is byte-identical (CRLF and comments kept)", changed)
    backups = list((e.root / "lidguard").rglob("backups/*/*"))
    check(backups, f"backups were kept in lidguard's state ({len(backups)} files)")
    # setup then uninstall: everything lidguard wrote goes, the user's files come back exactly.
    s = Env("setup")
    out = s.run("setup", "--yes", "--mcp")
    check(b"Claude Code" in out.stdout and b"lidguard doctor" in out.stdout,
          "setup --yes --mcp hooks the agents found and runs doctor", out.stdout + out.stderr)
    check("claude-hook" in claude.read_text(), "setup installed Claude's hooks")
    # The tray at login: a value of the user's Run key naming lidguard-tray.exe, a program of
    # the GUI subsystem (no console window opens for it at login).
    tray_at_login = f'"{windows_path(exe_dir / "lidguard-tray.exe")}"'
    check(run_value(s) == tray_at_login and b"tray starts at your next login" in out.stdout,
          "setup puts the tray in the user's Run key (Wine's registry, read back with reg.exe)",
          f"{run_value(s)!r}\n{out.stdout.decode(errors='replace')}")
    check(pe_subsystem(exe_dir / "lidguard-tray.exe") == GUI_SUBSYSTEM,
          "the program the Run key names is a GUI-subsystem executable (its PE header says so)",
          f"subsystem {pe_subsystem(exe_dir / 'lidguard-tray.exe')}")
    check(pe_subsystem(exe_dir / "lidguard.exe") == CONSOLE_SUBSYSTEM,
          "lidguard.exe itself stays a console program (its PE header says so)")
    check(b"starts at login (HKCU\\Software" in out.stdout,
          "doctor reports it", out.stdout)
    out = s.run("uninstall", "--yes")
    check(out.returncode == 0, "uninstall --yes", out.stdout + out.stderr)
    check(run_value(s) is None and b"(the tray's login entry)" in out.stdout,
          "uninstall takes the Run key value out", out.stdout)
    after = agent_files()
    changed = [str(p) for p in set(before) | set(after) if after.get(p) != before.get(p)]
    check(not changed, "after uninstall every agent file is as before, none added", changed)
    left = [str(p) for p in (s.root / "lidguard").rglob("*")] if (s.root / "lidguard").exists() else []
    check(not left, "no lidguard file is left", left)
    # A value of that name that runs something else is the user's: it stays. (And an uninstall
    # with nothing to remove leaves nothing behind either.)
    mine = r"C:\tools\other.exe tray"
    reg(s, "add", RUN_KEY, "/v", "lidguard tray", "/t", "REG_SZ", "/d", mine, "/f")
    out = s.run("uninstall", "--yes")
    check(run_value(s) == mine, "uninstall leaves the user's own value of that name", out.stdout)
    reg(s, "delete", RUN_KEY, "/v", "lidguard tray", "/f")
    left = [str(p) for p in (s.root / "lidguard").rglob("*")] if (s.root / "lidguard").exists() else []
    check(not left, "a second uninstall leaves no lidguard file either", left)


# The PE optional header's Subsystem values (Microsoft Learn, "PE Format"): 2 Windows GUI,
# 3 Windows character (console).
GUI_SUBSYSTEM, CONSOLE_SUBSYSTEM = 2, 3


def pe_subsystem(path):
    """The Subsystem field of an executable's PE optional header: the header's offset is at
    0x3c, after the 4-byte signature and the 20-byte COFF header comes the optional header, whose
    Subsystem is 68 bytes in (PE32 and PE32+ alike)."""
    data = Path(path).read_bytes()
    pe = int.from_bytes(data[0x3C:0x40], "little")
    assert data[pe:pe + 4] == b"PE\0\0", f"{path} is not a PE file"
    return int.from_bytes(data[pe + 24 + 68:pe + 24 + 70], "little")


def main():
    work.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    daemon_over_the_named_pipe()
    tray_in_a_wine_desktop()
    doctor_checks_what_wine_can_answer()
    event_stream_over_the_pipe()
    lid_action_backup_and_restore()
    installers_round_trip()
    print(f"Windows suite under Wine: {passed} checks passed in {time.monotonic() - started:.0f} s")


main()
