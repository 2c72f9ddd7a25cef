#!/usr/bin/env bash
# Capture real Kilo CLI plugin hook inputs against the scripted fake model: OpenCode's capture
# (tests/e2e/capture/opencode/run.sh, its capture plugin and scenarios) run with Kilo, the fork of
# OpenCode with the same plugin API.
#
#   tests/e2e/capture/kilo/run.sh [scenario ...]     (default: all scenarios)
#   then: tests/e2e/capture/kilo/fixtures.py <output dir>   (writes tests/fixtures/kilo/)
#
# Installs @kilocode/cli@$KILO_VERSION (default 7.7.7: the newest launcher whose Linux binary
# package, @kilocode/cli-linux-x64, is on the registry) into .ci/cache/npm/. Needs root.
exec env CAPTURE_AGENT=kilo "$(dirname "$0")/../opencode/run.sh" "$@"
