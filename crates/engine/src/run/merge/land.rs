//! Landing a verified candidate: serialized (one merger thread), merged
//! without a checkout (`git merge-tree --write-tree`), gated again when the
//! target moved since verification, and advanced by compare-and-swap
//! (`git update-ref`). A candidate planwright committed on a target that
//! has not moved since is already the commit that merge would make, and
//! lands as it is.

use crate::error::EngineError;
use crate::events::Event;
use crate::git::guard::Guard;
use crate::git::refs::{self, commit_tree, short, HeldTip, Target, CAS_TRIES, ZERO};
use crate::git::repo::Repo;
use crate::git::tree::{self, Merged};
use crate::model::failure::{Failure, FailureKind};
use crate::model::{Step, Verdict};
use crate::run::msg::{MergeJob, MergeOutcome};
use crate::run::routes::ticket_gates;
use crate::run::shared::Shared;
use crate::store::Store;
use crate::verify::checkout::Checkouts;
use crate::verify::gates::GateSettings;
use planwright_os::process::Cancel;
use planwright_plan::model::Gate;
use std::path::Path;

/// Whose text a failure on a moved base's tree may hold, besides the
/// ticket's own ([`Failure::evidence_from`]).
pub(super) const MOVED_BASE: &str =
    "the tickets merged onto the base since this change was verified";

/// One verified candidate, landed alone or as a member of a stack.
#[derive(Clone, Copy)]
pub(super) struct StackMember<'a> {
    /// The candidate commit.
    pub(super) candidate: &'a str,
    /// The tip it was verified on.
    pub(super) verified_on: &'a str,
    /// Its commit message, trailers included.
    pub(super) message: &'a str,
}

/// Verified candidates stacked on the target's tip, one commit each.
pub(super) struct Stack {
    /// The ref the stack lands on.
    pub(super) name: String,
    /// The tip it is stacked on.
    pub(super) tip: String,
    /// Whether `name` does not exist yet.
    pub(super) create: bool,
    /// Per member, in order: its commit on the stack, or its conflict with
    /// what is below it.
    pub(super) layers: Vec<Result<String, Failure>>,
}

/// The merged trees whose gates passed in this run, kept in the store: a
/// resumed run does not run them again on a tree they passed on.
#[derive(Clone, Copy)]
pub(super) struct Passed<'a> {
    /// The run's store.
    pub(super) store: &'a Store,
    /// The run.
    pub(super) run: &'a str,
    /// The gates, as JSON: what passed.
    pub(super) gates: &'a str,
}

/// What a merge needs.
pub(super) struct Merge<'a> {
    /// The target repository.
    pub(super) repo: &'a Repo,
    /// The run's integrity guard, through which a merge moves the target.
    pub(super) guard: &'a Guard,
    /// Where merges go.
    pub(super) target: &'a Target,
    /// Where the gates run again when the target moved.
    pub(super) checkouts: &'a Checkouts,
    /// The gates.
    pub(super) gates: &'a [Gate],
    /// How gates run.
    pub(super) gate_settings: &'a GateSettings,
    /// The ticket's log, which gates run again append to.
    pub(super) log: &'a Path,
    /// The trees the gates already passed on.
    pub(super) passed: Passed<'a>,
    /// Times a red merged tree of one candidate runs its gates again
    /// (`[merge] flaky_retries`; a stack's re-runs are the batch's).
    pub(super) flaky_retries: u32,
}

/// Told of each run again of a candidate's gates on its merged tree: the
/// failure, the gate that failed, and whether they passed that time.
pub(super) type Retried<'r> = dyn FnMut(&Failure, &Gate, bool) + 'r;

impl Merge<'_> {
    /// Lands `member`'s candidate (verified on its `verified_on`) and deletes
    /// `candidate_ref`, in one ref transaction. `before_ref_update` is
    /// called with the new commit before the ref moves, so the state store
    /// knows it first.
    pub(super) fn land(
        &self,
        member: &StackMember<'_>,
        candidate_ref: &str,
        before_ref_update: &mut dyn FnMut(&str) -> Result<(), EngineError>,
        retried: &mut Retried<'_>,
        cancel: &Cancel,
    ) -> Result<MergeOutcome, EngineError> {
        let StackMember {
            candidate,
            verified_on,
            message,
        } = *member;
        for _ in 0..CAS_TRIES {
            let (name, tip, create) = self.target.landing(self.repo)?;
            let commit =
                if tip == verified_on && self.repo.take_own_candidate(candidate, &tip, message) {
                    // planwright committed the candidate on this very tip with
                    // this message: it is the commit a merge would make.
                    candidate.to_string()
                } else {
                    let tree = match self.merge_tree(&tip, candidate, verified_on)? {
                        Ok(tree) => tree,
                        Err(conflict) => return Ok(MergeOutcome::Rejected(conflict)),
                    };
                    commit_tree(self.repo, &tree, &tip, message)?
                };
            if tip != verified_on {
                match self.gate_again_if_flaky(&commit, retried, cancel)? {
                    Verdict::Pass => {}
                    Verdict::Cancelled => return Ok(MergeOutcome::Cancelled),
                    Verdict::Fail(f) => {
                        let message = format!("after merging onto the moved base: {}", f.message);
                        let evidence_from = Some(MOVED_BASE.to_string());
                        return Ok(MergeOutcome::Combination(Failure {
                            message,
                            evidence_from,
                            ..f
                        }));
                    }
                }
            }
            before_ref_update(&commit)?;
            let old = if create { ZERO } else { tip.as_str() };
            if self.swap(&name, old, &commit, &[candidate_ref], "merge")? {
                if name == self.target.held_ref() {
                    self.target.know_held_tip(HeldTip::At(commit.clone()));
                }
                return Ok(MergeOutcome::Merged { commit });
            }
            // Someone else moved the ref between our read and our write:
            // read it again and merge again.
            self.target.know_held_tip(HeldTip::Unknown);
        }
        Err(EngineError::Integrity(format!(
            "the base branch `{}` kept moving under the merge ({CAS_TRIES} tries); is another process writing to it?",
            self.target.base
        )))
    }

    /// Builds `members` into a stack on the target's tip without a
    /// checkout: one commit per member, each on the one before. A member
    /// that does not merge onto what is below it gets its conflict instead,
    /// and the next member stacks on what is below it.
    pub(super) fn stack(&self, members: &[StackMember<'_>]) -> Result<Stack, EngineError> {
        let (name, tip, create) = self.target.landing(self.repo)?;
        let mut layers = Vec::with_capacity(members.len());
        let mut top = tip.clone();
        for m in members {
            if top == m.verified_on && self.repo.take_own_candidate(m.candidate, &top, m.message) {
                // The commit a merge would make, as in `land`.
                top = m.candidate.to_string();
                layers.push(Ok(top.clone()));
                continue;
            }
            match self.merge_tree(&top, m.candidate, m.verified_on)? {
                Ok(tree) => {
                    top = commit_tree(self.repo, &tree, &top, m.message)?;
                    layers.push(Ok(top.clone()));
                }
                Err(conflict) => layers.push(Err(conflict)),
            }
        }
        Ok(Stack {
            name,
            tip,
            create,
            layers,
        })
    }

    /// Moves the target from the stack's tip to `commit` (one of the
    /// stack's) and deletes `candidate_refs`, in one ref transaction;
    /// false when the target moved meanwhile (nothing changed then).
    pub(super) fn advance(
        &self,
        stack: &Stack,
        commit: &str,
        candidate_refs: &[&str],
    ) -> Result<bool, EngineError> {
        let old = if stack.create {
            ZERO
        } else {
            stack.tip.as_str()
        };
        let swapped = self.swap(&stack.name, old, commit, candidate_refs, "merge batch")?;
        if !swapped {
            self.target.know_held_tip(HeldTip::Unknown);
        } else if stack.name == self.target.held_ref() {
            self.target.know_held_tip(HeldTip::At(commit.to_string()));
        }
        Ok(swapped)
    }

    /// The compare-and-swap of `name` from `old` to `new`, deleting `refs`:
    /// planwright's own write, which the integrity guard checks before and
    /// takes its snapshot after.
    fn swap(
        &self,
        name: &str,
        old: &str,
        new: &str,
        refs: &[&str],
        why: &str,
    ) -> Result<bool, EngineError> {
        let reason = format!("planwright: {why}");
        refs::compare_and_swap(self.repo, self.guard, name, old, new, refs, &reason)
    }

    /// Runs the gates on the merged tree `commit` in the merge checkout
    /// `checkout` (`merge`, `merge-2`, ...); `of` says which tickets it
    /// holds, when it is a stack's.
    pub(super) fn gate(
        &self,
        commit: &str,
        of: &str,
        checkout: &str,
        cancel: &Cancel,
    ) -> Result<Verdict, EngineError> {
        let tree = tree::tree_of(self.repo, commit)?;
        let Passed { store, run, gates } = self.passed;
        if store.tree_passed(run, &tree, gates)? {
            let line = format!(
                "-- the gates passed on the merged tree {}{of} before; not run again\n",
                short(commit)
            );
            crate::log::append(self.log, &line)?;
            return Ok(Verdict::Pass);
        }
        // The views read gate runs of merged trees by this line's start.
        let line = format!("-- gates again on the merged tree {}{of}\n", short(commit));
        crate::log::append(self.log, &line)?;
        let verdict = self.checkouts.gate(
            checkout,
            commit,
            self.gates,
            self.gate_settings,
            self.log,
            cancel,
        )?;
        if verdict == Verdict::Pass {
            store.tree_passes(run, &tree, gates)?;
        }
        Ok(verdict)
    }

    /// [`Merge::gate`] on one candidate's merged tree in the `merge`
    /// checkout; a gate that failed (exited non-zero: not a timeout or a
    /// limit) runs again on the same tree, `flaky_retries` times at most,
    /// and the last verdict stands. Without it one flake on a moved base
    /// would cost the ticket a new attempt and a strike.
    fn gate_again_if_flaky(
        &self,
        commit: &str,
        retried: &mut Retried<'_>,
        cancel: &Cancel,
    ) -> Result<Verdict, EngineError> {
        let mut verdict = self.gate(commit, "", "merge", cancel)?;
        for _ in 0..self.flaky_retries {
            let Verdict::Fail(failure) = &verdict else {
                break;
            };
            let Some(failed) = crate::verify::gates::failed_gate(self.gates, failure) else {
                break;
            };
            let line = "-- the gates failed on the merged tree; run again on the same tree (`[merge] flaky_retries`)\n";
            crate::log::append(self.log, line)?;
            let again = self.gate(commit, "", "merge", cancel)?;
            retried(failure, failed, again == Verdict::Pass);
            verdict = again;
        }
        Ok(verdict)
    }

    /// The merged tree of `tip` and `candidate`, or the conflict with the
    /// paths and what changed on the other side since `verified_on`.
    fn merge_tree(
        &self,
        tip: &str,
        candidate: &str,
        verified_on: &str,
    ) -> Result<Result<String, Failure>, EngineError> {
        match tree::merge_tree(self.repo, tip, candidate)? {
            Merged::Clean(tree) => Ok(Ok(tree)),
            Merged::Conflict(paths) => Ok(Err(self.conflict(&paths, tip, verified_on)?)),
        }
    }

    /// A `merge_conflict` failure whose evidence is what the next attempt
    /// needs: the conflicting paths and the other side's changes to them.
    fn conflict(
        &self,
        paths: &[String],
        tip: &str,
        verified_on: &str,
    ) -> Result<Failure, EngineError> {
        let log = tree::log_of_paths(self.repo, verified_on, tip, paths)?;
        let stat = tree::stat_of_paths(self.repo, verified_on, tip, paths)?;
        let evidence = format!(
            "conflicting paths:\n{}\n\nchanged on `{}` since this attempt's base {}:\n{log}\n{stat}",
            paths
                .iter()
                .map(|p| format!("- {p}"))
                .collect::<Vec<_>>()
                .join("\n"),
            self.target.base,
            short(verified_on)
        );
        Ok(Failure::new(
            FailureKind::MergeConflict,
            format!(
                "conflicts with `{}` at {} in {}",
                self.target.base,
                short(tip),
                paths.join(", ")
            ),
        )
        .with_evidence(evidence))
    }
}

/// The merge of `gates` (`key`: their JSON) on the run's target, its
/// output into `log`.
pub(super) fn merge_with<'a>(
    sh: &'a Shared,
    gates: &'a [Gate],
    key: &'a str,
    log: &'a Path,
) -> Merge<'a> {
    Merge {
        repo: sh.repo,
        guard: sh.guard,
        target: &sh.target,
        checkouts: &sh.checkouts,
        gates,
        gate_settings: &sh.settings.gates,
        log,
        passed: Passed {
            store: &sh.store,
            run: &sh.run,
            gates: key,
        },
        flaky_retries: sh.settings.merge.flaky_retries,
    }
}

/// The key of `gates` in the record of trees they passed on.
pub(super) fn gates_key(gates: &[Gate]) -> String {
    serde_json::to_string(gates).expect("gates serialize")
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
    let key = gates_key(&gates);
    let merge = merge_with(sh, &gates, &key, &log);
    let mut record = |commit: &str| -> Result<(), EngineError> {
        Ok(sh.store.begin_merge(&sh.run, id, commit)?)
    };
    let mut retried = |failure: &Failure, gate: &Gate, passed: bool| {
        if passed {
            sh.flaky(&gate.command_line());
        }
        sh.emitter.emit(Event::GateRetried {
            ticket: id.to_string(),
            attempt: job.attempt,
            gate: gate.command_line(),
            message: failure.message.clone(),
            passed,
        });
    };
    let message = sh.message(id);
    let member = StackMember {
        candidate: &job.candidate,
        verified_on: &job.verified_on,
        message: &message,
    };
    let outcome = merge.land(
        &member,
        &refs::candidate_ref(id),
        &mut record,
        &mut retried,
        sh.cancel,
    )?;
    if let MergeOutcome::Merged { commit } = &outcome {
        sh.store.landed(&sh.run, id, Step::Merge, commit)?;
    }
    Ok(outcome)
}
