#!/usr/bin/env python3
"""Capture and check how the real Codex CLI records hook trust for lidguard's hooks.

    sudo python3 tests/e2e/capture/codex/trust.py [--fixtures]       (build lidguard first)

Re-executes itself inside a private network namespace with only loopback up (`unshare -n`, root;
LIDGUARD_CAPTURE_NO_NETNS=1 skips it, debug only) and refuses to go on if any other link is there.
Everything below runs inside: the fake model (tests/e2e/fakemodel.py, 127.0.0.1, proxy variables
pointing at it), a private `tmux -L` server, Codex and the lidguard daemon the hooks start.

In $CAPTURE_OUT (default /tmp/lidguard-capture-codex-trust/, recreated), with its own HOME,
CODEX_HOME (codex/), LIDGUARD_HOME (lg/) and a `git init` project (proj/):
 1. `lidguard hook-install --provider codex` writes codex/hooks.json (LIDGUARD_BIN, default
    target/debug/lidguard);
 2. the TUI (no --dangerously-bypass-hook-trust) starts: at its "Hooks need review" prompt it
    continues without trusting, then `/hooks` -> `t` (trust all); config.toml before and after
    are kept (config.before.toml, config.trusted.toml), with screen-*.txt;
 3. `codex exec` (no bypass flag, one exec_command tool call) with
    a. the trusted config: lidguard's hooks run (`lidguard hook-events`);
    b. the config before trusting: no hook runs, and Codex says nothing about it;
    c. the trusted config but PreToolUse's command changed in hooks.json: every hook but
       PreToolUse runs;
    d. the config before trusting plus trust records written by lidguard (`lidguard hook-install
       --provider codex --trust-codex-hooks` when the CLI has that flag, else $LIDGUARD_TRUST_WRITER,
       a command run with CODEX_HOME set that must add the records to $CODEX_HOME/config.toml,
       else this script's own port of the hash): lidguard's hooks run.
 4. variations: a second CODEX_HOME reached through a symlink (variations/codex-link ->
    codex-real), whose hooks.json is itself a symlink (-> variations/dotfiles/hooks.json) holding
    handlers on all 12 events with matchers ("", "*", regexes, ignored ones), statusMessage,
    async, commandWindows, unknown keys, missing/0/over-limit timeouts, and quotes, backslashes,
    tabs and non-ASCII in commands; the TUI's start prompt "Trust all and continue" records them.
    Checked: the key path is <realpath CODEX_HOME>/hooks.json and every hash matches the port.
With --fixtures: tests/fixtures/codex/trust/{hooks.json, config.before.toml, config.toml,
variations.hooks.json, variations.config.toml, capture.json} (config.toml = what Codex wrote when
trusting in /hooks; capture.json = paths, program, client, date and the results of step 3). Prints PASS/FAIL per check and "N passed, M failed"; exit 1 on a
failure. Every process it starts is stopped by pid (Codex's app-server daemon and the lidguard
daemon are found through the run directory / LIDGUARD_HOME).
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree
sys.path.insert(0, os.path.join(HERE, "..", "claude"))
import common  # noqa: E402

REPO = common.REPO
sys.path.insert(0, os.path.join(REPO, "tests", "e2e", "verify"))
from harness import clients  # noqa: E402  (the agent CLIs: one table for the suite and the captures)

CODEX_VERSION = clients.CODEX_VERSION
CODEX = os.environ.get("CAPTURE_CLIENT") or clients.CODEX
LIDGUARD = os.environ.get("LIDGUARD_BIN", os.path.join(REPO, "target", "debug", "lidguard"))
OUT = os.environ.get("CAPTURE_OUT", "/tmp/lidguard-capture-codex-trust")
FIXTURES = os.path.join(REPO, "tests", "fixtures", "codex", "trust")
EXPECTED = ["UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"]

PASSED, FAILED = [], []


def check(name, ok, detail=""):
    (PASSED if ok else FAILED).append(name)
    print(f"{'PASS' if ok else 'FAIL'}  {name}" + (f" -- {detail}" if detail else ""), flush=True)
    return ok


def reexec_in_netns():
    if os.environ.get("LIDGUARD_CAPTURE_NO_NETNS") == "1" or os.environ.get("_LG_TRUST_IN_NETNS") == "1":
        return
    if os.geteuid() != 0:
        sys.exit("trust.py needs root for 'unshare -n' (or LIDGUARD_CAPTURE_NO_NETNS=1, debug only)")
    os.environ["_LG_TRUST_IN_NETNS"] = "1"
    os.execvp("unshare", ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec python3 "$0" "$@"',
                          os.path.abspath(__file__), *sys.argv[1:]])


# ---- the hash, ported (see crates/lidguard-providers/src/install/agent_settings.rs) --------
SNAKE = {"PreToolUse": "pre_tool_use", "PermissionRequest": "permission_request",
         "PostToolUse": "post_tool_use", "PreCompact": "pre_compact", "PostCompact": "post_compact",
         "SessionStart": "session_start", "SessionEnd": "session_end",
         "UserPromptSubmit": "user_prompt_submit", "SubagentStart": "subagent_start",
         "SubagentStop": "subagent_stop", "Stop": "stop", "Interrupt": "interrupt"}
NO_MATCHER = {"UserPromptSubmit", "Stop", "Interrupt"}


def trust_records(hooks_path, hooks):
    """{key: trusted_hash} for every handler in a hooks.json value."""
    out = {}
    for event, groups in hooks.get("hooks", {}).items():
        if event not in SNAKE:
            continue
        end = event in ("SessionEnd", "Interrupt")
        for gi, group in enumerate(groups):
            for hi, h in enumerate(group.get("hooks", [])):
                t = max(1, h.get("timeout", 1 if end else 600))
                handler = {"type": h["type"], "command": h.get("command", ""), "async": h.get("async", False),
                           "timeout": min(t, 3) if end else t}
                if "statusMessage" in h:
                    handler["statusMessage"] = h["statusMessage"]
                body = {"event_name": SNAKE[event], "hooks": [handler]}
                if group.get("matcher") is not None and event not in NO_MATCHER:
                    body["matcher"] = group["matcher"]
                text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                out[f"{hooks_path}:{SNAKE[event]}:{gi}:{hi}"] = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    return out


def toml_records(text):
    return dict(re.findall(r'^\[hooks\.state\."([^"]+)"\]\s*\ntrusted_hash = "([^"]+)"', text, re.M))


# ---- run helpers -------------------------------------------------------------------------
class Run:
    def __init__(self):
        shutil.rmtree(OUT, ignore_errors=True)
        self.home, self.chome, self.proj, self.lg = (os.path.join(OUT, d) for d in ("home", "codex", "proj", "lg"))
        for d in (self.home, self.chome, self.proj, self.lg):
            os.makedirs(d)
        common.git_init(self.proj, {"README.md": "# Trust capture project\n"})
        self.hooks_path = os.path.join(os.path.realpath(self.chome), "hooks.json")
        self.config = os.path.join(self.chome, "config.toml")
        self.lg_env = {"LIDGUARD_HOME": os.path.join(self.lg, "home"),
                       "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent"}

    def write_config(self, port):
        common.write_codex_config(self.config, port, self.proj,
                                  "Scratch CODEX_HOME for lidguard's hook-trust capture (tests/e2e/capture/codex/trust.py).")

    def env(self, port):
        env = common.base_env(self.home, port)
        env.update(self.lg_env, CODEX_HOME=self.chome)
        return env

    def lidguard(self, *args, **extra):
        env = {k: os.environ[k] for k in ("PATH", "LANG") if k in os.environ}
        env.update(self.lg_env, HOME=self.home, CODEX_HOME=self.chome, **extra)
        return subprocess.run([LIDGUARD, *args], env=env, capture_output=True, text=True, timeout=30)

    def events(self):
        p = self.lidguard("hook-events", "--provider", "codex", "--json", "--count", "200")
        try:
            return json.loads(p.stdout)
        except ValueError:
            return []

    def read(self, path):
        with open(path) as f:
            return f.read()

    def write(self, path, text):
        with open(path, "w") as f:
            f.write(text)

    def exec_turn(self, label, port):
        """One `codex exec` turn (no bypass flag); the hook events it produced, in order."""
        before = len(self.events())
        cmd = [CODEX, "exec", "--skip-git-repo-check", "--json", "Run echo hello in the shell."]
        with open(os.path.join(OUT, f"exec-{label}.out"), "w") as out, \
                open(os.path.join(OUT, f"exec-{label}.err"), "w") as err:
            p = subprocess.Popen(cmd, cwd=self.proj, env=self.env(port), stdout=out, stderr=err,
                                 stdin=subprocess.DEVNULL)
            try:
                rc = p.wait(timeout=90)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                rc = "timeout"
        time.sleep(1.5)
        evs = self.events()[before:]
        return rc, [e.get("hookEvent") for e in evs]

    def stop_processes(self, codex_home=None):
        """Codex's app-server daemon (runs from <CODEX_HOME>/packages) and lidguard's daemon:
        SIGTERM, then SIGKILL for any still there 3 s later."""
        st = self.lidguard("status", "--json")
        try:
            daemon = json.loads(st.stdout).get("daemonPid")
        except ValueError:
            daemon = None
        marker = (codex_home or self.chome).encode() + b"/packages/"

        def ours():
            found = []
            for d in os.listdir("/proc"):
                if d.isdigit():
                    try:
                        with open(f"/proc/{d}/cmdline", "rb") as f:
                            if marker in f.read() or int(d) == daemon:
                                found.append(int(d))
                    except OSError:
                        pass
            return found

        common.stop_found(ours)


def trust_in_tui(r, port):
    t = common.Tmux(f"lidguard-trust-{os.getpid()}", r.env(port), r.proj, snapdir=OUT)
    try:
        t.start(f"{CODEX} --no-alt-screen")
        t.wait_screen(lambda s: "Hooks need review" in s, 40)
        t.snapshot("1-review-prompt")
        check("TUI start: 'Hooks need review' for lidguard's 9 new hooks", "9 hooks are new or changed" in t.screen())
        t.keys("Down", "Down")  # 3. Continue without trusting (hooks won't run)
        time.sleep(0.5)
        t.keys("Enter")
        t.wait_screen(lambda s: "\u203a" in s and "Hooks need review" not in s, 20)
        time.sleep(1.5)
        t.type_line("/hooks")
        t.wait_screen(lambda s: "need review before they can run" in s, 20)
        time.sleep(1)
        t.snapshot("2-hooks-untrusted")
        shutil.copy(r.config, os.path.join(OUT, "config.before.toml"))
        t.keys("t")  # trust all
        end = time.time() + 15
        while time.time() < end and len(toml_records(r.read(r.config))) < 9:
            time.sleep(0.3)
        time.sleep(1)
        t.snapshot("3-hooks-trusted")
        check("/hooks 't' (trust all): the list shows no hook left to review",
              "need review" not in t.screen(), "screen-3-hooks-trusted.txt")
        shutil.copy(r.config, os.path.join(OUT, "config.trusted.toml"))
        t.keys("Escape")
        time.sleep(0.5)
        t.keys("C-c")
        time.sleep(0.5)
        t.keys("C-c")
        time.sleep(2)
    finally:
        t.stop()


def trust_by_lidguard(r):
    """Adds lidguard's trust records to config.toml; returns how."""
    help_text = r.lidguard("hook-install", "--help").stdout
    if "--trust-codex-hooks" in help_text:
        p = r.lidguard("hook-install", "--provider", "codex", "--trust-codex-hooks")
        return f"lidguard hook-install --trust-codex-hooks (rc={p.returncode})"
    writer = os.environ.get("LIDGUARD_TRUST_WRITER")
    if writer:
        env = dict(os.environ, CODEX_HOME=r.chome)
        p = subprocess.run(writer, shell=True, env=env, capture_output=True, text=True, timeout=60)
        return f"LIDGUARD_TRUST_WRITER (rc={p.returncode}{', ' + p.stderr.strip()[:200] if p.stderr else ''})"
    recs = trust_records(r.hooks_path, json.loads(r.read(os.path.join(r.chome, "hooks.json"))))
    text = r.read(r.config).rstrip("\n") + "\n\n[hooks.state]\n"
    for key, h in recs.items():
        text += f'\n[hooks.state."{key}"]\ntrusted_hash = "{h}"\n'
    r.write(r.config, text)
    return "trust.py's port of the hash"


def variation_hooks():
    """Handlers on every event exercising each part of the hash. Each command names
    `lidguard codex-hook`, so lidguard's codex_trust() reads all of them as lidguard's."""
    def h(tag, **kw):
        return dict({"type": "command", "command": f"/opt/lidguard/lidguard codex-hook {tag}"}, **kw)
    return {"description": "trust hash variations", "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [h("user-first", timeout=10), h("status", timeout=30, statusMessage="lidguard")]},
            {"matcher": "", "hooks": [h("empty-matcher")]},
            {"matcher": "*", "hooks": [h("star-matcher", timeout=5, **{"async": True})]},
            {"hooks": [h("timeout-0", timeout=0)]}],
        "PermissionRequest": [{"matcher": "^Bash$", "hooks": [
            {"type": "command", "command": "& 'C:\\Program Files\\lidguard\\lidguard.exe' codex-hook", "timeout": 30}]}],
        "PostToolUse": [{"hooks": [
            h("\"quoted\" 'it''s' caf\u00e9 \u2713 tab\there <>&", timeout=30),
            h("status-unicode", timeout=30, **{"async": False, "statusMessage": "\u00e9t\u00e9 \"sm\""})]}],
        "PreCompact": [{"matcher": "manual", "hooks": [h("pre-compact", timeout=30)]}],
        "PostCompact": [{"matcher": "auto", "hooks": [h("post-compact", timeout=30)]}],
        "SessionStart": [{"matcher": "startup", "hooks": [h("session-start")]}],
        "SessionEnd": [{"hooks": [h("end-30", timeout=30)]}, {"hooks": [h("end-default")]},
                       {"matcher": "other", "hooks": [h("end-matcher", timeout=2)]}],
        "UserPromptSubmit": [{"matcher": "ignored", "hooks": [h("ups-matcher", timeout=30, extraKey=1)]},
                             {"matcher": None, "hooks": [h("ups-null-matcher", timeout=30)]}],
        "SubagentStart": [{"matcher": "default", "hooks": [h("subagent-start", timeout=30)]}],
        "SubagentStop": [{"hooks": [h("subagent-stop", timeout=30)]}],
        "Stop": [{"matcher": "x", "hooks": [h("stop-matcher", timeout=30)]},
                 {"hooks": [h("stop-windows", timeout=7, commandWindows="lidguard.exe codex-hook win")]}],
        "Interrupt": [{"hooks": [h("int-30", timeout=30)]}, {"hooks": [h("int-default")]},
                      {"matcher": "x", "hooks": [h("int-matcher", timeout=2)]}],
    }}


def variations(r, port):
    """Step 4; returns (hooks text, config text after trusting, the key path Codex used)."""
    base = os.path.join(OUT, "variations")
    real, link, dot = (os.path.join(base, d) for d in ("codex-real", "codex-link", "dotfiles"))
    os.makedirs(real)
    os.makedirs(dot)
    os.symlink("codex-real", link)
    shutil.copy(r.config, os.path.join(real, "config.toml"))
    cfg = os.path.join(real, "config.toml")
    text = r.read(cfg)
    r.write(cfg, text[:text.index("[hooks.state]")].rstrip("\n") + "\n" if "[hooks.state]" in text else text)
    hooks = variation_hooks()
    hooks_text = json.dumps(hooks, indent=2, ensure_ascii=False) + "\n"
    r.write(os.path.join(dot, "hooks.json"), hooks_text)
    os.symlink(os.path.join(dot, "hooks.json"), os.path.join(real, "hooks.json"))
    total = sum(len(g["hooks"]) for gs in hooks["hooks"].values() for g in gs)
    env = r.env(port)
    env["CODEX_HOME"] = link
    t = common.Tmux(f"lidguard-trust-var-{os.getpid()}", env, r.proj, snapdir=base)
    try:
        t.start(f"{CODEX} --no-alt-screen")
        t.wait_screen(lambda s: "Hooks need review" in s, 40)
        t.snapshot("review-prompt")
        check(f"variations: TUI start asks to review all {total} handlers", f"{total} hooks are new or changed" in t.screen())
        t.keys("Down")  # 2. Trust all and continue
        time.sleep(0.5)
        t.keys("Enter")
        end = time.time() + 15
        while time.time() < end and len(toml_records(r.read(cfg))) < total:
            time.sleep(0.3)
        time.sleep(1)
        t.snapshot("trusted")
        t.keys("C-c")
        time.sleep(0.5)
        t.keys("C-c")
        time.sleep(2)
    finally:
        t.stop()
        r.stop_processes(real)
    trusted = r.read(cfg)
    path = os.path.join(os.path.realpath(link), "hooks.json")
    recs, expect = toml_records(trusted), trust_records(path, hooks)
    check("variations: keys use <realpath CODEX_HOME>/hooks.json (CODEX_HOME resolved, hooks.json symlink not)",
          len(recs) == total and all(k.startswith(path + ":") for k in recs), f"{sorted(recs)[:1]}")
    check("variations: every trusted_hash = sha256 of the canonical JSON (trust.py's port)", recs == expect,
          "" if recs == expect else f"differ: {sorted(k for k in set(expect) | set(recs) if recs.get(k) != expect.get(k))}")
    return hooks_text, trusted, path


def main():
    reexec_in_netns()
    common.check_netns()
    for binary in (CODEX, LIDGUARD):
        if not os.access(binary, os.X_OK):
            sys.exit(f"missing executable {binary} (cargo build -p lidguard; run.sh installs Codex)")
    r = Run()
    script = []
    for _ in range(6):
        script += [{"tool": "exec_command", "input": {"cmd": "echo hello"}}, {"text": "Done: it printed hello."}]
    results = {}
    with common.FakeModel(OUT, script) as fm:
        port = fm.port
        r.write_config(port)
        p = r.lidguard("hook-install", "--provider", "codex")
        check("lidguard hook-install --provider codex", p.returncode == 0, (p.stdout + p.stderr).strip()[:300])
        hooks_text = r.read(os.path.join(r.chome, "hooks.json"))
        try:
            trust_in_tui(r, port)
        except common.Timeout as e:
            check("TUI trust flow", False, str(e))
        r.stop_processes()  # the TUI's app-server daemon keeps the config it started with
        if not all(os.path.exists(os.path.join(OUT, f)) for f in ("config.before.toml", "config.trusted.toml")):
            print(f"{len(PASSED)} passed, {len(FAILED) + 1} failed (the TUI flow did not finish; see {OUT})")
            return 1
        trusted = r.read(os.path.join(OUT, "config.trusted.toml"))
        before = r.read(os.path.join(OUT, "config.before.toml"))
        recs = toml_records(trusted)
        expect = trust_records(r.hooks_path, json.loads(hooks_text))
        check("config.toml: one [hooks.state.\"<hooks.json>:<snake_event>:<group>:<handler>\"] per lidguard hook",
              sorted(recs) == sorted(expect), f"{len(recs)} records")
        check("every trusted_hash = sha256 of the canonical JSON (trust.py's port)", recs == expect,
              "" if recs == expect else f"differ: {[k for k in expect if recs.get(k) != expect[k]]}")

        rc, evs = r.exec_turn("trusted", port)
        results["trusted"] = evs
        check("a. exec, trusted (no bypass flag): lidguard's hooks ran", rc == 0 and evs == EXPECTED, f"rc={rc} {evs}")

        r.write(r.config, before)
        rc, evs = r.exec_turn("untrusted", port)
        results["untrusted"] = evs
        err = r.read(os.path.join(OUT, "exec-untrusted.err")) + r.read(os.path.join(OUT, "exec-untrusted.out"))
        check("b. exec, not trusted: no hook ran", rc == 0 and evs == [], f"rc={rc} {evs}")
        check("b. exec, not trusted: Codex printed nothing about hooks", "hook" not in err.lower())

        r.write(r.config, trusted)
        changed = json.loads(hooks_text)
        h = changed["hooks"]["PreToolUse"][0]["hooks"][0]
        h["command"] = h["command"].replace("/lidguard codex-hook", "/../debug/lidguard codex-hook")
        if h["command"] == json.loads(hooks_text)["hooks"]["PreToolUse"][0]["hooks"][0]["command"]:
            h["command"] = "env " + h["command"]
        r.write(os.path.join(r.chome, "hooks.json"), json.dumps(changed, indent=2) + "\n")
        rc, evs = r.exec_turn("changed", port)
        results["changed"] = evs
        check("c. exec, PreToolUse's command changed: every hook but PreToolUse ran",
              rc == 0 and evs == [e for e in EXPECTED if e != "PreToolUse"], f"rc={rc} {evs}")
        r.write(os.path.join(r.chome, "hooks.json"), hooks_text)

        r.write(r.config, before)
        how = trust_by_lidguard(r)
        by_lg = r.read(r.config)
        shutil.copy(r.config, os.path.join(OUT, "config.lidguard.toml"))
        rc, evs = r.exec_turn("lidguard-trusted", port)
        results["lidguard-trusted"] = evs
        results["lidguard-trusted-by"] = how
        check(f"d. exec, records written by {how}: lidguard's hooks ran", rc == 0 and evs == EXPECTED,
              f"rc={rc} {evs}")
        check("d. records written by lidguard = the ones Codex wrote", toml_records(by_lg) == recs)
        r.stop_processes()
        try:
            var_hooks, var_config, var_path = variations(r, port)
        except common.Timeout as e:
            check("variations: TUI trust flow", False, str(e))
            var_hooks = var_config = var_path = None

    if "--fixtures" in sys.argv:
        os.makedirs(FIXTURES, exist_ok=True)
        r.write(os.path.join(FIXTURES, "hooks.json"), hooks_text)
        r.write(os.path.join(FIXTURES, "config.before.toml"), before)
        r.write(os.path.join(FIXTURES, "config.toml"), trusted)
        if var_hooks:
            r.write(os.path.join(FIXTURES, "variations.hooks.json"), var_hooks)
            r.write(os.path.join(FIXTURES, "variations.config.toml"), var_config)
        common.write_json(os.path.join(FIXTURES, "capture.json"), {
            "client": f"@openai/codex@{CODEX_VERSION}", "captured": time.strftime("%Y-%m-%d"),
            "hooksJsonPath": r.hooks_path, "program": LIDGUARD, "variationsHooksJsonPath": var_path,
            "execResults": results})
        print(f"wrote fixtures to {FIXTURES}")
    print(f"output: {OUT}")
    print(f"{len(PASSED)} passed, {len(FAILED)} failed")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
