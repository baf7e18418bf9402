use super::*;
use crate::report::Totals;
use crate::view::RunView;
use planwright_engine::{AttemptRow, RunRow, TicketRow, TicketState};
use serde_json::{json, Value};

fn report() -> RunReport {
    let run = RunRow {
        id: "r1".into(),
        plan_path: "plan.json".into(),
        base: "main".into(),
        started_at: "2026-11-29T22:00:00Z".into(),
        finished_at: None,
        status: RunStatus::Running,
        fresh: false,
    };
    let mut view = RunView::new(&run, &[("A".into(), "a".into()), ("B".into(), "b".into())]);
    view.fold_text(concat!(
        "{\"event\":\"attempt_started\",\"ticket\":\"A\",\"attempt\":1,\"base_commit\":\"b0\"}\n",
        "{\"event\":\"pool_paused\",\"ticket\":\"A\",\"pool\":\"anthropic\",\"wait_ms\":60000,\"until\":\"2026-12-01T15:00:00Z\",\"reason\":\"429\"}\n",
    ));
    let usage = Usage {
        input_tokens: 1,
        output_tokens: 2,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
    };
    let attempt = AttemptRow {
        n: 1,
        phase: "agent".into(),
        base_commit: "b0".into(),
        candidate: None,
        started_at: "2026-11-29T22:00:01Z".into(),
        finished_at: None,
        failure: None,
        agent: Some(AgentRecord {
            agent_outcome: AgentOutcomeKind::Finished,
            model: Some("m-1".into()),
            usage: Some(usage),
            cost_usd: Some(0.5),
            cost_source: Some(CostSource::Computed),
            final_message: None,
            session_id: None,
        }),
    };
    let ticket = |id: &str, state, attempts: Vec<AttemptReport>| TicketReport {
        ticket: TicketRow {
            id: id.into(),
            title: id.to_lowercase(),
            state,
            attempt_count: attempts.len() as u32,
            failure: None,
            merge_commit: None,
            digest: None,
            candidate: None,
            verified_on: None,
            rerun_of: None,
            removed: false,
        },
        totals: Totals::default(),
        attempts,
        log: None,
        blocked_by: None,
    };
    let a = AttemptReport {
        attempt,
        duration_ms: None,
        counterfactuals: vec![],
        ran_by: Some(planwright_engine::AttemptAgent {
            adapter: "claude".into(),
            program: Some("/opt/bin/claude".into()),
            model: Some("claude-sonnet-4-6".into()),
        }),
        ran_at: Some(planwright_engine::AttemptPlace {
            executor: "kubernetes".into(),
            worker: Some("kubernetes agents".into()),
            slot: 3,
        }),
    };
    RunReport {
        run,
        totals: Totals {
            usage: Some(usage),
            cost_usd: Some(0.5),
            unpriced: 0,
        },
        tickets: vec![
            ticket("A", TicketState::Running, vec![a]),
            ticket("B", TicketState::Pending, vec![]),
        ],
        view,
        replay: None,
    }
}

#[test]
fn counts_are_named_count_and_paused_pools_are_a_list() {
    let json = serde_json::to_value(RunDocument::new(&report())).unwrap();
    let run = &json["run"];
    let counts = ["merged", "failed", "blocked", "running", "pending"]
        .map(|c| run[format!("{c}_count")].as_u64().unwrap());
    assert_eq!(counts, [0, 0, 0, 1, 1]);
    assert_eq!(
        json["paused_pools"],
        json!([{"pool": "anthropic", "reason": "429", "until": "2026-12-01T15:00:00Z"}])
    );
    // The report has no deprecated names.
    assert!(json.get("counts").is_none() && json.get("paused").is_none());
    let a = &json["tickets"][0]["attempts"][0];
    assert_eq!(a["cost_source"], "computed");
    assert_eq!(a["usage"]["output_tokens"], 2);
    // Who ran it, as its start event recorded.
    assert_eq!(a["adapter"], "claude");
    assert_eq!(a["program"], "/opt/bin/claude");
    assert_eq!(a["routed_model"], "claude-sonnet-4-6");
    // Where it ran, as its start event recorded.
    assert_eq!(a["executor"], "kubernetes");
    assert_eq!(a["worker"], "kubernetes agents");
    assert_eq!(a["slot"], 3);
    assert!(json["tickets"][1]["attempts"][0].is_null());
}

#[test]
fn status_keeps_the_old_names_beside_the_new_ones() {
    let json = serde_json::to_value(StatusDocument::new(&report())).unwrap();
    for c in ["merged", "failed", "blocked", "running", "pending"] {
        assert_eq!(json["counts"][c], json["run"][format!("{c}_count")], "{c}");
    }
    assert_eq!(json["paused"]["anthropic"]["until"], "2026-12-01T15:00:00Z");
    assert_eq!(json["paused"]["anthropic"]["reason"], "429");
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "run",
            "tickets",
            "paused_pools",
            "merge_queue",
            "counts",
            "paused"
        ]
    );
}

#[test]
fn an_attempt_without_an_agent_report_has_none_of_its_fields() {
    let mut r = report();
    r.tickets[0].attempts[0].attempt.agent = None;
    let json = serde_json::to_value(RunDocument::new(&r)).unwrap();
    let a = json["tickets"][0]["attempts"][0].as_object().unwrap();
    for field in ["agent_outcome", "model", "usage", "cost_usd", "cost_source"] {
        assert!(!a.contains_key(field), "{field}: {a:?}");
    }
    assert_eq!(a["duration_ms"], Value::Null);
}

#[test]
fn a_dead_runs_running_tickets_are_interrupted_in_states_and_counts() {
    let live = serde_json::to_value(RunDocument::new(&report())).unwrap();
    assert_eq!(live["tickets"][0]["state"], "running");
    assert_eq!(live["run"]["running_count"], 1);
    assert_eq!(live["run"]["interrupted_count"], 0);
    // As `load_report` finds a run whose process is gone.
    let mut r = report();
    r.view.process_gone();
    r.run.status = RunStatus::Interrupted;
    let json = serde_json::to_value(StatusDocument::new(&r)).unwrap();
    let states: Vec<&Value> = (json["tickets"].as_array().unwrap().iter())
        .map(|t| &t["state"])
        .collect();
    assert_eq!(states, [&json!("interrupted"), &json!("pending")]);
    assert_eq!(json["run"]["running_count"], 0);
    assert_eq!(json["run"]["interrupted_count"], 1);
    assert_eq!(json["counts"]["running"], 0);
}

#[test]
fn the_markdown_line_of_an_attempt_names_where_and_who_ran_it() {
    let r = report();
    let line = crate::report::spend_text(&r.tickets[0].attempts[0]);
    assert!(
        line.starts_with(
            "on kubernetes agents, slot 3 · adapter claude (program /opt/bin/claude) routed to claude-sonnet-4-6 · model "
        ),
        "{line}"
    );
}

#[test]
fn a_total_with_unpriced_attempts_says_it_is_a_floor() {
    use crate::report::totals_text;
    let usage = Usage {
        input_tokens: 10,
        output_tokens: 5,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
    };
    let mut ticket = Totals::default();
    ticket.add(Some(usage), Some(0.25));
    ticket.add(Some(usage), None);
    let mut run = Totals::default();
    run.add_totals(&ticket);
    run.add_totals(&ticket);
    assert_eq!(run.unpriced, 2);
    assert!(
        totals_text(&run).ends_with(", at least $0.5000 (2 attempts unpriced)"),
        "{}",
        totals_text(&run)
    );
    let mut none = Totals::default();
    none.add(Some(usage), None);
    assert!(totals_text(&none).ends_with(", cost unknown (1 attempt unpriced)"));
}

/// The ticket, attempt and agent rows of the state store are declared
/// again as `TicketJson`, `AttemptJson` and `AgentJson` (which add what the
/// report computes): every
/// field a row has, set, must reach the JSON under its name with its value,
/// so a field added to a row and not to its JSON fails here.
#[test]
fn every_field_of_a_stored_row_reaches_its_json() {
    let mut r = report();
    let row = TicketRow {
        id: "A".into(),
        title: "a".into(),
        state: TicketState::Merged,
        attempt_count: 1,
        failure: Some(Failure::new(
            planwright_engine::FailureKind::GateFailure,
            "red",
        )),
        merge_commit: Some("m1".into()),
        digest: Some("d1".into()),
        candidate: Some("c1".into()),
        verified_on: Some("v1".into()),
        rerun_of: Some("o1".into()),
        removed: true,
    };
    r.tickets[0].ticket = row.clone();
    let agent = AgentRecord {
        agent_outcome: AgentOutcomeKind::Finished,
        model: Some("m-1".into()),
        usage: Some(Usage {
            input_tokens: 1,
            output_tokens: 2,
            cache_read_tokens: 3,
            cache_write_tokens: 4,
        }),
        cost_usd: Some(0.5),
        cost_source: Some(CostSource::Computed),
        final_message: Some("done".into()),
        session_id: Some("s1".into()),
    };
    let attempt = &mut r.tickets[0].attempts[0].attempt;
    attempt.candidate = Some("c1".into());
    attempt.finished_at = Some("2026-11-29T22:00:09Z".into());
    attempt.failure = Some(Failure::new(
        planwright_engine::FailureKind::GateFailure,
        "red",
    ));
    attempt.agent = Some(agent.clone());
    let mut attempt = serde_json::to_value(&*attempt).unwrap();
    // The agent's fields stand in the attempt's JSON itself.
    attempt.as_object_mut().unwrap().remove("agent");
    let shown = serde_json::to_value(TicketJson::new(&r, &r.tickets[0])).unwrap();
    for (from, to) in [
        (serde_json::to_value(&row).unwrap(), &shown),
        (attempt, &shown["attempts"][0]),
        (serde_json::to_value(&agent).unwrap(), &shown["attempts"][0]),
    ] {
        for (key, value) in from.as_object().unwrap() {
            assert_eq!(to.get(key), Some(value), "`{key}` of the row");
        }
    }
}
