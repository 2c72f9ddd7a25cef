#!/usr/bin/env bash
# Install the agent CLIs the verification suite runs, at pinned versions, into the gitignored
# cache the suite and the capture drivers use; skip what is already there and works.
#
#   tests/e2e/verify/install_clients.sh [NAME ...]  (needs npm; root only for the offline Copilot step)
#
# NAME: CLAUDE, CODEX, COPILOT, ... as harness/clients.py names them (default: all).
#
#   .ci/cache/npm/<package>@<version>/   each client of harness/clients.py (the one table of packages,
#       pinned versions and the files that run them; a client's version variable overrides its pin)
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
eval "$(python3 "$HERE/harness/clients.py" --shell)"  # NPM_DIR, COPILOT_VERSION, COPILOT_XDG_CACHE, ...
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
  npm install --prefix "$dir" --no-audit --no-fund --prefer-offline --loglevel=error "$pkg@$ver" </dev/null >&2
  if ! works "$bin" "$prints" && [ -f "$dir/node_modules/$pkg/install.cjs" ]; then
    (cd "$dir/node_modules/$pkg" && node install.cjs >&2)  # Claude Code's own postinstall, if needed
  fi
  works "$bin" "$prints" || { echo "  $pkg@$ver: installed, but $bin --version does not print $prints" >&2; return 1; }
  echo "  $pkg@$ver: installed in $((SECONDS - start)) s ($dir)"
}

command -v npm >/dev/null || { echo "npm is needed (apt-get install -y npm)" >&2; exit 1; }
while IFS=$'\t' read -r pkg ver rel prints runner; do
  RUNNER="$runner" install "$pkg" "$ver" "$rel" "$prints"
done < <(python3 "$HERE/harness/clients.py" --packages "$@")
[ $# = 0 ] || [[ " $* " == *" COPILOT "* ]] || exit 0  # the Copilot extraction below

# Copilot extracts its runtime into $XDG_CACHE_HOME/copilot/pkg/<platform>/<version> on first run.
XDG_CACHE="$COPILOT_XDG_CACHE"
if compgen -G "$XDG_CACHE/copilot/pkg/*/$COPILOT_VERSION" >/dev/null; then
  echo "  Copilot extraction cache: present ($XDG_CACHE)"
else
  start=$SECONDS
  mkdir -p "$XDG_CACHE"
  tmp_home="$(mktemp -d)"
  copilot="$COPILOT"
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
