//! One batch of the merge queue: verified candidates that share their
//! gates are stacked on the tip, one commit each, and checked once, with
//! shorter prefixes checked at once in the other merge checkouts
//! (`[merge] checkouts`); a red stack runs again (`[merge] flaky_retries`),
//! then is bisected for its longest green prefix, which lands. The first
//! member after that prefix is the culprit and goes back for a new
//! attempt; the members after it are queued again, not failed. The base
//! only ever moves to a commit whose gates passed.

use super::land::{gates_key, land, merge_with, Merge, Stack, StackMember, MOVED_BASE};
use crate::error::EngineError;
use crate::events::Event;
use crate::git::refs::candidate_ref;
use crate::model::failure::Failure;
use crate::model::{Step, Verdict};
use crate::run::msg::{MergeJob, MergeOutcome};
use crate::run::routes::ticket_gates;
use crate::run::shared::Shared;
use planwright_os::process::{Cancel, Listening};

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
    let key = gates_key(&gates);
    let merge = merge_with(sh, &gates, &key, &log);
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

/// What the checks of a stack's prefixes showed: every prefix of at most
/// `green` members passes, the first `red` fail with `failure`.
struct Known {
    green: usize,
    red: usize,
    failure: Option<Failure>,
    /// Gate runs so far.
    runs: u32,
}

/// How a prefix of a stack is checked: `check(k, slot, cancel)` runs the
/// gates on the first `k` members' commit in merge checkout `slot`.
type Check<'p> = dyn Fn(usize, usize, &Cancel) -> Result<Verdict, EngineError> + Sync + 'p;

/// The search of one stack for its longest green prefix, apart from git
/// and the run (a test drives it with a fake check).
struct Prefixes<'p> {
    /// The stack's tickets, in landing order.
    ids: &'p [String],
    /// What it is stacked on.
    tip: &'p str,
    /// Each prefix's top commit.
    commits: &'p [String],
    /// Checks at once (`[merge] checkouts`).
    width: usize,
    flaky_retries: u32,
    /// The run's flag.
    cancel: &'p Cancel,
    emit: &'p (dyn Fn(Event) + Sync),
    check: &'p Check<'p>,
}

impl Prefixes<'_> {
    /// Checks the whole stack, with shorter prefixes at once while
    /// checkouts are free; runs a red stack again; bisects one still red.
    /// `None` when the run was interrupted.
    fn search(&self) -> Result<Option<Known>, EngineError> {
        let n = self.ids.len();
        let mut known = Known {
            green: 0,
            red: n + 1,
            failure: None,
            runs: 0,
        };
        let first: Vec<usize> = std::iter::once(n)
            .chain(inside(0, n, self.width - 1))
            .collect();
        if !self.round(&first, &mut known, false)? {
            return Ok(None);
        }
        for _ in 0..self.flaky_retries {
            if known.red != n {
                break;
            }
            known.red = n + 1;
            if !self.round(&[n], &mut known, true)? {
                return Ok(None);
            }
        }
        while known.green < n && known.red - known.green > 1 {
            let points = inside(known.green, known.red.min(n + 1), self.width);
            if !self.round(&points, &mut known, false)? {
                return Ok(None);
            }
        }
        Ok(Some(known))
    }

    /// Checks the prefixes of `lengths` at once, one checkout each: a
    /// green one stops those it holds, a red one those built on it when
    /// reds are trusted (no `flaky_retries`). False when the run was
    /// interrupted.
    fn round(
        &self,
        lengths: &[usize],
        known: &mut Known,
        again: bool,
    ) -> Result<bool, EngineError> {
        let flags: Vec<_> = lengths.iter().map(|_| self.cancel.child()).collect();
        for &k in lengths {
            (self.emit)(Event::BatchStarted {
                tickets: self.ids[..k].to_vec(),
                tip: self.tip.to_string(),
            });
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let mut error = None;
        std::thread::scope(|scope| {
            for (slot, &k) in lengths.iter().enumerate() {
                let (tx, cancel) = (tx.clone(), &flags[slot].0);
                scope.spawn(move || {
                    let _ = tx.send((k, (self.check)(k, slot, cancel)));
                });
            }
            drop(tx);
            for (k, verdict) in rx {
                // An ended check is stopped by nothing: raised quietly, its
                // flag keeps a later stop from saying so.
                if let Some(slot) = lengths.iter().position(|&j| j == k) {
                    flags[slot].0.cancel();
                }
                match verdict {
                    Ok(v) => self.settle(k, v, lengths, &flags, known, again),
                    Err(e) => {
                        flags.iter().for_each(|(c, _)| c.cancel());
                        error.get_or_insert(e);
                    }
                }
            }
        });
        if let Some(e) = error {
            return Err(e);
        }
        // A longer prefix that passed outweighs a shorter one that failed
        // (a flaky gate): what lands is what passed.
        known.red = known.red.max(known.green + 1);
        Ok(!self.cancel.is_cancelled())
    }

    /// Takes the verdict on the first `k` members into `known`, stopping
    /// the checks it makes needless.
    fn settle(
        &self,
        k: usize,
        verdict: Verdict,
        lengths: &[usize],
        flags: &[(Cancel, Listening)],
        known: &mut Known,
        again: bool,
    ) {
        let tickets = self.ids[..k].to_vec();
        match verdict {
            Verdict::Pass => {
                known.runs += 1;
                // A shorter prefix that failed was a flake.
                let flaky = again || known.red <= k;
                known.green = known.green.max(k);
                self.stop(
                    lengths,
                    flags,
                    |j| j < k,
                    &format!("{} passed", tickets.join(", ")),
                );
                let commit = self.commits[k - 1].clone();
                (self.emit)(Event::BatchVerified {
                    tickets,
                    commit,
                    flaky,
                });
            }
            Verdict::Fail(f) => {
                known.runs += 1;
                if k < known.red {
                    known.red = k;
                    known.failure = Some(f.clone());
                }
                // A red that may be a flake stops nothing: a longer stack
                // that passes outweighs it (and lands), where stopping it
                // would bisect and blame a member for the flake.
                if self.flaky_retries == 0 {
                    let why = format!("{} below it failed", tickets.join(", "));
                    self.stop(lengths, flags, |j| j > k, &why);
                }
                let message = f.message;
                (self.emit)(Event::BatchFailed { tickets, message });
            }
            Verdict::Cancelled => {}
        }
    }

    /// Stops the checks of `lengths` that `which` picks, saying why.
    fn stop(
        &self,
        lengths: &[usize],
        flags: &[(Cancel, Listening)],
        which: impl Fn(usize) -> bool,
        why: &str,
    ) {
        for (&j, (flag, _)) in lengths.iter().zip(flags) {
            if which(j) && !flag.is_cancelled() {
                flag.cancel();
                (self.emit)(Event::BatchCancelled {
                    tickets: self.ids[..j].to_vec(),
                    reason: why.to_string(),
                });
            }
        }
    }
}

impl Checked<'_, '_> {
    fn ids(&self, range: std::ops::Range<usize>) -> Vec<String> {
        self.jobs[range].iter().map(|j| j.ticket.clone()).collect()
    }

    /// Searches the stack for its longest green prefix and settles every
    /// member: all land, or the prefix lands and the culprit is rebuilt.
    fn settle(self, settled: &mut Settled) -> Result<(), EngineError> {
        let sh = self.sh;
        let n = self.jobs.len();
        let ids = self.ids(0..n);
        let emit = |e: Event| sh.emitter.emit(e);
        let check = |k: usize, slot: usize, cancel: &Cancel| self.check(k, slot, cancel);
        let prefixes = Prefixes {
            ids: &ids,
            tip: &self.stack.tip,
            commits: &self.commits,
            width: sh.settings.merge.checkouts.max(1),
            flaky_retries: sh.settings.merge.flaky_retries,
            cancel: sh.cancel,
            emit: &emit,
            check: &check,
        };
        match prefixes.search()? {
            None => self.cancelled(settled),
            Some(known) if known.green == n => {
                self.land_prefix(n, settled)?;
            }
            Some(known) => self.bisected(known, settled)?,
        }
        Ok(())
    }

    /// The gates on the first `k` members' commit, in merge checkout
    /// `slot`, their output added to the stack's log when they end.
    fn check(&self, k: usize, slot: usize, cancel: &Cancel) -> Result<Verdict, EngineError> {
        let of = format!(" (a stack of {})", self.ids(0..k).join(", "));
        let checkout = match slot {
            0 => "merge".to_string(),
            n => format!("merge-{}", n + 1),
        };
        let own = self.merge.log.with_file_name(format!("{checkout}.log"));
        let merge = Merge {
            log: &own,
            ..*self.merge
        };
        let _ = std::fs::remove_file(&own);
        let verdict = merge.gate(&self.commits[k - 1], &of, &checkout, cancel);
        let text = std::fs::read_to_string(&own).unwrap_or_default();
        let _ = std::fs::remove_file(&own);
        crate::log::append(self.merge.log, &text)?;
        verdict
    }

    /// Settles a bisected stack: the green prefix lands, the culprit is
    /// rebuilt, the members after it are queued again.
    fn bisected(mut self, known: Known, settled: &mut Settled) -> Result<(), EngineError> {
        let (green, red) = (known.green, known.red);
        let culprit = red - 1;
        self.sh.emitter.emit(Event::Bisected {
            landed: self.ids(0..green),
            culprit: self.jobs[culprit].ticket.clone(),
            requeued: self.ids(red..self.jobs.len()),
            gate_runs: known.runs,
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
        let failure = known.failure.expect("a red prefix has its failure");
        let message = match ahead.as_slice() {
            [] => format!("after merging onto the moved base: {}", failure.message),
            ahead => format!(
                "breaks the gates together with {}, which passed without it and landed: {}",
                ahead.join(", "),
                failure.message
            ),
        };
        let evidence_from = Some(match ahead.as_slice() {
            [] => MOVED_BASE.to_string(),
            ahead => format!("{} (merged with it)", ahead.join(", ")),
        });
        let outcome = MergeOutcome::Combination(Failure {
            message,
            evidence_from,
            ..failure
        });
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
        let top = &self.commits[k - 1];
        if !self.merge.advance(self.stack, top, &refs)? {
            settled.again.splice(0..0, self.jobs[..k].iter().cloned());
            return Ok(false);
        }
        sh.emitter.emit(Event::BatchLanded {
            tickets: ids,
            commit: top.clone(),
        });
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

/// Up to `count` prefix lengths spread evenly strictly between `lo` and
/// `hi`: the points that split what is unknown most evenly.
fn inside(lo: usize, hi: usize, count: usize) -> Vec<usize> {
    let mut points: Vec<usize> = (1..=count)
        .map(|j| lo + (hi - lo) * j / (count + 1))
        .filter(|&p| p > lo && p < hi)
        .collect();
    points.dedup();
    points
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::failure::FailureKind;
    use std::sync::Mutex;

    #[test]
    fn prefixes_are_spread_between_what_is_known() {
        assert_eq!(inside(0, 8, 1), [4]);
        assert_eq!(inside(0, 8, 3), [2, 4, 6]);
        assert_eq!(inside(4, 6, 3), [5]);
        assert_eq!(inside(4, 5, 2), Vec::<usize>::new());
        assert_eq!(inside(0, 4, 0), Vec::<usize>::new());
    }

    /// What a search of a stack of `n` did with `check`, `width` at once.
    fn search(
        n: usize,
        width: usize,
        flaky_retries: u32,
        check: &Check<'_>,
    ) -> (Option<(usize, usize, u32)>, Vec<Event>) {
        let ids: Vec<String> = (0..n).map(|i| format!("T{i}")).collect();
        let commits: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
        let events = Mutex::new(Vec::new());
        let emit = |e: Event| events.lock().unwrap().push(e);
        let cancel = Cancel::default();
        let prefixes = Prefixes {
            ids: &ids,
            tip: "tip",
            commits: &commits,
            width,
            flaky_retries,
            cancel: &cancel,
            emit: &emit,
            check,
        };
        let known = prefixes.search().unwrap();
        let known = known.map(|k| (k.green, k.red, k.runs));
        (known, events.into_inner().unwrap())
    }

    fn red() -> Verdict {
        Verdict::Fail(Failure::new(FailureKind::GateFailure, "red"))
    }

    /// Two stacks are checked at once; with reds trusted (no flaky
    /// retries) the shorter one fails and stops the longer, built on it,
    /// which would otherwise never end; the bisection then finds the
    /// culprit, the second member.
    #[test]
    fn a_trusted_red_stack_stops_the_stack_built_on_it_and_the_culprit_is_found() {
        let check = |k: usize, _slot: usize, cancel: &Cancel| {
            if k == 4 {
                while !cancel.is_cancelled() {
                    std::thread::yield_now();
                }
                return Ok(Verdict::Cancelled);
            }
            Ok(if k >= 2 { red() } else { Verdict::Pass })
        };
        let (known, events) = search(4, 2, 0, &check);
        assert_eq!(known, Some((1, 2, 2)), "green 1, red 2, two gate runs");
        let names: Vec<String> = events
            .iter()
            .map(|e| match e {
                Event::BatchStarted { tickets, .. } => format!("started {}", tickets.len()),
                Event::BatchFailed { tickets, .. } => format!("failed {}", tickets.len()),
                Event::BatchCancelled { tickets, reason } => {
                    format!("cancelled {} ({reason})", tickets.len())
                }
                Event::BatchVerified { tickets, .. } => format!("verified {}", tickets.len()),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            names,
            [
                "started 4",
                "started 2",
                "cancelled 4 (T0, T1 below it failed)",
                "failed 2",
                "started 1",
                "verified 1",
            ]
        );
    }

    /// A prefix that flakes red while the whole stack is checked beside it
    /// stops nothing: the stack passes, outweighs it and lands whole, with
    /// no bisection and no member blamed.
    #[test]
    fn a_red_that_may_be_a_flake_is_outweighed_by_the_longer_stack() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let ids: Vec<String> = (0..8).map(|i| format!("T{i}")).collect();
        let commits: Vec<String> = (0..8).map(|i| format!("c{i}")).collect();
        let events = Mutex::new(Vec::new());
        let prefix_failed = AtomicBool::new(false);
        let emit = |e: Event| {
            // A stop is made before the failure is told.
            let failed = matches!(e, Event::BatchFailed { .. });
            events.lock().unwrap().push(e);
            prefix_failed.fetch_or(failed, Ordering::SeqCst);
        };
        let check = |k: usize, _slot: usize, cancel: &Cancel| {
            if k == 4 {
                return Ok(red());
            }
            // The stack ends only once the prefix's red is settled.
            while !prefix_failed.load(Ordering::SeqCst) {
                std::thread::yield_now();
            }
            Ok(match cancel.is_cancelled() {
                true => Verdict::Cancelled,
                false => Verdict::Pass,
            })
        };
        let cancel = Cancel::default();
        let prefixes = Prefixes {
            ids: &ids,
            tip: "tip",
            commits: &commits,
            width: 2,
            flaky_retries: 1,
            cancel: &cancel,
            emit: &emit,
            check: &check,
        };
        let known = prefixes.search().unwrap().map(|k| (k.green, k.red, k.runs));
        let events = events.into_inner().unwrap();
        assert_eq!(known, Some((8, 9, 2)), "{events:?}");
        let flaky = (events.iter()).any(|e| matches!(e, Event::BatchVerified { flaky: true, .. }));
        assert!(flaky, "the prefix's red was a flake: {events:?}");
        let cancelled = (events.iter()).any(|e| matches!(e, Event::BatchCancelled { .. }));
        assert!(!cancelled, "{events:?}");
    }

    /// A stack red once and green when run again is green, and flaky.
    #[test]
    fn a_stack_red_once_then_green_is_flaky() {
        let runs = Mutex::new(0);
        let check = |k: usize, _slot: usize, _cancel: &Cancel| {
            let mut runs = runs.lock().unwrap();
            *runs += 1;
            Ok(if k == 3 && *runs == 1 {
                red()
            } else {
                Verdict::Pass
            })
        };
        let (known, events) = search(3, 1, 1, &check);
        assert_eq!(known, Some((3, 4, 2)));
        let flaky = events.iter().any(|e| {
            matches!(e, Event::BatchVerified { tickets, flaky: true, .. } if tickets.len() == 3)
        });
        assert!(flaky, "{events:?}");
    }

    /// One at a time, a red stack of 8 whose sixth member breaks it takes
    /// the stack, its retry and three bisection steps.
    #[test]
    fn one_checkout_bisects_in_log_n_gate_runs() {
        let check = |k: usize, _slot: usize, _cancel: &Cancel| {
            Ok(if k >= 6 { red() } else { Verdict::Pass })
        };
        let (known, _) = search(8, 1, 1, &check);
        assert_eq!(known, Some((5, 6, 5)));
    }
}
