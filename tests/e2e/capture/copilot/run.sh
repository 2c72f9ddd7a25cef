#!/usr/bin/env bash
# Capture real GitHub Copilot CLI hook payloads against the scripted fake model.
#
#   tests/e2e/capture/copilot/run.sh [scenario ...]     (default: all scenarios)
#
# - installs @github/copilot@$COPILOT_VERSION into the gitignored cache .ci/cache/npm/ (reused);
# - per scenario makes /tmp/lidguard-capture-copilot.<ts>/<scenario>/ with its own HOME, XDG dirs,
#   COPILOT_HOME (hooks in $COPILOT_HOME/hooks/lidguard-capture.json) and a `git init` project;
# - runs the fake model server (tests/e2e/fakemodel_chat.py) and `copilot -p` (or, for the
#   interactive-* scenarios, the TUI under a private `tmux -L` server driven by ACTIONS) INSIDE a
#   private network namespace with only loopback (`unshare -n`), proxy variables pointing at the fake.
#   If the namespace cannot be made the script stops (there is deliberately no opt-out).
# Every hook runs tests/e2e/hooklog.py <dir>/hooklog <eventName>; results: <dir>/hooklog/hooks.jsonl,
# model requests: <dir>/model.jsonl. Turn the results into fixtures with fixtures.py (next to this).
# Needs root (for unshare -n). CAPTURE_OUT overrides the output root.
set -euo pipefail

REPO="$(cd "$(dirname "$0")/../../../.." && pwd)"
source "$REPO/tests/e2e/capture/lib.sh"
HOOKLOG="$REPO/tests/e2e/hooklog.py"
FAKE="$REPO/tests/e2e/fakemodel_chat.py"
# The first run extracts ~235 MB into $XDG_CACHE_HOME/copilot/pkg; keep it between runs.

CAMEL_EVENTS="sessionStart sessionEnd userPromptSubmitted userPromptTransformed preToolUse postToolUse
postToolUseFailure permissionRequest agentStop subagentStart subagentStop errorOccurred preCompact notification"
PASCAL_EVENTS="SessionStart SessionEnd UserPromptSubmit PreToolUse PostToolUse PostToolUseFailure
PermissionRequest Stop SubagentStart SubagentStop ErrorOccurred PreCompact Notification"

ALL_SCENARIOS="bash-tool bash-nonzero resume tool-failure permission-denied http-400 ask-user async-shell async-shell-notify detached-shell
task-agent stop-block interactive-ask-user interactive-permission-detached
pascal-bash-tool pascal-tool-failure pascal-http-400 pascal-task-agent pascal-stop-block"

# --- scenario definitions: set PROMPT, FLAGS, DIALECT, write $D/script.json and replies ---------
scenario() {
  local s="$1" D="$2"
  PROMPT="run the scripted step"; FLAGS="--allow-all-tools"; DIALECT=camel; MODE=print; ACTIONS=""
  # pascal-<scenario>: same scenario with hooks registered under the PascalCase (VS Code) names
  case "$s" in pascal-*) DIALECT=pascal; s="${s#pascal-}" ;; esac
  case "$s" in
    bash-tool)
      echo '[{"tool":"bash","args":{"command":"echo hello","description":"Say hello"}},{"text":"Done: hello."}]' ;;
    bash-nonzero)
      echo '[{"tool":"bash","args":{"command":"echo oops >&2; exit 3","description":"Fail on purpose"}},{"text":"The command failed."}]' ;;
    resume)  # two -p runs; the second resumes the first session (--resume=<sessionId>)
      MODE=print-resume
      echo '[{"text":"First turn."},{"text":"Resumed turn."}]' ;;
    tool-failure)
      echo '[{"tool":"view","args":{"path":"'"$D"'/proj/does-not-exist.txt"}},{"text":"That file does not exist."}]' ;;
    permission-denied)
      FLAGS=""
      echo '[{"tool":"bash","args":{"command":"touch newfile.txt","description":"Create a file"}},{"text":"I could not create the file."}]' ;;
    http-400)
      echo '[{"status":400,"body":{"error":{"message":"scripted bad request","type":"invalid_request_error","code":"bad_request"}}}]' ;;
    ask-user)
      echo '[{"tool":"ask_user","args":{"question":"Which colour?","choices":["red","blue"]}},{"text":"Thanks."}]' ;;
    async-shell)
      echo '[{"tool":"bash","args":{"command":"sleep 2; echo async-done","description":"Background sleep","mode":"async","shellId":"bg1"}},
             {"tool":"read_bash","args":{"shellId":"bg1","delay":5}},
             {"text":"The background shell finished."}]' ;;
    async-shell-notify)
      echo '[{"tool":"bash","args":{"command":"sleep 3; echo bg-done","description":"Background sleep","mode":"async","shellId":"bg2"}},
             {"text":"Waiting for the background shell."}]' ;;
    detached-shell)
      echo '[{"tool":"bash","args":{"command":"sleep 3; echo detached-done > detached.txt","description":"Detached sleep","mode":"async","detach":true,"shellId":"det1"}},
             {"text":"Started a detached shell."}]' ;;
    task-agent)
      echo '[{"tool":"task","args":{"description":"Sub task","prompt":"SUBAGENT: say hi","agent_type":"general-purpose","name":"hi-agent","mode":"background"},"unless":"SUBAGENT: say hi"},
             {"text":"Subagent says hi.","match":"SUBAGENT: say hi","delay":2},
             {"text":"Started the sub task.","unless":"SUBAGENT: say hi"}]' ;;
    stop-block)
      mkdir -p "$D/hooklog/replies"
      echo '{"decision":"block","reason":"continue"}' > "$D/hooklog/replies/agentStop.json"
      cp "$D/hooklog/replies/agentStop.json" "$D/hooklog/replies/Stop.json"
      echo '[{"text":"First answer."},{"text":"Second answer after the block."}]' ;;
    interactive-ask-user)
      # interactive TUI under tmux: ask_user exists only there; then /compact and /exit
      MODE=tmux
      ACTIONS="waitscreen Do you trust the files
snap trust
key Enter
sleep 3
snap start
send go
key Enter
wait preToolUse
sleep 4
snap ask
key Enter
sleep 2
snap ask2
key Enter
wait agentStop
snap answered
send /compact
key Enter
wait preCompact
sleep 3
snap compact
send /exit
key Enter
wait sessionEnd
sleep 2
snap exit"
      echo '[{"tool":"ask_user","args":{"message":"Which colour?","requestedSchema":{"properties":{"colour":{"type":"string","title":"Colour","enum":["red","blue"]}},"required":["colour"]}}},{"text":"Thanks, noted."}]' ;;
    interactive-permission-detached)
      # TUI, no --allow-all-tools: approve the permission dialog, let a detached shell finish while idle
      MODE=tmux; FLAGS=""
      ACTIONS="waitscreen Do you trust the files
key Enter
sleep 3
send go
key Enter
wait permissionRequest
sleep 4
snap permission
key Enter
wait agentStop
sleep 8
snap idle
send /exit
key Enter
wait sessionEnd
sleep 2"
      echo '[{"tool":"bash","args":{"command":"sleep 3; echo detached-done > detached.txt","description":"Detached sleep","mode":"async","detach":true,"shellId":"det1"}},{"text":"Started a detached shell."}]' ;;
    *) echo "unknown scenario $s" >&2; return 1 ;;
  esac > "$D/script.json"
}

write_hooks() {  # $1 = run dir, $2 = dialect
  local D="$1" events ev cmd first=1
  if [ "$2" = pascal ]; then events=$PASCAL_EVENTS; else events=$CAMEL_EVENTS; fi
  mkdir -p "$D/copilot/hooks"
  {
    printf '{"version":1,"hooks":{'
    for ev in $events; do
      cmd="python3 $HOOKLOG $D/hooklog $ev"
      if [ -f "$D/hooklog/replies/$ev.json" ] && { [ "$ev" = agentStop ] || [ "$ev" = Stop ]; }; then
        # block exactly once: drop the scripted reply after the first agentStop/Stop
        cmd="$cmd; rc=\$?; rm -f $D/hooklog/replies/$ev.json; exit \$rc"
      fi
      [ $first = 1 ] || printf ','
      first=0
      printf '"%s":[{"type":"command","bash":%s,"timeoutSec":30}]' "$ev" "$(python3 -c 'import json,sys;print(json.dumps(sys.argv[1]))' "$cmd")"
    done
    printf '}}\n'
  } > "$D/copilot/hooks/lidguard-capture.json"
}

hook_count() { local c; c=$(grep -c "\"event\": \"$2\"" "$1/hooklog/hooks.jsonl" 2>/dev/null); echo "${c:-0}"; }

tmux_session() {  # $1 = run dir, rest = environment; runs the TUI under a private tmux server
  local D="$1"; shift
  local T=(tmux -L "lgc-copilot-$$" )
  printf '%q ' env -i "$@" "$COPILOT" $FLAGS --log-level all --log-dir "$D/logs" > "$D/tui.cmd"
  "${T[@]}" new-session -d -s cap -x 160 -y 45 "bash $D/tui.cmd; echo EXITED \$? > $D/tui.exit; sleep 1"
  local line verb arg end
  while IFS= read -r line; do
    verb=${line%% *}; arg=${line#* }
    case "$verb" in
      send) "${T[@]}" send-keys -t cap -l "$arg" ;;
      key) "${T[@]}" send-keys -t cap "$arg" ;;
      sleep) sleep "$arg" ;;
      waitscreen)  # wait (up to 60 s) until the screen shows the text
        end=$((SECONDS + 60))
        until "${T[@]}" capture-pane -p -t cap 2>/dev/null | grep -qF "$arg" || [ $SECONDS -ge $end ]; do sleep 0.3; done ;;
      snap) "${T[@]}" capture-pane -p -t cap > "$D/screen-$arg.txt" 2>/dev/null ;;
      wait)  # wait (up to 60 s) until the hook event has been logged at least once
        end=$((SECONDS + 60))
        while [ "$(hook_count "$D" "$arg")" -lt 1 ] && [ $SECONDS -lt $end ]; do sleep 0.3; done
        [ "$(hook_count "$D" "$arg")" -ge 1 ] || echo "   timeout waiting for $arg" >&2 ;;
    esac
  done <<< "$ACTIONS"
  "${T[@]}" kill-server 2>/dev/null
  [ -f "$D/tui.exit" ] && cat "$D/tui.exit" > "$D/stdout"
  return 0
}

# --- inside the namespace --------------------------------------------------------------------
inside() {  # $1 = run dir; PROMPT/FLAGS via env
  local D="$1"
  start_fake "$D"
  trap 'kill $FPID 2>/dev/null || true' EXIT
  local port=$PORT
  local proxy="http://127.0.0.1:$port"
  cd "$D/proj"
  local envs=(PATH="$PATH" TERM=xterm-256color LANG=C.UTF-8
    HOME="$D/home" XDG_CONFIG_HOME="$D/xdg/config" XDG_DATA_HOME="$D/xdg/data"
    XDG_STATE_HOME="$D/xdg/state" XDG_CACHE_HOME="$COPILOT_XDG_CACHE" COPILOT_HOME="$D/copilot"
    COPILOT_OFFLINE=true COPILOT_PROVIDER_BASE_URL="$proxy/v1" COPILOT_PROVIDER_API_KEY=fake-key
    COPILOT_MODEL=fake-model COPILOT_AUTO_UPDATE=false
    HTTPS_PROXY="$proxy" HTTP_PROXY="$proxy" https_proxy="$proxy" http_proxy="$proxy"
    NO_PROXY=127.0.0.1,localhost,::1 no_proxy=127.0.0.1,localhost,::1)
  set +e
  if [ "$MODE" = print ]; then
    env -i "${envs[@]}" TERM=dumb \
      timeout 180 "$COPILOT" -p "$PROMPT" $FLAGS --log-level all --log-dir "$D/logs" \
      < /dev/null > "$D/stdout" 2> "$D/stderr"
  elif [ "$MODE" = print-resume ]; then
    env -i "${envs[@]}" TERM=dumb timeout 180 "$COPILOT" -p "$PROMPT" $FLAGS \
      < /dev/null > "$D/stdout" 2> "$D/stderr"
    local sid
    sid=$(python3 -c 'import json,sys; print(json.loads(json.loads(open(sys.argv[1]).readline())["stdin"])["sessionId"])' \
      "$D/hooklog/hooks.jsonl")
    env -i "${envs[@]}" TERM=dumb timeout 180 "$COPILOT" -p "continue the session" --resume="$sid" $FLAGS \
      < /dev/null >> "$D/stdout" 2>> "$D/stderr"
  else
    tmux_session "$D" "${envs[@]}"
  fi
  echo $? > "$D/exit"
  sleep "${SETTLE:-2}"  # let fire-and-forget hooks (notification, sessionEnd) land
  set -e
}

if [ "${1:-}" = "--inside" ]; then shift; inside "$@"; exit 0; fi

# --- outside: install, then each scenario in its own folder and namespace ---------------------
prepare_run() {  # $1 = run dir
  mkdir -p "$1"/{xdg/config,xdg/data,xdg/state,copilot,logs}
  write_hooks "$1" "$DIALECT"
  printf '%s\n' "$PROMPT" > "$1/prompt"
}

need_clients COPILOT
PASS="PROMPT FLAGS MODE ACTIONS" run_scenarios copilot "$COPILOT_VERSION" prepare_run ${*:-$ALL_SCENARIOS}
