#!/usr/bin/env bash
# `lidguard mcp-install|mcp-status|mcp-remove all` and `provider-mcp-*` checked with the real
# agent CLIs: each one's own `mcp list` must show lidguard's entry next to the user's, Claude
# Code and OpenCode must connect to the server, and remove must give back the user's files
# byte for byte. Runs inside `unshare -n` (only `lo`), so nothing leaves the machine.
#
#   tests/e2e/mcp/registration.sh        (as root; the clients from install_clients.sh)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
if [ "${LIDGUARD_IN_NETNS:-}" != 1 ]; then
  [ "$(id -u)" = 0 ] || { echo "registration.sh needs root for 'unshare -n'" >&2; exit 1; }
  (cd "$REPO" && cargo build -q -p lidguard)
  exec unshare -n env LIDGUARD_IN_NETNS=1 bash -c 'ip link set lo up && exec bash "$0"' "$0"
fi

eval "$(python3 "$REPO/tests/e2e/verify/harness/clients.py" --shell)"  # CLAUDE, CODEX, ... (one table)
LG="$REPO/target/debug/lidguard"

pass=0 fail=0
check() {  # check <name> <command...>
  local name="$1"; shift
  if "$@" >/dev/null 2>&1; then pass=$((pass + 1)); echo "PASS $name"
  else fail=$((fail + 1)); echo "FAIL $name"; fi
}
has() { grep -Eq -- "$1" <<<"$2"; }
hasnt() { ! grep -Eq -- "$1" <<<"$2"; }

# A home with the user's own MCP servers in every agent's config (not under /tmp: Codex
# refuses helper binaries there and says so on every call).
HOME="$(mktemp -d "$REPO/target/mcp-registration.XXXXXX")"
export HOME LIDGUARD_HOME="$HOME/lidguard"
unset CODEX_HOME COPILOT_HOME CLAUDE_CONFIG_DIR OPENCODE_CONFIG OPENCODE_CONFIG_DIR XDG_CONFIG_HOME GEMINI_CLI_HOME
# Gemini: no relaunch, and this workspace trusted (an untrusted one lists servers as Disabled).
export GEMINI_CLI_NO_RELAUNCH=true GEMINI_CLI_TRUST_WORKSPACE=true
trap 'rm -rf "$HOME"' EXIT
mkdir -p "$HOME/.codex" "$HOME/.copilot" "$HOME/.claude" "$HOME/.config/opencode" "$HOME/.gemini"
cat >"$HOME/.codex/config.toml" <<'TOML'
# my Codex settings
model = "gpt-5"

[mcp_servers.mine]
command = "/bin/true" # keep me
TOML
cat >"$HOME/.copilot/mcp-config.json" <<'JSON'
{
  "mcpServers": {
    "mine": {"type": "local", "command": "/bin/true", "args": [], "tools": ["*"]}
  }
}
JSON
cat >"$HOME/.claude.json" <<'JSON'
{
  "numStartups": 3,
  "mcpServers": {
    "mine": {"type": "stdio", "command": "/bin/true", "args": []}
  }
}
JSON
cat >"$HOME/.config/opencode/opencode.json" <<'JSON'
{
  "$schema": "https://opencode.ai/config.json",
  "mcp": {
    "mine": {"type": "local", "command": ["/bin/true"], "enabled": false}
  }
}
JSON
cat >"$HOME/.gemini/settings.json" <<'JSON'
{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
  "privacy": {"usageStatisticsEnabled": false},
  "mcpServers": {
    "mine": {"command": "/bin/true", "args": []}
  }
}
JSON
files=("$HOME/.codex/config.toml" "$HOME/.copilot/mcp-config.json" "$HOME/.claude.json" "$HOME/.config/opencode/opencode.json" "$HOME/.gemini/settings.json")
before="$(sha256sum "${files[@]}")"

lists() {
  codex_list="$(timeout 60 "$CODEX" mcp list 2>&1 || true)"
  copilot_list="$(timeout 60 "$COPILOT" mcp list 2>&1 || true)"
  claude_list="$(timeout 120 "$CLAUDE" mcp list 2>&1 || true)"
  opencode_list="$(timeout 120 "$OPENCODE" mcp list 2>&1 || true)"
  gemini_list="$(timeout 120 "$GEMINI" mcp list 2>&1 || true)"
}

# Round trip first, with no agent run in between (the agents rewrite their own files when they
# run: Claude Code counts startups in .claude.json).
check "mcp-install all --dry-run changes nothing" bash -c '"$0" mcp-install all --dry-run | grep -q "would change" && [ "$(sha256sum "${@}")" = "$1" ]' "$LG" "$before" "${files[@]}"
check "mcp-install all" "$LG" mcp-install all
check "mcp-install twice changes nothing" bash -c '[ "$("$0" mcp-install all | grep -c "already up to date")" = 5 ]' "$LG"
check "mcp-status all reports installed (exit 0)" "$LG" mcp-status all
check "mcp-remove all" "$LG" mcp-remove all
check "install then remove gives back the user's files byte for byte" bash -c '[ "$(sha256sum "${@:1}")" = "$0" ]' "$before" "${files[@]}"
check "mcp-status all reports missing (exit 1)" bash -c '! "$0" mcp-status all' "$LG"

# The agents' own CLIs read what install wrote.
"$LG" mcp-install all >/dev/null
lists
check "codex mcp list shows lidguard and the user's server" bash -c 'grep -q "^lidguard .*mcp-server .*enabled" <<<"$0" && grep -q "^mine " <<<"$0"' "$codex_list"
check "copilot mcp list shows lidguard and the user's server" bash -c 'grep -q "lidguard (local)" <<<"$0" && grep -q "mine (local)" <<<"$0"' "$copilot_list"
check "claude mcp list connects to lidguard mcp-server" has "lidguard: .*mcp-server - .*Connected" "$claude_list"
check "claude mcp list still has the user's server" has "^mine: /bin/true" "$claude_list"
check "opencode mcp list connects to lidguard mcp-server" has "lidguard.*connected" "$opencode_list"
check "opencode mcp list still has the user's server" has "mine" "$opencode_list"
check "gemini mcp list connects to lidguard mcp-server" has "lidguard: .*mcp-server \\(stdio\\) - Connected" "$gemini_list"
check "gemini mcp list still has the user's server" has "mine: /bin/true" "$gemini_list"

check "mcp-remove all after the agents ran" "$LG" mcp-remove all
lists
check "no CLI lists lidguard after remove" bash -c '! grep -q "lidguard" <<<"$0$1$2$3$4"' "$codex_list" "$copilot_list" "$claude_list" "$opencode_list" "$gemini_list"

# Provider MCP: an entry in any JSON config; Claude's `mcp list` connects to it.
claude_json="$(sha256sum "$HOME/.claude.json")"
check "provider-mcp-install into .claude.json" "$LG" provider-mcp-install --config "$HOME/.claude.json" --provider-name claude-model
check "provider-mcp-status reports installed" "$LG" provider-mcp-status --config "$HOME/.claude.json"
check "provider-mcp-remove" "$LG" provider-mcp-remove --config "$HOME/.claude.json"
check "provider-mcp install then remove gives back the file byte for byte" bash -c '[ "$(sha256sum "$1")" = "$0" ]' "$claude_json" "$HOME/.claude.json"
"$LG" provider-mcp-install --config "$HOME/.claude.json" --provider-name claude-model >/dev/null
claude_list="$(timeout 120 "$CLAUDE" mcp list 2>&1 || true)"
check "claude mcp list connects to provider-mcp-server" has "lidguard-provider: .*provider-mcp-server --provider-name claude-model - .*Connected" "$claude_list"
check "provider-mcp-remove after Claude ran" "$LG" provider-mcp-remove --config "$HOME/.claude.json"
check "provider-mcp-status reports missing (exit 1)" bash -c '! "$0" provider-mcp-status --config "$1"' "$LG" "$HOME/.claude.json"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
