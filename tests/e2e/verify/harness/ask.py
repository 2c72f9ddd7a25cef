"""Ask before sleep (StopFollowUp): the agent's turn ends with the lid closed, lidguard asks the
test receiver (receiver.py: lidguard's `closedLidStopFollowUpWebhookUrl`) what to do next and the
driver answers like a phone would. `ask_scenario` is the scenario of an agent run headless from a
`Ctx` (claude -p, codex exec), told by an `AskAgent`; `ask_setup` and the log checks serve the
drivers built on `Run` (OpenCode, Gemini, Qwen)."""
import json
import os
import subprocess
import time
from dataclasses import dataclass
from typing import Callable, Optional

from . import lgverify
from .constants import ASK_REPLY, LIDGUARD, LOGIND_BIN, POST_STOP_DELAY, RECEIVER_BIN, REPLY_WAIT, REPO
from .procs import alive, hook_processes, stop_popen, wait_exit, wait_gone, wait_or_stop
from .receiver import Receiver
from .results import R, check
from .run import no_session_left
from .scene import brief, check_log_sequence, common, delayed, history, session_in, wait_history


@dataclass
class AskAgent:
    """What `ask_scenario` needs from an agent run headless."""
    command: str  # as the checks name it: "claude -p"
    setup: Callable  # (c, port) -> the agent's environment, lidguard's hooks installed
    start: Callable  # (c, env, prompt) -> the agent's Popen
    hooks_file: Callable  # c -> the file hook-install wrote lidguard's Stop entry to
    stop_runs: Optional[Callable] = None  # (c, count) -> the Stop hook's [(t, status)], [(t, stdout)] as the agent logged them
    after_exit: Optional[Callable] = None  # c -> None: what the driver reads once the agent has exited


class PrivateLogind:
    """target/debug/lidguard-private-logind (crates/lidguard-testbus): the real systemd-logind on a
    private system bus, started from inside the namespace. It serves only where logind answers
    CanSuspend=na and CanHibernate=na (so no suspend request can reach the real machine), prints
    one JSON line ({"address": ...} or {"error": ...}) and stops logind when its stdin closes."""

    def __init__(self, run):
        self.err = os.path.join(run, "private-logind.txt")
        with open(self.err, "w") as err:
            self.proc = subprocess.Popen([LOGIND_BIN], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                         text=True)
        line = self.proc.stdout.readline()  # bounded: the bin waits at most 120 s for another private logind
        try:
            self.info = json.loads(line)
        except ValueError:
            self.info = {"error": f"no ready line ({line!r}); see {self.err}"}
        self.address = self.info.get("address")

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()  # the bin stops logind and its bus, then exits
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.terminate()
                try:
                    self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()


def start_private_logind(c):
    """The private logind for a scenario, its bus in the scenario's DBUS_SYSTEM_BUS_ADDRESS; None
    when it cannot serve here. It refuses where logind could really suspend the machine (not
    CanSuspend=na): then the scenario goes on without it (no bus, as the others) and says so.
    Any other failure is a FAIL under CI (which must run it, as the logind tests) and a note
    elsewhere."""
    logind = PrivateLogind(c.run)
    if logind.address:
        c.lg_env["DBUS_SYSTEM_BUS_ADDRESS"] = logind.address
        R.check(c.name, "private systemd-logind up (lidguard-private-logind: CanSuspend=na, CanHibernate=na)", True,
                json.dumps(logind.info))
        return logind
    logind.close()
    error = logind.info.get("error", "")
    if "refusing to serve" not in error and os.environ.get("CI"):
        R.check(c.name, "private systemd-logind up (CI must run it)", False, error)
    else:
        print(f"INFO [{c.name}] no private logind ({error}); the suspend request goes to no bus", flush=True)
    return None


def installed_stop_timeout(agent, c):
    """The timeout hook-install wrote on lidguard's Stop entry in the agent's hooks file."""
    path = agent.hooks_file(c)
    try:
        groups = json.load(open(path))["hooks"]["Stop"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        return f"<{path}: {e}>"
    return [h.get("timeout") for g in groups for h in g.get("hooks") or [] if "-hook" in (h.get("command") or "")]


def model_session(step):
    """The session a model request belongs to, from what the client sends with it."""
    h, b = step.get("headers") or {}, step.get("body") or {}
    for k in ("x-claude-code-session-id", "session_id", "conversation_id"):
        if h.get(k):
            return f"{k}={h[k]}"
    uid = (b.get("metadata") or {}).get("user_id")
    if uid:
        try:
            return "metadata.user_id.session_id=" + json.loads(uid)["session_id"]
        except (ValueError, KeyError, TypeError):
            return f"metadata.user_id={uid}"
    if b.get("prompt_cache_key"):
        return f"prompt_cache_key={b['prompt_cache_key']}"
    return None


def ask_status(c):
    """status --json: (askBeforeSleep, pendingSuspend.ask or None, the whole status)."""
    st = c.status()
    ask = ((st.get("pendingSuspend") or {}).get("ask")) if isinstance(st, dict) else None
    return st.get("askBeforeSleep"), ask, st


def ask_key_sid(ask):
    key = (ask or {}).get("key") or {}
    return key.get("sessionId") or key.get("session_id")


def hook_pids(c):
    """The pids of the scenario's running `lidguard-hook <provider>-hook` processes."""
    return [pid for pid, _ in hook_processes(c.lg_env["LIDGUARD_HOME"], f"{c.provider}-hook")]


def check_waiting_at_question(c, p, hooks, n_steps, t_stop, q, label_extra=""):
    """When the question arrives the Stop hook still waits: its process lives, the agent has not
    exited, the model has had no further request; the question came after the post-stop delay."""
    running = alive(hooks)
    R.check(c.name, f"the Stop hook still waits when the question arrives{label_extra} (hook process alive, agent "
            "running, no new model request)",
            bool(running) and p.poll() is None and len(c.model_steps()) == n_steps,
            f"hook pids {running} of {hooks}; agent rc={p.poll()}; model step requests {len(c.model_steps())} "
            f"(before: {n_steps})")
    gap = lgverify.parse_at(q["createdAtUtc"]) - t_stop
    R.check(c.name, f"the question came after the post-stop delay ({POST_STOP_DELAY} s){label_extra}",
            POST_STOP_DELAY - 0.5 <= gap <= POST_STOP_DELAY + 6, f"{gap:.1f} s after Stop")


def check_awaiting(c, sid, label):
    state, ask, st = ask_status(c)
    ok = state == "on" and ask and ask.get("status") == "awaiting-reply" and ask_key_sid(ask) == sid \
        and ask.get("replyDeadline")
    return R.check(c.name, label, ok, f"askBeforeSleep={state!r} pendingSuspend.ask={json.dumps(ask)}")


# ask before sleep: the first turn ends at once; the reply's turn answers once more
ASK_SCRIPT = delayed([{"text": "Fixed the typo."}, {"text": "Updated the README as asked."}])


def start_client(c, env, cmd):
    """The agent, headless, in the scenario's project; its output in client.out and client.err."""
    out = open(os.path.join(c.run, "client.out"), "w")
    err = open(os.path.join(c.run, "client.err"), "w")
    return subprocess.Popen(cmd, cwd=c.proj, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)


def ask_scenario(agent, c, port, expect):
    """Ask before sleep with the real agent (claude -p / codex exec). expect: reply | timeout."""
    # the suspend request at the end fails (no bus, or logind's CanSuspend=na): lidguard logs it as an ERROR
    c.log_ok = ["suspend failed mode=Sleep"]
    rcv, logind = Receiver(REPO), None
    p, sid = None, None
    try:
        if expect == "timeout":
            logind = start_private_logind(c)
        c.lidguard("settings", "--closed-lid-stop-follow-up-webhook-url", rcv.webhook_url,
                   "--closed-lid-stop-follow-up-delay-seconds", str(REPLY_WAIT),
                   "--post-stop-suspend-delay-seconds", str(POST_STOP_DELAY), check=True)
        env = agent.setup(c, port)
        want_timeout = POST_STOP_DELAY + REPLY_WAIT + 300
        got = installed_stop_timeout(agent, c)
        R.check(c.name, f"hook-install wrote the ask-before-sleep timeout on Stop ({want_timeout} s = "
                f"{POST_STOP_DELAY} + {REPLY_WAIT} + 300)", got == [want_timeout], f"Stop timeouts: {got}")
        p = agent.start(c, env, "Fix the typo in README.md.")
        if logind and c.wait("UserPromptSubmit", 30):
            # the fake model answers 1.5 s after the prompt: the session works meanwhile
            end, prot = time.time() + 1.2, {}
            while time.time() < end and not prot.get("held"):
                prot = c.status().get("protection") or {}
            R.check(c.name, "while the turn runs lidguard holds its inhibitors on the private logind (status --json "
                    "protection)", prot.get("held") is True and "sleep" in (prot.get("inhibitors") or [])
                    and not prot.get("unavailableReason"), json.dumps(prot))
        stops = c.wait("Stop", 60)
        if not R.check(c.name, "the turn reached Stop", stops, f"events={c.names()} rc={p.poll()}"):
            return
        sid = c.session_id()
        t_stop = stops[0]["t"]
        n_steps = len(c.model_steps())
        time.sleep(0.5)
        state, ask, _ = ask_status(c)
        R.check(c.name, "status --json right after Stop: askBeforeSleep on, pendingSuspend.ask waiting-for-delay "
                "for this session", state == "on" and ask and ask.get("status") == "waiting-for-delay"
                and ask_key_sid(ask) == sid, f"askBeforeSleep={state!r} ask={json.dumps(ask)}")
        hooks = hook_pids(c)
        q = rcv.wait_for_question(POST_STOP_DELAY + 15)
        if not R.check(c.name, "the receiver got the StopFollowUp question", q, f"requests={rcv.requests()}"):
            return
        check_waiting_at_question(c, p, hooks, n_steps, t_stop, q)
        check_awaiting(c, sid, "status --json: pendingSuspend.ask awaiting-reply for this session")
        prot = c.status().get("protection") or {}
        print(f"INFO [{c.name}] protection while the Stop hook awaits the reply (lid closed): "
              f"held={prot.get('held')} inhibitors={prot.get('inhibitors')} backend={prot.get('backend')!r}", flush=True)
        hist = history(c, "suspend-history")
        R.check(c.name, "no suspend requested while the Stop hook waits (suspend-history empty)", hist == [],
                json.dumps(hist)[:300])
        posts = [r for r in rcv.requests() if r.get("method") == "POST" and "/webhooks/" in (r.get("path") or "")]
        body = (posts[0].get("json") or {}) if posts else {}
        common.write_json(os.path.join(c.run, "stop-follow-up-1.json"), {"question": q, "webhook": posts[:1]})
        R.check(c.name, "the StopFollowUp webhook names the session and the reply wait",
                body.get("eventType") == "StopFollowUp" and sid and sid in json.dumps(body)
                and body.get("replyWaitSeconds") == REPLY_WAIT,
                f"eventType={body.get('eventType')} replyWaitSeconds={body.get('replyWaitSeconds')} "
                f"keys={sorted(body)[:12]}")
        if expect == "reply":
            ask_reply_rest(agent, c, p, rcv, q, sid, hooks, n_steps)
        else:
            ask_timeout_rest(agent, c, p, rcv, sid, hooks, t_stop, logind)
        rc = wait_exit(p, 30)
        R.check(c.name, f"{agent.command} exited 0", rc == 0, f"rc={rc}")
        c.wait("SessionEnd", 5)
        if agent.after_exit:
            agent.after_exit(c)
        st = c.status()
        common.write_json(os.path.join(c.run, "final-status.json"), st)
        R.check(c.name, "status --json at the end: no session, no pending suspend",
                session_in(st, sid) is None and not st.get("pendingSuspend") and "error" not in st,
                f"sessions={[brief(s) for s in st.get('sessions') or []]} pendingSuspend={st.get('pendingSuspend')}")
        common.write_json(os.path.join(c.run, "webhook-history.json"), history(c, "webhook-history"))
        common.write_json(os.path.join(c.run, "suspend-history.json"), history(c, "suspend-history"))
        common.write_json(os.path.join(c.run, "receiver-requests.json"), rcv.requests())
    finally:
        try:
            if p and p.poll() is None:
                p.kill()
                p.wait(10)
        finally:  # the receiver and the private logind are no scenario process: stop them here, always
            c.stop_poller(sid)
            rcv.close()
            if logind:
                logind.close()


def ask_reply_rest(agent, c, p, rcv, q, sid, hooks, n_steps):
    t_reply = time.time()
    res = rcv.reply(q["id"], ASK_REPLY)
    R.check(c.name, f"the driver's reply {ASK_REPLY!r} was taken by lidguard (receiver: replyConsumed)",
            isinstance(res, dict) and res.get("succeeded") is True and res.get("replyConsumed") is True,
            json.dumps(res)[:300])
    end = time.time() + 30
    cont = []
    while time.time() < end and not cont:
        cont = [s for s in c.model_steps()[n_steps:] if ASK_REPLY in json.dumps(s.get("body"))]
        time.sleep(0.2)
    steps = c.model_steps()
    first = model_session(steps[0]) if steps else None
    R.check(c.name, "the model received the reply in the next request", bool(cont),
            f"{len(steps)} model step requests; {ASK_REPLY!r} {'found' if cont else 'absent'} after the first")
    R.check(c.name, "that request belongs to the same session (the client's session id is unchanged)",
            bool(cont) and first is not None and model_session(cont[0]) == first,
            f"first: {first}; continuation: {model_session(cont[0]) if cont else None}")
    R.check(c.name, "the first Stop hook ended, and the agent went on, only after the reply",
            bool(cont) and cont[0]["t"] > t_reply and wait_gone(hooks, 5) is not None,
            f"continuation request {cont[0]['t'] - t_reply:+.1f} s from the reply" if cont else "no continuation")
    if agent.stop_runs:
        runs, outs = agent.stop_runs(c, 1)
        got = None
        try:
            got = json.loads(outs[0][1]) if outs else None
        except ValueError:
            got = outs[0][1]
        R.check(c.name, "Claude got exactly {\"decision\":\"block\",\"reason\":<the reply>} from the Stop hook, "
                "after the reply (Claude's debug log)",
                got == {"decision": "block", "reason": ASK_REPLY} and runs and runs[0][1] == 0
                and outs[0][0] >= t_reply - 0.5, f"runs={runs[:2]} output={outs[0][1] if outs else None!r} "
                f"at {outs[0][0] - t_reply:+.1f} s from the reply" if outs else f"runs={runs[:2]} no output")
    snap = c.poller.first_after(t_reply + 1.0)
    s = (lgverify.sessions_in(snap, sid) or [None])[0] if snap else None
    R.check(c.name, "status after the reply: the session is working again", bool(s) and s.get("state") == "active",
            brief(s))
    stops = c.wait("Stop", 40, count=2)
    active = [(e.get("event") or {}).get("stopHookActive") for e in stops or []]
    R.check(c.name, "the second turn ran to a second Stop in the same session, with stop_hook_active",
            bool(stops) and all(e.get("sessionId") == sid for e in stops) and active == [False, True]
            and not c.recs("UserPromptSubmit", lambda e: e.get("sessionId") != sid),
            f"events={c.names()}; stopHookActive={active}")
    if not stops:
        return
    common.write_json(os.path.join(c.run, "stops.json"), stops)
    hooks2 = hook_pids(c)
    n2 = len(c.model_steps())
    q2 = rcv.wait_for_question(POST_STOP_DELAY + 15, exclude={q["id"]})
    if not R.check(c.name, "the second Stop (stop_hook_active) asks again", q2, f"questions={rcv.questions()}"):
        return
    check_waiting_at_question(c, p, hooks2, n2, stops[1]["t"], q2, " (second)")
    check_awaiting(c, sid, "status --json: pendingSuspend.ask awaiting-reply again")
    hist = history(c, "suspend-history")
    R.check(c.name, "no suspend requested before the cancel (suspend-history empty)", hist == [],
            json.dumps(hist)[:300])
    t_cancel = time.time()
    res = rcv.cancel(q2["id"])
    gone = wait_gone(hooks2, 15)
    R.check(c.name, "the cancel let the second Stop hook go", gone is not None,
            f"{gone - t_cancel:.1f} s after the cancel" if gone else f"cancel: {res}")
    if agent.stop_runs:
        runs, outs = agent.stop_runs(c, 2)
        R.check(c.name, "the second Stop hook printed nothing (Claude's debug log)",
                len(runs) >= 2 and runs[1][1] == 0 and len(outs) == 1, f"runs={runs} outputs={[o[1] for o in outs]}")
    time.sleep(1)
    R.check(c.name, "the agent did not continue after the cancel (no further model request)",
            len(c.model_steps()) == n2, f"{len(c.model_steps())} model step requests (before: {n2})")
    hist = wait_history(c, "suspend-history", 1, 10)
    R.check(c.name, "after the cancel the suspend was requested and recorded (suspend-history)",
            len(hist) == 1 and hist[0].get("succeeded") is False and hist[0].get("reason") == "Completed",
            json.dumps(hist)[:400])
    wh = [w for w in history(c, "webhook-history") if w.get("eventType") == "StopFollowUp"]
    results = [w.get("result") for w in wh]
    R.check(c.name, "webhook-history: two StopFollowUp entries (reply received, then canceled)",
            len(wh) == 2 and all(str(w.get("host")).startswith("127.0.0.1") and w.get("sessionId") == sid for w in wh)
            and results[0].startswith("reply-received") and results[1].startswith("canceled"), json.dumps(wh)[:600])
    check_log_sequence(c, ["stop-follow-up-awaiting-reply", "stop-follow-up-reply-received", "suspend-canceled",
                           "session-continued", "session-stopped", "stop-follow-up-awaiting-reply",
                           "stop-follow-up-canceled", "suspend-requested"],
                       "lidguard's log: asked, reply received, session continued; asked again, canceled, then the "
                       "suspend request")


def ask_timeout_rest(agent, c, p, rcv, sid, hooks, t_stop, logind):
    gone = wait_gone(hooks, REPLY_WAIT + 25)
    took = (gone - t_stop) if gone else None
    want = POST_STOP_DELAY + REPLY_WAIT
    R.check(c.name, f"with no reply the Stop hook ended after about delay + reply wait ({want} s)",
            took is not None and want - 1 <= took <= want + 8, f"{took:.1f} s after Stop" if took else "still running")
    if agent.stop_runs:
        runs, outs = agent.stop_runs(c, 1)
        R.check(c.name, "the Stop hook printed nothing and exited 0 (Claude's debug log)",
                runs and runs[0][1] == 0 and not outs, f"runs={runs} outputs={[o[1] for o in outs]}")
    n = len(c.model_steps())
    time.sleep(1)
    R.check(c.name, "the agent did not continue (one model request, one Stop)",
            n == 1 and len(c.model_steps()) == 1 and len(c.recs("Stop")) == 1,
            f"{len(c.model_steps())} model step requests; events={c.names()}")
    hist = wait_history(c, "suspend-history", 1, 10)
    entry = hist[0] if hist else {}
    err = entry.get("error") or ""
    via = "logind's refusal (CanSuspend=na)" if logind else "no bus (no private logind here)"
    ok = len(hist) == 1 and entry.get("succeeded") is False and entry.get("reason") == "Completed" \
        and ("CanSuspend=na" in err if logind else bool(err))
    R.check(c.name, f"the suspend request was attempted and recorded in suspend-history: {via}", ok,
            json.dumps(hist)[:500])
    wh = [w for w in history(c, "webhook-history") if w.get("eventType") == "StopFollowUp"]
    R.check(c.name, "webhook-history: one StopFollowUp entry, result timed-out",
            len(wh) == 1 and str(wh[0].get("result", "")).startswith("timed-out")
            and str(wh[0].get("host")).startswith("127.0.0.1") and wh[0].get("sessionId") == sid, json.dumps(wh)[:500])
    check_log_sequence(c, ["session-stopped", "suspend-scheduled", "stop-follow-up-awaiting-reply",
                           "stop-follow-up-timed-out", "suspend-requested", "suspend-failed"],
                       "lidguard's log: asked, timed out, then the suspend request (failed)")


def ask_setup(run):
    """The receiver (tests/e2e/verify/receiver.py; started here, inside the namespace, like the
    agent) and the settings that make lidguard ask before sleep. Returns the receiver or None."""
    if not os.path.exists(RECEIVER_BIN):
        check(f"{run.name}: the test receiver is built", False,
              f"missing {RECEIVER_BIN} (cargo build -p lidguard-testreceiver)")
        return None
    rcv = Receiver(REPO)
    try:
        r = subprocess.run([LIDGUARD, "settings", "--closed-lid-stop-follow-up-webhook-url", rcv.webhook_url,
                            "--closed-lid-stop-follow-up-delay-seconds", str(REPLY_WAIT),
                            "--post-stop-suspend-delay-seconds", str(POST_STOP_DELAY),
                            "--repeat-closed-lid-stop-follow-up", "false"],
                           env=run.cli_env(), capture_output=True, text=True, timeout=30)
    except BaseException:
        rcv.close()
        raise
    if r.returncode != 0:
        check(f"{run.name}: lidguard settings for ask before sleep", False, r.stdout + r.stderr)
        rcv.close()
        return None
    return rcv


def lidguard_log(run):
    try:
        with open(run.path("lg", "state", "lidguard.log"), errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return []


def log_has(lines, *words):
    return [l for l in lines if all(w in l for w in words)]


def wait_log(run, *words, timeout=30):
    end = time.time() + timeout
    while True:
        got = log_has(lidguard_log(run), *words)
        if got or time.time() > end:
            return got
        time.sleep(0.25)


def check_continued_then_suspended(run, tag):
    """lidguard's log, in order: asked, reply received, session continued; the second stop skipped
    the question (repeat off) and the suspend went on."""
    wait_log(run, "suspend-requested", timeout=5)
    log = lidguard_log(run)
    order = ["stop-follow-up-awaiting-reply", "stop-follow-up-reply-received", "session-continued",
             "stop-follow-up-skipped", "suspend-requested"]
    idx = [next((i for i, line in enumerate(log) if f"event={w} " in line), None) for w in order]
    check(f"{tag}: lidguard's log: asked, reply received, session continued; the second stop skipped the "
          "question (repeat off) and the suspend went on", None not in idx and idx == sorted(idx),
          dict(zip(order, idx)))


def check_ask_log(run, tag, allowed=()):
    """lidguard's log: no WARN/ERROR but the expected ones (no system bus here: no protection, the
    suspend request fails), one daemon."""
    lines = lidguard_log(run)
    ok_words = ["protection unavailable", "suspend failed", *allowed]
    odd = [l[:200] for l in lines if (" WARN " in l or " ERROR " in l) and not any(w in l for w in ok_words)]
    starts = len(log_has(lines, "daemon started"))
    check(f"{tag}: lidguard's log: no unexpected WARN/ERROR, one daemon", not odd and starts == 1,
          f"{starts} daemon start(s); {odd[:3]}")


@dataclass
class PrintAsk:
    """An agent run once with a prompt (`-p`), for `print_ask`."""
    provider: str  # lidguard's name for it: "gemini"
    webhook_name: str  # the provider the StopFollowUp payload names: "Gemini"
    stop_event: str  # the hook event that ends its turn: "AfterAgent"
    hook: str  # what its hook entries run: "gemini-hook"
    start: Callable  # (run, prompt) -> the agent's Popen, its output in run.path("stdout")
    user_prompts: Callable  # a model request -> the texts of its user messages, in order
    allowed: tuple = ()  # lidguard log WARN/ERROR lines expected here


def print_ask(run, agent):
    """Ask before sleep with an agent run once (`-p`), lid closed: its turn ends in a continuable
    stop whose hook waits; after the post-stop delay the receiver gets the question with the last
    answer; the reply reaches the model as the next user prompt of the same session and the agent
    exits 0; the second stop does not ask again (repeat off) and the suspend goes on. `run` is the
    driver's `Run` (with `prepare()` and `steps()`)."""
    tag = run.name
    rcv = None
    try:
        rcv = ask_setup(run)
        if not rcv:
            return
        run.start_fake([{"text": "First answer."}, {"text": "README updated."}])
        if not run.prepare():
            return
        p = agent.start(run, "go")
        first = run.wait_event(agent.stop_event, timeout=60)
        t_stop = first[0]["t"] if first else time.time()
        check(f"{tag}: the first {agent.stop_event} is a continuable stop and its hook waits",
              first and (first[0].get("event") or {}).get("canContinue") is True
              and run.hook_processes(agent.hook), json.dumps(first)[:600])
        q = rcv.wait_for_question(timeout=POST_STOP_DELAY + 20)
        body = next((r.get("json") for r in rcv.requests()
                     if (r.get("json") or {}).get("eventType") == "StopFollowUp"), None) or {}
        check(f"{tag}: after the post-stop delay the receiver got the question for this {agent.webhook_name} "
              "session (with the last answer)",
              q and body.get("provider") == agent.webhook_name and body.get("lastAssistantMessage") == "First answer."
              and time.time() - t_stop >= POST_STOP_DELAY - 1, json.dumps(body)[:600])
        if not q:
            stop_popen(p)
            return
        res = rcv.reply(q["id"], ASK_REPLY)
        rc = wait_or_stop(p, 60)
        run.wait_event("SessionEnd", timeout=5)
        steps = run.steps()
        users = agent.user_prompts(steps[-1]) if steps else []
        check(f"{tag}: the reply ({ASK_REPLY!r}) reached the model as the next user prompt of the same session",
              res.get("replyConsumed") and len(steps) == 2 and users and ASK_REPLY in users[-1]
              and any("go" in u for u in users[:-1]), f"reply={res} user prompts={users[-3:]}")
        out = open(run.path("stdout")).read()
        check(f"{tag}: {agent.provider} exits 0 after the continued turn", rc == 0 and "README updated." in out,
              f"exit {rc}: {out[-300:]}")
        stops = [e for e in run.events() if e.get("hookEvent") == agent.stop_event]
        check(f"{tag}: the continued turn's {agent.stop_event} says stop_hook_active",
              len(stops) == 2 and (stops[1].get("event") or {}).get("stopHookActive") is True,
              json.dumps(stops)[:800])
        check_continued_then_suspended(run, tag)
        check(f"{tag}: one question only", len(rcv.questions()) == 1, rcv.questions())
        left = run.hook_processes(agent.hook)
        check(f"{tag}: no lidguard hook process left", not left, left)
        check_ask_log(run, tag, allowed=agent.allowed)
        run.wait_ended(agent.provider)
        no_session_left(run, agent.provider, f"{tag}: no session at the end")
    finally:
        if rcv:
            rcv.close()
        run.finish()
