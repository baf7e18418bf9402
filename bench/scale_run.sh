# Sourced by bench/scale.sh (not run by itself) for RUN=N:
# what a ticket of a real run costs as the work tree grows (issue 53
# item 6). See scale.sh's header for the settings.

bin="$(planwright_bin)"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
# Gate checkouts live in the user's cache folder: this bench's go with it.
export XDG_CACHE_HOME="$dir/cache"
agent='sh -c "echo {ticket} > m/{ticket}.txt"'

# merge_times REPO: each merge's time in ms, from the run's event log.
merge_times() {
  local events=("$1"/.planwright/runs/*/events.jsonl)
  awk -F'"at_ms":' '/"event":"merged"/ { split($2, a, /[,}]/); print a[1] }' "${events[0]}"
}

# sampled LOG COMMAND...: runs COMMAND, writing every 50 ms a line "ms
# system-ms user-ms own-system-ms own-user-ms" to LOG: the time since the
# epoch, the CPU time of COMMAND and every process it has waited for, and
# of COMMAND's process alone.
sampled() {
  local log="$1" pid stat tick
  shift
  tick=$((1000 / $(getconf CLK_TCK)))
  "$@" >/dev/null 2>&1 &
  pid=$!
  while read -r stat 2>/dev/null <"/proc/$pid/stat"; do
    local f=(${stat##*) })
    [[ "${f[0]}" != Z ]] || break
    # utime, stime, cutime and cstime: fields 14 to 17 of the file.
    echo "$((${EPOCHREALTIME/./} / 1000)) $(((f[12] + f[14]) * tick)) $(((f[11] + f[13]) * tick)) $((f[12] * tick)) $((f[11] * tick))" >>"$log"
    read -rt 0.05 <> <(:) || true
  done
  wait "$pid" || true
}

# per_thousand N FILES: runs N tickets on a tree of FILES files and prints,
# for each thousand merges (each hundred when N is under 2,000; each STEP
# when STEP is set), the wall, system and user time a ticket.
per_thousand() {
  local n="$1" files="$2" step=1000
  ((n >= 2000)) || step=100
  if [[ -n "${STEP:-}" ]]; then
    counts STEP "$STEP" 100
    step="$STEP"
  fi
  [[ -n "${QUICK:-}" ]] && n=100 step=50
  run_repo "$dir/repo" "$files"
  create_plan "$n" >"$dir/plan.json"
  sync
  sampled "$dir/cpu" "$bin" run "$dir/plan.json" --repo "$dir/repo" --agent cmd --agent-cmd "$agent" --jobs 1
  merge_times "$dir/repo" >"$dir/merges"
  local got
  got=$(wc -l <"$dir/merges")
  if ((got != n)); then
    echo "bench: planwright merged $got of $n tickets" >&2
    exit 1
  fi
  echo "$n tickets each creating a file, --jobs 1, agent \`echo\`, gate \`true\`, from $files files; a ticket:"
  printf '%-14s %12s %10s %10s %10s\n' merges 'tree files' wall system user
  awk -v step="$step" -v files="$files" '
    function at(t, col,    k) { # CPU ms of column col at time t, between two samples
      for (k = 1; k < ns - 1 && st[k] < t; k++);
      if (st[k] == st[k - 1]) return c[col, k]
      return c[col, k - 1] + (c[col, k] - c[col, k - 1]) * (t - st[k - 1]) / (st[k] - st[k - 1])
    }
    BEGIN { ns = 0 }
    NR == FNR { st[ns] = $1; c[2, ns] = $2; c[3, ns++] = $3; next }
    { t[n++] = $1 }
    END {
      for (i = 0; i + step <= n; i += step) {
        a = (i ? t[i - 1] : st[0]); b = t[i + step - 1]
        printf "%6d-%-7d %12d %7.1f ms %7.1f ms %7.1f ms\n", i + 1, i + step, files + 1 + i + step,
          (b - a) / step, (at(b, 2) - at(a, 2)) / step, (at(b, 3) - at(a, 3)) / step
      }
    }' "$dir/cpu" "$dir/merges"
}

counts RUN "$RUN" 5000
files="${FILES:-3000}"
counts FILES "$files" 3000
[[ -n "${QUICK:-}" ]] && files=100
per_thousand "$RUN" "$files"
