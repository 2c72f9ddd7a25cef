#!/usr/bin/env bash
# Checks what `cargo xtask dist --target x86_64-unknown-linux-musl` put in target/dist, as a user
# would meet it: the checksums verify; the archive holds static executables, the man page and the
# completions; the npm tarballs install with `npm install -g --offline` into a fresh prefix, and the
# hooks that lidguard installs point into that prefix and reach the daemon from a bare PATH; the
# .deb installs and purges with dpkg (in a root of its own) leaving no file. Runs as root on Linux x86_64.
set -euo pipefail
cd "$(dirname "$0")/../.."
dist=$PWD/target/dist
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
work=$(mktemp -d /tmp/lgdist.XXXXXX)
trap 'pkill -f "$work/" 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "dist: $*" >&2; exit 1; }
ok() { echo "dist: ok: $*"; }

# 1. Checksums.
(cd "$dist" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS does not verify"
ok "SHA256SUMS verifies ($(wc -l < "$dist/SHA256SUMS") files)"
# Only what a release publishes: a cargo profile named like the folder would fill it with cargo's
# own output, and the release workflow uploads the folder whole.
for entry in "$dist"/* "$dist"/.[!.]*; do
  [ -e "$entry" ] || continue
  case ${entry##*/} in
    *.tar.gz | *.zip | *.deb | SHA256SUMS | npm | homebrew | scoop | winget) ;;
    *) fail "target/dist holds ${entry##*/}, which no release publishes" ;;
  esac
done
ok "target/dist holds only release files"

# 2. The archive.
stem=lidguard-$version-x86_64-unknown-linux-musl
tar -xzf "$dist/$stem.tar.gz" -C "$work"
for f in lidguard lidguard-hook README.md LICENSE-MIT LICENSE-APACHE man/lidguard.1 \
  completions/lidguard.bash completions/_lidguard completions/lidguard.fish; do
  [ -f "$work/$stem/$f" ] || fail "the archive lacks $f"
done
for exe in lidguard lidguard-hook; do
  file "$work/$stem/$exe" | grep -q "statically linked" || fail "$exe is not static: $(file "$work/$stem/$exe")"
done
head -c 200 "$work/$stem/man/lidguard.1" | grep -q '^\.TH' || fail "man/lidguard.1 is not a man page"
"$work/$stem/lidguard" --version | grep -qF "$version" || fail "the archive's lidguard --version"
ok "archive: static lidguard $(stat -c %s "$work/$stem/lidguard") B, lidguard-hook $(stat -c %s "$work/$stem/lidguard-hook") B, man page, completions"

# 3. npm, offline, into a fresh prefix, on a PATH without cargo.
prefix=$work/npm-prefix
node_dir=$(dirname "$(command -v node)")
export npm_config_cache=$work/npm-cache
PATH="/usr/bin:/bin:$node_dir" npm install -g --offline --no-audit --no-fund --prefix "$prefix" \
  "$dist/npm/lidguard-linux-x64-$version.tgz" "$dist/npm/lidguard-$version.tgz" >/dev/null
userhome=$work/home
mkdir -p "$userhome/.claude"
run_user() { env -i PATH="$prefix/bin:/usr/bin:/bin:$node_dir" HOME="$userhome" LIDGUARD_HOME="$work/lg" \
  DBUS_SYSTEM_BUS_ADDRESS="unix:path=$work/no-bus" "$@"; }
run_user lidguard --version | grep -qF "$version" || fail "npm: lidguard --version"
run_user lidguard hook-install --provider claude >/dev/null
hook=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"])' \
  "$userhome/.claude/settings.json")
case $hook in
  "$prefix"/lib/node_modules/@lidguard/linux-x64/bin/lidguard-hook) ;;
  *) fail "npm: the entry runs $hook, not the hook inside $prefix" ;;
esac
# The entry as a desktop-started Claude runs it: no prefix, no node on PATH.
echo '{"session_id":"npm-1","cwd":"/tmp","hook_event_name":"UserPromptSubmit","prompt":"go"}' |
  env -i PATH=/usr/bin:/bin HOME="$userhome" LIDGUARD_HOME="$work/lg" DBUS_SYSTEM_BUS_ADDRESS="unix:path=$work/no-bus" \
  "$hook" claude-hook
for _ in $(seq 50); do
  run_user lidguard status --json 2>/dev/null | grep -q '"sessionId": *"npm-1"' && break
  sleep 0.1
done
run_user lidguard status --json | grep -q '"sessionId": *"npm-1"' || fail "npm: the hook did not reach the daemon"
pkill -f "$prefix/" || true
ok "npm: installed offline into a fresh prefix; hook entries run $hook; a hook run with PATH=/usr/bin:/bin reached the daemon"

# 4. The .deb: installed, used, purged without a trace. dpkg works on a root of its own (its own
# database under $work), so a run cut short leaves nothing installed on this machine and a machine
# that already has a lidguard package is neither refused nor touched.
deb=$dist/lidguard_${version}_amd64.deb
root=$work/dpkg-root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
pkg() { dpkg --root="$root" "$@"; }
pkg -i "$deb" >/dev/null
"$root/usr/bin/lidguard" --version | grep -qF "$version" || fail "deb: /usr/bin/lidguard --version"
mapfile -t owned < <(pkg -L lidguard)
for f in /usr/bin/lidguard-hook /usr/share/man/man1/lidguard.1.gz /usr/lib/systemd/user/lidguard.socket \
  /usr/lib/systemd/user/lidguard.service /usr/share/bash-completion/completions/lidguard; do
  [ -f "$root$f" ] || fail "deb: $f missing"
done
# Unpacked to a file first: with pipefail, zcat cut off by `head` (SIGPIPE) would fail the check.
gzip -dc "$root/usr/share/man/man1/lidguard.1.gz" > "$work/deb-man.1"
head -c 200 "$work/deb-man.1" | grep -q '^\.TH' || fail "deb: the man page"
pkg -P lidguard >/dev/null
left=()
for f in "${owned[@]}"; do
  [ -f "$root$f" ] && left+=("$f")
  case $f in */lidguard|*/lidguard/) [ -d "$root$f" ] && left+=("$f") ;; esac
done
[ ${#left[@]} -eq 0 ] || fail "deb: left behind after dpkg -P: ${left[*]}"
ok "deb: dpkg -i, lidguard --version, dpkg -P: ${#owned[@]} paths, none left"
