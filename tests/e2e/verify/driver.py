"""The command line every single-agent verification driver shares (gemini.py, qwen.py, kilo.py):
`<driver> [scenario ...] [--out DIR]`, `--list`; as root it re-runs itself inside a private
network namespace (`unshare -n`, only `lo` up), checks that what it needs is installed, runs the
scenarios and ends with `N passed, M failed` (exit 1 on any failure)."""
import argparse
import os
import subprocess
import sys
import time

import copilot_opencode as co


def main(script, doc, title, scenarios, needed, out_prefix):
    """`script` is the driver's `__file__`, `doc` its docstring, `title` the first line it prints,
    `scenarios` [(name, fn(root))], `needed` [(path, what)] checked inside the namespace,
    `out_prefix` the default output root (a timestamp is added)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("names", nargs="*", help="scenario names (default: all)")
    ap.add_argument("--out", default=os.environ.get("VERIFY_OUT"))
    ap.add_argument("--list", action="store_true", help="list the scenarios")
    ap.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.list:
        for name, _ in scenarios:
            co.say(name)
        return
    if args.inside:
        inside(args, title, scenarios, needed)
        return
    if os.geteuid() != 0:
        co.say("needs root (for unshare -n)")
        sys.exit(2)
    out = args.out or f"{out_prefix}.{time.strftime('%Y%m%d-%H%M%S')}"
    os.execvp("unshare", ["unshare", "-n", sys.executable, os.path.abspath(script), *args.names,
                          "--out", out, "--inside"])


def inside(args, title, scenarios, needed):
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout.splitlines()
    if not links or any(": lo:" not in l for l in links):
        co.say("refusing: the network namespace has links besides lo:\n" + "\n".join(links))
        sys.exit(2)
    for path, what in [(co.LIDGUARD, "lidguard (cargo build -p lidguard)"), *needed]:
        if not os.path.exists(path):
            co.say(f"missing {what}: {path}")
            sys.exit(2)
    chosen = scenarios
    if args.names:
        unknown = set(args.names) - {s[0] for s in scenarios}
        if unknown:
            co.say(f"unknown scenario(s): {' '.join(sorted(unknown))} (see --list)")
            sys.exit(2)
        chosen = [s for s in scenarios if s[0] in args.names]
    os.makedirs(args.out, exist_ok=True)
    co.say(f"# {title}; runs in {args.out}")
    t0 = time.time()
    for name, fn in chosen:
        co.say(f"== {name}")
        t = time.time()
        try:
            fn(args.out)
        except Exception as e:  # noqa: BLE001 - a crashed scenario is a failure, not an abort
            import traceback
            traceback.print_exc()
            co.check(f"{name}: scenario ran", False, repr(e))
        co.say(f"   ({time.time() - t:.1f} s)")
    for p in co.STARTED:
        co.stop_popen(p)
    passed = sum(1 for ok, _, _ in co.RESULTS if ok)
    failed = len(co.RESULTS) - passed
    co.say(f"# total {time.time() - t0:.0f} s")
    co.say(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed or not co.RESULTS else 0)
