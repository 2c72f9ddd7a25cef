#!/usr/bin/env bash
# Capture real Codex CLI hook payloads against the scripted fake model (tests/e2e/fakemodel.py).
#
#   tests/e2e/capture/codex/run.sh [--fixtures] [scenario ...]     (default: all scenarios)
#   tests/e2e/capture/codex/run.sh --list
#
# 1. installs Codex (CODEX of tests/e2e/verify/harness/clients.py) into the gitignored cache
#    .ci/cache/npm/ (reused when present) -- the only network use;
# 2. enters a private network namespace with only loopback (`unshare -n`, needs root) and runs
#    capture.py there: per scenario a dir /tmp/lidguard-capture-codex.<ts>/<scenario>/ with its own
#    HOME, CODEX_HOME (config.toml -> fake provider; hooks.json hooks every event to
#    tests/e2e/hooklog.py; run with --dangerously-bypass-hook-trust), a `git init` project, the fake
#    model server and the client (`codex exec`, or the TUI in a private `tmux -L` server);
# 3. with --fixtures, writes tests/fixtures/codex/<scenario>__<Event>.json from the hook logs.
# Results per scenario: logs/hooks.jsonl (hook log), model.jsonl (requests the fake model saw).
# CAPTURE_OUT overrides the output root. LIDGUARD_CAPTURE_NO_NETNS=1 skips the namespace (debug only!).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../../.." && pwd)"
source "$REPO/tests/e2e/capture/lib.sh"

[ "${1:-}" = "--list" ] || need_clients CODEX
export CAPTURE_CLIENT="$CODEX" CAPTURE_CLIENT_ID="@openai/codex@$CODEX_VERSION"
python_in_netns "$HERE/capture.py" "$@"
