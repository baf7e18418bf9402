#!/usr/bin/env bash
# The floor of planwright's design, with plain git (issue 15 item 1): the
# steps a run cannot avoid for each ticket, done by a shell script with
# nothing else around them. `overhead.sh` runs it beside planwright.
#
#   bash bench/floor.sh REPO TICKETS JOBS [SHAPE [LOG]]
#   FLOOR_KEEP=1 FLOOR_FROM=40 bash bench/floor.sh REPO TICKETS JOBS ...
#
# REPO is a repository as `overhead.sh` makes it (a `main` branch, a `m/`
# directory, `src/f<i>.txt`); TICKETS independent tickets, JOBS at a time,
# each create `m/t<i>.txt` (SHAPE `create`, the default) or append a line
# to `src/f<i>.txt` (`modify`). When LOG is given, the time of each merge
# (microseconds since the epoch) is appended to it, one a line, so
# `overhead.sh` can tell how the cost per ticket moves over the run. Per
# ticket, as planwright's design does it:
#
#   workspace   read-tree -m -u (the slot's index matches its files, as
#               the last candidate's add -A or the checkout left them, so
#               only what differs from the new base is touched), clean
#               (deleting untracked ignore files: the agent's must not
#               keep its leftovers), with the slot's own index
#   agent       the trivial agent, in user and PID namespaces
#   candidate   add -A, write-tree, commit-tree, update-ref (the candidate ref)
#   scope       diff-tree against the base
#   gates       read-tree -m -u in the slot's gate checkout (gates write
#               through an overlay, so only what differs from the last
#               candidate is touched and nothing needs cleaning), the gate
#               (`true`) in user, PID and network namespaces; the overlay's
#               mount is left out (planwright makes it in the gate's own
#               process; a shell would need two more), so the floor is a
#               little under the design's
#   merge       one update-ref transaction that moves the branch
#               (compare-and-swap) and drops the candidate ref; when the
#               branch has not moved since the candidate's base, the
#               candidate itself lands (it is the commit a merge would
#               make); else (every ticket but the first of a round of JOBS)
#               merge-tree, commit-tree, and read-tree -m -u and the gate
#               again in the merge checkout, before that transaction
#
# and once per run: the workspaces and checkouts made (checkout-index of
# every file), and the user's checkout moved to the result at the end.
# They stay in REPO/.floor, as planwright's stay in its `.planwright/`
# (the next run of this script removes them): deleting them would not be
# a step of the design, and would slow down whatever runs next on a
# filesystem that does not reuse deleted inodes at once.
#
# With FLOOR_KEEP=1 the next run keeps them instead, as planwright keeps
# its workspaces and gate checkouts between runs: each is reset to the new
# base from git's objects (`read-tree --reset -u`, which checks every file
# against its index and writes only what differs) and cleaned, the steps
# a kept tree needs before an agent or a gate may use it. FLOOR_FROM=N
# numbers the tickets from N (t<N>, t<N+1>, ...), so a second run changes
# other files than the first.
set -euo pipefail
repo="$(cd "$1" && pwd)" tickets="$2" jobs="$3" shape="${4:-create}" log="${5:-}"
keep="${FLOOR_KEEP:-}" from="${FLOOR_FROM:-0}"
state="$repo/.floor"
[[ -n "$keep" ]] || rm -rf "$state"
mkdir -p "$state"
export GIT_AUTHOR_NAME=floor GIT_AUTHOR_EMAIL=floor@localhost
export GIT_COMMITTER_NAME=floor GIT_COMMITTER_EMAIL=floor@localhost
gd="$repo/.git"
own() { # own INDEX DIR ARGS...: git on a work tree with its own index
  local index="$1" dir="$2"
  shift 2
  GIT_INDEX_FILE="$index" git --git-dir="$gd" --work-tree="$dir" "$@"
}
# As planwright does, an index only this script's git reads is written
# without its trailing checksum; the workspace's reset writes one, as the
# agent's git gets a copy of that index.
unhashed() { # unhashed INDEX DIR ARGS...
  local index="$1" dir="$2"
  shift 2
  own "$index" "$dir" -c index.skipHash=true "$@"
}
contained() { unshare --user --map-root-user --pid --fork "$@"; }
start=$(git -C "$repo" rev-parse main)

make_tree() { # make_tree NAME: a checkout of `main` with its own index
  if [[ -n "$keep" && -f "$state/$1.index" ]]; then
    own "$state/$1.index" "$state/$1" read-tree --reset -u "$start"
    own "$state/$1.index" "$state/$1" clean -q -ffdx
    return
  fi
  mkdir -p "$state/$1"
  own "$state/$1.index" "$state/$1" read-tree "$start"
  own "$state/$1.index" "$state/$1" checkout-index -a -f -u
}
for ((s = 0; s < jobs; s++)); do
  make_tree "ws$s"
  make_tree "gate$s"
done
make_tree merge

attempt() { # attempt SLOT TICKET BASE: prints the candidate commit
  local s="$1" t="$2" base="$3" ws="$state/ws$1" tree commit
  own "$state/ws$s.index" "$ws" read-tree -m -u "$base"
  own "$state/ws$s.index" "$ws" clean -q -ffd -e '!.gitignore'
  if [[ "$shape" == modify ]]; then
    (cd "$ws" && contained sh -c "echo $t >> src/f${t#t}.txt")
  else
    (cd "$ws" && contained sh -c "echo $t > m/$t.txt")
  fi
  unhashed "$state/ws$s.index" "$ws" add -A
  tree=$(unhashed "$state/ws$s.index" "$ws" write-tree --missing-ok)
  commit=$(git -C "$repo" commit-tree "$tree" -p "$base" -m "$t")
  git -C "$repo" update-ref "refs/floor/candidates/$t" "$commit"
  git -C "$repo" diff-tree -r --no-commit-id -z "$base" "$commit" >/dev/null
  unhashed "$state/gate$s.index" "$state/gate$s" read-tree -m -u "$commit"
  (cd "$state/gate$s" && contained --net true)
  echo "$commit"
}

tip="$start"
merge() { # merge TICKET CANDIDATE BASE: lands it on `main` (updates $tip)
  local t="$1" candidate="$2" base="$3" tree commit="$2"
  if [[ "$tip" != "$base" ]]; then
    tree=$(git -C "$repo" merge-tree --write-tree --name-only "$tip" "$candidate" | head -1)
    commit=$(git -C "$repo" commit-tree "$tree" -p "$tip" -m "$t")
    unhashed "$state/merge.index" "$state/merge" read-tree -m -u "$commit"
    (cd "$state/merge" && contained --net true)
  fi
  printf 'update refs/heads/main %s %s\ndelete refs/floor/candidates/%s\n' "$commit" "$tip" "$t" |
    git -C "$repo" update-ref --stdin
  # A builtin clock: a `date` process per merge would weigh on the floor.
  [[ -z "$log" ]] || echo "${EPOCHREALTIME/./}" >>"$log"
  tip="$commit"
}

for ((i = from; i < from + tickets; i += jobs)); do
  base="$tip"
  pids=()
  for ((s = 0; s < jobs && i + s < from + tickets; s++)); do
    attempt "$s" "t$((i + s))" "$base" >"$state/out$s" &
    pids+=($!)
  done
  for ((s = 0; s < ${#pids[@]}; s++)); do
    wait "${pids[$s]}"
    merge "t$((i + s))" "$(cat "$state/out$s")" "$base"
  done
done
git -C "$repo" read-tree -m -u "$start" main
