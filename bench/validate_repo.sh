#!/usr/bin/env bash
# Benchmark (not a test), issue 15 item 3: `planwright validate --repo` of
# 1,000 codeboost plans (copies of examples/codeboost/plan.json) that all
# name one repository of 3,000 files, in one process; and the same plans
# without `--repo`, which is the floor the tree check adds to.
#
#   bash bench/validate_repo.sh            # 1,000 plans
#   QUICK=1 bash bench/validate_repo.sh    # 20 plans: checks the script works
#   PLANWRIGHT=/path/to/planwright bash bench/validate_repo.sh
#   AJV=/path/to/node_modules/.bin/ajv bash bench/validate_repo.sh
#
# With AJV set (`npm install ajv-cli@5` in a scratch directory gives one),
# ajv-cli's schema-only pass over the same plans, with the schema
# `planwright schema codeboost` prints, is timed beside them.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
plans="${PLANS:-1000}"
counts PLANS "$plans" 1000
bin="$(planwright_bin)"
[[ -n "${QUICK:-}" ]] && plans=20
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
make_repo "$dir/repo" 3000
mkdir "$dir/plans"
cp "$root/examples/codeboost/planwright.toml" "$dir/plans/"
for ((i = 0; i < plans; i++)); do
  cp "$root/examples/codeboost/plan.json" "$dir/plans/p$i.json"
done
files=("$dir"/plans/p*.json)
without=$(time_ms "$bin" validate "${files[@]}")
with=$(time_ms "$bin" validate --repo "$dir/repo" "${files[@]}")
((without > 0)) || without=1
echo "$plans codeboost plans, one repository of 3,000 files:"
echo "  validate:        $without ms"
echo "  validate --repo: $with ms ($(awk -v a="$with" -v b="$without" 'BEGIN { printf "%.1fx", a / b }') of validate)"
if [[ -n "${AJV:-}" ]]; then
  "$bin" schema codeboost >"$dir/codeboost.schema.json"
  ajv=$(time_ms "$AJV" validate --spec=draft2020 -s "$dir/codeboost.schema.json" -d "$dir/plans/p*.json")
  echo "  ajv-cli validate (schema only): $ajv ms (validate --repo is $(awk -v a="$with" -v b="$ajv" 'BEGIN { printf "%.2fx", a / b }') of it)"
fi
