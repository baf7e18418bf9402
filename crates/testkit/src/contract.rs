//! The executor contract, as a test every executor must pass: the written
//! form of `planwright_engine::exec`'s module documentation, for the
//! executors to come (remote ones among them).
//!
//! [`executor_contract`] builds the executor under test with `make` for
//! each clause, on a fresh repository, and panics naming the clause that
//! does not hold.

use crate::{git, Env};
use planwright_engine::agent::{AgentOutcome, AgentSpec, Agents, AgentsSpec};
use planwright_engine::process::Cancel;
use planwright_engine::{AttemptInput, Candidate, Executor, Phase};
use std::path::Path;
use std::sync::Arc;

/// Builds the executor under test for `env`'s repository and `agents`
/// (built from settings, so that a worker elsewhere can build them too).
pub type MakeExecutor<'a> = dyn Fn(&Env, Agents) -> Arc<dyn Executor> + 'a;

/// Runs every clause of the contract against the executors `make` builds.
pub fn executor_contract(make: &MakeExecutor) {
    the_candidate_is_one_commit_on_the_base_at_its_ref(make);
    an_agent_that_does_not_finish_leaves_no_candidate(make);
    a_cancelled_attempt_ends_as_cancelled(make);
    each_attempt_starts_from_its_base_alone(make);
    slots_work_at_once_without_sharing(make);
}

/// The repository every clause starts from: one file on `main`.
fn contract_env() -> Env {
    Env::new(&[("README.md", "base\n")])
}

/// The agents of `spec`.
fn agents(spec: AgentSpec) -> Agents {
    let spec = AgentsSpec {
        run: Some(spec),
        by_family: Vec::new(),
    };
    Agents::build(&spec).unwrap()
}

/// The scripted agent of `env`'s fixtures.
pub fn scripted(env: &Env) -> Agents {
    let name = format!("scripted:{}", env.fixtures().display());
    agents(AgentSpec {
        name,
        options: Default::default(),
    })
}

/// The input of attempt `attempt` of `ticket`, from `main`'s tip.
pub fn input(env: &Env, ticket: &str, attempt: u32) -> AttemptInput {
    AttemptInput {
        ticket: ticket.into(),
        attempt,
        base_commit: env.tip(),
        start_commit: env.tip(),
        charter: format!("do {ticket}"),
        message: format!("{ticket}: the work\n\nPlanwright-Ticket: {ticket}\n"),
        files: env.tmp.path().join("files").join(ticket),
        agent_timeout: Some(crate::UNTESTED_LIMIT),
        agent: None,
        model: None,
        budget_usd: None,
        candidate_ref: format!("refs/planwright/candidates/{ticket}"),
        usage_sink: None,
        activity_sink: None,
        waiting_sink: None,
        resumed_sink: None,
    }
}

/// Attempt `input` on `slot` of `exec`, which must not fail.
pub fn attempt(exec: &dyn Executor, slot: usize, input: &AttemptInput) -> Candidate {
    let none = |_: Phase| Ok(());
    exec.attempt(slot, input, &none, &Cancel::default())
        .unwrap_or_else(|e| panic!("the attempt of {} fails: {e}", input.ticket))
}

/// The user's checkout after an attempt: exactly as before.
fn assert_checkout_untouched(env: &Env, tip: &str, clause: &str) {
    let repo = env.repo();
    assert_eq!(env.tip(), tip, "{clause}: `main` moved");
    assert_eq!(
        git(&repo, &["status", "--porcelain"]),
        "",
        "{clause}: the checkout changed"
    );
}

fn show(repo: &Path, commit: &str, path: &str) -> Option<String> {
    let out = std::process::Command::new("git")
        .current_dir(repo)
        .args(["show", &format!("{commit}:{path}")])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn the_candidate_is_one_commit_on_the_base_at_its_ref(make: &MakeExecutor) {
    let clause = "the candidate is one commit on the base, at its ref";
    let env = contract_env();
    env.fixture("T1", 0, "hello.txt", "hello\n");
    let exec = make(&env, scripted(&env));
    let input = input(&env, "T1", 1);
    let c = attempt(exec.as_ref(), 0, &input);
    assert_eq!(c.report.outcome, AgentOutcome::Finished, "{clause}");
    let commit = c.commit.unwrap_or_else(|| panic!("{clause}: no commit"));
    let repo = env.repo();
    assert_eq!(
        git(&repo, &["rev-parse", &input.candidate_ref]),
        commit,
        "{clause}: the ref"
    );
    let parents = git(&repo, &["rev-list", "--parents", "-n1", &commit]);
    assert_eq!(
        parents,
        format!("{commit} {}", input.base_commit),
        "{clause}: its parent"
    );
    assert_eq!(
        show(&repo, &commit, "hello.txt").as_deref(),
        Some("hello\n"),
        "{clause}"
    );
    let message = git(&repo, &["log", "-1", "--format=%B", &commit]);
    assert_eq!(
        message.trim(),
        input.message.trim(),
        "{clause}: the message"
    );
    assert_checkout_untouched(&env, &input.base_commit, clause);
}

fn an_agent_that_does_not_finish_leaves_no_candidate(make: &MakeExecutor) {
    let clause = "an agent that does not finish leaves no candidate";
    let env = contract_env();
    let blocked = env.fixture_dir("T1", 0);
    std::fs::write(blocked.join("blocked"), "the ticket is unclear").unwrap();
    env.fixture("T1", 0, "half.txt", "half\n");
    let exec = make(&env, scripted(&env));
    let input = input(&env, "T1", 1);
    let c = attempt(exec.as_ref(), 0, &input);
    assert!(
        matches!(c.report.outcome, AgentOutcome::Blocked(_)),
        "{clause}: {:?}",
        c.report.outcome
    );
    assert_eq!(c.commit, None, "{clause}");
    let refs = git(&env.repo(), &["for-each-ref", &input.candidate_ref]);
    assert_eq!(refs, "", "{clause}: a ref was made");
    assert_checkout_untouched(&env, &input.base_commit, clause);
}

fn a_cancelled_attempt_ends_as_cancelled(make: &MakeExecutor) {
    let clause = "a cancelled attempt ends as cancelled, with nothing made";
    let env = contract_env();
    // The agent would sleep for a minute; the cancel comes as it starts.
    let agent = agents(AgentSpec::cmd("sh -c 'sleep 60; echo late > late.txt'"));
    let exec = make(&env, agent);
    let input = input(&env, "T1", 1);
    let cancel = Cancel::default();
    let progress = |phase: Phase| {
        if phase == Phase::Agent {
            cancel.cancel();
        }
        Ok(())
    };
    let c = exec
        .attempt(0, &input, &progress, &cancel)
        .unwrap_or_else(|e| panic!("{clause}: {e}"));
    assert_eq!(c.report.outcome, AgentOutcome::Cancelled, "{clause}");
    assert_eq!(c.commit, None, "{clause}");
    assert_checkout_untouched(&env, &input.base_commit, clause);
}

fn each_attempt_starts_from_its_base_alone(make: &MakeExecutor) {
    let clause = "each attempt starts from its base, with nothing of the slot's last";
    let env = contract_env();
    env.fixture("T1", 0, "one.txt", "1\n");
    env.fixture("T2", 0, "two.txt", "2\n");
    let exec = make(&env, scripted(&env));
    let first = attempt(exec.as_ref(), 0, &input(&env, "T1", 1));
    assert!(first.commit.is_some(), "{clause}: T1 made nothing");
    let second = attempt(exec.as_ref(), 0, &input(&env, "T2", 1));
    let commit = second
        .commit
        .unwrap_or_else(|| panic!("{clause}: T2 made nothing"));
    let repo = env.repo();
    assert_eq!(
        show(&repo, &commit, "one.txt"),
        None,
        "{clause}: T1's file is in T2's"
    );
    assert_eq!(
        show(&repo, &commit, "two.txt").as_deref(),
        Some("2\n"),
        "{clause}"
    );
}

fn slots_work_at_once_without_sharing(make: &MakeExecutor) {
    let clause = "slots work at once, each on its own";
    let env = contract_env();
    for (t, f) in [("T1", "one.txt"), ("T2", "two.txt")] {
        env.fixture(t, 0, f, t);
    }
    let exec = make(&env, scripted(&env));
    let exec = exec.as_ref();
    let inputs = [input(&env, "T1", 1), input(&env, "T2", 1)];
    let commits: Vec<String> = std::thread::scope(|s| {
        let work: Vec<_> = (inputs.iter().enumerate())
            .map(|(slot, i)| s.spawn(move || attempt(exec, slot, i)))
            .collect();
        (work.into_iter())
            .map(|w| {
                let c = w.join().unwrap();
                (c.commit.clone()).unwrap_or_else(|| panic!("{clause}: no candidate: {c:?}"))
            })
            .collect()
    });
    let repo = env.repo();
    assert_eq!(show(&repo, &commits[0], "two.txt"), None, "{clause}");
    assert_eq!(show(&repo, &commits[1], "one.txt"), None, "{clause}");
    assert_eq!(
        show(&repo, &commits[1], "two.txt").as_deref(),
        Some("T2"),
        "{clause}"
    );
}
