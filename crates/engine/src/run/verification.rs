//! Verification, gates, counterfactuals and review of a recorded candidate.

use super::msg::AttemptResult;
use super::shared::Shared;
use crate::error::EngineError;
use crate::events::Event;
use crate::exec::{AttemptInput, LocalExecutor};
use crate::model::{Phase, Verdict};
use crate::verify;
use planwright_plan::model::{Gate, Ticket};

/// Verification and gates of a recorded candidate.
pub(super) fn verify_and_gate(
    sh: &Shared,
    ticket: &Ticket,
    slot: usize,
    input: &AttemptInput,
    gates: &[Gate],
    commit: &str,
    progress: &dyn Fn(Phase) -> Result<(), EngineError>,
) -> Result<AttemptResult, EngineError> {
    progress(Phase::Verify)?;
    let changes = verify::changes(sh.repo, &input.base_commit, commit)?;
    let none = verify::Earlier::default();
    let earlier = sh.earlier.get(&ticket.id).unwrap_or(&none);
    if let Err(f) = verify::check_scope(ticket, &sh.run_rails, &changes, sh.repo, earlier) {
        return Ok(AttemptResult::Rejected(f));
    }
    if let Err(f) = verify::check_symlinks(sh.repo, &input.base_commit, commit, &changes)? {
        return Ok(AttemptResult::Rejected(f));
    }
    // Both sides of a rename: moving a gate's file away changes it too.
    let changed: Vec<String> = (changes.iter())
        .flat_map(|c| c.from.iter().chain([&c.path]))
        .cloned()
        .collect();
    if let Err(f) = crate::git::integrity::check_gate_scripts(
        sh.repo,
        gates,
        &sh.settings.workspace.setup,
        &ticket.scope,
        &input.base_commit,
        commit,
        &changed,
    )? {
        return Ok(AttemptResult::Rejected(f));
    }
    progress(Phase::Gates)?;
    let log = sh.run_dir.join(&input.ticket).join("ticket.log");
    crate::log::append(
        &log,
        &format!("== attempt {} candidate {}\n", input.attempt, commit),
    )?;
    // Gates run in planwright's own checkout of the candidate, never in
    // the agent's workspace.
    let name = LocalExecutor::slot(slot);
    let verdict = sh
        .checkouts
        .gate(&name, commit, gates, &sh.settings.gates, &log, sh.cancel)?;
    sh.repo.guard().check()?;
    match verdict {
        Verdict::Pass => {}
        Verdict::Fail(f) => return Ok(AttemptResult::Rejected(f)),
        Verdict::Cancelled => return Ok(AttemptResult::Cancelled),
    }
    progress(Phase::BeyondGates)?;
    judge(sh, ticket, &name, input, gates, commit)
}

/// Counterfactuals and review passes of a candidate that passed its gates.
pub(super) fn judge(
    sh: &Shared,
    ticket: &Ticket,
    checkout: &str,
    input: &AttemptInput,
    gates: &[Gate],
    commit: &str,
) -> Result<AttemptResult, EngineError> {
    use crate::verify::beyond_gates::Finding;
    use crate::verify::beyond_gates::{self as beyond, Judgement};
    let skip_expected = beyond::skip_expected(sh.plan);
    let cx = beyond::Context {
        repo: sh.repo,
        checkouts: &sh.checkouts,
        gates: &sh.settings.gates,
        settings: &sh.settings.beyond,
        dry_passes: sh.plan.review.dry_passes,
        routing: &sh.settings.routing,
        families: &sh.settings.families,
        skip_expected: &skip_expected,
        cancel: sh.cancel,
    };
    let candidate = beyond::Candidate {
        ticket,
        attempt: input.attempt,
        base_commit: &input.base_commit,
        commit,
        gates,
        checkout,
        writer: input.model.as_deref(),
        files: &input.files,
    };
    let mut record = |found: Finding| record(sh, &ticket.id, input.attempt, found);
    Ok(match beyond::judge(&cx, &candidate, &mut record)? {
        Judgement::Pass => AttemptResult::Passed {
            candidate: commit.to_string(),
        },
        Judgement::Reject(f) => AttemptResult::Rejected(f),
        Judgement::Cancelled => AttemptResult::Cancelled,
        Judgement::Unavailable { retry_after } => AttemptResult::Unavailable {
            retry_after,
            reason: "the reviewer's model could not serve the review".into(),
        },
    })
}

/// Records what judging found: an event for each counterfactual and each
/// review verdict, and the reviews' tokens and cost added to the attempt's.
fn record(
    sh: &Shared,
    id: &str,
    attempt: u32,
    found: crate::verify::beyond_gates::Finding,
) -> Result<(), EngineError> {
    use crate::model::CounterfactualOutcome;
    use crate::verify::beyond_gates::Finding;
    use planwright_plan::verdict::Decision;
    let ticket = id.to_string();
    match found {
        Finding::Counterfactual(r) => sh.emitter.emit(Event::Counterfactual {
            ticket,
            attempt,
            control_path: r.control_path.clone(),
            test: r.command.clone(),
            outcome: r.outcome,
            passed: r.outcome == CounterfactualOutcome::Red,
            message: r.message.clone(),
            output_excerpt: r.output_excerpt.clone(),
        }),
        Finding::Spend(spend) => {
            let (usage, cost) = (&spend.usage, spend.cost_usd);
            sh.store
                .add_review_spend(&sh.run, id, attempt, usage, cost)?;
        }
        Finding::Review {
            pass,
            reviewer,
            verdict: v,
        } => sh.emitter.emit(Event::Review {
            ticket,
            attempt,
            pass,
            reviewer: reviewer.map(String::from),
            verdict: v.verdict,
            passed: v.verdict == Decision::Ship,
            summary: v.summary.clone(),
            checks: (v.checks.iter())
                .map(|cv| format!("{}: {}", cv.id, check_status(cv.status)))
                .collect(),
        }),
    }
    Ok(())
}

/// A review check's status as events spell it.
fn check_status(s: planwright_plan::verdict::CheckStatus) -> &'static str {
    use planwright_plan::verdict::CheckStatus;
    match s {
        CheckStatus::Met => "met",
        CheckStatus::Unmet => "unmet",
        CheckStatus::NotValidated => "not_validated",
    }
}
