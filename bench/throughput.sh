#!/usr/bin/env bash
# Benchmark (not a test), issue 32 item 7: the merge queue's throughput.
# N independent tickets whose agents and gates sleep simulated times, run
# at several `--jobs`; it prints the wall time against the DAG bound, gate
# runs per merged ticket, merged tickets per hour, rebuilds, stack
# checks (`batch_started` events: a stack or a prefix of one checked),
# attempts (agent runs), flakes (gates that failed, then passed when
# run again on the same tree) and, with fixed times, the packed floor:
# ceil(attempts / jobs) rounds of agent + gate and one gate, before which
# no run with that many attempts can end (a rebuild adds an attempt; when
# N is a multiple of jobs it adds a whole round).
#
#   bash bench/throughput.sh                    # 24 tickets, agent 2 s, gate 1 s, --jobs 1 4 8
#   TICKETS=48 JOBS="8 16" bash bench/throughput.sh
#   AGENT=20 GATE=120 bash bench/throughput.sh  # seconds; the times of a real suite
#   DIST=lognormal bash bench/throughput.sh     # agent and gate times lognormal around those means
#   SEMANTIC=2 bash bench/throughput.sh         # 2 pairs of tickets that break the gate together
#   FLAKY=0.05 bash bench/throughput.sh         # each gate run fails at random with this chance
#   MERGE="batch = 1" bash bench/throughput.sh  # a `[merge]` section for the run (one at a time)
#   QUICK=1 bash bench/throughput.sh            # 6 tickets of 0.2 s: checks the script works
#   KEEP=1 bash bench/throughput.sh             # keeps the run folder (each --jobs overwrites it) and says where
#
# The DAG bound is N x (agent + gate) / jobs + one gate (the last merge's
# check), with the mean gate time: what a queue that never waits and never
# re-runs a gate needlessly would reach. The wall time runs from the run's start to its last merge
# (the event log's times). Gate runs are counted from the tickets' logs
# (every run of the gate, in a slot or on a merged tree). A ticket of a
# semantic pair writes `x` into its file; with its partner's `x` on the
# tree the gate fails; its second attempt (which starts from its first
# attempt's candidate) writes `fixed`.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
tickets="${TICKETS:-24}" agent="${AGENT:-2}" gate="${GATE:-1}" jobs_list="${JOBS:-1 4 8}"
dist="${DIST:-fixed}" semantic="${SEMANTIC:-0}" flaky="${FLAKY:-0}" merge="${MERGE:-}"
if [[ -n "${QUICK:-}" ]]; then
  tickets=6 agent=0.2 gate=0.2 jobs_list="1 3"
fi
counts TICKETS "$tickets" 24
counts JOBS "$jobs_list" "1 4 8"
for v in AGENT:"$agent" GATE:"$gate" FLAKY:"$flaky"; do
  if [[ ! "${v#*:}" =~ ^[0-9]*\.?[0-9]+$ ]]; then
    echo "bench: ${v%%:*}=\"${v#*:}\" is not a number of seconds (or a chance); use for example ${v%%:*}=1" >&2
    exit 2
  fi
done
case "$dist" in fixed | lognormal) ;; *)
  echo "bench: DIST=${dist} is not a distribution; use DIST=fixed (the default) or DIST=lognormal" >&2
  exit 2
  ;;
esac
if ((semantic * 2 > tickets)); then
  echo "bench: SEMANTIC=${semantic} pairs need $((semantic * 2)) tickets; give TICKETS=$((semantic * 2)) or more" >&2
  exit 2
fi
bin="$(planwright_bin)"
dir="$(mktemp -d)"
trap 'if [[ -n "${KEEP:-}" ]]; then echo "bench: kept $dir" >&2; else rm -rf "$dir"; fi' EXIT

# Per ticket i: its agent's and its gate's time. Lognormal times keep the
# given mean (sigma 0.5), from a fixed seed so runs compare.
times() { # times MEAN: one time per ticket
  awk -v n="$tickets" -v m="$1" -v d="$dist" -v seed="$2" 'BEGIN {
    srand(seed); s = 0.5
    for (i = 0; i < n; i++) {
      if (d == "fixed") { print m; continue }
      u = rand(); v = rand(); z = sqrt(-2 * log(u + 1e-12)) * cos(6.283185307 * v)
      printf "%.3f\n", m * exp(s * z - s * s / 2)
    }
  }'
}
mapfile -t agent_t < <(times "$agent" 1)

# Ticket i's agent: sleeps, then writes `m/t<i>.txt`; a ticket of a
# semantic pair (the first 2 x SEMANTIC) writes `x`, or `fixed` when its
# workspace already holds its earlier `x`.
for ((i = 0; i < tickets; i++)); do
  printf 'sleep %s\nf=m/t%d.txt\nif [ -f "$f" ]; then echo fixed > "$f"; else echo x > "$f"; fi\n' \
    "${agent_t[$i]}" "$i" >"$dir/agent-t$i.sh"
done
# The gate, one command for every ticket (the queue stacks only tickets
# with the same gates): sleeps GATE seconds (lognormal around it, drawn
# per run, with DIST=lognormal), fails with chance FLAKY, and fails when
# both tickets of a semantic pair hold `x`. Each draw's seed is 4 random
# bytes halved: mawk (Debian's awk) takes every seed from 2^31 up as
# 2^31 - 1, so unhalved, half the runs drew one same number (FLAKY=0.1
# flaked 5% of gate runs, and half the lognormal gates took one time).
{
  if [[ "$dist" == lognormal ]]; then
    echo "sleep \"\$(awk -v m=$gate -v seed=\"\$(od -An -N4 -tu4 /dev/urandom)\" 'BEGIN { srand(int(seed / 2)); u = rand(); v = rand(); s = 0.5
      printf \"%.3f\", m * exp(s * sqrt(-2 * log(u + 1e-12)) * cos(6.283185307 * v) - s * s / 2) }')\""
  else
    echo "sleep $gate"
  fi
  # Seeded per run of the gate: awk's own seed is the time in seconds,
  # which would make the gates of one second flake together.
  echo "awk -v p=$flaky -v seed=\"\$(od -An -N4 -tu4 /dev/urandom)\" 'BEGIN { srand(int(seed / 2)); exit !(rand() < p) }' && { echo flaky; exit 1; }"
  for ((k = 0; k < semantic; k++)); do
    a=$((2 * k)) b=$((2 * k + 1))
    echo "if grep -qx x m/t$a.txt 2>/dev/null && grep -qx x m/t$b.txt 2>/dev/null; then echo 't$a and t$b clash'; exit 1; fi"
  done
  echo 'exit 0'
} >"$dir/gate.sh"

plan() {
  printf '{"planwright":1,"source_format":"native","base":"main","tickets":[\n'
  for ((i = 0; i < tickets; i++)); do
    printf '%s{"id":"t%d","body":"Write m/t%d.txt.","scope":[{"pattern":"m/t%d.txt","op":"any"}],' \
      "$([[ $i -gt 0 ]] && echo ,)" "$i" "$i" "$i"
    printf '"gates":[{"name":"gate","argv":["sh","%s"]}]}' "$dir/gate.sh"
  done
  printf '\n]}\n'
}
plan >"$dir/plan.json"
{
  echo '[run]'
  echo 'strikes = 3'
  [[ -n "$merge" ]] && printf '[merge]\n%s\n' "$merge"
} >"$dir/planwright.toml"

echo "tickets ${tickets}, agent ${agent} s, gate ${gate} s (${dist}), semantic pairs ${semantic}, flaky ${flaky}${merge:+, [merge] ${merge}}"
printf '%-5s %10s %10s %8s %12s %10s %9s %8s %9s %7s %10s\n' jobs wall bound ratio "gates/merge" merged/h rebuilds checks attempts flakes packed
for jobs in $jobs_list; do
  rm -rf "$dir/repo"
  make_repo "$dir/repo" 1
  mkdir "$dir/repo/m"
  touch "$dir/repo/m/.keep"
  git -C "$dir/repo" add m
  git -C "$dir/repo" -c user.name=bench -c user.email=bench@example.com commit -qm m
  "$bin" --config "$dir/planwright.toml" run "$dir/plan.json" --repo "$dir/repo" --jobs "$jobs" \
    --agent cmd --agent-cmd "sh $dir/agent-{ticket}.sh" >"$dir/out" 2>&1 || {
    cat "$dir/out" >&2
    exit 1
  }
  runs=("$dir"/repo/.planwright/runs/*)
  events="${runs[0]}/events.jsonl"
  wall=$(awk -F'"at_ms":' '/"event":"(run_started|merged)"/ {
      split($2, a, /[,}]/); if (!first) first = a[1]; if (/"merged"/) last = a[1] }
    END { print (last - first) / 1000 }' "$events")
  merged=$(grep -c '"event":"merged"' "$events" || true)
  bound=$(awk -v n="$tickets" -v j="$jobs" -v a="${agent_t[*]}" -v g="$gate" 'BEGIN {
    split(a, at, " "); w = 0
    for (i = 1; i <= n; i++) w += at[i] + g
    print w / j + g }')
  gate_runs=$(cat "${runs[0]}"/*/ticket.log | grep -c "^\\$ sh $dir/gate.sh" || true)
  rebuilds=$(grep -c '"event":"rebuild"' "$events" || true)
  checks=$(grep -c '"event":"batch_started"' "$events" || true)
  attempts=$(grep -c '"event":"attempt_started"' "$events" || true)
  # Gates that failed, then passed on the same tree: in a slot or on one
  # candidate's merged tree (`gate_retried`), or a stack's (`batch_verified`).
  flakes=$(grep -E '"event":"gate_retried".*"passed":true|"event":"batch_verified".*"flaky":true' "$events" | grep -c . || true)
  # With fixed times, attempts run in whole rounds of `jobs` slots: the
  # run cannot end before ceil(attempts / jobs) rounds and one gate.
  packed=$(awk -v n="$attempts" -v j="$jobs" -v a="$agent" -v g="$gate" -v d="$dist" 'BEGIN {
    if (d != "fixed") { print "-"; exit }
    r = int((n + j - 1) / j); printf "%.2f s", r * (a + g) + g }')
  printf '%-5s %8.2f s %8.2f s %7.2fx %12.2f %10.0f %9s %8s %9s %7s %10s\n' "$jobs" "$wall" "$bound" \
    "$(awk -v a="$wall" -v b="$bound" 'BEGIN { print a / b }')" \
    "$(awk -v r="$gate_runs" -v m="$merged" 'BEGIN { print (m ? r / m : 0) }')" \
    "$(awk -v m="$merged" -v w="$wall" 'BEGIN { print (w ? m * 3600 / w : 0) }')" \
    "$rebuilds" "$checks" "$attempts" "$flakes" "$packed"
  if ((merged < tickets)); then
    echo "bench: only ${merged} of ${tickets} merged at --jobs ${jobs}:" >&2
    tail -20 "$dir/out" >&2
  fi
done
