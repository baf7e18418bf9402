//! Verification, gates, counterfactuals and review of a recorded candidate.

use super::msg::AttemptResult;
use super::shared::Shared;
use crate::error::EngineError;
use crate::events::Event;
use crate::exec::{disk, AttemptInput, LocalExecutor};
use crate::model::failure::FailureKind;
use crate::model::{Phase, Verdict};
use crate::verify;
use planwright_plan::model::{Gate, Ticket};

/// Verification and gates of a recorded candidate. After it, a disk
/// below `[run] min_free` (a checkout that could not be written, a gate
/// that filled it) fails the attempt as `disk_full`, whatever the gates
/// said, its checkout and workspace given back: the disk's fault is never
/// a `gate_failure`, nor an error that stops the run.
pub(super) fn verify_and_gate(
    sh: &Shared,
    ticket: &Ticket,
    slot: usize,
    input: &AttemptInput,
    gates: &[Gate],
    commit: &str,
    progress: &dyn Fn(Phase) -> Result<(), EngineError>,
) -> Result<AttemptResult, EngineError> {
    let fills = disk::fills();
    let result = verified(sh, ticket, slot, input, gates, commit, progress);
    // What no full disk explains stays as it is: a run interrupted, or a
    // repository an agent changed.
    if matches!(
        result,
        Ok(AttemptResult::Cancelled) | Err(EngineError::Integrity(_))
    ) {
        return result;
    }
    let state = sh.repo.state_dir();
    let low = disk::low(&state, sh.settings.min_free)
        .or_else(|| disk::low_checkouts(sh.checkouts.root(), sh.settings.min_free));
    // A gate that failed (or a checkout that could not be written) while
    // another attempt filled the disk failed of it too.
    let failed = match &result {
        Ok(AttemptResult::Rejected(f)) => f.kind == FailureKind::GateFailure,
        Ok(_) => false,
        Err(_) => true,
    };
    if low.is_none() && !(failed && disk::fills() != fills) {
        return result;
    }
    disk::noted_full();
    sh.checkouts.scrub(&LocalExecutor::slot(slot))?;
    sh.executor.give_back(slot)?;
    // The store records the failure in the reserve's room.
    disk::release(&state);
    let full = disk::full(low.as_ref(), disk::During::Verification);
    Ok(AttemptResult::Rejected(match result {
        Ok(AttemptResult::Rejected(f)) => {
            full.with_evidence(format!("{}: {}\n{}", f.kind, f.message, f.evidence))
        }
        Err(e) => full.with_evidence(e.to_string()),
        _ => full,
    }))
}

fn verified(
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
    let verdict = gates_again_if_flaky(sh, input, &name, commit, gates, &log)?;
    match verdict {
        Verdict::Pass => {}
        Verdict::Fail(f) => return Ok(AttemptResult::Rejected(f)),
        Verdict::Cancelled => return Ok(AttemptResult::Cancelled),
    }
    progress(Phase::BeyondGates)?;
    judge(sh, ticket, &name, input, gates, commit)
}

/// The gates of `commit` in checkout `name`; when a gate fails (exits
/// non-zero: a timeout or a limit would cost as much again), they run
/// again on the same tree, `[gates] flaky_retries` times at most, and
/// the last verdict stands. Each run again is a `gate_retried` event; one
/// that passed counts the gate as flaky.
fn gates_again_if_flaky(
    sh: &Shared,
    input: &AttemptInput,
    name: &str,
    commit: &str,
    gates: &[Gate],
    log: &std::path::Path,
) -> Result<Verdict, EngineError> {
    let gate = || {
        let verdict = (sh.checkouts).gate(name, commit, gates, &sh.settings.gates, log, sh.cancel);
        sh.guard.check()?;
        verdict
    };
    let mut verdict = gate()?;
    for _ in 0..sh.settings.gates.flaky_retries {
        let Verdict::Fail(f) = &verdict else { break };
        let Some(failed) = verify::gates::failed_gate(gates, f) else {
            break;
        };
        let line = "-- the gates failed; run again on the same tree (`[gates] flaky_retries`)\n";
        crate::log::append(log, line)?;
        let message = f.message.clone();
        let again = gate()?;
        let passed = again == Verdict::Pass;
        if passed {
            sh.flaky(&failed.command_line());
        }
        sh.emitter.emit(Event::GateRetried {
            ticket: input.ticket.clone(),
            attempt: input.attempt,
            gate: failed.command_line(),
            message,
            passed,
        });
        verdict = again;
    }
    Ok(verdict)
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
        guard: sh.guard,
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
