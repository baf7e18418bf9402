//! Verification, gates, counterfactuals and review of a recorded candidate.

use super::msg::AttemptResult;
use super::shared::Shared;
use crate::error::EngineError;
use crate::exec::{AttemptInput, LocalExecutor};
use crate::model::Verdict;
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
    progress: &dyn Fn(&str) -> Result<(), EngineError>,
) -> Result<AttemptResult, EngineError> {
    progress("verify")?;
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
    progress("gates")?;
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
    progress("beyond gates")?;
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
        emitter: &sh.emitter,
        store: &sh.store,
        run: &sh.run,
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
    Ok(match beyond::judge(&cx, &candidate)? {
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
