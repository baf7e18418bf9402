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
    loop {
        if queue.is_empty() {
            match jobs.recv() {
                Ok(job) => queue.push_back(job),
                Err(_) => return,
            }
        }
        fill(sh, &jobs, &mut queue);
        let take = queue.len().min(sh.settings.merge.batch.max(1));
        let batch: Vec<MergeJob> = queue.drain(..take).collect();
        let first = batch[0].clone();
        let rest: Vec<MergeJob> = batch[1..].to_vec();
        match guarded("a batch merge", || land_batch(sh, batch)) {
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
