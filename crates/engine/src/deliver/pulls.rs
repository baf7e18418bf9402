//! What a delivery pushes where: from the run's record, one pull request
//! holding everything the run merged, or one per merged ticket based on
//! its parent ticket's branch.

use super::DeliverError;
use crate::git::objects::{self, is_ancestor, message_of};
use crate::git::repo::Repo;
use crate::model::{RunStatus, TicketState};
use crate::store::{RunRow, TicketRow};
use planwright_config::forge::{ForgeSettings, Per};
use planwright_plan::delivery::{DeliveryFacts, IssueRef};
use planwright_plan::Plan;

/// How the message of the commit a `respond` round puts on a ticket's own
/// pull request (`per = "ticket"`) starts: a later delivery leaves such a
/// branch where the round left it.
pub const ROUND_COMMIT: &str = "planwright: round ";

/// One pull request to open or update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pull {
    /// planwright's branch on the remote (the pull request's head).
    pub head: String,
    /// The branch it merges into: the run's base, or the parent ticket's
    /// branch.
    pub base: String,
    /// The commit pushed to `head`: a merge the run made and verified.
    pub commit: String,
    /// The tickets it delivers: every merged ticket of the run, or one.
    pub tickets: Vec<String>,
    /// `per = "ticket"`: the parent ticket whose branch is `base`.
    pub stacked_on: Option<String>,
    /// `per = "ticket"`: the ticket's parents in the run (none, or more
    /// than one, and it is based on the run's base).
    pub parents: Vec<String>,
}

/// A delivery, ready to render and to carry out.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// The run.
    pub run: RunRow,
    /// Its tickets, in plan order.
    pub tickets: Vec<TicketRow>,
    /// `[forge]`, resolved.
    pub settings: ForgeSettings,
    /// The remote's URL.
    pub remote_url: String,
    /// What the plan says of its issue and summary.
    pub facts: DeliveryFacts,
    /// The pull requests, parents before children.
    pub pulls: Vec<Pull>,
    /// Whether they are drafts.
    pub draft: bool,
    /// Why they are drafts, in words (`draft = true`, `--draft`, a ticket
    /// that failed).
    pub draft_reasons: Vec<String>,
    /// The issue each ticket was imported from (`import issues`), by
    /// ticket id, in plan order.
    pub ticket_issues: Vec<(String, IssueRef)>,
    /// `[respond.labels]`: taken off the issues of delivered tickets
    /// (none by default; the caller sets them).
    pub labels: planwright_config::labels::IssueLabels,
}

impl Delivery {
    /// The issues the tickets of `pull` were imported from.
    pub fn issues_of<'a>(&'a self, pull: &'a Pull) -> impl Iterator<Item = &'a IssueRef> {
        self.ticket_issues
            .iter()
            .filter(|(id, _)| pull.tickets.contains(id))
            .map(|(_, issue)| issue)
    }
}

fn merged(t: &TicketRow) -> bool {
    matches!(t.state, TicketState::Merged | TicketState::Changed) && t.merge_commit.is_some()
}

/// What delivering `run` (with `tickets`, read from the store) of `plan`
/// pushes where, with `settings`; `draft` is `--draft`.
pub fn prepare(
    repo: &Repo,
    run: &RunRow,
    tickets: &[TicketRow],
    plan: &Plan,
    settings: ForgeSettings,
    remote_url: String,
    draft: bool,
) -> Result<Delivery, DeliverError> {
    if run.status == RunStatus::Running {
        return Err(DeliverError::Running(run.id.clone()));
    }
    let merged_rows: Vec<&TicketRow> = tickets.iter().filter(|t| merged(t)).collect();
    if merged_rows.is_empty() {
        return Err(DeliverError::NothingMerged(run.id.clone()));
    }
    let pulls = match settings.per {
        Per::Run => vec![whole_run(repo, run, &settings, &merged_rows)?],
        Per::Ticket => keep_rounds(
            repo,
            &settings,
            per_ticket(run, &settings, plan, &merged_rows),
        )?,
    };
    if let Some(p) = pulls.iter().find(|p| p.head == run.base) {
        return Err(DeliverError::BaseBranch(p.head.clone()));
    }
    let mut draft_reasons = Vec::new();
    if settings.draft {
        draft_reasons.push("`[forge] draft = true`".to_string());
    }
    if draft {
        draft_reasons.push(format!("`{}`", planwright_plan::Flag::Draft));
    }
    let unmerged = tickets.iter().filter(|t| !merged(t)).count();
    if unmerged > 0 {
        draft_reasons.push(format!(
            "{} of the plan did not merge",
            planwright_plan::words::count(unmerged, "ticket")
        ));
    }
    Ok(Delivery {
        run: run.clone(),
        tickets: tickets.to_vec(),
        facts: DeliveryFacts::of(plan),
        pulls,
        draft: !draft_reasons.is_empty(),
        draft_reasons,
        ticket_issues: plan
            .tickets
            .iter()
            .filter_map(|t| Some((t.id.clone(), crate::issues::ticket_issue(t)?)))
            .collect(),
        settings,
        remote_url,
        labels: Default::default(),
    })
}

/// A ticket's branch a `respond` round pushed to stays where the round
/// left it (its change carried onto the branch as one commit), when the
/// ticket's merge in the run does not descend from it: the merge of a
/// round lands on the run's tip, past the tickets merged after it, which
/// this pull request must not carry.
fn keep_rounds(
    repo: &Repo,
    settings: &ForgeSettings,
    mut pulls: Vec<Pull>,
) -> Result<Vec<Pull>, DeliverError> {
    for p in &mut pulls {
        let Some(last) = repo.ref_tip(&super::pushed_ref(&settings.remote, &p.head))? else {
            continue;
        };
        if last != p.commit
            && !is_ancestor(repo, &last, &p.commit)?
            && message_of(repo, &last)?.starts_with(ROUND_COMMIT)
        {
            p.commit = last;
        }
    }
    Ok(pulls)
}

/// `per = "run"`: the merge every other merge of the run is part of.
fn whole_run(
    repo: &Repo,
    run: &RunRow,
    settings: &ForgeSettings,
    merged: &[&TicketRow],
) -> Result<Pull, DeliverError> {
    let commits: Vec<&str> = merged
        .iter()
        .filter_map(|t| t.merge_commit.as_deref())
        .collect();
    let tips = objects::independent(repo, &commits)?;
    let [tip] = &tips[..] else {
        return Err(DeliverError::Engine(crate::error::EngineError::Repo {
            message: format!(
                "the merges of run `{}` are not one line of history ({} tips)",
                run.id,
                tips.len()
            ),
            hint: Some("deliver with `[forge] per = \"ticket\"`".into()),
        }));
    };
    Ok(Pull {
        head: settings.branch.expand(&run.id, None),
        base: run.base.clone(),
        commit: tip.to_string(),
        tickets: merged.iter().map(|t| t.id.clone()).collect(),
        stacked_on: None,
        parents: Vec::new(),
    })
}

/// `per = "ticket"`: one pull request per merged ticket, parents first; a
/// ticket with exactly one parent in the plan is based on its branch.
fn per_ticket(
    run: &RunRow,
    settings: &ForgeSettings,
    plan: &Plan,
    merged: &[&TicketRow],
) -> Vec<Pull> {
    let parents_of = |id: &str| -> Vec<String> {
        plan.tickets
            .iter()
            .find(|t| t.id == id)
            .map_or_else(Vec::new, |t| t.depends_on.clone())
    };
    let branch = |id: &str| settings.branch.expand(&run.id, Some(id));
    let mut ordered: Vec<&TicketRow> = Vec::new();
    let mut left: Vec<&TicketRow> = merged.to_vec();
    // Parents first: each round takes the tickets none of whose merged
    // parents are still left (a parent always merges before its child).
    while !left.is_empty() {
        let (ready, rest): (Vec<&TicketRow>, Vec<&TicketRow>) = left.iter().partition(|t| {
            !parents_of(&t.id)
                .iter()
                .any(|p| left.iter().any(|l| &l.id == p))
        });
        if ready.is_empty() {
            ordered.extend(rest);
            break;
        }
        ordered.extend(ready);
        left = rest;
    }
    ordered
        .into_iter()
        .map(|t| {
            let parents = parents_of(&t.id);
            let stacked_on = match &parents[..] {
                [one] if merged.iter().any(|m| &m.id == one) => Some(one.clone()),
                _ => None,
            };
            Pull {
                head: branch(&t.id),
                base: stacked_on
                    .as_deref()
                    .map_or_else(|| run.base.clone(), branch),
                commit: t.merge_commit.clone().unwrap_or_default(),
                tickets: vec![t.id.clone()],
                stacked_on,
                parents,
            }
        })
        .collect()
}
