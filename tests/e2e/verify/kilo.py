#!/usr/bin/env python3
"""Verify lidguard against the REAL Kilo CLI (offline, loopback only): OpenCode's scenarios from
copilot_opencode.py, run with Kilo — OpenCode's fork with the same plugin API, server and run mode.

Usage (as root; `tests/e2e/verify/run.sh kilo` builds lidguard first, then runs this):
    kilo.py [scenario ...] [--out DIR]
    kilo.py --list

`lidguard hook-install --provider kilo` writes lidguard's plugin into Kilo's config directory
($XDG_CONFIG_HOME/kilo/plugins/, or $KILO_CONFIG_DIR/plugins/); the project's kilo.json points
Kilo at the fake chat-completions server (tests/e2e/fakemodel_chat.py on 127.0.0.1).

Scenarios:
  kilo-run             `kilo run`, one bash call, lid open, the plugin in $KILO_CONFIG_DIR: the
                       turn is tracked from chat.message to session.idle
  kilo-serve-deny      `kilo serve`, permission {bash: ask}, lid closed, policy deny: the plugin
                       rejects with lidguard's message, which the model reads; no file is made
  kilo-serve-allow     as above, policy allow: the plugin answers once and the file is made
  kilo-serve-lid-open  lid open: nothing is answered, the session waits (soft-locked)
  kilo-serve-interrupt the turn is aborted while bash runs: the session ends at once

Prints PASS/FAIL per check and finally `N passed, M failed`; exits 1 on any failure.
"""
import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import copilot_opencode as co  # noqa: E402  (OpenCode's scenarios, run, checks and server helpers)

KILO_VERSION = os.environ.get("KILO_VERSION", "7.7.7")
KILO = os.path.join(co.REPO, ".ci/cache/npm", f"@kilocode+cli@{KILO_VERSION}",
                    "node_modules/@kilocode/cli-linux-x64/bin/kilo")
co.FLAVOR = co.Flavor("kilo", KILO, KILO_VERSION, "@kilocode/plugin", "KILO", "https://app.kilo.ai/config.json")
say = co.say

SCENARIOS = [("kilo-run", co.opencode_run),
             ("kilo-serve-deny", lambda root: co.opencode_serve_permission(root, "deny")),
             ("kilo-serve-allow", lambda root: co.opencode_serve_permission(root, "allow")),
             ("kilo-serve-lid-open", lambda root: co.opencode_serve_permission(root, "open")),
             ("kilo-serve-interrupt", co.opencode_serve_interrupt)]


def inside(args):
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout.splitlines()
    if not links or any(": lo:" not in l for l in links):
        say("refusing: the network namespace has links besides lo:\n" + "\n".join(links))
        sys.exit(2)
    for path, what in ((co.LIDGUARD, "lidguard (cargo build -p lidguard)"), (co.FAKE, "fake model"),
                       (KILO, "Kilo CLI (tests/e2e/verify/install_clients.sh)")):
        if not os.path.exists(path):
            say(f"missing {what}: {path}")
            sys.exit(2)
    scen = SCENARIOS
    if args.names:
        unknown = set(args.names) - {s[0] for s in SCENARIOS}
        if unknown:
            say(f"unknown scenario(s): {' '.join(sorted(unknown))} (see --list)")
            sys.exit(2)
        scen = [s for s in SCENARIOS if s[0] in args.names]
    os.makedirs(args.out, exist_ok=True)
    say(f"# lidguard vs Kilo CLI {KILO_VERSION}; runs in {args.out}")
    t0 = time.time()
    for name, fn in scen:
        say(f"== {name}")
        t = time.time()
        try:
            fn(args.out)
        except Exception as e:  # noqa: BLE001 - a crashed scenario is a failure, not an abort
            import traceback
            traceback.print_exc()
            co.check(f"{name}: scenario ran", False, repr(e))
        say(f"   ({time.time() - t:.1f} s)")
    for p in co.STARTED:
        co.stop_popen(p)
    passed = sum(1 for ok, _, _ in co.RESULTS if ok)
    failed = len(co.RESULTS) - passed
    say(f"# total {time.time() - t0:.0f} s")
    say(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed or not co.RESULTS else 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="scenario names (default: all)")
    ap.add_argument("--out", default=os.environ.get("VERIFY_OUT"))
    ap.add_argument("--list", action="store_true", help="list the scenarios")
    ap.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.list:
        for name, _ in SCENARIOS:
            say(name)
        return
    if args.inside:
        inside(args)
        return
    if os.geteuid() != 0:
        say("needs root (for unshare -n)")
        sys.exit(2)
    out = args.out or f"/tmp/lidguard-verify-kilo.{time.strftime('%Y%m%d-%H%M%S')}"
    os.execvp("unshare", ["unshare", "-n", sys.executable, os.path.abspath(__file__), *args.names,
                          "--out", out, "--inside"])


if __name__ == "__main__":
    main()
