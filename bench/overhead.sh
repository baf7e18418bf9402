#!/usr/bin/env bash
# Benchmark (not a test), issue 15 item 1: planwright's cost per ticket
# beside the floor of its design (`floor.sh`: the same git steps, agent and
# gate with plain git and a shell), on a repository of 3,000 files, with a
# trivial agent (`echo`) and gate (`true`), run side by side, at `--jobs 1`
# and `--jobs 2`; the git processes planwright starts per ticket; and, for
# runs of 200 tickets or more, how flat the cost stays: the time between
# the last 100 merges against the first 100, for planwright and the floor,
# and planwright's figure over the floor's: the growth that is its own.
#
# Each ticket creates a file (SHAPE=create, the default), so the repository
# grows by a file a ticket and every git step that reads the work tree costs
# a little more each time, the floor's too; or it appends to one of the
# 3,000 files (SHAPE=modify, at most 3,000 tickets), so the repository keeps
# its size and what grows is planwright's own: issue 15's flatness goal.
#
#   bash bench/overhead.sh                  # 200 tickets, jobs 1 and 2
#   TICKETS=2000 JOBS=1 bash bench/overhead.sh   # flatness over 2,000, growing
#   SHAPE=modify TICKETS=2000 JOBS=2 bash bench/overhead.sh   # on 3,000 files
#   QUICK=1 bash bench/overhead.sh          # 6 tickets: checks the script works
#   PLANWRIGHT=/path/to/planwright bash bench/overhead.sh
#
# FIRST=1 measures what the first ticket of a run costs (issue 53 item 5):
# 40 tickets (TICKETS), `--jobs 1`, SHAPE=modify, planwright and the floor
# each on a fresh repository, then each a second run of 40 other tickets on
# the repository its first run left, planwright keeping its workspace and
# gate checkout from the first run and the floor keeping its trees
# (FLOOR_KEEP in `floor.sh`). For each run: the whole run, the first
# ticket (from the command's start to its merge: preflight, the workspace
# and checkouts made, the ticket itself) and the others a ticket.
#
#   FIRST=1 bash bench/overhead.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
tickets="${TICKETS:-200}"
jobs_list="${JOBS:-1 2}"
counts TICKETS "$tickets" 2000
counts JOBS "$jobs_list" "1 2"
shape="${SHAPE:-create}"
first="${FIRST:-}"
if [[ -n "$first" ]]; then
  tickets="${TICKETS:-40}" jobs_list=1 shape="${SHAPE:-modify}"
fi
[[ -n "${QUICK:-}" ]] && tickets=6
case "$shape" in
create) ;;
modify) ((tickets <= 3000)) || { echo "bench: SHAPE=modify changes one of the 3,000 files a ticket, so TICKETS=${tickets} is too many; use TICKETS=3000 or fewer, or SHAPE=create" >&2; exit 2; } ;;
*) echo "bench: SHAPE=${shape} is not a shape; use SHAPE=create (a file a ticket, the default) or SHAPE=modify (one of the 3,000 files a ticket)" >&2; exit 2 ;;
esac
bin="$(planwright_bin)"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
# Gate checkouts live in the user's cache folder: this bench's go with it.
export XDG_CACHE_HOME="$dir/cache"

# A native plan of N independent tickets, numbered from FROM (0 unless
# given); ticket t<i> creates m/t<i>.txt (or, SHAPE=modify, changes
# src/f<i>.txt).
native_plan() {
  awk -v n="$1" -v from="${2:-0}" -v shape="$shape" 'BEGIN {
    printf "{\"planwright\":1,\"source_format\":\"native\",\"base\":\"main\","
    printf "\"gates\":[{\"name\":\"ok\",\"argv\":[\"true\"]}],\"tickets\":[\n"
    for (i = from; i < from + n; i++)
      if (shape == "modify")
        printf "%s{\"id\":\"t%d\",\"body\":\"Change src/f%d.txt.\",\"scope\":[{\"pattern\":\"src/f%d.txt\",\"op\":\"modify\"}]}", (i > from ? ",\n" : ""), i, i, i
      else
        printf "%s{\"id\":\"t%d\",\"body\":\"Create m/t%d.txt.\",\"scope\":[{\"pattern\":\"m/t%d.txt\",\"op\":\"create\"}]}", (i > from ? ",\n" : ""), i, i, i
    printf "\n]}\n"
  }'
}

# The repository of the run before is moved aside, not deleted, until the
# end: on a filesystem that will not reuse an inode for a while after it
# was deleted (ext4 without a journal, as on the machine of
# docs/performance.md), deleting tens of thousands of files makes every
# file the next run creates slower for minutes, and its first hundred
# tickets with it.
fresh_repo() {
  if [[ -e "$dir/repo" ]]; then
    olds=$((${olds:-0} + 1))
    mv "$dir/repo" "$dir/old-$olds"
  fi
  new_repo "$dir/repo"
}

# new_repo DIR: the repository of 3,000 files, with the `m/` folder.
new_repo() {
  make_repo "$1" 3000
  mkdir "$1/m"
  touch "$1/m/.keep"
  git -C "$1" add m
  git -C "$1" -c user.name=bench -c user.email=bench@example.com commit -qm m
}

agent='sh -c "echo {ticket} > m/{ticket}.txt"'
[[ "$shape" == modify ]] && agent='sh -c "echo $0 >> src/f${0#t}.txt" {ticket}'
run_planwright=("$bin" run "$dir/plan.json" --repo "$dir/repo" --agent cmd --agent-cmd "$agent")

# sampled LOG COMMAND...: time_ms, and while COMMAND runs, a line
# "microseconds-since-the-epoch CPU-milliseconds own-CPU-milliseconds"
# every 50 ms in LOG: the CPU time of COMMAND and of every process it has
# waited for, and of COMMAND's process alone. On a shared machine CPU time
# moves less with the load than the wall clock does.
sampled() {
  local log="$1" start pid stat status=0
  shift
  local tick=$((1000 / $(getconf CLK_TCK)))
  start=$(date +%s%N)
  "$@" >/dev/null 2>&1 &
  pid=$!
  while read -r stat 2>/dev/null <"/proc/$pid/stat"; do
    local f=(${stat##*) })
    [[ "${f[0]}" != Z ]] || break
    # utime, stime, cutime and cstime: fields 14 to 17 of the file.
    echo "${EPOCHREALTIME/./} $(((f[11] + f[12] + f[13] + f[14]) * tick)) $(((f[11] + f[12]) * tick))" >>"$log"
    read -rt 0.05 <> <(:) || true
  done
  wait "$pid" || status=$?
  took_ms "$start" "$status" "$@"
}

merged() { git -C "$dir/repo" log --oneline main | grep -c ' t[0-9]' || true; }

# Writes what the run before (or the fresh repository) left in memory to
# disk before the next is timed, so its writeback is not in the next
# run's time. (It does not undo the order effect docs/performance.md
# describes: the run that goes second still tends to look flatter.)
settle() { sync; }

# FIRST=1: the first ticket's cost, on fresh repositories and on kept ones.
# first_run WHO REPO FROM: runs planwright (WHO planwright) or the floor
# on REPO, tickets t<FROM>..., and prints the whole run, the first ticket
# (the command's start to the first merge) and the others a ticket, in ms.
first_run() {
  local who="$1" repo="$2" from="$3" start merges
  native_plan "$tickets" "$from" >"$dir/plan.json"
  sync
  start=$(date +%s%N)
  if [[ "$who" == planwright ]]; then
    "$bin" run "$dir/plan.json" --repo "$repo" --agent cmd --agent-cmd "$agent" --jobs 1 >/dev/null 2>&1 || true
    local events
    events=$(ls -t "$repo"/.planwright/runs/*/events.jsonl | head -1)
    # The same plan file is the same run, continued: its merges since `start`.
    merges=$(awk -F'"at_ms":' -v since="$((start / 1000000))" \
      '/"event":"merged"/ { split($2, a, /[,}]/); if (a[1] >= since) print a[1] }' "$events")
  else
    rm -f "$dir/floor-first.log"
    FLOOR_KEEP=1 FLOOR_FROM="$from" bash "$root/bench/floor.sh" "$repo" "$tickets" 1 "$shape" "$dir/floor-first.log"
    merges=$(awk '{ printf "%.0f\n", $1 / 1000 }' "$dir/floor-first.log")
  fi
  local end=$(($(date +%s%N) / 1000000))
  local n
  n=$(grep -c . <<<"$merges" || true)
  if ((n != tickets)); then
    echo "bench: $who merged $n of $tickets tickets on $repo" >&2
    exit 1
  fi
  awk -v start="$((start / 1000000))" -v end="$end" -v n="$n" '
    NR == 1 { first = $1 } { last = $1 }
    END { printf "%d %d %.1f\n", end - start, first - start, (last - first) / (n - 1) }' <<<"$merges"
}
first_ticket() {
  echo "$tickets independent tickets (each to $shape a file), --jobs 1, a repository of 3,000 files, agent \`echo\`, gate \`true\`;"
  echo "the first ticket from the command's start to its merge, the others from one merge to the next:"
  printf '%-32s %10s %10s %10s %10s %10s %10s %7s\n' run 'planwright' 'first' 'others' 'floor' 'first' 'others' ratio
  for what in pw floor; do
    new_repo "$dir/first-$what" >/dev/null
  done
  local pass from=0 label
  for pass in 1 2; do
    label="fresh repository"
    ((pass == 1)) || label="kept from the run before"
    read -r pw_all pw_first pw_rest < <(first_run planwright "$dir/first-pw" "$from")
    read -r fl_all fl_first fl_rest < <(first_run floor "$dir/first-floor" "$from")
    printf '%-32s %7d ms %7d ms %7.1f ms %7d ms %7d ms %7.1f ms %6.2fx\n' "$label" \
      "$pw_all" "$pw_first" "$pw_rest" "$fl_all" "$fl_first" "$fl_rest" \
      "$(awk -v a="$pw_all" -v b="$fl_all" 'BEGIN { print a / b }')"
    from=$((from + tickets))
  done
}
if [[ -n "$first" ]]; then
  first_ticket
  exit 0
fi

native_plan "$tickets" >"$dir/plan.json"
echo "$tickets independent tickets (each to $shape a file), a repository of 3,000 files, agent \`echo\`, gate \`true\`:"
printf '%-6s %12s %12s %8s %14s\n' jobs planwright floor ratio 'git per ticket'
for jobs in $jobs_list; do
  fresh_repo
  rm -f "$dir/cpu-planwright" "$dir/cpu-floor"
  settle
  pw=$(sampled "$dir/cpu-planwright" "${run_planwright[@]}" --jobs "$jobs")
  n=$(merged)
  if ((n != tickets)); then
    echo "bench: planwright merged $n of $tickets tickets" >&2
    exit 1
  fi
  events=("$dir"/repo/.planwright/runs/*/events.jsonl)
  cp "${events[0]}" "$dir/events-$jobs.jsonl"
  fresh_repo
  rm -f "$dir/floor-$jobs.log"
  settle
  fl=$(sampled "$dir/cpu-floor" bash "$root/bench/floor.sh" "$dir/repo" "$tickets" "$jobs" "$shape" "$dir/floor-$jobs.log")
  ((fl > 0)) || fl=1
  # The git processes, counted in a run of at most 50 tickets through a
  # wrapper (which slows them, so it is not timed).
  counted=$((tickets < 50 ? tickets : 50))
  native_plan "$counted" >"$dir/plan.json"
  fresh_repo
  mkdir -p "$dir/wrap"
  printf '#!/bin/sh\necho >>"%s/git.count"\nexec %s "$@"\n' "$dir" "$(command -v git)" >"$dir/wrap/git"
  chmod +x "$dir/wrap/git"
  : >"$dir/git.count"
  PATH="$dir/wrap:$PATH" time_ms "${run_planwright[@]}" --jobs "$jobs" >/dev/null
  native_plan "$tickets" >"$dir/plan.json"
  git_per=$(awk -v c="$(wc -l <"$dir/git.count")" -v n="$counted" 'BEGIN { printf "%.1f", c / n }')
  printf '%-6s %9.1f ms %9.1f ms %7.2fx %14s\n' "$jobs" \
    "$(awk -v t="$pw" -v n="$tickets" 'BEGIN { print t / n }')" \
    "$(awk -v t="$fl" -v n="$tickets" 'BEGIN { print t / n }')" \
    "$(awk -v a="$pw" -v b="$fl" 'BEGIN { print a / b }')" "$git_per"
done

# Flatness: milliseconds between merge 1 and merge 100, and between the
# last 100 merges, from the event log of the last planwright run and the
# merge times the floor logged in its run; and the CPU time each spent over
# the same stretches (from the samples `sampled` took), all of it and its
# own process's alone: planwright's own work without the git, agent and
# gate processes it waits for.
# Every hundredth merge is listed too: on a shared machine a burst of load
# shows as one slow hundred, a cost that grows as a slope. So is the median
# time from one merge to the next within the first and the last 100, which
# a burst that stalls a few tickets barely moves.
flatness() { # flatness WHO CPU-SAMPLES: reads merge times in milliseconds, one a line
  awk -v who="$1" -v jobs="$jobs" -v growth="$dir/growth-$1" '
    function median(from,    i, j, v, m) { # of t[from+1]-t[from] .. t[from+99]-t[from+98]
      for (i = 0; i < 99; i++) {
        v = t[from + i + 1] - t[from + i]
        for (j = i; j > 0 && m[j - 1] > v; j--) m[j] = m[j - 1]
        m[j] = v
      }
      return m[49]
    }
    function cpu(at, sc,    k) { # CPU milliseconds (of samples `sc`) at time `at`, between two samples
      for (k = 1; k < ns - 1 && st[k] < at; k++);
      if (st[k] == st[k - 1]) return sc[k]
      return sc[k - 1] + (sc[k] - sc[k - 1]) * (at - st[k - 1]) / (st[k] - st[k - 1])
    }
    function stretches(what, sc,    cf, cl) { # CPU time over the first and the last 100 merges
      cf = cpu(t[99], sc) - cpu(t[0], sc); cl = cpu(t[n - 1], sc) - cpu(t[n - 100], sc)
      printf "  %s: first 100 %d ms, last 100 %d ms: %.2fx\n", what, cf, cl, cl / (cf ? cf : 1)
    }
    NR == FNR { st[ns] = $1 / 1000; all[ns] = $2; own[ns++] = $3; next }
    { t[n++] = $1 }
    END {
      first = t[99] - t[0]; last = t[n - 1] - t[n - 100]
      printf "flatness of %-10s (jobs %s): first 100 merges %6d ms, last 100 %6d ms: %.2fx\n", who, jobs, first, last, last / first
      printf "%.4f\n", last / first > growth
      mf = median(0); ml = median(n - 100)
      printf "  median between two merges: first 100 %.1f ms, last 100 %.1f ms: %.2fx\n", mf, ml, ml / mf
      stretches("CPU time", all)
      stretches("CPU time of its own process, without its children", own)
      printf "  seconds per 100 merges:"
      for (i = 100; i < n; i += 100) printf " %.1f", (t[i] - t[i - 100]) / 1000
      printf "\n"
    }' "$2" -
}
if ((tickets >= 200)); then
  awk -F'"at_ms":' '/"event":"merged"/ { split($2, a, /[,}]/); print a[1] }' "$dir/events-$jobs.jsonl" |
    flatness planwright "$dir/cpu-planwright"
  awk '{ printf "%.0f\n", $1 / 1000 }' "$dir/floor-$jobs.log" | flatness floor "$dir/cpu-floor"
  # What the repository's growth costs git shows in the floor's figure;
  # planwright's over the floor's is the growth that is planwright's own.
  awk -v p="$(cat "$dir/growth-planwright")" -v f="$(cat "$dir/growth-floor")" \
    'BEGIN { printf "growth of planwright beyond the floor'"'"'s: %.2fx / %.2fx = %.2fx\n", p, f, p / f }'
fi
