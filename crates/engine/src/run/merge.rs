//! Landing a verified candidate: serialized (one merger thread), merged
//! without a checkout (`git merge-tree --write-tree`), gated again when the
//! target moved since verification, and advanced by compare-and-swap
//! (`git update-ref`). A candidate planwright committed on a target that
//! has not moved since is already the commit that merge would make, and
//! lands as it is.

use crate::error::EngineError;
use crate::git::merge::*;
use crate::git::repo::Repo;
use crate::model::failure::{Failure, FailureKind};
use crate::model::Verdict;
use crate::process::Cancel;
use crate::verify::checkout::Checkouts;
use crate::verify::gates::GateSettings;
use planwright_plan::model::Gate;
use std::path::Path;

/// How a merge ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeOutcome {
    /// The target now points at `commit`.
    Merged {
        /// The new tip.
        commit: String,
    },
    /// The candidate does not merge onto the current tip, or its gates fail there.
    Rejected(Failure),
    /// The run was interrupted during the gates.
    Cancelled,
}

/// One verified candidate of a batch.
pub struct StackMember<'a> {
    /// The candidate commit.
    pub candidate: &'a str,
    /// Its ref, deleted as the batch lands.
    pub candidate_ref: &'a str,
    /// The tip it was verified on.
    pub verified_on: &'a str,
    /// Its commit message, trailers included.
    pub message: &'a str,
}

/// What a merge needs.
pub struct Merge<'a> {
    /// The target repository.
    pub repo: &'a Repo,
    /// Where merges go.
    pub target: &'a Target,
    /// Where the gates run again when the target moved.
    pub checkouts: &'a Checkouts,
    /// The gates.
    pub gates: &'a [Gate],
    /// How gates run.
    pub gate_settings: &'a GateSettings,
    /// The ticket's log, which gates run again append to.
    pub log: &'a Path,
}

impl Merge<'_> {
    /// Lands `candidate` (verified on `verified_on`) and deletes
    /// `candidate_ref`, in one ref transaction. `before_ref_update` is
    /// called with the new commit before the ref moves, so the state store
    /// knows it first.
    pub fn land(
        &self,
        candidate: &str,
        candidate_ref: &str,
        verified_on: &str,
        message: &str,
        before_ref_update: &mut dyn FnMut(&str) -> Result<(), EngineError>,
        cancel: &Cancel,
    ) -> Result<MergeOutcome, EngineError> {
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
                match self.gate_again(&commit, cancel)? {
                    Verdict::Pass => {}
                    Verdict::Cancelled => return Ok(MergeOutcome::Cancelled),
                    Verdict::Fail(f) => {
                        let message = format!("after merging onto the moved base: {}", f.message);
                        return Ok(MergeOutcome::Rejected(Failure { message, ..f }));
                    }
                }
            }
            before_ref_update(&commit)?;
            let old = if create { ZERO } else { tip.as_str() };
            // planwright's own write: the integrity guard checks before it
            // and takes its snapshot after.
            let transaction = format!("update {name} {commit} {old}\ndelete {candidate_ref}\n");
            let swapped = self.repo.guard().own_write(|| {
                Ok(self
                    .repo
                    .git()
                    .args(["update-ref", "-m", "planwright: merge", "--stdin"])
                    .input(transaction)
                    .succeeds()?)
            })?;
            if swapped {
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

    /// Lands a batch of verified candidates at once: one commit per member,
    /// each made without a checkout on the one before, the gates run once
    /// on the stack's tip, and the target advanced to that tip with every
    /// candidate ref deleted in one ref transaction. `None` when the stack
    /// does not merge or its gates fail (the caller lands the members one
    /// at a time, so the base never moves to a tree whose gates failed).
    /// `before_ref_update` receives each member's commit before the ref moves.
    pub fn land_stack(
        &self,
        members: &[StackMember<'_>],
        before_ref_update: &mut dyn FnMut(usize, &str) -> Result<(), EngineError>,
        cancel: &Cancel,
    ) -> Result<Option<Vec<String>>, EngineError> {
        let (name, tip, create) = self.target.landing(self.repo)?;
        let mut commits = Vec::with_capacity(members.len());
        let mut top = tip.clone();
        for m in members {
            let Ok(tree) = self.merge_tree(&top, m.candidate, m.verified_on)? else {
                return Ok(None);
            };
            top = commit_tree(self.repo, &tree, &top, m.message)?;
            commits.push(top.clone());
        }
        crate::log::append(
            self.log,
            &format!(
                "-- gates on a stack of {} tickets {}\n",
                members.len(),
                short(&top)
            ),
        )?;
        let verdict = (self.checkouts).gate(
            "merge",
            &top,
            self.gates,
            self.gate_settings,
            self.log,
            cancel,
        )?;
        if verdict != Verdict::Pass {
            return Ok(None);
        }
        for (i, commit) in commits.iter().enumerate() {
            before_ref_update(i, commit)?;
        }
        let old = if create { ZERO } else { tip.as_str() };
        let mut transaction = format!("update {name} {top} {old}\n");
        for m in members {
            transaction.push_str(&format!("delete {}\n", m.candidate_ref));
        }
        let swapped = self.repo.guard().own_write(|| {
            Ok(self
                .repo
                .git()
                .args(["update-ref", "-m", "planwright: merge batch", "--stdin"])
                .input(transaction)
                .succeeds()?)
        })?;
        if !swapped {
            // Moved under us: the members land one at a time from the new tip.
            self.target.know_held_tip(HeldTip::Unknown);
            return Ok(None);
        }
        if name == self.target.held_ref() {
            self.target.know_held_tip(HeldTip::At(top));
        }
        Ok(Some(commits))
    }

    /// The merged tree of `tip` and `candidate`, or the conflict with the
    /// paths and what changed on the other side since `verified_on`.
    fn merge_tree(
        &self,
        tip: &str,
        candidate: &str,
        verified_on: &str,
    ) -> Result<Result<String, Failure>, EngineError> {
        let git =
            self.repo
                .git()
                .args(["merge-tree", "--write-tree", "--name-only", tip, candidate]);
        let out = git.raw()?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        match out.status.code() {
            Some(0) => Ok(Ok(text.lines().next().unwrap_or_default().to_string())),
            Some(1) => Ok(Err(self.conflict(&text, tip, verified_on)?)),
            _ => Err(git.failure(&out).into()),
        }
    }

    /// A `merge_conflict` failure whose evidence is what the next attempt
    /// needs: the conflicting paths and the other side's changes to them.
    fn conflict(&self, text: &str, tip: &str, verified_on: &str) -> Result<Failure, EngineError> {
        let paths: Vec<&str> = text.lines().skip(1).take_while(|l| !l.is_empty()).collect();
        let range = format!("{verified_on}..{tip}");
        let log = self
            .repo
            .git()
            .args(["log", "--format=%h %s", &range, "--"])
            .args(&paths)
            .text()?;
        let stat = self
            .repo
            .git()
            .args(["diff", "--stat", verified_on, tip, "--"])
            .args(&paths)
            .text()?;
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

    /// Runs the gates on a merged commit, in the `merge` checkout.
    fn gate_again(&self, commit: &str, cancel: &Cancel) -> Result<Verdict, EngineError> {
        crate::log::append(
            self.log,
            &format!("-- gates again on the merged tree {}\n", short(commit)),
        )?;
        self.checkouts.gate(
            "merge",
            commit,
            self.gates,
            self.gate_settings,
            self.log,
            cancel,
        )
    }
}
