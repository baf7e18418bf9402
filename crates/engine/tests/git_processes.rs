//! The git processes a ticket costs: every git call of a run goes through
//! a `git` on `PATH` that logs its subcommand, and one ticket's calls, at
//! `--jobs 1` once the slot's workspace and gate checkout are made, are
//! exactly the design's (docs/performance.md, "A run's cost per ticket,
//! beside the git floor") plus the read of the workspace's index that
//! puts back the modes an agent changed and the one staging by changed
//! paths makes: a call added to a ticket's path shows here.
//!
//! One test in this file: it changes the process's `PATH`.

use planwright_testkit::*;
use serde_json::json;
use std::path::{Path, PathBuf};

/// The real `git` on `PATH`.
fn real_git() -> PathBuf {
    let path = std::env::var_os("PATH").expect("PATH is set");
    std::env::split_paths(&path)
        .map(|d| d.join("git"))
        .find(|g| g.is_file())
        .expect("git is on PATH")
}

/// Puts a `git` first on `PATH` that appends the subcommand of each call
/// (the first argument that is neither an option nor the value of `-c`) to
/// `log`, then runs the real one.
fn log_git_calls(dir: &Path, log: &Path) {
    let wrapper = dir.join("git");
    let script = format!(
        "#!/bin/sh\nskip=\nfor a in \"$@\"; do\n  if [ -n \"$skip\" ]; then skip=; continue; fi\n  \
         case \"$a\" in -c) skip=1 ;; -*) ;; *) echo \"$a\" >>'{}'; break ;; esac\ndone\n\
         exec '{}' \"$@\"\n",
        log.display(),
        real_git().display()
    );
    std::fs::write(&wrapper, script).unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&wrapper)
        .status()
        .unwrap();
    let path = std::env::var_os("PATH").unwrap();
    let mut dirs = vec![dir.to_path_buf()];
    dirs.extend(std::env::split_paths(&path));
    std::env::set_var("PATH", std::env::join_paths(dirs).unwrap());
}

#[test]
fn a_ticket_at_jobs_1_costs_the_designs_git_processes_and_no_more() {
    let env = Env::new(&[("README.md", "hi\n")]);
    let ids = ["A", "B", "C", "D"];
    let tickets: Vec<_> = ids
        .iter()
        .map(|id| {
            ticket(
                id,
                json!([{"pattern": format!("m/{id}.txt"), "op": "create"}]),
            )
        })
        .collect();
    let plan = plan(json!({"tickets": tickets, "gates": gate(&["true"])}));
    let agent = sh_agent(
        &env,
        "mkdir -p \"$1/m\"; echo \"$2\" > \"$1/m/$2.txt\"\n",
        "{workspace} {ticket}",
    );
    let mut s = settings();
    s.jobs = 1;
    let wrap = env.tmp.path().join("wrap");
    std::fs::create_dir(&wrap).unwrap();
    let log = env.tmp.path().join("git-calls.log");
    log_git_calls(&wrap, &log);
    let out = run_with(&env, &plan, &s, agent);
    assert_eq!(out.summary.merged, ids, "{:?}", out.summary);
    let calls: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    // From one candidate's commit to the next: B's candidate, checked,
    // gated and merged, then C's workspace reset and its candidate built.
    let commits: Vec<usize> = (calls.iter().enumerate())
        .filter(|(_, c)| *c == "commit-tree")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(commits.len(), ids.len(), "{calls:#?}");
    let one_ticket = &calls[commits[1]..commits[2]];
    assert_eq!(
        one_ticket,
        [
            "commit-tree", // the candidate, on the base
            "update-ref",  // its candidate ref
            "diff-tree",   // the scope check: its diff against the base
            "read-tree",   // the gate checkout moved to the candidate (a one-way merge)
            "update-ref",  // the merge: the branch and the candidate ref in one transaction
            "ls-files",    // the next workspace's index: modes an agent changed put back
            "read-tree",   // the workspace reset to the new base (a one-way merge)
            "clean",       // what the agent left untracked, its ignore files too
            // Since h-linear's staging by changed paths (`9264de5`): the
            // index's entries of changed paths gone from the work tree
            // (`exec/changes.rs` `stageable`). Not yet judged needed or not.
            "ls-files",
            "add",        // the next candidate's files, by the paths inotify saw change
            "write-tree", // and its tree
        ],
        "{calls:#?}"
    );
    // Every ticket after the first costs the same.
    assert_eq!(&calls[commits[2]..commits[3]], one_ticket, "{calls:#?}");
}
