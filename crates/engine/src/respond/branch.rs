//! The pull request's branch on the forge before and after a round: what
//! others pushed there is taken first (a fast-forward of the run's
//! branch, or a merge into it when the run has gone past the branch), and
//! the round's result is pushed on top, never over it.

use super::RespondError;
use crate::deliver::{self, fetch, Push};
use crate::git::guard::Guard;
use crate::git::objects;
use crate::git::refs::{commit_tree_of, held_branch, set_ref, Target};
use crate::git::repo::Repo;
use crate::git::tree::{merge_tree, Merged};
use crate::store::RunRow;
use planwright_config::Secret;

/// What taking the forge's branch did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Taken {
    /// The branch is where planwright left it (or behind the run).
    Nothing,
    /// Others pushed commits there: the run's branch now holds them.
    FastForwarded {
        /// The branch's commit on the forge, now the run's tip.
        to: String,
    },
    /// Others pushed commits on top of what planwright pushed, which the
    /// run has gone past: the run's branch merged them.
    Merged {
        /// The merge, now the run's tip.
        to: String,
    },
}

/// Merges the forge's `remote` into the run's branch at `local`, or stops
/// naming the paths where the two conflict.
fn merge_in(
    repo: &Repo,
    guard: &Guard,
    run: &RunRow,
    p: &Push,
    lease: &str,
    local: &str,
    remote: &str,
) -> Result<Taken, RespondError> {
    let tree = match merge_tree(repo, local, remote)? {
        Merged::Clean(tree) => tree,
        Merged::Conflict(paths) => {
            return Err(RespondError::Conflict {
                branch: p.branch.to_string(),
                remote: remote.to_string(),
                paths,
                held: held_branch(&run.id),
            })
        }
    };
    let message = format!(
        "planwright: take the commits pushed to `{}`\n\nMerged into run {}'s branch before a round of `planwright respond`.\n",
        p.branch, run.id
    );
    let merge = commit_tree_of(repo, &tree, &[local, remote], &message)?;
    let held = format!("refs/heads/{}", held_branch(&run.id));
    set_ref(repo, guard, &held, &merge)?;
    set_ref(repo, guard, lease, remote)?;
    Ok(Taken::Merged { to: merge })
}

fn is_ancestor(repo: &Repo, a: &str, b: &str) -> Result<bool, RespondError> {
    Ok(objects::is_ancestor(repo, a, b)?)
}

/// Fetches the pull request's branch and, when others pushed to it, moves
/// the run's branch (`planwright/run/<id>`) forward to it, so that the
/// round's attempt starts from their commits; stops when the two have
/// diverged.
pub(crate) fn take(
    repo: &Repo,
    guard: &Guard,
    run: &RunRow,
    p: &Push,
    token: Option<&Secret>,
) -> Result<Taken, RespondError> {
    let Some(remote) = fetch(repo, guard, p, token)? else {
        return Err(RespondError::BranchGone {
            branch: p.branch.to_string(),
            remote: p.remote.to_string(),
        });
    };
    let lease = deliver::pushed_ref(p.remote, p.branch);
    if repo.ref_tip(&lease)?.as_deref() == Some(remote.as_str()) {
        return Ok(Taken::Nothing);
    }
    let local = Target::new(&run.base, &run.id).tip(repo)?;
    if is_ancestor(repo, &remote, &local)? {
        // Nothing on the forge the run lacks.
        set_ref(repo, guard, &lease, &remote)?;
        return Ok(Taken::Nothing);
    }
    if !is_ancestor(repo, &local, &remote)? {
        let on_top = match repo.ref_tip(&lease)? {
            Some(pushed) => is_ancestor(repo, &pushed, &remote)?,
            None => false,
        };
        if on_top {
            // Others pushed on top of what planwright pushed, which the
            // run has since gone past (a lower pull request of a stack,
            // or a ticket rerun since): their commits are merged in.
            return merge_in(repo, guard, run, p, &lease, &local, &remote);
        }
        return Err(RespondError::Diverged {
            branch: p.branch.to_string(),
            remote: remote.clone(),
            local,
            held: held_branch(&run.id),
        });
    }
    let held = format!("refs/heads/{}", held_branch(&run.id));
    set_ref(repo, guard, &held, &remote)?;
    set_ref(repo, guard, &lease, &remote)?;
    Ok(Taken::FastForwarded { to: remote })
}
