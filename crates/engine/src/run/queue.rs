//! One batch of the merge queue: verified candidates that share their
//! gates are stacked on the tip, one commit each, and checked once; a red
//! stack runs again (`[merge] flaky_retries`), then is bisected for its
//! longest green prefix, which lands. The first member after that prefix
//! is the culprit and goes back for a new attempt; the members after it
//! are queued again, not failed. The base only ever moves to a commit
//! whose gates passed.

use super::coordinator::MergeJob;
use super::merger::{land, merge_with};
use super::routes::ticket_gates;
use super::session::Shared;
use crate::error::EngineError;
use crate::events::Event;
use crate::git::merge::candidate_ref;
use crate::model::failure::Failure;
use crate::model::{Step, Verdict};
use crate::run::merge::{Merge, MergeOutcome, Stack, StackMember};

/// What a batch settled, and what goes back to the front of the queue.
#[derive(Default)]
pub(super) struct Settled {
    pub(super) outcomes: Vec<(MergeJob, MergeOutcome)>,
    pub(super) again: Vec<MergeJob>,
}

/// Lands what it can of `batch`, in order: the first member's run of
/// members with the same gates is one stack; the members after it are
/// queued again.
pub(super) fn land_batch(sh: &Shared, mut batch: Vec<MergeJob>) -> Result<Settled, EngineError> {
    let gates_of =
        |job: &MergeJob| ticket_gates(sh.plan, sh.ticket(&job.ticket), &sh.settings.extra_gates);
    let gates = gates_of(&batch[0]);
    let same = batch.iter().take_while(|j| gates_of(j) == gates).count();
    let mut settled = Settled {
        again: batch.split_off(same),
        ..Settled::default()
    };
    if batch.len() == 1 || sh.cancel.is_cancelled() {
        for job in batch {
            let outcome = land(sh, &job)?;
            settled.outcomes.push((job, outcome));
        }
        return Ok(settled);
    }
    let log = sh.run_dir.join(&batch[0].ticket).join("ticket.log");
    let merge = merge_with(sh, &gates, &log);
    let stack = build(sh, &merge, &batch)?;
    // A member that no longer merges is settled now; the rest are the stack.
    let mut kept = Vec::new();
    let mut commits = Vec::new();
    for (job, layer) in batch.into_iter().zip(&stack.layers) {
        match layer {
            Ok(commit) => {
                kept.push(job);
                commits.push(commit.clone());
            }
            Err(conflict) => {
                let outcome = MergeOutcome::Rejected(conflict.clone());
                settled.outcomes.push((job, outcome));
            }
        }
    }
    if kept.len() < 2 {
        for job in kept {
            let outcome = land(sh, &job)?;
            settled.outcomes.push((job, outcome));
        }
        return Ok(settled);
    }
    let checked = Checked {
        sh,
        merge: &merge,
        stack: &stack,
        jobs: kept,
        commits,
    };
    checked.settle(&mut settled)?;
    Ok(settled)
}

/// Stacks `batch` on the tip, noting in every member's log where the
/// stack's gate output goes.
fn build(sh: &Shared, merge: &Merge<'_>, batch: &[MergeJob]) -> Result<Stack, EngineError> {
    let ids: Vec<&str> = batch.iter().map(|j| j.ticket.as_str()).collect();
    let messages: Vec<String> = ids.iter().map(|id| sh.message(id)).collect();
    let members: Vec<StackMember> = (batch.iter().enumerate())
        .map(|(i, job)| StackMember {
            candidate: &job.candidate,
            verified_on: &job.verified_on,
            message: &messages[i],
        })
        .collect();
    for id in &ids[1..] {
        let note = format!(
            "-- in a batch with {}; its gates are in {}\n",
            ids.join(", "),
            merge.log.display()
        );
        crate::log::append(&sh.run_dir.join(id).join("ticket.log"), &note)?;
    }
    merge.stack(&members)
}

/// A stack of two or more members, each with its commit on the stack.
struct Checked<'s, 'a> {
    sh: &'s Shared<'a>,
    merge: &'s Merge<'s>,
    stack: &'s Stack,
    jobs: Vec<MergeJob>,
    commits: Vec<String>,
}

impl Checked<'_, '_> {
    fn ids(&self, range: std::ops::Range<usize>) -> Vec<String> {
        self.jobs[range].iter().map(|j| j.ticket.clone()).collect()
    }

    /// The gates on the first `k` members' commit.
    fn gate(&self, k: usize) -> Result<Verdict, EngineError> {
        let of = format!(" (a stack of {})", self.ids(0..k).join(", "));
        self.merge.gate(&self.commits[k - 1], &of, self.sh.cancel)
    }

    /// Checks the whole stack, runs a red one again, bisects one still red.
    fn settle(self, settled: &mut Settled) -> Result<(), EngineError> {
        let sh = self.sh;
        let n = self.jobs.len();
        let tickets = self.ids(0..n);
        sh.emitter.emit(Event::BatchStarted {
            tickets: tickets.clone(),
            tip: self.stack.tip.clone(),
        });
        let mut verdict = self.gate(n)?;
        let mut runs = 0;
        while matches!(verdict, Verdict::Fail(_)) && runs < sh.settings.merge.flaky_retries {
            runs += 1;
            verdict = self.gate(n)?;
        }
        match verdict {
            Verdict::Cancelled => self.cancelled(settled),
            Verdict::Pass => {
                sh.emitter.emit(Event::BatchVerified {
                    tickets,
                    commit: self.commits[n - 1].clone(),
                    flaky: runs > 0,
                });
                self.land_prefix(n, settled)?;
            }
            Verdict::Fail(f) => {
                sh.emitter.emit(Event::BatchFailed {
                    tickets,
                    message: f.message.clone(),
                });
                self.bisect(f, settled)?;
            }
        }
        Ok(())
    }

    /// Finds the longest green prefix, the whole stack being red with
    /// `failure`, in O(log n) gate runs, and settles every member.
    fn bisect(mut self, failure: Failure, settled: &mut Settled) -> Result<(), EngineError> {
        let (mut green, mut red, mut failure, mut runs) = (0, self.jobs.len(), failure, 0);
        while red - green > 1 {
            let mid = (green + red) / 2;
            runs += 1;
            match self.gate(mid)? {
                Verdict::Pass => green = mid,
                Verdict::Fail(f) => (red, failure) = (mid, f),
                Verdict::Cancelled => {
                    self.cancelled(settled);
                    return Ok(());
                }
            }
        }
        let culprit = red - 1;
        self.sh.emitter.emit(Event::Bisected {
            landed: self.ids(0..green),
            culprit: self.jobs[culprit].ticket.clone(),
            requeued: self.ids(red..self.jobs.len()),
            gate_runs: runs,
        });
        let ahead = self.ids(0..green);
        let mut rest = self.jobs.split_off(culprit);
        if green > 0 && !self.land_prefix(green, settled)? {
            // The tip moved: the culprit is judged again on the new one,
            // after the prefix (which is queued again first).
            settled.again.splice(green..green, rest);
            return Ok(());
        }
        let culprit_job = rest.remove(0);
        let outcome = match ahead.as_slice() {
            [] => MergeOutcome::Rejected(Failure {
                message: format!("after merging onto the moved base: {}", failure.message),
                ..failure
            }),
            ahead => MergeOutcome::Combination(Failure {
                message: format!(
                    "breaks the gates together with {}, which passed without it and landed: {}",
                    ahead.join(", "),
                    failure.message
                ),
                ..failure
            }),
        };
        settled.outcomes.push((culprit_job, outcome));
        settled.again.splice(0..0, rest);
        Ok(())
    }

    /// Lands the first `k` members at their commit; false (all of them
    /// queued again) when the target moved meanwhile.
    fn land_prefix(&self, k: usize, settled: &mut Settled) -> Result<bool, EngineError> {
        let sh = self.sh;
        let ids = self.ids(0..k);
        for (id, commit) in ids.iter().zip(&self.commits) {
            sh.store.begin_merge(&sh.run, id, commit)?;
        }
        let refs: Vec<String> = ids.iter().map(|id| candidate_ref(id)).collect();
        let refs: Vec<&str> = refs.iter().map(String::as_str).collect();
        if !self
            .merge
            .advance(self.stack, &self.commits[k - 1], &refs)?
        {
            settled.again.splice(0..0, self.jobs[..k].iter().cloned());
            return Ok(false);
        }
        for (job, commit) in self.jobs[..k].iter().zip(&self.commits) {
            sh.store.landed(&sh.run, &job.ticket, Step::Merge, commit)?;
            let outcome = MergeOutcome::Merged {
                commit: commit.clone(),
            };
            settled.outcomes.push((job.clone(), outcome));
        }
        Ok(true)
    }

    /// Every member stays verified: the run was interrupted.
    fn cancelled(&self, settled: &mut Settled) {
        for job in &self.jobs {
            settled
                .outcomes
                .push((job.clone(), MergeOutcome::Cancelled));
        }
    }
}
