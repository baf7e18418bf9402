#!/usr/bin/env bash
# Benchmark (not a test), issue 15 item 2: continuing a run of 10,000
# tickets. A run is started and stopped (SIGINT) once its first attempt
# runs; then `planwright run` is started again and timed until its first
# attempt starts (reading the plan, preflight, settling every ticket's
# stored state against git, scheduling), beside `validate` of the same
# plan; and the resident memory of that second process. Each figure is
# the fastest of three tries (the run is stopped and continued three times).
#
#   bash bench/resume.sh                 # 10,000 independent tickets
#   SHAPE=chain bash bench/resume.sh     # or chain, layers
#   QUICK=1 bash bench/resume.sh         # 100 tickets: checks the script works
#   PLANWRIGHT=/path/to/planwright bash bench/resume.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
n="${TICKETS:-10000}"
counts TICKETS "$n" 10000
bin="$(planwright_bin)"
[[ -n "${QUICK:-}" ]] && n=100
shape="${SHAPE:-independent}"
dir="$(mktemp -d)"
pid=""
trap '[[ -n "$pid" ]] && kill -INT "$pid" 2>/dev/null; wait; rm -rf "$dir"' EXIT
make_repo "$dir/repo" 10
agb_plan "$shape" "$n" >"$dir/plan.json"

# The run's event log, once it exists.
events() { ls "$dir"/repo/.planwright/runs/*/events.jsonl 2>/dev/null | head -1 || true; }

# Starts `planwright run` in the background (its pid in $pid) and waits
# until the event log has an `attempt_started` line after its first
# SKIP lines.
start_until_attempt() {
  local skip="$1"
  # The repository has no package.json, so the agb plan's gate `npm test`
  # fails on the base (the agent never gets that far): no gate trial.
  "$bin" run --repo "$dir/repo" --agent cmd --agent-cmd 'sleep 600' --jobs 1 \
    --no-gate-probe "$dir/plan.json" >"$dir/out" 2>&1 &
  pid=$!
  until [[ -n "$(events)" ]] && tail -n +"$((skip + 1))" "$(events)" | grep -q '"event":"attempt_started"'; do
    if ! kill -0 "$pid" 2>/dev/null; then
      cat "$dir/out" >&2
      exit 1
    fi
    sleep 0.02
  done
}
stop() {
  kill -INT "$pid"
  wait "$pid" || true
  pid=""
}

start_until_attempt 0
stop
# The machine is shared: each figure is the fastest of three tries.
resume="" rss=""
for _ in 1 2 3; do
  lines=$(wc -l <"$(events)")
  begin=$(date +%s%3N)
  start_until_attempt "$lines"
  first=$(tail -n +"$((lines + 1))" "$(events)" | grep -m1 '"event":"attempt_started"' | sed 's/.*"at_ms":\([0-9]*\).*/\1/')
  rss=$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status")
  stop
  took=$((first - begin))
  [[ -z "$resume" ]] || ((took < resume)) && resume=$took
done
v=""
for _ in 1 2 3; do
  took=$(time_ms "$bin" validate "$dir/plan.json")
  [[ -z "$v" ]] || ((took < v)) && v=$took
done
((v > 0)) || v=1
echo "$n $shape tickets, a run continued after a stop (fastest of three):"
echo "  validate:                          $v ms"
echo "  run, until its first attempt starts: $resume ms ($(awk -v a="$resume" -v b="$v" 'BEGIN { printf "%.1fx", a / b }') of validate)"
echo "  its peak resident memory:          $((rss / 1024)) MB"
