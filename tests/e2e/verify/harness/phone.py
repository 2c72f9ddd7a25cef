"""The phone side of the remote-decision scenarios (python3 stdlib only).

Starts `target/debug/lidguard-test-ntfy` (crates/lidguard-testreceiver/src/ntfy.rs: the parts of
ntfy's documented HTTP API lidguard uses, on 127.0.0.1), reads its one-line JSON banner, and does
what the ntfy app on a phone does: reads the topic's notifications (the poll API) and, when a
button is tapped, sends the action's HTTP request exactly as published (method, URL, headers,
body). Typed replies are posted to the reply topic with the access token. For the scenarios:
`remote_settings` points lidguard at it, `PhoneTapper` answers lidguard's questions step by step,
`with_phone` runs a scenario with the phone up.

    with Phone(repo) as phone:
        lidguard settings --ntfy-url phone.topic_url --ntfy-token phone.TOKEN ...
        q = phone.wait_for_notice(1, timeout=60)
        phone.tap(q, "Allow")
"""
import json
import os
import time
import threading
import urllib.error
import urllib.request

from .constants import REPO
from .procs import BannerServer
from .results import R

TOKEN = "tk_e2e_phone_token"
TOPIC = "lidguard-e2e-5c8b1f0a9d3e7246"


class Phone(BannerServer):
    def __init__(self, repo):
        super().__init__(os.path.join(repo, "target", "debug", "lidguard-test-ntfy"), "--token", TOKEN)
        self.topic_url = f"{self.url}/{TOPIC}"
        self.reply_url = f"{self.url}/{TOPIC}-reply"

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


# ---- the scenarios' side: lidguard set up for the phone, and a thumb on it ----------------------
REMOTE_WAIT = 20  # remoteDecisionTimeoutSeconds: room for the 5 s polls of the reply topic
REMOTE_DENY = "denied this action from their phone"
REMOTE_TIMEOUT = "nobody answered this permission request on the phone in time"


def remote_settings(c, phone):
    """ntfy on (the stand-in, with its token) before hook-install, so the managed hook timeout
    covers the remote wait."""
    c.lidguard("settings", "--ntfy-url", phone.topic_url, "--ntfy-token", TOKEN,
               "--remote-decision-timeout-seconds", str(REMOTE_WAIT), check=True)


class PhoneTapper:
    """Answers the permission questions on the phone, one plan step per question, on a thread.
    A step: {"tap": label} taps that button; {"before": [...]} first sends junk replies
    ("wrong-code", "reuse-first", "forge-request") and waits one poll; {"tap": None} answers nothing."""

    def __init__(self, c, phone, plan):
        self.c, self.phone, self.plan = c, phone, plan
        self.questions, self.done = [], []
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        for n, step in enumerate(self.plan, 1):
            q = self.phone.wait_for_notice(n, 90)
            if not q:
                return
            self.questions.append(q)
            for junk in step.get("before", []):
                if junk == "wrong-code":
                    status = self.phone.reply("aaaa-bbbb-cccc-dddd allow")
                elif junk == "reuse-first":
                    status = self.phone.tap(self.questions[0], "Allow")
                else:  # forge-request: this question's Allow body naming the first question
                    body = json.loads(self.button(q, "Allow")["body"])
                    body["request"] = json.loads(self.button(self.questions[0], "Allow")["body"])["request"]
                    status = self.phone.reply(json.dumps(body))
                self.done.append((junk, status))
            if step.get("before"):
                time.sleep(1)  # the junk is posted first (replies are judged in the order ntfy took them)
            if step.get("tap"):
                self.done.append((step["tap"], self.phone.tap(q, step["tap"])))

    @staticmethod
    def button(q, label):
        return next((a for a in q.get("actions", []) if a.get("label") == label), {})

    def check_question(self, i, tool, command):
        """The i-th question as the phone showed it: tool, command, buttons bound to the reply topic."""
        q = self.questions[i] if len(self.questions) > i else {}
        allow = self.button(q, "Allow")
        ok = (tool in (q.get("title") or "") and (q.get("message") or "").startswith(f"{tool}: {command}")
              and [a.get("label") for a in q.get("actions", [])] == ["Allow", "Deny"]
              and allow.get("url") == self.phone.reply_url
              and allow.get("headers", {}).get("Authorization") == "Bearer " + TOKEN
              and q.get("priority") == 4)
        return R.check(self.c.name, f"question {i + 1} on the phone: '{tool}: {command}', Allow/Deny posting to the "
                                    "reply topic with the token", ok, json.dumps(q)[:500])


def lidguard_stream(c):
    p = c.lidguard("events", "--json")
    return [json.loads(x) for x in p.stdout.splitlines() if x.strip()]


def with_phone(runner):
    """Runs `runner(c, port, phone)` with the ntfy stand-in up for the scenario."""
    def run(c, port):
        with Phone(REPO) as phone:
            runner(c, port, phone)
    return run
