#!/usr/bin/env bash
# Benchmark (not a test), issue 53 item 6: what the git steps of a ticket
# cost the kernel (system time) and git itself (user time) as the work tree
# grows, since a run whose tickets each add a file spends more per ticket
# the longer it runs. Each step runs REPS times on an unchanged work tree
# of FILES files (the steps of `overhead.sh`'s floor that read the tree,
# and `status` for comparison), timed by GNU `/usr/bin/time`, whose CPU
# figures the load of a shared machine moves less than the wall clock.
#
#   bash bench/tree_ops.sh                      # 3,000 and 13,000 files
#   FILES="3000 6000 13000" REPS=50 bash bench/tree_ops.sh
#   QUICK=1 bash bench/tree_ops.sh              # 100 files: checks the script works
set -euo pipefail
source "$(dirname "$0")/lib.sh"
sizes="${FILES:-3000 13000}"
reps="${REPS:-20}"
counts FILES "$sizes" "3000 13000"
counts REPS "$reps" 20
[[ -n "${QUICK:-}" ]] && sizes=100 && reps=2
if [[ ! -x /usr/bin/time ]]; then
  echo "bench: GNU time (/usr/bin/time) is needed for CPU times; install it (Debian: apt-get install time)" >&2
  exit 2
fi
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
steps=(
  "add -A"
  "clean -fdq -e !.gitignore"
  "read-tree -m -u HEAD"
  "write-tree"
  "status --porcelain"
)
printf '%7s  %-28s %10s %10s\n' files step 'sys/call' 'user/call'
for n in $sizes; do
  repo="$dir/repo-$n"
  make_repo "$repo" "$n"
  for step in "${steps[@]}"; do
    read -ra argv <<<"$step"
    /usr/bin/time -f '%S %U' -o "$dir/cpu" bash -c '
      repo="$1" reps="$2"; shift 2
      for ((i = 0; i < reps; i++)); do git -C "$repo" "$@" >/dev/null; done' _ "$repo" "$reps" "${argv[@]}"
    read -r sys user <"$dir/cpu"
    printf '%7d  %-28s %7.1f ms %7.1f ms\n' "$n" "$step" \
      "$(awk -v s="$sys" -v r="$reps" 'BEGIN { print s * 1000 / r }')" \
      "$(awk -v s="$user" -v r="$reps" 'BEGIN { print s * 1000 / r }')"
  done
done
