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

REPO="$(cd "$(dirname "$0")/../../../.." && pwd)"
source "$REPO/tests/e2e/capture/lib.sh"
FAKE="$REPO/tests/e2e/fakemodel.py"

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
  python3 "$REPO/tests/e2e/capture/hook_settings.py" "$1" "$1/home/.gemini/settings.json" AfterAgent 30000 \
    '{"security": {"auth": {"selectedType": "gemini-api-key"}}, "privacy": {"usageStatisticsEnabled": false},
      "general": {"disableAutoUpdate": true, "disableUpdateNag": true}}' $EVENTS
}

# hook_count and tmux_session
source "$REPO/tests/e2e/capture/tui.sh"

# --- inside the namespace --------------------------------------------------------------------
inside() {  # $1 = run dir
  local D="$1"
  start_fake "$D"
  trap 'kill $FPID 2>/dev/null || true' EXIT
  local port=$PORT
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

# --- outside: install, then each scenario in its own folder and namespace ---------------------
need_clients GEMINI
PASS="PROMPT FLAGS MODE ACTIONS" run_scenarios gemini "$GEMINI_VERSION" write_settings ${*:-$ALL_SCENARIOS}
