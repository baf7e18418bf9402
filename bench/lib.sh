# Shared by the bench scripts (sourced, not run): the binary, plan
# generators and a timer. Benchmarks measure; they never fail on a figure.

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# The binary to measure: $PLANWRIGHT, else a release build of this tree
# (a debug build in quick mode, which only checks that the scripts work and
# which CI runs after `cargo test` has built it).
planwright_bin() {
  if [[ -n "${PLANWRIGHT:-}" ]]; then
    echo "$PLANWRIGHT"
    return
  fi
  if [[ -n "${QUICK:-}" ]]; then
    (cd "$root" && cargo build --quiet -p planwright) >&2
    echo "$root/target/debug/planwright"
    return
  fi
  (cd "$root" && cargo build --release --quiet -p planwright) >&2
  echo "$root/target/release/planwright"
}

# counts NAME VALUE EXAMPLE: stops the benchmark (exit 2) unless VALUE,
# what the environment variable NAME was set to, is one or more whole
# numbers above zero, separated by spaces; EXAMPLE is a good setting.
counts() {
  local name="$1" value="$2" example="$3" v words bad=""
  read -ra words <<<"$value"
  ((${#words[@]})) || bad="no count"
  for v in "${words[@]}"; do
    [[ -n "$bad" || "$v" =~ ^[1-9][0-9]*$ ]] || bad="\`${v}\`, which is not a count"
  done
  if [[ -n "$bad" ]]; then
    echo "bench: ${name}=\"${value}\" holds ${bad}; use whole numbers above zero, for example ${name}=\"${example}\"" >&2
    exit 2
  fi
}

# Milliseconds a command takes; its output is discarded and its exit status
# ignored (preflight reports a missing gate program with exit 1, say), but
# a status above 2 (a crash, a usage error) stops the benchmark.
time_ms() {
  local start status=0
  start=$(date +%s%N)
  "$@" >/dev/null 2>&1 || status=$?
  took_ms "$start" "$status" "$@"
}

# took_ms START STATUS COMMAND...: the milliseconds since START (from `date
# +%s%N`) of COMMAND that ended with STATUS, or the benchmark stops when
# STATUS is above 2.
took_ms() {
  local end start="$1" status="$2"
  end=$(date +%s%N)
  shift 2
  if ((status > 2)); then
    echo "bench: \`$*\` exited $status" >&2
    return 1
  fi
  echo $(((end - start) / 1000000))
}

# An agb plan of N tickets shaped as SHAPE: `chain` (each ticket after the
# one before), `layers` (layers of 50, each ticket after two of the layer
# before) or `independent` (no dependencies). Each ticket owns a module.
agb_plan() {
  local shape="$1" n="$2"
  awk -v shape="$shape" -v n="$n" 'BEGIN {
    printf "{\"repo\":\"/srv/app\",\"base\":\"main\",\"gate\":{\"test\":\"npm test\"},\"tickets\":[\n"
    for (i = 0; i < n; i++) {
      edges = ""
      if (shape == "chain" && i + 1 < n) edges = sprintf("{\"to\":\"T%d\"}", i + 1)
      if (shape == "layers" && i + 50 < n) {
        a = i - i % 50 + 50 + (i % 50); b = i - i % 50 + 50 + (i + 1) % 50
        edges = sprintf("{\"to\":\"T%d\"}", a)
        if (b < n) edges = edges sprintf(",{\"to\":\"T%d\"}", b)
      }
      printf "%s{\"id\":\"T%d\",\"title\":\"ticket %d\",\"body\":\"Change module %d.\",", (i ? ",\n" : ""), i, i, i
      printf "\"scope\":[\"src/m%d/**\",\"test/m%d.test.mjs\"],\"edges\":[%s],\"tier\":\"cheap\"}", i, i, edges
    }
    printf "\n]}\n"
  }'
}

# A git repository with one commit on `main` holding FILES files.
make_repo() {
  local dir="$1" files="$2"
  git init -q -b main "$dir"
  mkdir -p "$dir/src"
  for ((i = 0; i < files; i++)); do
    echo "$i" >"$dir/src/f$i.txt"
  done
  git -C "$dir" add -A
  git -C "$dir" -c user.name=bench -c user.email=bench@example.com commit -qm base
}

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
