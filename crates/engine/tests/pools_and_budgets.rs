//! End-to-end runs of the engine where the model is unavailable, pools
//! pause, merges conflict for good, and budgets stop attempts.

use planwright_engine::agent;
use planwright_engine::Event;
use planwright_engine::FailureKind;
use planwright_engine::Resume;
use planwright_testkit::*;
use serde_json::json;
use std::sync::Arc;

/// An agent whose model refuses the first attempt (a rate limit).
struct RateLimitedOnce {
    calls: std::sync::atomic::AtomicU32,
}

impl agent::Agent for RateLimitedOnce {
    fn name(&self) -> &str {
        "rate-limited-once"
    }
    fn attempt(
        &self,
        ctx: &agent::AttemptContext,
        _cancel: &planwright_engine::process::Cancel,
    ) -> Result<agent::AgentReport, planwright_engine::EngineError> {
        if self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            return Ok(agent::AgentOutcome::Unavailable {
                retry_after: Some(std::time::Duration::from_millis(10)),
                reason: "429 too many requests".into(),
            }
            .into());
        }
        std::fs::write(ctx.workspace.join("a.txt"), "a\n").unwrap();
        Ok(agent::AgentReport {
            model: Some("m-1".into()),
            usage: Some(agent::Usage {
                input_tokens: 10,
                output_tokens: 5,
                cache_read_tokens: 2,
                cache_write_tokens: 0,
            }),
            cost: Some((0.25, agent::CostSource::Reported)),
            final_message: Some("done".into()),
            session_id: Some("s-1".into()),
            ..agent::AgentReport::outcome(agent::AgentOutcome::Finished)
        })
    }
}

#[test]
fn an_unavailable_model_pauses_the_ticket_without_a_strike_and_usage_is_recorded() {
    let env = Env::new(&[("README.md", "hi\n")]);
    let plan =
        plan(json!({"gates": gate(&["true"]), "tickets": [ticket("A", json!([any("a.txt")]))]}));
    let mut s = settings();
    s.strikes = 1;
    // Below the shortest pause (a minute), so that the provider's 10 ms is waited.
    s.max_pause = std::time::Duration::from_millis(10);
    let agent: Arc<dyn agent::Agent> = Arc::new(RateLimitedOnce {
        calls: Default::default(),
    });
    let out = run_resume(&env, &plan, &s, agent, Resume::default());
    assert_eq!(
        out.summary.merged,
        ["A"],
        "one strike, yet no strike was used"
    );
    assert!(out.events.iter().any(
        |e| matches!(e, Event::PoolPaused { ticket, wait_ms: 10, retry_after_ms: Some(10), reason, .. } if ticket == "A" && reason.contains("429"))
    ));
    let attempts = stored_attempts(&env, "A");
    assert_eq!(attempts.len(), 2);
    assert_eq!(attempts[0].phase, "unavailable");
    let agent = attempts[1].agent.clone().unwrap();
    assert_eq!(
        (
            agent.model.as_deref(),
            agent.cost_usd,
            agent.session_id.as_deref(),
            agent.final_message.as_deref()
        ),
        (Some("m-1"), Some(0.25), Some("s-1"), Some("done"))
    );
    assert_eq!(agent.usage.unwrap().output_tokens, 5);
    assert!(out.events.iter().any(|e| matches!(
        e,
        Event::AgentReported { cost_usd: Some(c), cost_source: Some(agent::CostSource::Reported), .. } if *c == 0.25
    )));
    // What `report` shows of them is planwright-view's (crates/view/tests/report.rs).
    let first = attempts[0].agent.clone().unwrap();
    assert_eq!(
        (first.agent_outcome, first.usage),
        (planwright_engine::AgentOutcomeKind::Unavailable, None)
    );
    assert_eq!(
        agent.agent_outcome,
        planwright_engine::AgentOutcomeKind::Finished
    );
    let db = env.repo().join(".planwright/state.db");
    let store = planwright_engine::Store::open(&db).unwrap();
    let run = store.latest_run().unwrap().unwrap();
    assert_eq!(run.status, planwright_engine::RunStatus::Finished);
}

/// The attempts of ticket `id` in the newest run, as the state store has them.
fn stored_attempts(env: &Env, id: &str) -> Vec<planwright_engine::AttemptRow> {
    let db = env.repo().join(".planwright/state.db");
    let store = planwright_engine::Store::open(&db).unwrap();
    let run = store.latest_run().unwrap().unwrap();
    store.attempts(&run.id, id).unwrap()
}

/// A and B both change `shared.txt`; B's gate holds it until A landed on
/// `main` (then runs `then`), so B's first candidate no longer merges.
fn b_after_a(env: &Env, then: &str) -> planwright_plan::Plan {
    git(&env.repo(), &["checkout", "-q", "--detach"]);
    let mut b = ticket("B", json!([any("shared.txt")]));
    let wait = format!(
        "until git -C '{}' log --format=%s main | grep -q 'A: '; do sleep 0.1; done{then}",
        env.repo().display()
    );
    b["gates"] = gate(&["sh", "-c", &wait]);
    plan(json!({"gates": gate(&["true"]), "tickets": [ticket("A", json!([any("shared.txt")])), b]}))
}

#[test]
fn a_lasting_merge_conflict_fails_as_merge_conflict_with_the_candidate_quarantined() {
    let env = Env::new(&[("shared.txt", "one\n")]);
    env.fixture("A", 0, "shared.txt", "ONE\n");
    env.fixture("B", 0, "shared.txt", "uno\n");
    let plan = b_after_a(&env, "; test \"$(cat shared.txt)\" = uno");
    let mut s = settings();
    s.strikes = 1;
    // No rebuild allowed: the conflict is B's end.
    s.merge.max_rebuilds = 0;
    let agent = agent::from_name(&format!("scripted:{}", env.fixtures().display()), None).unwrap();
    let out = run_with(&env, &plan, &s, agent);
    assert_eq!(failing_kind(&out, "B"), FailureKind::MergeConflict);
    let f = &out.summary.failed["B"];
    assert!(f.message.contains("shared.txt"), "{}", f.message);
    assert!(
        f.evidence.contains("A: ticket A"),
        "the other side's change: {}",
        f.evidence
    );
    assert_eq!(
        git(
            &env.repo(),
            &["show", "refs/planwright/quarantine/B:shared.txt"]
        ),
        "uno"
    );
    let refs = git(&env.repo(), &["for-each-ref", "--format=%(refname)"]);
    assert!(
        !refs.contains("candidates/") && !refs.contains("refs/heads/planwright/"),
        "{refs}"
    );
}

#[test]
fn the_charter_of_a_rebuild_names_the_conflict() {
    let env = Env::new(&[("shared.txt", "one\n")]);
    env.fixture("A", 0, "shared.txt", "ONE\n");
    env.fixture("B", 1, "shared.txt", "uno\n");
    env.fixture("B", 2, "shared.txt", "ONE uno\n");
    let plan = b_after_a(&env, "");
    // One strike allowed, none used: a conflict is nobody's fault.
    let mut s = settings();
    s.strikes = 1;
    let agent = agent::from_name(&format!("scripted:{}", env.fixtures().display()), None).unwrap();
    let out = run_with(&env, &plan, &s, agent);
    assert_eq!(out.summary.merged, ["A", "B"], "{:?}", out.summary);
    let rebuilt = out.events.iter().any(
        |e| matches!(e, Event::Rebuild { ticket, reason } if ticket == "B" && *reason == planwright_engine::RebuildReason::Conflict),
    );
    assert!(rebuilt, "{:?}", out.events);
    let charter = std::fs::read_to_string(
        env.repo()
            .join(".planwright/runs")
            .join(&out.summary.run)
            .join("B/attempt-2.prompt.md"),
    )
    .unwrap();
    for needle in ["could not be merged", "- shared.txt", "A: ticket A"] {
        assert!(charter.contains(needle), "{needle} missing in:\n{charter}");
    }
}

/// A routing table of two models for tier `mid`, `x` first, each in its own pool.
fn two_pools() -> planwright_config::Routing {
    let model = |name: &str| planwright_config::Model {
        name: name.into(),
        family: format!("f{name}"),
        tiers: vec!["mid".into()],
        pool: format!("p{name}"),
    };
    planwright_config::Routing {
        models: vec![model("x"), model("y")],
        caps: Default::default(),
        ..Default::default()
    }
}

/// The model recorded for each attempt of `id`.
fn attempt_models(env: &Env, id: &str) -> Vec<Option<String>> {
    stored_attempts(env, id)
        .iter()
        .map(|a| a.agent.as_ref().and_then(|g| g.model.clone()))
        .collect()
}

#[test]
fn a_rate_limited_pool_pauses_and_its_tickets_move_to_another_pools_model() {
    let env = Env::new(&[("README.md", "hi\n")]);
    // Model x is rate-limited for two hours; model y works.
    let agent = sh_agent(
        &env,
        "#!/bin/sh\nif [ \"$2\" = x ]; then echo 'Error: rate limit exceeded, retry in 2h' >&2; exit 1; fi\ncd \"$1\"\necho \"$2\" > \"$PLANWRIGHT_TICKET.txt\"\n",
        "{worktree} {model}",
    );
    let mut a = ticket("A", json!([any("A.txt")]));
    a["tier"] = "mid".into();
    let mut b = ticket("B", json!([any("B.txt")]));
    b["tier"] = "mid".into();
    b["depends_on"] = json!(["A"]);
    let plan = plan(json!({"gates": gate(&["true"]), "tickets": [a, b]}));
    let mut s = settings();
    s.jobs = 1;
    s.strikes = 1;
    s.routing = two_pools();
    let out = run_with(&env, &plan, &s, agent);
    assert_eq!(out.summary.merged, ["A", "B"], "{:?}", out.summary);
    let paused: Vec<_> = out
        .events
        .iter()
        .filter_map(|e| match e {
            Event::PoolPaused {
                ticket,
                pool,
                wait_ms,
                until,
                ..
            } => Some((ticket.clone(), pool.clone(), *wait_ms, until.is_some())),
            _ => None,
        })
        .collect();
    assert_eq!(paused.len(), 1, "{paused:?}");
    let (ticket, pool, wait_ms, until) = paused[0].clone();
    assert_eq!(
        (ticket.as_str(), pool.as_deref(), until),
        ("A", Some("px"), true)
    );
    assert!(wait_ms > 3_600_000, "paused until the reset: {wait_ms}");
    let some = |m: &str| Some(m.to_string());
    assert_eq!(attempt_models(&env, "A"), [some("x"), some("y")]);
    assert_eq!(attempt_models(&env, "B"), [some("y")], "B never tried x");
    assert_eq!(git(&env.repo(), &["show", "main:B.txt"]), "y");
}

#[test]
fn a_pool_paused_by_an_earlier_invocation_stays_paused_when_the_run_continues() {
    let env = Env::new(&[("README.md", "hi\n")]);
    // Model x is rate-limited for two hours throughout; model y fails the
    // first invocation and works in the second.
    let script = |y_works: bool| {
        let y = if y_works {
            "cd \"$1\"\necho \"$2\" > A.txt\n"
        } else {
            "echo 'y is broken today' >&2; exit 1\n"
        };
        format!("#!/bin/sh\nif [ \"$2\" = x ]; then echo 'Error: rate limit exceeded, retry in 2h' >&2; exit 1; fi\n{y}")
    };
    let mut a = ticket("A", json!([any("A.txt")]));
    a["tier"] = "mid".into();
    let plan = plan(json!({"gates": gate(&["true"]), "tickets": [a]}));
    let mut s = settings();
    s.jobs = 1;
    s.strikes = 1;
    s.routing = two_pools();
    let first = run_with(
        &env,
        &plan,
        &s,
        sh_agent(&env, &script(false), "{worktree} {model}"),
    );
    assert!(
        first.summary.failed.contains_key("A"),
        "{:?}",
        first.summary
    );
    let second = run_with(
        &env,
        &plan,
        &s,
        sh_agent(&env, &script(true), "{worktree} {model}"),
    );
    assert_eq!(
        second.summary.run, first.summary.run,
        "the same run continued"
    );
    assert_eq!(second.summary.merged, ["A"], "{:?}", second.summary);
    let some = |m: &str| Some(m.to_string());
    assert_eq!(
        attempt_models(&env, "A"),
        [some("x"), some("y"), some("y")],
        "the second invocation did not try x before its reset time"
    );
}

/// An agent whose model x is rate-limited for hours and whose model y
/// keeps the most attempts it ever ran at once; each y attempt waits (a
/// while at most) for another to join it, so two that may overlap do.
#[derive(Default)]
struct Crowd {
    on_y: std::sync::Mutex<(u32, u32)>,
    joined: std::sync::Condvar,
}

impl agent::Agent for Crowd {
    fn name(&self) -> &str {
        "crowd"
    }
    fn attempt(
        &self,
        ctx: &agent::AttemptContext,
        _cancel: &planwright_engine::process::Cancel,
    ) -> Result<agent::AgentReport, planwright_engine::EngineError> {
        if ctx.model.as_deref() == Some("x") {
            return Ok(agent::AgentOutcome::Unavailable {
                retry_after: Some(std::time::Duration::from_secs(7200)),
                reason: "rate limit".into(),
            }
            .into());
        }
        let mut on_y = self.on_y.lock().unwrap();
        on_y.0 += 1;
        on_y.1 = on_y.1.max(on_y.0);
        self.joined.notify_all();
        let (mut on_y, _) = self
            .joined
            .wait_timeout_while(on_y, std::time::Duration::from_secs(2), |n| n.0 < 2)
            .unwrap();
        on_y.0 -= 1;
        drop(on_y);
        std::fs::write(ctx.workspace.join(format!("{}.txt", ctx.ticket)), "y\n").unwrap();
        Ok(agent::AgentOutcome::Finished.into())
    }
}

#[test]
fn tickets_moved_to_another_pool_count_against_its_cap() {
    let env = Env::new(&[("README.md", "hi\n")]);
    let mut tickets = Vec::new();
    for id in ["A", "B"] {
        let mut t = ticket(id, json!([any(&format!("{id}.txt"))]));
        t["tier"] = "mid".into();
        tickets.push(t);
    }
    let plan = plan(json!({"gates": gate(&["true"]), "tickets": tickets}));
    let mut s = settings();
    s.jobs = 2;
    s.routing = two_pools();
    s.routing.caps.insert("py".into(), 1);
    let crowd = Arc::new(Crowd::default());
    let out = run_resume(&env, &plan, &s, crowd.clone(), Resume::default());
    assert_eq!(out.summary.merged.len(), 2, "{:?}", out.summary);
    let some = |m: &str| Some(m.to_string());
    for id in ["A", "B"] {
        assert_eq!(attempt_models(&env, id), [some("x"), some("y")]);
    }
    assert_eq!(
        crowd.on_y.lock().unwrap().1,
        1,
        "py is capped at one attempt"
    );
}

/// An agent (in-process, so it may keep count) whose first call is
/// rate-limited for a second; it reports no model of its own.
struct LimitedOnce {
    calls: std::sync::atomic::AtomicU32,
}

impl agent::Agent for LimitedOnce {
    fn name(&self) -> &str {
        "limited-once"
    }
    fn attempt(
        &self,
        ctx: &agent::AttemptContext,
        _cancel: &planwright_engine::process::Cancel,
    ) -> Result<agent::AgentReport, planwright_engine::EngineError> {
        if self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            return Ok(agent::AgentOutcome::Unavailable {
                retry_after: Some(std::time::Duration::from_secs(1)),
                reason: "quota exceeded".into(),
            }
            .into());
        }
        std::fs::write(ctx.workspace.join("P.txt"), "p\n").unwrap();
        Ok(agent::AgentOutcome::Finished.into())
    }
}

#[test]
fn a_pinned_ticket_waits_for_its_pool_and_one_probe_reopens_it() {
    let env = Env::new(&[("README.md", "hi\n")]);
    let mut p = ticket("P", json!([any("P.txt")]));
    p["model"] = "x".into();
    let plan = plan(json!({"gates": gate(&["true"]), "tickets": [p]}));
    let mut s = settings();
    s.strikes = 1;
    s.routing = two_pools();
    // Below the shortest pause (a minute), so that the provider's second is waited.
    s.max_pause = std::time::Duration::from_secs(1);
    let agent: Arc<dyn agent::Agent> = Arc::new(LimitedOnce {
        calls: Default::default(),
    });
    let out = run_resume(&env, &plan, &s, agent, Resume::default());
    assert_eq!(out.summary.merged, ["P"], "{:?}", out.summary);
    let some = |m: &str| Some(m.to_string());
    assert_eq!(
        attempt_models(&env, "P"),
        [some("x"), some("x")],
        "the routed model is recorded, and a pinned ticket has no other"
    );
    let resumed = out
        .events
        .iter()
        .position(|e| matches!(e, Event::PoolResumed { pool } if pool == "px"));
    let paused = out
        .events
        .iter()
        .position(|e| matches!(e, Event::PoolPaused { pool: Some(p), .. } if p == "px"));
    assert!(paused.is_some() && resumed > paused, "{:?}", out.events);
}

/// An agent whose every attempt costs a dollar, keeping the budget each
/// ticket's attempt was given; it writes the ticket's file unless told not to.
struct CostsADollar {
    budgets: std::sync::Mutex<Vec<(String, Option<String>)>>,
    idle: bool,
}

impl agent::Agent for CostsADollar {
    fn name(&self) -> &str {
        "costs-a-dollar"
    }
    fn attempt(
        &self,
        ctx: &agent::AttemptContext,
        _cancel: &planwright_engine::process::Cancel,
    ) -> Result<agent::AgentReport, planwright_engine::EngineError> {
        let budget = ctx
            .env
            .iter()
            .find(|(k, _)| k == agent::BUDGET_ENV)
            .map(|(_, v)| v.clone());
        self.budgets
            .lock()
            .unwrap()
            .push((ctx.ticket.clone(), budget));
        if !self.idle {
            std::fs::write(ctx.workspace.join(format!("{}.txt", ctx.ticket)), "x\n").unwrap();
        }
        Ok(agent::AgentReport {
            cost: Some((1.0, agent::CostSource::Reported)),
            ..agent::AgentReport::outcome(agent::AgentOutcome::Finished)
        })
    }
}

fn costs_a_dollar(idle: bool) -> Arc<CostsADollar> {
    Arc::new(CostsADollar {
        budgets: Default::default(),
        idle,
    })
}

#[test]
fn a_run_budget_stops_new_attempts_and_a_raised_one_continues() {
    let env = Env::new(&[("README.md", "hi\n")]);
    let mut b = ticket("B", json!([any("B.txt")]));
    b["depends_on"] = json!(["A"]);
    let mut c = ticket("C", json!([any("C.txt")]));
    c["depends_on"] = json!(["B"]);
    let plan = plan(
        json!({"gates": gate(&["true"]), "tickets": [ticket("A", json!([any("A.txt")])), b, c]}),
    );
    let mut s = settings();
    s.budget.max_cost_usd = Some(2.0);
    let agent = costs_a_dollar(false);
    let out = run_resume(&env, &plan, &s, agent.clone(), Resume::default());
    assert_eq!(out.summary.merged, ["A", "B"], "{:?}", out.summary);
    let why = out
        .summary
        .budget
        .clone()
        .expect("the budget stopped the run");
    assert!(why.contains("$2.00 of $2.00"), "{why}");
    assert!(!out.summary.all_merged());
    assert!(out
        .events
        .iter()
        .any(|e| matches!(e, Event::BudgetReached { .. })));
    s.budget.max_cost_usd = Some(10.0);
    let again = run_resume(&env, &plan, &s, agent.clone(), Resume::default());
    assert!(again.summary.all_merged(), "{:?}", again.summary);
    assert_eq!(again.summary.merged, ["A", "B", "C"]);
    let given = agent.budgets.lock().unwrap().clone();
    let dollars = |v: &str| Some(v.to_string());
    assert_eq!(
        given,
        [
            ("A".to_string(), dollars("2.0000")),
            ("B".to_string(), dollars("1.0000")),
            ("C".to_string(), dollars("8.0000")),
        ],
        "what is left of the run's budget, counted across invocations"
    );
}

/// An agent whose attempts report tokens of a model the price table does
/// not know (`gpt-9-mock`), and no cost.
struct Unpriced;

impl agent::Agent for Unpriced {
    fn name(&self) -> &str {
        "unpriced"
    }
    fn attempt(
        &self,
        ctx: &agent::AttemptContext,
        _cancel: &planwright_engine::process::Cancel,
    ) -> Result<agent::AgentReport, planwright_engine::EngineError> {
        std::fs::write(ctx.workspace.join(format!("{}.txt", ctx.ticket)), "x\n").unwrap();
        Ok(agent::AgentReport {
            model: Some("gpt-9-mock".into()),
            usage: Some(agent::Usage {
                input_tokens: 1000,
                output_tokens: 1000,
                cache_read_tokens: 0,
                cache_write_tokens: 0,
            }),
            ..agent::AgentReport::outcome(agent::AgentOutcome::Finished)
        })
    }
}

/// A model without a price leaves the attempt's cost unknown, and the
/// budget still counts it: its tokens at the dearest `gpt-` rates
/// (gpt-5.5's $5 and $30 a million: $0.035), so a $0.02 budget stops the
/// run after one attempt.
#[test]
fn a_budget_counts_unpriced_tokens_at_their_familys_highest_price() {
    let env = Env::new(&[("README.md", "hi\n")]);
    let mut b = ticket("B", json!([any("B.txt")]));
    b["depends_on"] = json!(["A"]);
    let plan =
        plan(json!({"gates": gate(&["true"]), "tickets": [ticket("A", json!([any("A.txt")])), b]}));
    let mut s = settings();
    s.budget.max_cost_usd = Some(0.02);
    let out = run_resume(&env, &plan, &s, Arc::new(Unpriced), Resume::default());
    assert_eq!(out.summary.merged, ["A"], "{:?}", out.summary);
    let why = out
        .summary
        .budget
        .clone()
        .expect("the budget stopped the run");
    assert!(
        why.contains(
            "$0.03 of $0.02, 1 attempt unpriced counted at their model family's highest price"
        ),
        "{why}"
    );
    let a = stored_attempts(&env, "A");
    let reported = a[0].agent.as_ref().expect("its agent record");
    assert_eq!(
        reported.cost_usd, None,
        "the attempt's own cost stays unknown"
    );
}

#[test]
fn a_ticket_budget_fails_the_ticket_with_kind_budget() {
    let env = Env::new(&[("README.md", "hi\n")]);
    let plan =
        plan(json!({"gates": gate(&["true"]), "tickets": [ticket("A", json!([any("A.txt")]))]}));
    let mut s = settings();
    s.strikes = 3;
    s.budget.ticket.max_cost_usd = Some(1.0);
    // It changes nothing: an empty diff, rejected, and its dollar is spent.
    let agent = costs_a_dollar(true);
    let out = run_resume(&env, &plan, &s, agent.clone(), Resume::default());
    assert_eq!(failing_kind(&out, "A"), FailureKind::Budget);
    assert_eq!(agent.budgets.lock().unwrap().len(), 1, "no second attempt");
}
