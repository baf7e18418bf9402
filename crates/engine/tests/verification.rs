//! Verification beyond gates: counterfactuals executed in a checkout, and
//! review passes by a fake reviewer (a shell script run by the `cmd` agent
//! that answers recorded verdicts).

use planwright_engine::agent::CmdAgent;
use planwright_engine::process::scrubbed_env;
use planwright_engine::process::Cancel;
use planwright_engine::verify::counterfactual;
use planwright_engine::verify::GateRoom;
use planwright_engine::verify::{review, ReviewInput, ReviewOutcome, ReviewSpend};
use planwright_engine::CounterfactualOutcome;
use planwright_engine::FailureKind;
use planwright_engine::WorkTree;
use planwright_plan::model::{Counterfactual, CounterfactualTests, Mutation, Ticket};
use planwright_plan::verdict::{CheckStatus, ReviewCheck};
use std::path::Path;

fn room() -> GateRoom {
    GateRoom {
        env: scrubbed_env(&[]),
        confine: None,
    }
}

/// A checkout whose "test" passes while `src/calc.sh` says `echo 4`.
fn checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(
        dir.path().join("src/calc.sh"),
        "echo 4\n# echo 4 is the answer\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("src/unused.sh"), "echo unused\n").unwrap();
    std::fs::write(
        dir.path().join("test.sh"),
        "test \"$(sh src/calc.sh)\" = 4\n",
    )
    .unwrap();
    dir
}

fn cf(control: &str, mutation: Mutation, test: &[&str]) -> Counterfactual {
    Counterfactual {
        control_path: control.into(),
        mutation,
        tests: CounterfactualTests {
            run: "calc".into(),
            package: None,
            argv: Some(test.iter().map(|s| s.to_string()).collect()),
        },
    }
}

/// A patch that makes `src/calc.sh` print 3.
const CALC_PATCH: &str = "--- a/src/calc.sh\n+++ b/src/calc.sh\n@@ -1,2 +1,2 @@\n-echo 4\n+echo 3\n # echo 4 is the answer\n";

/// The counterfactual most tests use: `src/calc.sh` made to print 5,
/// which `sh test.sh` notices.
fn calc_to_5() -> Counterfactual {
    cf(
        "src/calc.sh",
        find("echo 4\n", "echo 5\n"),
        &["sh", "test.sh"],
    )
}

fn find(find: &str, replace: &str) -> Mutation {
    Mutation::FindReplace {
        find: find.into(),
        replace: replace.into(),
    }
}

/// Runs `c` in `dir` with planwright's own git directory, as the engine
/// does: never one found in `dir`. That directory and the log are in a
/// folder of their own, removed when it returns (none is left in the
/// temporary folder).
fn run_cf(dir: &Path, c: &Counterfactual) -> counterfactual::CounterfactualResult {
    let own = tempfile::tempdir().unwrap();
    let git_dir = own.path().join("git");
    let init = std::process::Command::new("git")
        .args(["init", "-q", "--bare"])
        .arg(&git_dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .unwrap();
    assert!(init.success());
    let git = WorkTree::new(&git_dir, dir);
    let timeout = Some(planwright_testkit::UNTESTED_LIMIT);
    let log = own.path().join("cf.log");
    counterfactual::run(c, dir, &git, &room(), timeout, &log, &Cancel::default())
        .unwrap()
        .expect("not cancelled")
}

#[test]
fn a_mutation_the_tests_catch_is_red_and_the_file_is_put_back() {
    let dir = checkout();
    let c = calc_to_5();
    let r = run_cf(dir.path(), &c);
    assert_eq!(r.outcome, CounterfactualOutcome::Red, "{r:?}");
    assert_eq!(r.command, "sh test.sh");
    let after = std::fs::read_to_string(dir.path().join("src/calc.sh")).unwrap();
    assert_eq!(after, "echo 4\n# echo 4 is the answer\n");
}

#[test]
fn a_mutation_nothing_notices_is_green() {
    let dir = checkout();
    let c = cf(
        "src/unused.sh",
        find("unused", "changed"),
        &["sh", "test.sh"],
    );
    let r = run_cf(dir.path(), &c);
    assert_eq!(r.outcome, CounterfactualOutcome::Green, "{r:?}");
    assert!(r.message.contains("no test pins it"), "{}", r.message);
}

#[test]
fn a_find_text_that_occurs_twice_is_an_error_that_says_so() {
    let dir = checkout();
    let c = cf("src/calc.sh", find("echo 4", "echo 5"), &["sh", "test.sh"]);
    let r = run_cf(dir.path(), &c);
    assert_eq!(r.outcome, CounterfactualOutcome::Error);
    assert!(r.message.contains("occurs 2 times"), "{}", r.message);
    let after = std::fs::read_to_string(dir.path().join("src/calc.sh")).unwrap();
    assert_eq!(
        after, "echo 4\n# echo 4 is the answer\n",
        "nothing was changed"
    );
}

#[test]
fn a_failing_baseline_is_an_error_not_an_unpinned_control() {
    let dir = checkout();
    std::fs::write(dir.path().join("test.sh"), "exit 1\n").unwrap();
    let c = calc_to_5();
    let r = run_cf(dir.path(), &c);
    assert_eq!(r.outcome, CounterfactualOutcome::Error);
    assert!(r.message.contains("baseline"), "{}", r.message);
}

/// A test script that, under the mutation (`echo 5`), puts `what` where
/// the control file was, and passes its baseline.
fn hostile_test(dir: &Path, what: &str) {
    let script = format!(
        "if grep -q 'echo 5' src/calc.sh; then rm src/calc.sh; {what}; exit 1; fi\ntest \"$(sh src/calc.sh)\" = 4\n"
    );
    std::fs::write(dir.join("test.sh"), script).unwrap();
}

#[test]
fn a_symlink_the_mutated_tests_leave_is_replaced_not_written_through() {
    let dir = checkout();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("gitconfig");
    std::fs::write(&target, "[user]\n\tname = me\n").unwrap();
    hostile_test(
        dir.path(),
        &format!("ln -s {} src/calc.sh", target.display()),
    );
    let c = calc_to_5();
    let r = run_cf(dir.path(), &c);
    assert_eq!(r.outcome, CounterfactualOutcome::Error, "{r:?}");
    assert!(r.message.contains("with a symlink"), "{}", r.message);
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "[user]\n\tname = me\n"
    );
    let put_back = dir.path().join("src/calc.sh");
    assert!(!put_back.is_symlink());
    assert_eq!(
        std::fs::read_to_string(put_back).unwrap(),
        "echo 4\n# echo 4 is the answer\n"
    );
}

#[test]
fn a_directory_the_mutated_tests_turn_into_a_symlink_is_made_anew() {
    let dir = checkout();
    let outside = tempfile::tempdir().unwrap();
    let script = format!(
        "if grep -q 'echo 5' src/calc.sh; then mv src src.old; ln -s {} src; exit 1; fi\ntest \"$(sh src/calc.sh)\" = 4\n",
        outside.path().display()
    );
    std::fs::write(dir.path().join("test.sh"), script).unwrap();
    let c = calc_to_5();
    let r = run_cf(dir.path(), &c);
    assert_eq!(r.outcome, CounterfactualOutcome::Error, "{r:?}");
    assert!(r.message.contains("replaced a directory"), "{}", r.message);
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    assert!(!dir.path().join("src").is_symlink());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("src/calc.sh")).unwrap(),
        "echo 4\n# echo 4 is the answer\n"
    );
}

#[test]
fn a_fifo_the_mutated_tests_leave_is_an_error_in_bounded_time() {
    let dir = checkout();
    hostile_test(dir.path(), "mkfifo src/calc.sh");
    let c = calc_to_5();
    // A write-back that opened the FIFO would never return.
    let r = run_cf(dir.path(), &c);
    assert_eq!(r.outcome, CounterfactualOutcome::Error, "{r:?}");
    assert!(r.message.contains("FIFO"), "{}", r.message);
    let meta = std::fs::symlink_metadata(dir.path().join("src/calc.sh")).unwrap();
    assert!(meta.is_file());
}

#[test]
fn a_repository_the_baseline_leaves_is_never_the_patchs_git() {
    let dir = checkout();
    let marker = dir
        .path()
        .join("../filter-ran-".to_string() + &std::process::id().to_string());
    // The baseline run plants a repository whose filter would run as
    // planwright, and attributes that name it.
    let plant = format!(
        "mkdir -p .git/objects .git/refs; echo 'ref: refs/heads/main' > .git/HEAD; \
         printf '[core]\\n\\trepositoryformatversion = 0\\n[filter \"x\"]\\n\\tclean = touch {m}\\n\\tsmudge = touch {m}\\n' > .git/config; \
         echo '* filter=x' > .gitattributes\n",
        m = marker.display()
    );
    let script = format!("{plant}test \"$(sh src/calc.sh)\" = 4\n");
    std::fs::write(dir.path().join("test.sh"), script).unwrap();
    let patch = CALC_PATCH;
    let c = cf(
        "src/calc.sh",
        Mutation::Patch {
            patch: patch.into(),
        },
        &["sh", "test.sh"],
    );
    let r = run_cf(dir.path(), &c);
    assert!(
        dir.path().join(".git/config").is_file(),
        "the test planted it"
    );
    assert_eq!(r.outcome, CounterfactualOutcome::Red, "{r:?}");
    assert!(!marker.exists(), "the planted filter ran");
}

#[test]
fn a_patch_mutation_applies_and_a_bad_one_is_named() {
    let dir = checkout();
    let patch = CALC_PATCH;
    let c = cf(
        "src/calc.sh",
        Mutation::Patch {
            patch: patch.into(),
        },
        &["sh", "test.sh"],
    );
    assert_eq!(run_cf(dir.path(), &c).outcome, CounterfactualOutcome::Red);
    let bad = cf(
        "src/calc.sh",
        Mutation::Patch {
            patch: patch.replace("-echo 4", "-echo 9"),
        },
        &["sh", "test.sh"],
    );
    let r = run_cf(dir.path(), &bad);
    assert_eq!(r.outcome, CounterfactualOutcome::Error);
    assert!(r.message.contains("does not apply"), "{}", r.message);
}

#[test]
fn a_control_path_outside_the_checkout_is_refused() {
    let dir = checkout();
    let c = cf("../etc/passwd", find("root", "toor"), &["sh", "test.sh"]);
    let r = run_cf(dir.path(), &c);
    assert_eq!(r.outcome, CounterfactualOutcome::Error);
    assert!(r.message.contains("leaves the repository"), "{}", r.message);
}

const SHIP: &str = r#"{"verdict": "ship", "summary": "does what it says", "findings": [],
 "checks": [{"id": "C1", "status": "met", "evidence": "test.sh"}, {"id": "C2", "status": "met"}]}"#;
const BLOCK: &str = r#"{"verdict": "block", "summary": "the test was weakened",
 "findings": [{"severity": "blocker", "file": "test.sh", "line": 1, "message": "asserts nothing"}],
 "checks": [{"id": "C1", "status": "unmet", "evidence": "no assertion"}, {"id": "C2", "status": "met"}]}"#;

/// A reviewer that answers `answers[n]` on its n-th call (the last one
/// from then on), counting calls in a file beside its verdict (the one
/// folder a confined reviewer may write).
/// A reviewer giving `answers` in turn (the last one ever after).
fn reviewer(dir: &Path, answers: &[&str]) -> CmdAgent {
    CmdAgent::new(&reviewer_command(dir, answers)).unwrap()
}

/// The command line of [`reviewer`].
fn reviewer_command(dir: &Path, answers: &[&str]) -> String {
    let count = "calls=\"$(dirname \"$PLANWRIGHT_VERDICT_FILE\")/calls\"\nn=$(cat \"$calls\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$calls\"\n";
    answering(dir, count, answers)
}

/// A reviewer of a run, giving `answers[n]` for attempt n+1 (the last one
/// from then on): its verdict's folder starts empty for every attempt.
fn reviewer_by_attempt(dir: &Path, answers: &[&str]) -> String {
    let attempt =
        "n=$(basename \"$PLANWRIGHT_VERDICT_FILE\" | sed 's/^attempt-\\([0-9]*\\)\\..*/\\1/')\n";
    answering(dir, attempt, answers)
}

/// A reviewer script that sets `n` with `choose` and answers `answers[n-1]`.
fn answering(dir: &Path, choose: &str, answers: &[&str]) -> String {
    let mut script = format!("#!/bin/sh\n{choose}case $n in\n");
    for (i, a) in answers.iter().enumerate() {
        let case = if i + 1 == answers.len() {
            "*".to_string()
        } else {
            (i + 1).to_string()
        };
        script.push_str(&format!(
            "{case}) cat > \"$PLANWRIGHT_VERDICT_FILE\" <<'EOF'\n{a}\nEOF\n;;\n"
        ));
    }
    script.push_str("esac\n");
    let path = dir.join("reviewer.sh");
    std::fs::write(&path, script).unwrap();
    format!("sh {}", path.display())
}

fn input(dir: &Path) -> (Ticket, ReviewInput) {
    let ticket = Ticket {
        title: "calc".into(),
        checks: vec!["calc prints 4".into(), "nothing else changes".into()],
        ..Ticket::new("T1", "Make calc print 4.")
    };
    let (files, verdicts) = (dir.join("files"), dir.join("verdicts"));
    for folder in [&files, &verdicts] {
        std::fs::create_dir_all(folder).unwrap();
    }
    let checks = ReviewCheck::numbered([
        ("calc prints 4".to_string(), false),
        ("nothing else changes".to_string(), true),
    ]);
    let input = ReviewInput {
        checks,
        diff: "--- a/src/calc.sh\n+++ b/src/calc.sh\n@@ -1 +1 @@\n-echo 3\n+echo 4\n".into(),
        gates: vec![("sh test.sh".into(), true)],
        checkout: dir.to_path_buf(),
        verdicts: verdicts.clone(),
        files,
        attempt: 1,
        timeout: Some(planwright_testkit::UNTESTED_LIMIT),
        model: None,
        env: vec![],
        confine: None,
    };
    (ticket, input)
}

fn run_review(dir: &Path, agent: &CmdAgent, passes: u32, max: Option<usize>) -> ReviewOutcome {
    let (ticket, input) = input(dir);
    let mut spend = ReviewSpend::default();
    review(
        &ticket,
        &input,
        agent,
        passes,
        max,
        &mut spend,
        &Cancel::default(),
    )
    .unwrap()
}

#[test]
fn a_block_is_evidence_and_the_next_review_ships() {
    let dir = tempfile::tempdir().unwrap();
    let agent = reviewer(dir.path(), &[BLOCK, SHIP]);
    match run_review(dir.path(), &agent, 1, None) {
        ReviewOutcome::Rejected { failure, verdicts } => {
            assert_eq!(failure.kind, FailureKind::ReviewBlocked);
            assert!(
                failure.message.contains("the test was weakened"),
                "{}",
                failure.message
            );
            let evidence = failure.evidence.clone();
            assert!(
                evidence.contains("blocker test.sh:1: asserts nothing"),
                "{evidence}"
            );
            assert!(
                evidence.contains("check C1 unmet: calc prints 4"),
                "{evidence}"
            );
            assert_eq!(verdicts.len(), 1);
        }
        other => panic!("expected a block, got {other:?}"),
    }
    match run_review(dir.path(), &agent, 1, None) {
        ReviewOutcome::Shipped { verdicts } => {
            assert_eq!(verdicts[0].checks[0].status, CheckStatus::Met);
            // skip_expected is never validated, whatever the reviewer says.
            assert_eq!(verdicts[0].checks[1].status, CheckStatus::NotValidated);
        }
        other => panic!("expected ship, got {other:?}"),
    }
}

#[test]
fn dry_passes_need_consecutive_ships() {
    let dir = tempfile::tempdir().unwrap();
    let agent = reviewer(dir.path(), &[SHIP, BLOCK]);
    match run_review(dir.path(), &agent, 2, None) {
        ReviewOutcome::Rejected { failure, verdicts } => {
            assert!(
                failure.message.contains("review pass 2 of 2 blocked"),
                "{}",
                failure.message
            );
            assert_eq!(verdicts.len(), 2);
        }
        other => panic!("expected the second pass to block, got {other:?}"),
    }
}

#[test]
fn a_malformed_verdict_is_retried_once_then_fails_the_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let agent = reviewer(dir.path(), &["LGTM, ship it!"]);
    match run_review(dir.path(), &agent, 1, None) {
        ReviewOutcome::Rejected { failure, .. } => {
            assert_eq!(failure.kind, FailureKind::ReviewInvalid);
            assert!(failure.evidence.clone().contains("not JSON"));
        }
        other => panic!("expected review_invalid, got {other:?}"),
    }
    let calls = std::fs::read_to_string(dir.path().join("verdicts/calls")).unwrap();
    assert_eq!(calls.trim(), "2", "one retry, no more");
    // The retry's prompt tells the reviewer what was wrong.
    let retry =
        std::fs::read_to_string(dir.path().join("files/attempt-1.review-1.2.prompt.md")).unwrap();
    assert!(retry.contains("not a valid verdict"), "{retry}");

    let dir = tempfile::tempdir().unwrap();
    let agent = reviewer(dir.path(), &["{\"verdict\": \"ship\"}", SHIP]);
    assert!(matches!(
        run_review(dir.path(), &agent, 1, None),
        ReviewOutcome::Shipped { .. }
    ));
}

#[test]
fn a_diff_over_the_limit_is_blocked_without_a_review() {
    let dir = tempfile::tempdir().unwrap();
    let agent = reviewer(dir.path(), &[SHIP]);
    match run_review(dir.path(), &agent, 1, Some(3)) {
        ReviewOutcome::Rejected { failure, .. } => {
            assert_eq!(failure.kind, FailureKind::ReviewBlocked);
            assert!(
                failure.message.contains("max_diff_lines = 3"),
                "{}",
                failure.message
            );
        }
        other => panic!("expected a block, got {other:?}"),
    }
    assert!(
        !dir.path().join("verdicts/calls").exists(),
        "the reviewer never ran"
    );
}

use planwright_config::ReviewSettings;
use planwright_engine::agent::{self, AgentSpec};
use planwright_testkit::{plan, run_with, settings, Env};

/// A repository where `calc.sh` prints 3 and `test.sh` checks it prints 4;
/// the scripted agent makes it print 4 (and may also weaken the test).
fn calc_env(weaken_test: bool) -> Env {
    let env = Env::new(&[
        ("calc.sh", "echo 3\n"),
        ("other.sh", "echo other\n"),
        ("test.sh", "test \"$(sh calc.sh)\" = 4\n"),
    ]);
    env.fixture("T1", 0, "calc.sh", "echo 4\n");
    if weaken_test {
        env.fixture("T1", 0, "test.sh", "true\n");
    }
    env
}

fn calc_plan(counterfactual: serde_json::Value) -> planwright_plan::Plan {
    plan(serde_json::json!({
        "gates": [{"name": "test", "argv": ["sh", "test.sh"]}],
        "tickets": [{"id": "T1", "body": "make calc print 4",
            "checks": ["calc prints 4"],
            "scope": [{"pattern": "calc.sh", "op": "modify"}, {"pattern": "test.sh", "op": "modify"}],
            "counterfactuals": [counterfactual]}]
    }))
}

fn scripted(env: &Env) -> Box<dyn agent::Agent> {
    agent::from_name(&format!("scripted:{}", env.fixtures().display()), None).unwrap()
}

#[test]
fn a_run_merges_a_candidate_whose_counterfactual_turns_red() {
    let env = calc_env(false);
    let cf = serde_json::json!({"control_path": "calc.sh",
        "mutation": {"form": "find_replace", "find": "echo 4", "replace": "echo 5"},
        "tests": {"run": "calc", "argv": ["sh", "test.sh"]}});
    let out = run_with(&env, &calc_plan(cf), &settings(), scripted(&env));
    assert_eq!(out.summary.merged, ["T1"], "{:?}", out.summary);
}

#[test]
fn a_counterfactuals_test_output_travels_in_its_event_and_the_log() {
    let env = calc_env(false);
    let cf = serde_json::json!({"control_path": "calc.sh",
        "mutation": {"form": "find_replace", "find": "echo 4", "replace": "echo 5"},
        "tests": {"run": "calc", "argv": ["sh", "-c", "echo calc said $(sh calc.sh); sh test.sh"]}});
    let out = run_with(&env, &calc_plan(cf), &settings(), scripted(&env));
    assert_eq!(out.summary.merged, ["T1"], "{:?}", out.summary);
    let excerpt = out
        .events
        .iter()
        .find_map(|e| match e {
            planwright_engine::Event::Counterfactual { output_excerpt, .. } => {
                Some(output_excerpt.clone())
            }
            _ => None,
        })
        .expect("a counterfactual event");
    assert!(
        excerpt.contains("calc said 5"),
        "the mutated run's output: {excerpt}"
    );
    // How the report shows it is planwright-view's
    // (crates/view/tests/report.rs): the log has the event as emitted.
    let log = env.run_file("events.jsonl");
    let logged = log
        .lines()
        .filter_map(|l| serde_json::from_str::<planwright_engine::Event>(l).ok())
        .find_map(|e| match e {
            planwright_engine::Event::Counterfactual { output_excerpt, .. } => Some(output_excerpt),
            _ => None,
        });
    assert_eq!(logged.as_deref(), Some(excerpt.as_str()));
}

#[test]
fn an_excerpt_keeps_the_end_within_its_bounds() {
    let long: String = (0..100)
        .map(|i| format!("{i:03} {}\n", "é".repeat(60)))
        .collect();
    let e = counterfactual::excerpt(&long);
    assert!(e.len() <= counterfactual::EXCERPT_BYTES, "{}", e.len());
    assert!(e.lines().count() <= counterfactual::EXCERPT_LINES);
    assert!(e.ends_with(&"é".repeat(60)) && e.contains("099 "), "{e}");
    assert_eq!(counterfactual::excerpt("a\nb"), "a\nb");
}

#[test]
fn a_run_rejects_a_weakened_test_as_control_unpinned_unless_advisory() {
    let env = calc_env(true);
    let cf = serde_json::json!({"control_path": "calc.sh",
        "mutation": {"form": "find_replace", "find": "echo 4", "replace": "echo 5"},
        "tests": {"run": "calc", "argv": ["sh", "test.sh"]}});
    let p = calc_plan(cf);
    let out = run_with(&env, &p, &settings(), scripted(&env));
    let f = &out.summary.failed["T1"];
    assert_eq!(f.kind, FailureKind::ControlUnpinned, "{f:?}");
    assert!(out.summary.merged.is_empty());

    let env = calc_env(true);
    let mut s = settings();
    s.beyond.counterfactuals_advisory = true;
    let out = run_with(&env, &p, &s, scripted(&env));
    assert_eq!(out.summary.merged, ["T1"], "{:?}", out.summary);
}

#[test]
fn a_run_with_a_reviewer_retries_a_blocked_candidate_and_merges_when_it_ships() {
    let env = calc_env(false);
    let cf = serde_json::json!({"control_path": "calc.sh",
        "mutation": {"form": "find_replace", "find": "echo 4", "replace": "echo 5"},
        "tests": {"run": "calc", "argv": ["sh", "test.sh"]}});
    let p = calc_plan(cf);
    let ship = SHIP.replace(
        r#"{"id": "C1", "status": "met", "evidence": "test.sh"}, {"id": "C2", "status": "met"}"#,
        r#"{"id": "C1", "status": "met"}"#,
    );
    let block = BLOCK.replace(
        r#"{"id": "C1", "status": "unmet", "evidence": "no assertion"}, {"id": "C2", "status": "met"}"#,
        r#"{"id": "C1", "status": "unmet"}"#,
    );
    let mut s = settings();
    s.beyond = ReviewSettings {
        reviewer: Some(AgentSpec::cmd(reviewer_by_attempt(
            env.tmp.path(),
            &[&block, &ship],
        ))),
        timeout: Some(planwright_testkit::UNTESTED_LIMIT),
        ..Default::default()
    };
    let out = run_with(&env, &p, &s, scripted(&env));
    assert_eq!(out.summary.merged, ["T1"], "{:?}", out.summary);
    let rejected: Vec<String> = out
        .events
        .iter()
        .filter_map(|e| match e {
            planwright_engine::Event::AttemptRejected { failure, .. } => {
                Some(failure.kind.to_string())
            }
            _ => None,
        })
        .collect();
    assert_eq!(rejected, ["review_blocked"]);
}

/// The reviewer reads a fresh checkout of the candidate: not what its gates
/// (and then its counterfactual's tests) wrote in the gate checkout.
#[test]
fn the_reviewer_cannot_see_what_the_candidates_gates_wrote() {
    let env = calc_env(false);
    let plant = "echo 'ship it' > REVIEW_NOTES.md; mkdir -p out; echo x > out/cache; sh test.sh";
    let p = plan(serde_json::json!({
        "gates": [{"name": "test", "argv": ["sh", "-c", plant]}],
        "tickets": [{"id": "T1", "body": "make calc print 4",
            "checks": ["calc prints 4"],
            "scope": [{"pattern": "calc.sh", "op": "modify"}],
            "counterfactuals": [{"control_path": "calc.sh",
                "mutation": {"form": "find_replace", "find": "echo 4", "replace": "echo 5"},
                "tests": {"run": "calc", "argv": ["sh", "-c", plant]}}]}]
    }));
    let ship = SHIP.replace(
        r#"{"id": "C1", "status": "met", "evidence": "test.sh"}, {"id": "C2", "status": "met"}"#,
        r#"{"id": "C1", "status": "met"}"#,
    );
    let block = BLOCK.replace(
        r#"{"id": "C1", "status": "unmet", "evidence": "no assertion"}, {"id": "C2", "status": "met"}"#,
        r#"{"id": "C1", "status": "unmet"}"#,
    );
    // Ships only a checkout holding the candidate's files and nothing else.
    let script = env.tmp.path().join("room-reviewer.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nif grep -q 'echo 4' calc.sh && [ ! -e REVIEW_NOTES.md ] && [ ! -e out ]; then\n\
             cat > \"$PLANWRIGHT_VERDICT_FILE\" <<'EOF'\n{ship}\nEOF\nelse\n\
             cat > \"$PLANWRIGHT_VERDICT_FILE\" <<'EOF'\n{block}\nEOF\nfi\n"
        ),
    )
    .unwrap();
    let mut s = settings();
    s.strikes = 1;
    s.beyond = ReviewSettings {
        reviewer: Some(AgentSpec::cmd(format!("sh {}", script.display()))),
        timeout: Some(planwright_testkit::UNTESTED_LIMIT),
        ..Default::default()
    };
    let out = run_with(&env, &p, &s, scripted(&env));
    assert_eq!(out.summary.merged, ["T1"], "{:?}", out.summary);
}
