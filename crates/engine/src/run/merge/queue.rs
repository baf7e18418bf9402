//! The merger thread: the merge queue. Verified candidates wait in landing
//! order; the first `[merge] batch` of them are landed together
//! ([`super::batch`]), and what a batch does not settle goes back to the
//! front of the queue.

use super::batch::{land_batch, Settled};
use crate::error::EngineError;
use crate::run::msg::{MergeJob, MergeOutcome, Msg};
use crate::run::shared::Shared;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// The merger thread: lands the verified candidates as the coordinator
/// sends them, batch by batch, until the coordinator hangs up.
pub(in crate::run) fn merger(sh: &Shared, jobs: Receiver<MergeJob>, tx: Sender<Msg>) {
    let mut queue: VecDeque<MergeJob> = VecDeque::new();
    let mut stopped = false;
    loop {
        if queue.is_empty() {
            match jobs.recv() {
                Ok(job) => queue.push_back(job),
                Err(_) => return,
            }
        }
        if stopped {
            // The disk filled up: what comes stays verified for the next run.
            for job in queue.drain(..) {
                report(&tx, &job, Ok(MergeOutcome::Cancelled));
            }
            continue;
        }
        fill(sh, &jobs, &mut queue);
        let take = queue.len().min(sh.settings.merge.batch.max(1));
        let batch: Vec<MergeJob> = queue.drain(..take).collect();
        let first = batch[0].clone();
        let rest: Vec<MergeJob> = batch[1..].to_vec();
        let result = guarded("a batch merge", || land_batch(sh, batch));
        if let Some(stop) = disk_full(sh, &result) {
            stopped = true;
            let (settled, unsettled) = after_disk_full(result, first, rest);
            for (job, outcome) in settled {
                report(&tx, &job, Ok(outcome));
            }
            let mut unsettled = unsettled.into_iter().chain(queue.drain(..));
            if let Some(job) = unsettled.next() {
                report(&tx, &job, Ok(MergeOutcome::DiskFull(stop)));
            }
            for job in unsettled {
                report(&tx, &job, Ok(MergeOutcome::Cancelled));
            }
            continue;
        }
        match result {
            Ok(Settled { outcomes, again }) => {
                for (job, outcome) in outcomes {
                    report(&tx, &job, Ok(outcome));
                }
                for job in again.into_iter().rev() {
                    queue.push_front(job);
                }
            }
            Err(e) => {
                // The error stops the run; the others stay verified.
                report(&tx, &first, Err(e));
                for job in rest.into_iter().chain(queue.drain(..)) {
                    report(&tx, &job, Ok(MergeOutcome::Cancelled));
                }
            }
        }
    }
}

/// After a batch that failed or was refused some of its members, with
/// the disk below `[run] min_free`: why the queue stops (its checkouts
/// are given back, and the store's reserve, so the run can record what
/// did land). Nothing half-written reached the target: it only ever
/// moves by compare-and-swap to a commit that was written whole.
fn disk_full(sh: &Shared, result: &Result<Settled, EngineError>) -> Option<String> {
    let refused = match result {
        Ok(settled) => !settled.outcomes.iter().all(|(_, o)| landed_or_conflict(o)),
        Err(EngineError::Integrity(_)) => false,
        Err(_) => true,
    };
    if !refused {
        return None;
    }
    let state = sh.repo.state_dir();
    let low = crate::exec::disk::low(&state, sh.settings.min_free)?;
    crate::exec::disk::noted_full();
    let merges = (2..=sh.settings.merge.checkouts.max(1)).map(|n| format!("merge-{n}"));
    for name in std::iter::once("merge".to_string()).chain(merges) {
        // The stop is said either way; a checkout left is rewritten next run.
        let _ = sh.checkouts.scrub(&name);
    }
    crate::exec::disk::release(&state);
    Some(crate::exec::disk::merge_stopped(&low))
}

/// Whether a merge settled as it would on any disk: landed, or a
/// textual conflict (git's merge of the trees, which writes nothing).
fn landed_or_conflict(outcome: &MergeOutcome) -> bool {
    match outcome {
        MergeOutcome::Merged { .. } => true,
        MergeOutcome::Rejected(f) => f.kind == crate::model::failure::FailureKind::MergeConflict,
        _ => false,
    }
}

/// What of a batch stands after the disk filled up (what landed, and
/// textual conflicts), and the members that stay verified.
fn after_disk_full(
    result: Result<Settled, EngineError>,
    first: MergeJob,
    rest: Vec<MergeJob>,
) -> (Vec<(MergeJob, MergeOutcome)>, Vec<MergeJob>) {
    let Ok(Settled { outcomes, again }) = result else {
        return (Vec::new(), std::iter::once(first).chain(rest).collect());
    };
    let (stand, undone): (Vec<_>, Vec<_>) =
        (outcomes.into_iter()).partition(|(_, o)| landed_or_conflict(o));
    let undone = undone.into_iter().map(|(job, _)| job).chain(again);
    (stand, undone.collect())
}

/// Takes what is already queued, then waits for more while the batch is
/// not full and other tickets are still in their own verification, at
/// most `[merge] wait_secs`: with nothing in flight it starts at once.
fn fill(sh: &Shared, jobs: &Receiver<MergeJob>, queue: &mut VecDeque<MergeJob>) {
    let full = sh.settings.merge.batch.max(1);
    while let Ok(job) = jobs.try_recv() {
        queue.push_back(job);
    }
    let deadline = Instant::now() + sh.settings.merge.wait;
    while queue.len() < full && sh.verifying.load(Ordering::SeqCst) > 0 && !sh.cancel.is_cancelled()
    {
        // The count falls just after a candidate is sent: look again soon.
        let left = deadline.saturating_duration_since(Instant::now());
        match jobs.recv_timeout(left.min(RECHECK)) {
            Ok(job) => queue.push_back(job),
            Err(RecvTimeoutError::Timeout) if !left.is_zero() => {}
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return,
        }
    }
    // The coordinator sends the last candidate before the count falls: a
    // count read as zero may leave that candidate in the channel.
    while queue.len() < full {
        match jobs.try_recv() {
            Ok(job) => queue.push_back(job),
            Err(_) => break,
        }
    }
}

/// How often a filling batch looks again at the verifications in flight.
const RECHECK: Duration = Duration::from_millis(50);

/// `work`'s result, or an internal error naming `what` if it panicked: a
/// panic in one merge must reach the coordinator, not end the thread.
fn guarded<T>(what: &str, work: impl FnOnce() -> Result<T, EngineError>) -> Result<T, EngineError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
        .unwrap_or_else(|_| Err(EngineError::Internal(format!("{what} panicked"))))
}

fn report(tx: &Sender<Msg>, job: &MergeJob, result: Result<MergeOutcome, EngineError>) {
    let _ = tx.send(Msg::Landed {
        ticket: job.ticket.clone(),
        attempt: job.attempt,
        result,
    });
}
