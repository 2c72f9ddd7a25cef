"""The phone side of the remote-decision scenarios (python3 stdlib only).

Starts `target/debug/lidguard-test-ntfy` (crates/lidguard-testreceiver/src/ntfy.rs: the parts of
ntfy's documented HTTP API lidguard uses, on 127.0.0.1), reads its one-line JSON banner, and does
what the ntfy app on a phone does: reads the topic's notifications (the poll API) and, when a
button is tapped, sends the action's HTTP request exactly as published (method, URL, headers,
body). Typed replies are posted to the reply topic with the access token.

    with Phone(repo) as phone:
        lidguard settings --ntfy-url phone.topic_url --ntfy-token phone.TOKEN ...
        q = phone.wait_for_notice(1, timeout=60)
        phone.tap(q, "Allow")
"""
import json
import os
import subprocess
import time
import urllib.error
import urllib.request

TOKEN = "tk_e2e_phone_token"
TOPIC = "lidguard-e2e-5c8b1f0a9d3e7246"


class Phone:
    def __init__(self, repo):
        binary = os.path.join(repo, "target", "debug", "lidguard-test-ntfy")
        self.proc = subprocess.Popen([binary, "--token", TOKEN], stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        self.url = json.loads(self.proc.stdout.readline())["url"]
        self.topic_url = f"{self.url}/{TOPIC}"
        self.reply_url = f"{self.url}/{TOPIC}-reply"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def _send(self, method, url, body=None, headers=None):
        req = urllib.request.Request(url, data=None if body is None else body.encode(), method=method)
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def notices(self, topic=TOPIC):
        status, text = self._send("GET", f"{self.url}/{topic}/json?poll=1&since=all",
                                  headers={"Authorization": "Bearer " + TOKEN})
        return [json.loads(x) for x in text.splitlines() if x.strip()] if status == 200 else []

    def wait_for_notice(self, n, timeout):
        """The n-th notification (1-based), or None after `timeout` seconds."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            got = self.notices()
            if len(got) >= n:
                return got[n - 1]
            time.sleep(0.2)
        return None

    def tap(self, notice, label):
        """Sends the HTTP request of the button `label`, as the ntfy app does; returns the status."""
        action = next(a for a in notice.get("actions", []) if a.get("label") == label)
        return self._send(action.get("method", "POST"), action["url"], action.get("body", ""),
                          action.get("headers") or {})[0]

    def reply(self, text):
        """Posts typed text to the reply topic (with the token); returns the status."""
        return self._send("POST", self.reply_url, text, {"Authorization": "Bearer " + TOKEN})[0]
