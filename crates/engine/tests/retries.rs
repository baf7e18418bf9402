//! Where a retry's workspace starts, end to end: the previous candidate,
//! carried onto a base that moved, or the base, saying why, in the charter
//! and the `attempt_started` event.

use planwright_engine::agent;
use planwright_engine::Event;
use planwright_engine::FailureKind;
use planwright_testkit::*;
use serde_json::json;

/// The prompt of attempt `n` of `ticket` in the run of `out`.
fn prompt(env: &Env, out: &Outcome, ticket: &str, n: u32) -> String {
    let path = (env.repo().join(".planwright/runs"))
        .join(&out.summary.run)
        .join(format!("{ticket}/attempt-{n}.prompt.md"));
    std::fs::read_to_string(path).unwrap()
}

/// A retry after a rejected candidate starts from that candidate (the
/// default), its charter saying so and showing the diff; with `[run]
/// retry_from = "base"` it starts from the base, and the charter says the
/// change was discarded.
#[test]
fn a_retry_starts_from_its_previous_candidate_unless_asked_for_the_base() {
    for from in [
        planwright_config::RetryFrom::Candidate,
        planwright_config::RetryFrom::Base,
    ] {
        let env = Env::new(&[("README.md", "hi\n")]);
        env.fixture("A", 1, "a.txt", "a\n");
        env.fixture("A", 1, "stray.txt", "oops\n");
        write(&env.fixture_dir("A", 2), "delete", "stray.txt\n");
        let plan = plan(
            json!({"gates": gate(&["true"]), "tickets": [ticket("A", json!([any("a.txt")]))]}),
        );
        let mut s = settings();
        s.retry_from = from;
        let agent =
            agent::from_name(&format!("scripted:{}", env.fixtures().display()), None).unwrap();
        let out = run_with(&env, &plan, &s, agent);
        let second = prompt(&env, &out, "A", 2);
        assert!(
            second.contains("## Where this attempt starts")
                && second.contains("+++ b/stray.txt")
                && second.contains("```diff\ndiff --git a/a.txt b/a.txt"),
            "{second}"
        );
        if from == planwright_config::RetryFrom::Candidate {
            assert_eq!(out.summary.merged, ["A"], "{:?}", out.summary);
            assert!(
                second
                    .contains("holds attempt 1's change as uncommitted changes on the base commit"),
                "{second}"
            );
            assert_eq!(git(&env.repo(), &["show", "main:a.txt"]), "a");
        } else {
            // Only the deletion was made again: nothing is left to merge.
            assert_eq!(failing_kind(&out, "A"), FailureKind::EmptyDiff);
            assert!(
                second.contains("starts from the current base: attempt 1's change was discarded (`[run] retry_from = \"base\"`)"),
                "{second}"
            );
        }
    }
}

/// A retry after an attempt that changed nothing starts from the base and
/// says so, never "with attempt 1's change".
#[test]
fn a_retry_after_an_attempt_without_change_starts_from_the_base_saying_so() {
    let env = Env::new(&[("README.md", "hi\n")]);
    std::fs::create_dir_all(env.fixture_dir("A", 1)).unwrap();
    env.fixture("A", 2, "a.txt", "a\n");
    let plan =
        plan(json!({"gates": gate(&["true"]), "tickets": [ticket("A", json!([any("a.txt")]))]}));
    let out = run_scripted(&env, &plan);
    assert_eq!(out.summary.merged, ["A"], "{:?}", out.summary);
    let second = prompt(&env, &out, "A", 2);
    assert!(
        second.contains("starts from the current base: attempt 1 left no change to start from"),
        "{second}"
    );
    let starts: Vec<(u32, &str)> = (out.events.iter())
        .filter_map(|e| match e {
            Event::AttemptStarted {
                attempt,
                starts_from,
                ..
            } => Some((*attempt, starts_from.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(starts, [(1, "base"), (2, "base_no_candidate")]);
}

/// The scripted agent, except that the first attempt of `waiter` finishes
/// only once the run's branch in `repo` moved from the base: another
/// ticket merged meanwhile.
struct AfterAMerge {
    inner: Box<dyn agent::Agent>,
    waiter: &'static str,
    repo: std::path::PathBuf,
}

impl agent::Agent for AfterAMerge {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn attempt(
        &self,
        ctx: &agent::AttemptContext,
        cancel: &planwright_engine::process::Cancel,
    ) -> Result<agent::AgentReport, planwright_engine::EngineError> {
        if ctx.ticket == self.waiter && ctx.attempt == 1 {
            let base = git(&self.repo, &["rev-parse", "main"]);
            let run_tips = || {
                let refs = [
                    "for-each-ref",
                    "--format=%(objectname)",
                    "refs/heads/planwright/run/",
                ];
                git(&self.repo, &refs)
            };
            // A bound, not a measurement: the other slot merges in seconds.
            for _ in 0..1200 {
                if run_tips().lines().any(|tip| tip != base) {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        }
        self.inner.attempt(ctx, cancel)
    }
}

/// A retry whose base moved while its first attempt ran: A's first attempt
/// ends only after B merged. A's rejected candidate is carried onto the new
/// base when it still applies there, and the retry starts afresh when it no
/// longer does (B changed the same line).
#[test]
fn a_retry_whose_base_moved_is_carried_onto_it_or_starts_afresh_when_it_conflicts() {
    for conflicts in [false, true] {
        let env = Env::new(&[("README.md", "hi\n")]);
        let a_file = if conflicts { "README.md" } else { "a.txt" };
        env.fixture("A", 1, a_file, "from A\n");
        env.fixture("A", 1, "stray.txt", "oops\n");
        write(&env.fixture_dir("A", 2), "delete", "stray.txt\n");
        if conflicts {
            // Started afresh, A must make its change again.
            env.fixture("A", 2, "README.md", "from A\n");
        }
        env.fixture("B", 0, "README.md", "from B\n");
        let plan = plan(json!({"gates": gate(&["true"]), "tickets": [
            ticket("A", json!([any(a_file)])),
            ticket("B", json!([any("README.md")])),
        ]}));
        let mut s = settings();
        s.jobs = 2;
        let scripted = format!("scripted:{}", env.fixtures().display());
        let agent = Box::new(AfterAMerge {
            inner: agent::from_name(&scripted, None).unwrap(),
            waiter: "A",
            repo: env.repo(),
        });
        let out = run_with(&env, &plan, &s, agent);
        let second = prompt(&env, &out, "A", 2);
        if conflicts {
            assert!(
                second.contains("starts from the current base: attempt 1's change no longer applies onto the base, which moved since"),
                "{second}"
            );
            assert_eq!(out.summary.merged, ["A", "B"], "{:?}", out.summary);
            // Made again on B's README, A's change is the last word.
            assert_eq!(git(&env.repo(), &["show", "main:README.md"]), "from A");
        } else {
            assert!(
                second.contains("holds attempt 1's change (carried onto the current base"),
                "{second}"
            );
            assert_eq!(out.summary.merged, ["A", "B"], "{:?}", out.summary);
            assert_eq!(git(&env.repo(), &["show", "main:a.txt"]), "from A");
            assert_eq!(git(&env.repo(), &["show", "main:README.md"]), "from B");
        }
        let files = git(&env.repo(), &["ls-tree", "--name-only", "main"]);
        assert!(!files.contains("stray.txt"), "{files}");
        // The run's record says it too, not only the charter.
        let starts: Vec<(u32, &str)> = (out.events.iter())
            .filter_map(|e| match e {
                Event::AttemptStarted {
                    ticket,
                    attempt,
                    starts_from,
                    ..
                } if ticket == "A" => Some((*attempt, starts_from.as_str())),
                _ => None,
            })
            .collect();
        let second = if conflicts {
            "base_no_longer_applies"
        } else {
            "candidate_carried"
        };
        assert_eq!(starts, [(1, "base"), (2, second)]);
    }
}
