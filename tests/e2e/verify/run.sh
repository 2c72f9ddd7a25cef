#!/usr/bin/env bash
# Verify against the real agent CLIs that they honour lidguard's hook answers, with the hooks
# installed by `lidguard hook-install` and run unmodified.
#
#   tests/e2e/verify/run.sh all                      (all nine agents; what CI runs)
#   tests/e2e/verify/run.sh AGENT [scenario ...]     (one driver: AGENT.py, its scenarios from --list)
#   tests/e2e/verify/run.sh --list
# AGENT: claude codex copilot opencode gemini qwen kilo cline droid. One driver per agent (AGENT.py);
# what they share (the command line, the scenario kinds, checks, tmux, the receiver, the phone, sshd)
# is the harness/ package.
#
# Needs root (`unshare -n`: every scenario runs in a private network namespace with only `lo`).
# 1. builds lidguard and the two helpers the ask-before-sleep scenarios start inside the namespace
#    (cargo build -p lidguard -p lidguard-testreceiver -p lidguard-testbus -> target/debug/lidguard,
#    lidguard-test-receiver, lidguard-private-logind);
# 2. checks that the clients are in the gitignored cache .ci/cache/npm/
#    (tests/e2e/verify/install_clients.sh installs them at the pinned versions);
# 3. runs the drivers, each in a private network namespace of its own (only `lo` up). Output:
#    PASS/FAIL per check, then "N passed, M failed" per driver; `all` ends with one line
#    "e2e verify: N passed, M failed (...)". Exit status 1 on any failure.
# VERIFY_OUT overrides the output root (default /tmp/lidguard-verify.<ts>; `all` puts each driver's
# scenarios in <root>/<agent>/). VERIFY_TIMEOUT bounds each driver under `all` (seconds, default
# 900). LIDGUARD_CAPTURE_NO_NETNS=1 skips the namespace (debug only!).
# `all` runs Claude Code and Codex, one after the other, beside the other agents (two lanes;
# VERIFY_LANES=1 runs every driver one after another).
set -euo pipefail
export PYTHONDONTWRITEBYTECODE=1  # no __pycache__ in the source tree
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
eval "$(python3 "$HERE/harness/clients.py" --shell)"  # CLAUDE=<file>, CLAUDE_VERSION=<version>, ...

AGENTS=(claude codex copilot opencode gemini qwen kilo cline droid)
usage() { echo "usage: $0 all | --list | AGENT [scenario ...] (AGENT: ${AGENTS[*]})" >&2; exit 2; }

need_client() {  # need_client <name> <binary> [runner]
  ${3:-} "$2" --version >/dev/null 2>&1 </dev/null ||
    { echo "$1 is not installed at $2: run tests/e2e/verify/install_clients.sh" >&2; exit 1; }
}
need() {  # need <agent>: its client is installed
  case $1 in
    claude) need_client "Claude Code $CLAUDE_VERSION" "$CLAUDE" ;;
    codex) need_client "Codex $CODEX_VERSION" "$CODEX" ;;
    copilot) need_client "Copilot CLI $COPILOT_VERSION" "$COPILOT" ;;
    opencode) need_client "OpenCode $OPENCODE_VERSION" "$OPENCODE" ;;
    gemini) need_client "Gemini CLI $GEMINI_VERSION" "$GEMINI" ;;
    qwen) need_client "Qwen Code $QWEN_VERSION" "$QWEN" "$QWEN_NODE" ;;
    kilo) need_client "Kilo CLI $KILO_VERSION" "$KILO" ;;
    cline) need_client "Cline CLI $CLINE_VERSION" "$CLINE" ;;
    droid) need_client "Factory Droid $DROID_VERSION" "$DROID" ;;
  esac
}

case "${1:-}" in
  --list)
    for agent in "${AGENTS[@]}"; do python3 "$HERE/$agent.py" --list; done
    exit 0 ;;
  all) [ $# = 1 ] || { echo "run.sh all takes no scenario names (name them under one agent)" >&2; exit 2; } ;;
  *) [[ " ${AGENTS[*]} " == *" ${1:-} "* ]] || usage ;;
esac
[ "$(id -u)" = 0 ] || [ "${LIDGUARD_CAPTURE_NO_NETNS:-}" = 1 ] || { echo "run.sh needs root for 'unshare -n'" >&2; exit 1; }
(cd "$REPO" && cargo build -q -p lidguard -p lidguard-testreceiver -p lidguard-testbus)

if [ "$1" != all ]; then
  need "$1"
  exec python3 "$HERE/$1.py" "${@:2}"
fi

# all: every driver, every scenario, one summary line
for agent in "${AGENTS[@]}"; do need "$agent"; done
ROOT="${VERIFY_OUT:-/tmp/lidguard-verify.$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$ROOT"
limit="${VERIFY_TIMEOUT:-900}"
# One part: its driver under the time limit, its output in $ROOT/<part>.log (`tee`d when asked),
# then "<rc> <seconds>" in $ROOT/<part>.rc.
run_part() {  # run_part <agent> <show: 1|0>
  local part=$1 show=$2 start=$SECONDS rc
  local log="$ROOT/$part.log"
  echo "==> $part (output: $ROOT/$part)"
  set +e
  cmd=(timeout -k 30 "$limit" python3 "$HERE/$part.py" --out "$ROOT/$part")
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
# Two lanes by default (VERIFY_LANES=1: one after another): Claude Code then Codex, the longest
# drivers and the only ones with a private logind (and, for Claude, the ssh account), beside all
# the others, which run one after another. Each driver has a network namespace, an output folder
# and tmux servers of its own.
parts=("${AGENTS[@]}")
if [ "${VERIFY_LANES:-2}" = 1 ]; then
  for part in "${parts[@]}"; do run_part "$part" 1; done
else
  (run_part claude 0; run_part codex 0) &
  lane=$!
  for part in "${parts[@]:2}"; do run_part "$part" 1; done
  wait "$lane" || true
  for part in claude codex; do
    echo "==> $part, run beside the others:"
    cat "$ROOT/$part.log"
  done
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
