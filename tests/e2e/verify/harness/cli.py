"""The command line every driver shares: `<driver> [scenario ...] [--out DIR]`, `--list`. As root it
re-runs itself inside a private network namespace (`unshare -n`, only `lo` up), checks that what it
needs is there, runs the scenarios (a crashed one is a failure, not the end of the run), stops what
they started and ends with `N passed, M failed` (exit 1 on any failure)."""
import argparse
import json
import os
import subprocess
import sys
import time

from .constants import LIDGUARD
from .procs import STARTED, stop_popen
from .results import RESULTS, check, counts, say

NO_NETNS = "LIDGUARD_CAPTURE_NO_NETNS"  # =1: run without the namespace (debugging only)


REGISTERED = []  # (name, fn) of the @scenario functions, in the order they are defined


def scenario(fn):
    """Names a driver's function `def gemini_print_basic(root)` as its scenario `gemini-print-basic`."""
    REGISTERED.append((fn.__name__.replace("_", "-"), fn))
    return fn


def main(script, doc, title, needed, scenarios=None):
    """`script` is the driver's `__file__`, `doc` its docstring, `title` the first line it prints,
    `needed` the paths it runs (checked inside the namespace), `scenarios` [(name, fn(root))]
    (default: its @scenario functions). Output goes to --out, $VERIFY_OUT or
    /tmp/lidguard-verify-<driver>.<time>."""
    if scenarios is None:
        scenarios = [(name, fn) for name, fn in REGISTERED if fn.__module__ == "__main__"]
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("names", nargs="*", help="scenario names (default: all)")
    ap.add_argument("--out", default=os.environ.get("VERIFY_OUT"))
    ap.add_argument("--list", action="store_true", help="list the scenarios")
    ap.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.list:
        for name, _ in scenarios:
            say(name)
        return
    stem = os.path.splitext(os.path.basename(script))[0]
    args.out = args.out or f"/tmp/lidguard-verify-{stem}.{time.strftime('%Y%m%d-%H%M%S')}"
    if os.environ.get(NO_NETNS) == "1":
        say(f"WARNING: {NO_NETNS}=1 -- running WITHOUT a private network namespace")
        inside(args, title, scenarios, needed)
    if args.inside:
        enter_loopback_only()
        inside(args, title, scenarios, needed)
    if os.geteuid() != 0:
        say("needs root (for unshare -n)")
        sys.exit(2)
    os.execvp("unshare", ["unshare", "-n", sys.executable, os.path.abspath(script), *args.names,
                          "--out", args.out, "--inside"])


def enter_loopback_only():
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout.splitlines()
    if not links or any(": lo:" not in link for link in links):
        say("refusing: the network namespace has links besides lo:\n" + "\n".join(links))
        sys.exit(2)


def inside(args, title, scenarios, needed):
    for path in [LIDGUARD, *needed]:
        if not os.path.exists(path):
            say(f"missing {path} (tests/e2e/verify/run.sh builds lidguard and the test helpers; "
                "install_clients.sh installs the agents)")
            sys.exit(2)
    chosen = scenarios
    if args.names:
        unknown = set(args.names) - {s[0] for s in scenarios}
        if unknown:
            say(f"unknown scenario(s): {' '.join(sorted(unknown))} (see --list)")
            sys.exit(2)
        chosen = [s for s in scenarios if s[0] in args.names]
    os.makedirs(args.out, exist_ok=True)
    say(f"# {title}; runs in {args.out}")
    t0 = time.time()
    for name, fn in chosen:
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
    passed, failed = counts()
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"passed": passed, "failed": failed, "seconds": round(time.time() - t0, 1),
                   "checks": [{"ok": ok, "name": name, "detail": str(detail)} for ok, name, detail in RESULTS]},
                  f, indent=1)
    say(f"# total {time.time() - t0:.0f} s")
    say(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed or not RESULTS else 0)
