//! The coordinator thread: it alone schedules and decides; attempts run on
//! worker threads and merges on the merger thread.

use super::attempt::{
    activity_events, attempt_reported, resumed_events, start_point, usage_events, waiting_events,
};
use super::budget::{self, BudgetTracker};
use super::charter::{Charter, Start};
use super::merge::merger;
use super::msg::{AttemptResult, MergeJob, Msg, Route};
use super::routing::{self, scheduler, Choice, PoolPauses};
use super::scheduler::Scheduler;
use super::shared::Shared;
use super::ticket::{apply, Change, TicketRun};
use crate::clock;
use crate::error::EngineError;
use crate::events::{AttemptAgent, Event};
use crate::exec::AttemptInput;
use crate::git::refs;
use crate::store::TicketState;
use crate::verify::ticket_gates;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Default)]
pub(super) struct Loop {
    pub(super) free: Vec<usize>,
    pub(super) in_flight: usize,
    pub(super) merging: usize,
    /// What this invocation keeps of each ticket it touched.
    pub(super) tickets: HashMap<String, TicketRun>,
    /// Tickets parked until a time (a pause without a pool, or every
    /// candidate pool paused): the times the loop wakes up at.
    pub(super) paused: Vec<(Instant, String)>,
    /// The rate-limited model pools.
    pub(super) pauses: PoolPauses,
    /// Why the run's budget stops new attempts, once it does.
    pub(super) budget_stop: Option<String>,
    /// Why free space below `[run] min_free` stops new attempts, once it does.
    pub(super) disk_stop: Option<String>,
    /// Slots whose machine failed an attempt, resting until a time: the
    /// loop wakes up then and gives them back.
    pub(super) resting: Vec<(Instant, usize)>,
    /// Each slot's losses in a row, which lengthen its rest.
    pub(super) streaks: HashMap<usize, u32>,
    /// Workers lost in this invocation (`[executor] max_lost` bounds them).
    pub(super) lost: usize,
    pub(super) fatal: Option<EngineError>,
    /// The target's tip as this run last saw it (an attempt's base, or
    /// the commit a merge landed).
    pub(super) tip: Option<String>,
    /// A merge is in flight that needs no gates (its candidate was
    /// verified on the tip). New attempts wait the few git calls it
    /// takes: started from the merged tip, their own merge needs no second
    /// gate run, which would cost a whole gate run to save those calls.
    pub(super) quick_merge: bool,
}

impl Loop {
    /// What this invocation keeps of ticket `id`.
    pub(super) fn ticket(&mut self, id: &str) -> &mut TicketRun {
        self.tickets.entry(id.to_string()).or_default()
    }
}

/// The coordinator thread: it alone schedules and decides; attempts run on
/// worker threads and merges on the merger thread, and both report back
/// through a channel.
pub(super) struct Coordinator<'c, 'a> {
    pub(super) sh: &'c Shared<'a>,
    pub(super) sched: Scheduler,
    pub(super) lp: Loop,
    pub(super) merges: Sender<MergeJob>,
}

/// Why a run stopped starting attempts before every ticket ran.
#[derive(Debug, Default)]
pub(super) struct Stops {
    /// Its budget was used up.
    pub(super) budget: Option<String>,
    /// Free space fell below `[run] min_free`.
    pub(super) disk: Option<String>,
}

/// Coordinates the run; why it stopped starting attempts, if it did.
pub(super) fn coordinate<'s, 'a: 's>(
    scope: &'s std::thread::Scope<'s, '_>,
    sh: &'s Shared<'a>,
) -> Result<Stops, EngineError> {
    let (tx, rx) = channel::<Msg>();
    let wake = tx.clone();
    sh.cancel.on_cancel(move || {
        let _ = wake.send(Msg::Cancelled);
    });
    let (merges, jobs) = channel::<MergeJob>();
    let merger_tx = tx.clone();
    scope.spawn(move || merger(sh, jobs, merger_tx));
    let mut c = Coordinator {
        sh,
        sched: scheduler(
            sh.plan,
            Arc::clone(sh.graph),
            &sh.settings.routing,
            &sh.settings.families,
            &sh.lanes,
            sh.settings.jobs.max(1),
        ),
        lp: Loop {
            free: (0..sh.settings.jobs.max(1)).rev().collect(),
            pauses: PoolPauses::new(sh.settings.max_pause),
            ..Loop::default()
        },
        merges,
    };
    c.resume()?;
    c.drive(scope, tx, rx)
}

impl<'c, 'a: 'c> Coordinator<'c, 'a> {
    /// Tells the scheduler what earlier invocations settled, and sends
    /// their verified candidates to be merged without another agent run.
    pub(super) fn resume(&mut self) -> Result<(), EngineError> {
        let sh = self.sh;
        // A pool an earlier invocation paused stays paused until its time,
        // within this invocation's bound.
        let now = clock::unix_now();
        for (pool, until, strikes) in sh.store.pauses()? {
            let kept = self.lp.pauses.restore(&pool, until, strikes, now);
            if kept != until {
                sh.store.save_pause(&pool, kept, strikes)?;
            }
        }
        for t in sh.store.settled_tickets(&sh.run)? {
            if t.state != TicketState::Verified || t.candidate.is_some() && t.verified_on.is_some()
            {
                self.sched.settled(&t.id, t.state);
            }
            match t.state {
                TicketState::Merged => {
                    sh.emitter.emit(Event::AlreadyMerged { ticket: t.id });
                }
                TicketState::Changed => {
                    let commit = t.merge_commit.unwrap_or_default();
                    sh.emitter.emit(Event::Changed {
                        ticket: t.id,
                        commit,
                    });
                }
                TicketState::Verified => {
                    let (Some(candidate), Some(verified_on)) = (t.candidate, t.verified_on) else {
                        continue;
                    };
                    self.queue_merge(MergeJob {
                        ticket: t.id,
                        attempt: t.attempt_count,
                        candidate,
                        verified_on,
                    });
                }
                _ => {}
            }
        }
        Ok(())
    }

    pub(super) fn queue_merge(&mut self, job: MergeJob) {
        self.sh.emitter.emit(Event::Merging {
            ticket: job.ticket.clone(),
        });
        // A merge that needs no gates holds new attempts back for a few git
        // calls, unless the queue will wait for other verifications to
        // fill a batch.
        let own = (self.lp.tickets.get(&job.ticket)).is_some_and(|t| t.verifying);
        let others_verifying = self.sh.verifying.load(Ordering::SeqCst) > usize::from(own);
        self.lp.quick_merge = self.lp.merging == 0
            && !others_verifying
            && self.lp.tip.as_deref() == Some(job.verified_on.as_str());
        self.lp.merging += 1;
        // The merger lives as long as this sender.
        let _ = self.merges.send(job);
    }

    /// Starts attempts while slots are free and settles each attempt and
    /// merge as it ends.
    pub(super) fn drive(
        mut self,
        scope: &'c std::thread::Scope<'c, '_>,
        tx: Sender<Msg>,
        rx: Receiver<Msg>,
    ) -> Result<Stops, EngineError> {
        loop {
            self.unpause();
            self.wake_slots();
            let stopping = self.sh.cancel.is_cancelled() || self.lp.fatal.is_some();
            if !stopping && !self.lp.quick_merge {
                self.start_ready(scope, &tx)?;
            }
            // A used-up budget ends the run like a stop, without cancelling
            // the attempts in flight: what they did is paid for.
            let stopping = stopping || self.lp.budget_stop.is_some() || self.lp.disk_stop.is_some();
            let busy = self.lp.in_flight + self.lp.merging > 0;
            // Resting slots are waited for only when a ticket could start
            // on them.
            let rested = self.lp.resting.iter().map(|r| r.0);
            let rested = rested.filter(|_| !self.sched.next(self.lp.resting.len()).is_empty());
            let wake = self.lp.paused.iter().map(|p| p.0).chain(rested).min();
            if !busy && (stopping || wake.is_none()) {
                break;
            }
            let msg = match wake {
                Some(until) if !stopping => {
                    // A cancel wakes it with `Msg::Cancelled`.
                    let left = until.saturating_duration_since(Instant::now());
                    match rx.recv_timeout(left) {
                        Ok(msg) => msg,
                        Err(RecvTimeoutError::Timeout) => continue,
                        Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
                _ => rx.recv().expect("a sender lives while work is in flight"),
            };
            self.handle(msg)?;
        }
        match self.lp.fatal {
            Some(e) => Err(e),
            None => Ok(Stops {
                budget: self.lp.budget_stop,
                disk: self.lp.disk_stop,
            }),
        }
    }

    pub(super) fn handle(&mut self, msg: Msg) -> Result<(), EngineError> {
        match msg {
            Msg::Phase {
                ticket,
                attempt,
                phase,
            } => {
                let run = self.lp.ticket(&ticket);
                if phase.past_agent() && !run.verifying {
                    run.verifying = true;
                    self.sh.verifying.fetch_add(1, Ordering::SeqCst);
                }
                self.sh.emitter.emit(Event::Phase {
                    ticket,
                    attempt,
                    phase,
                })
            }
            Msg::Done {
                slot,
                ticket,
                attempt,
                base,
                result,
            } => {
                self.lp.in_flight -= 1;
                if !matches!(result, Ok(AttemptResult::Lost(_))) {
                    self.lp.streaks.remove(&slot);
                    self.lp.free.push(slot);
                }
                // Counted down after its candidate is queued, so that the
                // merge queue, waiting for it, sees it come.
                let finished = self.finish(slot, &ticket, attempt, &base, result);
                if std::mem::take(&mut self.lp.ticket(&ticket).verifying) {
                    self.sh.verifying.fetch_sub(1, Ordering::SeqCst);
                }
                finished?;
            }
            Msg::Landed {
                ticket,
                attempt,
                result,
            } => {
                self.lp.merging -= 1;
                self.lp.quick_merge = false;
                self.landed(&ticket, attempt, result)?;
            }
            // The loop sees the flag as it goes round.
            Msg::Cancelled => {}
        }
        Ok(())
    }

    /// Gives back the slots whose rest is over.
    pub(super) fn wake_slots(&mut self) {
        let now = Instant::now();
        let (over, resting): (Vec<_>, Vec<_>) =
            (self.lp.resting.drain(..)).partition(|(until, _)| *until <= now);
        self.lp.resting = resting;
        self.lp.free.extend(over.into_iter().map(|(_, slot)| slot));
    }

    /// Puts tickets whose pause is over back in the queue.
    pub(super) fn unpause(&mut self) {
        let now = Instant::now();
        let (over, waiting): (Vec<_>, Vec<_>) = self
            .lp
            .paused
            .drain(..)
            .partition(|(until, _)| *until <= now);
        self.lp.paused = waiting;
        for (_, id) in over {
            self.sched.requeue(&id);
        }
    }

    /// Starts ready tickets while slots are free. A ticket the budget or a
    /// paused pool holds back leaves its slot to the next one, so this asks
    /// the scheduler again until nothing more starts. A ticket whose open
    /// pools are all at their cap is set aside until this round ends, and
    /// tried again after the next attempt ends.
    pub(super) fn start_ready(
        &mut self,
        scope: &'c std::thread::Scope<'c, '_>,
        tx: &Sender<Msg>,
    ) -> Result<(), EngineError> {
        let mut full = Vec::new();
        let started = self.start_round(scope, tx, &mut full);
        for id in full {
            self.sched.requeue(&id);
        }
        started
    }

    pub(super) fn start_round(
        &mut self,
        scope: &'c std::thread::Scope<'c, '_>,
        tx: &Sender<Msg>,
        full: &mut Vec<String>,
    ) -> Result<(), EngineError> {
        loop {
            let ready = self.sched.next(self.lp.free.len());
            let stopped = self.lp.budget_stop.is_some() || self.lp.disk_stop.is_some();
            if ready.is_empty() || stopped || self.disk_low() {
                return Ok(());
            }
            for id in ready {
                let Some(budget_usd) = self.admit(&id)? else {
                    continue;
                };
                let Some(route) = self.route(&id, budget_usd, full) else {
                    continue;
                };
                let slot = self.lp.free.pop().expect("next() respects the free slots");
                self.start(scope, &id, slot, route, tx.clone())?;
            }
        }
    }

    /// Whether free space is below `[run] min_free`, which stops new
    /// attempts (said once, with what takes the space).
    pub(super) fn disk_low(&mut self) -> bool {
        let sh = self.sh;
        let Some(low) = crate::exec::disk::low(&sh.repo.state_dir(), sh.settings.min_free) else {
            return false;
        };
        let reason =
            format!("{low}; free some space and run again (`[run] min_free` sets the floor)");
        sh.emitter.emit(Event::DiskLow {
            reason: reason.clone(),
        });
        self.lp.disk_stop = Some(reason);
        true
    }

    /// Asks the budget (rebuilt from the store, so earlier invocations
    /// count) whether `id` may start an attempt: `Some(dollars left)` when
    /// it may. A used-up run budget stops new attempts; a used-up ticket
    /// budget fails the ticket.
    pub(super) fn admit(&mut self, id: &str) -> Result<Option<Option<f64>>, EngineError> {
        let sh = self.sh;
        if budget::unlimited(&sh.settings.budget) {
            // Nothing to count against: summing every attempt of the run
            // would cost more with each ticket done.
            return Ok(Some(None));
        }
        let tracker = BudgetTracker::resume(
            &sh.settings.budget,
            sh.store.spent(&sh.run, &sh.settings.prices)?,
        );
        match tracker.admit(id) {
            budget::Admission::Start => Ok(Some(tracker.remaining_usd(id))),
            budget::Admission::RunExhausted(reason) => {
                if self.lp.budget_stop.is_none() {
                    sh.emitter.emit(Event::BudgetReached {
                        reason: reason.clone(),
                    });
                    self.lp.budget_stop = Some(reason);
                }
                Ok(None)
            }
            budget::Admission::TicketExhausted(f) => {
                apply(sh, &mut self.sched, id, Change::Fail(f))?;
                Ok(None)
            }
        }
    }

    /// The model of `id`'s next attempt through the routing table, the
    /// paused pools and the pools' caps; `None` when every candidate pool
    /// is paused, and the ticket is parked until the earliest may be
    /// probed, or when every open one is at its cap, and the ticket is put
    /// in `full` (out of the scheduler's ready set until the round ends).
    pub(super) fn route(
        &mut self,
        id: &str,
        budget_usd: Option<f64>,
        full: &mut Vec<String>,
    ) -> Option<Route> {
        let sh = self.sh;
        let now = clock::unix_now();
        let sched = &self.sched;
        let room = |pool: &str| sched.has_room(pool);
        let choice = routing::choose(
            &sh.lanes.routed(sh.ticket(id)),
            &sh.settings.routing,
            &sh.settings.families,
            sh.lanes.family(id),
            &mut self.lp.pauses,
            now,
            &room,
        );
        let (model, pool) = match choice {
            Choice::CliDefault => (None, None),
            Choice::Model { model, pool, .. } => (Some(model), pool),
            Choice::Wait { until } => {
                let wait = Duration::from_secs(until.saturating_sub(now));
                // Parked, it holds no pool's cap.
                self.sched.started_on(id, None);
                self.lp.paused.push((Instant::now() + wait, id.to_string()));
                return None;
            }
            Choice::Full => {
                self.sched.started_on(id, None);
                full.push(id.to_string());
                return None;
            }
        };
        Some(Route {
            model,
            pool,
            budget_usd,
        })
    }

    /// Records and spawns the next attempt of `id` in `slot`.
    pub(super) fn start(
        &mut self,
        scope: &'c std::thread::Scope<'c, '_>,
        id: &str,
        slot: usize,
        route: Route,
        tx: Sender<Msg>,
    ) -> Result<(), EngineError> {
        let sh = self.sh;
        let ticket = sh.ticket(id);
        let row = sh
            .store
            .ticket(&sh.run, id)?
            .expect("run tickets are stored");
        let base = sh.target.tip(sh.repo)?;
        self.lp.tip = Some(base.clone());
        let attempt = row.attempt_count + 1;
        let retried = (self.lp.tickets.get(id)).is_some_and(|t| t.strikes > 0);
        let start = start_point(sh, id, attempt, row.failure.as_ref(), &base, retried)?;
        let agent = sh.lanes.get(id).map(|lane| AttemptAgent {
            adapter: lane.agent.clone(),
            program: lane.program.clone(),
            model: route.model.clone(),
        });
        let change = Change::Start {
            attempt,
            base: &base,
            starts_from: start.name(),
            pool: route.pool.as_deref(),
            agent,
            place: sh.executor.place(slot),
        };
        apply(sh, &mut self.sched, id, change)?;
        self.lp.in_flight += 1;
        self.lp.ticket(id).pool = route.pool;
        let gates = ticket_gates(sh.plan, ticket, &sh.settings.extra_gates);
        // A `respond` round running this ticket: the forge's text.
        let feedback = sh.store.round_feedback(&sh.run, id)?;
        let charter = Charter {
            ticket,
            gates: &gates,
            attempt,
            previous: row.failure.as_ref(),
            checks_judged: super::preflight::checks_judged(sh.plan, &sh.settings.beyond),
            start: &start,
            feedback: &feedback,
        }
        .render();
        let start_commit = match start {
            Start::Previous { commit, .. } => commit,
            _ => base.clone(),
        };
        let input = AttemptInput {
            ticket: id.to_string(),
            attempt,
            base_commit: base.clone(),
            start_commit,
            charter,
            message: sh.message(id),
            files: sh.run_dir.join(id),
            agent_timeout: sh.settings.agent_timeout,
            agent: sh.lanes.entry(id).map(String::from),
            model: route.model,
            budget_usd: route.budget_usd,
            candidate_ref: refs::candidate_ref(id),
            usage_sink: Some(usage_events(&sh.emitter, id, attempt)),
            activity_sink: Some(activity_events(&sh.emitter, id, attempt)),
            waiting_sink: Some(waiting_events(
                &sh.emitter,
                id,
                attempt,
                sh.executor.place(slot),
            )),
            resumed_sink: Some(resumed_events(
                &sh.emitter,
                id,
                attempt,
                sh.executor.place(slot),
            )),
        };
        scope.spawn(move || attempt_reported(sh, ticket, slot, &input, &gates, &tx, base));
        Ok(())
    }
}
