//! How the coordinator settles what attempts and merges report.

use super::attempt::unavailable_failure;
use super::coordinator::Coordinator;
use super::msg::{AttemptResult, MergeJob, MergeOutcome};
use super::pools;
use super::ticket::{apply, Change};
use crate::clock;
use crate::error::EngineError;
use crate::events::Event;
use crate::model::failure::{Failure, FailureKind};
use crate::model::{RebuildReason, Step};
use std::time::{Duration, Instant};

/// The longest a slot rests after losses in a row.
const MAX_REST: Duration = Duration::from_secs(5 * 60);

impl<'c, 'a: 'c> Coordinator<'c, 'a> {
    /// Settles an attempt that ended: requeues, pauses, rejects, or sends
    /// its candidate to be merged.
    pub(super) fn finish(
        &mut self,
        slot: usize,
        id: &str,
        attempt: u32,
        base: &str,
        result: Result<AttemptResult, EngineError>,
    ) -> Result<(), EngineError> {
        let sh = self.sh;
        let pool = self.lp.ticket(id).pool.take();
        if let Ok(AttemptResult::Passed { .. } | AttemptResult::Rejected(_)) = &result {
            self.lp.ticket(id).unavailable.clear();
            if let Some(pool) = &pool {
                self.answered(pool)?;
            }
        }
        let interrupt = |how, requeue| Change::Interrupt {
            attempt,
            how,
            requeue,
        };
        match result {
            Err(e) => {
                // An engine failure (git, disk) is not the ticket's fault: stop the run.
                sh.cancel.cancel();
                apply(sh, &mut self.sched, id, interrupt("interrupted", true))?;
                self.lp.fatal.get_or_insert(e);
            }
            Ok(AttemptResult::Cancelled) => {
                apply(sh, &mut self.sched, id, interrupt("interrupted", true))?;
            }
            Ok(AttemptResult::Unavailable {
                retry_after,
                reason,
            }) => {
                apply(sh, &mut self.sched, id, interrupt("unavailable", false))?;
                self.unavailable(id, pool, retry_after, reason)?;
            }
            Ok(AttemptResult::Lost(lost)) => {
                apply(sh, &mut self.sched, id, interrupt("lost", true))?;
                self.lost(slot, id, attempt, lost);
            }
            Ok(AttemptResult::Rejected(f)) if f.kind == FailureKind::EmptyDiff => {
                match sh.store.ticket(&sh.run, id)?.and_then(|t| t.rerun_of) {
                    // A rerun with nothing to change: its merge stands.
                    Some(commit) => self.unchanged(id, attempt, commit)?,
                    None => self.reject(id, attempt, f)?,
                }
            }
            Ok(AttemptResult::Rejected(f)) => self.reject(id, attempt, f)?,
            Ok(AttemptResult::Passed { candidate }) => {
                let verified = Change::Verify {
                    attempt,
                    candidate: &candidate,
                    verified_on: base,
                };
                apply(sh, &mut self.sched, id, verified)?;
                self.queue_merge(MergeJob {
                    ticket: id.to_string(),
                    attempt,
                    candidate,
                    verified_on: base.to_string(),
                });
            }
        }
        Ok(())
    }

    /// Attempt `attempt` of `id`, run again with `--rerun`, changed
    /// nothing: the ticket stays merged as `commit`, never failed.
    fn unchanged(&mut self, id: &str, attempt: u32, commit: String) -> Result<(), EngineError> {
        let sh = self.sh;
        sh.store
            .unchanged(&sh.run, id, attempt, &commit, &clock::now())?;
        self.sched.merged(id);
        sh.emitter.emit(Event::Unchanged {
            ticket: id.to_string(),
            attempt,
            commit,
        });
        Ok(())
    }

    /// A machine failed attempt `attempt` of `id` in `slot`: the ticket
    /// waits for a slot without a strike, and `slot` rests (`[executor]
    /// lost_backoff`, doubled with each loss of it in a row) before it
    /// serves again, with a new worker (a new pod, the host reached
    /// again). The run stops at `[executor] max_lost` lost workers.
    pub(super) fn lost(
        &mut self,
        slot: usize,
        id: &str,
        attempt: u32,
        lost: crate::exec::remote::Lost,
    ) {
        let link = self.sh.settings.worker_link;
        let slots = self.sh.settings.jobs.max(1);
        let limit = link.max_lost.map_or(2 * slots, |m| m as usize);
        self.lp.lost += 1;
        let streak = self.lp.streaks.entry(slot).or_default();
        let rest = (link.lost_backoff.saturating_mul(1u32 << (*streak).min(16))).min(MAX_REST);
        *streak += 1;
        self.lp.resting.push((Instant::now() + rest, slot));
        self.sh.emitter.emit(Event::WorkerLost {
            ticket: id.to_string(),
            attempt,
            place: lost.place.clone(),
            reason: lost.reason.clone(),
            slots_left: slots.saturating_sub(self.lp.resting.len()),
            rest_ms: rest.as_millis() as u64,
            losses_left: limit.saturating_sub(self.lp.lost),
        });
        if self.lp.lost >= limit {
            self.sh.cancel.cancel();
            self.lp.fatal.get_or_insert(EngineError::Settings(format!(
                "{} lost in this run, `[executor] max_lost` ({limit}); the last: {lost}. Run `planwright preflight` with the same `[executor]` to check the workers, then `run` again to continue",
                planwright_plan::words::count(self.lp.lost, "worker")
            )));
        }
    }

    /// The model could not serve the ticket: no strike is used, the pool
    /// (or, without one, the ticket) pauses, and the ticket waits for it or
    /// goes to another candidate model; after `max_unavailable` such
    /// outcomes in a row the ticket fails as `unavailable` instead.
    pub(super) fn unavailable(
        &mut self,
        id: &str,
        pool: Option<String>,
        retry_after: Option<Duration>,
        reason: String,
    ) -> Result<(), EngineError> {
        let reasons = &mut self.lp.ticket(id).unavailable;
        reasons.push(reason.clone());
        let streak = reasons.len() as u32;
        let exhausted = streak >= self.sh.settings.max_unavailable;
        match pool {
            Some(pool) => {
                self.pause_pool(id, &pool, retry_after, reason)?;
                if !exhausted {
                    self.sched.requeue(id);
                }
            }
            None if !exhausted => self.pause(id, retry_after, streak, reason),
            None => {}
        }
        if !exhausted {
            return Ok(());
        }
        let reasons = std::mem::take(&mut self.lp.ticket(id).unavailable);
        let failure = unavailable_failure(&reasons);
        apply(self.sh, &mut self.sched, id, Change::Fail(failure))
    }

    /// The model of a pool could not serve a ticket: the whole pool pauses,
    /// and routing sends its queued tickets to another candidate model or
    /// parks them.
    pub(super) fn pause_pool(
        &mut self,
        id: &str,
        pool: &str,
        retry_after: Option<Duration>,
        reason: String,
    ) -> Result<(), EngineError> {
        let now = clock::unix_now();
        self.lp.pauses.pause(pool, now, retry_after);
        let (until, strikes) = self.lp.pauses.pause_of(pool).unwrap_or((now, 1));
        // Saved, so a run continued after this one ends still waits.
        self.sh.store.save_pause(pool, until, strikes)?;
        self.sh.emitter.emit(Event::PoolPaused {
            ticket: id.to_string(),
            pool: Some(pool.to_string()),
            wait_ms: until.saturating_sub(now).saturating_mul(1000),
            retry_after_ms: retry_after.map(|r| r.as_millis() as u64),
            until: Some(clock::format_unix(until)),
            reason,
        });
        Ok(())
    }

    /// A pool's model answered: a paused pool is open again.
    pub(super) fn answered(&mut self, pool: &str) -> Result<(), EngineError> {
        if self.lp.pauses.pause_of(pool).is_some() {
            self.lp.pauses.answered(pool);
            self.sh.store.clear_pause(pool)?;
            self.sh.emitter.emit(Event::PoolResumed {
                pool: pool.to_string(),
            });
        }
        Ok(())
    }

    /// A model outside the routing table could not serve the ticket, the
    /// `streak`-th time in a row: the ticket alone waits, as long as a pool
    /// would.
    pub(super) fn pause(
        &mut self,
        id: &str,
        retry_after: Option<Duration>,
        streak: u32,
        reason: String,
    ) {
        let wait = pools::pause_length(retry_after, streak, self.sh.settings.max_pause);
        self.lp.paused.push((Instant::now() + wait, id.to_string()));
        self.sh.emitter.emit(Event::PoolPaused {
            ticket: id.to_string(),
            pool: None,
            wait_ms: wait.as_millis() as u64,
            retry_after_ms: retry_after.map(|r| r.as_millis() as u64),
            until: None,
            reason,
        });
    }

    /// Settles a merge the merger thread finished.
    pub(super) fn landed(
        &mut self,
        id: &str,
        attempt: u32,
        result: Result<MergeOutcome, EngineError>,
    ) -> Result<(), EngineError> {
        match result {
            Err(e) => {
                // The ticket stays `verified` or `merging`; the next
                // invocation settles it from git.
                self.sh.cancel.cancel();
                self.lp.fatal.get_or_insert(e);
            }
            Ok(MergeOutcome::Merged { commit }) => {
                self.lp.tip = Some(commit.clone());
                apply(self.sh, &mut self.sched, id, Change::Merged { commit })?;
            }
            Ok(MergeOutcome::Rejected(f)) if f.kind == FailureKind::MergeConflict => {
                // Nobody's fault: a rebuild on the current tip, bounded.
                let rebuilds = &mut self.lp.ticket(id).rebuilds;
                let free = *rebuilds < self.sh.settings.merge.max_rebuilds;
                *rebuilds += u32::from(free);
                if self.rejected(id, attempt, f, !free)? && free {
                    self.rebuild_event(id, RebuildReason::Conflict);
                }
            }
            Ok(MergeOutcome::Rejected(f)) => self.reject(id, attempt, f)?,
            Ok(MergeOutcome::Combination(f)) => {
                if self.rejected(id, attempt, f, true)? {
                    self.rebuild_event(id, RebuildReason::Combination);
                }
            }
            // The ticket stays `verified`: the next invocation merges it.
            Ok(MergeOutcome::Cancelled) => {}
            Ok(MergeOutcome::DiskFull(reason)) => {
                // As below `[run] min_free` between attempts: those in
                // flight end, no new one starts, and the ticket stays
                // `verified` for the next invocation.
                self.sh.emitter.emit(Event::DiskLow {
                    reason: reason.clone(),
                });
                self.lp.disk_stop.get_or_insert(reason);
            }
        }
        Ok(())
    }

    /// Counts a strike: requeues with the failure as evidence, or fails the
    /// ticket (its last candidate kept under `refs/planwright/quarantine/`)
    /// and blocks its dependents.
    pub(super) fn reject(&mut self, id: &str, attempt: u32, f: Failure) -> Result<(), EngineError> {
        self.rejected(id, attempt, f, true).map(|_| ())
    }

    fn rebuild_event(&self, id: &str, reason: RebuildReason) {
        self.sh.emitter.emit(Event::Rebuild {
            ticket: id.to_string(),
            reason,
        });
    }

    /// [`Self::reject`], counting a strike only when `strike`; whether the
    /// ticket goes back for another attempt.
    fn rejected(
        &mut self,
        id: &str,
        attempt: u32,
        f: Failure,
        strike: bool,
    ) -> Result<bool, EngineError> {
        let sh = self.sh;
        let used = &mut self.lp.ticket(id).strikes;
        *used += u32::from(strike);
        let retrying = (!strike || *used < sh.settings.strikes) && !sh.cancel.is_cancelled();
        let step = match retrying || sh.cancel.is_cancelled() {
            true => Step::Retry,
            false => Step::Fail,
        };
        let change = Change::Reject {
            attempt,
            failure: f,
            step,
            retrying,
        };
        apply(sh, &mut self.sched, id, change)?;
        Ok(retrying)
    }
}
