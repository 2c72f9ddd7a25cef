#!/usr/bin/env bash
# Capture real Factory Droid hook payloads against the scripted fake model.
#
#   tests/e2e/capture/droid/run.sh [scenario ...]     (default: all scenarios)
#   then: tests/e2e/capture/droid/fixtures.py <output dir>   (writes tests/fixtures/droid/)
#
# - installs @factory/cli-linux-x64@$DROID_VERSION (Droid's native binary, the platform package
#   of @factory/cli; no install script needed) into the gitignored cache .ci/cache/npm/ (reused);
# - per scenario makes /tmp/lidguard-capture-droid.<ts>/<scenario>/ with its own HOME:
#   ~/.factory/settings.json (a bring-your-own-key model `custom:fake`, provider anthropic, whose
#   baseUrl is the fake server; the project folder trusted) and ~/.factory/hooks.json (the hook
#   logger on all nine events), and a `git init` project;
# - runs the fake model server (tests/e2e/fakemodel.py, Anthropic Messages on loopback) and
#   `droid exec` (or, for the tui-* scenarios, the TUI with FACTORY_AIRGAP_ENABLED=1 under a
#   private `tmux -L` server driven by ACTIONS) INSIDE a private network namespace with only
#   loopback (`unshare -n`).
# Every hook runs tests/e2e/hooklog.py <dir>/hooklog <Event>; results: <dir>/hooklog/hooks.jsonl,
# model requests: <dir>/model.jsonl. Needs root (for unshare -n). CAPTURE_OUT overrides the
# output root.
set -euo pipefail

REPO="$(cd "$(dirname "$0")/../../../.." && pwd)"
source "$REPO/tests/e2e/capture/lib.sh"
FAKE="$REPO/tests/e2e/fakemodel.py"

# Every event Droid 0.225.2's hook schema names.
EVENTS="SessionStart UserPromptSubmit PreToolUse PostToolUse Notification Stop SubagentStop
PreCompact SessionEnd"
ALL_SCENARIOS="exec-shell exec-http-400 exec-stop-block tui-permission tui-permission-refused
tui-escape-tool tui-escape-model tui-http-400 tui-prompts"
SHELL_STEP='{"tool":"Execute","input":{"command":"echo hello","riskLevel":"low","riskLevelReason":"prints a word"}}'
ASK_STEP='{"tool":"Execute","input":{"command":"touch newfile.txt","riskLevel":"medium","riskLevelReason":"creates a file"}}'
LONG_STEP='{"tool":"Execute","input":{"command":"sleep 30 # intentional-sleep: the capture interrupts it","riskLevel":"low","riskLevelReason":"waits"}}'
QUIT="send /quit
sleep 1
key Enter
sleep 3"

# --- scenario definitions: set PROMPT, FLAGS, MODE, ACTIONS; write $D/script.json ---------------
scenario() {
  local s="$1" D="$2"
  PROMPT="run the scripted step"; FLAGS="--auto low"; MODE=exec; ACTIONS=""
  case "$s" in
    exec-shell) echo "[$SHELL_STEP,{\"text\":\"Done: hello.\"}]" ;;
    exec-http-400) echo '[{"error":400,"message":"scripted bad request"}]' ;;
    exec-stop-block)
      mkdir -p "$D/hooklog/replies"
      echo '{"decision":"block","reason":"also update the README"}' > "$D/hooklog/replies/Stop.json"
      echo '[{"text":"First answer."},{"text":"Second answer after the reply."}]' ;;
    tui-permission|tui-permission-refused)
      # the default autonomy (Auto Off): a medium-risk command asks; allowed, or refused
      MODE=tmux; FLAGS=""
      local answer="key Enter"
      [ "$s" = tui-permission-refused ] && answer="key Down
key Down
key Enter"
      ACTIONS="wait SessionStart
sleep 2
send make a file
submit UserPromptSubmit
wait Notification
waitscreen No, cancel
sleep 1
snap dialog
$answer
wait Stop
sleep 1
snap done
$QUIT"
      echo "[$ASK_STEP,{\"text\":\"Created newfile.txt.\"}]" ;;
    tui-escape-tool)
      MODE=tmux; FLAGS="--auto low"
      ACTIONS="wait SessionStart
sleep 2
send wait a while
submit UserPromptSubmit
wait PreToolUse
sleep 2
snap running
key Escape
sleep 4
snap interrupted
$QUIT"
      echo "[$LONG_STEP,{\"text\":\"Waited.\"}]" ;;
    tui-escape-model)
      MODE=tmux; FLAGS=""
      ACTIONS="wait SessionStart
sleep 2
send think for a while
submit UserPromptSubmit
sleep 3
snap answering
key Escape
sleep 4
snap interrupted
$QUIT"
      echo '[{"hang":true,"text":"Thinking"},{"text":"Next."}]' ;;
    tui-http-400)
      MODE=tmux; FLAGS=""
      ACTIONS="wait SessionStart
sleep 2
send fail please
submit UserPromptSubmit
sleep 6
snap failed
$QUIT"
      echo '[{"error":400,"message":"scripted bad request"}]' ;;
    tui-prompts)
      MODE=tmux; FLAGS="--auto low"
      ACTIONS="wait SessionStart
sleep 2
send first
submit UserPromptSubmit
wait Stop
sleep 1
send second
submit UserPromptSubmit
sleep 4
snap two
$QUIT"
      echo "[$SHELL_STEP,{\"text\":\"First done.\"},{\"text\":\"Second done.\"}]" ;;
    *) echo "unknown scenario $s" >&2; return 1 ;;
  esac > "$D/script.json"
}

write_config() {  # $1 = run dir; the model's port is filled in inside the namespace
  python3 "$REPO/tests/e2e/capture/hook_settings.py" "$1" "$1/home/.factory/hooks.json" Stop 30 - $EVENTS
  cat > "$1/home/.factory/settings.json" <<JSON
{
  "customModels": [{"model": "fake", "id": "custom:fake", "baseUrl": "http://127.0.0.1:PORT",
                    "apiKey": "fake-key", "provider": "anthropic"}],
  "sessionDefaultSettings": {"model": "custom:fake"},
  "trustedFolders": {"$1/proj": {"trustedAt": "2026-12-07T00:00:00Z"}}
}
JSON
}

# hook_count and tmux_session
source "$REPO/tests/e2e/capture/tui.sh"

# --- inside the namespace --------------------------------------------------------------------
inside() {  # $1 = run dir
  local D="$1"
  start_fake "$D"
  trap 'kill $FPID 2>/dev/null || true' EXIT
  sed -i "s/127.0.0.1:PORT/127.0.0.1:$(cat "$D/port")/" "$D/home/.factory/settings.json"
  cd "$D/proj"
  local envs=(PATH="$PATH" LANG=C.UTF-8 HOME="$D/home" FACTORY_AIRGAP_ENABLED=1)
  set +e
  if [ "$MODE" = exec ]; then
    env -i "${envs[@]}" TERM=dumb timeout 180 "$DROID" exec -m custom:fake $FLAGS "$PROMPT" \
      < /dev/null > "$D/stdout" 2> "$D/stderr"
  else
    tmux_session "$D" env -i "${envs[@]}" TERM=xterm-256color "$DROID" $FLAGS
  fi
  echo $? > "$D/exit"
  sleep "${SETTLE:-2}"  # SessionEnd may not be awaited by the CLI: let it land
  set -e
}

if [ "${1:-}" = "--inside" ]; then shift; inside "$@"; exit 0; fi

# --- outside: install, then each scenario in its own folder and namespace ---------------------
need_clients DROID
PASS="PROMPT FLAGS MODE ACTIONS" run_scenarios droid "$DROID_VERSION" write_config ${*:-$ALL_SCENARIOS}
