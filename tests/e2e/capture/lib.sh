# Shared by the capture drivers (sourced once REPO is set): the agent CLIs from the one table of
# tests/e2e/verify/harness/clients.py (CLAUDE=<file>, CLAUDE_VERSION=<version>, ...), installing
# them, the private network namespace with loopback only, the fake model in it, a scenario's
# folder and the hook events it logged.
eval "$(python3 "$REPO/tests/e2e/verify/harness/clients.py" --shell)"

need_clients() {  # need_clients NAME...: installs those not in the cache yet (install_clients.sh)
  "$REPO/tests/e2e/verify/install_clients.sh" "$@" >&2
}

loopback_only() {  # inside `unshare -n`: lo up, and no other link
  ip link set lo up
  if ip -o link | grep -qv ': lo:'; then echo "refusing: non-loopback link in namespace" >&2; exit 1; fi
}

start_fake() {  # start_fake <run dir>: loopback only, then $FAKE on a free port; sets FPID and PORT
  local D="$1"
  loopback_only
  python3 "$FAKE" --port 0 --port-file "$D/port" --script "$D/script.json" --log "$D/model.jsonl" \
    2> "$D/fake.stderr" &
  FPID=$!
  for _ in $(seq 100); do [ -s "$D/port" ] && break; sleep 0.1; done
  PORT=$(cat "$D/port")
}

new_run() {  # new_run <run dir>: an empty home/ and hooklog/, a `git init` project proj/
  rm -rf "$1"
  mkdir -p "$1"/{home,proj,hooklog}
  git -C "$1/proj" init -q
  echo "# scratch project" > "$1/proj/README.md"
}

logged_events() {  # logged_events <run dir>: the hook events tests/e2e/hooklog.py logged, in order
  python3 -c 'import json,sys
print(" ".join(json.loads(l)["event"] for l in open(sys.argv[1])))' "$1/hooklog/hooks.jsonl" 2>/dev/null
}

python_in_netns() {  # python_in_netns <script> ARGS...: the script in a namespace of its own
  if [ "${LIDGUARD_CAPTURE_NO_NETNS:-}" = 1 ]; then
    echo "WARNING: LIDGUARD_CAPTURE_NO_NETNS=1 -- running WITHOUT a private network namespace" >&2
    exec python3 "$@"
  fi
  [ "$(id -u)" = 0 ] || { echo "run.sh needs root for 'unshare -n' (or LIDGUARD_CAPTURE_NO_NETNS=1)" >&2; exit 1; }
  exec unshare -n sh -c 'ip link set lo up && exec python3 "$0" "$@"' "$@"
}

# run_scenarios <agent> <version> <prepare> SCENARIO...: each scenario in a folder of its own
# under $OUT (new_run, then the driver's `scenario <name> <dir>` and `<prepare> <dir>`) and in a
# network namespace of its own (`"$0" --inside <dir>`, with SCEN=<name> and the variables $PASS
# names); prints each one's exit codes and logged hook events. CAPTURE_OUT overrides the output root.
run_scenarios() {
  local agent="$1" version="$2" prepare="$3"; shift 3
  [ "$(id -u)" = 0 ] || { echo "needs root for unshare -n" >&2; exit 1; }
  OUT="${CAPTURE_OUT:-/tmp/lidguard-capture-$agent.$(date +%Y%m%d-%H%M%S)}"
  mkdir -p "$OUT"
  echo "$version" > "$OUT/client-version"
  local s D start v vars
  for s in "$@"; do
    D="$OUT/$s"
    new_run "$D"
    scenario "$s" "$D"
    "$prepare" "$D"
    vars=("SCEN=$s")
    for v in $PASS; do vars+=("$v=${!v}"); done
    echo "== $s"
    start=$(date +%s)
    env "${vars[@]}" unshare -n "$0" --inside "$D"
    echo "   exit=$(tr '\n' ' ' < "$D/exit")in $(( $(date +%s) - start ))s; hooks: $(logged_events "$D")"
  done
  echo "results in $OUT"
}
