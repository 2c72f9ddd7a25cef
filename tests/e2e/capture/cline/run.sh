#!/usr/bin/env bash
# Capture real Cline CLI hook payloads against the scripted fake model.
#
#   tests/e2e/capture/cline/run.sh [scenario ...]     (default: all scenarios)
#   then: tests/e2e/capture/cline/fixtures.py <output dir>   (writes tests/fixtures/cline/)
#
# - installs cline@$CLINE_VERSION (its native @cline/cli-linux-x64 binary) into the gitignored
#   cache .ci/cache/npm/ (reused);
# - per scenario makes /tmp/lidguard-capture-cline.<ts>/<scenario>/ with its own HOME (a hook
#   file per event in $HOME/.cline/hooks, the openai-compatible provider set by `cline auth`)
#   and a `git init` project;
# - runs the fake model server (tests/e2e/fakemodel_chat.py, OpenAI chat completions on
#   loopback) and `cline "<prompt>"` (or, for tui-*, the interactive TUI in a tmux session fed
#   with keys) INSIDE a private network namespace with only loopback (`unshare -n`).
# Every hook file runs tests/e2e/hooklog.py <dir>/hooklog <Event>; results:
# <dir>/hooklog/hooks.jsonl, model requests: <dir>/model.jsonl. Needs root (for unshare -n).
# CAPTURE_OUT overrides the output root.
set -euo pipefail

REPO="$(cd "$(dirname "$0")/../../../.." && pwd)"
source "$REPO/tests/e2e/capture/lib.sh"
HOOKLOG="$REPO/tests/e2e/hooklog.py"
FAKE="$REPO/tests/e2e/fakemodel_chat.py"

# Every hook file name Cline 3.0.65 knows (HookConfigFileName), so the capture shows what fires.
EVENTS="TaskStart TaskResume TaskCancel TaskComplete TaskError PreToolUse PostToolUse
UserPromptSubmit PreCompact SessionShutdown"
ALL_SCENARIOS="print-shell print-second-run print-http-500 print-ask-deny print-interrupt tui-prompts-escape"

# --- scenario definitions: set PROMPT; write $D/script.json -------------------------------------
scenario() {
  local s="$1" D="$2"
  PROMPT="run the scripted step"; INTERRUPT=""; RUNS=1; TUI=""
  case "$s" in
    print-shell)
      echo '[{"tool":"run_commands","args":{"commands":["echo hello"]}},{"text":"Done: hello."}]' ;;
    print-second-run)
      # two runs in one HOME: the second after the first left Cline's background hub running
      RUNS=2
      echo '[{"text":"First answer."},{"text":"Second answer."}]' ;;
    print-http-500)
      echo '[{"status":500},{"status":500},{"status":500},{"status":500},{"status":500},{"status":500},{"status":500}]' ;;
    print-ask-deny)
      # the question tool; the PreToolUse hook prints lidguard's closed-lid refusal
      mkdir -p "$D/hooklog/replies"
      echo '{"cancel":true,"errorMessage":"lidguard: the lid is closed and nobody can answer now; continue without asking, or stop here"}' \
        > "$D/hooklog/replies/PreToolUse.json"
      echo '[{"tool":"ask_question","args":{"question":"Which colour?","options":["red","blue"]}},{"text":"Asked."}]' ;;
    print-interrupt)
      # a long command, the CLI interrupted (SIGINT) while it runs
      INTERRUPT=1
      echo '[{"tool":"run_commands","args":{"commands":["sleep 30 # intentional-sleep: the capture interrupts it"]}},{"text":"Waited."}]' ;;
    tui-prompts-escape)
      # the interactive TUI under tmux: two prompts, a third whose long command is cancelled
      # with Escape while it runs, a fourth after that; then Ctrl+C twice
      TUI=1
      echo '[{"text":"First answer."},{"text":"Second answer."},{"tool":"run_commands","args":{"commands":["sleep 30 # intentional-sleep: the capture cancels it with Escape"]}},{"text":"After the cancel."}]' ;;
    *) echo "unknown scenario $s" >&2; return 1 ;;
  esac > "$D/script.json"
}

write_hooks() {  # $1 = run dir
  local D="$1" ev
  mkdir -p "$D/home/.cline/hooks"
  for ev in $EVENTS; do
    printf '#!/bin/sh\nexec python3 %s %s %s\n' "$HOOKLOG" "$D/hooklog" "$ev" > "$D/home/.cline/hooks/$ev"
    chmod 700 "$D/home/.cline/hooks/$ev"
  done
}

# --- inside the namespace --------------------------------------------------------------------
inside() {  # $1 = run dir
  local D="$1"
  start_fake "$D"
  trap 'kill $FPID 2>/dev/null || true; pkill -f "$CLINE" 2>/dev/null || true' EXIT
  local port=$PORT
  cd "$D/proj"
  local envs=(PATH="$PATH" LANG=C.UTF-8 HOME="$D/home" TERM=dumb)
  env -i "${envs[@]}" timeout 60 "$CLINE" auth -p openai -k fake-key -m fake-model \
    -b "http://127.0.0.1:$port/v1" > "$D/auth.out" 2>&1
  set +e
  if [ -n "$TUI" ]; then tui "$D" "${envs[@]}"; return; fi
  local run
  for run in $(seq "$RUNS"); do
    if [ -n "$INTERRUPT" ]; then
      env -i "${envs[@]}" timeout 120 "$CLINE" "$PROMPT" < /dev/null > "$D/stdout" 2> "$D/stderr" &
      local pid=$!
      for _ in $(seq 300); do grep -qs PreToolUse "$D/hooklog/hooks.jsonl" && break; sleep 0.1; done
      sleep 2
      pkill -INT -f "^$CLINE $PROMPT" ; wait $pid
    else
      env -i "${envs[@]}" timeout 120 "$CLINE" "$PROMPT" < /dev/null >> "$D/stdout" 2>> "$D/stderr"
    fi
    echo $? >> "$D/exit"
  done
  sleep "${SETTLE:-3}"  # the detached hooks (TaskComplete, SessionShutdown) land after exit
  set -e
}

# The hook events so far, space-separated.
events() {
  python3 -c 'import json,sys
print(" ".join(json.loads(l)["event"] for l in open(sys.argv[1])))' "$1/hooklog/hooks.jsonl" 2>/dev/null
}

# Waits (at most 30 s) until the events so far include $2 at least $3 times.
await_event() {
  local _
  for _ in $(seq 150); do
    [ "$(events "$1" | tr ' ' '\n' | grep -cx "$2")" -ge "$3" ] && return 0
    sleep 0.2
  done
  echo "   (no $2 x$3 after 30 s: $(events "$1"))" >&2
}

tui() {  # $1 = run dir, then the environment; the TUI in a tmux session of its own
  local D="$1"; shift
  local t=(tmux -L "cline-capture-$$")
  "${t[@]}" new-session -d -s c -x 160 -y 45 "env -i $(printf '%q ' "$@") TERM=xterm-256color $(printf '%q' "$CLINE"); sleep 5"
  sleep 6
  "${t[@]}" send-keys -t c Escape   # closes the start-up promotion ("any other key to close")
  sleep 1.5
  local prompt n=0
  for prompt in "say something first" "now a second thing" "run the long step"; do
    n=$((n + 1))
    "${t[@]}" send-keys -t c "$prompt"; sleep 0.5; "${t[@]}" send-keys -t c Enter
    [ $n -lt 3 ] && await_event "$D" TaskComplete $n
  done
  await_event "$D" PreToolUse 1
  sleep 3
  "${t[@]}" send-keys -t c Escape
  await_event "$D" SessionShutdown 1
  "${t[@]}" send-keys -t c "after the cancel"; sleep 0.5; "${t[@]}" send-keys -t c Enter
  await_event "$D" TaskComplete 3
  "${t[@]}" capture-pane -p -t c > "$D/screen.txt"
  "${t[@]}" send-keys -t c C-c; sleep 1; "${t[@]}" send-keys -t c C-c
  sleep "${SETTLE:-3}"
  "${t[@]}" kill-server 2>/dev/null
  echo 0 > "$D/exit"
}

if [ "${1:-}" = "--inside" ]; then shift; inside "$@"; exit 0; fi

# --- outside: install, then each scenario in its own folder and namespace ---------------------
need_clients CLINE
PASS="PROMPT INTERRUPT RUNS TUI" run_scenarios cline "$CLINE_VERSION" write_hooks ${*:-$ALL_SCENARIOS}
