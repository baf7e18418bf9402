//! One ticket in this invocation of a run: what the coordinator keeps of
//! it ([`TicketRun`]), and the one way the coordinator changes its state
//! ([`apply`]): written to the state store first, then told to the
//! scheduler, then emitted as an event.

use super::scheduler::Scheduler;
use super::shared::Shared;
use crate::clock;
use crate::error::EngineError;
use crate::events::{AttemptAgent, AttemptPlace, Event};
use crate::git::refs;
use crate::model::failure::Failure;
use crate::model::{StartsFrom, Step};

/// What the coordinator keeps of one ticket in this invocation.
#[derive(Debug, Default)]
pub(super) struct TicketRun {
    /// Strikes its rejected attempts used.
    pub(super) strikes: u32,
    /// New attempts it had, without a strike, after its candidate no
    /// longer merged (`[merge] max_rebuilds`).
    pub(super) rebuilds: u32,
    /// Its attempt is past its agent (see `Shared::verifying`).
    pub(super) verifying: bool,
    /// What the model said each time it could not serve the ticket, since
    /// its last attempt that got an answer.
    pub(super) unavailable: Vec<String>,
    /// The pool its attempt in flight counts against.
    pub(super) pool: Option<String>,
}

/// A change of one ticket's state, with what the store records of it.
#[derive(Debug)]
pub(super) enum Change<'c> {
    /// Attempt `attempt` starts on `base`, its workspace from
    /// `starts_from`, counted against `pool`'s cap.
    Start {
        attempt: u32,
        base: &'c str,
        starts_from: StartsFrom,
        pool: Option<&'c str>,
        /// Who runs it, for the event.
        agent: Option<AttemptAgent>,
        /// Where it runs, for the event and the ticket's log.
        place: AttemptPlace,
    },
    /// Attempt `attempt` ended without a verdict (`how`: `interrupted`,
    /// `unavailable`, `lost`), without a strike. With `requeue` the ticket
    /// is ready again at once; else the caller parks it or fails it.
    Interrupt {
        attempt: u32,
        how: &'c str,
        requeue: bool,
    },
    /// Attempt `attempt`'s candidate passed verification on `verified_on`;
    /// the caller queues it to be merged.
    Verify {
        attempt: u32,
        candidate: &'c str,
        verified_on: &'c str,
    },
    /// Attempt `attempt` was rejected: `step` is [`Step::Retry`] (another
    /// attempt follows, `retrying` unless the run is stopping) or
    /// [`Step::Fail`].
    Reject {
        attempt: u32,
        failure: Failure,
        step: Step,
        retrying: bool,
    },
    /// The ticket fails between attempts (its budget, or its model's
    /// unavailability, is used up).
    Fail(Failure),
    /// The merge queue landed it as `commit`; the queue recorded that in
    /// the store as the ref moved (a crash between the two is settled from
    /// git).
    Merged { commit: String },
}

/// Applies `change` to ticket `id`: the store, then the scheduler, then
/// the event. A ticket that fails has its last candidate quarantined, and
/// its dependents are blocked the same way.
pub(super) fn apply(
    sh: &Shared,
    sched: &mut Scheduler,
    id: &str,
    change: Change,
) -> Result<(), EngineError> {
    let (store, run) = (&sh.store, sh.run.as_str());
    match change {
        Change::Start {
            attempt,
            base,
            starts_from,
            pool,
            agent,
            place,
        } => {
            store.start_attempt(run, id, attempt, base, &clock::now())?;
            // The ticket's log says where, as the run's events do.
            let log = sh.run_dir.join(id).join("ticket.log");
            std::fs::create_dir_all(sh.run_dir.join(id)).map_err(|e| EngineError::io(&log, e))?;
            let line = format!("-- attempt {attempt} runs on {}\n", place.text());
            crate::log::append(&log, &line)?;
            // The attempt counts against the cap of the pool it runs on,
            // which is not the ticket's first when that one is paused.
            sched.started_on(id, pool);
            sh.emitter.emit(Event::AttemptStarted {
                ticket: id.to_string(),
                attempt,
                base_commit: base.to_string(),
                starts_from,
                agent,
                place: Some(place),
            });
        }
        Change::Interrupt {
            attempt,
            how,
            requeue,
        } => {
            store.end_attempt_without_verdict(run, id, attempt, how, &clock::now())?;
            if requeue {
                sched.requeue(id);
            }
        }
        Change::Verify {
            attempt,
            candidate,
            verified_on,
        } => store.verified(run, id, attempt, candidate, verified_on, &clock::now())?,
        Change::Reject {
            attempt,
            failure,
            step,
            retrying,
        } => {
            store.reject(run, id, attempt, &failure, step, &clock::now())?;
            sh.emitter.emit(Event::AttemptRejected {
                ticket: id.to_string(),
                attempt,
                failure: failure.clone(),
                retrying,
            });
            match step {
                Step::Retry => sched.requeue(id),
                _ => failed(sh, sched, id, failure)?,
            }
        }
        Change::Fail(failure) => {
            store.fail_ticket(run, id, &failure)?;
            failed(sh, sched, id, failure)?;
        }
        Change::Merged { commit } => {
            sched.merged(id);
            sh.emitter.emit(Event::Merged {
                ticket: id.to_string(),
                commit,
            });
        }
    }
    Ok(())
}

/// A ticket failed for good (its state is stored): its last candidate
/// is quarantined and its dependents are blocked.
fn failed(sh: &Shared, sched: &mut Scheduler, id: &str, f: Failure) -> Result<(), EngineError> {
    let candidate = refs::candidate_ref(id);
    if let Some(commit) = sh.repo.ref_tip(&candidate)? {
        refs::set_ref(sh.repo, sh.guard, &refs::quarantine_ref(id), &commit)?;
        refs::delete_ref(sh.repo, sh.guard, &candidate)?;
    }
    sh.emitter.emit(Event::Failed {
        ticket: id.to_string(),
        failure: f,
    });
    for b in sched.failed(id) {
        sh.store.set_state(&sh.run, &b, Step::Block)?;
        sh.emitter.emit(Event::Blocked {
            ticket: b,
            by: id.to_string(),
        });
    }
    Ok(())
}
