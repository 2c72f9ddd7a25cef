#!/usr/bin/env bash
# Capture real Codex CLI hook payloads against the scripted fake model (tests/e2e/fakemodel.py).
#
#   tests/e2e/capture/codex/run.sh [--fixtures] [scenario ...]     (default: all scenarios)
#   tests/e2e/capture/codex/run.sh --list
#
# 1. installs @openai/codex@$CODEX_VERSION into the gitignored cache
#    .ci/cache/npm/@openai+codex@<ver>/ (reused when present) -- the only network use;
# 2. enters a private network namespace with only loopback (`unshare -n`, needs root) and runs
#    capture.py there: per scenario a dir /tmp/lidguard-capture-codex.<ts>/<scenario>/ with its own
#    HOME, CODEX_HOME (config.toml -> fake provider; hooks.json hooks every event to
#    tests/e2e/hooklog.py; run with --dangerously-bypass-hook-trust), a `git init` project, the fake
#    model server and the client (`codex exec`, or the TUI in a private `tmux -L` server);
# 3. with --fixtures, writes tests/fixtures/codex/<scenario>__<Event>.json from the hook logs.
# Results per scenario: logs/hooks.jsonl (hook log), model.jsonl (requests the fake model saw).
# CAPTURE_OUT overrides the output root. LIDGUARD_CAPTURE_NO_NETNS=1 skips the namespace (debug only!).
set -euo pipefail
CODEX_VERSION="${CODEX_VERSION:-0.171.0}"
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../../.." && pwd)"
PKGDIR="$REPO/.ci/cache/npm/@openai+codex@$CODEX_VERSION"
CODEX="$PKGDIR/node_modules/.bin/codex"

if [ "${1:-}" != "--list" ] && ! "$CODEX" --version >/dev/null 2>&1; then
  mkdir -p "$PKGDIR"
  npm install --prefix "$PKGDIR" --no-audit --no-fund "@openai/codex@$CODEX_VERSION" >&2
fi
export CAPTURE_CLIENT="$CODEX" CAPTURE_CLIENT_ID="@openai/codex@$CODEX_VERSION"

if [ "${LIDGUARD_CAPTURE_NO_NETNS:-}" = 1 ]; then
  echo "WARNING: LIDGUARD_CAPTURE_NO_NETNS=1 -- running WITHOUT a private network namespace" >&2
  exec python3 "$HERE/capture.py" "$@"
fi
[ "$(id -u)" = 0 ] || { echo "run.sh needs root for 'unshare -n' (or LIDGUARD_CAPTURE_NO_NETNS=1)" >&2; exit 1; }
exec unshare -n sh -c 'ip link set lo up && exec python3 "$0" "$@"' "$HERE/capture.py" "$@"
