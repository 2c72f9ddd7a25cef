#!/usr/bin/env bash
# The Windows build under Wine: cross-builds lidguard.exe and lidguard-hook.exe
# (x86_64-pc-windows-gnu), puts them next to a test-only bcryptprimitives.dll shim (see
# bcryptprimitives.c) and runs, in a Wine prefix kept in .ci/cache/wine:
#   conformance.py  every captured payload fixture through `lidguard.exe <agent>-hook`
#   suite.py        the daemon over its named pipe, the lid-close action's backup and crash
#                   restore, the installers' round trips in the Wine user's profile
# Needs gcc-mingw-w64-x86-64 and wine64 (Debian); .ci/run installs them.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
wine=${WINE:-/usr/lib/wine/wine64}
cache=$repo/.ci/cache/wine
bin=$cache/bin
export WINEPREFIX=$cache/prefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="

cargo build --locked --target x86_64-pc-windows-gnu -p lidguard --bins
mkdir -p "$bin"
cp target/x86_64-pc-windows-gnu/debug/lidguard.exe target/x86_64-pc-windows-gnu/debug/lidguard-hook.exe \
  target/x86_64-pc-windows-gnu/debug/lidguard-tray.exe "$bin/"
x86_64-w64-mingw32-gcc -shared -O2 -o "$bin/bcryptprimitives.dll" tests/windows/bcryptprimitives.c -lbcrypt

# First use: Wine makes its prefix, minutes on a busy 2-core machine; once more if that fails,
# and its own words when it fails again (a CI run once stopped here without any).
boot_prefix() {
  timeout 600 "$wine" wineboot -i >"$cache/wineboot.log" 2>&1 && "$wine" cmd /c exit 0 >>"$cache/wineboot.log" 2>&1
}
if [ ! -f "$WINEPREFIX/.lidguard-booted" ]; then
  mkdir -p "$cache"
  if ! boot_prefix; then
    "${wine%64}server64" -k 2>/dev/null || wineserver -k 2>/dev/null || true
    rm -rf "$WINEPREFIX"
    boot_prefix || { echo "wineboot -i failed twice; its output:" >&2; tail -30 "$cache/wineboot.log" >&2; exit 1; }
  fi
  touch "$WINEPREFIX/.lidguard-booted"
fi
"$wine" "$bin/lidguard.exe" --version

work=$(mktemp -d /tmp/lidguard-wine.XXXXXX)
cleanup() {
  pkill -9 -f 'lidguard.exe run-server' 2>/dev/null || true
  "${wine%64}server64" -k 2>/dev/null || wineserver -k 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

python3 tests/windows/suite.py "$wine" "$bin" "$work/suite"
python3 tests/windows/conformance.py "$wine" "$bin" tests/fixtures "$work/conformance"
