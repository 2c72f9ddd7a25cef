#!/usr/bin/env python3
"""Tiny stdio MCP server for the Claude Elicitation capture.

One tool, `ask_colour`: when called it sends an `elicitation/create` request to the client (Claude
Code), waits for the answer and returns it as the tool result. Newline-delimited JSON-RPC on stdio.
"""
import json
import sys

SCHEMA = {"type": "object", "properties": {"colour": {"type": "string", "description": "A colour"}},
          "required": ["colour"]}


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def main():
    pending = {}  # elicitation request id -> tools/call request id
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        method, mid = msg.get("method"), msg.get("id")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": msg["params"].get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}}, "serverInfo": {"name": "elicit", "version": "1.0.0"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [{
                "name": "ask_colour", "description": "Ask the user for a colour (uses MCP elicitation).",
                "inputSchema": {"type": "object", "properties": {}}}]}})
        elif method == "tools/call":
            eid = f"elicit-{mid}"
            pending[eid] = mid
            send({"jsonrpc": "2.0", "id": eid, "method": "elicitation/create",
                  "params": {"message": "Which colour do you want?", "requestedSchema": SCHEMA}})
        elif method is None and mid in pending:  # the client's answer to our elicitation
            result = msg.get("result") or {"error": msg.get("error")}
            send({"jsonrpc": "2.0", "id": pending.pop(mid), "result": {
                "content": [{"type": "text", "text": "elicitation answer: " + json.dumps(result)}]}})
        elif mid is not None and method is not None:  # ping, resources/list, prompts/list, ...
            if method == "ping":
                send({"jsonrpc": "2.0", "id": mid, "result": {}})
            else:
                send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "method not found"}})


if __name__ == "__main__":
    main()
