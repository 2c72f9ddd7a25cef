#!/usr/bin/env bash
# Capture real agent transcript files (Codex rollout, Claude Code project transcript, Copilot
# events.jsonl) for lidguard's transcript monitors, against the scripted fake models.
#
#   tests/e2e/capture/transcripts/run.sh [--fixtures] [scenario ...]   (default: all scenarios)
#   tests/e2e/capture/transcripts/run.sh --list
#
# Uses the clients already installed in the gitignored cache .ci/cache/npm/ by the other capture
# drivers (tests/e2e/capture/{codex,claude,copilot}/run.sh install them; this script does not touch
# the network at all). Enters a private network namespace with only loopback (`unshare -n`, needs
# root) and runs capture.py there. Results: /tmp/lidguard-capture-transcripts.<ts>/<scenario>/
# (snap-*.jsonl transcript copies, screen-*.txt, model.jsonl, info.json); with --fixtures also
# tests/fixtures/transcripts/<provider>/<fixture>.jsonl + <fixture>.expect.json.
# CAPTURE_OUT overrides the output root; CODEX_VERSION / CLAUDE_VERSION / COPILOT_VERSION pick
# other cached client versions. LIDGUARD_CAPTURE_NO_NETNS=1 skips the namespace (debug only!).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../../.." && pwd)"
source "$REPO/tests/e2e/capture/lib.sh"

if [ "${1:-}" = "--list" ]; then exec python3 "$HERE/capture.py" --list; fi
python_in_netns "$HERE/capture.py" "$@"
