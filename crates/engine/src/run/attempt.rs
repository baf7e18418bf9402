//! One attempt on a worker thread, and how the agent's outcome ends it.

use super::charter::{Fresh, PreviousDiff, Start};
use super::msg::{AttemptResult, Msg};
use super::shared::Shared;
use super::verification::verify_and_gate;
use crate::agent::{limits, AgentOutcome};
use crate::error::EngineError;
use crate::events::{Emitter, Event};
use crate::exec::{AttemptInput, Candidate, LocalExecutor};
use crate::git::tree::{self, Merged};
use crate::model::failure::{Failure, FailureKind};
use crate::model::Phase;
use planwright_config::RetryFrom;
use planwright_plan::model::{Gate, Ticket};
use std::sync::mpsc::Sender;
use std::time::Duration;

/// Runs [`attempt_once`] and sends its result as [`Msg::Done`]: a panic
/// is reported too, or the coordinator would wait for ever.
pub(super) fn attempt_reported(
    sh: &Shared,
    ticket: &Ticket,
    slot: usize,
    input: &AttemptInput,
    gates: &[Gate],
    tx: &Sender<Msg>,
    base: String,
) {
    let work = std::panic::AssertUnwindSafe(|| attempt_once(sh, ticket, slot, input, gates, tx));
    let result = std::panic::catch_unwind(work).unwrap_or_else(|_| {
        Err(EngineError::Internal(format!(
            "the attempt of {} panicked",
            input.ticket
        )))
    });
    let _ = tx.send(Msg::Done {
        slot,
        ticket: input.ticket.clone(),
        attempt: input.attempt,
        base,
        result,
    });
}

/// One attempt on a worker thread: the executor's candidate, recorded
/// before it is verified, then scope, rails, gate-script integrity and
/// gates, all decided here.
pub(super) fn attempt_once(
    sh: &Shared,
    ticket: &Ticket,
    slot: usize,
    input: &AttemptInput,
    gates: &[Gate],
    tx: &Sender<Msg>,
) -> Result<AttemptResult, EngineError> {
    let progress = |phase: Phase| -> Result<(), EngineError> {
        sh.store
            .set_phase(&sh.run, &input.ticket, input.attempt, phase)?;
        let _ = tx.send(Msg::Phase {
            ticket: input.ticket.clone(),
            attempt: input.attempt,
            phase,
        });
        Ok(())
    };
    // Integrity around the attempt: an error here stops the run (exit 3)
    // and nothing of this attempt is merged.
    sh.guard.check()?;
    let candidate = std::thread::scope(|scope| {
        let (name, base) = (LocalExecutor::slot(slot), input.base_commit.as_str());
        let log = (input.files).join(format!("attempt-{}.checkout.log", input.attempt));
        let warming = scope.spawn(move || warm(sh, &name, base, &log));
        let candidate = sh.executor.attempt(slot, input, &progress, sh.cancel);
        let _ = warming.join();
        candidate
    });
    sh.guard.check()?;
    let candidate = candidate?;
    if let Some(lost) = candidate.lost {
        // The machine failed, not the agent: nothing of it to record.
        return Ok(AttemptResult::Lost(lost));
    }
    if let Some(f) = candidate.setup_failed {
        // The agent never ran: nothing of it to record.
        return Ok(AttemptResult::Rejected(f));
    }
    record_agent(sh, input, &candidate)?;
    if let Some(f) = &candidate.rejected {
        return Ok(AttemptResult::Rejected(f.clone()));
    }
    let commit = match agent_verdict(candidate, sh.settings.agent_timeout) {
        Ok(commit) => commit,
        Err(result) => return Ok(result),
    };
    sh.store
        .set_candidate(&sh.run, &input.ticket, input.attempt, &commit)?;
    verify_and_gate(sh, ticket, slot, input, gates, &commit, &progress)
}

/// Makes the slot's gate checkout `name` on `base` while the agent works,
/// when it was never made: the first ticket of each slot would otherwise
/// pay for writing every file of the tree before its gates (and for the
/// set-up there), after its agent. A checkout already made is left to the
/// gates, whose reset writes only what differs. The gates prepare the
/// checkout whatever this left (a set-up that failed, a cancel), so its
/// outcome is only logged, to `log`.
fn warm(sh: &Shared, name: &str, base: &str, log: &std::path::Path) {
    if sh.checkouts.is_made(name) {
        return;
    }
    let _ = sh.checkouts.try_setup(name, base, log, sh.cancel);
}

/// Where attempt `attempt` of `id` starts on the base `base`, after the
/// failure `previous`: a first attempt from the base; a retry from the
/// previous attempt's candidate (`[run] retry_from = "candidate"`),
/// carried onto `base` with a merge when the base moved, else from the
/// base, saying why. A merge conflict's rebuild starts from the base, and
/// so does the first attempt of an invocation (`retried` is whether this
/// one already rejected an attempt of the ticket): a ticket that failed
/// and is run again starts afresh.
pub(super) fn start_point(
    sh: &Shared,
    id: &str,
    attempt: u32,
    previous: Option<&Failure>,
    base: &str,
    retried: bool,
) -> Result<Start, EngineError> {
    let Some(failure) = previous.filter(|_| attempt > 1) else {
        return Ok(Start::Base);
    };
    let last = (sh.store.attempts(&sh.run, id)?.into_iter()).find(|a| a.n == attempt - 1);
    let Some((from, candidate)) = last.and_then(|a| Some((a.base_commit, a.candidate?))) else {
        return Ok(fresh(Fresh::NoCandidate, None));
    };
    let Some(patch) = tree::patch(sh.repo, &from, &candidate)? else {
        // A candidate of an invocation long gone may have been pruned.
        return Ok(fresh(Fresh::NoCandidate, None));
    };
    if patch.is_empty() {
        // An attempt that changed nothing (`empty_diff`) leaves a candidate
        // that is its base: there is no change to start from or show.
        return Ok(fresh(Fresh::NoCandidate, None));
    }
    let diff = PreviousDiff::new(patch);
    if failure.kind == FailureKind::MergeConflict {
        return Ok(fresh(Fresh::Conflict, Some(diff)));
    }
    if !retried {
        return Ok(fresh(Fresh::EarlierRun, Some(diff)));
    }
    if sh.settings.retry_from == RetryFrom::Base {
        return Ok(fresh(Fresh::Asked, Some(diff)));
    }
    let carried = carried(sh, id, &from, &candidate)?;
    let (candidate, dropped) = (carried.commit, carried.dropped);
    if carried.empty {
        return Ok(Start::Fresh {
            why: Fresh::AllRejected,
            diff: Some(diff),
            dropped,
        });
    }
    if from == base {
        return Ok(Start::Previous {
            commit: candidate,
            base: base.to_string(),
            moved: false,
            diff,
            dropped,
        });
    }
    match tree::merge_tree(sh.repo, base, &candidate)? {
        Merged::Clean(tree) => {
            let message = format!(
                "planwright: attempt {} of {id}, carried onto the base",
                attempt - 1
            );
            let commit = crate::git::refs::commit_tree(sh.repo, &tree, base, &message)?;
            Ok(Start::Previous {
                commit,
                base: base.to_string(),
                moved: true,
                diff,
                dropped,
            })
        }
        Merged::Conflict(_) => Ok(fresh(Fresh::NoLongerApplies, Some(diff))),
    }
}

fn fresh(why: Fresh, diff: Option<PreviousDiff>) -> Start {
    Start::Fresh {
        why,
        diff,
        dropped: Vec::new(),
    }
}

/// The previous candidate of `id` (a child of `from`) less what
/// verification rejects: a retry never inherits it.
fn carried(
    sh: &Shared,
    id: &str,
    from: &str,
    candidate: &str,
) -> Result<crate::verify::carry::Carried, EngineError> {
    let ticket = sh
        .plan
        .ticket(id)
        .ok_or_else(|| EngineError::Internal(format!("no ticket {id} in the plan")))?;
    let gates = crate::verify::ticket_gates(sh.plan, ticket, &sh.settings.extra_gates);
    let none = crate::verify::Earlier::default();
    let rules = crate::verify::carry::Rules {
        ticket,
        gates: &gates,
        setups: &sh.settings.workspace.setup,
        run_rails: &sh.run_rails,
        earlier: sh.earlier.get(id).unwrap_or(&none),
    };
    crate::verify::carry::without_rejected(sh.repo, &rules, from, candidate)
}

/// Emits `agent_usage` with each running total an attempt's agent reports.
pub(super) fn usage_events(
    emitter: &Emitter,
    ticket: &str,
    attempt: u32,
) -> crate::agent::UsageSink {
    let (emitter, ticket) = (emitter.clone(), ticket.to_string());
    crate::agent::UsageSink::new(move |so_far| {
        emitter.emit(Event::AgentUsage {
            ticket: ticket.clone(),
            attempt,
            model: so_far.model.clone(),
            usage: so_far.usage,
        });
    })
}

/// Emits `worker_waiting` each time what an attempt's worker waits for
/// changes (a pod not yet scheduled, its image being pulled).
pub(super) fn waiting_events(
    emitter: &Emitter,
    ticket: &str,
    attempt: u32,
    place: crate::events::AttemptPlace,
) -> crate::exec::WaitingSink {
    let (emitter, ticket) = (emitter.clone(), ticket.to_string());
    let place = place.worker.unwrap_or_default();
    crate::exec::WaitingSink(std::sync::Arc::new(move |what: &str| {
        emitter.emit(Event::WorkerWaiting {
            ticket: ticket.clone(),
            attempt,
            place: place.clone(),
            waiting_for: planwright_plan::words::inert(what).into_owned(),
        });
    }))
}

/// Emits `worker_resumed` each time an attempt's broken connection to its
/// worker is replaced by a new one that resumed it.
pub(super) fn resumed_events(
    emitter: &Emitter,
    ticket: &str,
    attempt: u32,
    place: crate::events::AttemptPlace,
) -> crate::exec::ResumedSink {
    let (emitter, ticket) = (emitter.clone(), ticket.to_string());
    let place = place.worker.unwrap_or_default();
    crate::exec::ResumedSink(std::sync::Arc::new(move |why: &str, after| {
        emitter.emit(Event::WorkerResumed {
            ticket: ticket.clone(),
            attempt,
            place: place.clone(),
            reason: planwright_plan::words::inert(why).into_owned(),
            after_ms: after.as_millis() as u64,
        });
    }))
}

/// Emits `agent_activity` with each activity an attempt's agent reports.
pub(super) fn activity_events(
    emitter: &Emitter,
    ticket: &str,
    attempt: u32,
) -> std::sync::Arc<dyn crate::agent::ActivitySink> {
    std::sync::Arc::new(ActivityEvents {
        emitter: emitter.clone(),
        ticket: ticket.to_string(),
        attempt,
    })
}

struct ActivityEvents {
    emitter: Emitter,
    ticket: String,
    attempt: u32,
}

impl std::fmt::Debug for ActivityEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ActivityEvents({} #{})", self.ticket, self.attempt)
    }
}

impl crate::agent::ActivitySink for ActivityEvents {
    fn activity(&self, activity: &crate::agent::Activity) {
        self.emitter.emit(Event::AgentActivity {
            ticket: self.ticket.clone(),
            attempt: self.attempt,
            kind: activity.kind,
            text: activity.text.clone(),
            status: activity.status.clone(),
        });
    }
}

/// Stores and reports what the agent said (usage, cost, model, final
/// message, session id).
pub(super) fn record_agent(
    sh: &Shared,
    input: &AttemptInput,
    c: &Candidate,
) -> Result<(), EngineError> {
    // The model routing chose is the attempt's model when the CLI names none.
    let mut r = c.report.clone();
    r.model = r.model.or_else(|| input.model.clone());
    let r = &r;
    sh.store
        .record_agent(&sh.run, &input.ticket, input.attempt, r)?;
    sh.emitter.emit(Event::AgentReported {
        ticket: input.ticket.clone(),
        attempt: input.attempt,
        outcome: r.outcome.kind(),
        model: r.model.clone(),
        usage: r.usage,
        cost_usd: r.cost.map(|c| c.0),
        cost_source: r.cost.map(|c| c.1),
        session_id: r.session_id.clone(),
        final_message: r.final_message.clone(),
    });
    Ok(())
}

/// The candidate commit, or how the agent's outcome ends the attempt.
pub(super) fn agent_verdict(
    candidate: Candidate,
    timeout: Option<Duration>,
) -> Result<String, AttemptResult> {
    let agent_failed = |why: &str| {
        let (first, rest) = why_split(why);
        AttemptResult::Rejected(
            Failure::new(FailureKind::AgentFailed, format!("the agent {first}"))
                .with_evidence(rest),
        )
    };
    match candidate.report.outcome {
        AgentOutcome::Cancelled => Err(AttemptResult::Cancelled),
        AgentOutcome::TimedOut => Err(AttemptResult::Rejected(Failure::new(
            FailureKind::Timeout,
            format!(
                "the agent ran out of time after {}s",
                timeout.map_or(0, |t| t.as_secs())
            ),
        ))),
        AgentOutcome::Blocked(reason) => Err(AttemptResult::Rejected(Failure::new(
            FailureKind::AgentBlocked,
            format!("the agent gave up: {reason}"),
        ))),
        AgentOutcome::Failed(why) => Err(agent_failed(&why)),
        AgentOutcome::Unavailable {
            retry_after,
            reason,
        } => Err(AttemptResult::Unavailable {
            retry_after,
            reason,
        }),
        AgentOutcome::Finished => candidate
            .commit
            .ok_or_else(|| agent_failed("produced no commit")),
    }
}

/// The failure of a ticket whose model could not serve it `reasons.len()`
/// times in a row: the last reason in its message, each in its evidence.
pub(super) fn unavailable_failure(reasons: &[String]) -> Failure {
    let last = reasons.last().map_or("", |r| limits::last_line(r));
    let evidence: Vec<String> = reasons
        .iter()
        .enumerate()
        .map(|(i, r)| format!("{}. {}", i + 1, r.trim()))
        .collect();
    Failure::new(
        FailureKind::Unavailable,
        format!(
            "its model could not serve it {} in a row (`[agent] max_unavailable`): {last}",
            planwright_plan::words::count(reasons.len(), "time")
        ),
    )
    .with_evidence(evidence.join("\n"))
}

pub(super) fn why_split(why: &str) -> (String, String) {
    let mut lines = why.splitn(2, '\n');
    let first = lines.next().unwrap_or_default().to_string();
    let rest = lines.next().unwrap_or_default();
    let tail: Vec<&str> = rest.lines().collect();
    (first, tail[tail.len().saturating_sub(40)..].join("\n"))
}
