//! Tests of the events, their log and their reporters.
use super::*;

#[test]
fn events_are_numbered_in_order_and_flushed_per_batch() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state.db")).unwrap();
    let path = dir.path().join("events.jsonl");
    let lines = JsonLines::open(&path).unwrap();
    let (em, handle) = start(store, "r".into(), 7, vec![Box::new(lines)]);
    for t in ["A", "B"] {
        em.emit(Event::Merging { ticket: t.into() });
    }
    em.close();
    handle.join().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let seqs: Vec<u64> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(seqs, [8, 9]);
    assert!(text.contains("\"at_ms\":"), "{text}");
}

/// One event of each kind, every optional field given.
fn one_of_each() -> Vec<Event> {
    let t = || "T1".to_string();
    let failure =
        || Failure::new(crate::model::failure::FailureKind::GateFailure, "m").with_evidence("e");
    let usage = Usage {
        input_tokens: 1,
        output_tokens: 2,
        cache_read_tokens: 3,
        cache_write_tokens: 4,
    };
    vec![
        Event::RunStarted {
            run: "r".into(),
            base: "main".into(),
            ticket_count: 2,
            continued: true,
        },
        Event::Removed { ticket: t() },
        Event::InputChanged {
            role: "plan".into(),
            file: "plan.json".into(),
            before: "a".into(),
            after: "b".into(),
            merged_by: vec![t()],
        },
        Event::AlreadyMerged { ticket: t() },
        Event::Changed {
            ticket: t(),
            commit: "c".into(),
        },
        Event::AttemptStarted {
            ticket: t(),
            attempt: 1,
            base_commit: "b".into(),
            starts_from: crate::model::StartsFrom::Base,
            agent: Some(AttemptAgent {
                adapter: "claude".into(),
                program: Some("claude".into()),
                model: Some("claude-sonnet-4-6".into()),
            }),
            place: Some(AttemptPlace {
                executor: "ssh".into(),
                worker: Some("ssh build-1".into()),
                slot: 2,
            }),
        },
        Event::Phase {
            ticket: t(),
            attempt: 1,
            phase: crate::model::Phase::Gates,
        },
        Event::AgentUsage {
            ticket: t(),
            attempt: 1,
            model: Some("m".into()),
            usage,
        },
        Event::AgentReported {
            ticket: t(),
            attempt: 1,
            outcome: crate::model::AgentOutcomeKind::Finished,
            model: Some("m".into()),
            usage: Some(usage),
            cost_usd: Some(0.25),
            cost_source: Some(CostSource::Computed),
            session_id: Some("s".into()),
            final_message: Some("done".into()),
        },
        Event::PoolPaused {
            ticket: t(),
            pool: Some("p".into()),
            wait_ms: 60_000,
            retry_after_ms: Some(30_000),
            until: Some("2026-12-01T15:00:00Z".into()),
            reason: "429".into(),
        },
        Event::Counterfactual {
            ticket: t(),
            attempt: 1,
            control_path: "calc.sh".into(),
            test: "sh test.sh".into(),
            outcome: crate::model::CounterfactualOutcome::Red,
            passed: true,
            message: "caught".into(),
            output_excerpt: "FAIL".into(),
        },
        Event::Review {
            ticket: t(),
            attempt: 1,
            pass: 1,
            reviewer: Some("m".into()),
            verdict: planwright_plan::verdict::Decision::Ship,
            passed: true,
            summary: "fine".into(),
            checks: vec!["C1: met".into()],
        },
        Event::PoolResumed { pool: "p".into() },
        Event::BudgetReached {
            reason: "cost".into(),
        },
        Event::AttemptRejected {
            ticket: t(),
            attempt: 1,
            failure: failure(),
            retrying: true,
        },
        Event::Merging { ticket: t() },
        Event::Merged {
            ticket: t(),
            commit: "c".into(),
        },
        Event::Failed {
            ticket: t(),
            failure: failure(),
        },
        Event::Blocked {
            ticket: t(),
            by: "T0".into(),
        },
        Event::BaseAdvanced {
            base: "main".into(),
            commit: "c".into(),
        },
        Event::MergesHeld {
            branch: "planwright/run/r".into(),
            reason: "checked out".into(),
        },
        Event::RunFinished {
            run: "r".into(),
            merged_count: 1,
            changed_count: 0,
            failed_count: 1,
            blocked_count: 0,
            interrupted: false,
        },
        Event::Contained {
            sandbox: "off".into(),
        },
        Event::BatchStarted {
            tickets: vec![t(), "T2".into()],
            tip: "a".into(),
        },
        Event::BatchVerified {
            tickets: vec![t()],
            commit: "b".into(),
            flaky: true,
        },
        Event::BatchFailed {
            tickets: vec![t(), "T2".into()],
            message: "cargo test failed".into(),
        },
        Event::Bisected {
            landed: vec![t()],
            culprit: "T2".into(),
            requeued: vec!["T3".into()],
            gate_runs: 2,
        },
        Event::Rebuild {
            ticket: t(),
            reason: crate::model::RebuildReason::Conflict,
        },
        Event::BatchCancelled {
            tickets: vec![t(), "T2".into()],
            reason: "T1 below it failed".into(),
        },
        Event::BatchLanded {
            tickets: vec![t()],
            commit: "c".into(),
        },
        Event::WorkerLost {
            ticket: t(),
            attempt: 1,
            place: "ssh build-1".into(),
            reason: "closed the connection".into(),
            slots_left: 3,
            rest_ms: 10_000,
            losses_left: 7,
        },
        Event::AgentActivity {
            ticket: t(),
            attempt: 1,
            kind: ActivityKind::ToolCall,
            text: "Write hello.txt".into(),
            status: Some("completed".into()),
        },
        Event::DiskLow {
            reason: "3 MiB free".into(),
        },
        Event::Unchanged {
            ticket: t(),
            attempt: 1,
            commit: "c".into(),
        },
        Event::GateRetried {
            ticket: t(),
            attempt: 1,
            gate: "cargo test".into(),
            message: "gate `cargo test` failed: exit code 101".into(),
            passed: true,
        },
        Event::WorkerWaiting {
            ticket: t(),
            attempt: 1,
            place: "kubernetes agents".into(),
            waiting_for: "Unschedulable: 0/3 nodes are available".into(),
        },
        Event::WorkerResumed {
            ticket: t(),
            attempt: 1,
            place: "kubernetes agents/planwright-0".into(),
            reason: "closed the connection".into(),
            after_ms: 1_500,
        },
    ]
}

/// Which kind an event is; a new kind fails to compile here until
/// [`one_of_each`] has one.
fn kind(e: &Event) -> usize {
    match e {
        Event::RunStarted { .. } => 0,
        Event::Removed { .. } => 1,
        Event::InputChanged { .. } => 2,
        Event::AlreadyMerged { .. } => 3,
        Event::Changed { .. } => 4,
        Event::AttemptStarted { .. } => 5,
        Event::Phase { .. } => 6,
        Event::AgentUsage { .. } => 7,
        Event::AgentReported { .. } => 8,
        Event::PoolPaused { .. } => 9,
        Event::Counterfactual { .. } => 10,
        Event::Review { .. } => 11,
        Event::PoolResumed { .. } => 12,
        Event::BudgetReached { .. } => 13,
        Event::AttemptRejected { .. } => 14,
        Event::Merging { .. } => 15,
        Event::Merged { .. } => 16,
        Event::Failed { .. } => 17,
        Event::Blocked { .. } => 18,
        Event::BaseAdvanced { .. } => 19,
        Event::MergesHeld { .. } => 20,
        Event::RunFinished { .. } => 21,
        Event::Contained { .. } => 22,
        Event::BatchStarted { .. } => 23,
        Event::BatchVerified { .. } => 24,
        Event::BatchFailed { .. } => 25,
        Event::Bisected { .. } => 26,
        Event::Rebuild { .. } => 27,
        Event::BatchCancelled { .. } => 28,
        Event::BatchLanded { .. } => 29,
        Event::WorkerLost { .. } => 30,
        Event::AgentActivity { .. } => 31,
        Event::DiskLow { .. } => 32,
        Event::Unchanged { .. } => 33,
        Event::GateRetried { .. } => 34,
        Event::WorkerWaiting { .. } => 35,
        Event::WorkerResumed { .. } => 36,
    }
}

#[test]
fn every_event_reads_back_as_it_was_written() {
    let events = one_of_each();
    let kinds: Vec<usize> = events.iter().map(kind).collect();
    assert_eq!(
        kinds,
        (0..=36).collect::<Vec<_>>(),
        "one of each kind, in order"
    );
    for e in events {
        let line = serde_json::to_string(&e).unwrap();
        let back: Event = serde_json::from_str(&line).unwrap_or_else(|err| panic!("{line}: {err}"));
        assert_eq!(back, e, "{line}");
    }
}

#[test]
fn a_line_of_the_log_reads_back_with_its_stamp_alongside() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let mut lines = JsonLines::open(&path).unwrap();
    let e = Stamped {
        seq: 3,
        at_ms: 1_796_076_000_250,
        event: Event::Merging { ticket: "A".into() },
    };
    lines.stamped(&e);
    lines.flush();
    let text = std::fs::read_to_string(&path).unwrap();
    let back: Event = serde_json::from_str(text.trim_end()).unwrap();
    assert_eq!(back, e.event);
}
