use super::*;
use planwright_engine::agent::Usage;
use planwright_engine::{Failure, FailureKind};

/// When the test's events happen (ms since the epoch).
const T0: i64 = 1_764_453_600_000;

fn started(ticket: &str, attempt: u32) -> Event {
    Event::AttemptStarted {
        ticket: ticket.into(),
        attempt,
        base_commit: "0123456789".into(),
        starts_from: StartsFrom::Base,
        agent: None,
        place: None,
    }
}

#[test]
fn the_heartbeat_names_each_running_attempt_its_phase_time_and_tokens() {
    let mut pulse = Pulse::default();
    pulse.record(T0, &started("T3", 1));
    pulse.record(T0 + 1_000, &started("T1", 2));
    let phase = |ticket: &str, phase: Phase| Event::Phase {
        ticket: ticket.into(),
        attempt: 1,
        phase,
    };
    pulse.record(T0 + 2_000, &phase("T3", Phase::Agent));
    let usage = Usage {
        input_tokens: 12_000,
        output_tokens: 300,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
    };
    pulse.record(
        T0 + 3_000,
        &Event::AgentUsage {
            ticket: "T3".into(),
            attempt: 1,
            model: None,
            usage,
        },
    );
    assert_eq!(
        pulse.lines(T0 + 150_000),
        [
            "T1 still running (attempt 2, 2m 29s)",
            "T3 still running (attempt 1, agent, 2m 30s, 12.3k tokens)",
        ]
    );
    let f = Failure::new(FailureKind::ScopeViolation, "out of scope");
    pulse.record(
        T0 + 4_000,
        &Event::AttemptRejected {
            ticket: "T1".into(),
            attempt: 2,
            failure: f,
            retrying: true,
        },
    );
    pulse.record(
        T0 + 5_000,
        &Event::Merging {
            ticket: "T3".into(),
        },
    );
    assert!(pulse.lines(T0 + 150_000).is_empty());
}

/// On a worker, the heartbeat says where; once its worker is lost,
/// that the ticket waits for a slot, not that it still runs.
#[test]
fn the_heartbeat_names_the_worker_and_a_ticket_whose_worker_was_lost() {
    let mut pulse = Pulse::default();
    let on = |ticket: &str, attempt| {
        let mut e = started(ticket, attempt);
        if let Event::AttemptStarted { place, .. } = &mut e {
            *place = Some(planwright_engine::AttemptPlace {
                executor: "ssh".into(),
                worker: Some("ssh build-2".into()),
                slot: 2,
            });
        }
        e
    };
    pulse.record(T0, &on("A", 1));
    assert_eq!(
        pulse.lines(T0 + 60_000),
        ["A still running (attempt 1, 1m 00s, on ssh build-2)"]
    );
    let lost = Event::WorkerLost {
        ticket: "A".into(),
        attempt: 1,
        place: "ssh build-2".into(),
        reason: "stopped answering".into(),
        slots_left: 1,
        rest_ms: 10_000,
        losses_left: 3,
    };
    pulse.record(T0 + 61_000, &lost);
    assert_eq!(
        pulse.lines(T0 + 90_000),
        ["A waiting for a slot (its worker at ssh build-2 was lost)"]
    );
    let resumed = Event::WorkerResumed {
        ticket: "A".into(),
        attempt: 1,
        place: "ssh build-2".into(),
        reason: "closed the connection".into(),
        after_ms: 1_500,
    };
    assert_eq!(
        super::line(&resumed).as_deref(),
        Some("A: the connection to its worker at ssh build-2 broke (closed the connection); a new one resumed the attempt after 1.5s")
    );
    pulse.record(T0 + 95_000, &on("A", 2));
    let waits = Event::WorkerWaiting {
        ticket: "A".into(),
        attempt: 2,
        place: "ssh build-2".into(),
        waiting_for: "Unschedulable: 0/1 nodes are available".into(),
    };
    pulse.record(T0 + 95_500, &waits);
    assert_eq!(
        pulse.lines(T0 + 96_000),
        ["A still running (attempt 2, 1.0s, on ssh build-2, its worker waits: Unschedulable: 0/1 nodes are available)"]
    );
    let phase = Event::Phase {
        ticket: "A".into(),
        attempt: 2,
        phase: Phase::Workspace,
    };
    pulse.record(T0 + 95_900, &phase);
    assert_eq!(
        pulse.lines(T0 + 96_000),
        ["A still running (attempt 2, workspace, 1.0s, on ssh build-2)"]
    );
}

#[test]
fn token_counts_are_short() {
    let shown: Vec<String> = [950, 12_345, 4_100_000].map(tokens_text).into();
    assert_eq!(shown, ["950", "12.3k", "4.1M"]);
}

/// A writer the test reads while the heartbeat's thread writes to it.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn the_heartbeat_writes_on_its_own_until_it_is_dropped() {
    let out = Shared::default();
    let mut beat = Heartbeat::start(out.clone(), Duration::from_millis(10));
    beat.report("2026-11-29T22:00:00Z", &started("T3", 1));
    // No event follows: the line comes from the heartbeat's own thread.
    let text = || String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !text().contains(" T3 still running (attempt 1, ") {
        assert!(std::time::Instant::now() < deadline, "no heartbeat");
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(beat);
    let before = text();
    let last = before.lines().last().unwrap();
    let (at, line) = last.split_once(' ').unwrap();
    assert!(at.ends_with('Z') && at.len() == 24, "{last}");
    assert!(line.starts_with("T3 still running (attempt 1, ") && line.ends_with("s)"));
}

#[test]
fn every_event_line() {
    let f = Failure::new(
        FailureKind::ScopeViolation,
        "modifies `README.md`, which is outside the ticket's scope",
    );
    let events = [
        Event::RunStarted {
            run: "r1".into(),
            base: "main".into(),
            ticket_count: 3,
            continued: false,
        },
        Event::RunStarted {
            run: "r1".into(),
            base: "main".into(),
            ticket_count: 3,
            continued: true,
        },
        Event::AlreadyMerged {
            ticket: "T1".into(),
        },
        Event::Removed {
            ticket: "T0".into(),
        },
        Event::AttemptStarted {
            ticket: "T2".into(),
            attempt: 1,
            base_commit: "0123456789abcdef".into(),
            starts_from: StartsFrom::Base,
            agent: None,
            place: None,
        },
        Event::Phase {
            ticket: "T2".into(),
            attempt: 1,
            phase: Phase::Agent,
        },
        Event::AttemptRejected {
            ticket: "T2".into(),
            attempt: 1,
            failure: f.clone(),
            retrying: true,
        },
        Event::AttemptRejected {
            ticket: "T2".into(),
            attempt: 2,
            failure: f.clone(),
            retrying: false,
        },
        Event::Merging {
            ticket: "T3".into(),
        },
        Event::Merged {
            ticket: "T3".into(),
            commit: "fedcba9876543210".into(),
        },
        Event::Failed {
            ticket: "T2".into(),
            failure: f,
        },
        Event::Blocked {
            ticket: "T4".into(),
            by: "T2".into(),
        },
        Event::Changed {
            ticket: "T5".into(),
            commit: "abcdef0123456789".into(),
        },
        Event::PoolPaused {
            ticket: "T6".into(),
            pool: None,
            wait_ms: 1500,
            retry_after_ms: None,
            until: None,
            reason: "429".into(),
        },
        Event::BaseAdvanced {
            base: "main".into(),
            commit: "fedcba9876543210".into(),
        },
        Event::MergesHeld {
            branch: "planwright/run/r1".into(),
            reason: "the checkout is dirty".into(),
        },
        Event::RunFinished {
            run: "r1".into(),
            merged_count: 1,
            changed_count: 0,
            failed_count: 1,
            blocked_count: 1,
            interrupted: false,
        },
        Event::RunFinished {
            run: "r1".into(),
            merged_count: 1,
            changed_count: 0,
            failed_count: 0,
            blocked_count: 0,
            interrupted: true,
        },
    ];
    let mut out = Vec::new();
    let mut plain = Plain::new(&mut out);
    for e in &events {
        plain.report("2026-11-29T22:00:00Z", e);
    }
    insta::assert_snapshot!(String::from_utf8(out).unwrap(), @r"
    2026-11-29T22:00:00Z run r1: 3 tickets onto `main`
    2026-11-29T22:00:00Z continuing run r1: 3 tickets onto `main`
    2026-11-29T22:00:00Z T1: merged by an earlier run, skipped
    2026-11-29T22:00:00Z T0: no longer in the plan; kept in the run's views as removed, with its attempts
    2026-11-29T22:00:00Z T2: attempt 1 started from 0123456789
    2026-11-29T22:00:00Z T2: attempt 1 rejected: scope_violation: modifies `README.md`, which is outside the ticket's scope, retrying with the evidence
    2026-11-29T22:00:00Z T2: attempt 2 rejected: scope_violation: modifies `README.md`, which is outside the ticket's scope
    2026-11-29T22:00:00Z T3: passed, merging
    2026-11-29T22:00:00Z T3: merged as fedcba9876
    2026-11-29T22:00:00Z T2: FAILED: scope_violation: modifies `README.md`, which is outside the ticket's scope
    2026-11-29T22:00:00Z T4: blocked, because T2 failed
    2026-11-29T22:00:00Z T5: merged as abcdef0123 from an older definition, not run again (`--rerun T5` runs it)
    2026-11-29T22:00:00Z T6: the model could not serve it (429); trying again in 2s, no strike used
    2026-11-29T22:00:00Z `main` and its checkout moved to fedcba9876
    2026-11-29T22:00:00Z the merged tickets wait on `planwright/run/r1`: the checkout is dirty
    2026-11-29T22:00:00Z run r1 finished: 1 merged, 1 failed, 1 blocked
    2026-11-29T22:00:00Z run r1 finished: 1 merged, 0 failed, 0 blocked (interrupted; run again to continue)
    ");
}

/// The brief lines (the demo's) leave out the merge queue's own steps
/// and keep what happened to each ticket.
#[test]
fn brief_lines_leave_out_the_merge_queues_own_steps() {
    let events = [
        Event::BatchStarted {
            tickets: vec!["T1".into(), "T2".into()],
            tip: "0123456789abcdef".into(),
        },
        Event::Merged {
            ticket: "T1".into(),
            commit: "fedcba9876543210".into(),
        },
    ];
    let lines = |mut plain: Plain<&mut Vec<u8>>| {
        events.iter().for_each(|e| plain.report("at", e));
    };
    let (mut brief, mut all) = (Vec::new(), Vec::new());
    lines(Plain::brief(&mut brief));
    lines(Plain::new(&mut all));
    assert_eq!(
        String::from_utf8(brief).unwrap(),
        "at T1: merged as fedcba9876\n"
    );
    assert!(String::from_utf8(all)
        .unwrap()
        .contains("merge queue: checking T1, T2"));
}

/// A started attempt's line names the previous attempt's change only when
/// its workspace holds it: never after an attempt that left none.
#[test]
fn a_started_line_names_the_earlier_change_only_when_the_workspace_holds_it() {
    let line = |starts_from| {
        describe(&Event::AttemptStarted {
            ticket: "A".into(),
            attempt: 3,
            base_commit: "0123456789".into(),
            starts_from,
            agent: None,
            place: None,
        })
        .unwrap()
    };
    assert_eq!(
        line(StartsFrom::Candidate),
        "A: attempt 3 started from 0123456789 with attempt 2's change"
    );
    assert_eq!(
        line(StartsFrom::CandidateCarried),
        "A: attempt 3 started from 0123456789 with attempt 2's change carried onto it"
    );
    for without in StartsFrom::ALL
        .iter()
        .filter(|s| !matches!(s, StartsFrom::Candidate | StartsFrom::CandidateCarried))
    {
        assert_eq!(line(*without), "A: attempt 3 started from 0123456789");
    }
}
