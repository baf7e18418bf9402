#!/usr/bin/env bash
# Benchmark (not a test), issue 35: what running attempts in `planwright
# worker`s costs. The same plan of N independent tickets (a trivial agent,
# `echo`, and gate, `true`) on a repository of FILES files, run with the
# local executor and with `[executor] kind = "process"`, at `--jobs 1`:
# milliseconds a ticket each way; and the bytes each attempt's connection
# carried, both ways, for the first attempt on a cold worker cache (the
# whole base goes over) and for the later ones on a warm cache (only what
# the merges added).
#
#   bash bench/workers.sh                 # 50 tickets on 3,000 files
#   TICKETS=200 FILES=10000 bash bench/workers.sh
#   QUICK=1 bash bench/workers.sh         # 4 tickets: checks the script works
#   PLANWRIGHT=/path/to/planwright bash bench/workers.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
tickets="${TICKETS:-50}"
files="${FILES:-3000}"
counts TICKETS "$tickets" 50
counts FILES "$files" 3000
if [[ -n "${QUICK:-}" ]]; then
  tickets=4
  files=100
fi
bin="$(planwright_bin)"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT

plan() { create_plan "$tickets" >"$dir/plan.json"; }

# The worker, its connection's bytes counted: what the coordinator sent
# (in-N) and what the worker answered (out-N), N the connection's number
# (preflight's greeting is the first).
cat >"$dir/counting-worker.sh" <<EOF
#!/bin/sh
n=\$(ls "$dir/bytes" | grep -c '^in-' || true)
n=\$((n + 1))
tee "$dir/bytes/in-\$n" | "$bin" worker --cache "$dir/cache" | tee "$dir/bytes/out-\$n"
EOF

fresh_repo() {
  rm -rf "$dir/repo"
  run_repo "$dir/repo" "$files"
}

agent='sh -c "echo {ticket} > m/{ticket}.txt"'
run() {
  time_ms "$bin" run "$dir/plan.json" --repo "$dir/repo" --jobs 1 --agent cmd --agent-cmd "$agent" "$@"
}

plan
fresh_repo
local_ms=$(run)
fresh_repo
rm -rf "$dir/cache" "$dir/bytes"
mkdir -p "$dir/bytes"
printf '[executor]\nkind = "process"\ncommand = ["sh", "%s"]\n' "$dir/counting-worker.sh" >"$dir/workers.toml"
process_ms=$(run --config "$dir/workers.toml")
merged=$(git -C "$dir/repo" rev-list --count main)
if ((merged != tickets + 2)); then
  echo "bench: the run through workers merged $((merged - 2)) of $tickets tickets" >&2
  exit 1
fi

size() { wc -c <"$1" | tr -d ' '; }
# Connection 1 is preflight's greeting, 2 the first attempt, the rest later ones.
first_in=$(size "$dir/bytes/in-2")
first_out=$(size "$dir/bytes/out-2")
later_in=0
later_out=0
later=0
for f in "$dir"/bytes/in-*; do
  n=${f##*-}
  ((n > 2)) || continue
  later_in=$((later_in + $(size "$f")))
  later_out=$((later_out + $(size "$dir/bytes/out-$n")))
  later=$((later + 1))
done

echo "workers: $tickets tickets, $files files, --jobs 1, $(date -u +%F)"
echo "  local:   ${local_ms} ms, $((local_ms / tickets)) ms a ticket"
echo "  process: ${process_ms} ms, $((process_ms / tickets)) ms a ticket ($((process_ms - local_ms)) ms more in all)"
echo "  first attempt (cold cache): ${first_in} bytes to the worker, ${first_out} back"
if ((later > 0)); then
  echo "  later attempts (warm cache): $((later_in / later)) bytes to the worker, $((later_out / later)) back, on average over $later"
fi
