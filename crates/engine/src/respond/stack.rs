//! Rounds on pull requests delivered with `[forge] per = "ticket"`: each
//! carries one ticket on a branch of its own, holding the run's history up
//! to that ticket's merge. A round's attempt runs in the run as any other
//! (its merge lands on the run's tip, past the tickets merged after it),
//! and only the round's own change is carried onto the pull request's
//! branch, as one commit on top of it: the pull requests above it, and
//! the tickets merged after it, are not pulled in.

use super::{Context, Outcome, RespondError};
use crate::deliver::{self, api_kind, ROUND_COMMIT};
use crate::git::guard::Guard;
use crate::git::objects::{changed_paths, message_of};
use crate::git::refs::commit_tree_of;
use crate::git::repo::Repo;
use crate::git::tree::{merge_tree_from, tree_of, Merged};
use planwright_config::Per;
use planwright_forge::PullRequest;

fn round_message(run: &str, ticket: &str, round: u32, merge: &str) -> String {
    format!(
        "{ROUND_COMMIT}{round} on ticket {ticket}\n\nThe change of ticket {ticket} in round {round} of `planwright respond`, merged in run {run} as {merge}.\n"
    )
}

/// Where ticket `id`, named on a pull request delivering `tickets`, is
/// answered.
#[derive(Debug, PartialEq, Eq)]
enum Place<'a> {
    /// Here: `per = "run"` runs any ticket of the plan on its one pull
    /// request, and `per = "ticket"` the pull request's own.
    Here,
    /// On the pull request whose head is this.
    Elsewhere(&'a str),
    /// On no pull request of the run (the ticket did not merge).
    Nowhere,
}

fn place<'a>(per: Per, tickets: &[String], others: &'a [(String, String)], id: &str) -> Place<'a> {
    if per != Per::Ticket || tickets.iter().any(|t| t == id) {
        return Place::Here;
    }
    match others.iter().find(|(t, _)| t == id) {
        Some((_, head)) => Place::Elsewhere(head),
        None => Place::Nowhere,
    }
}

/// Why a round named with `/planwright ticket ID` does not run on this
/// pull request: with `per = "ticket"`, a ticket is answered on its own
/// pull request only.
pub(super) fn not_here(cx: &Context, id: &str) -> Result<Option<String>, RespondError> {
    let noun = api_kind(cx.forge_settings.kind).pull_request_noun();
    let head = match place(cx.forge_settings.per, &cx.tickets, &cx.other_pulls, id) {
        Place::Here => return Ok(None),
        Place::Nowhere => {
            return Ok(Some(format!(
                "ticket `{id}` is on no {noun} of this run (it did not merge): `planwright run --rerun {id}`, then `planwright deliver`, delivers it"
            )))
        }
        Place::Elsewhere(head) => head,
    };
    Ok(Some(match cx.forge.find_pull_request(head)? {
        Some(p) => format!(
            "ticket `{id}` is delivered by {noun} #{} (`{head}`): comment there to run it",
            p.number
        ),
        None => format!(
            "ticket `{id}` is delivered on the branch `{head}`, which has no {noun} yet: `planwright deliver` opens it"
        ),
    }))
}

/// Carries the change of the round's merge `merge` of ticket `id` onto
/// the pull request's branch (as planwright last pushed or took it) as one
/// commit, and pushes it there.
pub(super) fn carry(
    cx: &Context,
    repo: &Repo,
    guard: &Guard,
    pull: &PullRequest,
    id: &str,
    round: u32,
    merge: &str,
) -> Result<Outcome, RespondError> {
    let lease = deliver::pushed_ref(&cx.forge_settings.remote, &pull.head);
    let Some(tip) = repo.ref_tip(&lease)? else {
        return Err(RespondError::BranchGone {
            branch: pull.head.clone(),
            remote: cx.forge_settings.remote.clone(),
        });
    };
    let message = round_message(&cx.run.id, id, round, merge);
    let unchanged = |why: String| Outcome::Unchanged {
        ticket: Some(id.to_string()),
        why,
    };
    // A round finished after its push (its reply failed) finds its commit
    // on the branch already.
    let commit = if message_of(repo, &tip)? == message {
        tip
    } else {
        // The run's tip the merge was made on is the base: what the tickets
        // merged after this one changed stays as the branch has it.
        match merge_tree_from(repo, &format!("{merge}^1"), &tip, merge)? {
            Merged::Conflict(paths) => {
                return Ok(unchanged(format!(
                    "its change conflicts on `{}` with the tickets merged after it, in {}; answer it on the {} that carries them",
                    pull.head,
                    paths.join(", "),
                    api_kind(cx.forge_settings.kind).pull_request_noun()
                )))
            }
            Merged::Clean(tree) if tree == tree_of(repo, &tip)? => {
                return Ok(unchanged(format!(
                    "its change is on `{}` already",
                    pull.head
                )))
            }
            Merged::Clean(tree) => commit_tree_of(repo, &tree, &[&tip], &message)?,
        }
    };
    deliver::push(repo, guard, &cx.push_of(&pull.head, &commit), cx.token())?;
    Ok(Outcome::Changed {
        ticket: id.to_string(),
        files: changed_paths(repo, &format!("{commit}^1"), &commit)?,
        commits: vec![commit.clone()],
        commit,
        branch: pull.head.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ticket_is_answered_on_its_own_pull_request_only_when_delivered_per_ticket() {
        let own = vec!["B".to_string()];
        let others = vec![("A".to_string(), "pw/A".to_string())];
        assert_eq!(place(Per::Ticket, &own, &others, "B"), Place::Here);
        assert_eq!(
            place(Per::Ticket, &own, &others, "A"),
            Place::Elsewhere("pw/A")
        );
        assert_eq!(place(Per::Ticket, &own, &others, "C"), Place::Nowhere);
        // One pull request of the run: any ticket of the plan runs there.
        assert_eq!(place(Per::Run, &own, &[], "C"), Place::Here);
    }
}
