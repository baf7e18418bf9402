//! What a run spends its time on: a gate that fails once on a candidate
//! is run again on the same tree (`[gates] flaky_retries`) before the
//! attempt is rejected, and one that fails once on a single candidate's
//! merged tree too (`[merge] flaky_retries`), so a flake costs a gate
//! run, not an agent run and a strike; and the first ticket's gate
//! checkout is made while its agent works, not after it.

use planwright_config::SandboxMode;
use planwright_engine::agent;
use planwright_engine::Event;
use planwright_testkit::*;
use serde_json::json;

/// A gate that fails the first time it sees `a.txt` and passes after:
/// it leaves a mark outside the checkout, which only an unconfined gate
/// can write.
fn flaky_once(env: &Env) -> serde_json::Value {
    let mark = env.tmp.path().join("failed-once");
    let script = format!(
        "[ -e a.txt ] || exit 0; mkdir '{}' 2>/dev/null && {{ echo flake >&2; exit 1; }}; exit 0",
        mark.display()
    );
    gate(&["sh", "-c", &script])
}

fn run_flaky(env: &Env, retries: u32) -> Outcome {
    env.fixture("A", 0, "a.txt", "a\n");
    let plan =
        plan(json!({"gates": flaky_once(env), "tickets": [ticket("A", json!([any("a.txt")]))]}));
    let mut s = settings();
    s.contain.mode = SandboxMode::Off;
    s.gates.flaky_retries = retries;
    let agent = agent::from_name(&format!("scripted:{}", env.fixtures().display()), None).unwrap();
    run_with(env, &plan, &s, agent)
}

fn attempts(out: &Outcome) -> usize {
    (out.events.iter())
        .filter(|e| matches!(e, Event::AttemptStarted { .. }))
        .count()
}

#[test]
fn a_gate_failing_once_then_passing_is_one_attempt_without_a_strike() {
    let env = Env::new(&[("README.md", "hi\n")]);
    let out = run_flaky(&env, 1);
    assert_eq!(out.summary.merged, ["A"], "{:?}", out.summary);
    assert_eq!(attempts(&out), 1, "{:?}", out.events);
    assert!(
        !(out.events.iter()).any(|e| matches!(e, Event::AttemptRejected { .. })),
        "{:?}",
        out.events
    );
    let retried: Vec<_> = (out.events.iter())
        .filter_map(|e| match e {
            Event::GateRetried {
                ticket,
                gate,
                message,
                passed,
                ..
            } => Some((ticket.as_str(), gate.as_str(), message.as_str(), *passed)),
            _ => None,
        })
        .collect();
    assert_eq!(retried.len(), 1, "{retried:?}");
    let (ticket, gate, message, passed) = retried[0];
    assert!(
        ticket == "A" && gate.starts_with("sh -c") && passed,
        "{retried:?}"
    );
    assert!(message.contains("failed: exit code 1"), "{message}");
    assert_eq!(out.summary.flaky.get(gate), Some(&1), "{:?}", out.summary);
}

#[test]
fn without_flaky_retries_a_flake_costs_an_attempt_and_a_strike() {
    let env = Env::new(&[("README.md", "hi\n")]);
    let out = run_flaky(&env, 0);
    assert_eq!(out.summary.merged, ["A"], "{:?}", out.summary);
    assert_eq!(attempts(&out), 2, "{:?}", out.events);
    assert!(out.summary.flaky.is_empty(), "{:?}", out.summary);
}

/// Two tickets verified on the same base, landed one at a time: the
/// second lands on a moved base, and its gates on the merged tree (the
/// only tree holding both files) fail once, then pass.
fn run_flaky_merge(env: &Env, retries: u32) -> Outcome {
    env.fixture("A", 0, "a.txt", "a\n");
    env.fixture("B", 0, "b.txt", "b\n");
    let mark = env.tmp.path().join("failed-once");
    let script = format!(
        "[ -e a.txt ] && [ -e b.txt ] || exit 0; mkdir '{}' 2>/dev/null && {{ echo flake >&2; exit 1; }}; exit 0",
        mark.display()
    );
    let tickets = json!([
        ticket("A", json!([any("a.txt")])),
        ticket("B", json!([any("b.txt")]))
    ]);
    let plan = plan(json!({"gates": gate(&["sh", "-c", &script]), "tickets": tickets}));
    let mut s = settings();
    s.contain.mode = SandboxMode::Off;
    s.merge.batch = 1;
    s.merge.flaky_retries = retries;
    s.strikes = 3;
    let agent = agent::from_name(&format!("scripted:{}", env.fixtures().display()), None).unwrap();
    run_with(env, &plan, &s, agent)
}

#[test]
fn a_merged_tree_failing_once_then_passing_lands_without_a_new_attempt() {
    let env = Env::new(&[("README.md", "hi\n")]);
    let out = run_flaky_merge(&env, 1);
    let mut merged = out.summary.merged.clone();
    merged.sort();
    assert_eq!(merged, ["A", "B"], "{:?}", out.summary);
    assert_eq!(attempts(&out), 2, "one each: {:?}", out.events);
    assert!(
        !(out.events.iter()).any(|e| matches!(e, Event::Rebuild { .. })),
        "{:?}",
        out.events
    );
    let retried: Vec<_> = (out.events.iter())
        .filter_map(|e| match e {
            Event::GateRetried { gate, passed, .. } => Some((gate.as_str(), *passed)),
            _ => None,
        })
        .collect();
    assert!(
        matches!(retried.as_slice(), [(gate, true)] if gate.starts_with("sh -c")),
        "{retried:?}"
    );
    assert_eq!(
        out.summary.flaky.values().sum::<u32>(),
        1,
        "{:?}",
        out.summary
    );
}

#[test]
fn without_merge_flaky_retries_a_flake_on_the_merged_tree_costs_a_rebuild() {
    let env = Env::new(&[("README.md", "hi\n")]);
    let out = run_flaky_merge(&env, 0);
    assert_eq!(out.summary.merged.len(), 2, "{:?}", out.summary);
    assert_eq!(attempts(&out), 3, "{:?}", out.events);
    assert!(out.summary.flaky.is_empty(), "{:?}", out.summary);
}

#[test]
fn the_first_tickets_gate_checkout_is_made_while_its_agent_works() {
    // The agent finishes only once the slot's gate checkout has its index
    // (made before its gates otherwise, after the agent): it waits for it,
    // and gives up after the untested limit (15 minutes) so that a
    // regression fails rather than hangs.
    let env = Env::new(&[("README.md", "hi\n")]);
    let index = env.repo().join(".planwright/index/checkout-slot-1");
    let script = env.tmp.path().join("agent.sh");
    let body = format!(
        "for i in $(seq 9000); do [ -e '{}' ] && {{ echo a > \"$1/a.txt\"; exit 0; }}; sleep 0.1; done; echo 'no gate checkout' >&2; exit 1\n",
        index.display()
    );
    std::fs::write(&script, body).unwrap();
    let cmd = format!("sh {} {{workspace}}", script.display());
    let agent = agent::from_name("cmd", Some(&cmd)).unwrap();
    let plan =
        plan(json!({"gates": gate(&["true"]), "tickets": [ticket("A", json!([any("a.txt")]))]}));
    let mut s = settings();
    s.strikes = 1;
    s.contain.mode = SandboxMode::Off;
    let out = run_with(&env, &plan, &s, agent);
    assert_eq!(out.summary.merged, ["A"], "{:?}", out.summary);
}
