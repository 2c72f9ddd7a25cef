"""The processes a scenario starts: spawned in their own session and stopped by pid (never by
name), found by the LIDGUARD_HOME in their environment, waited for with a bound."""
import json
import os
import signal
import socket
import subprocess
import time

STARTED = []  # Popen objects started by this script (stopped by pid at the end)


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


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


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


def wait_or_stop(p, timeout=120):
    """Waits for p to exit, and stops it when it does not in time: its exit code, or None."""
    rc = wait_exit(p, timeout)
    if rc is None:
        stop_popen(p)
    return rc


def wait_exit(p, timeout):
    try:
        return p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


def hook_processes(lidguard_home, subcommand):
    """A scenario's running lidguard hooks: (pid, command line) of the processes with its
    LIDGUARD_HOME whose command line names `subcommand` (`lidguard-hook claude-hook`)."""
    found = []
    for pid in pids_with_env(f"LIDGUARD_HOME={lidguard_home}".encode()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if subcommand.encode() in argv[1:]:
            found.append((pid, b" ".join(argv).decode(errors="replace")))
    return found


class BannerServer:
    """A test helper from target/debug (the receiver, the ntfy stand-in) that serves on 127.0.0.1,
    prints one JSON line (its `url`, ...) when ready and runs until stopped; a context manager."""

    def __init__(self, binary, *args):
        self.proc = subprocess.Popen([binary, *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.banner = json.loads(self.proc.stdout.readline())
        self.url = self.banner["url"]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
