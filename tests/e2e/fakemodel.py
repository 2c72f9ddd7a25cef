#!/usr/bin/env python3
"""Scripted fake model server for end-to-end hook captures (python stdlib only).

Speaks just enough of three streaming APIs for the real agent CLIs to run offline:

  * Anthropic Messages (Claude Code):  POST /v1/messages[?beta=true]   (SSE, named events)
  * OpenAI Responses   (Codex CLI):    POST /v1/responses              (SSE, named events)
  * Gemini API         (Gemini CLI):   POST /v1beta/models/<m>:streamGenerateContent?alt=sse
                                       (SSE, unnamed `data:` lines), :generateContent (JSON)

Usage:
  fakemodel.py --port 0 --port-file F --script S.json --log L.jsonl

Binds 127.0.0.1 only. Once listening, writes the chosen port to F (the driver waits for it).

The script (S.json) is a JSON list of steps, or an object {"main": [...], "subagent": [...]}
whose "subagent" list answers sub-agent requests (Codex: header `x-openai-subagent`; Claude Code:
header `x-claude-code-agent-id`); without a "subagent" list they take main steps. Each
request that carries tools consumes the next step of its list; a step is one of:

  {"text": "Done."}                                   assistant text, end of turn
  {"tool": "Bash", "input": {...}, "text": "opt"}     one tool call (Codex: arguments = JSON of input;
                                                      "namespace": "ns" for a namespaced Codex tool)
  {"tools": [{"name": ..., "input": {...}}, ...]}     several tool calls in one reply
  {"error": 500, "message": "boom"}                   HTTP error with the provider's error body
  "delay": 1.5 in any step                           wait that long before answering (the request
                                                      is logged at once)
  "hang"  or  {"hang": true, "text": "partial"}       start streaming, then hold the stream open
                                                      (keep-alives every second) until the client
                                                      disconnects; for interrupt tests

Gemini: requests without functionDeclarations (the CLI's own side calls: next-speaker check,
model routing, summaries) get a fixed reply, and one that asks for JSON gets an object filled in
from its response schema (first enum value, else a short string); they consume no step.

Codex only: a tool-input string "{{output.KEY}}" is replaced with field KEY of the JSON in the
request's last function_call_output (e.g. wait_agent targets = the agent_id spawn_agent returned).

When a list is exhausted the server answers with the text "(script exhausted)".
Requests without tools (Claude title/aux calls) and Codex title requests
(`thread_source: "thread_title"` in `x-codex-turn-metadata`) get a fixed reply and consume no
step. CONNECT (proxy attempts) is answered 403. Every request is appended to L as one JSON line:
{t, method, path, headers (minus credentials), body (parsed JSON), kind, step}.
"""
import argparse
import json
import os
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
STATE = {"lists": {}, "pos": {}, "log": None}
SECRET_HEADERS = {"authorization", "x-api-key", "proxy-authorization", "cookie"}


def log(entry):
    entry["t"] = time.time()
    with LOCK, open(STATE["log"], "a") as f:
        f.write(json.dumps(entry) + "\n")


def next_step(channel):
    with LOCK:
        steps = STATE["lists"].get(channel) or STATE["lists"].get("main", [])
        key = channel if channel in STATE["lists"] else "main"
        i = STATE["pos"].get(key, 0)
        STATE["pos"][key] = i + 1
    if i >= len(steps):
        return i, {"text": "(script exhausted)"}
    step = steps[i]
    return i, ({"hang": True} if step == "hang" else step)


def pause(step):
    """A step's "delay": the answer waits that long (a window the test drivers rely on)."""
    if isinstance(step, dict) and step.get("delay"):
        time.sleep(float(step["delay"]))


def tool_calls(step):
    if "tools" in step:
        return step["tools"]
    if "tool" in step:
        return [{"name": step["tool"], "input": step.get("input", {}), "namespace": step.get("namespace")}]
    return []


def fill_from_output(step, items):
    """Replace "{{output.KEY}}" strings in tool inputs with KEY from the last function_call_output."""
    outs = [i.get("output") for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"]
    try:
        last = json.loads(outs[-1]) if outs else {}
    except (TypeError, ValueError):
        last = {}

    def fill(v):
        if isinstance(v, str) and v.startswith("{{output.") and v.endswith("}}"):
            return last.get(v[9:-2], v) if isinstance(last, dict) else v
        if isinstance(v, list):
            return [fill(x) for x in v]
        if isinstance(v, dict):
            return {k: fill(x) for k, x in v.items()}
        return v
    return fill(step) if isinstance(step, dict) else step


def rid(prefix):
    return prefix + uuid.uuid4().hex[:24]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # keep stderr quiet; everything goes to the JSONL log
        pass

    def do_CONNECT(self):
        log({"method": "CONNECT", "path": self.path, "headers": self.safe_headers(), "kind": "connect-refused"})
        self.send_response(403)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        log({"method": "GET", "path": self.path, "headers": self.safe_headers(), "kind": "get"})
        if self.path.rstrip("/").endswith("/models"):
            self.reply_json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}], "models": []})
        else:
            self.reply_json(404, {"error": {"type": "not_found_error", "message": "not found"}})

    do_HEAD = do_GET

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_raw": raw.decode(errors="replace")}
        path = self.path.split("?")[0]
        entry = {"method": "POST", "path": self.path, "headers": self.safe_headers(), "body": body}
        if path.endswith("/messages"):
            self.anthropic(body, entry)
        elif path.endswith("/responses"):
            self.openai_responses(body, entry)
        elif ":streamGenerateContent" in path or ":generateContent" in path:
            self.gemini(body, entry, stream=":streamGenerateContent" in path)
        else:
            entry["kind"] = "unknown"
            log(entry)
            self.reply_json(404, {"error": {"type": "not_found_error", "message": "not found"}})

    # ---- helpers ---------------------------------------------------------------------------
    def safe_headers(self):
        return {k.lower(): v for k, v in self.headers.items() if k.lower() not in SECRET_HEADERS}

    def reply_json(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def start_sse(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def sse(self, event, data):
        self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()

    def hold(self, keepalive):
        """Keep a stream open until the client goes away (or 10 minutes pass)."""
        for _ in range(600):
            time.sleep(1)
            try:
                self.wfile.write(keepalive)
                self.wfile.flush()
            except OSError:
                log({"kind": "hang-ended", "reason": "client disconnected"})
                return

    # ---- Anthropic Messages ----------------------------------------------------------------
    def anthropic(self, body, entry):
        model = body.get("model", "claude-fake")
        if not body.get("tools"):
            entry["kind"] = "aux"
            log(entry)
            fmt = (body.get("output_config") or {}).get("format") or {}
            text = json.dumps({"title": "Fake session title"}) if fmt.get("type") == "json_schema" else "OK"
            return self.anthropic_reply(model, {"text": text}, body.get("stream", False))
        channel = "subagent" if self.headers.get("x-claude-code-agent-id") else "main"
        i, step = next_step(channel)
        entry.update(kind="step", step=i, channel=channel)
        log(entry)
        pause(step)
        if "error" in step:
            return self.reply_json(step["error"], {"type": "error", "error": {
                "type": step.get("error_type", "api_error"), "message": step.get("message", "fake error")}})
        self.anthropic_reply(model, step, body.get("stream", False))

    def anthropic_reply(self, model, step, stream):
        blocks = []
        if step.get("text") is not None:
            blocks.append({"type": "text", "text": step["text"]})
        for call in tool_calls(step):
            blocks.append({"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:24],
                           "name": call["name"], "input": call.get("input", {})})
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        usage = {"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        msg = {"id": rid("msg_"), "type": "message", "role": "assistant", "model": model,
               "stop_reason": None, "stop_sequence": None, "usage": usage}
        if not stream:
            return self.reply_json(200, dict(msg, content=blocks, stop_reason=stop))
        self.start_sse()
        self.sse("message_start", {"type": "message_start", "message": dict(msg, content=[])})
        if step.get("hang"):
            self.sse("content_block_start", {"type": "content_block_start", "index": 0,
                                             "content_block": {"type": "text", "text": ""}})
            self.sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                             "delta": {"type": "text_delta", "text": step.get("text") or "Working"}})
            return self.hold(b'event: ping\ndata: {"type": "ping"}\n\n')
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                self.sse("content_block_start", {"type": "content_block_start", "index": i,
                                                 "content_block": {"type": "text", "text": ""}})
                delta = {"type": "text_delta", "text": b["text"]}
            else:
                self.sse("content_block_start", {"type": "content_block_start", "index": i,
                                                 "content_block": dict(b, input={})})
                delta = {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}
            self.sse("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta})
            self.sse("content_block_stop", {"type": "content_block_stop", "index": i})
        self.sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                   "usage": {"output_tokens": 20}})
        self.sse("message_stop", {"type": "message_stop"})

    # ---- OpenAI Responses ------------------------------------------------------------------
    def openai_responses(self, body, entry):
        meta = self.headers.get("x-codex-turn-metadata") or ""
        if not body.get("tools") or "thread_title" in meta:
            entry["kind"] = "aux"
            log(entry)
            return self.responses_reply({"text": "Fake session title"})
        channel = "subagent" if self.headers.get("x-openai-subagent") else "main"
        i, step = next_step(channel)
        entry.update(kind="step", step=i, channel=channel)
        log(entry)
        pause(step)
        if "error" in step:
            return self.reply_json(step["error"], {"error": {
                "type": step.get("error_type", "invalid_request_error"), "code": step.get("code"),
                "message": step.get("message", "fake error"), "param": None}})
        self.responses_reply(fill_from_output(step, body.get("input") or []))

    def responses_reply(self, step):
        resp_id = rid("resp_")
        self.start_sse()
        ev = lambda name, **kw: self.sse(name, dict(type=name, **kw))  # noqa: E731
        ev("response.created", response={"id": resp_id, "object": "response", "status": "in_progress", "output": []})
        idx = 0
        if step.get("text") is not None or step.get("hang"):
            item_id = rid("msg_")
            text = step.get("text") or "Working"
            item = {"type": "message", "id": item_id, "role": "assistant", "status": "in_progress", "content": []}
            ev("response.output_item.added", output_index=idx, item=item)
            ev("response.output_text.delta", item_id=item_id, output_index=idx, content_index=0, delta=text)
            if step.get("hang"):
                return self.hold(b": keep-alive\n\n")
            ev("response.output_item.done", output_index=idx, item=dict(
                item, status="completed", content=[{"type": "output_text", "text": text, "annotations": []}]))
            idx += 1
        for call in tool_calls(step):
            item = {"type": "function_call", "id": rid("fc_"), "call_id": rid("call_"), "name": call["name"],
                    "arguments": json.dumps(call.get("input", {})), "status": "completed"}
            if call.get("namespace"):
                item["namespace"] = call["namespace"]
            ev("response.output_item.added", output_index=idx, item=dict(item, arguments=""))
            ev("response.output_item.done", output_index=idx, item=item)
            idx += 1
        ev("response.completed", response={"id": resp_id, "object": "response", "status": "completed", "usage": {
            "input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 120}})


    # ---- Gemini API ------------------------------------------------------------------------
    def gemini(self, body, entry, stream):
        tools = [d for t in body.get("tools") or [] for d in t.get("functionDeclarations") or []]
        if not tools:
            entry["kind"] = "aux"
            log(entry)
            config = body.get("generationConfig") or {}
            schema = config.get("responseJsonSchema") or config.get("responseSchema")
            text = json.dumps(from_schema(schema)) if schema else "OK"
            return self.gemini_reply({"text": text}, stream)
        i, step = next_step("main")
        entry.update(kind="step", step=i, channel="main")
        log(entry)
        pause(step)
        if "error" in step:
            code = step["error"]
            return self.reply_json(code, {"error": {"code": code, "message": step.get("message", "fake error"),
                                                     "status": step.get("status", "INVALID_ARGUMENT")}})
        self.gemini_reply(step, stream)

    def gemini_reply(self, step, stream):
        parts = []
        if step.get("text") is not None:
            parts.append({"text": step["text"]})
        for call in tool_calls(step):
            parts.append({"functionCall": {"name": call["name"], "args": call.get("input", {})}})
        usage = {"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120}
        chunk = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP",
                                 "index": 0}], "usageMetadata": usage, "modelVersion": "gemini-2.5-flash"}
        if not stream:
            return self.reply_json(200, chunk)
        self.start_sse()
        if step.get("hang"):
            first = {"candidates": [{"content": {"role": "model", "parts": [{"text": step.get("text") or "Working"}]},
                                     "index": 0}]}
            self.wfile.write(f"data: {json.dumps(first)}\r\n\r\n".encode())
            self.wfile.flush()
            return self.hold(b": keep-alive\r\n\r\n")
        self.wfile.write(f"data: {json.dumps(chunk)}\r\n\r\n".encode())
        self.wfile.flush()


def from_schema(schema):
    """A value that satisfies a (simple) JSON schema: what the CLI's side calls parse."""
    if not isinstance(schema, dict):
        return "ok"
    kind = str(schema.get("type", "object")).lower()
    if schema.get("enum"):
        return schema["enum"][0]
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: from_schema(v) for k, v in props.items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    return "ok"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--script", required=True)
    ap.add_argument("--log", required=True)
    args = ap.parse_args()
    with open(args.script) as f:
        script = json.load(f)
    STATE["lists"] = script if isinstance(script, dict) else {"main": script}
    STATE["log"] = args.log
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
