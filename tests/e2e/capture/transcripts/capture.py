#!/usr/bin/env python3
"""Capture real agent transcript files (JSONL) for lidguard's transcript monitors.

Started by run.sh inside a loopback-only network namespace (`unshare -n`, only `lo` up). Each
scenario drives the real interactive client (TUI under a private `tmux -L` server) against a scripted
fake model on 127.0.0.1 and copies the client's own transcript file at the moments that matter:

  codex    $CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl           (fakemodel.py, Responses API)
  claude   $CLAUDE_CONFIG_DIR/projects/<cwd-slug>/<session-id>.jsonl  (fakemodel.py, Messages API)
  copilot  $COPILOT_HOME/session-state/<session-id>/events.jsonl     (fakemodel_chat.py)

Per scenario: /tmp/lidguard-capture-transcripts.<ts>/<scenario>/ with home/, the client's config dir,
proj/ (git init), script.json + model.jsonl (fake model), screen-*.txt (tmux screenshots) and
snap-<label>.jsonl (byte copies of the transcript). No hooks are installed: the driver waits on the
transcript file itself. With --fixtures the snapshots are copied to
tests/fixtures/transcripts/<provider>/<fixture>.jsonl with a <fixture>.expect.json next to each.

    capture.py [--list] [--fixtures] [scenario ...]
    capture.py --from=/tmp/lidguard-capture-transcripts.<ts> [scenario ...]   (fixtures from an earlier run)
"""
import glob
import json
import os
import re
import shlex
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree
sys.path.insert(0, os.path.join(HERE, "..", "claude"))
import common  # noqa: E402  (fake model, env, tmux helpers shared with the hook captures)

REPO = common.REPO
sys.path.insert(0, os.path.join(REPO, "tests", "e2e", "verify"))
from harness import clients  # noqa: E402  (the agent CLIs: one table for the suite and the captures)

CLIENTS = {
    "codex": (clients.CODEX, f"@openai/codex@{clients.CODEX_VERSION}"),
    "claude": (clients.CLAUDE, f"@anthropic-ai/claude-code@{clients.CLAUDE_VERSION}"),
    "copilot": (clients.COPILOT, f"@github/copilot@{clients.COPILOT_VERSION}"),
}
FAKE_CHAT = os.path.join(REPO, "tests", "e2e", "fakemodel_chat.py")
COPILOT_PKGCACHE = os.path.join(REPO, ".ci", "cache", "copilot-xdg-cache")  # first-run extraction, reused
CLAUDE_KEY = "sk-ant-fake-key-for-offline-capture-0123456789"
FIXTURES = os.path.join(REPO, "tests", "fixtures", "transcripts")
SLOW = float(os.environ.get("CAPTURE_SLOW", "2"))  # multiplies every wait (the box can be busy)

SLEEP_CODEX = {"tool": "exec_command", "input": {"cmd": "sleep 30"}}
RUI_ARGS = {"questions": [{
    "id": "colour", "header": "Colour", "question": "Which colour should I use?",
    "options": [{"label": "Red (Recommended)", "description": "A warm colour."},
                {"label": "Blue", "description": "A cool colour."}]}]}


def bash(cmd, desc, **kw):
    return {"tool": "Bash", "input": dict(command=cmd, description=desc, **kw)}


# name -> provider, desc, prompt, script (fake model steps), and per-scenario extras.
# "fixtures": {snapshot label: (fixture name, expect dict)}; expect values "{call_id}" etc. are filled
# from what the capture saw.
RESUME = "Now just say done."
RESUMED = "Resumed answer: done."


def resumed(provider, marker, extra=""):
    return ("{}-then-prompt", {
        "provider": provider, "last_signal": "activity",
        "notes": f"the same session after the interrupt: the user typed a new prompt and the turn answered "
                 f"normally. The {marker} is still in the file but no longer the latest one of its kind, "
                 f"so it must not be reported again.{extra}"})


# name -> provider, desc, prompt, script (fake model steps), and per-scenario extras.
# "fixtures": {snapshot label: (fixture name, expect dict)}; "{x}" in expect values is filled from
# what the capture saw (info.json: call_id, task_id, ...); "{}" in a name is the first fixture's name.
# "resume": after the "final" snapshot type RESUME, wait for RESUMED, take snapshot "resumed".
SCENARIOS = {
    "codex-tool-interrupt": dict(
        provider="codex", desc="Codex TUI: exec_command `sleep 30` running, Escape pressed; then a new prompt",
        prompt="Sleep for thirty seconds in the shell.", resume=True,
        script=[SLEEP_CODEX, {"text": RESUMED}],
        fixtures={"final": ("tool-interrupt", {
            "provider": "codex", "last_signal": "stop", "reason": "turn_aborted",
            "notes": "exec_command `sleep 30` was running when Escape was pressed. Codex then wrote a "
                     "function_call_output ('aborted by user') for the call, a user message holding "
                     "<turn_aborted>, and last an event_msg with payload.type=turn_aborted "
                     "(payload.reason=interrupted). The sleep itself keeps running as a background "
                     "terminal ('1 background terminal running')."}),
                  "resumed": resumed("codex", "event_msg turn_aborted")}),
    "codex-stream-interrupt": dict(
        provider="codex", desc="Codex TUI: Escape while the model reply is still streaming (no tool)",
        prompt="Say hi slowly.", script=[{"hang": True, "text": "Thinking about"}, {"text": "(unused)"}],
        fixtures={"final": ("stream-interrupt", {
            "provider": "codex", "last_signal": "stop", "reason": "turn_aborted",
            "notes": "Escape while the reply streamed (no tool call); the file ends with "
                     "event_msg turn_aborted (payload.reason=interrupted)."})}),
    "codex-request-user-input": dict(
        provider="codex", desc="Codex TUI in Plan mode (/plan): request_user_input question shown, then answered",
        prompt="Ask me which colour to use.", plan_mode=True,
        script=[{"tool": "request_user_input", "input": RUI_ARGS}, {"text": "You chose a colour; done.", "delay": 8}],
        fixtures={
            "pending": ("request-user-input-pending", {
                "provider": "codex", "last_signal": "soft_lock",
                "reason": "codex_transcript_request_user_input_pending", "call_id": "{call_id}",
                "notes": "response_item with payload.type=function_call, payload.name=request_user_input and "
                         "payload.call_id={call_id}; no function_call_output with that call_id yet. The TUI "
                         "shows the question. Nothing else marks the wait (no event_msg for it)."}),
            "answered": ("request-user-input-answered", {
                "provider": "codex", "last_signal": "activity", "answered_call_id": "{call_id}",
                "notes": "the same file right after the answer, while the model's next reply was still "
                         "pending: a retained_context record (payload.type=verified_answer, payload.call_id) "
                         "and a response_item function_call_output with the same call_id follow the "
                         "function_call. The soft lock is cleared."}),
            "final": ("request-user-input-complete", {
                "provider": "codex", "last_signal": "activity", "answered_call_id": "{call_id}",
                "notes": "the same file once the turn ended: final assistant message and "
                         "event_msg task_complete. task_complete is not a transcript stop signal (the "
                         "Stop hook ends the turn); the answered request must not soft-lock."})}),
    "codex-request-user-input-default-mode": dict(
        provider="codex", desc="Codex TUI in Default mode: the model calls request_user_input anyway (refused at once)",
        prompt="Ask me which colour to use.",
        script=[{"tool": "request_user_input", "input": RUI_ARGS}, {"text": "I will pick red myself."}],
        fixtures={"final": ("request-user-input-default-mode", {
            "provider": "codex", "last_signal": "activity", "answered_call_id": "{call_id}",
            "notes": "Default mode offers request_user_input in the tools list, but Codex answers the call "
                     "itself within ms: function_call_output.output = 'request_user_input is unavailable in "
                     "Default mode'; no question is shown. Then the final answer and task_complete. Must "
                     "not soft-lock."})}),
    "claude-tool-interrupt": dict(
        provider="claude",
        desc="Claude Code (tmux): Bash `echo waiting; sleep 30; echo done` running, Escape pressed; then a new prompt",
        prompt="Sleep for thirty seconds in the shell.", resume=True,
        # a bare `sleep 30` is refused by 2.1.332 ("Blocked: standalone sleep 30 ...")
        script=[bash("echo waiting; sleep 30; echo done", "Wait thirty seconds"), {"text": RESUMED}],
        fixtures={"final": ("tool-interrupt", {
            "provider": "claude", "last_signal": "stop", "reason": "interrupted",
            "marker": "[Request interrupted by user for tool use]",
            "notes": "Bash was running; Escape wrote a user record with the tool_result (is_error, "
                     "toolUseResult 'User rejected tool use', toolDenialKind 'user-rejected') and then a "
                     "user record whose message.content[0].text is the marker (rowSource 'harness', "
                     "interruptedMessageId). Non-message records (last-prompt, mode, permission-mode, "
                     "atis-latch) follow it: the detector must look at the latest *user* record, not the "
                     "last line."}),
                  "resumed": resumed("claude", "interrupt marker", (
                      " Trap: the api-request-blob record written for the new request has message.role=user "
                      "and repeats the marker as a text block ('[Request interrupted by user for tool use]\\n', "
                      "with a trailing newline) after the new prompt; pick user records by top-level "
                      "type=user, not by message.role."))}),
    "claude-stream-interrupt": dict(
        provider="claude", desc="Claude Code (tmux): Escape while the model reply is still streaming",
        prompt="Say hi slowly.", script=[{"hang": True, "text": "Thinking about"}, {"text": "(unused)"}],
        fixtures={"final": ("stream-interrupt", {
            "provider": "claude", "last_signal": "stop", "reason": "interrupted",
            "marker": "[Request interrupted by user]",
            "notes": "Escape during streaming: the partial assistant record (stop_reason null, text "
                     "'Thinking about'), then a user record whose message.content[0].text is the marker."})}),
    "claude-background-notification": dict(
        provider="claude",
        desc="Claude Code (tmux): Bash run_in_background `sleep 5; echo slept`, turn ends, notification turn",
        prompt="Start a short background sleep.",
        script=[bash("sleep 5; echo slept", "Short background sleep", run_in_background=True),
                {"text": "Started a background sleep; ending my turn."},
                {"text": "The background sleep finished."}],
        fixtures={
            "idle-pending": ("background-pending", {
                "provider": "claude", "last_signal": "activity", "task_id": "{task_id}",
                "pending_background_tasks": ["{task_id}"], "delivered_task_notifications": [],
                "notes": "the first turn ended (assistant end_turn, system turn_duration) while background "
                         "shell {task_id} still runs: its tool_result says 'Command running in background "
                         "with ID: {task_id}' and no <task-notification> names it yet. No interrupt marker."}),
            "final": ("background-notification", {
                "provider": "claude", "last_signal": "activity", "task_id": "{task_id}",
                "pending_background_tasks": [], "delivered_task_notifications": ["{task_id}"],
                "notes": "the shell finished: queue-operation enqueue (content = the <task-notification> "
                         "block), queue-operation dequeue, then a user record whose message.content (a "
                         "string) is the block and origin.kind='task-notification'; a second turn answers "
                         "and ends (system turn_duration). No interrupt marker."})}),
    "copilot-tool-abort": dict(
        provider="copilot", desc="Copilot CLI TUI: bash `sleep 30` running, Escape twice; then a new prompt",
        prompt="Sleep for thirty seconds in the shell.", resume=True,
        script=[{"tool": "bash", "args": {"command": "sleep 30", "description": "Sleep thirty seconds"}},
                {"text": RESUMED}],
        fixtures={"final": ("tool-abort", {
            "provider": "copilot", "last_signal": "stop", "reason": "abort",
            "notes": "bash sleep 30 was running (tool.execution_start, no tool.execution_complete). Two "
                     "Escape presses (one only shows 'esc again to interrupt') wrote assistant.turn_end and "
                     "then a top-level type=abort record with data.reason=user_abort."}),
                  "resumed": resumed("copilot", "abort record")}),
    "copilot-background-shell": dict(
        provider="copilot", background="shell",
        desc="Copilot CLI TUI: bash mode=async `sleep 5; echo done`, the turn ends while it runs; "
             "then the shell_completed notification turn",
        prompt="Start a short background shell.", proc=b"sleep 5",
        first_text="Started a background shell; ending my turn.", done_text="The background shell finished.",
        script=[{"tool": "bash", "args": {"command": "sleep 5; echo done", "description": "Background sleep",
                                          "mode": "async"}},
                {"text": "Started a background shell; ending my turn."},
                {"text": "The background shell finished."}],
        fixtures={
            "idle-running": ("background-shell-running", {
                "provider": "copilot", "last_signal": "activity", "tool_call_id": "{call_id}", "shell_id": "{shell_id}",
                "background_running": ["{shell_id}"], "background_completed": [],
                "notes": "the first turn ended (assistant.turn_end) while the async shell still runs (the sleep "
                         "process was alive when the copy was taken). Started by tool.execution_start "
                         "toolName=bash with data.arguments.mode=async (toolCallId {call_id}); its "
                         "tool.execution_complete (same data.toolCallId) has data.result.content "
                         "'<command started in background with shellId: {shell_id}>'. The model gave no shellId, "
                         "so the id exists only in that result text. No system.notification names it yet."}),
            "final": ("background-shell-completed", {
                "provider": "copilot", "last_signal": "activity", "tool_call_id": "{call_id}", "shell_id": "{shell_id}",
                "background_running": [], "background_completed": ["{shell_id}"],
                "notes": "the shell finished while the session was idle: Copilot wrote a system.notification with "
                         "data.kind.type=shell_completed, data.kind.shellId={shell_id}, data.kind.exitCode=0, then "
                         "by itself an assistant.message with a read_bash toolRequest, tool.execution_start/"
                         "complete for read_bash (result 'done\\n<shellId: {shell_id} completed with exit code "
                         "0>'), and a new assistant turn that answered and ended (assistant.turn_end). No "
                         "user.message for the notification turn."})}),
    "copilot-detached-shell": dict(
        provider="copilot", background="shell",
        desc="Copilot CLI TUI: bash mode=async detach=true `sleep 5; echo done`, the turn ends while it runs; "
             "then the shell_detached_completed notification turn",
        prompt="Start a short detached shell.", proc=b"sleep 5",
        first_text="Started a detached shell; ending my turn.", done_text="The detached shell finished.",
        script=[{"tool": "bash", "args": {"command": "sleep 5; echo done", "description": "Detached sleep",
                                          "mode": "async", "detach": True}},
                {"text": "Started a detached shell; ending my turn."},
                {"text": "The detached shell finished."}],
        fixtures={
            "idle-running": ("detached-shell-running", {
                "provider": "copilot", "last_signal": "activity", "tool_call_id": "{call_id}", "shell_id": "{shell_id}",
                "background_running": ["{shell_id}"], "background_completed": [],
                "notes": "as background-shell-running, but data.arguments.detach=true: the result text is "
                         "'<command started in detached background with shellId: {shell_id}>' and "
                         "toolTelemetry.properties.detached='true'. The first turn has ended; the sleep runs."}),
            "final": ("detached-shell-completed", {
                "provider": "copilot", "last_signal": "activity", "tool_call_id": "{call_id}", "shell_id": "{shell_id}",
                "background_running": [], "background_completed": ["{shell_id}"],
                "notes": "finished: system.notification data.kind.type=shell_detached_completed (no exitCode), "
                         "data.kind.shellId={shell_id}; then Copilot's own read_bash call and a notification turn "
                         "that answered and ended."})}),
    "copilot-background-agent": dict(
        provider="copilot", background="agent",
        desc="Copilot CLI TUI: task mode=background (general-purpose sub-agent 'hi-agent', its model reply held "
             "back 12 s), the main turn ends while it runs; then the agent_idle notification turn",
        prompt="Start a background agent.",
        first_text="Started the sub task; ending my turn.", done_text="The background agent finished.",
        script=[{"tool": "task", "args": {"description": "Sub task", "prompt": "SUBAGENT: say hi",
                                          "agent_type": "general-purpose", "name": "hi-agent", "mode": "background"},
                 "unless": "SUBAGENT: say hi"},
                {"text": "Started the sub task; ending my turn.", "unless": "SUBAGENT: say hi"},
                {"text": "Subagent says hi.", "match": "SUBAGENT: say hi", "delay": 12},
                {"text": "The background agent finished.", "unless": "SUBAGENT: say hi"}],
        fixtures={
            "idle-running": ("background-agent-running", {
                "provider": "copilot", "last_signal": "activity", "tool_call_id": "{call_id}", "agent_id": "{agent_id}",
                "background_running": ["{agent_id}"], "background_completed": [],
                "notes": "the main turn ended while background agent {agent_id} still waits for its model reply: "
                         "tool.execution_start toolName=task with data.arguments.mode=background (toolCallId "
                         "{call_id}), subagent.started (top-level agentId={agent_id}, data.toolCallId={call_id}, "
                         "data.executionMode=background), subagent.configured, the task's tool.execution_complete "
                         "('Agent started in background with agent_id: {agent_id}. ...'), the main turn's answer "
                         "and assistant.turn_end, and the sub-agent's own user.message/assistant.turn_start "
                         "records (top-level agentId={agent_id}). No subagent.completed and no "
                         "system.notification for it yet. Records carrying a top-level agentId belong to the "
                         "sub-agent, not to the main session's turn."}),
            "final": ("background-agent-completed", {
                "provider": "copilot", "last_signal": "activity", "tool_call_id": "{call_id}", "agent_id": "{agent_id}",
                "background_running": [], "background_completed": ["{agent_id}"],
                "notes": "the sub-agent answered: its assistant.message/assistant.turn_end (agentId={agent_id}), "
                         "subagent.completed (agentId={agent_id}, data.toolCallId={call_id}), then "
                         "system.notification data.kind.type=agent_idle (data.kind.agentId={agent_id}; a "
                         "multi-turn agent goes idle, it does not report agent_completed), Copilot's own "
                         "read_agent call and a notification turn that answered and ended."})}),
}
SCENARIOS["copilot-background-agent-failed"] = dict(
    SCENARIOS["copilot-background-agent"],
    desc="Copilot CLI TUI: task mode=background (general-purpose sub-agent 'hi-agent'); its model call answers "
         "HTTP 400 after 12 s, so the agent fails; then the agent_completed(status=failed) notification turn",
    script=[dict(SCENARIOS["copilot-background-agent"]["script"][0]),
            {"text": "Started the sub task; ending my turn.", "unless": "SUBAGENT: say hi"},
            {"status": 400, "match": "SUBAGENT: say hi", "delay": 12},
            {"text": "The background agent finished.", "unless": "SUBAGENT: say hi"}],
    fixtures={"final": ("background-agent-failed", {
        "provider": "copilot", "last_signal": "activity", "tool_call_id": "{call_id}", "agent_id": "{agent_id}",
        "background_running": [], "background_completed": ["{agent_id}"], "agent_status": "failed",
        "notes": "the sub-agent's model call failed: its assistant.turn_end and a session.error (statusCode 400), "
                 "both with top-level agentId={agent_id} (a sub-agent error, not the main session's), then "
                 "subagent.failed (agentId={agent_id}, data.toolCallId={call_id}, data.error) and "
                 "system.notification data.kind.type=agent_completed with data.kind.status=failed and "
                 "data.kind.agentId={agent_id}; Copilot's own read_agent call (tool.execution_complete "
                 "success=false) and a notification turn that answered and ended."})})


# ---- generic helpers ---------------------------------------------------------------------------
def read_records(path):
    out = []
    try:
        with open(path, "rb") as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass  # a line still being written
    except OSError:
        pass
    return out


CURRENT = {"tmux": None}  # the scenario's tmux, for a screenshot when a wait times out


def wait_for(what, pred, timeout, poll=0.3):
    end = time.time() + timeout * SLOW
    while time.time() < end:
        v = pred()
        if v:
            return v
        time.sleep(poll)
    if CURRENT["tmux"]:
        CURRENT["tmux"].snapshot("timeout")
    raise common.Timeout(f"timed out after {timeout * SLOW}s waiting for {what}")


def soft_wait(what, pred, timeout, info):
    try:
        return wait_for(what, pred, timeout)
    except common.Timeout as e:
        info.setdefault("warnings", []).append(str(e))


def submit(t, run, text, tries=5):
    """Type a prompt and press Enter; press Enter again while no new model request arrives (a TUI that
    is still starting up can swallow the first Enter and leave the text in its composer)."""
    before = model_steps(run)
    t.type_line(text)
    for _ in range(tries):
        end = time.time() + 4 * SLOW
        while time.time() < end:
            if model_steps(run) > before:
                return
            time.sleep(0.3)
        t.snapshot("resubmit")
        t.keys("Enter")


def snap(run, label, path):
    dst = os.path.join(run, f"snap-{label}.jsonl")
    shutil.copyfile(path, dst)
    return dst


def stop_strays(run):
    """Stop processes this run started that outlived tmux (e.g. Codex's app-server daemon): any
    process whose environment names this run's HOME. SIGTERM, then SIGKILL, by pid."""
    marker = f"HOME={os.path.join(run, 'home')}\0".encode()

    def ours():
        found = []
        for d in os.listdir("/proc"):
            if d.isdigit() and int(d) != os.getpid():
                try:
                    with open(f"/proc/{d}/environ", "rb") as f:
                        if marker in f.read():
                            found.append(int(d))
                except OSError:
                    pass
        return found

    common.stop_found(ours)


# ---- Codex ---------------------------------------------------------------------------------------
def codex_setup(run, port):
    home, chome, proj = (os.path.join(run, d) for d in ("home", "codex", "proj"))
    for d in (home, chome, proj):
        os.makedirs(d, exist_ok=True)
    common.git_init(proj, {"README.md": "# Capture project\n"})
    common.write_codex_config(os.path.join(chome, "config.toml"), port, proj)
    env = common.base_env(home, port)
    env.update(CODEX_HOME=chome)
    return env, proj, chome


def codex_rollout(chome):
    files = sorted(glob.glob(os.path.join(chome, "sessions", "*", "*", "*", "rollout-*.jsonl")))
    return files[-1] if files else None


def codex_records(chome):
    path = codex_rollout(chome)
    return (path, read_records(path)) if path else (None, [])


def codex_has(chome, pred):
    path, recs = codex_records(chome)
    return path if any(pred(r) for r in recs) else None


def ev_type(r):
    return r.get("type") == "event_msg" and (r.get("payload") or {}).get("type")


def run_codex(name, sc, run, port, info):
    env, proj, chome = codex_setup(run, port)
    t = common.Tmux(f"lg-tx-{os.getpid()}-{name}", env, proj, snapdir=run)
    CURRENT["tmux"] = t
    try:
        t.start(f"{shlex.quote(CLIENTS['codex'][0])} --no-alt-screen")
        t.wait_screen(lambda s: "\u203a" in s or "context left" in s, 40)  # the composer is up
        time.sleep(2)
        t.snapshot("start")
        if sc.get("plan_mode"):  # request_user_input only works in Plan mode ("unavailable in Default mode")
            t.keys("-l", "/plan")
            time.sleep(1.5)
            for _ in range(3):
                t.keys("Enter")
                time.sleep(2)
                if "\u203a /plan" not in t.screen():
                    break
            t.snapshot("plan-mode")
        submit(t, run, sc["prompt"])
        if name == "codex-tool-interrupt":
            # the exec_command function_call is in the rollout, and the command is running
            wait_for("exec_command function_call", lambda: codex_has(chome, lambda r: (
                r.get("payload") or {}).get("type") == "function_call"), 40)
            soft_wait("the sleep process", lambda: pgrep_env(run, b"sleep 30"), 20, info)
            time.sleep(2)
            t.snapshot("running")
            snap(run, "running", codex_rollout(chome))
            t.keys("Escape")
            wait_for("turn_aborted", lambda: codex_has(chome, lambda r: ev_type(r) == "turn_aborted"), 30)
        elif name == "codex-stream-interrupt":
            wait_for("model request", lambda: model_steps(run) >= 1, 40)
            time.sleep(3)
            t.snapshot("streaming")
            t.keys("Escape")
            wait_for("turn_aborted", lambda: codex_has(chome, lambda r: ev_type(r) == "turn_aborted"), 30)
        elif name == "codex-request-user-input-default-mode":
            wait_for("task_complete", lambda: codex_has(chome, lambda r: ev_type(r) == "task_complete"), 40)
            _, recs = codex_records(chome)
            info["call_id"] = next((r["payload"].get("call_id") for r in recs if (r.get("payload") or {}).get(
                "name") == "request_user_input"), None)
        elif name == "codex-request-user-input":
            def rui_call():
                _, recs = codex_records(chome)
                for r in recs:
                    p = r.get("payload") or {}
                    if r.get("type") == "response_item" and p.get("type") == "function_call" \
                            and p.get("name") == "request_user_input":
                        return p.get("call_id")
            call_id = wait_for("request_user_input function_call", rui_call, 40)
            info["call_id"] = call_id
            time.sleep(4)  # let the question render and anything else land in the rollout
            t.snapshot("question")
            snap(run, "pending", codex_rollout(chome))
            # answer: the first option (preselected) is chosen with Enter; a confirm step may follow
            t.keys("Enter")

            def answered():
                return codex_has(chome, lambda r: (r.get("payload") or {}).get("type") == "function_call_output"
                                 and (r.get("payload") or {}).get("call_id") == call_id)
            for _ in range(4):
                time.sleep(2)
                t.snapshot("after-enter")
                if answered():
                    break
                t.keys("Enter")
            wait_for("function_call_output for " + call_id, answered, 20)
            time.sleep(1)  # the next model request is held back 8 s by the fake ("delay")
            if codex_has(chome, lambda r: ev_type(r) == "task_complete"):
                info.setdefault("warnings", []).append("task_complete came before the answered snapshot")
            snap(run, "answered", codex_rollout(chome))
            wait_for("task_complete", lambda: codex_has(chome, lambda r: ev_type(r) == "task_complete"), 30)
            time.sleep(1)
        time.sleep(2)
        t.snapshot("final")
        snap(run, "final", codex_rollout(chome))
        if sc.get("resume"):
            submit(t, run, RESUME)
            wait_for("the resumed answer", lambda: codex_has(chome, lambda r: r.get("type") == "response_item"
                                                             and RESUMED in json.dumps(r)), 40)
            wait_for("task_complete", lambda: codex_has(chome, lambda r: ev_type(r) == "task_complete"), 30)
            time.sleep(2)
            t.snapshot("resumed")
            snap(run, "resumed", codex_rollout(chome))
        info["transcript"] = codex_rollout(chome)
        t.keys("C-c")
        time.sleep(0.5)
        t.keys("C-c")
        time.sleep(2)
    finally:
        t.stop()
        stop_strays(run)


def pgrep_env(run, argv_needle):
    """A pid of a process started by this run whose argv (joined by spaces) contains argv_needle."""
    marker = f"HOME={os.path.join(run, 'home')}\0".encode()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ")
                if argv_needle not in cmd:
                    continue
                with open(f"/proc/{d}/environ", "rb") as f:
                    if marker in f.read():
                        return int(d)
            except OSError:
                pass
    return None


def model_steps(run):
    return sum(1 for r in read_records(os.path.join(run, "model.jsonl"))
               if r.get("kind") == "step" or (isinstance(r.get("served"), dict)))


# ---- Claude Code ---------------------------------------------------------------------------------
def claude_setup(run, port):
    home, cfg, proj = (os.path.join(run, d) for d in ("home", "cfg", "proj"))
    for d in (home, cfg, proj, os.path.join(run, "tmp")):
        os.makedirs(d, exist_ok=True)
    common.git_init(proj, {"CLAUDE.md": "# Capture project\nScratch project for transcript captures.\n"})
    common.write_json(os.path.join(cfg, ".claude.json"), {
        "hasCompletedOnboarding": True, "lastOnboardingVersion": clients.CLAUDE_VERSION,
        "theme": "dark", "customApiKeyResponses": {"approved": [CLAUDE_KEY[-20:]], "rejected": []},
        "projects": {proj: {"hasTrustDialogAccepted": True, "allowedTools": []}}})
    env = common.base_env(home, port)
    env.update(CLAUDE_CONFIG_DIR=cfg, ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}", ANTHROPIC_API_KEY=CLAUDE_KEY,
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1",
               DISABLE_AUTOUPDATER="1", DISABLE_INSTALLATION_CHECKS="1",
               CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL="1", CLAUDE_CODE_MAX_RETRIES="0",
               CLAUDE_CODE_TMPDIR=os.path.join(run, "tmp"))
    return env, proj, cfg


def claude_transcript(cfg):
    files = sorted(glob.glob(os.path.join(cfg, "projects", "*", "*.jsonl")), key=os.path.getmtime)
    return files[-1] if files else None


def claude_has(cfg, pred):
    path = claude_transcript(cfg)
    return path if path and any(pred(r) for r in read_records(path)) else None


def msg_texts(r):
    """Every text in a record's message.content (string content or text/tool_result blocks)."""
    c = (r.get("message") or {}).get("content")
    if isinstance(c, str):
        return [c]
    out = []
    for b in c or []:
        if isinstance(b, dict):
            if isinstance(b.get("text"), str):
                out.append(b["text"])
            if isinstance(b.get("content"), str):
                out.append(b["content"])
            elif isinstance(b.get("content"), list):
                out += [x.get("text", "") for x in b["content"] if isinstance(x, dict)]
    return out


def has_text(r, needle):
    return any(needle in t for t in msg_texts(r))


def tool_use_id(r, name):
    for b in (r.get("message") or {}).get("content") or []:
        if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == name:
            return b.get("id")


def run_claude(name, sc, run, port, info):
    env, proj, cfg = claude_setup(run, port)
    t = common.Tmux(f"lg-tx-{os.getpid()}-{name}", env, proj, snapdir=run)
    CURRENT["tmux"] = t
    client = CLIENTS["claude"][0]
    try:
        # interactive 2.1.332 defaults to auto mode; ask like a default user, Bash pre-allowed
        t.start(" ".join(shlex.quote(a) for a in [client, "--permission-mode", "default", "--allowedTools", "Bash"]))
        t.wait_screen(lambda s: "\u276f" in s, 40)  # the prompt marker
        time.sleep(2)
        t.snapshot("start")
        submit(t, run, sc["prompt"])
        if name == "claude-tool-interrupt":
            wait_for("Bash tool_use", lambda: claude_has(cfg, lambda r: tool_use_id(r, "Bash")), 40)
            soft_wait("the sleep process", lambda: pgrep_env(run, b"sleep 30"), 20, info)
            time.sleep(2)
            t.snapshot("running")
            snap(run, "running", claude_transcript(cfg))
            t.keys("Escape")
            wait_for("interrupt marker", lambda: claude_has(cfg, lambda r: has_text(r, "[Request interrupted")), 30)
        elif name == "claude-stream-interrupt":
            wait_for("model request", lambda: model_steps(run) >= 1, 40)
            time.sleep(3)
            t.snapshot("streaming")
            t.keys("Escape")
            wait_for("interrupt marker", lambda: claude_has(cfg, lambda r: has_text(r, "[Request interrupted")), 30)
        elif name == "claude-background-notification":
            def first_answer():
                return claude_has(cfg, lambda r: r.get("type") == "assistant" and has_text(r, "ending my turn"))
            wait_for("first end_turn answer", first_answer, 40)
            time.sleep(0.5)
            t.snapshot("idle-pending")
            snap(run, "idle-pending", claude_transcript(cfg))
            wait_for("the notification turn's answer", lambda: claude_has(
                cfg, lambda r: r.get("type") == "assistant" and has_text(r, "background sleep finished")), 40)
            time.sleep(2)
            recs = read_records(claude_transcript(cfg))
            for r in recs:
                for tx in msg_texts(r):
                    m = re.search(r"<task-id>([^<]+)</task-id>", tx)
                    if m:
                        info["task_id"] = m.group(1).strip()
                        break
            if "task_id" not in info:  # the notification may live only in queue-operation records
                m = re.search(r"<task-id>([^<]+)</task-id>", open(claude_transcript(cfg)).read().replace("\\n", "\n"))
                if m:
                    info["task_id"] = m.group(1).strip()
        time.sleep(2)
        t.snapshot("final")
        snap(run, "final", claude_transcript(cfg))
        if sc.get("resume"):
            submit(t, run, RESUME)
            wait_for("the resumed answer", lambda: claude_has(
                cfg, lambda r: r.get("type") == "assistant" and has_text(r, RESUMED)), 40)
            time.sleep(3)
            t.snapshot("resumed")
            snap(run, "resumed", claude_transcript(cfg))
        info["transcript"] = claude_transcript(cfg)
        t.type_line("/exit")
        time.sleep(3)
    finally:
        t.stop()
        stop_strays(run)


# ---- Copilot CLI ---------------------------------------------------------------------------------
def copilot_setup(run, port):
    dirs = {k: os.path.join(run, k) for k in ("home", "copilot", "proj", "xdg/config", "xdg/data", "xdg/state",
                                              "logs")}
    for d in dirs.values():
        os.makedirs(d, exist_ok=True)
    os.makedirs(COPILOT_PKGCACHE, exist_ok=True)
    common.git_init(dirs["proj"], {"README.md": "# scratch project\n"})
    proxy = f"http://127.0.0.1:{port}"
    env = common.base_env(dirs["home"], port)
    env.update(XDG_CONFIG_HOME=dirs["xdg/config"], XDG_DATA_HOME=dirs["xdg/data"], XDG_STATE_HOME=dirs["xdg/state"],
               XDG_CACHE_HOME=COPILOT_PKGCACHE, COPILOT_HOME=dirs["copilot"], COPILOT_OFFLINE="true",
               COPILOT_PROVIDER_BASE_URL=f"{proxy}/v1", COPILOT_PROVIDER_API_KEY="fake-key",
               COPILOT_MODEL="fake-model", COPILOT_AUTO_UPDATE="false")
    return env, dirs["proj"], dirs["copilot"]


def copilot_events(chome):
    files = sorted(glob.glob(os.path.join(chome, "session-state", "*", "events.jsonl")), key=os.path.getmtime)
    return files[-1] if files else None


def copilot_has(chome, pred):
    path = copilot_events(chome)
    return path if path and any(pred(r) for r in read_records(path)) else None


def run_copilot(name, sc, run, port, info):
    env, proj, chome = copilot_setup(run, port)
    t = common.Tmux(f"lg-tx-{os.getpid()}-{name}", env, proj, snapdir=run)
    CURRENT["tmux"] = t
    client = CLIENTS["copilot"][0]
    try:
        t.start(" ".join(shlex.quote(a) for a in [client, "--allow-all-tools", "--log-level", "all",
                                                   "--log-dir", os.path.join(run, "logs")]))
        t.wait_screen(lambda s: "Do you trust the files" in s or "trust" in s.lower(), 60)
        t.snapshot("trust")
        t.keys("Enter")  # "Yes"
        time.sleep(3)
        t.snapshot("start")
        submit(t, run, sc["prompt"])
        if name == "copilot-tool-abort":
            wait_for("tool.execution_start", lambda: copilot_has(
                chome, lambda r: r.get("type") == "tool.execution_start"), 40)
            soft_wait("the sleep process", lambda: pgrep_env(run, b"sleep 30"), 20, info)
            time.sleep(2)
            t.snapshot("running")
            snap(run, "running", copilot_events(chome))
            # the status line says "esc esc interrupt": two separate Escape presses
            t.keys("Escape")
            time.sleep(0.4)
            t.snapshot("after-esc1")
            t.keys("Escape")
            time.sleep(1)
            t.snapshot("after-esc2")
            wait_for("an abort record", lambda: copilot_has(
                chome, lambda r: "abort" in str(r.get("type", "")).lower()), 20)
        elif sc.get("background"):
            copilot_background(name, sc, run, chome, t, info)
        time.sleep(3)
        t.snapshot("final")
        snap(run, "final", copilot_events(chome))
        if sc.get("resume"):
            submit(t, run, RESUME)
            wait_for("the resumed answer", lambda: copilot_has(
                chome, lambda r: r.get("type") == "assistant.message" and (r.get("data") or {}).get("content") == RESUMED), 40)
            time.sleep(3)
            t.snapshot("resumed")
            snap(run, "resumed", copilot_events(chome))
        info["transcript"] = copilot_events(chome)
        t.type_line("/exit")
        time.sleep(3)
    finally:
        t.stop()
        stop_strays(run)


def copilot_text_turn_ended(chome, text):
    """events.jsonl path once a main-agent assistant.message with this content is followed by a main-agent
    assistant.turn_end (records with a top-level agentId belong to sub-agents)."""
    path = copilot_events(chome)
    seen = False
    for r in read_records(path) if path else []:
        if "agentId" in r:
            continue
        if r.get("type") == "assistant.message" and (r.get("data") or {}).get("content") == text:
            seen = True
        elif seen and r.get("type") == "assistant.turn_end":
            return path
    return None


def copilot_background(name, sc, run, chome, t, info):
    """Background work (async/detached bash, background task agent): copy events.jsonl once the first turn
    has ended while the work still runs ("idle-running"), then wait for Copilot's completion notification
    and the notification turn's answer (the caller takes "final")."""
    kind = sc["background"]
    start_tool = "bash" if kind == "shell" else "task"
    wait_for(f"{start_tool} tool.execution_start", lambda: copilot_has(chome, lambda r: r.get(
        "type") == "tool.execution_start" and (r.get("data") or {}).get("toolName") == start_tool), 40)
    if kind == "shell":
        soft_wait("the background sleep process", lambda: pgrep_env(run, sc["proc"]), 20, info)
    wait_for("the first turn's end", lambda: copilot_text_turn_ended(chome, sc["first_text"]), 40)
    time.sleep(0.5)
    recs = read_records(copilot_events(chome))
    if kind == "shell":
        alive = pgrep_env(run, sc["proc"])
        info["running_at_snapshot"] = bool(alive)
    else:
        alive = not any(r.get("type") in ("subagent.completed", "subagent.failed") for r in recs)
        info["running_at_snapshot"] = alive
    if not alive:
        info.setdefault("warnings", []).append("background work had already finished at the idle-running copy")
    if any(r.get("type") == "system.notification" for r in recs):
        info.setdefault("warnings", []).append("a system.notification came before the idle-running copy")
    t.snapshot("idle-running")
    snap(run, "idle-running", copilot_events(chome))
    wait_for("the completion system.notification", lambda: copilot_has(
        chome, lambda r: r.get("type") == "system.notification"), 60)
    wait_for("the notification turn's end", lambda: copilot_text_turn_ended(chome, sc["done_text"]), 40)
    recs = read_records(copilot_events(chome))
    for r in recs:
        d = r.get("data") or {}
        if r.get("type") == "tool.execution_start" and d.get("toolName") == start_tool and "call_id" not in info:
            info["call_id"] = d.get("toolCallId")
        if r.get("type") == "tool.execution_complete" and d.get("toolCallId") == info.get("call_id"):
            content = str((d.get("result") or {}).get("content", ""))
            m = re.search(r"shellId: ([^>\s]+)>", content) or re.search(r"agent_id: ([0-9a-f-]+)", content)
            if m:
                info["shell_id" if kind == "shell" else "agent_id"] = m.group(1)
        if r.get("type") == "system.notification":
            info.setdefault("notifications", []).append((d.get("kind") or {}).get("type"))


RUNNERS = {"codex": run_codex, "claude": run_claude, "copilot": run_copilot}


# ---- fixtures ------------------------------------------------------------------------------------
MAX_FIXTURE = 200_000


def fill(v, info):
    if isinstance(v, str):
        return re.sub(r"\{(\w+)\}", lambda m: str(info.get(m.group(1), m.group(0))), v)
    if isinstance(v, dict):
        return {k: fill(x, info) for k, x in v.items()}
    if isinstance(v, list):
        return [fill(x, info) for x in v]
    return v


# Records that carry the clients' own prompts, instructions and tool descriptions: not ours to
# commit, and no detector reads them. Every other line is kept byte for byte.
VENDOR_TEXT_TYPES = {"api-request-shape", "api-request-blob", "prompt_snapshot", "session_meta",
                     "turn_context", "thread_settings_applied", "world_state", "system.message"}


def strip_vendor_text(data):
    kept = []
    for line in data.split(b"\n"):
        try:
            record = json.loads(line)
        except ValueError:
            kept.append(line)
            continue
        if not isinstance(record, dict):
            kept.append(line)
            continue
        kind = record.get("type")
        payload = record.get("payload") if isinstance(record.get("payload"), dict) else {}
        vendor = (kind in VENDOR_TEXT_TYPES
                  or (kind == "response_item" and payload.get("role") in ("developer", "system"))
                  or (kind == "event_msg" and payload.get("type") == "thread_settings_applied")
                  or (kind == "attachment" and len(line) > 2000))
        if not vendor:
            kept.append(line)
    return b"\n".join(kept)


def write_fixtures(out, names):
    written = []
    for name in names:
        sc = SCENARIOS[name]
        run = os.path.join(out, name)
        try:
            with open(os.path.join(run, "info.json")) as f:
                info = json.load(f)
        except OSError:
            continue
        if info.get("error"):
            print(f"[{name}] not written: {info['error']}")
            continue
        dest = os.path.join(FIXTURES, sc["provider"])
        os.makedirs(dest, exist_ok=True)
        first = next(iter(sc["fixtures"].values()))[0]
        for label, (fname, expect) in sc["fixtures"].items():
            fname = fname.replace("{}", first)
            src = os.path.join(run, f"snap-{label}.jsonl")
            if not os.path.exists(src):
                print(f"[{name}] missing snapshot {label}")
                continue
            with open(src, "rb") as f:
                data = strip_vendor_text(f.read())
            if len(data) > MAX_FIXTURE:
                print(f"[{name}] WARNING: {fname}.jsonl is {len(data)} bytes (> {MAX_FIXTURE}); trim it")
            with open(os.path.join(dest, f"{fname}.jsonl"), "wb") as f:
                f.write(data)
            exp = fill(dict(expect, client=CLIENTS[sc["provider"]][1], scenario=sc["desc"]), info)
            common.write_json(os.path.join(dest, f"{fname}.expect.json"), exp)
            written.append(os.path.join(sc["provider"], fname))
    print(f"wrote {len(written)} fixtures under {FIXTURES}: {', '.join(written)}")


def main():
    names = [a for a in sys.argv[1:] if not a.startswith("--")] or list(SCENARIOS)
    if "--list" in sys.argv:
        for n, sc in SCENARIOS.items():
            print(f"{n:32} {sc['desc']}")
        return 0
    for n in names:
        if n not in SCENARIOS:
            sys.exit(f"unknown scenario {n}")
    src = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--from=")), None)
    if src:  # only (re)write the fixtures from an earlier run's output dir; runs no client
        names = [n for n in names if os.path.isdir(os.path.join(src, n))]
        write_fixtures(src, names)
        return 0
    common.check_netns()
    out = os.environ.get("CAPTURE_OUT") or f"/tmp/lidguard-capture-transcripts.{time.strftime('%Y%m%d-%H%M%S')}"
    os.makedirs(out, exist_ok=True)
    try:  # several invocations may share one CAPTURE_OUT; keep the other scenarios' results
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
    except (OSError, ValueError):
        summary = {}
    for name in names:
        sc = SCENARIOS[name]
        run = os.path.join(out, name)
        shutil.rmtree(run, ignore_errors=True)
        os.makedirs(run)
        info = {"client": CLIENTS[sc["provider"]][1]}
        t0 = time.time()
        fake = common.FakeModel(run, sc["script"])
        if sc["provider"] == "copilot":
            fake.server = FAKE_CHAT
        with fake as fm:
            try:
                RUNNERS[sc["provider"]](name, sc, run, fm.port, info)
            except common.Timeout as e:
                info["error"] = str(e)
        info["seconds"] = round(time.time() - t0, 1)
        common.write_json(os.path.join(run, "info.json"), info)
        summary[name] = info
        print(f"[{name}] {'FAILED: ' + info['error'] if info.get('error') else 'ok'} {info['seconds']}s "
              f"{ {k: v for k, v in info.items() if k not in ('client', 'seconds', 'error')} }", flush=True)
    common.write_json(os.path.join(out, "summary.json"), summary)
    if "--fixtures" in sys.argv:
        write_fixtures(out, names)
    print(f"output: {out}")
    return 1 if any(summary[n].get("error") for n in names) else 0


if __name__ == "__main__":
    sys.exit(main())
