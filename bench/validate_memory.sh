#!/usr/bin/env bash
# Benchmark (not a test), issue 53 item 6: the peak memory of `planwright
# validate` against the size of the plan it reads (the goal: under 10x
# the file), on generated agb plans shaped as layers of 50 (each ticket
# after two of the layer before; `bench/lib.sh`'s `agb_plan`). Prints the
# file's size, the time, the peak resident memory (GNU `/usr/bin/time`;
# 0 where it is not installed) and their ratio. `FORMAT=native` measures
# native plans of the same shape instead (each ticket depending on the two
# of the layer before that the agb plan's edges name). `FORMAT=standard_v1`
# measures a standard_v1 plan whose `decomposition.sub_plans` are the
# tickets, each after the one 50 before it (its sub-plans' `depends_on`
# are indices).
#
#   bash bench/validate_memory.sh                 # 10,000 and 100,000 tickets
#   TICKETS="20000" bash bench/validate_memory.sh
#   FORMAT=native bash bench/validate_memory.sh
#   FORMAT=standard_v1 bash bench/validate_memory.sh
#   QUICK=1 bash bench/validate_memory.sh         # 1,000 tickets: checks the script works
#   PLANWRIGHT=/path/to/planwright bash bench/validate_memory.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
sizes="${TICKETS:-10000 100000}"
format="${FORMAT:-agb}"
case "$format" in
  agb | native | standard_v1) ;;
  *) echo "validate_memory.sh: FORMAT must be agb, native or standard_v1, not '$format'" >&2; exit 2 ;;
esac

# A native plan shaped as `agb_plan layers N`: ticket T (after the first
# layer of 50) depends on T-50 and on the ticket of the layer before whose
# second edge names T (the same dependencies `convert --to native` gives).
native_plan() {
  local n="$1"
  awk -v n="$n" 'BEGIN {
    printf "{\"planwright\":1,\"source_format\":\"native\",\"repo\":\"/srv/app\",\"base\":\"main\","
    printf "\"gates\":[{\"name\":\"test\",\"argv\":[\"npm\",\"test\"]}],\"tickets\":[\n"
    for (t = 0; t < n; t++) {
      deps = ""
      # The agb plan gives ticket i edges only where i + 50 < n.
      if (t >= 50) deps = sprintf("\"T%d\"", t - 50)
      i = t - 50 - t % 50 + (t % 50 + 49) % 50
      if (t >= 50 && i + 50 < n) deps = deps sprintf(",\"T%d\"", i)
      printf "%s{\"id\":\"T%d\",\"title\":\"ticket %d\",\"body\":\"Change module %d.\",", (t ? ",\n" : ""), t, t, t
      printf "\"scope\":[{\"pattern\":\"src/m%d/**\",\"op\":\"any\"},{\"pattern\":\"test/m%d.test.mjs\",\"op\":\"any\"}],", t, t
      printf "\"depends_on\":[%s],\"tier\":\"cheap\"}", deps
    }
    printf "\n]}\n"
  }'
}
# A standard_v1 plan (the fields a valid one needs) whose N sub-plans are
# the tickets: sub-plan T names two files of its own and, after the first
# 50, depends on sub-plan T-50.
standard_v1_plan() {
  local n="$1"
  awk -v n="$n" 'BEGIN {
    printf "{\"plan_version\":\"standard_v1\",\"ticket_reference\":{\"type\":\"github_issue\","
    printf "\"url\":\"https://github.com/o/r/issues/1\",\"id\":\"o/r#1\"},"
    printf "\"generated_by\":{\"agent\":\"bench\",\"model\":\"m\",\"version\":\"1\",\"timestamp\":\"2026-12-07T00:00:00Z\"},"
    printf "\"summary\":\"Change every module.\",\"scope\":{\"files\":[{\"path\":\"src/index.mjs\",\"operation\":\"modify\"}],"
    printf "\"estimated_lines_changed\":10},\"approach\":[{\"step\":1,\"description\":\"Change them.\"}],"
    printf "\"verification\":{\"test_strategy\":\"npm test\",\"rollback_plan\":\"Revert.\"},"
    printf "\"risks_and_assumptions\":[],\"predicted_runtime_minutes\":20,\"predicted_runtime_confidence\":\"low\","
    printf "\"decomposition\":{\"rationale\":\"one module a ticket\",\"sub_plans\":[\n"
    for (t = 0; t < n; t++) {
      printf "%s{\"title\":\"ticket %d\",\"scope_hint\":\"Change module %d.\",", (t ? ",\n" : ""), t, t
      printf "\"scope\":{\"files\":[{\"path\":\"src/m%d/index.mjs\",\"operation\":\"modify\"},", t
      printf "{\"path\":\"test/m%d.test.mjs\",\"operation\":\"modify\"}]},", t
      if (t >= 50) printf "\"depends_on\":[%d],", t - 50
      printf "\"predicted_runtime_minutes\":10,\"predicted_runtime_confidence\":\"low\"}"
    }
    printf "\n]}}\n"
  }'
}
counts TICKETS "$sizes" "10000 100000"
[[ -n "${QUICK:-}" ]] && sizes=1000
bin="$(planwright_bin)"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
printf '%8s %10s %9s %10s %8s  (%s)\n' tickets file time peak ratio "$format"
for n in $sizes; do
  plan="$dir/layers-$n.json"
  case "$format" in
    native) native_plan "$n" >"$plan" ;;
    standard_v1) standard_v1_plan "$n" >"$plan" ;;
    *) agb_plan layers "$n" >"$plan" ;;
  esac
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
