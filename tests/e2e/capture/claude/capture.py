#!/usr/bin/env python3
"""Claude Code capture scenarios; started by run.sh inside a loopback-only network namespace.

Each scenario gets /tmp/lidguard-capture-claude.<ts>/<name>/ with home/, cfg/ (CLAUDE_CONFIG_DIR,
settings.json with every hook event -> hooklog.py logs/), proj/ (git init + CLAUDE.md), the fake
model's script.json + model.jsonl, and the client output. With --fixtures the hook log is turned into
tests/fixtures/claude/<name>__<Event>.json.
"""
import json
import os
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree
sys.path.insert(0, HERE)
import common  # noqa: E402  (shared run helpers, next to this file)

CLIENT = os.environ.get("CAPTURE_CLIENT", "claude")
CLIENT_ID = os.environ.get("CAPTURE_CLIENT_ID", "@anthropic-ai/claude-code")
# The `sdk-*` scenarios: the Agent SDK platform package's newer binary (run.sh fetches it).
SDK_CLIENT = os.environ.get("CAPTURE_SDK_CLIENT", "")
SDK_CLIENT_VERSION = os.environ.get("CAPTURE_SDK_CLIENT_VERSION", "")
SDK_CLIENT_ID = os.environ.get("CAPTURE_SDK_CLIENT_ID", "@anthropic-ai/claude-agent-sdk-linux-x64")
KEY = "sk-ant-fake-key-for-offline-capture-0123456789"

# Every event in the 2.1.332 binary's hook-event list, except WorktreeCreate/WorktreeRemove (a hook
# on those *replaces* git worktree handling).
EVENTS = """PreToolUse PostToolUse PostToolUseFailure PostToolBatch Notification UserPromptSubmit
UserPromptExpansion SessionStart SessionEnd Stop StopFailure SubagentStart SubagentStop PreCompact
PostCompact PreModelSwitch PostModelSwitch PermissionRequest PermissionDenied Setup TeammateIdle
TaskCreated TaskCompleted Elicitation ElicitationResult ConfigChange InstructionsLoaded CwdChanged
FileChanged DirectoryAdded MessageDisplay PreSkillShellCommand""".split()

# Events 2.1.337 added (an unknown event name in settings.json would make 2.1.332 reject it).
SDK_EVENTS = ["Interrupt"]

BASH = lambda cmd, desc, **kw: {"tool": "Bash", "input": dict(command=cmd, description=desc, **kw)}  # noqa: E731
TASK_NOTIFICATION = """<task-notification>
<task-id>bx7k2m9qa</task-id>
<tool-use-id>toolu_0123456789abcdef01234567</tool-use-id>
<output-file>/tmp/claude-0/-tmp-proj/00000000-0000-4000-8000-000000000000/tasks/bx7k2m9qa.output</output-file>
<status>completed</status>
<summary>Background command "Sleep in background" completed (exit code 0)</summary>
</task-notification>"""

# name -> desc (fixture "scenario" text), prompt (None: type nothing), script (fakemodel.py steps), and
# optionally mode="tmux" (interactive; else `-p`), env, args ("{run}" = run dir), files (extra project
# files), mcp (register elicit_mcp.py under that name), replies (logs/replies/<file> for hooklog.py),
# once (events whose reply is used only once), timeout (seconds, -p only)
SCENARIOS = {
    "print-bash": dict(
        desc="print mode, one Bash tool call", prompt="Run echo hello in the shell.",
        script=[BASH("echo hello", "Print hello"), {"text": "Done: it printed hello."}]),
    "print-tool-failure": dict(
        desc="print mode, a Bash call that fails (ls of a missing file, exit 2)", prompt="Run a command that fails.",
        script=[BASH("ls missing-file.txt", "List a missing file"), {"text": "The command failed."}]),
    "print-permission": dict(
        desc="print mode, Bash touch needs permission (no user to ask: denied)", prompt="Create a file.",
        script=[BASH("touch newfile.txt", "Create newfile.txt"), {"text": "I was not allowed to create it."}]),
    "print-api-error": dict(
        desc="print mode, the model API answers HTTP 500", prompt="Say hi.",
        script=[{"error": 500, "message": "scripted internal error"}]),
    "print-background-bash": dict(
        desc="print mode, Bash run_in_background sleep 30, then the turn ends", prompt="Start a background sleep.",
        script=[BASH("sleep 30", "Sleep in background", run_in_background=True),
                {"text": "Started a background sleep; ending my turn."},
                {"text": "The background sleep finished."}], timeout=120),
    "print-subagent": dict(
        desc="print mode, Agent tool (background by default) runs a subagent that makes one Bash call",
        prompt="Use a subagent to list the files.",
        script={"main": [{"tool": "Agent", "input": {"description": "List files", "subagent_type": "general-purpose",
                                                     "prompt": "List the files in the current directory."}},
                         {"text": "Launched a subagent; ending my turn."},
                         {"text": "The subagent found CLAUDE.md."}],
                "subagent": [BASH("sleep 3; ls", "List files"), {"text": "Subagent: the directory holds CLAUDE.md."}]}),
    "print-subagent-foreground": dict(
        desc="print mode, Agent tool with run_in_background false (foreground subagent, one Bash call)",
        prompt="Use a foreground subagent to list the files.",
        script={"main": [{"tool": "Agent", "input": {"description": "List files", "subagent_type": "general-purpose",
                                                     "prompt": "List the files in the current directory.",
                                                     "run_in_background": False}},
                         {"text": "The subagent found CLAUDE.md."}],
                "subagent": [BASH("ls", "List files"), {"text": "Subagent: the directory holds CLAUDE.md."}]}),
    "print-elicitation": dict(
        desc="print mode, an MCP tool whose server asks for elicitation; the Elicitation hook accepts",
        prompt="Ask me for a colour with the MCP tool.", mcp="elicit",
        args=["--allowedTools", "mcp__elicit__ask_colour"],
        script=[{"tool": "ToolSearch", "input": {"query": "select:mcp__elicit__ask_colour"}},
                {"tool": "mcp__elicit__ask_colour", "input": {}},
                {"text": "You picked a colour."}],
        replies={"Elicitation.json": json.dumps({"hookSpecificOutput": {
            "hookEventName": "Elicitation", "action": "accept", "content": {"colour": "red"}}})}),
    "print-tasks": dict(
        desc="print mode, TaskCreate then TaskUpdate(status completed)", prompt="Track a task.",
        script=[{"tool": "ToolSearch", "input": {"query": "select:TaskCreate,TaskUpdate"}},
                {"tool": "TaskCreate", "input": {"subject": "Write the tests", "description": "Write unit tests",
                                                 "activeForm": "Writing the tests"}},
                {"tool": "TaskUpdate", "input": {"taskId": "1", "status": "in_progress"}},
                {"tool": "TaskUpdate", "input": {"taskId": "1", "status": "completed"}},
                {"text": "Task done."}], env={"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"}),
    "print-stop-block": dict(
        desc="print mode, first Stop hook replies {decision: block}", prompt="Say something.",
        script=[{"text": "First answer."}, {"text": "Second answer after the Stop hook blocked."}],
        replies={"Stop.json": json.dumps({"decision": "block", "reason": "continue please"})},
        once={"Stop"}),
    "print-task-notification-prompt": dict(
        desc="print mode, a prompt that contains a <task-notification> block", prompt=TASK_NOTIFICATION,
        script=[{"text": "Noted the finished background task."}]),
    "print-ask-user-question": dict(
        desc="print mode, AskUserQuestion tool call", prompt="Ask me a question.",
        script=[{"tool": "AskUserQuestion", "input": {"questions": [{
            "question": "Which colour should I use?", "header": "Colour", "multiSelect": False,
            "options": [{"label": "Red", "description": "A warm colour"},
                        {"label": "Blue", "description": "A cool colour"}]}]}},
                {"text": "Thanks for the answer."}]),
    "print-slash-command": dict(
        desc="print mode, a custom slash command (.claude/commands/hello.md) with an inline !`shell` line",
        prompt="/hello", files={".claude/commands/hello.md": (
            "---\ndescription: Say hello\nallowed-tools: Bash(echo:*)\n---\n"
            "Shell said: !`echo from-command-shell`\nNow say hello.\n")},
        script=[{"text": "Hello from the command."}]),
    "print-cwd-change": dict(
        desc="print mode, --add-dir and a Bash call that cds into a subdirectory",
        prompt="Go into a subdirectory.", args=["--add-dir", "{run}/extra"], files={"sub/README.md": "sub\n"},
        script=[BASH("cd sub && pwd", "Enter sub"), {"text": "Now in sub."}]),
    "print-setup": dict(
        desc="print mode with --init (Setup hooks)", prompt="Say hi.", args=["--init"],
        script=[{"text": "Hi."}]),
    "tmux-config-model": dict(
        desc="interactive (tmux), settings.json edited during the session, then /model sonnet",
        mode="tmux", prompt=None, script=[{"text": "(unused)"}]),
    "tmux-permission": dict(
        desc="interactive (tmux), Bash touch needs permission, approved after the Notification",
        mode="tmux", prompt="Create a file named newfile.txt.",
        script=[BASH("touch newfile.txt", "Create newfile.txt"), {"text": "Created newfile.txt."}]),
    "tmux-api-error": dict(
        desc="interactive (tmux), the model API answers HTTP 500", mode="tmux", prompt="Say hi.",
        script=[{"error": 500, "message": "scripted internal error"}]),
    "tmux-interrupt": dict(
        desc="interactive (tmux), Esc while the model reply is still streaming", mode="tmux", prompt="Say hi slowly.",
        script=[{"hang": True, "text": "Thinking about"}, {"text": "Hello again."}]),
    "tmux-compact": dict(
        desc="interactive (tmux), one answer, then /compact", mode="tmux", prompt="Say hello.",
        script=[{"text": "Hello."}, {"text": "<summary>The user asked for a greeting; I said hello.</summary>"},
                {"text": "(extra reply)"}]),
    "tmux-elicitation": dict(
        desc="interactive (tmux), an MCP tool whose server asks for elicitation; the user answers the form",
        mode="tmux", prompt="Ask me for a colour with the MCP tool.", mcp="elicit",
        args=["--allowedTools", "mcp__elicit__ask_colour"],
        script=[{"tool": "ToolSearch", "input": {"query": "select:mcp__elicit__ask_colour"}},
                {"tool": "mcp__elicit__ask_colour", "input": {}},
                {"text": "You picked a colour."}]),
    "tmux-background": dict(
        desc="interactive (tmux), Bash run_in_background sleep 5 outlives the turn, then notifies",
        mode="tmux", prompt="Start a short background sleep.",
        script=[BASH("sleep 5; echo slept", "Short background sleep", run_in_background=True),
                {"text": "Started a background sleep; ending my turn."},
                {"text": "The background sleep finished."}]),
    "tmux-ask-user-question": dict(
        desc="interactive (tmux), AskUserQuestion dialog answered with Enter",
        mode="tmux", prompt="Ask me a question.",
        script=[{"tool": "AskUserQuestion", "input": {"questions": [{
            "question": "Which colour should I use?", "header": "Colour", "multiSelect": False,
            "options": [{"label": "Red", "description": "A warm colour"},
                        {"label": "Blue", "description": "A cool colour"}]}]}},
                {"text": "Thanks for the answer."}]),
    # Claude Code 2.1.337 (Agent SDK 0.3.337's platform package): what it adds.
    "sdk-print-bash": dict(
        client="sdk", desc="2.1.337, print mode, one Bash tool call", prompt="Run echo hello in the shell.",
        script=[BASH("echo hello", "Print hello"), {"text": "Done: it printed hello."}]),
    "sdk-tmux-interrupt": dict(
        client="sdk", desc="2.1.337, interactive (tmux), Esc while the model reply is still streaming",
        mode="tmux", prompt="Say hi slowly.",
        script=[{"hang": True, "text": "Thinking about"}, {"text": "Hello again."}]),
    "sdk-tmux-interrupt-tool": dict(
        client="sdk", desc="2.1.337, interactive (tmux), Esc while a Bash tool (a 30 s wait) runs",
        mode="tmux", prompt="Wait for a while.", args=["--allowedTools", "Bash(python3:*)"],
        # Claude Code refuses a plain long `sleep` in the foreground
        script=[BASH("python3 -c 'import time; time.sleep(30)'", "Wait 30 seconds"),
                {"text": "(after the interrupt)"}]),
    "sdk-tmux-permission-refused": dict(
        client="sdk", desc="2.1.337, interactive (tmux), Bash touch needs permission, refused with Esc",
        mode="tmux", prompt="Create a file named newfile.txt.",
        script=[BASH("touch newfile.txt", "Create newfile.txt"), {"text": "(after the refusal)"}]),
    "sdk-tmux-cron": dict(
        client="sdk", desc="2.1.337, interactive (tmux), CronCreate every minute: the turn ends, the cron wakes the session",
        mode="tmux", prompt="Check the build every minute.",
        script=[{"tool": "ToolSearch", "input": {"query": "select:CronCreate"}},
                {"tool": "CronCreate", "input": {"cron": "*/1 * * * *", "prompt": "Check the build.",
                                                 "recurring": True}},
                {"text": "Scheduled: I will check the build every minute."},
                {"text": "The build is green."},
                {"text": "The build is still green."}]),
    "sdk-tmux-wakeup": dict(
        client="sdk", desc="2.1.337, interactive (tmux), ScheduleWakeup in 60 s (a one-shot session cron)",
        mode="tmux", prompt="Look again in a minute.",
        script=[{"tool": "ToolSearch", "input": {"query": "select:ScheduleWakeup"}},
                {"tool": "ScheduleWakeup", "input": {"delaySeconds": 60, "prompt": "Look again.",
                                                     "reason": "the user asked to look again in a minute"}},
                {"text": "I will look again in a minute."},
                {"text": "Looked again: nothing changed."}]),
}
for _sc in SCENARIOS.values():
    if _sc.get("client") == "sdk":
        _sc["client_id"] = SDK_CLIENT_ID


def client_of(sc):
    """(binary, version) of the Claude Code a scenario runs."""
    if sc.get("client") == "sdk":
        return SDK_CLIENT, SDK_CLIENT_VERSION
    return CLIENT, CLIENT_ID.rsplit("@", 1)[1]


def setup(run, sc, port):
    home, cfg, proj, logs = (os.path.join(run, d) for d in ("home", "cfg", "proj", "logs"))
    for d in (home, cfg, proj, os.path.join(logs, "replies"), os.path.join(run, "tmp")):
        os.makedirs(d, exist_ok=True)
    os.makedirs(os.path.join(run, "extra"), exist_ok=True)
    common.git_init(proj, {"CLAUDE.md": "# Capture project\nScratch project for hook captures.\n", **sc.get("files", {})})
    hook = f"python3 {REPO}/tests/e2e/hooklog.py {logs}"
    hooks = {}
    extra = os.environ.get("CAPTURE_EXTRA_EVENTS", "").split()  # e.g. a newer event, to see how an older client takes it
    for ev in EVENTS + (SDK_EVENTS if sc.get("client") == "sdk" else []) + extra:
        cmd = hook
        if ev in sc.get("once", ()):  # reply only the first time: the reply file is removed after use
            cmd = f"{hook}; rc=$?; rm -f {logs}/replies/{ev}.json; exit $rc"
        hooks[ev] = [{"hooks": [{"type": "command", "command": cmd, "timeout": 30}]}]
    common.write_json(os.path.join(cfg, "settings.json"), {"hooks": hooks})
    common.write_json(os.path.join(cfg, ".claude.json"), {
        "hasCompletedOnboarding": True, "lastOnboardingVersion": client_of(sc)[1],
        "theme": "dark", "customApiKeyResponses": {"approved": [KEY[-20:]], "rejected": []},
        "projects": {proj: {"hasTrustDialogAccepted": True, "allowedTools": []}}})
    for name, text in sc.get("replies", {}).items():
        with open(os.path.join(logs, "replies", name), "w") as f:
            f.write(text)
    env = common.base_env(home, port)
    env.update(CLAUDE_CONFIG_DIR=cfg, ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}", ANTHROPIC_API_KEY=KEY,
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1",
               DISABLE_AUTOUPDATER="1", DISABLE_INSTALLATION_CHECKS="1",
               CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL="1", CLAUDE_CODE_MAX_RETRIES="0",
               CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS="10000", CLAUDE_CODE_TMPDIR=os.path.join(run, "tmp"))
    env.update(sc.get("env", {}))
    return env, proj, logs


def extra_args(run, sc):
    args = [a.replace("{run}", run) for a in sc.get("args", [])]
    if sc.get("mcp"):
        mcp = os.path.join(run, "mcp.json")
        common.write_json(mcp, {"mcpServers": {sc["mcp"]: {
            "type": "stdio", "command": sys.executable, "args": [os.path.join(HERE, "elicit_mcp.py")]}}})
        args += ["--mcp-config", mcp]
    return args


def run_print(run, sc, env, proj, logs):
    cmd = [client_of(sc)[0], "-p", sc["prompt"], "--output-format", "stream-json", "--verbose"] + extra_args(run, sc)
    with open(os.path.join(run, "client.out"), "w") as out, open(os.path.join(run, "client.err"), "w") as err:
        p = subprocess.Popen(cmd, cwd=proj, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        try:
            rc = p.wait(timeout=sc.get("timeout", 90))
        except subprocess.TimeoutExpired:
            p.kill()
            rc = "timeout"
    time.sleep(2)  # StopFailure / SessionEnd hooks are fire-and-forget; let them land
    return rc


def run_tmux(name, run, sc, env, proj, logs):
    t = common.Tmux(f"lidguard-cap-{os.getpid()}-{name}", env, proj)
    hl = common.HookLog(logs)
    try:
        # interactive 2.1.332 defaults to auto mode (a classifier decides); ask like a default user
        t.start(" ".join(shlex.quote(a) for a in [client_of(sc)[0], "--permission-mode", "default"] + extra_args(run, sc)))
        t.wait_screen(lambda s: "\u276f" in s, 40)  # the prompt marker
        time.sleep(2)
        if sc["prompt"]:
            t.type_line(sc["prompt"])
        if name == "tmux-config-model":
            settings = os.path.join(env["CLAUDE_CONFIG_DIR"], "settings.json")
            with open(settings) as f:
                cur = json.load(f)
            cur["cleanupPeriodDays"] = 31
            common.write_json(settings, cur)
            hl.wait(lambda r: r["event"] == "ConfigChange", 15, fail=False)
            t.type_line("/model sonnet")
            hl.wait(lambda r: r["event"] == "PostModelSwitch", 15, fail=False)
            time.sleep(1)
            t.snapshot("after-model")
        elif name == "tmux-permission":
            hl.wait(lambda r: r["event"] == "PermissionRequest", 40)
            hl.wait(lambda r: r["event"] == "Notification", 20)  # permission_prompt comes ~6 s later
            t.snapshot("permission-dialog")
            t.keys("Enter")  # "1. Yes" is preselected
            hl.wait(lambda r: r["event"] == "Stop", 40)
            # the idle_prompt notification comes ~60 s after the turn ends
            hl.wait(lambda r: r["event"] == "Notification" and "idle" in r["stdin"], 90)
        elif name == "tmux-api-error":
            hl.wait(lambda r: r["event"] == "StopFailure", 30)
        elif name in ("tmux-interrupt", "sdk-tmux-interrupt"):
            hl.wait(lambda r: r["event"] == "UserPromptSubmit", 20)
            time.sleep(3)
            t.snapshot("streaming")
            t.keys("Escape")
            time.sleep(5)
            t.snapshot("after-escape")
        elif name == "sdk-tmux-interrupt-tool":
            hl.wait(lambda r: r["event"] == "PreToolUse", 30)
            time.sleep(3)
            t.snapshot("tool-running")
            t.keys("Escape")
            hl.wait(lambda r: r["event"] == "PostToolUseFailure", 15, fail=False)
            time.sleep(5)
            t.snapshot("after-escape")
        elif name == "sdk-tmux-permission-refused":
            hl.wait(lambda r: r["event"] == "PermissionRequest", 40)
            time.sleep(3)
            t.snapshot("permission-dialog")
            t.keys("Escape")
            time.sleep(5)
            t.snapshot("after-escape")
        elif name in ("sdk-tmux-cron", "sdk-tmux-wakeup"):
            hl.wait(lambda r: r["event"] == "Stop", 40)
            t.snapshot("scheduled")
            # the session cron fires at the next minute (a recurring one up to 30 s later)
            hl.wait(lambda r: r["event"] == "Stop", 150, count=2)
            t.snapshot("after-wakeup")
        elif name == "tmux-compact":
            hl.wait(lambda r: r["event"] == "Stop", 30)
            time.sleep(1)
            t.type_line("/compact")
            hl.wait(lambda r: r["event"] == "PostCompact", 40, fail=False)
            hl.wait(lambda r: r["event"] == "SessionStart", 10, count=2, fail=False)
        elif name == "tmux-elicitation":
            hl.wait(lambda r: r["event"] == "Elicitation", 40)
            time.sleep(3)
            t.snapshot("elicitation-form")
            t.keys("-l", "red")
            time.sleep(0.5)
            t.keys("Enter")
            time.sleep(1.5)
            t.snapshot("elicitation-after-enter")
            for _ in range(3):
                if hl.wait(lambda r: r["event"] == "ElicitationResult", 4, fail=False):
                    break
                t.keys("Enter")
            hl.wait(lambda r: r["event"] == "Stop", 30, fail=False)
        elif name == "tmux-background":
            hl.wait(lambda r: r["event"] == "Stop", 40)
            hl.wait(lambda r: r["event"] == "Stop", 40, count=2)  # the task-notification turn
        elif name == "tmux-ask-user-question":
            hl.wait(lambda r: r["event"] in ("PermissionRequest", "PreToolUse"), 40)
            time.sleep(8)
            t.snapshot("question-dialog")
            t.keys("Enter")
            time.sleep(2)
            t.snapshot("after-enter")
            if not hl.wait(lambda r: r["event"] == "Stop", 20, fail=False):
                t.keys("Enter")  # multi-step dialogs: confirm "Submit answers"
                hl.wait(lambda r: r["event"] == "Stop", 30)
        t.snapshot("final")
        t.type_line("/exit")
        hl.wait(lambda r: r["event"] == "SessionEnd", 20, fail=False)
        time.sleep(1)
    finally:
        t.stop()
    return 0


def run_one(name, sc, run, port):
    env, proj, logs = setup(run, sc, port)
    if sc.get("mode") == "tmux":
        return run_tmux(name, run, sc, env, proj, logs)
    return run_print(run, sc, env, proj, logs)


if __name__ == "__main__":
    sys.exit(common.main("claude", CLIENT_ID, SCENARIOS, run_one))
