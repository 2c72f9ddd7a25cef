#!/usr/bin/env bash
# Capture real Gemini CLI hook payloads against the scripted fake model.
#
#   tests/e2e/capture/gemini/run.sh [scenario ...]     (default: all scenarios)
#   then: tests/e2e/capture/gemini/fixtures.py <output dir>   (writes tests/fixtures/gemini/)
#
# - installs @google/gemini-cli@$GEMINI_VERSION into the gitignored cache .ci/cache/npm/ (reused);
# - per scenario makes /tmp/lidguard-capture-gemini.<ts>/<scenario>/ with its own HOME (hooks on
#   every event in $HOME/.gemini/settings.json, auth type gemini-api-key) and a `git init` project;
# - runs the fake model server (tests/e2e/fakemodel.py, Gemini API on loopback) and `gemini -p`
#   (or, for the tui-* scenarios, the TUI under a private `tmux -L` server driven by ACTIONS)
#   INSIDE a private network namespace with only loopback (`unshare -n`); no opt-out.
# Every hook runs tests/e2e/hooklog.py <dir>/hooklog <Event>; results: <dir>/hooklog/hooks.jsonl,
# model requests: <dir>/model.jsonl. Needs root (for unshare -n). CAPTURE_OUT overrides the
# output root.
set -euo pipefail

GEMINI_VERSION="${GEMINI_VERSION:-0.61.0}"
REPO="$(cd "$(dirname "$0")/../../../.." && pwd)"
HOOKLOG="$REPO/tests/e2e/hooklog.py"
FAKE="$REPO/tests/e2e/fakemodel.py"
PKGDIR="$REPO/.ci/cache/npm/@google+gemini-cli@$GEMINI_VERSION"
GEMINI="$PKGDIR/node_modules/@google/gemini-cli/bundle/gemini.js"

EVENTS="SessionStart SessionEnd BeforeAgent AfterAgent BeforeModel AfterModel BeforeToolSelection
BeforeTool AfterTool PreCompress Notification"
ALL_SCENARIOS="print-shell print-tool-failure print-after-agent-block print-http-400 tui-permission tui-ask-user"

# --- scenario definitions: set PROMPT, FLAGS, MODE, ACTIONS; write $D/script.json ---------------
scenario() {
  local s="$1" D="$2"
  PROMPT="run the scripted step"; FLAGS="--yolo"; MODE=print; ACTIONS=""
  case "$s" in
    print-shell)
      echo '[{"tool":"run_shell_command","input":{"command":"echo hello","description":"Say hello"}},{"text":"Done: hello."}]' ;;
    print-tool-failure)
      echo '[{"tool":"read_file","input":{"file_path":"'"$D"'/proj/does-not-exist.txt"}},{"text":"That file does not exist."}]' ;;
    print-after-agent-block)
      mkdir -p "$D/hooklog/replies"
      echo '{"decision":"block","reason":"also update the README"}' > "$D/hooklog/replies/AfterAgent.json"
      echo '[{"text":"First answer."},{"text":"Second answer after the reply."}]' ;;
    print-http-400)
      echo '[{"error":400,"message":"scripted bad request"}]' ;;
    tui-permission)
      # interactive, default approval mode: the shell call needs confirmation; approve it
      MODE=tmux; FLAGS=""
      ACTIONS="wait SessionStart
sleep 2
send make a file
submit BeforeAgent
wait Notification
waitscreen Allow once
sleep 1
snap confirm
key Enter
wait AfterAgent
sleep 1
snap done
send /quit
sleep 1
key Enter
wait SessionEnd
sleep 2"
      echo '[{"tool":"run_shell_command","input":{"command":"touch newfile.txt","description":"Create a file"}},{"text":"Created newfile.txt."}]' ;;
    tui-ask-user)
      # interactive: the ask_user tool (offered in the TUI only), answered with Enter
      MODE=tmux
      ACTIONS="wait SessionStart
sleep 2
send ask me
submit BeforeAgent
wait Notification
waitscreen Which colour?
sleep 1
snap ask
key Enter
sleep 1
snap ask2
key Enter
wait AfterAgent
sleep 1
snap answered
send /quit
sleep 1
key Enter
wait SessionEnd
sleep 2"
      echo '[{"tool":"ask_user","input":{"questions":[{"question":"Which colour?","header":"Colour","type":"choice","options":[{"label":"red","description":"Red"},{"label":"blue","description":"Blue"}]}]}},{"text":"Thanks, noted."}]' ;;
    *) echo "unknown scenario $s" >&2; return 1 ;;
  esac > "$D/script.json"
}

write_settings() {  # $1 = run dir
  python3 - "$1" "$HOOKLOG" $EVENTS <<'PY'
import json, sys
d, hooklog, events = sys.argv[1], sys.argv[2], sys.argv[3:]
def command(ev):
    cmd = f"python3 {hooklog} {d}/hooklog {ev}"
    if ev == "AfterAgent":  # a scripted reply blocks exactly once
        cmd += f"; rc=$?; rm -f {d}/hooklog/replies/{ev}.json; exit $rc"
    return cmd
settings = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    "hooks": {ev: [{"hooks": [{"type": "command", "command": command(ev), "timeout": 30000}]}] for ev in events},
}
with open(f"{d}/home/.gemini/settings.json", "w") as f:
    json.dump(settings, f, indent=2)
PY
}

# hook_count and tmux_session
source "$REPO/tests/e2e/capture/tui.sh"

# --- inside the namespace --------------------------------------------------------------------
inside() {  # $1 = run dir
  local D="$1"
  ip link set lo up
  if ip -o link | grep -qv ': lo:'; then echo "refusing: non-loopback link in namespace" >&2; exit 1; fi
  python3 "$FAKE" --port 0 --port-file "$D/port" --script "$D/script.json" --log "$D/model.jsonl" \
    2> "$D/fake.stderr" &
  FPID=$!
  trap 'kill $FPID 2>/dev/null || true' EXIT
  for _ in $(seq 100); do [ -s "$D/port" ] && break; sleep 0.1; done
  local port; port=$(cat "$D/port")
  cd "$D/proj"
  local envs=(PATH="$PATH" TERM=xterm-256color LANG=C.UTF-8 HOME="$D/home"
    GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$port" GEMINI_API_KEY=fake-key
    GEMINI_CLI_NO_RELAUNCH=true GEMINI_CLI_TRUST_WORKSPACE=true)
  set +e
  if [ "$MODE" = print ]; then
    env -i "${envs[@]}" TERM=dumb timeout 180 node "$GEMINI" -m gemini-2.5-flash -p "$PROMPT" $FLAGS -o text \
      < /dev/null > "$D/stdout" 2> "$D/stderr"
  else
    tmux_session "$D" env -i "${envs[@]}" node "$GEMINI" -m gemini-2.5-flash $FLAGS
  fi
  echo $? > "$D/exit"
  sleep "${SETTLE:-2}"  # SessionEnd is not awaited by the CLI: let it land
  set -e
}

if [ "${1:-}" = "--inside" ]; then shift; inside "$@"; exit 0; fi

# --- outside: install, prepare, run each scenario in its own namespace --------------------------
[ "$(id -u)" = 0 ] || { echo "needs root for unshare -n" >&2; exit 1; }
if [ ! -f "$GEMINI" ]; then
  npm install --prefix "$PKGDIR" --no-audit --no-fund --prefer-offline "@google/gemini-cli@$GEMINI_VERSION"
fi
OUT="${CAPTURE_OUT:-/tmp/lidguard-capture-gemini.$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$OUT"
echo "$GEMINI_VERSION" > "$OUT/client-version"
for s in ${*:-$ALL_SCENARIOS}; do
  D="$OUT/$s"
  rm -rf "$D"; mkdir -p "$D"/{home/.gemini,proj,hooklog}
  git -C "$D/proj" init -q
  echo "# scratch project" > "$D/proj/README.md"
  scenario "$s" "$D"
  write_settings "$D"
  echo "== $s"
  start=$(date +%s)
  PROMPT="$PROMPT" FLAGS="$FLAGS" MODE="$MODE" ACTIONS="$ACTIONS" unshare -n "$0" --inside "$D"
  echo "   exit=$(cat "$D/exit") in $(( $(date +%s) - start ))s; hooks: $(python3 -c '
import json,sys
print(" ".join(json.loads(l)["event"] for l in open(sys.argv[1])))' "$D/hooklog/hooks.jsonl" 2>/dev/null)"
done
echo "results in $OUT"
