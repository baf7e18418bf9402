//! The report of a run read back from what the engine's own writers leave:
//! the state store's rows and the event log. (The engine's tests show that
//! a real run writes them; these show what `report` and `status` make of
//! them.)

use planwright_engine::agent::{AgentOutcome, AgentReport, CostSource, Usage};
use planwright_engine::Repo;
use planwright_engine::Step;
use planwright_engine::{Event, JsonLines, Reporter, Stamped};
use planwright_engine::{RunRow, RunStatus, Store};
use planwright_view::{load_report, markdown, RunDocument, StatusDocument};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

const RUN: &str = "r1";
const T0: u64 = 1_796_076_000_000;

fn repo(dir: &Path) -> Repo {
    let ok = Command::new("git")
        .args(["init", "-q", "-b", "main"])
        .arg(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .unwrap()
        .success();
    assert!(ok, "git init");
    let repo = Repo::open(dir).unwrap();
    std::fs::create_dir_all(repo.state_dir()).unwrap();
    repo
}

fn store(repo: &Repo) -> Store {
    Store::open(&repo.state_dir().join("state.db")).unwrap()
}

fn usage(n: u64) -> Usage {
    Usage {
        input_tokens: n,
        output_tokens: n,
        cache_read_tokens: n,
        cache_write_tokens: 0,
    }
}

/// A run of one ticket, `A`: its first attempt's model was unavailable,
/// its second passed a counterfactual and merged.
fn finished_run(repo: &Repo) {
    let store = store(repo);
    store
        .create_run(&RunRow {
            id: RUN.into(),
            plan_path: "plan.json".into(),
            base: "main".into(),
            started_at: "2026-11-29T22:00:00Z".into(),
            finished_at: None,
            status: RunStatus::Running,
            fresh: false,
        })
        .unwrap();
    store.sync_tickets(RUN, [("A", "the ticket", "d")]).unwrap();
    let at = "2026-11-29T22:00:01Z";
    store.start_attempt(RUN, "A", 1, "base", at).unwrap();
    let unavailable = AgentOutcome::Unavailable {
        retry_after: None,
        reason: "429".into(),
    };
    store
        .record_agent(RUN, "A", 1, &AgentReport::outcome(unavailable))
        .unwrap();
    store
        .end_attempt_without_verdict(RUN, "A", 1, "unavailable", at)
        .unwrap();
    store.start_attempt(RUN, "A", 2, "base", at).unwrap();
    let report = AgentReport {
        model: Some("m-1".into()),
        usage: Some(usage(5)),
        cost: Some((0.25, CostSource::Reported)),
        final_message: Some("done".into()),
        session_id: Some("s-1".into()),
        ..AgentReport::outcome(AgentOutcome::Finished)
    };
    store.record_agent(RUN, "A", 2, &report).unwrap();
    store.verified(RUN, "A", 2, "cand", "base", at).unwrap();
    store.begin_merge(RUN, "A", "c0ffee").unwrap();
    store.landed(RUN, "A", Step::Merge, "c0ffee").unwrap();
    store
        .end_run(RUN, RunStatus::Finished, "2026-11-29T22:00:09Z")
        .unwrap();
    write_log(repo);
}

fn write_log(repo: &Repo) {
    let dir = repo.state_dir().join("runs").join(RUN);
    std::fs::create_dir_all(&dir).unwrap();
    let mut log = JsonLines::open(&dir.join("events.jsonl")).unwrap();
    let t = || "A".to_string();
    let events = [
        Event::RunStarted {
            run: RUN.into(),
            base: "main".into(),
            ticket_count: 1,
            continued: false,
        },
        Event::AttemptStarted {
            ticket: t(),
            attempt: 1,
            base_commit: "base".into(),
            starts_from: planwright_engine::StartsFrom::Base,
            agent: None,
            place: None,
        },
        Event::PoolPaused {
            ticket: t(),
            pool: Some("anthropic".into()),
            wait_ms: 10,
            retry_after_ms: None,
            until: None,
            reason: "429".into(),
        },
        Event::PoolResumed {
            pool: "anthropic".into(),
        },
        Event::AttemptStarted {
            ticket: t(),
            attempt: 2,
            base_commit: "base".into(),
            starts_from: planwright_engine::StartsFrom::Base,
            agent: None,
            place: Some(planwright_engine::AttemptPlace {
                executor: "ssh".into(),
                worker: Some("ssh build-1".into()),
                slot: 2,
            }),
        },
        Event::Counterfactual {
            ticket: t(),
            attempt: 2,
            control_path: "calc.sh".into(),
            test: "sh -c test".into(),
            outcome: planwright_engine::CounterfactualOutcome::Red,
            passed: true,
            message: "the tests caught the mutation".into(),
            output_excerpt: "calc said 5\n".into(),
        },
        Event::Merging { ticket: t() },
        Event::Merged {
            ticket: t(),
            commit: "c0ffee".into(),
        },
        // What the merge queue did, as the views show it (out of the
        // engine's order, after the merge, so the times above stay).
        Event::BatchStarted {
            tickets: vec![t(), "B".into()],
            tip: "base".into(),
        },
        Event::BatchVerified {
            tickets: vec![t(), "B".into()],
            commit: "c0ffee".into(),
            flaky: true,
        },
        Event::BatchLanded {
            tickets: vec![t(), "B".into()],
            commit: "c0ffee".into(),
        },
        Event::RunFinished {
            run: RUN.into(),
            merged_count: 1,
            changed_count: 0,
            failed_count: 0,
            blocked_count: 0,
            interrupted: false,
        },
    ];
    for (i, event) in events.into_iter().enumerate() {
        let seq = i as u64 + 1;
        let at_ms = T0 + seq * 1000;
        log.stamped(&Stamped { seq, at_ms, event });
    }
    log.flush();
}

#[test]
fn attempts_carry_the_agents_report_and_the_sums_sit_on_the_ticket_and_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    finished_run(&repo);
    let report = load_report(&repo, None).unwrap().unwrap();
    let json = serde_json::to_value(RunDocument::new(&report)).unwrap();
    let want_usage = json!({"input_tokens": 5, "output_tokens": 5, "cache_read_tokens": 5, "cache_write_tokens": 0});
    let a = &json["tickets"][0];
    let (first, second) = (&a["attempts"][0], &a["attempts"][1]);
    assert_eq!(first["phase"], "unavailable");
    assert_eq!(first["agent_outcome"], "unavailable");
    assert_eq!(first["usage"], Value::Null);
    assert_eq!(second["agent_outcome"], "finished");
    assert_eq!(second["model"], "m-1");
    assert_eq!(second["usage"], want_usage);
    assert_eq!(
        (&second["cost_usd"], &second["cost_source"]),
        (&json!(0.25), &json!("reported"))
    );
    // From its start (event 5) until its slot was freed (event 7).
    assert_eq!(second["duration_ms"], 2000, "{second}");
    assert_eq!(second["session_id"], "s-1");
    // Where each ran, as its start event recorded (the first's predates it).
    assert_eq!(first.get("executor"), None, "{first}");
    assert_eq!(
        (&second["executor"], &second["worker"], &second["slot"]),
        (&json!("ssh"), &json!("ssh build-1"), &json!(2))
    );
    for totals in [a, &json["run"]] {
        assert_eq!(totals["usage"], want_usage, "{totals}");
        assert_eq!(totals["cost_usd"], 0.25, "{totals}");
    }
    assert_eq!(json["run"]["status"], "finished");
    assert_eq!(json["run"]["merged_count"], 1);
    assert_eq!(json["paused_pools"], json!([]));
}

#[test]
fn a_counterfactuals_test_output_travels_from_its_event_into_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    finished_run(&repo);
    let report = load_report(&repo, None).unwrap().unwrap();
    let checks = &report.tickets[0].attempts[1].counterfactuals;
    assert_eq!(checks.len(), 1, "{checks:?}");
    assert_eq!(checks[0].passed, Some(true));
    assert_eq!(checks[0].output_excerpt.as_deref(), Some("calc said 5\n"));
    let md = markdown(&report);
    assert!(
        md.contains("counterfactual `sh -c test`: caught") && md.contains("calc said 5"),
        "{md}"
    );
    let json = serde_json::to_value(StatusDocument::new(&report)).unwrap();
    let cf = &json["tickets"][0]["attempts"][1]["counterfactuals"][0];
    assert_eq!(cf["output_excerpt"], "calc said 5\n");
}

#[test]
fn a_running_run_whose_process_is_gone_is_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let store = store(&repo);
    store
        .create_run(&RunRow {
            id: RUN.into(),
            plan_path: "plan.json".into(),
            base: "main".into(),
            started_at: "2026-11-29T22:00:00Z".into(),
            finished_at: None,
            status: RunStatus::Running,
            fresh: false,
        })
        .unwrap();
    let report = load_report(&repo, Some(RUN)).unwrap().unwrap();
    assert_eq!(report.run.status, RunStatus::Interrupted);
    assert!(load_report(&repo, Some("r2")).unwrap().is_none());
}

#[test]
fn the_merge_queues_stacks_are_in_the_markdown_and_the_json() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    finished_run(&repo);
    let report = load_report(&repo, None).unwrap().unwrap();
    let md = markdown(&report);
    assert!(
        md.contains("- merge queue: 1 stack checked, 2 landed from them, 1 flaky\n")
            && md.contains("## Merge queue")
            && md.contains("| 1 | A, B | landed (flaky: failed, then passed) |"),
        "{md}"
    );
    let json = serde_json::to_value(RunDocument::new(&report)).unwrap();
    assert_eq!(
        json["merge_queue"],
        json!([{"tickets": ["A", "B"], "state": "landed", "flaky": true,
                "landed": ["A", "B"], "culprit": null}])
    );
}
