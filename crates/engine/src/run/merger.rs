//! The merger thread: verified candidates land one at a time.

use super::coordinator::{MergeJob, Msg};
use super::routes::ticket_gates;
use super::session::Shared;
use crate::error::EngineError;
use crate::git::merge;
use crate::model::Step;
use crate::run::merge::{Merge, MergeOutcome, StackMember};
use planwright_plan::model::Gate;
use std::path::Path;
use std::sync::mpsc::{Receiver, Sender};

/// At most this many verified candidates are checked as one stack: one
/// gate run for all of them when they pass together.
const BATCH: usize = 8;

/// The merger thread: lands the verified candidates waiting as one batch
/// when they pass together, else one at a time.
pub(super) fn merger(sh: &Shared, jobs: Receiver<MergeJob>, tx: Sender<Msg>) {
    while let Ok(first) = jobs.recv() {
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let landed = guarded("a batch merge", || land_batch(sh, &batch));
        let landed = match landed {
            Ok(landed) => landed,
            Err(e) => {
                // The error stops the run; the others stay verified.
                report(&tx, &batch[0], Err(e));
                for job in &batch[1..] {
                    report(&tx, job, Ok(MergeOutcome::Cancelled));
                }
                continue;
            }
        };
        match landed {
            Some(commits) => {
                for (job, commit) in batch.iter().zip(commits) {
                    report(&tx, job, Ok(MergeOutcome::Merged { commit }));
                }
            }
            None => {
                for job in &batch {
                    let result = guarded(&format!("the merge of {}", job.ticket), || land(sh, job));
                    report(&tx, job, result);
                }
            }
        }
    }
}

/// `work`'s result, or an internal error naming `what` if it panicked: a
/// panic in one merge must reach the coordinator, not end the thread.
fn guarded<T>(what: &str, work: impl FnOnce() -> Result<T, EngineError>) -> Result<T, EngineError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
        .unwrap_or_else(|_| Err(EngineError::Internal(format!("{what} panicked"))))
}

/// The merge of `gates` on the run's target, its output into `log`.
fn merge_with<'a>(sh: &'a Shared, gates: &'a [Gate], log: &'a Path) -> Merge<'a> {
    Merge {
        repo: sh.repo,
        target: &sh.target,
        checkouts: &sh.checkouts,
        gates,
        gate_settings: &sh.settings.gates,
        log,
    }
}

fn report(tx: &Sender<Msg>, job: &MergeJob, result: Result<MergeOutcome, EngineError>) {
    let _ = tx.send(Msg::Landed {
        ticket: job.ticket.clone(),
        attempt: job.attempt,
        result,
    });
}

/// Lands a batch of two or more members sharing their gates as one stack;
/// `None` when it is a single candidate, the gates differ, or the stack
/// does not pass (the members then land one at a time).
fn land_batch(sh: &Shared, batch: &[MergeJob]) -> Result<Option<Vec<String>>, EngineError> {
    if batch.len() < 2 || sh.cancel.is_cancelled() {
        return Ok(None);
    }
    let gates_of =
        |job: &MergeJob| ticket_gates(sh.plan, sh.ticket(&job.ticket), &sh.settings.extra_gates);
    let gates = gates_of(&batch[0]);
    if batch.iter().skip(1).any(|job| gates_of(job) != gates) {
        return Ok(None);
    }
    let ids: Vec<&str> = batch.iter().map(|j| j.ticket.as_str()).collect();
    let refs: Vec<String> = ids.iter().map(|id| merge::candidate_ref(id)).collect();
    let messages: Vec<String> = ids.iter().map(|id| sh.message(id)).collect();
    let members: Vec<StackMember> = (batch.iter().enumerate())
        .map(|(i, job)| StackMember {
            candidate: &job.candidate,
            candidate_ref: &refs[i],
            verified_on: &job.verified_on,
            message: &messages[i],
        })
        .collect();
    let log = sh.run_dir.join(ids[0]).join("ticket.log");
    for id in &ids[1..] {
        let note = format!(
            "-- in a batch with {}; its gates are in {}\n",
            ids.join(", "),
            log.display()
        );
        crate::log::append(&sh.run_dir.join(id).join("ticket.log"), &note)?;
    }
    let merge = merge_with(sh, &gates, &log);
    let mut record = |i: usize, commit: &str| -> Result<(), EngineError> {
        Ok(sh.store.begin_merge(&sh.run, ids[i], commit)?)
    };
    let Some(commits) = merge.land_stack(&members, &mut record, sh.cancel)? else {
        return Ok(None);
    };
    for (id, commit) in ids.iter().zip(&commits) {
        sh.store.landed(&sh.run, id, Step::Merge, commit)?;
    }
    Ok(Some(commits))
}

/// Merges one verified candidate; the merge commit is recorded before the
/// target moves (and the candidate's ref goes with that move), `merged`
/// after.
pub(super) fn land(sh: &Shared, job: &MergeJob) -> Result<MergeOutcome, EngineError> {
    if sh.cancel.is_cancelled() {
        return Ok(MergeOutcome::Cancelled);
    }
    let id = job.ticket.as_str();
    let gates = ticket_gates(sh.plan, sh.ticket(id), &sh.settings.extra_gates);
    let log = sh.run_dir.join(id).join("ticket.log");
    let merge = merge_with(sh, &gates, &log);
    let mut record = |commit: &str| -> Result<(), EngineError> {
        Ok(sh.store.begin_merge(&sh.run, id, commit)?)
    };
    let outcome = merge.land(
        &job.candidate,
        &merge::candidate_ref(id),
        &job.verified_on,
        &sh.message(id),
        &mut record,
        sh.cancel,
    )?;
    if let MergeOutcome::Merged { commit } = &outcome {
        sh.store.landed(&sh.run, id, Step::Merge, commit)?;
    }
    Ok(outcome)
}
