#!/usr/bin/env bash
# Capture real Claude Code hook payloads against the scripted fake model (tests/e2e/fakemodel.py).
#
#   tests/e2e/capture/claude/run.sh [--fixtures] [scenario ...]     (default: all scenarios)
#   tests/e2e/capture/claude/run.sh --list
#
# 1. installs @anthropic-ai/claude-code@$CLAUDE_VERSION into the gitignored cache
#    .ci/cache/npm/@anthropic-ai+claude-code@<ver>/ (reused when present) -- the only network use;
#    for the `sdk-*` scenarios also @anthropic-ai/claude-agent-sdk-linux-x64@$CLAUDE_SDK_VERSION
#    (the Agent SDK's platform package: a newer Claude Code binary, 2.1.337 in 0.3.337);
# 2. enters a private network namespace with only loopback (`unshare -n`, needs root) and runs
#    capture.py there: per scenario a dir /tmp/lidguard-capture-claude.<ts>/<scenario>/ with its own
#    HOME, CLAUDE_CONFIG_DIR (settings.json hooks every event to tests/e2e/hooklog.py), a `git init`
#    project, the fake model server and the client (tmux scenarios: a private `tmux -L` server);
# 3. with --fixtures, writes tests/fixtures/claude/<scenario>__<Event>.json from the hook logs.
# Results per scenario: logs/hooks.jsonl (hook log), model.jsonl (requests the fake model saw).
# CAPTURE_OUT overrides the output root. LIDGUARD_CAPTURE_NO_NETNS=1 skips the namespace (debug only!).
set -euo pipefail
CLAUDE_VERSION="${CLAUDE_VERSION:-2.1.332}"
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../../.." && pwd)"
PKGDIR="$REPO/.ci/cache/npm/@anthropic-ai+claude-code@$CLAUDE_VERSION"
CLAUDE="$PKGDIR/node_modules/.bin/claude"

if [ "${1:-}" != "--list" ]; then
  if ! "$CLAUDE" --version >/dev/null 2>&1; then
    mkdir -p "$PKGDIR"
    npm install --prefix "$PKGDIR" --no-audit --no-fund "@anthropic-ai/claude-code@$CLAUDE_VERSION" >&2
    "$CLAUDE" --version >/dev/null 2>&1 || (cd "$PKGDIR/node_modules/@anthropic-ai/claude-code" && node install.cjs >&2)
  fi
fi
export CAPTURE_CLIENT="$CLAUDE" CAPTURE_CLIENT_ID="@anthropic-ai/claude-code@$CLAUDE_VERSION"

# The `sdk-*` scenarios run the Claude Code binary of the Agent SDK's platform package, which is
# newer than the CLI package's (0.3.337 carries 2.1.337). Fetched only when such a scenario runs.
CLAUDE_SDK_VERSION="${CLAUDE_SDK_VERSION:-0.3.337}"
SDK_PKG="@anthropic-ai/claude-agent-sdk-linux-x64"
SDKDIR="$REPO/.ci/cache/npm/${SDK_PKG//\//+}@$CLAUDE_SDK_VERSION"
SDK_CLAUDE="$SDKDIR/node_modules/$SDK_PKG/claude"
case " $* " in
  *" sdk-"*|" "|"  "|" --fixtures ") wants_sdk=1 ;;
  *) wants_sdk=0 ;;
esac
if [ "${1:-}" != "--list" ] && [ "$wants_sdk" = 1 ] && ! "$SDK_CLAUDE" --version >/dev/null 2>&1; then
  mkdir -p "$SDKDIR"
  npm install --prefix "$SDKDIR" --no-audit --no-fund --prefer-offline "$SDK_PKG@$CLAUDE_SDK_VERSION" >&2
fi
SDK_CLAUDE_VERSION="$("$SDK_CLAUDE" --version 2>/dev/null | cut -d' ' -f1 || true)"
export CAPTURE_SDK_CLIENT="$SDK_CLAUDE" CAPTURE_SDK_CLIENT_VERSION="$SDK_CLAUDE_VERSION" \
  CAPTURE_SDK_CLIENT_ID="$SDK_PKG@$CLAUDE_SDK_VERSION (Claude Code $SDK_CLAUDE_VERSION)"

if [ "${LIDGUARD_CAPTURE_NO_NETNS:-}" = 1 ]; then
  echo "WARNING: LIDGUARD_CAPTURE_NO_NETNS=1 -- running WITHOUT a private network namespace" >&2
  exec python3 "$HERE/capture.py" "$@"
fi
[ "$(id -u)" = 0 ] || { echo "run.sh needs root for 'unshare -n' (or LIDGUARD_CAPTURE_NO_NETNS=1)" >&2; exit 1; }
exec unshare -n sh -c 'ip link set lo up && exec python3 "$0" "$@"' "$HERE/capture.py" "$@"
