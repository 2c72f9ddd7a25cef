"""The ask-before-sleep receiver for the e2e drivers (python3 stdlib only).

Starts `target/debug/lidguard-test-receiver` (crates/lidguard-testreceiver: the reference
receiver's webhook and poll protocol on 127.0.0.1, plus test-only inspection endpoints), reads
its one-line JSON banner, and offers what a driver needs: the webhook URL to configure, the
follow-up questions it received, and the dashboard actions (reply, extend, cancel) through the
same HTTP endpoints a phone would use.

    with Receiver(repo) as r:
        lidguard settings --closed-lid-stop-follow-up-webhook-url r.webhook_url ...
        q = r.wait_for_question(timeout=60)
        r.reply(q["id"], "also update the README")
"""
import json
import os
import time
import urllib.error
import urllib.request

from .procs import BannerServer

TOKEN = "e2e-access-token"


class Receiver(BannerServer):
    def __init__(self, repo, *flags):
        super().__init__(os.path.join(repo, "target", "debug", "lidguard-test-receiver"), "--access-token", TOKEN,
                         *flags)
        self.webhook_url = self.banner["webhookUrl"]

    def _call(self, method, path, body=None, auth=False):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if auth:
            req.add_header("Authorization", "Bearer " + TOKEN)
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                text = resp.read().decode()
        except urllib.error.HTTPError as e:
            text = e.read().decode()
        try:
            return json.loads(text)
        except ValueError:
            return text

    def requests(self):
        """Every request the receiver got: {method, path, headers, body, json, receivedAt}."""
        return self._call("GET", "/test/requests")

    def questions(self):
        """The follow-up requests (StopFollowUp webhooks accepted): {id, status, reply, ...}."""
        return self._call("GET", "/test/follow-ups")

    def wait_for_question(self, timeout, exclude=()):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for q in self.questions():
                if q["id"] not in exclude:
                    return q
            time.sleep(0.2)
        return None

    def reply(self, qid, text, wait_for_consumption=True):
        return self._call("POST", f"/api/follow-ups/{qid}/reply",
                          {"reply": text, "waitForConsumption": wait_for_consumption}, auth=True)

    def extend(self, qid, minutes=1):
        return self._call("POST", f"/api/follow-ups/{qid}/extend", {"extendMinutes": minutes}, auth=True)

    def cancel(self, qid):
        return self._call("POST", f"/api/follow-ups/{qid}/cancel", auth=True)
