//! Everything an attempt uses is bounded: its processes and memory
//! (`[sandbox] pids` and `memory`, a cgroup per confined child) and the
//! disk (`[run] min_free`). A fork loop and a bounded allocation fail the
//! attempt as `resource_limit`; an agent or a gate that fills the
//! repository's disk fails it as `disk_full`, a merge that fills it stops
//! the merge queue with the ticket still verified, a run started below the
//! floor says what takes the space and starts nothing, and the next run
//! merges.
//!
//! The first two need what `crates/os/tests/limits.rs` needs (a cgroup
//! planwright can make: root on cgroup v1, or a delegated cgroup v2); the
//! disk test mounts a 64 MiB tmpfs in a mount namespace of its own
//! (`unshare --mount` as root, `unshare --user --map-root-user --mount`
//! otherwise). They fail, saying so, where that cannot be had.
#![forbid(unsafe_code)]

use planwright_testkit::{text, write, Env};
use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

/// An environment with `agent.sh` and a plan of one ticket writing `a.txt`.
fn env_with_agent(agent: &str) -> Env {
    let env = Env::new_in(Path::new("/var/tmp"), &[("README.md", "hi\n")]).with_cli(BIN);
    let root = env.root();
    write(root, "agent.sh", agent);
    let plan = serde_json::json!({"planwright": 1, "source_format": "native", "base": "main",
        "gates": [{"name": "true", "argv": ["true"]}],
        "tickets": [{"id": "A", "title": "a", "body": "make a",
            "scope": [{"pattern": "a.txt", "op": "create"}]}]});
    write(root, "plan.json", &plan.to_string());
    env
}

/// `planwright run` of the plan on `repo` with `config`, the agent being
/// `sh agent.sh WORKTREE`.
fn run(env: &Env, repo: &str, config: &str) -> Output {
    write(env.root(), "planwright.toml", config);
    let agent = format!("sh {} {{worktree}}", env.root().join("agent.sh").display());
    let mut cmd = env.cli().command(env.root());
    cmd.args([
        "run",
        "plan.json",
        "--repo",
        repo,
        "--config",
        "planwright.toml",
    ])
    .args(["--agent", "cmd", "--agent-cmd", &agent]);
    cmd.output().unwrap()
}

fn said(out: &Output) -> String {
    format!("{}\n{}", text(&out.stdout), text(&out.stderr))
}

#[test]
fn a_fork_loop_fails_the_attempt_at_the_process_limit() {
    // Without a limit it starts 300 sleepers (its PID namespace ends
    // them) and writes a.txt; with one, a fork fails and `sh` gives up.
    let env = env_with_agent(
        "i=0; while [ $i -lt 300 ]; do sleep 1000 & i=$((i+1)); done\necho a > \"$1/a.txt\"\n",
    );
    let out = run(&env, "repo", "[sandbox]\npids = 48\n[run]\nstrikes = 1\n");
    let said = said(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("resource_limit")
            && said.contains("reached its limit of 48 processes")
            && said.contains("raise `[sandbox] pids`"),
        "{said}"
    );
}

#[test]
fn a_bounded_allocation_fails_the_attempt_at_the_memory_limit() {
    // Doubles a string up to 256 MiB, far past the 32 MiB allowed.
    let env = env_with_agent(
        "awk 'BEGIN { s = \"x\"; while (length(s) < 268435456) s = s s; print length(s) }' > \"$1/a.txt\"\n",
    );
    let out = run(
        &env,
        "repo",
        "[sandbox]\nmemory = \"32M\"\n[run]\nstrikes = 1\n",
    );
    let said = said(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("resource_limit")
            && said.contains("ran out of its 32 MiB of memory")
            && said.contains("raise `[sandbox] memory`"),
        "{said}"
    );
}

/// Three runs on a copy of the repository on a 64 MiB tmpfs, in a mount
/// namespace of their own: the first with an agent that fills the disk;
/// the second with the disk filled from outside, below the floor; the
/// third with the space back. Each run's output and status follow a
/// `== run N` line.
const ON_A_SMALL_DISK: &str = r#"set -u
disk="$ROOT/disk"
mkdir -p "$disk"
mount -t tmpfs -o size=64m tmpfs "$disk" || { echo "cannot mount a tmpfs"; exit 90; }
cp -a "$ROOT/repo" "$disk/repo"
touch "$ROOT/fill-once"
runs() {
  "$BIN" run plan.json --repo "$disk/repo" --config planwright.toml --agent cmd --agent-cmd "sh $ROOT/agent.sh {worktree}" 2>&1
  echo "status $?"
}
echo "== run 1"; runs
rm "$ROOT/fill-once"
avail=$(df -k --output=avail "$disk" | tail -n 1)
mkdir -p "$disk/repo/.planwright/junk"
head -c $(( (avail - 1536) * 1024 )) /dev/zero > "$disk/repo/.planwright/junk/big"
echo "== run 2"; runs
rm -r "$disk/repo/.planwright/junk"
echo "== run 3"; runs
git -C "$disk/repo" show main:a.txt
"#;

#[test]
fn an_agent_that_fills_the_disk_fails_as_disk_full_and_the_next_run_starts() {
    // The agent fills the disk while `fill-once` exists, which the test
    // removes after the first run; then it writes a.txt.
    let env = env_with_agent("");
    let agent = format!(
        "if [ -e {}/fill-once ]; then head -c 200M /dev/zero > \"$1/fill\"; exit 1; fi\necho a > \"$1/a.txt\"\n",
        env.root().display()
    );
    write(env.root(), "agent.sh", &agent);
    write(env.root(), "planwright.toml", "[run]\nstrikes = 1\n");
    let all = in_a_small_disk(&env, ON_A_SMALL_DISK);
    let parts: Vec<&str> = all.split("== run ").collect();
    assert_eq!(parts.len(), 4, "{all}");
    let (first, second, third) = (parts[1], parts[2], parts[3]);
    assert!(
        first.contains("disk_full")
            && first.contains("the disk filled up during the attempt")
            && first.contains("workspaces/slot-1")
            && first.contains("status 1"),
        "{first}"
    );
    assert!(
        second.contains("no new attempts")
            && second.contains("below `[run] min_free`")
            && second.contains("junk (")
            && !second.contains("attempt 1")
            && second.contains("status 1"),
        "{second}"
    );
    assert!(
        third.contains("status 0") && third.trim_end().ends_with('a'),
        "{third}"
    );
}

/// Three runs of two tickets at once on a copy of the repository on a
/// 64 MiB tmpfs, as above, the gate filling the disk: first in the
/// tickets' own gate checkouts, then only in the merge's; the third with
/// the space back. After each run, the files of `main`.
const GATES_ON_A_SMALL_DISK: &str = r#"set -u
disk="$ROOT/disk"
mkdir -p "$disk"
mount -t tmpfs -o size=64m tmpfs "$disk" || { echo "cannot mount a tmpfs"; exit 90; }
cp -a "$ROOT/repo" "$disk/repo"
runs() {
  "$BIN" run plan.json --repo "$disk/repo" --config planwright.toml --jobs 2 --agent cmd --agent-cmd "sh $ROOT/agent.sh {workspace} {ticket}" 2>&1
  echo "status $?"
  echo "files"; git -C "$disk/repo" ls-tree --name-only main
  git -C "$disk/repo" fsck --no-dangling 2>&1 && echo "fsck ok"
}
touch "$ROOT/fill-gate"
echo "== run 1"; runs
mv "$ROOT/fill-gate" "$ROOT/fill-merge"
echo "== run 2"; runs
rm "$ROOT/fill-merge"
echo "== run 3"; runs
"#;

#[test]
fn a_gate_or_a_merge_that_fills_the_disk_is_disk_full_and_the_next_run_merges() {
    let env = env_with_agent("echo $2 > \"$1/$2.txt\"\n");
    let root = env.root().display().to_string();
    // The gate fills the disk where a marker file says, then fails as a
    // gate would on a full disk; on the base (preflight's trial) it passes.
    let gate = format!(
        "fill() {{ head -c 200M /dev/zero > \"$TMPDIR/fill\"; exit 1; }}\n\
         [ -e A.txt ] || [ -e B.txt ] || exit 0\n\
         [ -e {root}/fill-gate ] && fill\n\
         case \"$(pwd)\" in */checkouts/merge*) [ -e {root}/fill-merge ] && fill;; esac\n\
         exit 0\n"
    );
    write(env.root(), "gate.sh", &gate);
    let tickets = ["A", "B"].map(|id| {
        serde_json::json!({"id": id, "title": id, "body": format!("make {id}.txt"),
            "scope": [{"pattern": format!("{id}.txt"), "op": "create"}]})
    });
    let plan = serde_json::json!({"planwright": 1, "source_format": "native", "base": "main",
        "gates": [{"name": "fills", "argv": ["sh", format!("{root}/gate.sh")]}],
        "tickets": tickets});
    write(env.root(), "plan.json", &plan.to_string());
    write(env.root(), "planwright.toml", "[run]\nstrikes = 1\n");
    let all = in_a_small_disk(&env, GATES_ON_A_SMALL_DISK);
    let parts: Vec<&str> = all.split("== run ").collect();
    assert_eq!(parts.len(), 4, "{all}");
    let (first, second, third) = (parts[1], parts[2], parts[3]);
    let files = |run: &str| {
        run.split("\nfiles\n")
            .nth(1)
            .unwrap_or_default()
            .to_string()
    };
    // Each ticket's gate filled the disk: `disk_full`, never
    // `gate_failure`, and the run ended as a run does (no engine error).
    assert!(
        first.matches("disk_full").count() >= 2
            && first.contains("the disk filled up during the attempt's verification")
            && first.contains("its gate checkout and workspace were reset")
            && !first.contains("gate_failure")
            && !first.contains("error:")
            && first.contains("status 1")
            && !files(first).contains(".txt")
            && first.contains("fsck ok"),
        "{first}"
    );
    // The merge's gate filled it: the queue stopped, nothing half-merged.
    assert!(
        second.contains("the disk filled up during a merge")
            && second.contains("stays verified")
            && !second.contains("error:")
            && second.contains("status 1")
            && !(files(second).contains("A.txt") && files(second).contains("B.txt"))
            && second.contains("fsck ok"),
        "{second}"
    );
    assert!(
        third.contains("status 0") && files(third).contains("A.txt\nB.txt"),
        "{third}"
    );
}

/// Runs `script` (with `$ROOT` and `$BIN`) in a mount namespace of its
/// own, where it mounts its tmpfs; what it said.
fn in_a_small_disk(env: &Env, script: &str) -> String {
    let root_uid = text(&Command::new("id").arg("-u").output().unwrap().stdout) == "0";
    let unshare: &[&str] = if root_uid {
        &["--mount"]
    } else {
        &["--user", "--map-root-user", "--mount"]
    };
    let mut cmd = Command::new("unshare");
    env.cli().hermetic(&mut cmd);
    let out = cmd
        .args(unshare)
        .args(["sh", "-c", script])
        .current_dir(env.root())
        .env("ROOT", env.root())
        .env("BIN", BIN)
        .output()
        .expect("`unshare` (util-linux) runs");
    let all = said(&out);
    assert!(
        out.status.success(),
        "this test needs a mount namespace with a tmpfs of its own (`unshare {}`): {all}",
        unshare.join(" ")
    );
    all
}

#[test]
fn preflight_says_what_holds_the_limits() {
    let env = env_with_agent("echo a > \"$1/a.txt\"\n");
    let check = |config: &str| {
        write(env.root(), "planwright.toml", config);
        let out = env.cli().run(
            env.root(),
            &[
                "preflight",
                "plan.json",
                "--repo",
                "repo",
                "--config",
                "planwright.toml",
                "--output",
                "json",
            ],
        );
        let checks: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        let found = (checks.as_array().into_iter().flatten())
            .find(|c| c["check"] == "limits")
            .cloned();
        found.unwrap_or_else(|| panic!("no `limits` check: {}", said(&out)))
    };
    let set =
        check("[sandbox]\npids = 100\nmemory = \"1G\"\n[agent]\nname = \"cmd\"\ncmd = \"true\"\n");
    let message = set["message"].as_str().unwrap();
    assert!(
        message.contains("held to 100 processes and 1 GiB of memory by cgroup v"),
        "{set}"
    );
    assert_eq!(set["status"], "ok", "{set}");
    let off = check(
        "[sandbox]\npids = \"off\"\nmemory = \"off\"\n[agent]\nname = \"cmd\"\ncmd = \"true\"\n",
    );
    assert!(
        off["message"].as_str().unwrap().starts_with("no limits"),
        "{off}"
    );
}
