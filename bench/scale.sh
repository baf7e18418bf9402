#!/usr/bin/env bash
# Benchmark (not a test), issue 15 item 2: `validate`, `run --dry-run` and
# `preflight` of generated agb plans of 1,000 and 10,000 tickets, shaped as
# a chain, layers and independent tickets, with the ratio of dry-run and
# preflight to validate (the goal: within 3x at every size).
#
#   bash bench/scale.sh               # 1,000 and 10,000 tickets
#   QUICK=1 bash bench/scale.sh       # 100 tickets: checks the script works
#   SIZES="2000 4000" bash bench/scale.sh
#   PLANWRIGHT=/path/to/planwright bash bench/scale.sh   # another binary
#
# RUN=N (issue 53 item 6) runs N independent tickets instead, each creating
# one file (`m/t<i>.txt`), agent `echo`, gate `true`, `--jobs 1`, on a
# repository of FILES files (default 3,000), so that the work tree grows
# from FILES files to FILES + N; it prints, for each thousand merges (each
# hundred under 2,000 tickets), the wall time and the system and user CPU
# time of planwright and every process it waited for (git, the agent and
# the gate; sampled from `/proc` every 50 ms), a ticket.
#
#   RUN=5000 bash bench/scale.sh              # per thousand, 3,000 to 8,000 files
#   FILES=13000 RUN=500 bash bench/scale.sh   # per hundred, from 13,000 files
#   RUN=2000 STEP=200 bash bench/scale.sh     # per two hundred
#   QUICK=1 RUN=1 bash bench/scale.sh         # 100 tickets: checks the mode works
set -euo pipefail
source "$(dirname "$0")/lib.sh"
if [[ -n "${RUN:-}" ]]; then
  source "$(dirname "$0")/scale_run.sh"
  exit 0
fi
sizes="${SIZES:-1000 10000}"
counts SIZES "$sizes" "1000 10000"
bin="$(planwright_bin)"
[[ -n "${QUICK:-}" ]] && sizes=100
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
make_repo "$dir/repo" 10
printf '%-12s %7s %10s %10s %10s %8s %8s\n' shape tickets validate dry-run preflight dry/val pre/val
for n in $sizes; do
  for shape in chain layers independent; do
    plan="$dir/$shape-$n.json"
    agb_plan "$shape" "$n" >"$plan"
    v=$(time_ms "$bin" validate "$plan")
    d=$(time_ms "$bin" run --dry-run --agent cmd --agent-cmd true --repo "$dir/repo" "$plan")
    p=$(time_ms "$bin" preflight --agent cmd --agent-cmd true --repo "$dir/repo" "$plan")
    ((v > 0)) || v=1
    printf '%-12s %7d %8d ms %7d ms %7d ms %8s %8s\n' "$shape" "$n" "$v" "$d" "$p" \
      "$(awk -v a="$d" -v b="$v" 'BEGIN { printf "%.1fx", a / b }')" \
      "$(awk -v a="$p" -v b="$v" 'BEGIN { printf "%.1fx", a / b }')"
  done
done
