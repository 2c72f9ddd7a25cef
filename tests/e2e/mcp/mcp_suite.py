#!/usr/bin/env python3
"""Drives `lidguard mcp-server` and `lidguard provider-mcp-server` with the official MCP Python
SDK (`mcp` on PyPI): initialize, tools/list (names, input schemas, the instructions the tool
descriptions must carry) and tool calls whose effect is checked with `lidguard status --json`.
A few raw JSON-RPC checks (not-JSON lines, stdin closing) use plain pipes, since an SDK client
never sends those.

    python3 mcp_suite.py <path to lidguard>

Every run uses a fresh LIDGUARD_HOME and stops the daemon it started. Prints PASS/FAIL lines and
"N passed, M failed"; exits 1 on any failure.
"""

import asyncio
import contextlib
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

LIDGUARD = os.path.abspath(sys.argv[1])
HOME = tempfile.mkdtemp(prefix="lidguard-mcp-")
ENV = {**os.environ, "LIDGUARD_HOME": HOME, "LIDGUARD_LOG": "debug"}
PASSED, FAILED = [], []


def check(name, ok, detail=""):
    (PASSED if ok else FAILED).append(name)
    print(("PASS " if ok else "FAIL ") + name + ("" if ok or not detail else f"  -- {detail}"), flush=True)


def status():
    out = subprocess.run([LIDGUARD, "status", "--json"], env=ENV, capture_output=True, text=True, timeout=30)
    return json.loads(out.stdout)


def session_of(st, provider_name, session_id):
    for s in st["sessions"]:
        if s["provider"] == "mcp" and s["providerName"] == provider_name and s["sessionId"] == session_id:
            return s
    return None


def settings_bytes():
    path = os.path.join(HOME, "config", "settings.json")
    return hashlib.sha256(open(path, "rb").read()).hexdigest() if os.path.exists(path) else None


@contextlib.asynccontextmanager
async def client(*args):
    params = StdioServerParameters(command=LIDGUARD, args=list(args), env=ENV)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            yield s


def structured(result):
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def text(result):
    return " ".join(c.text for c in result.content if getattr(c, "text", None))


async def call(s, tool, args=None):
    return await s.call_tool(tool, args or {})


async def control_tools_list():
    async with client("mcp-server") as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        check("mcp-server lists its six tools",
              set(tools) == {"get_settings_status", "list_sessions", "update_settings", "remove_session",
                             "set_session_soft_lock", "clear_session_soft_lock"}, sorted(tools))
        soft = tools["set_session_soft_lock"].input_schema
        check("set_session_soft_lock requires provider and sessionId",
              set(soft.get("required", [])) >= {"provider", "sessionId"}, soft)
        upd = tools["update_settings"].input_schema["properties"]
        check("update_settings offers the model-settable fields with types",
              upd.get("suspendMode", {}).get("enum") == ["sleep", "hibernate"]
              and upd.get("preventSystemSleep", {}).get("type") == "boolean"
              and "resetToDefaults" in upd, list(upd))
        refused = ["closedLidPermissionRequestDecision", "preSuspendWebhookUrl", "postSessionEndWebhookUrl",
                   "closedLidStopFollowUpWebhookUrl", "emergencyHibernationOnHighTemperature"]
        check("update_settings does not offer user-only fields", not any(r in upd for r in refused))
        check("read-only tools are annotated read-only",
              all(tools[n].annotations and tools[n].annotations.read_only_hint
                  for n in ("get_settings_status", "list_sessions")))


async def provider_tools_list():
    async with client("provider-mcp-server", "--provider-name", "alpha") as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        check("provider-mcp-server lists its four tools",
              set(tools) == {"provider_start_session", "provider_stop_session", "provider_set_soft_lock",
                             "provider_clear_soft_lock"}, sorted(tools))
        d = {n: " ".join(t.description.split()) for n, t in tools.items()}
        start, stop, lock, clear = (d["provider_start_session"], d["provider_stop_session"],
                                    d["provider_set_soft_lock"], d["provider_clear_soft_lock"])
        check("start: only for a brand-new session", "brand-new session" in start, start)
        check("start: reuse the returned id verbatim until the work is truly complete",
              "reuse it verbatim" in start and "until the work is truly complete" in start, start)
        check("stop: only right before the turn ends with the work truly complete",
              "right before ending your turn when the work is truly complete" in stop, stop)
        check("stop: not for waiting on the user", "Do not call this when you pause to wait for the user" in stop)
        check("set soft-lock: before ending a turn that waits for the user",
              "right before you end a turn to wait for the user" in lock, lock)
        check("set soft-lock: explains what a soft-lock is",
              "stays tracked but stops keeping the machine awake" in lock, lock)
        check("set soft-lock: it cannot end the turn for the model", "cannot end your turn for you" in lock, lock)
        check("clear soft-lock: the earlier id, not a new session",
              "earlier" in clear and "do not start a new session" in clear, clear)
        check("no description offers ask-before-sleep continuation",
              not any(re.search(r"follow-up|continuation|ask before sleep|ask-before-sleep", v, re.I)
                      for v in d.values()))
        schema = tools["provider_set_soft_lock"].input_schema
        check("provider_set_soft_lock requires sessionId and reason",
              set(schema.get("required", [])) == {"sessionId", "reason"}, schema)
        check("provider_start_session takes an optional workingDirectory",
              "workingDirectory" in tools["provider_start_session"].input_schema.get("properties", {})
              and not tools["provider_start_session"].input_schema.get("required"))


async def without_runtime():
    async with client("mcp-server") as s:
        r = structured(await call(s, "list_sessions"))
        check("list_sessions without a runtime says it is not running",
              r["runtimeReachable"] is False and "not running" in r["summary"], r)
        r = await call(s, "set_session_soft_lock", {"provider": "claude", "sessionId": "x"})
        check("set_session_soft_lock without a runtime is an error saying so",
              r.is_error and "not running" in text(r), text(r))
    check("mcp-server never starts the runtime", status()["running"] is False)
    async with client("provider-mcp-server", "--provider-name", "alpha") as s:
        r = await call(s, "provider_set_soft_lock", {"sessionId": "abcd1234", "reason": "waiting_for_user_input"})
        check("provider_set_soft_lock does not start the runtime", r.is_error and status()["running"] is False, text(r))
        r = await call(s, "provider_stop_session", {"sessionId": "abcd1234"})
        check("provider_stop_session without a runtime counts as done", not r.is_error, text(r))


async def lifecycle():
    async with client("provider-mcp-server", "--provider-name", "alpha") as alpha, \
            client("provider-mcp-server", "--provider-name", "beta") as beta, \
            client("mcp-server") as control:
        r = await call(alpha, "provider_start_session", {"workingDirectory": "/tmp/work"})
        out = structured(r)
        sid = out.get("sessionId", "")
        check("provider_start_session returns 8 lowercase hex characters",
              not r.is_error and re.fullmatch(r"[0-9a-f]{8}", sid) is not None and out["sessionIdToReuse"] == sid, out)
        st = status()
        a = session_of(st, "alpha", sid)
        check("the started session shows in status as an active mcp session",
              a is not None and a["state"] == "active" and a["cwd"] == "/tmp/work", st["sessions"])
        check("protection is wanted while it works", st["protection"]["wanted"] is True, st["protection"])

        # Same session id, another provider name: two separate sessions.
        subprocess.run([LIDGUARD, "start", "--provider", "mcp", "--provider-name", "beta", "--session", sid],
                       env=ENV, check=True, capture_output=True, timeout=30)
        r = await call(beta, "provider_set_soft_lock", {"sessionId": sid, "reason": "waiting_for_approval"})
        st = status()
        a, b = session_of(st, "alpha", sid), session_of(st, "beta", sid)
        check("two provider names with the same session id do not collide",
              not r.is_error and a and b and a["state"] == "active" and b["state"] == "softLocked"
              and b["softLockReason"] == "waiting_for_approval", st["sessions"])
        r = await call(beta, "provider_stop_session", {"sessionId": sid})
        st = status()
        check("beta's stop ends only beta's session",
              not r.is_error and session_of(st, "beta", sid) is None and session_of(st, "alpha", sid), st["sessions"])

        r = await call(alpha, "provider_set_soft_lock", {"sessionId": sid, "reason": "waiting_for_user_input"})
        st = status()
        a = session_of(st, "alpha", sid)
        check("a soft-locked Provider MCP session, the only one, drops protection",
              not r.is_error and a["state"] == "softLocked" and st["protection"]["wanted"] is False
              and st["protection"]["held"] is False, (a, st["protection"]))
        r = await call(alpha, "provider_clear_soft_lock", {"sessionId": sid})
        st = status()
        check("clearing the soft-lock makes it active again",
              not r.is_error and session_of(st, "alpha", sid)["state"] == "active" and st["protection"]["wanted"], st)

        # mcp-server's soft-lock tools on the same session.
        r = await call(control, "set_session_soft_lock", {"provider": "mcp", "sessionId": sid})
        check("set_session_soft_lock for provider mcp needs providerName",
              r.is_error and "providerName" in text(r), text(r))
        r = await call(control, "set_session_soft_lock",
                       {"provider": "mcp", "sessionId": sid, "providerName": "alpha", "reason": "waiting_for_manual_step"})
        a = session_of(status(), "alpha", sid)
        check("set_session_soft_lock soft-locks the session", not r.is_error and a["softLockReason"] == "waiting_for_manual_step", a)
        r = await call(control, "clear_session_soft_lock", {"provider": "mcp", "sessionId": sid, "providerName": "alpha"})
        check("clear_session_soft_lock clears it", not r.is_error and session_of(status(), "alpha", sid)["state"] == "active")
        listed = structured(await call(control, "list_sessions"))
        check("list_sessions shows the session and the runtime state",
              listed["runtimeReachable"] and listed["activeSessionCount"] == 1
              and listed["sessions"][0]["sessionId"] == sid and "settings" not in listed, listed)

        # Errors keep the server serving.
        r = await call(alpha, "provider_set_soft_lock", {"sessionId": 5, "reason": "x"})
        check("a wrong argument type is a tool error", r.is_error and "expected a string" in text(r), text(r))
        r = await call(alpha, "provider_set_soft_lock", {"sessionId": "ffffffff", "reason": "waiting_for_user_input"})
        check("an unknown session id is a tool error saying what to do",
              r.is_error and "provider_start_session" in text(r), text(r))
        try:
            r = await call(alpha, "no_such_tool")
            unknown_ok = r.is_error
        except Exception as e:  # the SDK raises for JSON-RPC errors
            unknown_ok = "not found" in str(e).lower() or "unknown" in str(e).lower()
        check("an unknown tool is an error", unknown_ok)
        r = await call(alpha, "provider_clear_soft_lock", {"sessionId": sid})
        check("the server keeps serving after errors", not r.is_error, text(r))

        # Settings: refused fields change nothing; accepted ones are saved and pushed.
        before = settings_bytes()
        r = await call(control, "update_settings", {"suspendMode": "hibernate", "closedLidPermissionRequestDecision": "allow"})
        check("a user-only field is refused with the CLI command that changes it",
              r.is_error and "lidguard settings --closed-lid-permission-request-decision" in text(r), text(r))
        check("a refused update_settings changes nothing on disk", settings_bytes() == before)
        r = await call(control, "update_settings", {"preSuspendWebhookUrl": "https://example.com/x"})
        check("webhook URLs are refused", r.is_error and "--pre-suspend-webhook-url" in text(r), text(r))
        r = await call(control, "update_settings", {"sessionTimeoutMinutes": 0})
        check("an invalid value is refused with the CLI's message",
              r.is_error and "sessionTimeoutMinutes" in text(r) and settings_bytes() == before, text(r))
        r = await call(control, "update_settings", {"suspendMode": "hibernate", "sessionTimeoutMinutes": 45})
        out = structured(r)
        st = status()
        check("update_settings applies several fields together and the runtime uses them",
              not r.is_error and out["hadEffectiveChanges"] and len(out["appliedChanges"]) == 2
              and st["settings"]["suspendMode"] == "Hibernate" and st["settings"]["sessionTimeoutMinutes"] == 45,
              (out.get("summary"), st["settings"].get("suspendMode"), st["settings"].get("sessionTimeoutMinutes")))
        out = structured(await call(control, "get_settings_status"))
        check("get_settings_status shows stored and runtime settings and the user-only list",
              out["storedSettings"]["suspendMode"] == "Hibernate" and out["runtimeSettings"]["suspendMode"] == "Hibernate"
              and "closedLidPermissionRequestDecision" in out["userOnlySettings"], out.get("summary"))

        r = await call(control, "remove_session", {"sessionId": sid, "provider": "mcp", "providerName": "alpha"})
        out = structured(r)
        check("remove_session removes it", not r.is_error and len(out["removedSessions"]) == 1
              and session_of(status(), "alpha", sid) is None, out)
        r = await call(alpha, "provider_stop_session", {"sessionId": sid})
        check("stopping a removed session again is harmless", not r.is_error and "already" in structured(r)["summary"], text(r))
        r = await call(alpha, "provider_set_soft_lock", {"sessionId": sid, "reason": "waiting_for_user_input"})
        check("soft-locking an ended session is an error naming what to do",
              r.is_error and "provider_start_session" in text(r), text(r))


def raw_protocol():
    p = subprocess.Popen([LIDGUARD, "mcp-server"], env=ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)

    def send(line):
        p.stdin.write(line + "\n")
        p.stdin.flush()

    def read():
        return json.loads(p.stdout.readline())

    send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "raw", "version": "0"}}}))
    init = read()
    send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    send("this is { not json")
    err = read()
    check("a line that is not JSON gets a JSON-RPC parse error",
          err.get("error", {}).get("code") == -32700 and err.get("id") is None, err)
    send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "no/such/method"}))
    err = read()
    check("an unknown method gets a JSON-RPC error", err.get("id") == 2 and "error" in err, err)
    send(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list_sessions", "arguments": {}}}))
    ok = read()
    check("the server keeps serving after malformed input", ok.get("id") == 3 and "result" in ok and init.get("id") == 1, ok)
    p.stdin.close()
    try:
        code = p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        p.kill()
        code = None
    rest = p.stdout.read()
    check("the server exits cleanly when stdin closes", code == 0, code)
    check("stdout carries only MCP frames", rest.strip() == "", rest[:200])


def main():
    try:
        asyncio.run(control_tools_list())
        asyncio.run(provider_tools_list())
        asyncio.run(without_runtime())
        asyncio.run(lifecycle())
        raw_protocol()
    finally:
        st = status()
        if st.get("daemonPid"):
            os.kill(st["daemonPid"], signal.SIGTERM)
            time.sleep(0.5)
    print(f"{len(PASSED)} passed, {len(FAILED)} failed")
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()
