//! Verification beyond gates, for a candidate whose gates passed: its
//! counterfactuals (each declared mutation must turn the declared tests
//! red) in planwright's gate checkout, then the review passes by the
//! configured reviewer. Gates passing is necessary, not sufficient.
//!
//! It judges and says what it found ([`Finding`]); the run records that
//! (events, the state store), not this module.

use crate::agent::Agent;
use crate::error::EngineError;
use crate::git::guard::Guard;
use crate::git::repo::Repo;
use crate::git::tree;
use crate::model::failure::{Failure, FailureKind};
use crate::model::CounterfactualOutcome;
use crate::verify::checkout::Checkouts;
use crate::verify::counterfactual::{self, CounterfactualResult};
use crate::verify::gates::GateSettings;
use crate::verify::review::{review, reviewer_model, ReviewInput, ReviewOutcome, ReviewSpend};
use planwright_config::Routing;
use planwright_os::process::Cancel;
use planwright_plan::model::{Gate, Ticket};
use planwright_plan::verdict::{ReviewCheck, Verdict};
use planwright_plan::Plan;
use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

/// How review passes and counterfactuals run: resolved by
/// planwright-config from `[review]` and `[counterfactuals]`.
pub(crate) use planwright_config::ReviewSettings as Settings;

/// What one candidate is checked with.
pub(crate) struct Candidate<'a> {
    /// The ticket.
    pub ticket: &'a Ticket,
    /// The attempt.
    pub attempt: u32,
    /// The base commit it was made on.
    pub base_commit: &'a str,
    /// The candidate commit.
    pub commit: &'a str,
    /// The gates it passed.
    pub gates: &'a [Gate],
    /// The gate checkout that holds it.
    pub checkout: &'a str,
    /// The model that wrote it, when known.
    pub writer: Option<&'a str>,
    /// The ticket's folder of logs and prompts.
    pub files: &'a Path,
}

/// How the checks beyond the gates ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Judgement {
    /// Every counterfactual turned red (or is advisory) and every review shipped.
    Pass,
    /// The candidate is rejected.
    Reject(Failure),
    /// The reviewer's model could not serve the review.
    Unavailable {
        /// When to try again, if known.
        retry_after: Option<Duration>,
    },
    /// The run was interrupted.
    Cancelled,
}

/// Everything the counterfactuals and the reviewer need of the run.
pub(crate) struct Context<'a> {
    /// The repository.
    pub repo: &'a Repo,
    /// The run's integrity guard, checked after each review.
    pub guard: &'a Guard,
    /// The gate checkouts.
    pub checkouts: &'a Checkouts,
    /// How gates (and so counterfactual tests) run.
    pub gates: &'a GateSettings,
    /// Review and counterfactual settings.
    pub settings: &'a Settings,
    /// The plan's consecutive `ship` verdicts needed.
    pub dry_passes: u32,
    /// The routing table, for the reviewer's model.
    pub routing: &'a Routing,
    /// The family table, for the reviewer's model when its CLI runs one
    /// family's.
    pub families: &'a planwright_config::Families,
    /// Checks never counted as validated ([`skip_expected`]).
    pub skip_expected: &'a HashSet<String>,
    /// The run's stop flag.
    pub cancel: &'a Cancel,
}

/// What judging a candidate found, said as it is found, for the run to
/// record.
#[derive(Debug)]
pub(crate) enum Finding<'f> {
    /// A counterfactual ran.
    Counterfactual(&'f CounterfactualResult),
    /// The review passes' tokens and cost, to add to the attempt's.
    Spend(&'f ReviewSpend),
    /// Review pass `pass` (1-based) by the model `reviewer` gave `verdict`.
    Review {
        /// 1-based.
        pass: u32,
        /// The reviewer's model, when known.
        reviewer: Option<&'f str>,
        /// What it said.
        verdict: &'f Verdict,
    },
}

/// Where a judgement's findings go; an error stops the judgement.
pub(crate) type Record<'r> = dyn FnMut(Finding) -> Result<(), EngineError> + 'r;

/// Runs the counterfactuals, then the reviews, of a candidate that passed
/// its gates, telling `record` what it finds.
pub(crate) fn judge(
    cx: &Context,
    c: &Candidate,
    record: &mut Record,
) -> Result<Judgement, EngineError> {
    let log = c.files.join("ticket.log");
    let judged = counterfactuals(cx, c, &log, record)?;
    if judged != Judgement::Pass {
        return Ok(judged);
    }
    match &cx.settings.reviewer {
        Some(spec) if cx.dry_passes > 0 => {
            let reviewer = crate::agent::from_options(&spec.name, &spec.options)?;
            reviews(cx, c, reviewer.as_ref(), record)
        }
        _ => Ok(Judgement::Pass),
    }
}

fn counterfactuals(
    cx: &Context,
    c: &Candidate,
    log: &Path,
    record: &mut Record,
) -> Result<Judgement, EngineError> {
    if c.ticket.counterfactuals.is_empty() {
        return Ok(Judgement::Pass);
    }
    let (dir, room) = cx.checkouts.room(c.checkout, cx.gates)?;
    let git = cx.checkouts.git(c.checkout, c.commit);
    let mut failure: Option<Failure> = None;
    for cf in &c.ticket.counterfactuals {
        let timeout = cx.gates.timeout;
        let Some(r) = counterfactual::run(cf, &dir, &git, &room, timeout, log, cx.cancel)? else {
            return Ok(Judgement::Cancelled);
        };
        record(Finding::Counterfactual(&r))?;
        let kind = match r.outcome {
            CounterfactualOutcome::Red => continue,
            CounterfactualOutcome::Green => FailureKind::ControlUnpinned,
            CounterfactualOutcome::Timeout | CounterfactualOutcome::Error => {
                FailureKind::CounterfactualError
            }
        };
        if failure.is_none() {
            failure = Some(Failure::new(kind, r.message).with_evidence(r.output_excerpt));
        }
    }
    cx.guard.check()?;
    Ok(match failure {
        Some(f)
            if f.kind == FailureKind::CounterfactualError
                || !cx.settings.counterfactuals_advisory =>
        {
            Judgement::Reject(f)
        }
        _ => Judgement::Pass,
    })
}

/// The statements of a standard_v1 plan's acceptance criteria marked
/// `skip_expected` (kept in the plan's metadata): never counted as validated.
pub(crate) fn skip_expected(plan: &Plan) -> HashSet<String> {
    plan.metadata
        .get("verification")
        .and_then(|v| v.get("acceptance_criteria"))
        .and_then(|c| c.as_array())
        .into_iter()
        .flatten()
        .filter(|c| c.get("skip_expected").and_then(|s| s.as_bool()) == Some(true))
        .filter_map(|c| {
            c.get("statement")
                .and_then(|s| s.as_str())
                .map(String::from)
        })
        .collect()
}

/// The checks a reviewer judges: the ticket's `checks`, numbered.
fn review_checks(ticket: &Ticket, skipped: &HashSet<String>) -> Vec<ReviewCheck> {
    ReviewCheck::numbered(
        ticket
            .checks
            .iter()
            .map(|c| (c.clone(), skipped.contains(c))),
    )
}

fn reviews(
    cx: &Context,
    c: &Candidate,
    reviewer: &dyn Agent,
    record: &mut Record,
) -> Result<Judgement, EngineError> {
    let diff = tree::patch(cx.repo, c.base_commit, c.commit)?.ok_or_else(|| {
        EngineError::Internal(format!(
            "the candidate {} of {} or its base {} is gone",
            c.commit, c.ticket.id, c.base_commit
        ))
    })?;
    let model = cx.settings.model.clone().or_else(|| {
        let family = reviewer.family();
        reviewer_model(cx.routing, cx.families, c.ticket, c.writer, family)
    });
    // Not the gate checkout, which holds what the candidate's tests wrote,
    // nor the ticket's folder: a room of its own.
    let room = cx.checkouts.review_room(c.checkout, c.commit)?;
    // The reviewer CLI's own state, like an agent's, in a home of its own
    // per checkout (reviews of two slots run side by side), reset.
    let slot = format!("review-{}", c.checkout);
    let env = crate::agent::prepare_home(&cx.repo.state_dir(), &slot, reviewer)?;
    let home = cx.repo.state_dir().join("homes").join(&slot);
    let mut writable = vec![room.verdicts.clone()];
    if home.is_dir() {
        writable.push(home);
    }
    let input = ReviewInput {
        checks: review_checks(c.ticket, cx.skip_expected),
        diff,
        gates: c.gates.iter().map(|g| (g.command_line(), true)).collect(),
        checkout: room.checkout,
        verdicts: room.verdicts,
        files: c.files.to_path_buf(),
        attempt: c.attempt,
        timeout: cx.settings.timeout,
        model: model.clone(),
        env,
        confine: Some(cx.checkouts.reviewer_confine(writable, reviewer.hosts())),
    };
    let mut spend = ReviewSpend::default();
    let outcome = review(
        c.ticket,
        &input,
        reviewer,
        cx.dry_passes,
        cx.settings.max_diff_lines,
        &mut spend,
        cx.cancel,
    )?;
    cx.guard.check()?;
    if spend.usage.total() > 0 || spend.cost_usd > 0.0 {
        record(Finding::Spend(&spend))?;
    }
    let verdicts = match &outcome {
        ReviewOutcome::Shipped { verdicts } | ReviewOutcome::Rejected { verdicts, .. } => {
            verdicts.as_slice()
        }
        _ => &[],
    };
    for (i, verdict) in verdicts.iter().enumerate() {
        let pass = i as u32 + 1;
        let reviewer = model.as_deref();
        record(Finding::Review {
            pass,
            reviewer,
            verdict,
        })?;
    }
    Ok(match outcome {
        ReviewOutcome::Shipped { .. } => Judgement::Pass,
        ReviewOutcome::Rejected { failure, .. } => Judgement::Reject(failure),
        ReviewOutcome::Unavailable { retry_after } => Judgement::Unavailable { retry_after },
        ReviewOutcome::Cancelled => Judgement::Cancelled,
    })
}
