//! `planwright respond` (docs/forge.md, "Responding to reviews"): review
//! comments, review bodies and failed checks on a delivered pull request
//! become a new attempt of the ticket they concern, through the same run
//! (sandbox, gates, review, merge queue) as `run --rerun ID`; its result is
//! pushed to the same branch and one reply says what changed.
//!
//! Everything a round answers is recorded with the round before anything
//! runs ([`crate::Store::begin_round`]), so nothing is answered twice; a
//! round cut short is finished by the next `respond` (its reply is looked
//! for by its hidden mark before it is posted, so there is never a second).
//! The forge's text reaches the charter fenced and labelled as text from
//! the forge, never as instructions. A pull request of one ticket
//! (`per = "ticket"`) gets only its round's change (see [`stack`]).

mod branch;
mod feedback;
mod route;
mod stack;

pub(crate) use branch::take;
pub use feedback::{pending, Authors, Item, Kind, Pending, Skipped, REPLY_MARKER};
pub use route::{evidence, reply, reply_marker, route, Outcome, Route, TICKET_COMMAND};

use crate::deliver::{self, DeliverError, Push};
use crate::error::{EngineError, GitError, StoreError};
use crate::git::guard::Guard;
use crate::git::repo::Repo;
use crate::git::{objects, tree};
use crate::model::TicketState;
use crate::store::{RoundRow, RoundState, RunRow, Store};
use crate::RunSummary;
use planwright_config::{ForgeSettings, RemoteUrl, RespondSettings, Secret};
use planwright_forge::{CommentOn, Forge, PullRequest, PullState};
use planwright_plan::Plan;

/// Why a round stopped. Nothing is lost: what was answered is recorded
/// only with its round, and the next `respond` finishes a round cut short.
#[derive(Debug, thiserror::Error)]
pub enum RespondError {
    /// The pull request's branch is gone from the remote.
    #[error("the branch `{branch}` of the pull request is gone from `{remote}`")]
    BranchGone {
        /// The branch.
        branch: String,
        /// The remote.
        remote: String,
    },
    /// Others pushed commits that the run's merges do not descend from.
    #[error(
        "the branch `{branch}` moved on the forge to {} in a way that does not follow the run's merges (at {}): planwright will not push over it",
        short(.remote), short(.local)
    )]
    Diverged {
        /// The branch.
        branch: String,
        /// Its commit on the forge.
        remote: String,
        /// The run's tip.
        local: String,
        /// The run's branch.
        held: String,
    },
    /// Others pushed commits on top of planwright's that conflict with
    /// what the run merged since.
    #[error(
        "the commits pushed to `{branch}` on the forge (at {}) conflict with the run's merges in {}",
        short(.remote), .paths.join(", ")
    )]
    Conflict {
        /// The branch.
        branch: String,
        /// Its commit on the forge.
        remote: String,
        /// The paths in conflict.
        paths: Vec<String>,
        /// The run's branch.
        held: String,
    },
    /// The round's run was stopped (Ctrl-C) before it ended.
    #[error("the round's run of ticket `{0}` was stopped before it ended")]
    Interrupted(String),
    /// A delivery step (push, fetch, the forge's API) failed.
    #[error(transparent)]
    Deliver(#[from] DeliverError),
    /// Reading the repository or the store failed.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}

impl From<GitError> for RespondError {
    fn from(e: GitError) -> RespondError {
        RespondError::Engine(e.into())
    }
}

impl From<StoreError> for RespondError {
    fn from(e: StoreError) -> RespondError {
        RespondError::Engine(e.into())
    }
}

impl From<planwright_forge::ForgeError> for RespondError {
    fn from(e: planwright_forge::ForgeError) -> RespondError {
        RespondError::Deliver(e.into())
    }
}

impl RespondError {
    /// What to do about it.
    pub fn hint(&self) -> Option<String> {
        match self {
            RespondError::BranchGone { .. } => Some(
                "run `planwright deliver` to push it again, then `planwright respond`".into(),
            ),
            RespondError::Diverged { branch, held, .. } => Some(format!(
                "merge the forge's `{branch}` into the run's branch yourself (`git fetch`, then `git merge` on `{held}`) and push it, or reset the branch on the forge; then run `planwright respond` again"
            )),
            RespondError::Conflict { branch, held, .. } => Some(format!(
                "merge the forge's `{branch}` into the run's branch yourself (`git fetch`, then `git merge` on `{held}`, resolving the conflicts), then run `planwright respond` again"
            )),
            RespondError::Interrupted(_) => Some(
                "run `planwright respond` again to finish the round: what it answers is kept, and it replies once".into(),
            ),
            RespondError::Deliver(e) => e.hint(),
            RespondError::Engine(_) => None,
        }
    }
}

/// What one pull request's round did.
#[derive(Debug, Clone, PartialEq)]
pub enum PullOutcome {
    /// The pull request is merged or closed: nothing more to answer.
    Ended(PullState),
    /// Nothing new to answer.
    Nothing,
    /// New feedback is younger than the quiet window: wait until then
    /// (seconds since the epoch).
    Quiet {
        /// When the window ends.
        until: u64,
    },
    /// A round ran (or was finished) and its reply is posted.
    Replied {
        /// The round.
        round: u32,
        /// What it did.
        outcome: Outcome,
    },
    /// A reply alone, running nothing (an unknown ticket named, a limit
    /// reached), or nothing when that reply was already posted.
    Refused {
        /// Why, in words.
        why: String,
    },
}

/// What a round needs of the run, the forge and the settings.
pub struct Context<'a> {
    /// The repository.
    pub repo: &'a Repo,
    /// The state store.
    pub store: &'a Store,
    /// The run delivered.
    pub run: &'a RunRow,
    /// Its plan.
    pub plan: &'a Plan,
    /// The tickets the pull request delivers, in plan order.
    pub tickets: Vec<String>,
    /// With `per = "ticket"`: the tickets the run's other pull requests
    /// deliver, each with its pull request's head.
    pub other_pulls: Vec<(String, String)>,
    /// `[respond]`.
    pub settings: &'a RespondSettings,
    /// `[forge]`, resolved.
    pub forge_settings: &'a ForgeSettings,
    /// The remote's URL.
    pub remote_url: &'a str,
    /// The forge's API.
    pub forge: &'a dyn Forge,
    /// planwright's login on the forge.
    pub login: String,
    /// Now, in seconds since the epoch.
    pub now: u64,
    /// The run's `[prices]`, which price what attempts spent without a
    /// dollar figure (as the run's budget does).
    pub prices: &'a planwright_config::Prices,
}

/// Runs a round's ticket again in the run (as `run --rerun ID` does),
/// with the run's dollar ceiling set to the given figure when there is
/// one; the CLI gives it, with the agents and reporters of a run.
pub type RunTicket<'r> = dyn FnMut(&str, Option<f64>) -> Result<RunSummary, EngineError> + 'r;

impl Context<'_> {
    fn token(&self) -> Option<&Secret> {
        self.forge_settings.token.as_ref().map(|(_, t)| t)
    }

    fn push_of<'p>(&'p self, branch: &'p str, commit: &'p str) -> Push<'p> {
        Push {
            remote: &self.forge_settings.remote,
            url: self.remote_url,
            http: RemoteUrl::parse(self.remote_url).is_http(),
            kind: self.forge_settings.kind,
            branch,
            commit,
        }
    }

    fn spent(&self) -> Result<f64, RespondError> {
        Ok(self
            .store
            .spent(&self.run.id, self.prices)?
            .iter()
            .map(|(_, s)| s.cost_usd)
            .sum())
    }
}

/// One round on the pull request whose head is `head`: finishes a round
/// cut short, else answers what is new once the quiet window passed.
pub fn respond_pull(
    cx: &Context,
    head: &str,
    run_ticket: &mut RunTicket,
) -> Result<PullOutcome, RespondError> {
    let Some(pull) = cx.forge.find_pull_request(head)? else {
        return Ok(PullOutcome::Refused {
            why: format!("no pull request has the head `{head}`; run `planwright deliver` first"),
        });
    };
    if pull.state != PullState::Open {
        return Ok(PullOutcome::Ended(pull.state));
    }
    if let Some(last) = cx.store.last_round(&cx.run.id, pull.number)? {
        if last.state != RoundState::Replied {
            return finish(cx, &pull, last, run_ticket);
        }
    }
    let rounds = cx.store.rounds(&cx.run.id, pull.number)?;
    let answered = cx.store.answered(&cx.run.id, pull.number)?;
    let mut authors = Authors::new(cx.forge, &cx.settings.authors, cx.login.clone());
    let pending = pending(cx.forge, &pull, &answered, &mut authors)?;
    if pending.items.is_empty() {
        return Ok(PullOutcome::Nothing);
    }
    if let Some(newest) = pending.newest() {
        let until = newest + cx.settings.quiet.as_secs();
        if cx.now < until {
            return Ok(PullOutcome::Quiet { until });
        }
    }
    let number = rounds.len() as u32 + 1;
    let keys: Vec<String> = pending.items.iter().map(|i| i.key.clone()).collect();
    if let Some(why) = limit_reached(cx.settings, &rounds) {
        // One reply says so; later feedback is not answered again.
        if rounds
            .iter()
            .any(|r| r.ticket.is_none() && r.evidence == why)
        {
            return Ok(PullOutcome::Refused { why });
        }
        return refuse(cx, &pull, number, &keys, why);
    }
    let (id, _why) = match route(cx.plan, &cx.tickets, &pending.items) {
        Route::NoSuchTicket(id) => {
            let why = format!("the plan has no ticket `{id}` (named with `{TICKET_COMMAND}`)");
            return refuse(cx, &pull, number, &keys, why);
        }
        Route::Ticket { id, why } => (id, why),
    };
    if let Some(why) = stack::not_here(cx, &id)? {
        return refuse(cx, &pull, number, &keys, why);
    }
    // The integrity snapshot of this round's own writes, taken at the fetch.
    take(
        cx.repo,
        &Guard::of(cx.repo),
        cx.run,
        &cx.push_of(&pull.head, ""),
        cx.token(),
    )?;
    let row = RoundRow {
        pull: pull.number,
        round: number,
        merged_before: cx
            .store
            .ticket(&cx.run.id, &id)?
            .and_then(|t| t.merge_commit),
        ticket: Some(id),
        state: RoundState::Started,
        evidence: evidence(&pending.items),
        spent_before: cx.spent()?,
        cost_usd: None,
    };
    cx.store.begin_round(&cx.run.id, &row, &keys)?;
    finish(cx, &pull, row, run_ticket)
}

/// Why no round may start: the round limit, or the pull request's cost
/// cap, reached.
pub fn limit_reached(settings: &RespondSettings, rounds: &[RoundRow]) -> Option<String> {
    let ran = rounds.iter().filter(|r| r.ticket.is_some()).count() as u32;
    if ran >= settings.rounds {
        return Some(format!(
            "the limit of {} on this pull request is reached (`[respond] rounds`)",
            planwright_plan::words::count(settings.rounds as usize, "round")
        ));
    }
    let spent = rounds
        .iter()
        .filter_map(|r| r.cost_usd)
        .fold(0.0, |a, b| a + b);
    match settings.pull_max_cost_usd {
        Some(cap) if spent >= cap => Some(format!(
            "the pull request's cost cap is reached (${spent:.2} of ${cap:.2}, `[respond] pull_max_cost_usd`)"
        )),
        _ => None,
    }
}

/// The dollar ceiling of a round's run: what the run spent before, plus
/// the least of the round's cap and what the pull request has left.
pub fn round_ceiling(
    settings: &RespondSettings,
    spent_before: f64,
    pull_spent: f64,
) -> Option<f64> {
    let left = settings
        .pull_max_cost_usd
        .map(|cap| (cap - pull_spent).max(0.0));
    let allowance = match (settings.max_cost_usd, left) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    allowance.map(|a| spent_before + a)
}

/// A round that runs nothing: recorded with what it answers, and its one
/// reply posted.
fn refuse(
    cx: &Context,
    pull: &PullRequest,
    number: u32,
    keys: &[String],
    why: String,
) -> Result<PullOutcome, RespondError> {
    let row = RoundRow {
        pull: pull.number,
        round: number,
        ticket: None,
        state: RoundState::Ran,
        evidence: why.clone(),
        spent_before: 0.0,
        cost_usd: None,
        merged_before: None,
    };
    cx.store.begin_round(&cx.run.id, &row, keys)?;
    finish(cx, pull, row, &mut |_, _| {
        unreachable!("a round that runs nothing runs no ticket")
    })?;
    Ok(PullOutcome::Refused { why })
}

/// Takes a recorded round from where it stopped to its reply.
fn finish(
    cx: &Context,
    pull: &PullRequest,
    mut row: RoundRow,
    run_ticket: &mut RunTicket,
) -> Result<PullOutcome, RespondError> {
    let (run, number) = (&cx.run.id, pull.number);
    let mut budget = None;
    if row.state == RoundState::Started {
        let id = row.ticket.clone().expect("a started round has a ticket");
        let pull_spent: f64 = (cx.store.rounds(run, number)?)
            .iter()
            .filter_map(|r| r.cost_usd)
            .sum();
        let ceiling = round_ceiling(cx.settings, row.spent_before, pull_spent);
        let summary = run_ticket(&id, ceiling)?;
        if summary.interrupted {
            return Err(RespondError::Interrupted(id));
        }
        let cost = (cx.spent()? - row.spent_before).max(0.0);
        cx.store
            .round_reached(run, number, row.round, RoundState::Ran, Some(cost))?;
        row.state = RoundState::Ran;
        budget = summary.budget;
    }
    // The run wrote the repository under a guard of its own: the snapshot
    // taken at the fetch is out of date, so the push takes a new one.
    let outcome = outcome_of(cx, &Guard::of(cx.repo), pull, &row, budget)?;
    let marker = reply_marker(row.round);
    let posted = (cx.forge.comments(CommentOn::PullRequest(number))?)
        .iter()
        .any(|c| c.body.contains(&marker));
    if !posted {
        let answered = cx.store.answered_in(run, number, row.round)?;
        let text = reply(row.round, cx.settings.rounds, answered, &outcome);
        cx.forge
            .post_comment(CommentOn::PullRequest(number), &text)?;
    }
    cx.store
        .round_reached(run, number, row.round, RoundState::Replied, None)?;
    Ok(PullOutcome::Replied {
        round: row.round,
        outcome,
    })
}

/// What a round that ran did: the ticket's new merge pushed to the pull
/// request's branch, or why nothing changed.
fn outcome_of(
    cx: &Context,
    guard: &Guard,
    pull: &PullRequest,
    row: &RoundRow,
    budget: Option<String>,
) -> Result<Outcome, RespondError> {
    let repo = cx.repo;
    let Some(id) = row.ticket.clone() else {
        return Ok(Outcome::Unchanged {
            ticket: None,
            why: row.evidence.clone(),
        });
    };
    let t = cx.store.ticket(&cx.run.id, &id)?;
    let merged = t.as_ref().filter(|t| {
        matches!(t.state, TicketState::Merged | TicketState::Changed)
            && t.merge_commit.is_some()
            && t.merge_commit != row.merged_before
    });
    let Some(commit) = merged.and_then(|t| t.merge_commit.clone()) else {
        let why = match (budget, t.and_then(|t| t.failure)) {
            (Some(why), _) => format!("the round's cost cap stopped it: {why}"),
            (None, Some(f)) if row.merged_before.is_some() => {
                format!("its attempt failed: {f}")
            }
            _ => "its attempt found nothing to change".to_string(),
        };
        return Ok(Outcome::Unchanged {
            ticket: Some(id),
            why,
        });
    };
    if cx.forge_settings.per == planwright_config::Per::Ticket {
        return stack::carry(cx, repo, guard, pull, &id, row.round, &commit);
    }
    deliver::push(repo, guard, &cx.push_of(&pull.head, &commit), cx.token())?;
    // What the merge brought onto the tip it was made on (which holds
    // what others pushed, when the round took it): the ticket's change.
    let onto = format!("{commit}^1");
    let files = tree::paths_changed(repo, &onto, &commit)?;
    let commits = objects::commits_between(repo, &onto, &commit)?;
    Ok(Outcome::Changed {
        ticket: id,
        commits,
        commit,
        files,
        branch: pull.head.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(round: u32, cost: f64) -> RoundRow {
        RoundRow {
            pull: 1,
            round,
            ticket: Some("B".into()),
            state: RoundState::Replied,
            evidence: String::new(),
            spent_before: 0.0,
            cost_usd: Some(cost),
            merged_before: None,
        }
    }

    #[test]
    fn the_round_limit_and_the_pull_requests_cost_cap_stop_rounds() {
        let mut s = RespondSettings {
            rounds: 2,
            ..RespondSettings::default()
        };
        assert_eq!(limit_reached(&s, &[ran(1, 0.0)]), None);
        let why = limit_reached(&s, &[ran(1, 0.0), ran(2, 0.0)]).unwrap();
        assert!(why.contains("limit of 2 rounds"), "{why}");
        // A reply that ran nothing is no round.
        let mut reply = ran(2, 0.0);
        reply.ticket = None;
        assert_eq!(limit_reached(&s, &[ran(1, 0.0), reply]), None);
        s.rounds = 9;
        s.pull_max_cost_usd = Some(1.0);
        assert_eq!(limit_reached(&s, &[ran(1, 0.4)]), None);
        let why = limit_reached(&s, &[ran(1, 0.4), ran(2, 0.6)]).unwrap();
        assert!(why.contains("$1.00 of $1.00"), "{why}");
    }

    #[test]
    fn a_rounds_ceiling_is_what_the_run_spent_plus_the_least_allowance() {
        let mut s = RespondSettings::default();
        assert_eq!(round_ceiling(&s, 5.0, 0.0), None, "no cap, no ceiling");
        s.max_cost_usd = Some(2.0);
        assert_eq!(round_ceiling(&s, 5.0, 0.0), Some(7.0));
        s.pull_max_cost_usd = Some(3.0);
        assert_eq!(
            round_ceiling(&s, 5.0, 2.5),
            Some(5.5),
            "the pull request has 0.5 left"
        );
        s.max_cost_usd = None;
        assert_eq!(round_ceiling(&s, 5.0, 4.0), Some(5.0), "nothing left");
    }
}
