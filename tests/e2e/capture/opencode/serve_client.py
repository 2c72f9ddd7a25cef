#!/usr/bin/env python3
"""Drive a running `opencode serve` over its HTTP API for a capture scenario (loopback only).

Usage: serve_client.py <base-url> <run-dir> <scenario>
Writes every request/response to <run-dir>/api.jsonl and the OpenAPI document to <run-dir>/openapi.json.
Waits on <run-dir>/hooklog/hooks.jsonl (written by the capture plugin) rather than on timing.
"""
import json
import sys
import threading
import time
import urllib.request

BASE, D, SCEN = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3]
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never use a proxy


def call(method, path, body=None, timeout=60):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(BASE + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with OPENER.open(req, timeout=timeout) as r:
            status, text = r.status, r.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        status, text = e.code, e.read().decode(errors="replace")
    except Exception as e:  # noqa: BLE001 - record anything
        status, text = None, repr(e)
    with open(f"{D}/api.jsonl", "a") as f:
        f.write(json.dumps({"t": time.time(), "method": method, "path": path, "body": body,
                            "status": status, "response": text[:20000]}) + "\n")
    try:
        return json.loads(text)
    except ValueError:
        return text


def events():
    try:
        with open(f"{D}/hooklog/hooks.jsonl") as f:
            return [json.loads(l)["event"] for l in f]
    except OSError:
        return []


def wait_for(name, count=1, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        if events().count(name) >= count:
            return True
        time.sleep(0.2)
    print(f"timeout waiting for {name} x{count}", file=sys.stderr)
    return False


doc = call("GET", "/doc")
with open(f"{D}/openapi.json", "w") as f:
    json.dump(doc, f, indent=1)
sess = call("POST", "/session", {})
sid = sess["id"]
# the synchronous message call blocks until the turn ends; run it in the background
t = threading.Thread(target=call, args=("POST", f"/session/{sid}/message",
                                        {"parts": [{"type": "text", "text": "go"}]}, 120), daemon=True)
t.start()
if SCEN == "serve-permission-plugin-reply":
    wait_for("permission.asked")
    wait_for("permission.replied", timeout=20)
    wait_for("session.idle")
elif SCEN == "serve-permission-http-reply":
    wait_for("permission.asked")
    call("GET", "/permission")
    # find the pending permission and answer it through the HTTP API
    with open(f"{D}/hooklog/hooks.jsonl") as f:
        asked = [json.loads(json.loads(l)["stdin"]) for l in f if json.loads(l)["event"] == "permission.asked"]
    p = asked[0]["input"]["event"]["properties"]
    call("POST", f"/permission/{p['id']}/reply", {"reply": "once"})
    wait_for("permission.replied", timeout=20)
    wait_for("session.idle")
elif SCEN == "serve-question":
    wait_for("question.asked")
    pending = call("GET", "/question")
    call("POST", f"/question/{pending[0]['id']}/reply", {"answers": [["red"]]})
    wait_for("question.replied", timeout=20)
    wait_for("session.idle")
elif SCEN == "serve-question-reject":
    wait_for("question.asked")
    pending = call("GET", "/question")
    call("POST", f"/question/{pending[0]['id']}/reject")
    wait_for("question.rejected", timeout=20)
    wait_for("session.idle", timeout=30)
elif SCEN == "serve-reprompt-delete":
    wait_for("session.idle", 2, timeout=60)  # first turn, then the plugin's re-prompted turn
    time.sleep(1)
else:
    wait_for("session.idle")
t.join(timeout=30)
call("GET", f"/session/{sid}/message")
call("DELETE", f"/session/{sid}")
wait_for("session.deleted", timeout=15)
time.sleep(1)
