//! `planwright replay`: a history built here, with a pair of commits that
//! conflict as text (both change one line of the README) and a pair that
//! conflict in meaning (a test of a library an earlier commit added),
//! replayed through the engine run. `--deps chain` lands every commit and
//! ends on the range's last tree; `--deps none` starts every commit from
//! the range's base, so the later of each pair fails and the figures say
//! so; bad ranges and a dirty repository are refused naming the fix.

use planwright_testkit::{git, text, write, Env};
use serde_json::Value;
use std::path::Path;
use std::process::Output;

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

const TEST_SH: &str =
    "set -e\nfor t in tests/*.sh; do [ -e \"$t\" ] || continue; sh \"$t\"; done\n";

/// The repository `repo` with a base commit and five commits after it:
/// c1 and c3 change the README's same line, c4 tests the library c2 adds,
/// c5 stands alone. Returns the base commit.
fn history(env: &Env) -> String {
    let repo = env.repo();
    let commit = |msg: &str| {
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-q", "-m", msg]);
    };
    write(&repo, "test.sh", TEST_SH);
    write(&repo, "tests/.keep", "");
    commit("a test runner");
    let base = git(&repo, &["rev-parse", "HEAD"]);
    write(&repo, "README.md", "# lib\n\nstatus: beta\n");
    commit("c1: the README says beta");
    write(&repo, "lib/shout.sh", "shout() { echo \"$1!\"; }\n");
    commit("c2: shout");
    write(&repo, "README.md", "# lib\n\nstatus: stable\n");
    commit("c3: the README says stable");
    write(
        &repo,
        "tests/shout.sh",
        ". ./lib/shout.sh\n[ \"$(shout hi)\" = \"hi!\" ]\n",
    );
    commit("c4: a test of shout");
    write(&repo, "docs/notes.md", "notes\n");
    commit("c5: notes\n\nA body line.");
    base
}

fn env() -> Env {
    Env::new_in(
        Path::new("/var/tmp"),
        &[("README.md", "# lib\n\nstatus: draft\n")],
    )
    .with_cli(BIN)
}

fn replay(env: &Env, range: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "replay",
        "--repo",
        "repo",
        "--commits",
        range,
        "--gate",
        "sh test.sh",
        "--agent-time",
        "0s",
        "--tokens-per-line",
        "100",
    ];
    args.extend_from_slice(extra);
    env.planwright(&args)
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}\nstdout: {}\nstderr: {}",
            text(&out.stdout),
            text(&out.stderr)
        )
    })
}

#[test]
fn a_chain_lands_every_commit_and_ends_on_the_ranges_last_tree() {
    let env = env();
    let base = history(&env);
    let before = git(&env.repo(), &["rev-parse", "HEAD"]);
    let into = env.root().join("kept");
    let into_arg = into.display().to_string();
    let out = replay(
        &env,
        &format!("{base}..main"),
        &[
            "--deps", "chain", "--jobs", "2", "--into", &into_arg, "--output", "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let r = &json(&out)["replay"];
    assert_eq!(r["deps"], "chain");
    assert_eq!(r["tickets"], 5);
    assert_eq!(r["merged"], 5);
    assert_eq!(r["textual_conflicts"], 0);
    assert_eq!(r["semantic_conflicts"], 0);
    assert_eq!(r["first_attempt_merge_rate"], 1.0);
    assert_eq!(r["final_tree"]["equal"], true, "{r}");
    assert_eq!(r["final_tree"]["last_commit"], before);
    assert_eq!(r["commits"][3]["depends_on"][0], r["commits"][2]["ticket"]);
    // Each commit's changed lines times 100, priced as the default model.
    let lines: u64 = (r["commits"].as_array().unwrap().iter())
        .map(|c| c["lines"].as_u64().unwrap())
        .sum();
    assert_eq!(r["tokens"], lines * 100);
    assert!(r["cost_usd_per_merged"].as_f64().unwrap() > 0.0, "{r}");
    assert!(r["gate_runs_per_merged"].as_f64().unwrap() >= 1.0, "{r}");
    for key in [
        "makespan_s",
        "serial_sum_s",
        "dag_bound_s",
        "ratio_to_serial",
        "ratio_to_bound",
        "merged_per_hour",
    ] {
        assert!(r[key].as_f64().unwrap() > 0.0, "{key}: {r}");
    }
    // The user's repository is only read: its branch and files stay.
    assert_eq!(git(&env.repo(), &["rev-parse", "HEAD"]), before);
    assert_eq!(git(&env.repo(), &["status", "--porcelain"]), "");
    assert!(!env.repo().join(".planwright").exists());
    // The figures are in the run's folder too.
    let runs = into.join("repo/.planwright/runs");
    let run = std::fs::read_dir(&runs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let written: Value =
        serde_json::from_slice(&std::fs::read(run.join("replay.json")).unwrap()).unwrap();
    assert_eq!(written["merged"], 5);
    // And in the run's report.
    let kept = into.join("repo").display().to_string();
    let report = text(&env.planwright(&["report", "--repo", &kept]).stdout);
    assert!(
        report.contains("## Replay")
            && report.contains("final tree: equals the range's last commit"),
        "{report}"
    );
    let doc: Value = serde_json::from_slice(
        &env.planwright(&["report", "--repo", &kept, "--to", "json"])
            .stdout,
    )
    .unwrap();
    assert_eq!(doc["replay"]["tickets"], 5);
}

#[test]
fn without_dependencies_the_later_of_each_pair_conflicts_and_the_tree_says_how_it_differs() {
    let env = env();
    let base = history(&env);
    // Five slots for five tickets: every attempt starts from the base, and
    // one strike each: a conflict fails its ticket.
    let out = replay(
        &env,
        &format!("{base}..main"),
        &[
            "--deps",
            "none",
            "--jobs",
            "5",
            "--strikes",
            "1",
            "--output",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let all = json(&out);
    let r = &all["replay"];
    assert_eq!(r["merged"], 3, "{all}");
    assert_eq!(r["not_merged"], 2);
    assert_eq!(r["textual_conflicts"], 1, "{all}");
    assert_eq!(r["semantic_conflicts"], 1, "{all}");
    assert_eq!(r["first_attempt_merge_rate"], 0.6);
    let failed = all["failed"].as_object().unwrap();
    let c3 = r["commits"][2]["ticket"].as_str().unwrap();
    let c4 = r["commits"][3]["ticket"].as_str().unwrap();
    assert!(
        failed[c3]["message"]
            .as_str()
            .unwrap()
            .contains("no longer applies"),
        "{all}"
    );
    assert_eq!(failed[c4]["kind"], "gate_failure", "{all}");
    let tree = &r["final_tree"];
    assert_eq!(tree["equal"], false);
    let differs: Vec<&str> = tree["differs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert_eq!(
        differs,
        ["M\tREADME.md", "D\ttests/shout.sh"].map(|d| d.replace('\t', " "))
    );
}

#[test]
fn bad_ranges_and_a_dirty_repository_are_refused_naming_the_fix() {
    let env = env();
    let base = history(&env);
    let refused = |range: &str, says: &str| {
        let out = replay(&env, range, &[]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{range}: {err}");
        assert!(err.contains(says), "{range}: {err}");
        assert!(
            err.contains("hint:") && err.contains("--commits"),
            "{range}: {err}"
        );
    };
    refused("nosuch..main", "does not resolve");
    refused("main..main", "names no commit");
    // A range of merges only.
    let repo = env.repo();
    git(&repo, &["checkout", "-q", "-b", "side", &base]);
    write(&repo, "side.txt", "side\n");
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "side"]);
    git(&repo, &["checkout", "-q", "main"]);
    git(
        &repo,
        &["merge", "-q", "--no-ff", "-m", "merge side", "side"],
    );
    refused("main~1..main", "no commit to replay (merges skipped: 1");
    write(&repo, "README.md", "uncommitted\n");
    let out = replay(&env, "main~2..main~1", &[]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("uncommitted changes (README.md)") && err.contains("commit or stash"),
        "{err}"
    );
}
