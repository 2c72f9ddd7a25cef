"""Claude Code's own record of the hooks it ran (`--debug-file`): each hook command with its exit
status and the JSON it printed, read back to check what Claude got from lidguard."""
import json
import os
import re
import time

from harness import lgverify
from harness.constants import LIDGUARD, LID_MSG
from harness.results import R
from harness.scene import check_lidguard_log

CLAUDE_RUN = re.compile(r"^(\S+) \[DEBUG\] (?:Hooks: )?(\w+)(?::(\S+))? \[(.*)\] (?:finished|completed) with status (-?\d+)")
CLAUDE_OUT = re.compile(r'^(\S+) \[DEBUG\] ("Hook \w+.*)$')


def claude_debug(c):
    """(runs, outputs) from Claude's debug log: runs = [{t, event, cmd, status}] (each hook command
    Claude ran and its exit status), outputs = [{t, event, stdout}] (each hook's JSON output)."""
    runs, outs = [], []
    try:
        lines = open(c.debug_log, errors="replace").read().splitlines()
    except OSError:
        return runs, outs
    for line in lines:
        m = CLAUDE_RUN.match(line)
        if m:
            runs.append({"t": lgverify.parse_at(m.group(1)), "event": m.group(2), "cmd": m.group(4),
                         "status": int(m.group(5))})
            continue
        m = CLAUDE_OUT.match(line)
        if m:
            try:
                text = json.loads(m.group(2))
            except ValueError:
                continue
            head, _, body = text.partition(" success:\n")
            if body:
                outs.append({"t": lgverify.parse_at(m.group(1)), "event": head.split()[1].split(":")[0],
                             "stdout": body})
    return runs, outs


def expected_claude_json(behavior):
    """lidguard's PermissionRequest answer: exactly the deny/allow JSON (checked as a predicate)."""
    def ok(got):
        if not (isinstance(got, dict) and set(got) == {"hookSpecificOutput"}):
            return False
        hso = got["hookSpecificOutput"]
        d = hso.get("decision") or {}
        if hso.get("hookEventName") != "PermissionRequest" or set(hso) != {"hookEventName", "decision"}:
            return False
        if behavior == "deny":
            return set(d) == {"behavior", "message"} and d["behavior"] == "deny" and LID_MSG in d["message"]
        return d == {"behavior": "allow"}
    return ok


def check_claude_answer(c, sid, behavior):
    """What Claude got back from lidguard on PermissionRequest, from Claude's own debug log: the
    exact deny/allow JSON (equal to the decision lidguard logged), or no output at all. Claude
    writes its debug log lazily: wait (5 s at most) until the hook's run is in it."""
    deadline = time.time() + 5
    while True:
        runs, outs = claude_debug(c)
        pr_runs = [r for r in runs if r["event"] == "PermissionRequest"]
        pr_outs = [o for o in outs if o["event"] == "PermissionRequest"]
        if pr_runs or time.time() >= deadline:
            break
        time.sleep(0.2)
    if behavior is None:
        return R.check(c.name, "lidguard printed nothing on PermissionRequest (Claude's debug log: the hook ran, "
                               "exit 0, no output)",
                       pr_runs and all(r["status"] == 0 for r in pr_runs) and not pr_outs,
                       f"runs={[(r['cmd'], r['status']) for r in pr_runs]} outputs={[o['stdout'] for o in pr_outs]}")
    try:
        got = json.loads(pr_outs[-1]["stdout"]) if pr_outs else None
    except ValueError:
        got = {"_unparsed": pr_outs[-1]["stdout"]}
    dec = [e.get("decision") for e in c.recs("PermissionRequest") if e.get("sessionId") == sid]
    msg_same = behavior != "deny" or (
        got and dec and dec[-1] and got["hookSpecificOutput"]["decision"].get("message") == dec[-1].get("message"))
    return R.check(c.name, f"Claude got lidguard's {behavior} JSON on PermissionRequest (Claude's debug log; "
                           f"same message as hook-events)",
                   len(pr_outs) == 1 and expected_claude_json(behavior)(got) and msg_same
                   and pr_runs and all(r["status"] == 0 for r in pr_runs),
                   f"stdout={pr_outs[-1]['stdout'] if pr_outs else None!r}")


def claude_stop_runs(c, count):
    """Claude's debug log: the Stop hook runs [(t, status)] and their outputs [(t, stdout)]; waits
    (5 s at most) until `count` runs are in it (Claude writes the log lazily)."""
    end = time.time() + 5
    while True:
        runs, outs = claude_debug(c)
        runs = [(r["t"], r["status"]) for r in runs if r["event"] == "Stop"]
        if len(runs) >= count or time.time() > end:
            return runs, [(o["t"], o["stdout"]) for o in outs if o["event"] == "Stop"]
        time.sleep(0.2)


def permission_denials(c):
    """The `permission_denials` of claude -p's stream-json result line."""
    denials = []
    with open(os.path.join(c.run, "client.out")) as f:
        for line in f:
            o = json.loads(line) if line.strip().startswith("{") else {}
            if o.get("type") == "result":
                denials = o.get("permission_denials") or []
    return denials


def check_claude_health(c):
    runs, _ = claude_debug(c)
    cmd = f"{lgverify.hook_executable(LIDGUARD)} claude-hook"
    ours = [r for r in runs if r["cmd"] == cmd]
    others = [r for r in runs if r["cmd"] != cmd]
    bad = [f"{r['event']}: status {r['status']}" for r in ours if r["status"] != 0]
    received = len(c.events(save=False))
    check_lidguard_log(c, bool(ours) and not bad and not others,
                       "lidguard: every hook run exited 0 (Claude's debug log), no unexpected WARN/ERROR, one daemon",
                       f"{len(ours)} runs of {cmd!r}, {received} events in hook-events"
                       + (f"; bad: {bad[:3]}" if bad else "") + (f"; other commands: {others[:2]}" if others else ""))
