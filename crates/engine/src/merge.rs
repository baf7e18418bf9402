//! Landing a verified candidate on the base branch: serialized (one caller),
//! merged without a checkout (`git merge-tree --write-tree`), gated again when
//! the base moved since verification, and advanced by compare-and-swap
//! (`git update-ref`). The user's working tree is only ever fast-forwarded,
//! and only when it is a clean checkout of the base branch.

use crate::checkout::Checkouts;
use crate::error::EngineError;
use crate::failure::{Failure, FailureKind};
use crate::gates::{GateSettings, Verdict};
use crate::git::Git;
use crate::process::Cancel;
use crate::repo::Repo;
use planwright_plan::model::{Gate, Ticket};
use std::path::Path;

/// The commit message of a ticket's one commit, trailers included.
pub fn commit_message(ticket: &Ticket, run: &str) -> String {
    let title = if ticket.title.trim().is_empty() {
        ticket.id.as_str()
    } else {
        ticket.title.trim()
    };
    format!(
        "{}: {title}\n\nPlanwright-Ticket: {}\nPlanwright-Run: {run}\n",
        ticket.id, ticket.id
    )
}

/// Adds a committer identity when neither the environment nor the
/// repository's own configuration has one (global config is never read).
pub fn with_identity(git: Git, repo: &Repo) -> Git {
    let mut git = git;
    for (key, var) in [("user.name", "NAME"), ("user.email", "EMAIL")] {
        let configured = repo
            .git()
            .args(["config", "--get", key])
            .succeeds()
            .unwrap_or(false);
        let default = if var == "NAME" {
            "planwright"
        } else {
            "planwright@localhost"
        };
        for who in ["AUTHOR", "COMMITTER"] {
            let env = format!("GIT_{who}_{var}");
            if !configured && std::env::var_os(&env).is_none() {
                git = git.env(env, default);
            }
        }
    }
    git
}

/// Makes a commit of `tree` on `parent` with `message`.
pub fn commit_tree(
    repo: &Repo,
    tree: &str,
    parent: &str,
    message: &str,
) -> Result<String, EngineError> {
    let git = repo
        .git()
        .args(["commit-tree", tree, "-p", parent, "-m", message]);
    Ok(with_identity(git, repo).text()?)
}

/// How a merge ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeOutcome {
    /// The base branch now points at `commit`.
    Merged {
        /// The new tip.
        commit: String,
    },
    /// The candidate does not merge onto the current tip, or its gates fail there.
    Rejected(Failure),
    /// The run was interrupted during the gates.
    Cancelled,
}

/// What a merge needs.
pub struct Merge<'a> {
    /// The target repository.
    pub repo: &'a Repo,
    /// The base branch.
    pub base: &'a str,
    /// Where the gates run again when the base moved.
    pub checkouts: &'a Checkouts,
    /// The gates.
    pub gates: &'a [Gate],
    /// How gates run.
    pub gate_settings: &'a GateSettings,
}

impl Merge<'_> {
    /// Lands `candidate` (verified on `verified_on`). `before_ref_update` is
    /// called with the new commit before the branch moves, so the state store
    /// knows it first.
    pub fn land(
        &self,
        candidate: &str,
        verified_on: &str,
        message: &str,
        log: &Path,
        before_ref_update: &mut dyn FnMut(&str) -> Result<(), EngineError>,
        cancel: &Cancel,
    ) -> Result<MergeOutcome, EngineError> {
        for _ in 0..CAS_TRIES {
            let tip = self.repo.base_tip(self.base)?;
            let tree = match self.merge_tree(&tip, candidate)? {
                Ok(tree) => tree,
                Err(conflict) => return Ok(MergeOutcome::Rejected(conflict)),
            };
            let commit = commit_tree(self.repo, &tree, &tip, message)?;
            if tip != verified_on {
                match self.gate_again(&commit, log, cancel)? {
                    Verdict::Pass => {}
                    Verdict::Cancelled => return Ok(MergeOutcome::Cancelled),
                    Verdict::Fail(f) => {
                        let message = format!("after merging onto the moved base: {}", f.message);
                        return Ok(MergeOutcome::Rejected(Failure { message, ..f }));
                    }
                }
            }
            before_ref_update(&commit)?;
            // planwright's own write: the integrity guard checks before it
            // and takes its snapshot after.
            if self
                .repo
                .guard()
                .own_write(|| self.advance(&tip, &commit))?
            {
                return Ok(MergeOutcome::Merged { commit });
            }
            // Someone else moved the base between our read and our write: merge again.
        }
        Err(EngineError::Integrity(format!(
            "the base branch `{}` kept moving under the merge ({CAS_TRIES} tries); is another process writing to it?",
            self.base
        )))
    }

    /// The merged tree of `tip` and `candidate`, or the conflict.
    fn merge_tree(
        &self,
        tip: &str,
        candidate: &str,
    ) -> Result<Result<String, Failure>, EngineError> {
        let git =
            self.repo
                .git()
                .args(["merge-tree", "--write-tree", "--name-only", tip, candidate]);
        let out = git.raw()?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        match out.status.code() {
            Some(0) => Ok(Ok(text.lines().next().unwrap_or_default().to_string())),
            Some(1) => Ok(Err(Failure::new(
                FailureKind::MergeConflict,
                format!("conflicts with `{}` at {}", self.base, short(tip)),
            )
            .with_evidence(text))),
            _ => Err(git.failure(&out).into()),
        }
    }

    /// Runs the gates on a merged commit, in the `merge` checkout.
    fn gate_again(
        &self,
        commit: &str,
        log: &Path,
        cancel: &Cancel,
    ) -> Result<Verdict, EngineError> {
        crate::gates::append(
            log,
            &format!("-- gates again on the merged tree {}\n", short(commit)),
        )?;
        self.checkouts
            .gate("merge", commit, self.gates, self.gate_settings, log, cancel)
    }

    /// Moves the base from `tip` to `commit` by compare-and-swap; fast-forwards
    /// the user's checkout when it is a clean checkout of the base. False when
    /// the base was no longer at `tip`.
    fn advance(&self, tip: &str, commit: &str) -> Result<bool, EngineError> {
        let fast_forward = self.repo.checked_out_branch()?.as_deref() == Some(self.base)
            && self.repo.is_clean()?;
        let branch = format!("refs/heads/{}", self.base);
        let swapped = self
            .repo
            .git()
            .args([
                "update-ref",
                "-m",
                "planwright: merge",
                &branch,
                commit,
                tip,
            ])
            .succeeds()?;
        if swapped && fast_forward {
            // A checkout the user changed meanwhile is left as it is.
            let _ = self
                .repo
                .git()
                .args(["read-tree", "-m", "-u", tip, commit])
                .output();
        }
        Ok(swapped)
    }
}

/// How often a merge is redone when the base moved between read and write.
const CAS_TRIES: usize = 5;

/// The first 10 characters of a commit id.
pub fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}
