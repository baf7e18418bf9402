#!/usr/bin/env bash
# Makes the screenshots of docs/observing.md from a run of the built-in demo:
#   docs/report.png        `report --format html`, desktop, light
#   docs/report-phone.png  the same on a phone-sized window, dark
#   docs/serve.png         `serve`'s live page half-way through the run
#   docs/watch.png         one frame of `watch` half-way through the run
# Needs chromium (Debian: apt-get install chromium). Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v chromium >/dev/null || { echo "needs chromium (apt-get install chromium)" >&2; exit 2; }
# PLANWRIGHT_BIN picks a binary already built (e.g. target/debug/planwright).
if [ -n "${PLANWRIGHT_BIN:-}" ]; then
  bin=$(cd "$(dirname "$PLANWRIGHT_BIN")" && pwd)/$(basename "$PLANWRIGHT_BIN")
else
  cargo build --release -q
  bin="$PWD/target/release/planwright"
fi
tmp=$(mktemp -d)
serve_pid=""
cleanup() {
  if [ -n "$serve_pid" ]; then kill "$serve_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

shot() { # shot OUT.png WIDTH,HEIGHT URL [extra chromium flags...]
  local out=$1 size=$2 url=$3
  shift 3
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$tmp/profile" --hide-scrollbars --window-size="$size" \
    "$@" --screenshot="$PWD/$out" "$url" >/dev/null 2>&1
  echo "wrote $out"
}

# The demo keeps its repository (newer builds need --keep for that).
keep=""
if "$bin" demo --help | grep -q -- '--keep'; then keep="--keep"; fi
repo=$("$bin" demo $keep --output json | python3 -c 'import json,sys; print(json.load(sys.stdin)["repo"])')
[ -d "$repo/.planwright" ] || { echo "the demo left no run in '$repo'" >&2; exit 1; }

(cd "$tmp" && "$bin" report --repo "$repo" --format html >report.html)
# Links are relative to where the report was written; the pictures don't need them.
shot docs/report.png 1100,1500 "file://$tmp/report.html"
shot docs/report-phone.png 390,1400 "file://$tmp/report.html" --force-dark-mode \
  --blink-settings=preferredColorScheme=0

# Half-way: cut the event log after farewell's rejected first attempt.
events=$(ls "$repo"/.planwright/runs/*/events.jsonl)
python3 - "$events" <<'PY'
import sys
path = sys.argv[1]
lines = open(path).read().splitlines(True)
cut = next(i for i, l in enumerate(lines) if '"attempt_rejected"' in l) + 3
open(path, "w").writelines(lines[:cut])
PY

"$bin" serve --repo "$repo" >"$tmp/serve.out" &
serve_pid=$!
for _ in $(seq 100); do grep -q token= "$tmp/serve.out" && break; sleep 0.1; done
url=$(grep -o 'http://127.0.0.1:[0-9]*/?token=[0-9a-f]*' "$tmp/serve.out")
shot docs/serve.png 1100,1000 "$url"

"$bin" watch --repo "$repo" --once 110x30 >"$tmp/watch.txt"
python3 - "$tmp/watch.txt" "$tmp/watch.html" <<'PY'
import html, sys
text = open(sys.argv[1]).read()
page = ("<!doctype html><meta charset=utf-8><body style='margin:0;background:#101418'>"
        "<pre style='margin:0;padding:12px;color:#d8dee4;font:15px/1.25 DejaVu Sans Mono,monospace'>"
        + html.escape(text) + "</pre>")
open(sys.argv[2], "w").write(page)
PY
shot docs/watch.png 1030,600 "file://$tmp/watch.html"
demo_dir=$(dirname "$repo")
case "$demo_dir" in
  */planwright-demo-*) rm -rf "$demo_dir" ;;
esac
