#!/usr/bin/env python3
"""Codex CLI capture scenarios; started by run.sh inside a loopback-only network namespace.

Each scenario gets /tmp/lidguard-capture-codex.<ts>/<name>/ with home/, codex/ (CODEX_HOME:
config.toml pointing at the fake provider, hooks.json with every hook event -> hooklog.py logs/),
proj/ (git init), the fake model's script.json + model.jsonl, and the client output. Helpers are
shared with the Claude driver (../claude/common.py).
"""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree
sys.path.insert(0, os.path.join(HERE, "..", "claude"))
import common  # noqa: E402

REPO = common.REPO
CLIENT = os.environ.get("CAPTURE_CLIENT", "codex")
CLIENT_ID = os.environ.get("CAPTURE_CLIENT_ID", "@openai/codex")

# The hook events the 0.171.0 binary knows (checked with strings(1)); no StopFailure/Notification.
EVENTS = """SessionStart SessionEnd UserPromptSubmit PreToolUse PermissionRequest PostToolUse
PreCompact PostCompact SubagentStart SubagentStop Stop Interrupt""".split()

SH = lambda cmd, **kw: {"tool": "exec_command", "input": dict(cmd=cmd, **kw)}  # noqa: E731

SCENARIOS = {
    "exec-bash": dict(
        desc="codex exec, one exec_command tool call", prompt="Run echo hello in the shell.",
        script=[SH("echo hello"), {"text": "Done: it printed hello."}]),
    "exec-tool-failure": dict(
        desc="codex exec, a command that fails (ls of a missing file, exit 2)", prompt="Run a command that fails.",
        script=[SH("ls missing-file.txt"), {"text": "The command failed."}]),
    "exec-http-400": dict(
        desc="codex exec, the model API answers HTTP 400", prompt="Say hi.",
        script=[{"error": 400, "message": "scripted bad request"}]),
    "exec-stop-block": dict(
        desc="codex exec, first Stop hook replies {decision: block}", prompt="Say something.",
        script=[{"text": "First answer."}, {"text": "Second answer after the Stop hook blocked."}],
        replies={"Stop.json": json.dumps({"decision": "block", "reason": "continue please"})}, once={"Stop"}),
    "exec-subagent": dict(
        desc="codex exec, spawn_agent runs a sub-agent that makes one tool call, then wait_agent",
        prompt="Use a sub-agent to list the files.",
        script={"main": [{"tool": "spawn_agent", "namespace": "multi_agent_v1",
                          "input": {"message": "List the files in the current directory."}},
                         {"tool": "wait_agent", "namespace": "multi_agent_v1",
                          "input": {"targets": ["{{output.agent_id}}"], "timeout_ms": 20000}},
                         {"text": "The sub-agent listed the files."},
                         {"text": "(extra main reply)"}],
                "subagent": [SH("ls"), {"text": "Sub-agent: the directory holds README.md."}]}),
    "tui-permission": dict(
        desc="TUI (tmux), exec_command with sandbox_permissions require_escalated, approved",
        mode="tmux", prompt="Create a file named newfile.txt outside the sandbox.",
        script=[SH("touch newfile.txt", sandbox_permissions="require_escalated",
                   justification="Need to create newfile.txt"), {"text": "Created newfile.txt."}]),
    "tui-compact": dict(
        desc="TUI (tmux), one answer, then /compact", mode="tmux", prompt="Say hello.",
        script=[{"text": "Hello."}, {"text": "Summary: the user asked for a greeting; I said hello."},
                {"text": "(extra reply)"}]),
    "tui-interrupt": dict(
        desc="TUI (tmux), Esc while the model reply is still streaming", mode="tmux", prompt="Say hi slowly.",
        script=[{"hang": True, "text": "Thinking about"}, {"text": "Hello again."}]),
}


def setup(run, sc, port):
    home, chome, proj, logs = (os.path.join(run, d) for d in ("home", "codex", "proj", "logs"))
    for d in (home, chome, proj, os.path.join(logs, "replies")):
        os.makedirs(d, exist_ok=True)
    common.git_init(proj, {"README.md": "# Capture project\n"})
    common.write_codex_config(os.path.join(chome, "config.toml"), port, proj)
    hook = f"python3 {REPO}/tests/e2e/hooklog.py {logs}"
    hooks = {}
    for ev in EVENTS:
        cmd = hook
        if ev in sc.get("once", ()):  # reply only the first time: the reply file is removed after use
            cmd = f"{hook}; rc=$?; rm -f {logs}/replies/{ev}.json; exit $rc"
        hooks[ev] = [{"hooks": [{"type": "command", "command": cmd, "timeout": 30}]}]
    common.write_json(os.path.join(chome, "hooks.json"), {"hooks": hooks})
    for name, text in sc.get("replies", {}).items():
        with open(os.path.join(logs, "replies", name), "w") as f:
            f.write(text)
    env = common.base_env(home, port)
    env.update(CODEX_HOME=chome)
    return env, proj, logs


def run_exec(run, sc, env, proj):
    cmd = [CLIENT, "exec", "--skip-git-repo-check", "--json", "--dangerously-bypass-hook-trust", sc["prompt"]]
    with open(os.path.join(run, "client.out"), "w") as out, open(os.path.join(run, "client.err"), "w") as err:
        p = subprocess.Popen(cmd, cwd=proj, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        try:
            rc = p.wait(timeout=sc.get("timeout", 90))
        except subprocess.TimeoutExpired:
            p.kill()
            rc = "timeout"
    time.sleep(1)
    return rc


def run_tmux(name, run, sc, env, proj, logs):
    t = common.Tmux(f"lidguard-cap-{os.getpid()}-{name}", env, proj)
    hl = common.HookLog(logs)
    try:
        t.start(f"{CLIENT} --no-alt-screen --dangerously-bypass-hook-trust")
        t.wait_screen(lambda s: "\u203a" in s or "context left" in s, 40)  # the composer is up
        time.sleep(2)
        t.snapshot("start")
        t.type_line(sc["prompt"])
        if name == "tui-permission":
            hl.wait(lambda r: r["event"] == "PermissionRequest", 40)
            time.sleep(2)
            t.snapshot("permission-dialog")
            t.keys("Enter")  # "Yes, proceed" is preselected
            hl.wait(lambda r: r["event"] == "Stop", 40)
        elif name == "tui-compact":
            hl.wait(lambda r: r["event"] == "Stop", 30)
            time.sleep(1)
            t.type_line("/compact")
            hl.wait(lambda r: r["event"] == "PostCompact", 30, fail=False)
            time.sleep(2)
        elif name == "tui-interrupt":
            hl.wait(lambda r: r["event"] == "UserPromptSubmit", 30)
            time.sleep(3)
            t.snapshot("streaming")
            t.keys("Escape")
            hl.wait(lambda r: r["event"] == "Interrupt", 20, fail=False)
            time.sleep(2)
            t.snapshot("after-escape")
        t.snapshot("final")
        t.keys("C-c")
        time.sleep(0.5)
        t.keys("C-c")
        hl.wait(lambda r: r["event"] == "SessionEnd", 15, fail=False)
        time.sleep(1)
    finally:
        t.stop()
    return 0


def run_one(name, sc, run, port):
    env, proj, logs = setup(run, sc, port)
    if sc.get("mode") == "tmux":
        return run_tmux(name, run, sc, env, proj, logs)
    return run_exec(run, sc, env, proj)


if __name__ == "__main__":
    sys.exit(common.main("codex", CLIENT_ID, SCENARIOS, run_one))
