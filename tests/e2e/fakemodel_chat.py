#!/usr/bin/env python3
"""Scripted fake model server speaking OpenAI *chat completions* (for OpenCode and Copilot CLI).

Stdlib only. Binds 127.0.0.1 only. Used by the capture drivers in tests/e2e/capture/, always
inside a loopback-only network namespace.

Usage:
    fakemodel_chat.py --port 0 --port-file F --script S.json --log L.jsonl

Endpoints:
    POST /v1/chat/completions  (also /chat/completions) -- SSE when "stream": true, else JSON
    GET  /v1/models            (also /models)           -- one model, "fake-model"
    CONNECT anything                                    -- 403 (logged; catches proxy escapes)
    anything else                                       -- 404 (logged)

Script (S.json): a JSON list of steps, consumed in order by requests that carry a non-empty
"tools" list. Requests without tools (titles, summaries) get FIXED_REPLY and consume nothing.
When the script is exhausted, tool-carrying requests also get FIXED_REPLY. A step is one of:
    {"text": "hello"}                                  assistant text, finish_reason "stop"
    {"tool": "bash", "args": {"command": "ls"}}        one tool call, finish_reason "tool_calls"
    {"calls": [{"tool": "bash", "args": {...}}, ...]}  several parallel tool calls
    {"status": 400, "body": {...}}                     HTTP error (default OpenAI-style body)
Optional keys on any step:
    "match": "s"    only a request whose FIRST user message contains "s" may take this step
    "unless": "s"   only a request whose first user message does NOT contain "s" may take it
    "delay": 1.5    sleep this many seconds before answering
The first remaining step whose match/unless conditions hold is taken (so concurrent sub-agents,
whose first user message is their task prompt, can be given their own steps with "match").

Log (L.jsonl): one line per request: time, method, path, headers, parsed body, and the step
served ("fixed" for FIXED_REPLY).
"""
import argparse
import json
import os
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FIXED_REPLY = "Fake title"
MODEL = "fake-model"


class State:
    def __init__(self, script, log_path):
        self.steps = list(script)
        self.log_path = log_path
        self.lock = threading.Lock()
        self.counter = 0

    def take(self, body):
        first = next((json.dumps(m.get("content")) for m in body.get("messages") or []
                      if m.get("role") == "user"), "")
        with self.lock:
            for i, step in enumerate(self.steps):
                if "match" in step and step["match"] not in first:
                    continue
                if "unless" in step and step["unless"] in first:
                    continue
                return self.steps.pop(i)
            return None

    def next_id(self):
        with self.lock:
            self.counter += 1
            return self.counter

    def log(self, record):
        with self.lock, open(self.log_path, "a") as f:
            f.write(json.dumps(record) + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: State = None  # set in main()

    def log_message(self, fmt, *args):  # keep stderr quiet
        pass

    def _record(self, body=None, raw="", served=None):
        self.state.log({
            "t": time.time(), "method": self.command, "path": self.path,
            "headers": dict(self.headers.items()), "body": body,
            "raw": raw if body is None else None, "served": served,
        })

    def _send_json(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_CONNECT(self):
        self._record(served="connect-403")
        self.send_response(403)
        self.send_header("Content-Length", "0")
        self.end_headers()
        self.close_connection = True

    def do_GET(self):
        path = self.path.split("?")[0]
        if path in ("/v1/models", "/models"):
            self._record(served="models")
            self._send_json(200, {"object": "list", "data": [
                {"id": MODEL, "object": "model", "created": 0, "owned_by": "fake"}]})
        else:
            self._record(served="404")
            self._send_json(404, {"error": {"message": "not found", "type": "not_found"}})

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n).decode(errors="replace")
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        path = self.path.split("?")[0]
        if path not in ("/v1/chat/completions", "/chat/completions") or body is None:
            self._record(body, raw, served="404")
            self._send_json(404, {"error": {"message": "not found", "type": "not_found"}})
            return
        step = self.state.take(body) if body.get("tools") else None
        self._record(body, raw, served=step if step is not None else "fixed")
        step = step or {"text": FIXED_REPLY}
        if step.get("delay"):
            time.sleep(float(step["delay"]))
        if "status" in step:
            self._send_json(int(step["status"]), step.get("body") or {"error": {
                "message": "scripted error", "type": "invalid_request_error", "code": None}})
            return
        self._answer(body, step)

    def _answer(self, body, step):
        cid = f"chatcmpl-fake{self.state.next_id()}"
        calls = step.get("calls") or ([step] if "tool" in step else [])
        tool_calls = [{
            "index": i, "id": c.get("id") or f"call_{uuid.uuid4().hex[:12]}", "type": "function",
            "function": {"name": c["tool"], "arguments": json.dumps(c.get("args", {}))},
        } for i, c in enumerate(calls)]
        text = step.get("text", "")
        finish = "tool_calls" if tool_calls else "stop"
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if not body.get("stream"):
            msg = {"role": "assistant", "content": text or None}
            if tool_calls:
                msg["tool_calls"] = [{k: v for k, v in tc.items() if k != "index"} for tc in tool_calls]
            self._send_json(200, {"id": cid, "object": "chat.completion", "created": int(time.time()),
                                  "model": body.get("model", MODEL), "usage": usage,
                                  "choices": [{"index": 0, "message": msg, "finish_reason": finish}]})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

        def chunk(delta, finish_reason=None, choices=True):
            obj = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()),
                   "model": body.get("model", MODEL),
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}] if choices else []}
            if not choices:
                obj["usage"] = usage
            self.wfile.write(b"data: " + json.dumps(obj).encode() + b"\n\n")
            self.wfile.flush()

        chunk({"role": "assistant", "content": ""})
        if text:
            chunk({"content": text})
        if tool_calls:
            chunk({"tool_calls": tool_calls})
        chunk({}, finish)
        if (body.get("stream_options") or {}).get("include_usage"):
            chunk(None, choices=False)
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--script", required=True)
    ap.add_argument("--log", required=True)
    a = ap.parse_args()
    with open(a.script) as f:
        Handler.state = State(json.load(f), a.log)
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.replace(tmp, a.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
