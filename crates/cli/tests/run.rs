//! `preflight`, `run`, `status`, `report` and `demo` end to end, on
//! temporary repositories with the scripted and `cmd` agents.

mod common;

use common::*;
use planwright_testkit::{assert_exit, assert_says, git, have, plan_args, text, write, Cli, Env};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn example_plan() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/agb/plan.example.json"),
    )
    .unwrap()
}

const MATH: &str = r#"function check(a, b) {
  if (!Number.isFinite(a) || !Number.isFinite(b)) throw new TypeError('arguments must be finite numbers');
}
export function add(a, b) { check(a, b); return a + b; }
export function multiply(a, b) { check(a, b); return a * b; }
"#;
const MATH_TEST: &str = r#"import { test } from 'node:test';
import assert from 'node:assert/strict';
import { add, multiply } from '../lib/math.mjs';
test('add', () => { assert.equal(add(2, 3), 5); });
test('multiply', () => { assert.equal(multiply(4, 3), 12); });
test('type errors', () => {
  assert.throws(() => add('1', 2), TypeError);
  assert.throws(() => multiply(1, NaN), TypeError);
});
"#;
const STRINGS: &str = r#"export function slugify(input) {
  if (typeof input !== 'string') throw new TypeError('input must be a string');
  return input.toLowerCase().trim().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
}
"#;
const STRINGS_TEST: &str = r#"import { test } from 'node:test';
import assert from 'node:assert/strict';
import { slugify } from '../lib/strings.mjs';
test('basic phrase', () => { assert.equal(slugify('Hello World'), 'hello-world'); });
test('punctuation collapses', () => { assert.equal(slugify('a -- b!! ü c'), 'a-b-c'); });
test('leading and trailing junk', () => { assert.equal(slugify('  --x--  '), 'x'); });
test('type error', () => { assert.throws(() => slugify(3), TypeError); });
"#;
const STATS: &str = r#"import { add } from './math.mjs';
export function mean(numbers) {
  if (!Array.isArray(numbers)) throw new TypeError('numbers must be an array');
  if (numbers.length === 0) throw new RangeError('numbers must not be empty');
  return numbers.reduce((sum, n) => add(sum, n), 0) / numbers.length;
}
"#;
const STATS_TEST: &str = r#"import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mean } from '../lib/stats.mjs';
test('happy path', () => { assert.equal(mean([1, 2, 3, 4]), 2.5); });
test('single element', () => { assert.equal(mean([7]), 7); });
test('empty array', () => { assert.throws(() => mean([]), RangeError); });
test('bad input', () => {
  assert.throws(() => mean('12'), TypeError);
  assert.throws(() => mean([1, Infinity]), TypeError);
});
"#;

#[test]
fn the_agb_example_plan_merges_all_three_and_npm_test_passes() {
    // The seed's plan gates on `npm test`; .ci/run installs node and npm
    // where they are missing, so their absence is a broken setup, not a skip.
    assert!(
        have("npm") && have("node"),
        "this test runs `npm test` with node's test runner: install node and npm (`apt-get install nodejs npm`, as .ci/run does)"
    );
    let env = env_with(&[("package.json", "{\n  \"name\": \"target\",\n  \"private\": true,\n  \"scripts\": {\"test\": \"node --test\"}\n}\n")]);
    write(env.root(), "plan.json", &example_plan());
    env.fixture("T1", 0, "lib/math.mjs", MATH);
    env.fixture("T1", 0, "test/math.test.mjs", MATH_TEST);
    env.fixture("T2", 0, "lib/strings.mjs", STRINGS);
    env.fixture("T2", 0, "test/strings.test.mjs", STRINGS_TEST);
    env.fixture("T3", 0, "lib/stats.mjs", STATS);
    env.fixture("T3", 0, "test/stats.test.mjs", STATS_TEST);
    let pre = env.scripted("preflight", &[]);
    assert_eq!(pre.status.code(), Some(0), "{}", text(&pre.stdout));
    let out = env.scripted("run", &["--output", "json"]);
    let summary: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
    assert_eq!(out.status.code(), Some(0), "{summary}");
    assert_eq!(summary["merged"], serde_json::json!(["T1", "T2", "T3"]));
    assert_eq!(summary["failed"], serde_json::json!({}));
    assert_eq!(summary["blocked"], serde_json::json!([]));
    let run = summary["run"].as_str().unwrap();
    let log = git(&env.repo(), &["log", "--format=%B%x00", "main"]);
    let commits: Vec<&str> = log
        .split('\0')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        commits.len(),
        4,
        "one commit per ticket on top of the base: {commits:?}"
    );
    for c in &commits[..3] {
        assert!(c.contains(&format!("Planwright-Run: {run}")), "{c}");
    }
    for id in ["T1", "T2", "T3"] {
        assert_eq!(
            commits
                .iter()
                .filter(|c| c.contains(&format!("Planwright-Ticket: {id}\n")))
                .count(),
            1
        );
    }
    // npm test passes on the result, in a clean checkout of the new base.
    let check = env.root().join("check");
    git(env.root(), &["clone", "-q", "repo", "check"]);
    let npm = Command::new("npm")
        .arg("test")
        .current_dir(&check)
        .output()
        .unwrap();
    assert!(
        npm.status.success(),
        "{}{}",
        text(&npm.stdout),
        text(&npm.stderr)
    );
    assert_says(&npm.stdout, "# pass 11");
}

#[test]
fn dry_run_prints_the_order_and_changes_nothing() {
    let env = sh_env();
    let before = git(&env.repo(), &["rev-parse", "main"]);
    // The gate probe works in a gate checkout under `.planwright/`.
    let out = env.scripted("run", &["--dry-run", "--jobs", "1", "--no-gate-probe"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let order: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.trim().strip_prefix("batch "))
        .collect();
    assert_eq!(order.len(), 3, "{stdout}");
    // A heads the longest chain; B and C tie and keep plan order.
    assert!(
        order[0].starts_with("1: A")
            && order[1].starts_with("2: B")
            && order[2].starts_with("3: C after A"),
        "{stdout}"
    );
    assert_eq!(git(&env.repo(), &["rev-parse", "main"]), before);
    assert!(!env.repo().join(".planwright").exists());
    assert_eq!(
        git(&env.repo(), &["status", "--porcelain", "--ignored"]),
        ""
    );
    assert_eq!(git(&env.repo(), &["branch", "--list"]), "* main");
    let out = env.scripted("run", &["--dry-run", "--jobs", "2", "--output", "json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["start_order"].as_array().unwrap().len(), 2, "{json}");
    // The counts' names, and their former ones for one release.
    assert_eq!(
        (&json["job_count"], &json["skipped_count"]),
        (&serde_json::json!(2), &serde_json::json!(0))
    );
    assert_eq!(
        (&json["jobs"], &json["skipped"]),
        (&serde_json::json!(2), &serde_json::json!(0))
    );
}

#[test]
fn rev_is_not_a_run_flag_since_run_works_from_the_base_branch() {
    let env = sh_env();
    let out = env.scripted("run", &["--rev", "main"]);
    assert_eq!(out.status.code(), Some(2));
    assert_says(&out.stderr, "unexpected argument '--rev'");
    assert!(!env.repo().join(".planwright").exists());
}

#[test]
fn zero_jobs_or_strikes_is_refused() {
    let env = sh_env();
    for flag in ["--jobs", "--strikes"] {
        let out = env.scripted("run", &[flag, "0", "--dry-run"]);
        assert_eq!(out.status.code(), Some(2), "{flag}");
        assert_says(&out.stderr, "0 is not in 1..");
    }
    write(env.root(), "planwright.toml", "[run]\nstrikes = 0\n");
    let out = env.scripted("run", &["--dry-run"]);
    assert_eq!(out.status.code(), Some(2));
    assert_says(&out.stderr, "`[run] strikes = 0`");
}

#[test]
fn worktree_is_read_as_workspace_and_warned_about_once() {
    let env = sh_env();
    write(
        env.root(),
        "planwright.toml",
        "[run]\njobs = 1\n[worktree]\ncopy = ['.env']\n",
    );
    let out = env.scripted("run", &["--dry-run"]);
    let err = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    let warning = "warning: `[worktree]` in `./planwright.toml` (line 3) is deprecated; rename it to `[workspace]`";
    assert_eq!(err.matches(warning).count(), 1, "{err}");
    let said = format!("{}{err}", text(&out.stdout));
    assert!(
        said.contains("`[workspace] copy` in `planwright.toml` names `.env`"),
        "the copy of the section under its former name is applied: {said}"
    );
    write(
        env.root(),
        "planwright.toml",
        "[run]\njobs = 1\n[workspace]\ncopy = ['.env']\n",
    );
    let out = env.scripted("run", &["--dry-run"]);
    assert!(
        !text(&out.stderr).contains("deprecated"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn gates_from_the_command_line_and_config() {
    let env = sh_env();
    let plan = SH_PLAN.replace(
        "\"gates\": [{\"name\": \"readme\", \"argv\": [\"test\", \"-f\", \"README.md\"]}],",
        "",
    );
    write(env.root(), "plan.json", &plan);
    let no_gate = env.scripted("run", &[]);
    assert_eq!(no_gate.status.code(), Some(1));
    assert_says(&no_gate.stdout, "has no gate");
    write(
        env.root(),
        "planwright.toml",
        "[gates]\nrun = [[\"test\", \"-f\", \"README.md\"]]\n",
    );
    let out = env.scripted(
        "run",
        &["--gate", "sh -c 'test -n \"$HOME\"'", "--output", "json"],
    );
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        summary["merged"],
        serde_json::json!(["A", "B", "C"]),
        "{}",
        text(&out.stderr)
    );
    let log = std::fs::read_to_string(
        env.repo()
            .join(".planwright/runs")
            .join(summary["run"].as_str().unwrap())
            .join("A/ticket.log"),
    )
    .unwrap();
    assert!(
        log.contains("$ test -f README.md") && log.contains("$ sh -c 'test -n \"$HOME\"'"),
        "{log}"
    );
}

#[test]
fn an_interrupted_run_continues_without_rerunning_merged_tickets() {
    let env = sh_env();
    // A finishes at once; B waits until it is interrupted (the mark comes
    // only for the second run).
    let script = env.root().join("agent.sh");
    let mark = env.root().join("second-run");
    // The mark's path is in the script: an agent gets no variable of the
    // test's own environment that `[agent] env` does not name.
    std::fs::write(&script, format!("t=$(echo \"$PLANWRIGHT_TICKET\" | tr A-Z a-z)\nif [ \"$t\" = b ]; then until [ -f '{}' ]; do sleep 0.1; done; fi\necho x > \"$t.txt\"\n", mark.display())).unwrap();
    let agent_cmd = format!("sh {}", script.display());
    let child = env
        .command()
        .args(plan_args("run", "cmd"))
        .args(["--agent-cmd", &agent_cmd, "--jobs", "2"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until A and C merged, then interrupt like Ctrl-C would.
    let events = env.repo().join(".planwright/runs");
    planwright_testkit::wait_until("A and C merged", || {
        let merged_c = std::fs::read_dir(&events)
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .map(|e| {
                std::fs::read_to_string(e.path().join("events.jsonl"))
                    .unwrap_or_default()
                    .contains("\"event\":\"merged\",\"ticket\":\"C\"")
            });
        merged_c == Some(true)
    });
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let first = child.wait_with_output().unwrap();
    assert_eq!(first.status.code(), Some(1), "{}", text(&first.stdout));
    assert_says(&first.stdout, "interrupted");
    assert!(!env.repo().join("b.txt").exists());
    // With no failed ticket, the next steps point at the run's folder,
    // whose ticket folders hold each log (never a literal `TICKET/`).
    let said = text(&first.stdout);
    let next = &said[said.find("\nnext:\n").expect("a next-step block")..];
    let run = std::fs::read_dir(&events).unwrap().next().unwrap().unwrap();
    assert!(
        next.contains(&format!(
            ".planwright/runs/{}/   each ticket's whole log is its folder's `ticket.log`",
            run.file_name().to_string_lossy()
        )) && !next.contains("TICKET"),
        "{next}"
    );

    std::fs::write(&mark, "").unwrap();
    let second = env
        .command()
        .args(plan_args("run", "cmd"))
        .args(["--agent-cmd", &agent_cmd])
        .output()
        .unwrap();
    let s = text(&second.stdout);
    assert_eq!(second.status.code(), Some(0), "{s}{}", text(&second.stderr));
    assert!(
        s.contains("continuing run")
            && s.contains("A: merged by an earlier run, skipped")
            && s.contains("C: merged by an earlier run, skipped"),
        "{s}"
    );
    assert!(!s.contains("A: attempt"), "{s}");
    assert_eq!(
        git(&env.repo(), &["log", "--format=%s", "main"])
            .lines()
            .count(),
        4
    );
}

#[test]
fn the_plans_repo_is_the_default_target() {
    let env = sh_env();
    let plan = SH_PLAN.replace(
        "\"base\": \"main\",",
        "\"base\": \"main\", \"repo\": \"repo\",",
    );
    write(
        env.root(),
        "plans/plan.json",
        &plan.replace("\"repo\": \"repo\"", "\"repo\": \"../repo\""),
    );
    let agent = format!("scripted:{}", env.fixtures().display());
    let out = env.planwright(&[
        "run",
        "plans/plan.json",
        "--agent",
        &agent,
        "--output",
        "json",
    ]);
    let summary: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
    assert_eq!(
        summary["merged"],
        serde_json::json!(["A", "B", "C"]),
        "{summary} {}",
        text(&out.stderr)
    );
    assert!(env.repo().join(".planwright/state.db").is_file());
}

#[test]
fn demo_runs_end_to_end() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Cli::new(BIN)
        .command(Path::new("."))
        .arg("demo")
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    let s = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{s}{}", text(&out.stderr));
    assert!(
        s.contains("farewell: attempt 1 rejected: scope_violation: modifies `README.md`"),
        "{s}"
    );
    assert!(s.contains("3 merged, 0 failed, 0 blocked"), "{s}");
    assert!(
        s.contains("hello: hello command") && s.contains("what landed on `main`"),
        "{s}"
    );
}

#[test]
fn demo_json_says_where_it_ran() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Cli::new(BIN)
        .command(Path::new("."))
        .args(["demo", "--keep", "--output", "json"])
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    let repo = PathBuf::from(summary["repo"].as_str().unwrap());
    assert!(repo.join(".git").exists(), "{summary}");
    assert!(PathBuf::from(summary["plan"].as_str().unwrap()).is_file());
    assert_eq!(summary["merged"].as_array().unwrap().len(), 3);
}

#[test]
fn a_damaged_state_store_is_named_with_a_way_out() {
    let env = env_with(&[("README.md", "hi\n")]);
    write(&env.repo(), ".planwright/state.db", "not a database\n");
    let out = env.planwright(&["status", "--repo", "repo"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("state store `.planwright/state.db`") && stderr.contains("hint: "),
        "{stderr}"
    );
}

/// While a run holds the lock, `preflight` and `run --dry-run` refuse in
/// `run`'s words and with its exit code; once it is released they pass.
#[test]
fn preflight_and_dry_run_report_a_held_run_lock_as_run_does() {
    let env = sh_env();
    let common = git(
        &env.repo(),
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    );
    let lock = PathBuf::from(common.trim()).join("planwright-run.lock");
    let file = std::fs::File::create(&lock).unwrap();
    std::fs::write(&lock, "4242\n").unwrap();
    rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
    let words = "another `planwright run` (process 4242) is using this repository";
    for out in [
        env.scripted("run", &[]),
        env.scripted("preflight", &[]),
        env.scripted("run", &["--dry-run"]),
    ] {
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(2), "{all}");
        assert!(
            all.contains(words) && all.contains("wait for it to finish"),
            "{all}"
        );
    }
    assert!(!env.repo().join("a.txt").exists());
    drop(file);
    assert_eq!(env.scripted("preflight", &[]).status.code(), Some(0));
    assert_eq!(env.scripted("run", &["--dry-run"]).status.code(), Some(0));
}

/// The `N` of a dry run's "up to N at once".
fn dry_run_jobs(env: &Env, extra: &[&str]) -> String {
    let mut args = vec!["--dry-run"];
    args.extend_from_slice(extra);
    let out = env.scripted("run", &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    let at = s.find(" at once").unwrap_or_else(|| panic!("{s}"));
    s[..at].rsplit(' ').next().unwrap().to_string()
}

/// The repository root's `planwright.toml` is read from the base commit,
/// after `--config` and the file beside the plan; it is a rail like the
/// plan-side file, and one that is not committed is said to be unread.
#[test]
fn the_repository_roots_configuration_is_read_from_the_base_commit() {
    let env = env_with(&[
        ("README.md", "hi\n"),
        ("planwright.toml", "[run]\njobs = 3\n"),
    ]);
    write(env.root(), "plan.json", SH_PLAN);
    env.fixture("A", 0, "a.txt", "a\n");
    env.fixture("B", 0, "b.txt", "b\n");
    env.fixture("C", 0, "c.txt", "c\n");
    // The working tree is on another branch whose file says otherwise.
    git(&env.repo(), &["checkout", "-q", "-b", "elsewhere"]);
    write(&env.repo(), "planwright.toml", "[run]\njobs = 5\n");
    git(&env.repo(), &["commit", "-qam", "elsewhere"]);
    assert_eq!(dry_run_jobs(&env, &[]), "3");
    // From inside the repository's root, too.
    let inside = env.cli().run(
        &env.repo(),
        &[
            "run",
            "../plan.json",
            "--repo",
            ".",
            "--agent",
            "scripted:../fixtures",
            "--dry-run",
        ],
    );
    assert_says(&inside.stdout, "up to 3 at once");
    // The plan's own file wins, and `--config` over both.
    write(env.root(), "planwright.toml", "[run]\njobs = 2\n");
    assert_eq!(dry_run_jobs(&env, &[]), "2");
    write(env.root(), "other.toml", "[run]\njobs = 4\n");
    assert_eq!(dry_run_jobs(&env, &["--config", "other.toml"]), "4");
    std::fs::remove_file(env.root().join("planwright.toml")).unwrap();

    // A ticket may not change it: a rail, whatever its scope says.
    git(&env.repo(), &["checkout", "-q", "main"]);
    let plan = SH_PLAN.replace(
        r#"{"pattern": "a.txt", "op": "create"}"#,
        r#"{"pattern": "a.txt", "op": "create"}, {"pattern": "planwright.toml", "op": "modify"}"#,
    );
    write(env.root(), "plan.json", &plan);
    env.fixture("A", 0, "planwright.toml", "[sandbox]\nmode = \"off\"\n");
    let out = env.scripted("run", &["--output", "json"]);
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        summary["failed"]["A"]["kind"], "rail_violation",
        "{summary}"
    );
    assert!(
        summary["failed"]["A"]["message"]
            .as_str()
            .unwrap()
            .contains("planwright.toml"),
        "{summary}"
    );

    // One that is not committed is not read, and the user is told.
    let env = env_with(&[("README.md", "hi\n")]);
    write(env.root(), "plan.json", SH_PLAN);
    write(&env.repo(), "planwright.toml", "[run]\njobs = 3\n");
    let out = env.scripted("run", &["--dry-run", "--jobs", "1"]);
    assert!(
        text(&out.stderr)
            .contains("planwright.toml` is not in the base branch `main`, so it is not read"),
        "{}",
        text(&out.stderr)
    );
}

/// The `Planwright-Ticket-Digest` trailers of `ticket`'s merges on `main`,
/// newest first.
fn merged_digests(env: &Env, ticket: &str) -> Vec<String> {
    let log = git(
        &env.repo(),
        &[
            "log",
            "--format=%(trailers:key=Planwright-Ticket,valueonly,separator=,)%x01%(trailers:key=Planwright-Ticket-Digest,valueonly,separator=,)",
            "main",
        ],
    );
    log.lines()
        .filter_map(|l| l.split_once('\u{1}'))
        .filter(|(t, _)| t.trim() == ticket)
        .map(|(_, d)| d.trim().to_string())
        .collect()
}

/// A ticket that created its file is rerun (asked by id, then because its
/// definition changed): its own earlier `create` does not stop it, and
/// each merge carries the digest of the definition it was made from.
#[test]
fn a_ticket_that_created_a_file_runs_again_and_merges_again() {
    let env = sh_env();
    let first = env.scripted("run", &[]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let digest = merged_digests(&env, "A");
    assert_eq!(digest.len(), 1);

    env.fixture("A", 0, "a.txt", "a again\n");
    // An id the plan lacks is a preflight error, dry run or not.
    for dry in [&["--dry-run"][..], &[]] {
        let nope = env.scripted("run", &[&["--rerun", "NOPE"][..], dry].concat());
        assert_exit(&nope, 1);
        assert_says(
            &nope.stdout,
            "rerun: `--rerun NOPE` names no ticket of the plan",
        );
    }
    let pre = env.scripted("run", &["--rerun", "A", "--dry-run"]);
    assert_eq!(pre.status.code(), Some(0), "{}", text(&pre.stdout));
    let again = env.scripted("run", &["--rerun", "A", "--output", "json"]);
    assert_exit(&again, 0);
    let summary: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(
        summary["merged"],
        serde_json::json!(["A", "B", "C"]),
        "{summary}"
    );
    assert_eq!(
        std::fs::read_to_string(env.repo().join("a.txt")).unwrap(),
        "a again\n"
    );
    assert_eq!(
        merged_digests(&env, "A"),
        [digest[0].clone(), digest[0].clone()]
    );

    // A changed definition runs again with `--rerun-changed`; its merge
    // carries the new digest, so the next run counts it merged.
    let plan = SH_PLAN.replace("\"make a\"", "\"make a, once more\"");
    write(env.root(), "plan.json", &plan);
    env.fixture("A", 0, "a.txt", "a thrice\n");
    let changed = env.scripted("run", &["--rerun-changed", "--output", "json"]);
    assert_exit(&changed, 0);
    let digests = merged_digests(&env, "A");
    assert_eq!(digests.len(), 3, "{digests:?}");
    assert_ne!(digests[0], digest[0]);
    let after = env.scripted("run", &["--output", "json"]);
    let summary: Value = serde_json::from_slice(&after.stdout).unwrap();
    assert_eq!(summary["changed"], serde_json::json!([]), "{summary}");
    assert_eq!(merged_digests(&env, "A").len(), 3);
}

#[test]
fn plain_output_says_every_heartbeat_what_each_running_ticket_does() {
    let env = env_with(&[("README.md", "hi\n")]);
    write(
        env.root(),
        "plan.json",
        r#"{"planwright": 1, "source_format": "native", "base": "main",
  "gates": [{"name": "readme", "argv": ["test", "-f", "README.md"]}],
  "tickets": [{"id": "A", "title": "a", "body": "make a", "scope": [{"pattern": "a.txt", "op": "create"}]}]}"#,
    );
    // The agent works until the test has seen a heartbeat (or for the
    // untested limit, 15 minutes, so that a regression ends).
    let go = env.root().join("go");
    let script = env.root().join("agent.sh");
    let body = format!(
        "i=0\nwhile [ ! -f '{}' ] && [ $i -lt 9000 ]; do sleep 0.1; i=$((i+1)); done\necho a > a.txt\n",
        go.display()
    );
    std::fs::write(&script, body).unwrap();
    let agent_cmd = format!("sh {}", script.display());
    let mut child = env
        .command()
        .args(["run", "plan.json", "--repo", "repo", "--agent", "cmd"])
        .args(["--agent-cmd", &agent_cmd, "--heartbeat", "1s"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = vec![];
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    for line in std::io::BufRead::lines(stdout) {
        let line = line.unwrap();
        if line.contains(" A still running (attempt 1, ") {
            std::fs::write(&go, "").unwrap();
        }
        lines.push(line);
    }
    let all = lines.join("\n");
    assert_eq!(child.wait().unwrap().code(), Some(0), "{all}");
    let beat = lines
        .iter()
        .position(|l| l.contains(" A still running (attempt 1, agent, "))
        .unwrap_or_else(|| panic!("no heartbeat line:\n{all}"));
    assert!(lines[beat].ends_with("s)"), "{all}");
    let finished = lines
        .iter()
        .position(|l| l.contains(" finished: "))
        .unwrap();
    assert!(beat < finished, "{all}");
    assert!(
        lines[finished..]
            .iter()
            .all(|l| !l.contains("still running")),
        "no heartbeat after the run: {all}"
    );
}
