//! The merger thread: verified candidates land one at a time.

use super::coordinator::{MergeJob, Msg};
use super::routes::ticket_gates;
use super::session::Shared;
use crate::error::EngineError;
use crate::git::merge;
use crate::model::Step;
use crate::run::merge::{Merge, MergeOutcome};
use std::sync::mpsc::{Receiver, Sender};

/// The merger thread: lands verified candidates one at a time.
pub(super) fn merger(sh: &Shared, jobs: Receiver<MergeJob>, tx: Sender<Msg>) {
    for job in jobs {
        let work = std::panic::AssertUnwindSafe(|| land(sh, &job));
        let result = std::panic::catch_unwind(work).unwrap_or_else(|_| {
            Err(EngineError::Internal(format!(
                "the merge of {} panicked",
                job.ticket
            )))
        });
        let _ = tx.send(Msg::Landed {
            ticket: job.ticket,
            attempt: job.attempt,
            result,
        });
    }
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
    let merge = Merge {
        repo: sh.repo,
        target: &sh.target,
        checkouts: &sh.checkouts,
        gates: &gates,
        gate_settings: &sh.settings.gates,
        log: &log,
    };
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
