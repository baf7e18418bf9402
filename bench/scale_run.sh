# Sourced by bench/scale.sh (not run by itself) for RUN=N and CALLS=1:
# what a ticket of a real run costs as the work tree grows (issue 53
# item 6). See scale.sh's header for the settings.

if [[ ! -x /usr/bin/time && -n "${CALLS:-}" ]]; then
  echo "bench: GNU time (/usr/bin/time) is needed for CALLS=1; install it (Debian: apt-get install time)" >&2
  exit 2
fi
bin="$(planwright_bin)"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
# Gate checkouts live in the user's cache folder: this bench's go with it.
export XDG_CACHE_HOME="$dir/cache"
agent='sh -c "echo {ticket} > m/{ticket}.txt"'

# run_repo DIR FILES: a repository of FILES files in `src/`, and `m/`.
run_repo() {
  make_repo "$1" "$2"
  mkdir "$1/m"
  touch "$1/m/.keep"
  git -C "$1" add m
  git -C "$1" -c user.name=bench -c user.email=bench@example.com commit -qm m
}

# create_plan N: N independent tickets, ticket t<i> creating m/t<i>.txt.
create_plan() {
  awk -v n="$1" 'BEGIN {
    printf "{\"planwright\":1,\"source_format\":\"native\",\"base\":\"main\","
    printf "\"gates\":[{\"name\":\"ok\",\"argv\":[\"true\"]}],\"tickets\":[\n"
    for (i = 0; i < n; i++)
      printf "%s{\"id\":\"t%d\",\"body\":\"Create m/t%d.txt.\",\"scope\":[{\"pattern\":\"m/t%d.txt\",\"op\":\"create\"}]}", (i ? ",\n" : ""), i, i, i
    printf "\n]}\n"
  }'
}

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

# per_thousand N: runs N tickets and prints, for each thousand merges,
# the wall, system and user time a ticket.
per_thousand() {
  local n="$1" step=1000
  [[ -n "${QUICK:-}" ]] && n=100 step=50
  run_repo "$dir/repo" 3000
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
  echo "$n tickets each creating a file, --jobs 1, agent \`echo\`, gate \`true\`, from 3,000 files; a ticket:"
  printf '%-14s %12s %10s %10s %10s\n' merges 'tree files' wall system user
  awk -v step="$step" '
    function at(t, col,    k) { # CPU ms of column col at time t, between two samples
      for (k = 1; k < ns - 1 && st[k] < t; k++);
      if (st[k] == st[k - 1]) return c[col, k]
      return c[col, k - 1] + (c[col, k] - c[col, k - 1]) * (t - st[k - 1]) / (st[k] - st[k - 1])
    }
    NR == FNR { st[ns] = $1; c[2, ns] = $2; c[3, ns++] = $3; next }
    { t[n++] = $1 }
    END {
      for (i = 0; i + step <= n; i += step) {
        a = (i ? t[i - 1] : st[0]); b = t[i + step - 1]
        printf "%6d-%-7d %12d %7.1f ms %7.1f ms %7.1f ms\n", i + 1, i + step, 3001 + i + step,
          (b - a) / step, (at(b, 2) - at(a, 2)) / step, (at(b, 3) - at(a, 3)) / step
      }
    }' "$dir/cpu" "$dir/merges"
}

# by_call FILES: 50 tickets on a tree of FILES files, every git process
# timed; prints each git command's system and user time a ticket, and
# planwright's own process's.
by_call() {
  local files="$1" tickets=50 real
  [[ -n "${QUICK:-}" ]] && tickets=5
  real="$(command -v git)"
  rm -rf "$dir/repo" "$dir/cpu" "$dir/calls" "$dir/cache"
  run_repo "$dir/repo" "$files"
  create_plan "$tickets" >"$dir/plan.json"
  mkdir -p "$dir/wrap"
  # The command and its options, and which work tree: a gate checkout's
  # path holds `checkouts`, a workspace's `workspaces`.
  cat >"$dir/wrap/git" <<EOF
#!/bin/sh
where=other
label=
for a in "\$@"; do
  case "\$a" in
  --work-tree=*checkouts*) where=checkout ;;
  --work-tree=*workspaces*) where=workspace ;;
  esac
done
skip=
for a in "\$@"; do
  if [ -n "\$skip" ]; then skip=; continue; fi
  case "\$a" in
  -c|-C) [ -z "\$label" ] && skip=1 ;;
  --*=*) ;;
  -*) [ -n "\$label" ] && label="\$label \$a" ;;
  *) [ -z "\$label" ] && label="\$a" ;;
  esac
done
t=\$(mktemp)
/usr/bin/time -f '%S %U' -o "\$t" "$real" "\$@"
s=\$?
echo "\$(cat "\$t") \$where \$label" >>"$dir/calls"
rm -f "\$t"
exit \$s
EOF
  chmod +x "$dir/wrap/git"
  sync
  PATH="$dir/wrap:$PATH" sampled "$dir/cpu" \
    "$bin" run "$dir/plan.json" --repo "$dir/repo" --agent cmd --agent-cmd "$agent" --jobs 1
  echo "$files files, $tickets tickets each creating a file (git timed through a wrapper), a ticket:"
  printf '  %-44s %8s %10s %10s\n' 'git command (work tree)' calls system user
  awk -v n="$tickets" '{
      key = $4; for (i = 5; i <= NF; i++) key = key " " $i; key = key " (" $3 ")"
      s[key] += $1; u[key] += $2; c[key]++; ts += $1; tu += $2
    }
    END {
      for (k in s) printf "  %-44s %8.1f %7.2f ms %7.2f ms\n", k, c[k] / n, s[k] * 1000 / n, u[k] * 1000 / n | "sort -k1,1"
      close("sort -k1,1")
      printf "  %-44s %8s %7.2f ms %7.2f ms\n", "all git", "", ts * 1000 / n, tu * 1000 / n
    }' "$dir/calls"
  # The last sample: the wrapper's shells are among the children, so only
  # planwright's own process is told apart from them.
  tail -1 "$dir/cpu" | awk -v n="$tickets" '{
      printf "  %-44s %8s %7.2f ms %7.2f ms\n", "planwright'"'"'s own process", "", $4 / n, $5 / n }'
}

if [[ -n "${CALLS:-}" ]]; then
  files="${FILES:-3000 13000}"
  counts FILES "$files" "3000 13000"
  [[ -n "${QUICK:-}" ]] && files=100
  for f in $files; do by_call "$f"; done
else
  counts RUN "$RUN" 5000
  per_thousand "$RUN"
fi
