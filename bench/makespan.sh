#!/usr/bin/env bash
# Benchmark (not a test), issue 15 item 4: the makespan of a 20-ticket DAG
# whose agents take fixed times, against its lower bound
# max(critical path, work / jobs), at `--jobs 2` and `--jobs 4`, with
# `estimate_minutes` on every ticket and without any.
#
#   bash bench/makespan.sh             # ticket times of 2 to 12 s: about 4 minutes
#   TIMES=uniform bash bench/makespan.sh   # every ticket 6 s
#   SCALE=0.5 bash bench/makespan.sh   # times halved
#   QUICK=1 bash bench/makespan.sh     # times of 0.2 to 1.2 s: checks the script works
#   PLANWRIGHT=/path/to/planwright bash bench/makespan.sh
#
# The makespan runs from the first attempt's start to the last merge (the
# event log's times); the bound counts the agents' times only, so what is
# above it is planwright's own cost and its scheduling. The "order" column
# tells them apart: the makespan of the order the run chose, with no cost
# of planwright's own.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
scale="${SCALE:-1}"
[[ -n "${QUICK:-}" ]] && scale=0.1
if [[ ! "$scale" =~ ^[0-9]*\.?[0-9]+$ ]] || ! awk -v s="$scale" 'BEGIN { exit !(s > 0) }'; then
  echo "bench: SCALE=\"${scale}\" is not a factor above zero; use a number such as SCALE=0.5 (times halved)" >&2
  exit 2
fi
bin="$(planwright_bin)"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT

# The DAG (fixed, so runs compare): ticket i takes times[i] seconds and
# depends on the tickets listed in deps[i]. Its critical path is
# t0 t2 t6 t11 t15 t19 (2+9+4+10+7+6 = 38 s) and its work 120 s.
times=(2 3 9 2 5 4 4 8 6 3 7 10 4 9 5 7 3 12 11 6)
# TIMES=uniform: every ticket takes the mean, 6 s (critical path 36 s):
# agents of one fixed duration, where estimates have nothing to add.
case "${TIMES:-mixed}" in
  mixed) ;;
  uniform) times=(6 6 6 6 6 6 6 6 6 6 6 6 6 6 6 6 6 6 6 6) ;;
  *)
    echo "bench: TIMES=${TIMES} is not a set of times; use TIMES=mixed (2 to 12 s, the default) or TIMES=uniform (every ticket 6 s)" >&2
    exit 2
    ;;
esac
deps=("" "" "0" "0" "1" "1" "2" "3" "4" "5" "6" "6 7" "8" "9" "10" "11" "12 13" "13" "14" "15 16")

plan() { # plan with|without: the native plan, with or without estimates
  {
    printf '{"planwright":1,"source_format":"native","base":"main",'
    printf '"gates":[{"name":"ok","argv":["true"]}],"tickets":[\n'
    for i in "${!times[@]}"; do
      local d="" est=""
      for j in ${deps[$i]}; do d="$d${d:+,}\"t$j\""; done
      # An estimate in minutes; the scheduler only compares them.
      [[ "$1" == with ]] && est=",\"estimate_minutes\":${times[$i]}"
      printf '%s{"id":"t%d","body":"Take %d s.","scope":[{"pattern":"m/t%d.txt","op":"create"}],"depends_on":[%s]%s}' \
        "$([[ $i -gt 0 ]] && echo ,)" "$i" "${times[$i]}" "$i" "$d" "$est"
    done
    printf '\n]}\n'
  } >"$dir/plan-$1.json"
}

# The agent: sleeps its ticket's time, then writes its file. A script per
# ticket with its time written in, so the agent starts no process beyond
# `sh` and `sleep` (the bound counts the sleeps only: what the agent spends
# around them would count as planwright's).
for i in "${!times[@]}"; do
  printf 'sleep %s\necho t%d > m/t%d.txt\n' \
    "$(awk -v t="${times[$i]}" -v s="$scale" 'BEGIN { print t * s }')" "$i" "$i" >"$dir/agent-t$i.sh"
done

# The lower bound, in seconds: max(longest path, work / jobs).
bound() {
  awk -v jobs="$1" -v s="$scale" -v times="${times[*]}" -v deps="$(printf '%s;' "${deps[@]}")" 'BEGIN {
    n = split(times, t, " "); split(deps, d, ";"); work = 0; cp = 0
    for (i = 1; i <= n; i++) {
      finish[i] = t[i]; k = split(d[i], ds, " ")
      for (j = 1; j <= k; j++) if (finish[ds[j] + 1] + t[i] > finish[i]) finish[i] = finish[ds[j] + 1] + t[i]
      if (finish[i] > cp) cp = finish[i]; work += t[i]
    }
    b = work / jobs; if (cp > b) b = cp; print b * s
  }'
}

# The order's own makespan, in seconds: the run replayed over the ticket
# times with nothing of planwright's own, each slot taking, when it is
# free, the first ticket of the order (the order the run started them in)
# whose dependencies have finished. The rest of the makespan is
# planwright's own time.
order_span() { # order_span JOBS EVENTS
  awk -F'"ticket":"t' -v jobs="$1" -v s="$scale" -v times="${times[*]}" -v deps="$(printf '%s;' "${deps[@]}")" '
    # A ticket started again (a retry) keeps its first place.
    /"event":"attempt_started"/ { split($2, a, "\""); i = a[1] + 1; if (!(i in fin)) { o[++n] = i; fin[i] = -1 } }
    END {
      split(times, t, " "); split(deps, d, ";")
      now = 0; busy = 0; done = 0; span = 0
      while (done < n) {
        for (k = 1; k <= n && busy < jobs; k++) {
          i = o[k]; if (fin[i] != -1) continue
          ok = 1; m = split(d[i], ds, " ")
          for (j = 1; j <= m; j++) { f = fin[ds[j] + 1]; if (f == -1 || f > now) ok = 0 }
          if (ok) { fin[i] = now + t[i] * s; busy++; done++; if (fin[i] > span) span = fin[i] }
        }
        next_t = -1
        for (k = 1; k <= n; k++) { f = fin[o[k]]; if (f > now && (next_t == -1 || f < next_t)) next_t = f }
        if (next_t == -1) break
        now = next_t; busy = 0
        for (i in fin) if (fin[i] > now) busy++
      }
      print span
    }' "$2"
}

printf '%-5s %-10s %10s %10s %10s %8s %9s\n' jobs estimates makespan order bound ratio attempts
for jobs in 2 4; do
  for est in with without; do
    plan "$est"
    rm -rf "$dir/repo"
    make_repo "$dir/repo" 10
    mkdir "$dir/repo/m"
    touch "$dir/repo/m/.keep"
    git -C "$dir/repo" add m
    git -C "$dir/repo" -c user.name=bench -c user.email=bench@example.com commit -qm m
    "$bin" run "$dir/plan-$est.json" --repo "$dir/repo" --jobs "$jobs" --agent cmd \
      --agent-cmd "sh $dir/agent-{ticket}.sh" >"$dir/out" 2>&1 || {
      cat "$dir/out" >&2
      exit 1
    }
    events=("$dir"/repo/.planwright/runs/*/events.jsonl)
    span=$(awk -F'"at_ms":' '/"event":"(attempt_started|merged)"/ {
        split($2, a, /[,}]/); if (!first) first = a[1]; last = a[1] }
      END { print (last - first) / 1000 }' "${events[0]}")
    b=$(bound "$jobs")
    # More attempts than tickets: one was retried or its pool paused (the
    # run's events say why), and the makespan measures that, not the order.
    attempts=$(grep -c '"event":"attempt_started"' "${events[0]}")
    printf '%-5s %-10s %8.2f s %8.2f s %8.2f s %7.3fx %9s\n' "$jobs" "$est" "$span" \
      "$(order_span "$jobs" "${events[0]}")" "$b" \
      "$(awk -v a="$span" -v b="$b" 'BEGIN { print a / b }')" "$attempts"
    if ((attempts > ${#times[@]})); then
      grep -v '"event":"\(phase\|attempt_started\|agent_reported\|merging\|merged\)"' "${events[0]}" >&2
    fi
  done
done
