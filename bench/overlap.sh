#!/usr/bin/env bash
# Benchmark (not a test), issue 33: `planwright validate` of an agb plan
# whose tickets all share one scope and may all run at the same time, the
# worst case of the scope-overlap forecast (2,000 tickets are 2 million
# pairs). Prints the time, the peak memory and how much the output holds:
# the forecast reports one group, so the output stays a few lines.
#
#   bash bench/overlap.sh                # 2,000 tickets
#   TICKETS="2000 8000" bash bench/overlap.sh
#   QUICK=1 bash bench/overlap.sh        # 200 tickets: checks the script works
#   PLANWRIGHT=/path/to/planwright bash bench/overlap.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
sizes="${TICKETS:-2000}"
counts TICKETS "$sizes" 2000
bin="$(planwright_bin)"
[[ -n "${QUICK:-}" ]] && sizes=200
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
for n in $sizes; do
  plan="$dir/one-scope-$n.json"
  {
    printf '{"repo": "/r", "gate": {"test": "npm test"}, "tickets": [\n'
    for ((i = 0; i < n; i++)); do
      ((i > 0)) && printf ',\n'
      printf '{"id": "T%d", "title": "t%d", "body": "b", "scope": ["src/**"]}' "$i" "$i"
    done
    printf '\n]}\n'
  } >"$plan"
  for output in human json; do
    start=$(date +%s%N)
    status=0
    if [[ -x /usr/bin/time ]]; then
      /usr/bin/time -f '%M' -o "$dir/rss" "$bin" validate --output "$output" "$plan" >"$dir/out" 2>/dev/null || status=$?
      rss="$(tail -1 "$dir/rss") KB peak"
    else
      "$bin" validate --output "$output" "$plan" >"$dir/out" 2>/dev/null || status=$?
      rss="peak memory not measured (no /usr/bin/time)"
    fi
    ms=$(took_ms "$start" "$status" "$bin" validate "$plan")
    echo "$n tickets, one scope, --output $output: $ms ms, $rss, $(wc -l <"$dir/out") lines / $(wc -c <"$dir/out") bytes of output"
  done
done
