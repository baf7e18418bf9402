//! The refs and commits of merges: a ticket's candidate and quarantine
//! refs, the run's branch and its target, commits made without a
//! checkout, and the sync of the run's branch onto the base (`run/merge/`
//! lands each candidate).
//!
//! The user's checkout is never harmed: while the base branch is checked
//! out in a working tree, merges land on the run's own branch
//! `planwright/run/<id>` and the base branch (with every checkout of it)
//! is fast-forwarded once, when the run ends, and only if each such
//! checkout has no uncommitted changes to tracked files ([`sync`]).
//! Otherwise the merges wait on the run's branch and the user is told the
//! one command to run.

use crate::error::EngineError;
use crate::git::guard::Guard;
use crate::git::repo::Repo;
use crate::git::Git;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Where a ticket's newest candidate lives while the ticket is open; the
/// ref is deleted once it merged (no ref per ticket outlives the run).
pub(crate) fn candidate_ref(ticket: &str) -> String {
    format!("refs/planwright/candidates/{ticket}")
}

/// Where the last candidate of a failed ticket is kept for the user.
pub(crate) fn quarantine_ref(ticket: &str) -> String {
    format!("refs/planwright/quarantine/{ticket}")
}

/// The branch holding a run's merges while the base cannot move.
pub(crate) fn held_branch(run: &str) -> String {
    format!("planwright/run/{run}")
}

/// Points `name` at `commit` (creating it): planwright's own write, which
/// `guard` checks before and takes its snapshot after.
pub(crate) fn set_ref(
    repo: &Repo,
    guard: &Guard,
    name: &str,
    commit: &str,
) -> Result<(), EngineError> {
    guard.own_write(|| {
        repo.git().args(["update-ref", name, commit]).output()?;
        Ok(())
    })
}

/// Points `name`, one of planwright's own refs the integrity guard never
/// trusts (a candidate's), at `commit`, while attempts may run: no
/// snapshot is taken.
pub(crate) fn set_own_ref(repo: &Repo, name: &str, commit: &str) -> Result<(), EngineError> {
    repo.git().args(["update-ref", name, commit]).output()?;
    Ok(())
}

/// Deletes `name` if it exists (planwright's own write, as [`set_ref`]).
pub(crate) fn delete_ref(repo: &Repo, guard: &Guard, name: &str) -> Result<(), EngineError> {
    guard.own_write(|| {
        repo.git().args(["update-ref", "-d", name]).output()?;
        Ok(())
    })
}

/// Moves `name` from `old` to `new` and deletes `delete`, all or none
/// (one `update-ref --stdin` transaction, logged with `reason`): false
/// when `name` was no longer at `old`. planwright's own write, which the
/// integrity guard checks before and takes its snapshot after.
pub(crate) fn compare_and_swap(
    repo: &Repo,
    guard: &Guard,
    name: &str,
    old: &str,
    new: &str,
    delete: &[&str],
    reason: &str,
) -> Result<bool, EngineError> {
    let mut transaction = format!("update {name} {new} {old}\n");
    for r in delete {
        transaction.push_str(&format!("delete {r}\n"));
    }
    guard.own_write(|| {
        Ok((repo.git())
            .args(["update-ref", "-m", reason, "--stdin"])
            .input(transaction)
            .succeeds()?)
    })
}

/// The full names of the refs under `prefix` (`refs/planwright/candidate/`).
pub(crate) fn refs_under(repo: &Repo, prefix: &str) -> Result<Vec<String>, EngineError> {
    let text = (repo.git())
        .args(["for-each-ref", "--format=%(refname)", prefix])
        .text()?;
    Ok(text.lines().map(str::to_string).collect())
}

/// The ids of the runs that have a branch of their own
/// ([`held_branch`]), the newest commit first.
pub(crate) fn held_runs(repo: &Repo) -> Result<Vec<String>, EngineError> {
    let text = (repo.git())
        .args([
            "for-each-ref",
            "--sort=-committerdate",
            "--format=%(refname:strip=4)",
            "refs/heads/planwright/run/",
        ])
        .text()?;
    Ok(text
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect())
}

/// Adds a committer identity when neither the environment nor the
/// repository's own configuration has one.
pub(crate) fn with_identity(git: Git, repo: &Repo) -> Git {
    repo.default_identity()
        .iter()
        .fold(git, |git, (name, value)| git.env(name, value))
}

/// Commits every file of the working tree as it is, with `message`, on
/// the branch checked out (a repository planwright made: the demo's).
pub(crate) fn commit_all(repo: &Repo, message: &str) -> Result<(), EngineError> {
    repo.git().args(["add", "-A"]).output()?;
    let commit = repo.git().args(["commit", "-q", "-m", message]);
    with_identity(commit, repo).output()?;
    Ok(())
}

/// Makes a commit of `tree` on `parent` with `message`.
pub(crate) fn commit_tree(
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

/// Makes a commit of `tree` with `parents` (the first one first) and
/// `message`.
pub(crate) fn commit_tree_of(
    repo: &Repo,
    tree: &str,
    parents: &[&str],
    message: &str,
) -> Result<String, EngineError> {
    let mut git = repo.git().args(["commit-tree", tree]);
    for p in parents {
        git = git.args(["-p", p]);
    }
    Ok(with_identity(git.args(["-m", message]), repo).text()?)
}

/// Where a run's merges go: the base branch, or the run's own branch while
/// the base branch is checked out somewhere.
#[derive(Debug)]
pub(crate) struct Target {
    /// The base branch (short name).
    pub base: String,
    /// The run's branch (short name, `planwright/run/<id>`).
    pub held: String,
    /// What planwright last did to the run's branch. The branch is
    /// planwright's own, so reading it back before each attempt and each
    /// merge would only cost a git process; should anyone else move it, the
    /// next merge's compare-and-swap fails and the branch is read again.
    /// The base branch is always read: the user may move it, or check it
    /// out, at any time.
    held_tip: Mutex<HeldTip>,
}

/// The run's branch as planwright last left it.
#[derive(Debug)]
pub(crate) enum HeldTip {
    /// Not known: read it.
    Unknown,
    /// It does not exist.
    Absent,
    /// It points at this commit.
    At(String),
}

impl Target {
    /// The target of run `run` on `base`.
    pub(crate) fn new(base: &str, run: &str) -> Target {
        Target {
            base: base.to_string(),
            held: held_branch(run),
            held_tip: Mutex::new(HeldTip::Unknown),
        }
    }

    /// The run's branch's tip, when it exists.
    fn held_tip(&self, repo: &Repo) -> Result<Option<String>, EngineError> {
        let mut known = self.held_tip.lock().unwrap_or_else(|e| e.into_inner());
        if let HeldTip::Unknown = *known {
            *known = match repo.ref_tip(&self.held_ref())? {
                Some(tip) => HeldTip::At(tip),
                None => HeldTip::Absent,
            };
        }
        Ok(match &*known {
            HeldTip::At(tip) => Some(tip.clone()),
            _ => None,
        })
    }

    pub(crate) fn know_held_tip(&self, tip: HeldTip) {
        *self.held_tip.lock().unwrap_or_else(|e| e.into_inner()) = tip;
    }

    fn base_ref(&self) -> String {
        format!("refs/heads/{}", self.base)
    }

    pub(crate) fn held_ref(&self) -> String {
        format!("refs/heads/{}", self.held)
    }

    /// Both refs, for reading what landed.
    pub(crate) fn refs(&self) -> Vec<String> {
        vec![self.base_ref(), self.held_ref()]
    }

    /// The commit new work starts from: the run's branch when it holds
    /// merges, else the base branch.
    pub(crate) fn tip(&self, repo: &Repo) -> Result<String, EngineError> {
        match self.held_tip(repo)? {
            Some(tip) => Ok(tip),
            None => repo.base_tip(&self.base),
        }
    }

    /// The ref the next merge moves, its current value, and whether it is
    /// created by that merge.
    pub(crate) fn landing(&self, repo: &Repo) -> Result<(String, String, bool), EngineError> {
        if let Some(tip) = self.held_tip(repo)? {
            return Ok((self.held_ref(), tip, false));
        }
        let tip = repo.base_tip(&self.base)?;
        if checkouts_of(repo, &self.base)?.is_empty() {
            Ok((self.base_ref(), tip, false))
        } else {
            Ok((self.held_ref(), tip, true))
        }
    }
}

/// The working trees (the main one and linked ones, planwright's own
/// workspaces excepted) that have `branch` checked out.
pub(crate) fn checkouts_of(repo: &Repo, branch: &str) -> Result<Vec<PathBuf>, EngineError> {
    let text = repo
        .git()
        .args(["worktree", "list", "--porcelain"])
        .text()?;
    let own = repo.state_dir();
    let wanted = format!("branch refs/heads/{branch}");
    let mut out = Vec::new();
    let mut path = None;
    for line in text.lines() {
        if let Some(p) = line.strip_prefix("worktree ") {
            path = Some(PathBuf::from(p));
        } else if line == wanted {
            if let Some(p) = path.take().filter(|p| !p.starts_with(&own)) {
                out.push(p);
            }
        }
    }
    Ok(out)
}

/// git on one of the user's checkouts that `git worktree list` gave.
fn user_checkout(dir: &Path) -> Git {
    Git::with_tree(dir.join(".git"), dir)
}

fn is_clean(dir: &Path) -> Result<bool, EngineError> {
    let status = user_checkout(dir)
        .args(["status", "--porcelain", "--untracked-files=no"])
        .text()?;
    Ok(status.is_empty())
}

/// What [`sync`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Sync {
    /// The run's branch holds nothing the base lacks.
    Nothing,
    /// The base branch and its clean checkouts moved to `commit`.
    Advanced {
        /// The new tip.
        commit: String,
    },
    /// The merges stay on the run's branch.
    Held {
        /// Why, and what to run.
        reason: String,
    },
}

/// Moves the base branch to the run's branch when that is a fast-forward
/// and every checkout of the base is clean, updating those checkouts
/// (`git read-tree -m -u`, which refuses rather than overwrite an edit made
/// in the meantime; the branch is then moved back). Called when a run
/// starts and when it ends, never after each merge.
pub(crate) fn sync(repo: &Repo, guard: &Guard, target: &Target) -> Result<Sync, EngineError> {
    // Whatever sync does to the run's branch, it is read again after.
    target.know_held_tip(HeldTip::Unknown);
    let Some(held) = repo.ref_tip(&target.held_ref())? else {
        return Ok(Sync::Nothing);
    };
    let base = repo.base_tip(&target.base)?;
    let merge_cmd = format!("git merge --ff-only {}", target.held);
    if base == held {
        delete_ref(repo, guard, &target.held_ref())?;
        return Ok(Sync::Nothing);
    }
    let ff = repo
        .git()
        .args(["merge-base", "--is-ancestor", &base, &held])
        .succeeds()?;
    if !ff {
        return Ok(Sync::Held {
            reason: format!(
                "`{}` moved on its own since the merges began; merge them with `git merge {}`",
                target.base, target.held
            ),
        });
    }
    let checkouts = checkouts_of(repo, &target.base)?;
    for dir in &checkouts {
        if !is_clean(dir)? {
            return Ok(Sync::Held {
                reason: dirty(dir, &target.base, &merge_cmd),
            });
        }
    }
    // planwright's own write to the user's repository: the integrity guard
    // checks before it and takes its snapshot after.
    let held_back = guard.own_write(|| advance(repo, target, &base, &held, &checkouts))?;
    if let Some(reason) = held_back {
        return Ok(Sync::Held { reason });
    }
    delete_ref(repo, guard, &target.held_ref())?;
    Ok(Sync::Advanced { commit: held })
}

/// Moves the base from `base` to `held` and fast-forwards its clean
/// `checkouts`; the reason it could not, if it could not.
fn advance(
    repo: &Repo,
    target: &Target,
    base: &str,
    held: &str,
    checkouts: &[std::path::PathBuf],
) -> Result<Option<String>, EngineError> {
    let merge_cmd = format!("git merge --ff-only {}", target.held);
    let base_ref = target.base_ref();
    let moved = repo
        .git()
        .args([
            "update-ref",
            "-m",
            "planwright: land run",
            &base_ref,
            held,
            base,
        ])
        .succeeds()?;
    if !moved {
        return Ok(Some(format!(
            "`{}` moved while it was being advanced; run `{merge_cmd}`",
            target.base
        )));
    }
    for dir in checkouts {
        let updated = user_checkout(dir)
            .args(["read-tree", "-m", "-u", base, held])
            .succeeds()?;
        if !updated {
            // An edit arrived between the check and the update: put the
            // branch back so the checkout and its branch agree again.
            repo.git()
                .args(["update-ref", &base_ref, base, held])
                .output()?;
            return Ok(Some(dirty(dir, &target.base, &merge_cmd)));
        }
    }
    Ok(None)
}

fn dirty(dir: &Path, base: &str, merge_cmd: &str) -> String {
    format!(
        "the checkout `{}` of `{base}` has uncommitted changes; commit or stash them, then run `{merge_cmd}` there (or `planwright run` again)",
        dir.display()
    )
}

/// How often a merge is redone when the target moved between read and write.
pub(crate) const CAS_TRIES: usize = 5;

/// The old value that makes `git update-ref` create a ref only if it is absent.
pub(crate) const ZERO: &str = "0000000000000000000000000000000000000000";

/// The first 10 characters of a commit id.
pub(crate) fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}
