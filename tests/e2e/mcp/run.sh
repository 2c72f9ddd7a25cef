#!/usr/bin/env bash
# Drives lidguard's MCP servers with the official MCP Python SDK (tests/e2e/mcp/mcp_suite.py).
#
#   tests/e2e/mcp/run.sh
#
# Installs the SDK at the pinned version into the gitignored .ci/cache/venv-mcp (from PyPI, once),
# builds lidguard, and runs the suite against target/debug/lidguard with a private LIDGUARD_HOME.
# Needs no root and no network beyond the first install; everything else is loopback-free stdio
# and the daemon's Unix socket.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
MCP_VERSION="${MCP_VERSION:-2.3.0}"
VENV="$REPO/.ci/cache/venv-mcp"

if ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$MCP_VERSION')" 2>/dev/null; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "mcp==$MCP_VERSION"
fi
(cd "$REPO" && cargo build -q -p lidguard)
exec "$VENV/bin/python" "$HERE/mcp_suite.py" "$REPO/target/debug/lidguard"
