#!/usr/bin/env python3
"""Every captured payload fixture through the Windows `lidguard.exe <agent>-hook` under Wine.

The Linux conformance test (crates/lidguard/tests/conformance.rs) runs the same fixtures through
the Linux binaries. Here each fixture's payload goes to `lidguard.exe <agent>-hook` twice: against
a daemon whose lid reads open and one whose lid reads closed (the LIDGUARD_PROC_ROOT /
LIDGUARD_SYS_ROOT seam), and the exact stdout must equal the fixture's `stdoutOpenLid` /
`stdoutClosedLid`. The normalized events the open-lid daemon recorded, read once at the end with
`hook-events --json`, must equal the fixtures' `events` in order.

Usage: conformance.py WINE EXE_DIR FIXTURES_DIR WORK_DIR
"""

import concurrent.futures
import datetime
import json
import os
import re
import sys
import time
from pathlib import Path

from winerun import run as run_exe, windows_path

wine, exe_dir, fixtures_dir, work = sys.argv[1:5]
exe_dir, fixtures_dir, work = Path(exe_dir).resolve(), Path(fixtures_dir), Path(work)
repo = Path(__file__).resolve().parents[2]


def agents():
    """(provider, hook command, event on the command line) from the agents' own descriptors."""
    out = []
    for mod in sorted((repo / "crates/lidguard-providers/src/agents").glob("*/mod.rs")):
        text = mod.read_text()
        # `Agent::new(provider, ["<x>-hook", "<x>-hooks"], …)`; the event goes on the command
        # line only where the entry says `event_on_command_line: true`.
        hook = re.search(r'\[\s*"([^"]+-hook)",\s*"[^"]+-hooks"\s*\]', text)
        if hook:
            on_line = re.search(r"event_on_command_line:\s*true", text) is not None
            out.append((mod.parent.name, hook.group(1), on_line))
    return {p: (h, e) for p, h, e in out}


AGENTS = agents()
if not AGENTS:
    sys.exit("found no agent entries (`Agent::new(…, [\"<x>-hook\", …])`) under crates/lidguard-providers/src/agents")

# Hook runs Wine lost and that were run again (see Home.hook); more than this fails the run:
# one in 50 fixtures (each runs twice), at least 3 — Wine 8 kills a few processes under load.
SIGNAL_RETRIES: list = []
MAX_SIGNAL_RETRIES = 3


def linux_cwd(event):
    """The hooks run in `/`, which Windows sees as `Z:\\`: payloads without a cwd take the
    hook's own, so that one directory is mapped back to the form the Linux run recorded."""
    event = dict(event)
    if event.get("cwd") == "Z:\\":
        event["cwd"] = "/"
    session = event.get("sessionId", "")
    if session.endswith(":Z:\\"):
        event["sessionId"] = session[: -len("Z:\\")] + "/"
    return event


class Home:
    def __init__(self, lid: str):
        self.root = work / f"home-{lid}"
        self.rerun_copies: list = []  # (index, count) of events recorded twice, see hook
        proc = self.root / "proc/acpi/button/lid/LID0"
        proc.mkdir(parents=True, exist_ok=True)
        (proc / "state").write_text(f"state:      {lid}\n")
        panel = self.root / "sys/class/drm/card0-eDP-1"
        panel.mkdir(parents=True, exist_ok=True)
        (panel / "status").write_text("connected\n")
        self.env = dict(os.environ)
        self.env.update(
            {
                "LIDGUARD_HOME": windows_path(self.root / "lidguard"),
                "LIDGUARD_PROC_ROOT": windows_path(self.root / "proc"),
                "LIDGUARD_SYS_ROOT": windows_path(self.root / "sys"),
                "WINEDEBUG": "-all",
            }
        )
        out = self.run(["start", "--provider", "custom", "--session", "keepalive"])
        if out.returncode != 0:
            sys.exit(f"cannot start the {lid}-lid daemon: {out.stderr.decode(errors='replace')}")

    def run(self, args, stdin=b""):
        return run_exe(wine, exe_dir / "lidguard.exe", args, self.env, stdin)

    def hook(self, provider: str, event: str, stdin: bytes, events_before=None):
        """Runs one hook. `events_before` (the open-lid home only) is how many events the daemon
        should hold before this run, so a lost run that had already delivered its event is not
        counted twice."""
        command, event_on_line = AGENTS[provider]
        args = [command] + (["--event", event] if event_on_line else [])
        out = self.run(args, stdin)
        # Under load, and on a freshly made prefix, Wine now and then loses a process: killed
        # from outside it (SIGKILL), or ended with a non-zero code and no output at all. lidguard's
        # hook cannot end that way (it always exits 0, and a panic writes to stderr), so such a
        # run says nothing about lidguard: it is run again once — and counted in the summary.
        lost = out.returncode < 0 or (out.returncode != 0 and not out.stdout and not out.stderr)
        if lost and len(SIGNAL_RETRIES) < MAX_SIGNAL_RETRIES:
            how = f"signal {-out.returncode}" if out.returncode < 0 else f"exit {out.returncode}, no output"
            # Wine may kill the process after its one round trip (seen: at exit), so the daemon
            # may already hold the event; the run again then records it a second time, right
            # after: those copies are left out of the comparison.
            delivered = 0
            if events_before is not None:
                held = len(self.raw_events())
                delivered = held - events_before - self.dropped()
                if delivered:
                    self.rerun_copies.append((held, delivered))
                    how += ", its event already recorded"
            SIGNAL_RETRIES.append(f"{provider} {event} ({how})")
            out = self.run(args, stdin)
        if out.returncode != 0 or out.stderr:
            return None, f"exit {out.returncode}, stderr {out.stderr!r}"
        return out.stdout.decode(), None

    def raw_events(self):
        out = self.run(["hook-events", "--json", "--count", "10000"])
        return [wake_up_ahead(linux_cwd(e["event"]), e["at"]) for e in json.loads(out.stdout)]

    def dropped(self):
        return sum(n for _, n in self.rerun_copies)

    def events(self):
        """The recorded events without the second copies a run again made (see hook)."""
        events = self.raw_events()
        for start, n in reversed(self.rerun_copies):
            del events[start:start + n]
        return events

    def stop(self):
        self.run(["stop", "--provider", "custom", "--session", "keepalive"])


def wake_up_ahead(event, at):
    """A wake-up time the hook computed from the agent's schedule and the clock (Claude's
    `session_crons`): checked to lie ahead of the event, within a year, then written `"ahead"` as
    the fixtures have it (the Linux conformance test does the same)."""
    wakes = event.get("wakesAt")
    if wakes is not None:
        ahead = stamp(wakes) - stamp(at)
        event["wakesAt"] = "ahead" if 0 < ahead <= 366 * 24 * 3600 else f"not ahead: {wakes} at {at}"
    return event


def stamp(text):
    """RFC 3339 UTC (`…Z`, any fraction) as epoch seconds."""
    base, _, frac = text.rstrip("Z").partition(".")
    seconds = datetime.datetime.strptime(base, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return seconds.timestamp() + (float("0." + frac) if frac else 0.0)


def main():
    files = sorted(
        f for p in AGENTS for f in (fixtures_dir / p).glob("*.json")
    )
    if not files:
        sys.exit(f"no fixtures under {fixtures_dir}")
    global MAX_SIGNAL_RETRIES
    MAX_SIGNAL_RETRIES = max(3, len(files) // 50)
    started = time.monotonic()
    open_home, closed_home = Home("open"), Home("closed")
    failures, expected_events = [], []
    per_agent = {}
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
    for path in files:
        fixture = json.loads(path.read_text())
        provider, event, expect = fixture["provider"], fixture["event"], fixture["expect"]
        stdin = fixture["stdin"]
        stdin = (stdin if isinstance(stdin, str) else json.dumps(stdin)).encode()
        # The two lids' hooks run side by side (each daemon sees its own in order): Wine's
        # process start is most of the time, and there are two cores.
        runs = [
            (key, pool.submit(home.hook, provider, event, stdin,
                              len(expected_events) if home is open_home else None))
            for home, key in ((open_home, "stdoutOpenLid"), (closed_home, "stdoutClosedLid"))
        ]
        for key, run in runs:
            out, error = run.result()
            if error:
                failures.append(f"{path.name} ({key}): {error}")
            elif out != expect[key]:
                failures.append(f"{path.name} ({key}):\n  expected {expect[key]!r}\n  observed {out!r}")
        expected_events.extend(expect["events"])
        per_agent[provider] = per_agent.get(provider, 0) + 1
    recorded = open_home.events()
    if recorded != expected_events:
        first = next(
            (i for i, (a, b) in enumerate(zip(recorded, expected_events)) if a != b),
            min(len(recorded), len(expected_events)),
        )
        failures.append(
            f"normalized events differ at #{first} of {len(expected_events)} expected "
            f"({len(recorded)} recorded):\n  expected {expected_events[first:first + 1]}\n"
            f"  recorded {recorded[first:first + 1]}"
        )
    open_home.stop()
    closed_home.stop()
    elapsed = time.monotonic() - started
    counts = ", ".join(f"{p} {n}" for p, n in sorted(per_agent.items()))
    if failures:
        print(f"conformance under Wine: {len(failures)} failure(s)")
        if SIGNAL_RETRIES:
            print(f"  (and {len(SIGNAL_RETRIES)} run(s) lost by Wine, run again: "
                  + "; ".join(SIGNAL_RETRIES) + ")")
        print("\n".join(failures[:40]))
        sys.exit(1)
    print(
        f"conformance under Wine: {len(files)} fixtures passed through lidguard.exe "
        f"(open and closed lid, exact stdout; {len(expected_events)} normalized events in order) "
        f"[{counts}] in {elapsed:.0f} s"
    )
    if SIGNAL_RETRIES:
        print(f"  {len(SIGNAL_RETRIES)} hook run(s) lost by Wine and run again: "
              + "; ".join(SIGNAL_RETRIES))


main()
