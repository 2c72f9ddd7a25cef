#!/usr/bin/env bash
# Capture real Claude Code hook payloads against the scripted fake model (tests/e2e/fakemodel.py).
#
#   tests/e2e/capture/claude/run.sh [--fixtures] [scenario ...]     (default: all scenarios)
#   tests/e2e/capture/claude/run.sh --list
#
# 1. installs Claude Code (CLAUDE of tests/e2e/verify/harness/clients.py) into the gitignored cache
#    .ci/cache/npm/ (reused when present) -- the only network use; for the `sdk-*` scenarios also
#    the Agent SDK's platform package (CLAUDE_SDK: a newer Claude Code binary);
# 2. enters a private network namespace with only loopback (`unshare -n`, needs root) and runs
#    capture.py there: per scenario a dir /tmp/lidguard-capture-claude.<ts>/<scenario>/ with its own
#    HOME, CLAUDE_CONFIG_DIR (settings.json hooks every event to tests/e2e/hooklog.py), a `git init`
#    project, the fake model server and the client (tmux scenarios: a private `tmux -L` server);
# 3. with --fixtures, writes tests/fixtures/claude/<scenario>__<Event>.json from the hook logs.
# Results per scenario: logs/hooks.jsonl (hook log), model.jsonl (requests the fake model saw).
# CAPTURE_OUT overrides the output root. LIDGUARD_CAPTURE_NO_NETNS=1 skips the namespace (debug only!).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../../.." && pwd)"
source "$REPO/tests/e2e/capture/lib.sh"

case " $* " in
  *" sdk-"*|" "|"  "|" --fixtures ") wants_sdk=1 ;;
  *) wants_sdk=0 ;;
esac
if [ "${1:-}" != "--list" ]; then
  need_clients CLAUDE $([ "$wants_sdk" = 1 ] && echo CLAUDE_SDK)
fi
export CAPTURE_CLIENT="$CLAUDE" CAPTURE_CLIENT_ID="@anthropic-ai/claude-code@$CLAUDE_VERSION"
SDK_CLAUDE_VERSION="$("$CLAUDE_SDK" --version 2>/dev/null | cut -d' ' -f1 || true)"
export CAPTURE_SDK_CLIENT="$CLAUDE_SDK" CAPTURE_SDK_CLIENT_VERSION="$SDK_CLAUDE_VERSION" \
  CAPTURE_SDK_CLIENT_ID="@anthropic-ai/claude-agent-sdk-linux-x64@$CLAUDE_SDK_VERSION (Claude Code $SDK_CLAUDE_VERSION)"

python_in_netns "$HERE/capture.py" "$@"
