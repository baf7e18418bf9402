#!/usr/bin/env bash
# Benchmark (not a test), issue 53 item 2: real history replayed. Three
# public projects of different stacks, each a range of 50 or more
# first-parent commits with its own test suite as the gate, replayed with
# `planwright replay` at each `--deps` and `--jobs`, and a naive baseline:
# the same commits done side by side from the range's base and merged in
# the order their agents finished, without a gate on what they merge into
# (how often the branch would have gone red).
#
#   bash bench/replay.sh setup                   # once: clone the sources, install the suites' dependencies
#   bash bench/replay.sh                         # every project, --deps none files chain, --jobs 1 4 8
#   PROJECTS=cookie DEPS=none JOBS=8 bash bench/replay.sh
#   AGENT_TIME=30s+0.5s/line bash bench/replay.sh   # the agent's time per commit (default 2s+0.02s/line)
#   NAIVE=0 bash bench/replay.sh                 # without the naive baseline
#   QUICK=1 bash bench/replay.sh                 # a made-up history of 6 commits: checks the script works
#
# Nothing is fetched when the rows run. `setup` clones each project once,
# from the path in $SOURCES/<owner>+<name>/repo (a git mirror; default
# /work/.mirror) when it is there, else from its URL, and installs what its
# suite needs from the package registries into $WORK (default
# /var/tmp/planwright-replay-bench): npm packages for the Node library, a
# virtual environment for the Python package, the crates index for the
# Rust crate (into the user's cargo home, which its gate reads offline).
#
# Each row prints the figures `planwright replay --output json` gives;
# `chain` at --jobs 1 is the serial baseline. The agent's tokens are
# modelled at TOKENS_PER_LINE (default 40) per changed line, priced as
# claude-sonnet-4-6.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
work="${WORK:-/var/tmp/planwright-replay-bench}"
sources="${SOURCES:-/work/.mirror}"
agent_time="${AGENT_TIME:-2s+0.02s/line}"
tokens="${TOKENS_PER_LINE:-40}"
deps_list="${DEPS:-none files chain}"
jobs_list="${JOBS:-1 4 8}"
projects="${PROJECTS:-cookie structlog itoa}"
naive="${NAIVE:-1}"
counts JOBS "$jobs_list" "1 4 8"

# name | repository | range | gate (run by `sh -c` in the checkout)
project() {
  case "$1" in
  cookie)
    # The Node library: jshttp/cookie's last 57 commits on mocha, before
    # its move to TypeScript (0.5.0 to 0.7.1).
    echo "jshttp/cookie|e5de9f653118a603ccc450a05f1f82119d1f6bfc..bc38ffd0eae716b199236dda061d0bdc74192dd3|ln -sfn $work/deps/cookie/node_modules node_modules && exec npm test"
    ;;
  structlog)
    # The Python package: hynek/structlog's 50 commits up to 26.1.0's
    # development cycle; test_packaging asks the installed distribution
    # for its version, which a source checkout is not.
    echo "hynek/structlog|f64e2ec~49..025edaf|PYTHONPATH=src exec $work/deps/venv/bin/python -m pytest -q -x -p no:cacheprovider -p no:randomly --ignore=tests/test_packaging.py tests"
    ;;
  itoa)
    # The Rust crate: dtolnay/itoa's 50 commits (64 first-parent, 14
    # merges skipped) before criterion became a dev-dependency.
    echo "dtolnay/itoa|32eff831~64..32eff831|CARGO_HOME=$HOME/.cargo exec cargo test --offline --quiet"
    ;;
  *)
    echo "bench: PROJECTS names \`$1\`; the projects are cookie, structlog and itoa" >&2
    exit 2
    ;;
  esac
}

setup() {
  mkdir -p "$work/src" "$work/deps"
  local p repo mirror
  for p in cookie structlog itoa; do
    IFS='|' read -r repo _ _ <<<"$(project "$p")"
    mirror="$sources/${repo/\//+}/repo"
    [[ -d "$work/src/$p" ]] && continue
    if [[ -d "$mirror" ]]; then
      git clone -q "$mirror" "$work/src/$p"
    else
      git clone -q "https://github.com/$repo" "$work/src/$p"
    fi
  done
  mkdir -p "$work/deps/cookie"
  (cd "$work/deps/cookie" && echo '{"private":true}' >package.json &&
    npm install --ignore-scripts --no-audit --no-fund --silent mocha@10.2.0 safe-buffer@5.2.1 top-sites@1.1.194)
  python3 -m venv "$work/deps/venv"
  "$work/deps/venv/bin/pip" install -q pytest pytest-asyncio simplejson time-machine pretend freezegun
  # The crate's optional dependency must be in the index cargo reads offline.
  (cd "$work/src/itoa" && git checkout -q 32eff831~64 && cargo generate-lockfile -q && rm -f Cargo.lock && git checkout -q -)
  echo "bench: set up in $work"
}

if [[ "${1:-}" == setup ]]; then
  setup
  exit 0
fi

bin="$(planwright_bin)"
if [[ -n "${QUICK:-}" ]]; then
  # A made-up history: two commits change one line, one depends on another.
  projects=quick deps_list="none chain" jobs_list="1 4" agent_time=0.2s
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  r="$work/src/quick"
  mkdir -p "$r" && git -C "$r" init -q -b main
  g() { git -C "$r" -c user.name=bench -c user.email=bench@example.com "$@"; }
  printf 'set -e\nfor t in tests/*.sh; do [ -e "$t" ] || continue; sh "$t"; done\n' >"$r/test.sh"
  printf 'status: draft\n' >"$r/README"
  g add -A && g commit -qm base
  for step in "README:status: beta" "lib.sh:f() { echo ok; }" "README:status: stable" \
    "tests/f.sh:. ./lib.sh; [ \"\$(f)\" = ok ]" "notes:one" "notes2:two"; do
    mkdir -p "$r/$(dirname "${step%%:*}")"
    printf '%s\n' "${step#*:}" >"$r/${step%%:*}"
    g add -A && g commit -qm "${step%%:*}"
  done
  project() { echo "quick|HEAD~6..HEAD|sh test.sh"; }
fi

# row PROJECT DEPS JOBS: one replay; prints its row and keeps its JSON.
row() {
  local p="$1" deps="$2" jobs="$3" repo range gate out
  IFS='|' read -r repo range gate <<<"$(project "$p")"
  out="$work/out/$p-$deps-$jobs.json"
  mkdir -p "$work/out"
  rm -rf "$work/run/$p-$deps-$jobs"
  if ! nice -n 5 "$bin" replay --repo "$work/src/$p" --commits "$range" --deps "$deps" --jobs "$jobs" \
    --agent-time "$agent_time" --tokens-per-line "$tokens" --gate "sh -c '$gate'" \
    --into "$work/run/$p-$deps-$jobs" --output json >"$out" 2>"$out.err"; then
    echo "bench: the replay of $p (--deps $deps --jobs $jobs) failed:" >&2
    tail -20 "$out.err" >&2
    return 1
  fi
  python3 - "$out" "$p" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["replay"]
t = r["final_tree"]
tree = "equal" if t["equal"] else f"{t['differing_paths']} paths differ"
print(f"{sys.argv[2]:<10} {r['deps']:<6} {r['jobs']:>4} {r['tickets']:>4} {r['merged']:>6} "
      f"{r['makespan_s']:>8.1f} {r['ratio_to_serial']:>6.2f}x {r['ratio_to_bound']:>6.2f}x "
      f"{r['merged_per_hour']:>8.0f} {r['first_attempt_merge_rate']*100:>5.0f}% "
      f"{r['textual_conflicts']:>4} {r['semantic_conflicts']:>4} {r['rebuilds']:>4} "
      f"{r['gate_runs_per_merged']:>6.2f} {r['tokens_per_merged']:>7.0f} {r['cost_usd_per_merged']:>7.4f}  {tree}")
EOF
}

# naive PROJECT JOBS: what parallel agents merged without re-gating would
# have done with the same commits: each commit's change made from the
# range's base (`git apply --3way`, as the replay agent makes it; one
# that does not apply there is a conflict), then merged onto the branch in
# the order the `--deps none` replay's agents finished (`git cherry-pick`:
# one that does not merge is a conflict), with no gate before it lands.
# The gate then runs on every merge: how often the branch went red.
naive_row() {
  local p="$1" jobs="$2" repo range gate run_dir tree base t
  local red=0 conflicts=0 merged=0
  IFS='|' read -r repo range gate <<<"$(project "$p")"
  run_dir="$work/run/$p-none-$jobs"
  [[ -d "$run_dir" ]] || return 0
  tree="$work/naive/$p"
  rm -rf "$tree"
  git clone -q "$run_dir/repo" "$tree"
  base=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["replay"]["base"])' "$work/out/$p-none-$jobs.json")
  g() { git -C "$tree" -c user.name=bench -c user.email=bench@example.com "$@"; }
  g checkout -q -B naive "$base"
  local events=("$run_dir"/repo/.planwright/runs/*/events.jsonl)
  for t in $(python3 - "${events[0]}" <<'EOF2'
import json, sys
seen = []
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("event") == "agent_reported" and e["ticket"] not in seen:
        seen.append(e["ticket"])
print(" ".join(seen))
EOF2
  ); do
    g checkout -q --detach "$base"
    if ! g apply --3way --whitespace=nowarn "$run_dir/agent/$t.patch" >/dev/null 2>&1 ||
      ! g commit -qm "$t" >/dev/null 2>&1; then
      conflicts=$((conflicts + 1))
      g reset -q --hard && g clean -qfd
      g checkout -q naive
      continue
    fi
    local made
    made=$(g rev-parse HEAD)
    g checkout -q naive
    if ! g cherry-pick --allow-empty "$made" >/dev/null 2>&1; then
      conflicts=$((conflicts + 1))
      g cherry-pick --abort >/dev/null 2>&1 || g reset -q --hard
      continue
    fi
    merged=$((merged + 1))
    (cd "$tree" && nice -n 5 sh -c "$gate" >/dev/null 2>&1) || red=$((red + 1))
    g clean -qfd
  done
  printf '%-10s naive  %4s %4s %6s  red after %d of %d merges (%.0f%%); %d commits did not apply or merge\n' \
    "$p" "$jobs" "$((merged + conflicts))" "$merged" "$red" "$merged" \
    "$(awk -v r="$red" -v m="$merged" 'BEGIN { print (m ? 100 * r / m : 0) }')" "$conflicts"
}

echo "agent time ${agent_time}, ${tokens} tokens per changed line; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-10s %-6s %4s %4s %6s %8s %7s %7s %8s %6s %4s %4s %4s %6s %7s %7s  %s\n' project deps jobs tick merged \
  "wall s" serial bound "merged/h" first text sem rebld "gates" tokens '$' "final tree"
for p in $projects; do
  for deps in $deps_list; do
    for jobs in $jobs_list; do
      row "$p" "$deps" "$jobs" || true
    done
  done
  if [[ "$naive" == 1 ]]; then
    for jobs in $jobs_list; do
      if [[ " $deps_list " == *" none "* && "$jobs" -gt 1 ]]; then
        naive_row "$p" "$jobs"
      fi
    done
  fi
done
echo "load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
