#!/usr/bin/env python3
"""Verify lidguard against the REAL OpenCode (offline, loopback only); kilo.py runs the same
scenarios with Kilo, OpenCode's fork (FLAVOR).

Usage (as root; `tests/e2e/verify/run.sh opencode` builds lidguard first, then runs this):
    opencode.py [scenario ...] [--out DIR]
    opencode.py --list

Each scenario is a `Run` (harness/run.py: its own HOME, XDG folders, `git init` project, fake lid
and display tree, LIDGUARD_HOME, the fake chat-completions model on 127.0.0.1). The real `lidguard
hook-install --provider opencode` writes lidguard's plugin (XDG_CONFIG_HOME or OPENCODE_CONFIG_DIR
pointing into the run) and `hook-status` must say `installed` before the client starts. What
lidguard received and decided comes from `lidguard hook-events --json`; what OpenCode did with the
answer from its event stream (`opencode serve`) and the model's requests; session states from a
`status --json` poller.

Ask before sleep (opencode-serve-ask, opencode-run-ask): the test receiver (harness/receiver.py,
started inside the namespace) is lidguard's `closedLidStopFollowUpWebhookUrl`; the driver answers
its question like a phone would. Continuation works under `opencode serve` (the reply comes back
into the same session); `opencode run` exits at the first session.idle, so a reply is never sent
back there.

Prints PASS/FAIL per check and finally `N passed, M failed`; exits 1 on any failure.
"""
import json
import os
import subprocess
import threading
import time
import urllib.error
import urllib.request
from harness import cli
from harness.ask import ask_setup, check_ask_log, check_continued_then_suspended, lidguard_log
from harness.clients import OPENCODE, OPENCODE_VERSION
from harness.constants import ASK_REPLY, LID_MSG, MODEL_DELAY, POST_STOP_DELAY, RECEIVER_BIN
from harness.procs import free_port, spawn, stop_popen
from harness.results import check, say
from harness.run import (FAKE, NOPROXY, Run, TOUCH, active_during, check_run_evidence, ev_summary, no_session_left,
                         session_of, tool_result_texts, user_texts)


class Flavor:
    """OpenCode, or Kilo CLI (its fork with the same plugin API, server and run mode)."""

    def __init__(self, name, binary, version, plugin_package, env_prefix, schema):
        self.name, self.binary, self.version = name, binary, version
        self.plugin_package, self.env_prefix, self.schema = plugin_package, env_prefix, schema


OPENCODE_FLAVOR = Flavor("opencode", OPENCODE, OPENCODE_VERSION, "@opencode-ai/plugin", "OPENCODE",
                         "https://opencode.ai/config.json")
FLAVOR = OPENCODE_FLAVOR  # kilo.py sets its own before running the shared scenarios


def opencode_prepare(run, permission, config_dir_var=False):
    """Startup-stall workaround and project config, then the real hook-install: the plugin goes to
    $XDG_CONFIG_HOME/<flavor>/plugins/ or, with config_dir_var, $<FLAVOR>_CONFIG_DIR/plugins/."""
    dirs = [run.path("xdg", "config", FLAVOR.name)]
    if config_dir_var:
        dirs.append(run.path(f"{FLAVOR.name}-config"))
    for cfg in dirs:
        os.makedirs(os.path.join(cfg, "node_modules"), exist_ok=True)
        # startup-stall workaround: the agent believes its plugin package is installed already
        deps = {FLAVOR.plugin_package: FLAVOR.version}
        with open(os.path.join(cfg, "package.json"), "w") as f:
            json.dump({"dependencies": deps}, f)
        with open(os.path.join(cfg, "package-lock.json"), "w") as f:
            json.dump({"lockfileVersion": 3, "packages": {"": {"dependencies": deps}}}, f)
    conf = {"$schema": FLAVOR.schema, "model": "fake/fake-model", "small_model": "fake/fake-model",
            "autoupdate": False, "share": "disabled", "permission": permission,
            "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake",
                                  "options": {"baseURL": f"http://127.0.0.1:{run.port}/v1", "apiKey": "fake-key"},
                                  "models": {"fake-model": {"name": "Fake model", "tool_call": True,
                                                            "limit": {"context": 128000, "output": 4096}}}}}}
    with open(os.path.join(run.proj, f"{FLAVOR.name}.json"), "w") as f:
        json.dump(conf, f, indent=1)
    if config_dir_var:
        run.install(FLAVOR.name, **{f"{FLAVOR.env_prefix}_CONFIG_DIR": dirs[-1]},
                    XDG_CONFIG_HOME=run.path("xdg", "config"))
    else:
        run.install(FLAVOR.name, XDG_CONFIG_HOME=run.path("xdg", "config"))


def opencode_env(run):
    env = run.base_env()
    env["TERM"] = "dumb"
    for what in ("MODELS_FETCH", "AUTOUPDATE", "LSP_DOWNLOAD", "SHARE", "DEFAULT_PLUGINS"):
        env[f"{FLAVOR.env_prefix}_DISABLE_{what}"] = "1"
    return env


class Serve:
    """`opencode serve` plus a reader of its /event SSE stream."""

    def __init__(self, run):
        self.run = run
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc = spawn([FLAVOR.binary, "serve", "--hostname", "127.0.0.1", "--port", str(self.port),
                           "--print-logs", "--log-level", "INFO"], cwd=run.proj, env=opencode_env(run),
                          stdin=subprocess.DEVNULL, stdout=open(run.path("serve.stdout"), "w"),
                          stderr=open(run.path("serve.stderr"), "w"))
        self.events = []
        self.lock = threading.Lock()
        self.stream = None

    def call(self, method, path, body=None, timeout=60):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with NOPROXY.open(req, timeout=timeout) as r:
                status, text = r.status, r.read().decode(errors="replace")
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read().decode(errors="replace")
        except Exception as e:  # noqa: BLE001
            status, text = None, repr(e)
        with open(self.run.path("api.jsonl"), "a") as f:
            f.write(json.dumps({"t": time.time(), "method": method, "path": path, "body": body,
                                "status": status, "response": text[:5000]}) + "\n")
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text

    def wait_up(self, timeout=60):
        end = time.time() + timeout
        while time.time() < end:
            if self.proc.poll() is not None:
                return False
            st, _ = self.call("GET", "/session", timeout=2)
            if st == 200:
                return True
            time.sleep(0.3)
        return False

    def _read_events(self):
        try:
            self.stream = NOPROXY.open(urllib.request.Request(self.base + "/event"), timeout=300)
            with open(self.run.path("sse.jsonl"), "a") as log:
                for raw in self.stream:
                    line = raw.decode(errors="replace").strip()
                    if not line.startswith("data:"):
                        continue
                    try:
                        ev = json.loads(line[5:])
                    except ValueError:
                        continue
                    ev["_t"] = time.time()
                    log.write(json.dumps(ev) + "\n")
                    log.flush()
                    with self.lock:
                        self.events.append(ev)
        except Exception:  # noqa: BLE001 - the stream ends when the server stops
            pass

    def listen(self):
        threading.Thread(target=self._read_events, daemon=True).start()
        time.sleep(0.5)

    def of(self, typ, sid=None):
        with self.lock:
            return [e for e in self.events if e.get("type") == typ
                    and (sid is None or (e.get("properties") or {}).get("sessionID") == sid)]

    def wait(self, typ, sid=None, timeout=30, count=1):
        end = time.time() + timeout
        while time.time() < end:
            evs = self.of(typ, sid)
            if len(evs) >= count:
                return evs
            time.sleep(0.2)
        return None

    def stop(self):
        stop_popen(self.proc)


def opencode_serve_permission(root, case):
    """case: deny | allow | open."""
    lid = "open" if case == "open" else "closed"
    decision = "deny" if case == "open" else case
    tag = f"{FLAVOR.name}-serve-{case if case != 'open' else 'lid-open'}"
    run = Run(root, tag, lid=lid, decision=decision)
    srv = None
    try:
        run.start_fake(TOUCH)
        opencode_prepare(run, {"bash": "ask"})
        srv = Serve(run)
        if not check(f"{tag}: {FLAVOR.name} serve is up", srv.wait_up(), open(run.path("serve.stderr")).read()[-800:]):
            return
        srv.listen()
        st, sess = srv.call("POST", "/session", {})
        sid = sess["id"]
        threading.Thread(target=srv.call, args=("POST", f"/session/{sid}/message",
                                                {"parts": [{"type": "text", "text": "go"}]}, 120), daemon=True).start()
        asked = srv.wait("permission.asked", sid, timeout=60)
        if not check(f"{tag}: {FLAVOR.name} asked permission.asked for bash", asked, [e.get("type") for e in srv.events][-20:]):
            return
        perm_id = asked[0]["properties"]["id"]
        newfile = os.path.join(run.proj, "newfile.txt")
        if case in ("deny", "allow"):
            want = "reject" if case == "deny" else "once"
            replied = srv.wait("permission.replied", sid, timeout=20)
            reply = replied[0]["properties"].get("reply") if replied else None
            check(f"{tag}: permission.replied with {want!r} arrived on the event stream (the plugin answered)",
                  reply == want, f"reply={reply}")
            srv.wait("session.idle", sid, timeout=30)
            run.wait_event("session.idle", timeout=10)
            created = os.path.exists(newfile)
            check(f"{tag}: newfile.txt {'not ' if case == 'deny' else ''}created",
                  created == (case == "allow"), f"created={created}")
            st, msgs = srv.call("GET", f"/session/{sid}/message")
            tool_parts = [p for m in (msgs if isinstance(msgs, list) else []) for p in m.get("parts", [])
                          if p.get("type") == "tool"]
            states = [(p.get("tool"), (p.get("state") or {}).get("status"), (p.get("state") or {}).get("error"))
                      for p in tool_parts]
            want_state = "error" if case == "deny" else "completed"
            check(f"{tag}: the session's bash tool part is {want_state}",
                  states and states[0][1] == want_state, states)
            evs = run.events()
            dec = [e.get("decision") for e in evs if e.get("hookEvent") == "permission.asked" and e.get("decision")]
            action = "denyPermission" if case == "deny" else "allowPermission"
            if case == "deny":
                # what lidguard printed ({"status":"deny","message":…}) as OpenCode used it: the plugin
                # replied reject with lidguard's message, which the model gets as the rejection feedback
                msg = (dec[0] or {}).get("message", "") if dec else ""
                fed = [t for t in tool_result_texts(run) if msg and msg in t]
                calls = [r for r in run.model_requests() if r.get("served") != "fixed"]
                check(f"{tag}: lidguard's deny message (hook-events) reached the model as the rejection feedback; "
                      "the turn continued", LID_MSG in msg and fed and len(calls) > 1,
                      f"message={msg!r} model calls={len(calls)} tool results={tool_result_texts(run)}")
            else:
                check(f"{tag}: lidguard's allow carries no message (hook-events decision)",
                      dec and "message" not in dec[0], dec)
            check(f"{tag}: hook-events shows the decision {action}", dec and dec[0].get("action") == action,
                  f"{dec} / {ev_summary(evs)}")
            stopped = [e for e in evs if e.get("hookEvent") == "session.idle" and e.get("outcome") == "stopped"]
            check(f"{tag}: session.idle stopped the session", stopped, ev_summary(evs))
        else:
            time.sleep(5)  # nobody answers: no automatic reply may arrive
            replied = srv.of("permission.replied", sid)
            st, pending = srv.call("GET", "/permission")
            still = [p for p in (pending if isinstance(pending, list) else []) if p.get("id") == perm_id]
            check(f"{tag}: no automatic reply: no permission.replied after 5 s and GET /permission still lists it",
                  not replied and still, f"replied={replied} pending={pending}")
            asked_evs = [e for e in run.events() if e.get("hookEvent") == "permission.asked"]
            check(f"{tag}: lidguard printed nothing on permission.asked (hook-events: recorded without a decision)",
                  asked_evs and not any(e.get("decision") for e in asked_evs), ev_summary(asked_evs))
            ses = session_of(run.sessions(), FLAVOR.name)
            check(f"{tag}: status --json shows the session soft-locked with reason permission.asked",
                  ses and ses[0].get("softLockReason") == "permission.asked", ses)
            # the driver answers it now (reject), as the user would
            srv.call("POST", f"/permission/{perm_id}/reply", {"reply": "reject"})
            replied = srv.wait("permission.replied", sid, timeout=20)
            srv.wait("session.idle", sid, timeout=30)
            run.wait_event("session.idle", timeout=10)
            check(f"{tag}: after the driver's reply the soft-lock clears and session.idle stops the session",
                  replied and not session_of(run.sessions(), FLAVOR.name),
                  f"replied={bool(replied)} sessions={run.sessions()} events={ev_summary(run.events())}")
            check(f"{tag}: newfile.txt not created (driver rejected)", not os.path.exists(newfile))
        srv.call("DELETE", f"/session/{sid}")
        srv.wait("session.deleted", sid, timeout=10)
        run.wait_event("session.deleted", timeout=5)
        no_session_left(run, FLAVOR.name, f"{tag}: no session at the end")
    finally:
        if srv:
            srv.stop()
        run.finish()


def opencode_serve_interrupt(root):
    """The user stops a turn while a long bash call runs (POST /session/{id}/abort, what Escape
    does in the TUI): the session must end at once, not wait for an idle that means nothing."""
    tag = f"{FLAVOR.name}-serve-interrupt"
    run = Run(root, tag, lid="open", decision="deny")
    srv = None
    try:
        run.start_fake([{"tool": "bash", "args": {"command": "sleep 30", "description": "Wait"}},
                        {"text": "Waited."}])
        opencode_prepare(run, {"bash": "allow"})
        srv = Serve(run)
        if not check(f"{tag}: {FLAVOR.name} serve is up", srv.wait_up(),
                     open(run.path("serve.stderr")).read()[-800:]):
            return
        srv.listen()
        st, sess = srv.call("POST", "/session", {})
        sid = sess["id"]
        threading.Thread(target=srv.call, args=("POST", f"/session/{sid}/message",
                                                {"parts": [{"type": "text", "text": "go"}]}, 120), daemon=True).start()
        active_during(run, FLAVOR.name, "tool.execute.before", f"{tag}: while bash runs the session is active")
        t_abort = time.time()
        srv.call("POST", f"/session/{sid}/abort", {})
        end = time.time() + 10
        while session_of(run.sessions(), FLAVOR.name) and time.time() < end:
            time.sleep(0.2)
        gone = not session_of(run.sessions(), FLAVOR.name)
        check(f"{tag}: the abort ended the session within 10 s ({time.time() - t_abort:.1f} s)", gone,
              ev_summary(run.events()))
        srv.call("DELETE", f"/session/{sid}")
    finally:
        if srv:
            srv.stop()
        run.finish()


def opencode_run(root):
    tag = f"{FLAVOR.name}-run"
    run = Run(root, tag, lid="open", decision="deny")
    try:
        run.start_fake([{"tool": "bash", "args": {"command": "echo hello", "description": "Say hello"},
                         "delay": MODEL_DELAY}, {"text": "Done: hello.", "delay": MODEL_DELAY}])
        opencode_prepare(run, {}, config_dir_var=True)
        p = spawn([FLAVOR.binary, "run", "--print-logs", "--log-level", "INFO", "go"], cwd=run.proj,
                  env=opencode_env(run), stdin=subprocess.DEVNULL,
                  stdout=open(run.path("stdout"), "w"), stderr=open(run.path("stderr"), "w"))
        try:
            rc = p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            stop_popen(p)
            rc = None
        run.wait_event("session.idle", timeout=5)
        check(f"{tag}: {FLAVOR.name} run exit 0", rc == 0, f"exit {rc}")
        evs = [e for e in run.events() if e.get("provider") == FLAVOR.name]
        summ = ev_summary(evs)
        started = [e for e in evs if e.get("hookEvent") == "chat.message" and e.get("outcome") == "started"]
        check(f"{tag}: chat.message started the session", started, summ)
        kinds = [e.get("kind") for e in evs]
        check(f"{tag}: tool.execute.before/after recorded as tool-starting/tool-finished",
              "tool-starting" in kinds and "tool-finished" in kinds, summ)
        idle = [e for e in evs if e.get("hookEvent") == "session.idle" and e.get("outcome") == "stopped"]
        check(f"{tag}: session.idle ended the session (turn-stopped, outcome stopped)", idle, summ)
        check_run_evidence(run, FLAVOR.name, "chat.message",
                           lambda e: e.get("hookEvent") == "session.idle" and e.get("outcome") == "stopped")
        no_session_left(run, FLAVOR.name, f"{tag}: status --json has no session at the end")
    finally:
        run.finish()


def opencode_serve_ask(root):
    """`opencode serve`, lid closed, ask before sleep on: the turn ends (session.idle), lidguard's
    hook holds the stop while OpenCode goes on delivering events, the receiver gets the question,
    the driver replies, and the plugin sends the reply back into the same session: the model gets
    it as the next user message of that session. The continued turn's stop says stopHookActive
    (repeat off: lidguard then sleeps at once)."""
    tag = "opencode-serve-ask"
    run = Run(root, tag, lid="closed", decision="deny")
    srv = rcv = None
    try:
        rcv = ask_setup(run)
        if not rcv:
            return
        run.start_fake([{"text": "First answer."}, {"text": "README updated."}])
        opencode_prepare(run, {})
        srv = Serve(run)
        if not check(f"{tag}: opencode serve is up", srv.wait_up(), open(run.path("serve.stderr")).read()[-800:]):
            return
        srv.listen()
        st, sess = srv.call("POST", "/session", {})
        sid = sess["id"]
        srv.call("POST", f"/session/{sid}/message", {"parts": [{"type": "text", "text": "go"}]}, 120)
        idle = run.wait_event("session.idle", timeout=30)
        first = (idle or [{}])[0]
        ev1 = first.get("event") or {}
        check(f"{tag}: the first session.idle is a continuable stop (canContinue, stopHookActive false)",
              first.get("outcome") == "stopped" and ev1.get("canContinue") is True and ev1.get("stopHookActive") is False,
              json.dumps(first)[:600])
        if not idle:
            return
        # While lidguard holds that stop: OpenCode goes on delivering events to the plugin (a scratch
        # session's deletion reaches lidguard) and the hook is still waiting.
        st, scratch = srv.call("POST", "/session", {})
        srv.call("DELETE", f"/session/{scratch.get('id')}")
        deleted = run.wait_event("session.deleted", timeout=8,
                                 pred=lambda e: e.get("sessionId") == scratch.get("id"))
        held = run.hook_processes("opencode-hook")
        check(f"{tag}: while lidguard holds the stop, other plugin events still reach it (a scratch session's "
              "session.deleted) and the session.idle hook is still waiting",
              deleted and any("session.idle" in c for _, c in held) and not rcv.questions(),
              f"deleted={bool(deleted)} hooks={held} questions={len(rcv.questions())}")
        q = rcv.wait_for_question(timeout=POST_STOP_DELAY + 20)
        t_q = time.time()
        body = next((r.get("json") for r in rcv.requests()
                     if (r.get("json") or {}).get("eventType") == "StopFollowUp"), None) or {}
        check(f"{tag}: {POST_STOP_DELAY} s after session.idle the receiver got the StopFollowUp question for this session "
              "(with the last answer)",
              q and body.get("sessionIdentifier") == sid and body.get("provider", "").lower() == "opencode"
              and body.get("lastAssistantMessage") == "First answer." and t_q - first["t"] >= POST_STOP_DELAY - 1,
              f"after {t_q - first['t']:.1f} s: {json.dumps(body)[:600]}")
        if not q:
            return
        res = rcv.reply(q["id"], ASK_REPLY)
        got = None
        end = time.time() + 30
        while time.time() < end and not got:
            got = [r for r in run.model_requests() if r.get("served") != "fixed"
                   and any(ASK_REPLY in t for t in user_texts(r))]
            time.sleep(0.25)
        reqs = [r for r in run.model_requests() if r.get("served") != "fixed"]
        texts = user_texts(got[0]) if got else []
        check(f"{tag}: the driver's reply ({ASK_REPLY!r}) reached the model as the next user message of the same "
              "session (after the first turn's 'go')",
              res.get("replyConsumed") and texts and texts[-1].strip() == ASK_REPLY and "go" in texts[0],
              f"reply={res} user texts per request={[user_texts(r) for r in reqs]}")
        second = srv.wait("session.idle", sid, timeout=30, count=2)
        idles = run.wait_event("session.idle", count=2, timeout=10) or []
        ev2 = (idles[1].get("event") or {}) if len(idles) > 1 else {}
        check(f"{tag}: the continued turn ended with a second session.idle carrying stopHookActive true",
              second and ev2.get("stopHookActive") is True and ev2.get("lastAssistantMessage") == "README updated.",
              json.dumps(idles)[:800])
        st, msgs = srv.call("GET", f"/session/{sid}/message")
        conv = [((m.get("info") or {}).get("role"),
                 " ".join(p.get("text", "") for p in m.get("parts", []) if p.get("type") == "text").strip())
                for m in (msgs if isinstance(msgs, list) else [])]
        check(f"{tag}: the OpenCode session holds go / First answer. / the reply / README updated.",
              conv == [("user", "go"), ("assistant", "First answer."), ("user", ASK_REPLY), ("assistant", "README updated.")],
              conv)
        check_continued_then_suspended(run, tag)
        check(f"{tag}: one question only", len(rcv.questions()) == 1, rcv.questions())
        srv.call("DELETE", f"/session/{sid}")
        run.wait_event("session.deleted", timeout=5, pred=lambda e: e.get("sessionId") == sid)
        left = run.hook_processes("opencode-hook")
        check(f"{tag}: no lidguard hook process left", not left, left)
        check_ask_log(run, tag)
        no_session_left(run, "opencode", f"{tag}: no session at the end")
    finally:
        if srv:
            srv.stop()
        if rcv:
            rcv.close()
        run.finish()


def opencode_run_ask(root):
    """`opencode run`, lid closed, ask before sleep on. `run` exits right after the first
    session.idle, so a reply could never be sent back: lidguard's hook for that idle outlives the
    process (it waits in the daemon, stdout to a dead pipe). Nothing may hang: run exits at once;
    after the post-stop delay lidguard sees the process is gone, asks nothing, lets the hook go
    and the suspend goes on."""
    tag = "opencode-run-ask"
    run = Run(root, tag, lid="closed", decision="deny")
    rcv = None
    try:
        rcv = ask_setup(run)
        if not rcv:
            return
        run.start_fake([{"text": "First answer."}, {"text": "README updated."}])
        opencode_prepare(run, {}, config_dir_var=True)
        p = spawn([OPENCODE, "run", "--print-logs", "--log-level", "INFO", "go"], cwd=run.proj,
                  env=opencode_env(run), stdin=subprocess.DEVNULL,
                  stdout=open(run.path("stdout"), "w"), stderr=open(run.path("stderr"), "w"))
        try:
            rc = p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            stop_popen(p)
            rc = None
        t_exit = time.time()
        held = run.hook_processes("opencode-hook")
        idle = run.wait_event("session.idle", timeout=5)
        t_idle = idle[0]["t"] if idle else None
        check(f"{tag}: opencode run exits 0 right after session.idle, while lidguard's hook for it still waits",
              rc == 0 and t_idle and t_exit - t_idle < 5 and any("session.idle" in c for _, c in held),
              f"exit {rc}, {t_exit - t_idle if t_idle else None} s after session.idle; hooks {held}")
        # The post-stop delay passes; then lidguard sees the agent's process is gone and does not
        # ask (a reply could not be delivered): the hook is let go and the suspend goes on.
        end = time.time() + POST_STOP_DELAY + 15
        while time.time() < end and (run.hook_processes("opencode-hook") or session_of(run.sessions(), "opencode")):
            time.sleep(0.25)
        say(f"INFO {tag}: hook gone and no session {time.time() - t_exit:.1f} s after the exit")
        left = run.hook_processes("opencode-hook")
        check(f"{tag}: lidguard's hook exits and no session is left", not left and not session_of(run.sessions(), "opencode"),
              f"hooks {left} sessions {run.sessions()}")
        check(f"{tag}: no question went out (the agent's process was gone)", rcv.questions() == [],
              rcv.questions())
        time.sleep(0.5)
        log = lidguard_log(run)
        names = [l.split("event=")[1].split(" ")[0] for l in log if "event=" in l]
        say("INFO " + tag + ": " + "; ".join(l.split("event=")[1][:90] for l in log
                                             if "event=" in l and ("stop-follow-up" in l or "session-" in l
                                                                   or "watched" in l or "suspend" in l)))
        ok = ("stop-follow-up-canceled" in names and "suspend-requested" in names
              and names.index("stop-follow-up-canceled") < names.index("suspend-requested")
              and "session-continued" not in names)
        check(f"{tag}: the wait ends as canceled (agent exited) and the suspend goes on", ok,
              [l.split("event=")[1][:120] for l in log if "event=" in l and ("suspend" in l or "stop-follow" in l)])
        calls = [r for r in run.model_requests() if r.get("served") != "fixed"]
        check(f"{tag}: the reply never reached the model (run mode cannot continue a session)",
              not any(ASK_REPLY in t for r in calls for t in user_texts(r)), [user_texts(r) for r in calls])
        check_ask_log(run, tag, allowed=("cannot write the hook output",))
    finally:
        if rcv:
            rcv.close()
        run.finish()


SCENARIOS = [("opencode-serve-deny", lambda r: opencode_serve_permission(r, "deny")),
             ("opencode-serve-allow", lambda r: opencode_serve_permission(r, "allow")),
             ("opencode-serve-lid-open", lambda r: opencode_serve_permission(r, "open")),
             ("opencode-serve-interrupt", opencode_serve_interrupt),
             ("opencode-run", opencode_run),
             ("opencode-serve-ask", opencode_serve_ask),
             ("opencode-run-ask", opencode_run_ask)]

if __name__ == "__main__":
    cli.main(__file__, __doc__, f"lidguard vs OpenCode {OPENCODE_VERSION}", [FAKE, OPENCODE, RECEIVER_BIN], SCENARIOS)
