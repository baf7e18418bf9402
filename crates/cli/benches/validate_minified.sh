#!/usr/bin/env bash
# Benchmark (not a test): `planwright validate` of a minified, one-line agb
# plan of 2,000 tickets whose scopes overlap in groups of ten (200
# `plan.scope.overlap` warnings, one per group), with human output. Each warning shows a
# window of the one long line, never the whole line (issue 13); this used
# to take minutes and gigabytes.
#
#   bash crates/cli/benches/validate_minified.sh [TICKETS]
set -euo pipefail
cd "$(dirname "$0")/../../.."
n="${1:-2000}"
cargo build --release --quiet -p planwright
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
plan="$dir/plan.json"
{
  printf '{"repo":"/srv/app","base":"main","gate":{"test":"npm test"},"tickets":['
  for ((i = 0; i < n; i++)); do
    ((i > 0)) && printf ','
    printf '{"id":"T%d","title":"ticket %d","body":"Change module %d.","scope":["src/m%d/**","src/m%d/t%d.rs"]}' \
      "$i" "$i" "$((i / 10))" "$((i / 10))" "$((i / 10))" "$i"
  done
  printf ']}'
} >"$plan"
echo "plan: $(wc -c <"$plan") bytes on one line, $n tickets"
start=$(date +%s.%N)
./target/release/planwright validate "$plan" >"$dir/out.txt" || true
end=$(date +%s.%N)
echo "validate: $(echo "$end - $start" | bc) s, $(wc -c <"$dir/out.txt") bytes of output, $(grep -c '^warning\[plan.scope.overlap\]' "$dir/out.txt") overlap warnings"
