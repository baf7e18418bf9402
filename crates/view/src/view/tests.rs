use super::*;
use planwright_engine::FailureKind;
use planwright_engine::{Event, JsonLines, Reporter, Stamped};

fn run_row() -> RunRow {
    RunRow {
        id: "r1".into(),
        plan_path: "plan.json".into(),
        base: "main".into(),
        started_at: "2026-11-29T22:00:00Z".into(),
        finished_at: None,
        status: planwright_engine::RunStatus::Running,
        fresh: false,
    }
}

fn tickets(ids: &[&str]) -> Vec<(String, String)> {
    ids.iter()
        .map(|id| (id.to_string(), format!("title {id}")))
        .collect()
}

/// Serializes events the way the engine's JSON-lines reporter does.
fn lines(events: &[(u64, Event)]) -> String {
    events
        .iter()
        .map(|(secs, e)| {
            let mut v = serde_json::to_value(e).unwrap();
            v["at"] = planwright_engine::clock::format_unix(1_796_076_000 + secs).into();
            format!("{v}\n")
        })
        .collect()
}

fn scope_failure() -> Failure {
    Failure::new(FailureKind::ScopeViolation, "modifies `README.md`").with_evidence("README.md")
}

fn a_run() -> Vec<(u64, Event)> {
    let started = |t: &str, n| Event::AttemptStarted {
        ticket: t.into(),
        attempt: n,
        base_commit: format!("base-{t}-{n}"),
        starts_from: planwright_engine::StartsFrom::Base,
        agent: None,
        place: None,
    };
    vec![
        (
            0,
            Event::RunStarted {
                run: "r1".into(),
                base: "main".into(),
                ticket_count: 3,
                continued: false,
            },
        ),
        (1, started("A", 1)),
        (1, started("B", 1)),
        (
            2,
            Event::Phase {
                ticket: "A".into(),
                attempt: 1,
                phase: planwright_engine::Phase::Gates,
            },
        ),
        (
            3,
            Event::AttemptRejected {
                ticket: "B".into(),
                attempt: 1,
                failure: scope_failure(),
                retrying: false,
            },
        ),
        (
            3,
            Event::Failed {
                ticket: "B".into(),
                failure: scope_failure(),
            },
        ),
        (
            3,
            Event::Blocked {
                ticket: "C".into(),
                by: "B".into(),
            },
        ),
        (4, Event::Merging { ticket: "A".into() }),
        (
            5,
            Event::Merged {
                ticket: "A".into(),
                commit: "c0ffee".into(),
            },
        ),
        (
            6,
            Event::RunFinished {
                run: "r1".into(),
                merged_count: 1,
                changed_count: 0,
                failed_count: 1,
                blocked_count: 1,
                interrupted: false,
            },
        ),
    ]
}

#[test]
fn a_finished_run_folds_to_its_counts_attempts_and_slots() {
    let mut view = RunView::new(&run_row(), &tickets(&["A", "B", "C"]));
    view.fold_text(&lines(&a_run()));
    let c = view.counts();
    assert_eq!(
        (c.merged, c.failed, c.blocked, c.running, c.pending),
        (1, 1, 1, 0, 0)
    );
    assert_eq!(view.run.status, planwright_engine::RunStatus::Finished);
    let a = &view.ticket("A").unwrap().attempts[0];
    assert_eq!(
        (a.outcome, a.slot, a.phase.as_str()),
        (AttemptOutcome::Merged, Some(0), "gates")
    );
    let b = &view.ticket("B").unwrap().attempts[0];
    assert_eq!((b.outcome, b.slot), (AttemptOutcome::Rejected, Some(1)));
    assert_eq!(b.failure.as_ref().unwrap().evidence, "README.md");
    assert_eq!(b.ended_ms.unwrap() - b.started_ms.unwrap(), 2000);
    assert_eq!(view.ticket("C").unwrap().blocked_by.as_deref(), Some("B"));
    assert_eq!(view.base_before.as_deref(), Some("base-A-1"));
    assert_eq!(view.base_after.as_deref(), Some("c0ffee"));
    assert_eq!(view.slot_count(), 2);
    assert_eq!(view.events, 10);
}

#[test]
fn a_slot_freed_by_one_attempt_is_reused_by_the_next() {
    let mut events = a_run();
    events.truncate(5);
    events.push((
        4,
        Event::AttemptStarted {
            ticket: "C".into(),
            attempt: 1,
            base_commit: "x".into(),
            starts_from: planwright_engine::StartsFrom::Base,
            agent: None,
            place: None,
        },
    ));
    let mut view = RunView::new(&run_row(), &tickets(&["A", "B", "C"]));
    view.fold_text(&lines(&events));
    assert_eq!(view.ticket("C").unwrap().attempts[0].slot, Some(1));
    assert_eq!(view.slot_holders(), &[Some((0, 1)), Some((2, 1))]);
    assert_eq!(view.counts().running, 2);
}

#[test]
fn half_written_and_foreign_lines_are_skipped_not_fatal() {
    let mut view = RunView::new(&run_row(), &tickets(&["A"]));
    let text = "not json\n{\"no_event\":1}\n[1,2]\n{\"event\":\"attempt_started\",\"ticket\":\"A\",\"attempt\":1,\"base_commit\":\"b\"}\n{\"event\":\"merg";
    let used = view.fold_text(text);
    assert_eq!(&text[used..], "{\"event\":\"merg");
    assert_eq!(view.skipped_lines, 3);
    assert_eq!(view.ticket("A").unwrap().state, TicketState::Running);
}

#[test]
fn a_newer_engines_log_folds_as_far_as_this_version_knows_it() {
    // What a later engine may write: fields this version does not know, an
    // event of a new kind, a failure of a new kind. The rest is used.
    let text = r#"{"seq":1,"event":"run_started","run":"r1","base":"main","ticket_count":1,"continued":false,"at_ms":1000,"new_field":true}
{"seq":2,"event":"attempt_started","ticket":"A","attempt":1,"base_commit":"b","at_ms":1500,"slot":3}
{"seq":3,"event":"something_new","ticket":"A","weird":[1]}
{"seq":4,"event":"agent_reported","ticket":"A","attempt":1,"outcome":"finished","model":"m1","usage":{"input_tokens":10,"output_tokens":5,"cache_read_tokens":0,"cache_write_tokens":0},"cost_usd":0.25,"cost_source":"reported","at_ms":2000}
{"seq":5,"event":"attempt_rejected","ticket":"A","attempt":1,"at_ms":2500,"retrying":true,"failure":{"kind":"gate_failure","message":"m"}}
{"seq":6,"event":"failed","ticket":"A","failure":{"kind":"a_kind_from_the_future","message":"m"}}
{"seq":7,"event":"pool_paused","ticket":"A","pool":"claude","wait_ms":1,"reason":"429"}
"#;
    let mut view = RunView::new(&run_row(), &tickets(&["A"]));
    view.fold_text(text);
    let a = &view.ticket("A").unwrap().attempts[0];
    assert_eq!(
        (a.slot, a.started_ms, a.ended_ms),
        (Some(0), Some(1500), Some(2500))
    );
    assert_eq!(a.model.as_deref(), Some("m1"));
    assert_eq!(
        a.cost_source,
        Some(planwright_engine::agent::CostSource::Reported)
    );
    let (usage, cost) = view.usage();
    assert_eq!(usage.unwrap().total(), 15);
    assert_eq!(cost, Some(0.25));
    assert_eq!(view.paused["claude"].reason, "429");
    // The failure of an unknown kind is not taken for one this version knows.
    assert_eq!(view.ticket("A").unwrap().state, TicketState::Pending);
    assert_eq!(view.run.started_ms, Some(1000));
    assert_eq!((view.events, view.skipped_lines), (7, 0));
}

#[test]
fn the_log_the_engine_writes_folds_with_its_millisecond_times() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let mut log = JsonLines::open(&path).unwrap();
    for (seq, (secs, event)) in a_run().into_iter().enumerate() {
        let at_ms = 1_796_076_000_000 + secs * 1000 + 250;
        log.stamped(&Stamped {
            seq: seq as u64 + 1,
            at_ms,
            event,
        });
    }
    log.flush();
    let mut view = RunView::new(&run_row(), &tickets(&["A", "B", "C"]));
    Tail::new(path).poll(&mut view).unwrap();
    assert_eq!((view.events, view.skipped_lines), (10, 0));
    assert!(view.subsecond_times);
    let b = &view.ticket("B").unwrap().attempts[0];
    assert_eq!(b.started_ms, Some(1_796_076_001_250));
    assert_eq!(view.counts().merged, 1);
}

#[test]
fn reviews_and_counterfactuals_are_the_attempts_results() {
    let mut events = a_run();
    events.truncate(2);
    events.push((
        2,
        Event::Counterfactual {
            ticket: "A".into(),
            attempt: 1,
            control_path: "calc.sh".into(),
            test: "sh test.sh".into(),
            outcome: planwright_engine::CounterfactualOutcome::Red,
            passed: true,
            message: "the tests caught it".into(),
            output_excerpt: "FAIL".into(),
        },
    ));
    events.push((
        3,
        Event::Review {
            ticket: "A".into(),
            attempt: 1,
            pass: 1,
            reviewer: Some("m-2".into()),
            verdict: planwright_plan::verdict::Decision::Block,
            passed: false,
            summary: "no".into(),
            checks: vec![],
        },
    ));
    let mut view = RunView::new(&run_row(), &tickets(&["A"]));
    view.fold_text(&lines(&events));
    let a = &view.ticket("A").unwrap().attempts[0];
    let cf = &a.counterfactuals[0];
    assert_eq!(
        (cf.name.as_str(), cf.passed, cf.detail.as_str()),
        ("sh test.sh", Some(true), "the tests caught it")
    );
    assert_eq!(cf.output_excerpt.as_deref(), Some("FAIL"));
    let review = &a.reviews[0];
    assert_eq!(
        (review.name.as_str(), review.passed, review.detail.as_str()),
        ("m-2", Some(false), "block")
    );
}

#[test]
fn a_continued_run_restarts_unmerged_tickets_and_ends_stray_attempts() {
    let mut events = a_run();
    events.truncate(3); // A and B started, then the process died.
    events.push((
        9,
        Event::RunStarted {
            run: "r1".into(),
            base: "main".into(),
            ticket_count: 3,
            continued: true,
        },
    ));
    let mut view = RunView::new(&run_row(), &tickets(&["A", "B", "C"]));
    view.fold_text(&lines(&events));
    let a = &view.ticket("A").unwrap().attempts[0];
    assert_eq!(a.outcome, AttemptOutcome::Interrupted);
    assert_eq!(view.counts().pending, 3);
    assert!(view.slot_holders().iter().all(Option::is_none));
}

#[test]
fn a_ticket_the_plan_no_longer_has_is_kept_as_removed_until_the_plan_has_it_again() {
    let mut events = a_run();
    let started = |n| {
        (
            n,
            Event::RunStarted {
                run: "r1".into(),
                base: "main".into(),
                ticket_count: 2,
                continued: true,
            },
        )
    };
    events.push(started(9));
    events.push((9, Event::Removed { ticket: "A".into() }));
    events.push((9, Event::Removed { ticket: "Z".into() }));
    events.push((
        10,
        Event::AttemptStarted {
            ticket: "C".into(),
            attempt: 1,
            base_commit: "c0ffee".into(),
            starts_from: planwright_engine::StartsFrom::Base,
            agent: None,
            place: None,
        },
    ));
    let mut view = RunView::new(&run_row(), &tickets(&["A", "B", "C"]));
    // The store says A is removed: the waves are the plan's (B before C).
    view.set_removed(["A"]);
    assert_eq!(view.waves, vec![vec![1, 2]]);
    view.waves = vec![vec![1], vec![2]];
    view.edges = vec![(1, 2)];
    let attempts_of_a = |v: &RunView| v.ticket("A").unwrap().attempts.len();
    view.fold_text(&lines(&events));
    let ids: Vec<&str> = view.tickets.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        ["A", "B", "C"],
        "kept, and Z (never a ticket) not added"
    );
    let a = view.ticket("A").unwrap();
    assert!(a.removed);
    assert!(attempts_of_a(&view) > 0, "with its attempts");
    assert!(!view.ticket("C").unwrap().removed);
    assert_eq!(view.ticket("C").unwrap().state, TicketState::Running);
    let c = view.counts();
    assert_eq!((c.removed, c.running, c.pending), (1, 1, 1));
    assert!(c
        .line(view.run.status)
        .ends_with("; 1 removed from the plan"));
    // A later invocation whose plan has A again.
    view.fold_text(&lines(&[started(11)]));
    assert!(!view.ticket("A").unwrap().removed);
    assert_eq!(view.counts().removed, 0);
}

#[test]
fn events_about_unknown_tickets_add_them() {
    let mut view = RunView::new(&run_row(), &tickets(&["A"]));
    view.fold_text("{\"event\":\"merged\",\"ticket\":\"Z\",\"commit\":\"c\"}\n");
    assert_eq!(view.ticket("Z").unwrap().state, TicketState::Merged);
    assert_eq!(view.waves, vec![vec![0, 1]]);
}

#[test]
fn times_parse_as_rfc3339() {
    assert_eq!(parse_time("1970-01-01T00:00:00Z"), Some(0));
    assert_eq!(parse_time("1970-01-01T00:00:01.5Z"), Some(1500));
    assert_eq!(parse_time("1970-01-01T01:00:00+01:00"), Some(0));
    assert_eq!(
        parse_time(&planwright_engine::clock::format_unix(1_796_074_931)),
        Some(1_796_074_931_000)
    );
    for bad in [
        "",
        "yesterday",
        "2026-13-01T00:00:00Z",
        "2026-11-29T22:00:00",
        "2026-11-29T2x:00:00Z",
    ] {
        assert_eq!(parse_time(bad), None, "{bad}");
    }
}

#[test]
fn gate_results_are_read_from_the_ticket_log() {
    let log = "== attempt 1 candidate abc\n$ npm test   (in /x)\nboom\n\n-> exit code 1\n\
               == attempt 2 candidate def\n$ npm test   (in /x)\nok\n\n-> exit code 0\n\
               -- gates again on the merged tree 123\n$ npm test   (in /y)\n\n-> exit code 0\n";
    let got = parse_gate_log(log);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].1[0].passed, Some(false));
    assert_eq!(got[1].1.len(), 2);
    assert_eq!(got[1].1[1].name, "npm test (merged tree)");
    assert_eq!(got[1].1[1].detail, "exit code 0");
}

#[test]
fn a_run_without_a_recorded_graph_says_so_and_one_with_it_draws_its_edges() {
    let mut view = RunView::new(&run_row(), &tickets(&["A", "B"]));
    assert_eq!(view.graph_note(), Some(GRAPH_NOT_RECORDED));
    assert!(view.edges.is_empty());
    view.set_graph(&planwright_engine::RunGraph {
        waves: vec![vec!["A".into()], vec!["B".into()]],
        edges: vec![("A".into(), "B".into())],
    });
    assert_eq!(view.graph_note(), None);
    assert_eq!(view.edges, vec![(0, 1)]);
    assert_eq!(
        (view.tickets[0].wave, view.tickets[1].wave, view.waves.len()),
        (0, 1, 2)
    );
}

/// The merge queue's stacks fold into `batches`, and every view's one line
/// says what was checked, what was flaky and bisected, and what is checked now.
#[test]
fn the_merge_queues_stacks_fold_into_one_line() {
    let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut view = RunView::new(&run_row(), &tickets(&["A", "B", "C", "D"]));
    view.fold_text(&lines(&[(0, a_run()[0].1.clone())]));
    assert_eq!(view.queue_line(), None);
    let started = |t: &[&str]| Event::BatchStarted {
        tickets: ids(t),
        tip: "t0".into(),
    };
    let failed = |t: &[&str]| Event::BatchFailed {
        tickets: ids(t),
        message: "npm test failed".into(),
    };
    let verified = |t: &[&str], flaky| Event::BatchVerified {
        tickets: ids(t),
        commit: "c".into(),
        flaky,
    };
    let landed = |t: &[&str]| Event::BatchLanded {
        tickets: ids(t),
        commit: "c".into(),
    };
    let events = [
        // The stack and a prefix of it, checked at once.
        started(&["A", "B", "C"]),
        started(&["A"]),
        verified(&["A"], false),
        failed(&["A", "B", "C"]),
        started(&["A", "B"]),
        failed(&["A", "B"]),
        Event::Bisected {
            landed: ids(&["A"]),
            culprit: "B".into(),
            requeued: ids(&["C"]),
            gate_runs: 3,
        },
        landed(&["A"]),
        started(&["C", "D"]),
        started(&["C"]),
        verified(&["C", "D"], true),
        Event::BatchCancelled {
            tickets: ids(&["C"]),
            reason: "C, D passed".into(),
        },
        landed(&["C", "D"]),
        started(&["B", "D"]),
    ];
    let stamped: Vec<(u64, Event)> = events.into_iter().map(|e| (5, e)).collect();
    view.fold_text(&lines(&stamped));
    let states: Vec<&str> = view.batches.iter().map(|b| b.state.as_str()).collect();
    assert_eq!(
        states,
        [
            "failed",
            "landed",
            "failed",
            "landed",
            "cancelled",
            "checking"
        ]
    );
    assert_eq!(view.batches[2].culprit.as_deref(), Some("B"));
    assert!(view.batches[3].flaky);
    assert_eq!(
        view.queue_line().unwrap(),
        "merge queue: 6 stacks checked, 3 landed from them, 1 flaky, 1 bisected (rebuilt: B); now checking B, D"
    );
}

#[test]
fn a_run_whose_process_is_gone_shows_its_running_tickets_interrupted() {
    let mut events = a_run();
    events.truncate(4); // A in its gates, B's agent working, then a kill.
    let mut view = RunView::new(&run_row(), &tickets(&["A", "B", "C"]));
    view.fold_text(&lines(&events));
    assert_eq!(view.counts().running, 2);
    view.process_gone();
    assert_eq!(view.run.status, RunStatus::Interrupted);
    let c = view.counts();
    assert_eq!((c.running, c.interrupted, c.pending), (0, 2, 1));
    assert_eq!(
        c.line(view.run.status),
        "3 tickets: 0 merged, 0 failed, 0 blocked, 2 interrupted, 1 pending"
    );
    let a = view.ticket("A").unwrap();
    assert_eq!(view.shown_state(a), ShownState::Interrupted);
    assert_eq!((a.phase.as_ref(), a.state), (None, TicketState::Running));
    let attempt = &a.attempts[0];
    assert_eq!(attempt.outcome, AttemptOutcome::Interrupted);
    assert_eq!(attempt.ended_ms, view.run.last_event_ms);
    assert!(view.slot_holders().iter().all(Option::is_none));
    // The next `run` takes the run up again.
    view.fold_text(&lines(&[(
        9,
        Event::RunStarted {
            run: "r1".into(),
            base: "main".into(),
            ticket_count: 3,
            continued: true,
        },
    )]));
    assert_eq!(view.run.status, RunStatus::Running);
    assert_eq!((view.counts().interrupted, view.counts().pending), (0, 3));
}

#[test]
fn a_finished_run_is_never_taken_for_a_dead_one() {
    let mut view = RunView::new(&run_row(), &tickets(&["A", "B", "C"]));
    view.fold_text(&lines(&a_run()));
    view.process_gone();
    assert_eq!(view.run.status, RunStatus::Finished);
}
