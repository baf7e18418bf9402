#!/usr/bin/env bash
# Benchmark (not a test), issue 53: every git process a run starts, in
# order, through a `git` first on `PATH` that logs its arguments. A count,
# which the machine's load does not move. 20 independent tickets (TICKETS)
# that each create a file, `--jobs 1`, a repository of 300 files (FILES),
# agent `echo`, gate `true`. Prints each call with the ticket whose
# candidate it follows and where it runs (a slot's workspace or gate
# checkout; blank: the user's repository), planwright's options to git, the
# temporary folder's name and all but 7 digits of a hash left out and a
# message cut to its first line; then the calls by subcommand, and how
# many a ticket.
#
#   bash bench/git_calls.sh
#   TICKETS=50 FILES=3000 bash bench/git_calls.sh
#   PLANWRIGHT=/path/to/planwright bash bench/git_calls.sh
#   QUICK=1 bash bench/git_calls.sh         # 3 tickets, 30 files: checks the script works
#
# engine/tests/git_processes.rs holds one ticket's calls to the design's.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
tickets="${TICKETS:-20}"
files="${FILES:-300}"
counts TICKETS "$tickets" 20
counts FILES "$files" 300
[[ -n "${QUICK:-}" ]] && tickets=3 files=30
bin="$(planwright_bin)"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
export XDG_CACHE_HOME="$dir/cache"
run_repo "$dir/repo" "$files" >/dev/null
create_plan "$tickets" >"$dir/plan.json"
mkdir "$dir/wrap"
# One call a record: its arguments, each ended by a NUL, then a newline
# and a NUL (no argument is empty and holds only a newline), written under
# a lock, as calls run side by side (a gate checkout made while an agent
# works, say).
printf '#!/bin/sh\n(\n  flock 9\n  for a in "$@"; do printf "%%s\\0" "$a"; done\n  printf "\\n\\0"\n) 9>>"%s/git.log" >&9\nexec %s "$@"\n' \
  "$dir" "$(command -v git)" >"$dir/wrap/git"
chmod +x "$dir/wrap/git"
PATH="$dir/wrap:$PATH" "$bin" run "$dir/plan.json" --repo "$dir/repo" --jobs 1 \
  --agent cmd --agent-cmd 'sh -c "echo {ticket} > m/{ticket}.txt"' >/dev/null 2>&1 || true
merged=$(git -C "$dir/repo" log --oneline main | grep -c ' t[0-9]' || true)
python3 - "$dir/git.log" "$dir" "$tickets" "$merged" <<'EOF'
import collections, sys
log, tmp, tickets, merged = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
calls, args = [], []
for a in open(log, "rb").read().split(b"\0"):
    if a == b"\n":
        calls.append(args)
        args = []
    elif a:
        args.append(a.decode(errors="replace"))
def shown(argv):
    # Where it runs, in a word: the user's repository, a slot's workspace
    # or gate checkout (planwright's own git directory); hashes cut short.
    out, skip, seen_sub, where = [], False, False, ""
    for a in argv:
        if skip:
            skip = False
            continue
        if not seen_sub and a == "-c":
            skip = True
            continue
        if not seen_sub and a.startswith("--work-tree="):
            tree = a.split("=", 1)[1]
            slot = tree.rsplit("/", 1)[-1]
            where = ("workspace " + slot if "/workspaces/" in tree
                     else "checkout " + slot if "/checkouts/" in tree else "")
            continue
        if not seen_sub and a.startswith(("--git-dir=", "--attr-source=")):
            continue
        if not seen_sub and not a.startswith("-"):
            seen_sub = True
        a = a.replace(tmp, "$TMP").split("\n")[0]
        if len(a) == 40 and all(c in "0123456789abcdef" for c in a):
            a = a[:7]
        out.append(a)
    return f"{where:<18} " + " ".join(out)
def sub(argv):
    skip = False
    for a in argv:
        if skip:
            skip = False
        elif a == "-c":
            skip = True
        elif not a.startswith("-"):
            return a
    return argv[-1] if argv else ""
ticket = "run"
for argv in calls:
    if sub(argv) == "commit-tree":
        ticket = next((a.split(":")[0] for a in argv if a.startswith("t") and ":" in a), "?")
    print(f"{ticket:>4}  {shown(argv)[:150]}")
print()
by = collections.Counter(sub(a) for a in calls)
print(f"{len(calls)} git calls, {merged} of {tickets} tickets merged: {len(calls) / tickets:.1f} a ticket")
print("  ".join(f"{k} {v}" for k, v in by.most_common()))
EOF
