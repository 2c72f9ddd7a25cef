#!/usr/bin/env bash
# Capture real OpenCode plugin hook inputs against the scripted fake model.
#
#   tests/e2e/capture/opencode/run.sh [scenario ...]     (default: all scenarios)
#
# - installs opencode-ai@$OPENCODE_VERSION into the gitignored cache .ci/cache/npm/ (reused);
# - per scenario makes /tmp/lidguard-capture-opencode.<ts>/<scenario>/ with its own HOME and XDG dirs,
#   the capture plugin (capture.js, next to this) in $XDG_CONFIG_HOME/opencode/plugins/, the
#   startup-stall workaround (pre-made node_modules/package.json/package-lock.json in the config
#   dir) and a `git init` project with an opencode.json pointing at the fake model;
# - runs the fake model server (tests/e2e/fakemodel_chat.py) and `opencode run` or `opencode serve`
#   (driven by serve_client.py) INSIDE a private network namespace with only loopback (`unshare -n`).
# Results: <dir>/hooklog/hooks.jsonl (one line per plugin call; stdin = {hook, input, output}),
# model requests in <dir>/model.jsonl, serve API calls in <dir>/api.jsonl. Needs root.
#
# CAPTURE_AGENT=kilo (what tests/e2e/capture/kilo/run.sh sets) captures Kilo CLI instead, OpenCode's
# fork with the same plugin API: @kilocode/cli@$KILO_VERSION, config dir $XDG_CONFIG_HOME/kilo,
# kilo.json, KILO_* variables, @kilocode/plugin.
set -euo pipefail

AGENT="${CAPTURE_AGENT:-opencode}"
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../../.." && pwd)"
FAKE="$REPO/tests/e2e/fakemodel_chat.py"
source "$REPO/tests/e2e/capture/lib.sh"
if [ "$AGENT" = kilo ]; then
  CLIENT=KILO; VERSION="$KILO_VERSION"; OPENCODE="$KILO"  # its native binary
  PLUGIN_PACKAGE="@kilocode/plugin"; ENV_PREFIX=KILO; SCHEMA="https://app.kilo.ai/config.json"
else
  CLIENT=OPENCODE; VERSION="$OPENCODE_VERSION"  # OPENCODE: its native binary (no postinstall needed)
  PLUGIN_PACKAGE="@opencode-ai/plugin"; ENV_PREFIX=OPENCODE; SCHEMA="https://opencode.ai/config.json"
fi

ALL_SCENARIOS="bash-tool tool-failure permission-ask-run http-400 question command task-subagent serve-question
serve-question-reject serve-permission-plugin-reply serve-permission-http-reply serve-reprompt-delete"

BASH_THEN_TEXT='[{"tool":"bash","args":{"command":"echo hello","description":"Say hello"}},{"text":"Done: hello."}]'
TOUCH_THEN_TEXT='[{"tool":"bash","args":{"command":"touch newfile.txt","description":"Create a file"}},{"text":"Created."}]'

# --- scenario definitions: MODE (run|serve), RUNFLAGS, PERMISSION json, script, plugin switches ---
scenario() {
  local s="$1" D="$2"
  MODE=run; RUNFLAGS=""; PERMISSION='{}'; PERMREPLY=""; REPROMPT=""; EXTRA=""
  case "$s" in
    bash-tool) echo "$BASH_THEN_TEXT" ;;
    tool-failure)
      echo '[{"tool":"read","args":{"filePath":"'"$D"'/proj/does-not-exist.txt"}},{"text":"No such file."}]' ;;
    permission-ask-run) PERMISSION='{"bash":"ask"}'; echo "$TOUCH_THEN_TEXT" ;;
    http-400)
      echo '[{"status":400,"body":{"error":{"message":"scripted bad request","type":"invalid_request_error","code":"bad_request"}}}]' ;;
    question|serve-question|serve-question-reject)
      [ "$s" != question ] && MODE=serve
      echo '[{"tool":"question","args":{"questions":[{"question":"Which colour?","header":"Colour","options":[{"label":"red","description":"Red"},{"label":"blue","description":"Blue"}]}]}},{"text":"Thanks."}]' ;;
    command)  # a custom slash command (command.execute.before)
      RUNFLAGS="--command hello"
      EXTRA='"command": {"hello": {"template": "Say hello to $ARGUMENTS", "description": "Greets"}},'
      echo "$BASH_THEN_TEXT" ;;
    task-subagent)
      echo '[{"tool":"task","args":{"description":"Sub task","prompt":"SUBAGENT: say hi","subagent_type":"general"},"unless":"SUBAGENT: say hi"},
             {"text":"Subagent says hi.","match":"SUBAGENT: say hi"},
             {"text":"The sub task finished.","unless":"SUBAGENT: say hi"}]' ;;
    serve-permission-plugin-reply) MODE=serve; PERMISSION='{"bash":"ask"}'; PERMREPLY=once; echo "$TOUCH_THEN_TEXT" ;;
    serve-permission-http-reply) MODE=serve; PERMISSION='{"bash":"ask"}'; echo "$TOUCH_THEN_TEXT" ;;
    serve-reprompt-delete) MODE=serve; REPROMPT="continue please"
      echo '[{"tool":"bash","args":{"command":"echo hello","description":"Say hello"}},{"text":"Done: hello."},{"text":"Continued after the re-prompt."}]' ;;
    *) echo "unknown scenario $s" >&2; return 1 ;;
  esac > "$D/script.json"
}

# --- inside the namespace --------------------------------------------------------------------
inside() {  # $1 = run dir; MODE/RUNFLAGS/PERMISSION/EXTRA/PERMREPLY/REPROMPT/SCEN via env
  local D="$1"
  start_fake "$D"
  SPID=""
  trap 'kill $FPID $SPID 2>/dev/null || true' EXIT
  local port=$PORT
  local proxy="http://127.0.0.1:$port"
  cat > "$D/proj/$AGENT.json" <<EOF
{
  "\$schema": "$SCHEMA",
  "model": "fake/fake-model",
  "small_model": "fake/fake-model",
  "autoupdate": false,
  "share": "disabled",
  "permission": $PERMISSION,$EXTRA
  "provider": {
    "fake": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "Fake",
      "options": {"baseURL": "$proxy/v1", "apiKey": "fake-key"},
      "models": {"fake-model": {"name": "Fake model", "tool_call": true, "limit": {"context": 128000, "output": 4096}}}
    }
  }
}
EOF
  cd "$D/proj"
  local envs=(PATH="$PATH" TERM=dumb LANG=C.UTF-8 HOME="$D/home"
    XDG_CONFIG_HOME="$D/xdg/config" XDG_DATA_HOME="$D/xdg/data" XDG_STATE_HOME="$D/xdg/state"
    XDG_CACHE_HOME="$D/xdg/cache"
    ${ENV_PREFIX}_DISABLE_MODELS_FETCH=1 ${ENV_PREFIX}_DISABLE_AUTOUPDATE=1 ${ENV_PREFIX}_DISABLE_LSP_DOWNLOAD=1
    ${ENV_PREFIX}_DISABLE_SHARE=1 ${ENV_PREFIX}_DISABLE_DEFAULT_PLUGINS=1
    HTTPS_PROXY="$proxy" HTTP_PROXY="$proxy" https_proxy="$proxy" http_proxy="$proxy"
    NO_PROXY=127.0.0.1,localhost,::1 no_proxy=127.0.0.1,localhost,::1
    CAPTURE_LOGDIR="$D/hooklog" CAPTURE_HOOKLOG="$REPO/tests/e2e/hooklog.py"
    CAPTURE_PERMISSION_REPLY="$PERMREPLY" CAPTURE_REPROMPT="$REPROMPT")
  set +e
  if [ "$MODE" = run ]; then
    env -i "${envs[@]}" timeout 120 "$OPENCODE" run $RUNFLAGS --print-logs --log-level INFO go \
      < /dev/null > "$D/stdout" 2> "$D/stderr"
    echo $? > "$D/exit"
  else
    env -i "${envs[@]}" "$OPENCODE" serve --hostname 127.0.0.1 --port 0 --print-logs --log-level INFO \
      < /dev/null > "$D/stdout" 2> "$D/stderr" &
    SPID=$!
    local url=""
    for _ in $(seq 300); do
      url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$D/stdout" | head -1)
      [ -n "$url" ] && break; sleep 0.1
    done
    echo "server at ${url:-NONE}"
    [ -n "$url" ] && timeout 180 python3 "$HERE/serve_client.py" "$url" "$D" "$SCEN"
    echo $? > "$D/exit"
    kill "$SPID"; wait "$SPID" 2>/dev/null
  fi
  sleep 1
  set -e
}

if [ "${1:-}" = "--inside" ]; then shift; inside "$@"; exit 0; fi

# --- outside: install, then each scenario in its own folder and namespace ---------------------
prepare_run() {  # $1 = run dir: the capture plugin in the agent's config folder
  local CFG="$1/xdg/config/$AGENT"
  mkdir -p "$1"/{xdg/data,xdg/state,xdg/cache} "$CFG/plugins" "$CFG/node_modules"
  cp "$HERE/capture.js" "$CFG/plugins/capture.js"
  # startup-stall workaround: make the agent believe its plugin package is already installed
  echo "{\"dependencies\":{\"$PLUGIN_PACKAGE\":\"$VERSION\"}}" > "$CFG/package.json"
  echo "{\"lockfileVersion\":3,\"packages\":{\"\":{\"dependencies\":{\"$PLUGIN_PACKAGE\":\"$VERSION\"}}}}" \
    > "$CFG/package-lock.json"
}

need_clients "$CLIENT"
PASS="MODE RUNFLAGS EXTRA PERMISSION PERMREPLY REPROMPT" run_scenarios "$AGENT" "$VERSION" prepare_run \
  ${*:-$ALL_SCENARIOS}
