# Shared by the capture drivers that run an agent's TUI (gemini/run.sh, qwen/run.sh): sourced.
# tmux_session drives the TUI with the ACTIONS script (send, key, sleep, waitscreen, snap,
# submit <event>, wait <event>), reading the hook log the run's hooks write.

hook_count() { local c; c=$(grep -c "\"event\": \"$2\"" "$1/hooklog/hooks.jsonl" 2>/dev/null); echo "${c:-0}"; }

tmux_session() {  # $1 = run dir, rest = the command line; runs the TUI under a private tmux server
  local D="$1"; shift
  local T=(tmux -L "lgc-capture-$$")
  printf '%q ' "$@" > "$D/tui.cmd"
  "${T[@]}" new-session -d -s cap -x 160 -y 45 "bash $D/tui.cmd; echo EXITED \$? > $D/tui.exit; sleep 1"
  local line verb arg end
  while IFS= read -r line; do
    verb=${line%% *}; arg=${line#* }
    case "$verb" in
      send) "${T[@]}" send-keys -t cap -l "$arg" ;;
      key) "${T[@]}" send-keys -t cap "$arg" ;;
      sleep) sleep "$arg" ;;
      waitscreen)
        end=$((SECONDS + 60))
        until "${T[@]}" capture-pane -p -t cap 2>/dev/null | grep -qF "$arg" || [ $SECONDS -ge $end ]; do sleep 0.3; done ;;
      snap) "${T[@]}" capture-pane -p -t cap > "$D/screen-$arg.txt" 2>/dev/null ;;
      submit)  # press Enter until the event arg names is logged once more (a TUI still starting drops keys)
        local before; before=$(hook_count "$D" "$arg")
        for _ in $(seq 15); do
          "${T[@]}" send-keys -t cap Enter; sleep 2
          [ "$(hook_count "$D" "$arg")" -gt "$before" ] && break
        done ;;
      wait)
        end=$((SECONDS + 60))
        while [ "$(hook_count "$D" "$arg")" -lt 1 ] && [ $SECONDS -lt $end ]; do sleep 0.3; done
        [ "$(hook_count "$D" "$arg")" -ge 1 ] || echo "   timeout waiting for $arg" >&2 ;;
    esac
  done <<< "$ACTIONS"
  "${T[@]}" kill-server 2>/dev/null || true
  [ -f "$D/tui.exit" ] && cat "$D/tui.exit" > "$D/stdout"
  return 0
}
