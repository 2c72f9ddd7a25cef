#!/usr/bin/env bash
# Verify against the real agent CLIs that they honour lidguard's hook answers.
#
#   tests/e2e/verify/run.sh claude|codex|all [scenario ...]     (needs root for `unshare -n`)
#   tests/e2e/verify/run.sh --list
#
# 1. builds lidguard (cargo build -p lidguard -> target/debug/lidguard);
# 2. checks that the clients are in the gitignored npm cache the capture drivers fill
#    (.ci/cache/npm/; tests/e2e/capture/{claude,codex}/run.sh install them when missing);
# 3. enters a private network namespace with only loopback and runs claude_codex.py there.
# Output: PASS/FAIL per check, then "N passed, M failed"; exit status 1 on any failure.
# VERIFY_OUT overrides the output root (default /tmp/lidguard-verify.<ts>).
# LIDGUARD_CAPTURE_NO_NETNS=1 skips the namespace (debug only!).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
CLAUDE_VERSION="${CLAUDE_VERSION:-2.1.332}"
CODEX_VERSION="${CODEX_VERSION:-0.171.0}"
export CLAUDE_VERSION CODEX_VERSION

# Copilot and OpenCode: copilot_opencode.py (it enters its own `unshare -n` namespace, only lo up).
#   tests/e2e/verify/run.sh copilot|opencode [--only scenario,...]
case "${1:-}" in
  copilot|opencode)
    (cd "$REPO" && cargo build -q -p lidguard)
    exec python3 "$HERE/copilot_opencode.py" "$@" ;;
esac

case "${1:-}" in
  --list) exec python3 "$HERE/claude_codex.py" --list ;;
  claude|codex|all) ;;
  *) echo "usage: $0 claude|codex|all [scenario ...]   (or --list)" >&2; exit 2 ;;
esac

(cd "$REPO" && cargo build -q -p lidguard)

want_claude=0; want_codex=0
case "$1" in claude) want_claude=1 ;; codex) want_codex=1 ;; all) want_claude=1; want_codex=1 ;; esac
CLAUDE="$REPO/.ci/cache/npm/@anthropic-ai+claude-code@$CLAUDE_VERSION/node_modules/.bin/claude"
CODEX="$REPO/.ci/cache/npm/@openai+codex@$CODEX_VERSION/node_modules/.bin/codex"
if [ $want_claude = 1 ] && ! "$CLAUDE" --version >/dev/null 2>&1; then
  echo "Claude Code $CLAUDE_VERSION is not installed: run tests/e2e/capture/claude/run.sh print-bash once (it installs the client)" >&2; exit 1
fi
if [ $want_codex = 1 ] && ! "$CODEX" --version >/dev/null 2>&1; then
  echo "Codex $CODEX_VERSION is not installed: run tests/e2e/capture/codex/run.sh exec-bash once (it installs the client)" >&2; exit 1
fi

if [ "${LIDGUARD_CAPTURE_NO_NETNS:-}" = 1 ]; then
  echo "WARNING: LIDGUARD_CAPTURE_NO_NETNS=1 -- running WITHOUT a private network namespace" >&2
  exec python3 "$HERE/claude_codex.py" "$@"
fi
[ "$(id -u)" = 0 ] || { echo "run.sh needs root for 'unshare -n' (or LIDGUARD_CAPTURE_NO_NETNS=1)" >&2; exit 1; }
exec unshare -n sh -c 'ip link set lo up && exec python3 "$0" "$@"' "$HERE/claude_codex.py" "$@"
