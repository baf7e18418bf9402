//! Every executor keeps the contract of `planwright_engine::exec`: the
//! local one, and the fake one that works as a remote executor would.

use planwright_engine::agent::{Agent, Agents};
use planwright_engine::process::Cancel;
use planwright_engine::Executor;
use planwright_engine::Recorder;
use planwright_engine::{prepare, run, Resume};
use planwright_testkit::contract::executor_contract;
use planwright_testkit::{any, gate, plan, settings, ticket, Env, FakeExecutor};
use serde_json::json;
use std::sync::{Arc, Mutex};

fn fake(env: &Env, agents: Agents) -> Arc<dyn Executor> {
    let agent = agents
        .run_agent()
        .expect("the contract names the run's agent");
    Arc::new(FakeExecutor::new(
        &env.repo(),
        &env.tmp.path().join("clones"),
        agent.clone(),
    ))
}

#[test]
fn the_local_executor_keeps_the_contract() {
    executor_contract(&|env: &Env, agents: Agents| {
        let plan =
            plan(json!({"gates": gate(&["true"]), "tickets": [ticket("T1", json!([any("**")]))]}));
        let session = prepare(
            &env.repo(),
            plan,
            settings(),
            Resume::default(),
            &[],
            &agents,
        )
        .unwrap_or_else(|f| panic!("preflight failed: {:?}", f.checks));
        // What `run` sets up before its first attempt.
        std::fs::create_dir_all(session.repo().state_dir()).unwrap();
        session.repo().ensure_excluded().unwrap();
        session.repo().ensure_own_git(&[]).unwrap();
        session.local_executor()
    });
}

#[test]
fn the_fake_executor_keeps_the_contract() {
    executor_contract(&fake);
}

#[test]
fn a_run_through_an_executor_that_fetches_its_candidates_merges_them() {
    let env = Env::new(&[("README.md", "base\n")]);
    env.fixture("A", 0, "a.txt", "a\n");
    env.fixture("B", 0, "b.txt", "b\n");
    let plan = plan(json!({"gates": gate(&["true"]), "tickets": [
        ticket("A", json!([{"pattern": "a.txt", "op": "create"}])),
        {"id": "B", "title": "ticket B", "body": "do it", "depends_on": ["A"],
         "scope": [{"pattern": "b.txt", "op": "create"}]},
    ]}));
    let agent: Arc<dyn Agent> = Arc::from(
        planwright_engine::agent::from_name(
            &format!("scripted:{}", env.fixtures().display()),
            None,
        )
        .unwrap(),
    );
    let session = prepare(
        &env.repo(),
        plan,
        settings(),
        Resume::default(),
        &[],
        &Agents::from(agent.clone()),
    )
    .unwrap_or_else(|f| panic!("preflight failed: {:?}", f.checks));
    let events = Arc::new(Mutex::new(Vec::new()));
    let summary = run(
        session,
        fake(&env, Agents::from(agent)),
        vec![Box::new(Recorder(events))],
        &Cancel::default(),
    )
    .unwrap();
    assert_eq!(summary.merged, ["A", "B"]);
    let tree = planwright_testkit::git(&env.repo(), &["ls-tree", "--name-only", "main"]);
    assert_eq!(
        tree.lines().collect::<Vec<_>>(),
        ["README.md", "a.txt", "b.txt"]
    );
}
