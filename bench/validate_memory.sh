#!/usr/bin/env bash
# Benchmark (not a test), issue 53 item 6: the peak memory of `planwright
# validate` against the size of the plan it reads (the goal: under 10x
# the file), on generated agb plans shaped as layers of 50 (each ticket
# after two of the layer before; `bench/lib.sh`'s `agb_plan`). Prints the
# file's size, the time, the peak resident memory (GNU `/usr/bin/time`;
# 0 where it is not installed) and their ratio.
#
#   bash bench/validate_memory.sh                 # 10,000 and 100,000 tickets
#   TICKETS="20000" bash bench/validate_memory.sh
#   QUICK=1 bash bench/validate_memory.sh         # 1,000 tickets: checks the script works
#   PLANWRIGHT=/path/to/planwright bash bench/validate_memory.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
sizes="${TICKETS:-10000 100000}"
counts TICKETS "$sizes" "10000 100000"
[[ -n "${QUICK:-}" ]] && sizes=1000
bin="$(planwright_bin)"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
printf '%8s %10s %9s %10s %8s\n' tickets file time peak ratio
for n in $sizes; do
  plan="$dir/layers-$n.json"
  agb_plan layers "$n" >"$plan"
  start=$(date +%s%N)
  status=0
  if [[ -x /usr/bin/time ]]; then
    /usr/bin/time -f '%M' -o "$dir/rss" "$bin" validate "$plan" >/dev/null 2>&1 || status=$?
    kb=$(tail -1 "$dir/rss")
  else
    # Without GNU time the peak is not measured (printed as 0).
    "$bin" validate "$plan" >/dev/null 2>&1 || status=$?
    kb=0
  fi
  ms=$(took_ms "$start" "$status" "$bin" validate "$plan")
  bytes=$(wc -c <"$plan")
  printf '%8d %7.1f MB %6d ms %7.0f MB %7.1fx\n' "$n" "$(awk -v b="$bytes" 'BEGIN { print b / 1e6 }')" \
    "$ms" "$(awk -v k="$kb" 'BEGIN { print k * 1024 / 1e6 }')" \
    "$(awk -v k="$kb" -v b="$bytes" 'BEGIN { print k * 1024 / b }')"
done
