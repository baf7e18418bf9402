//! Review passes: after the gates pass, a reviewer agent reads the ticket,
//! its checks, the diff and the gate results, and answers with a verdict
//! (`schemas/review_verdict.schema.json`). A candidate needs `dry_passes`
//! consecutive `ship` verdicts; a `block` is the next attempt's evidence.

use crate::agent::{Agent, AgentOutcome, AgentReport, AttemptContext, Usage};
use crate::error::EngineError;
use crate::model::failure::{Failure, FailureKind};
use planwright_config::{Families, Routing, DEFAULT_TIER};
use planwright_os::process::Cancel;
use planwright_os::sandbox::Confine;
use planwright_plan::model::Ticket;
use planwright_plan::verdict::{
    self, CheckStatus, Decision, FindingSeverity, ReviewCheck, Verdict,
};
use std::fmt::Write;
use std::path::PathBuf;
use std::time::Duration;

/// The file the reviewer writes its verdict to (also `PLANWRIGHT_VERDICT_FILE`).
pub(crate) const VERDICT_FILE: &str = "verdict.json";

/// One review of a candidate.
#[derive(Debug, Clone)]
pub struct ReviewInput {
    /// The checks, numbered.
    pub checks: Vec<ReviewCheck>,
    /// `git diff` of the candidate against its base.
    pub diff: String,
    /// Each gate's command line and whether it passed.
    pub gates: Vec<(String, bool)>,
    /// A checkout of the candidate for the reviewer to read.
    pub checkout: PathBuf,
    /// The folder the reviewer writes its verdict in.
    pub verdicts: PathBuf,
    /// Where prompts, logs and a copy of each verdict go (planwright's
    /// alone).
    pub files: PathBuf,
    /// The attempt being reviewed.
    pub attempt: u32,
    /// The reviewer's time limit.
    pub timeout: Option<Duration>,
    /// The reviewer's model.
    pub model: Option<String>,
    /// Variables added to the reviewer's environment (its CLI's state home).
    pub env: Vec<(String, String)>,
    /// The reviewer's sandbox.
    pub confine: Option<Confine>,
}

/// How the review of a candidate ended.
#[derive(Debug, Clone, PartialEq)]
pub enum ReviewOutcome {
    /// Every pass shipped.
    Shipped {
        /// The verdicts, one per pass.
        verdicts: Vec<Verdict>,
    },
    /// A pass blocked, the diff was too large, or the reviewer could not
    /// give a valid verdict: the attempt is rejected with this failure.
    Rejected {
        /// Why.
        failure: Failure,
        /// The verdicts given until then.
        verdicts: Vec<Verdict>,
    },
    /// The reviewer's model could not serve the review (no strike).
    Unavailable {
        /// When to try again, if known.
        retry_after: Option<Duration>,
    },
    /// The run was interrupted.
    Cancelled,
}

/// What the reviews cost, added to the attempt's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReviewSpend {
    /// Tokens, when reported.
    pub usage: Usage,
    /// US dollars, when known.
    pub cost_usd: f64,
}

/// The model that reviews a candidate written by `writer` for `ticket`
/// on a reviewer CLI of `reviewer` family (`None`: a CLI of any family):
/// a model of the ticket's tier from another family than the writer's
/// when the routing table has one, else any other model of that tier. A
/// CLI of one family gets one of its own family's, never another's: of
/// the tier, another than the writer's where there is one, else the
/// family table's (`None`, the CLI's default, when it has none).
pub(crate) fn reviewer_model(
    routing: &Routing,
    families: &Families,
    ticket: &Ticket,
    writer: Option<&str>,
    reviewer: Option<&str>,
) -> Option<String> {
    let tier = ticket.tier.as_deref().unwrap_or(DEFAULT_TIER);
    if let Some(own) = reviewer {
        let models = routing.for_family(families, tier, "auto", Some(own)).models;
        let other = models.iter().find(|m| Some(m.name.as_str()) != writer);
        return other.or(models.first()).map(|m| m.name.clone());
    }
    let family = |name: &str| {
        routing
            .models
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.family.clone())
    };
    let writer_family = writer.and_then(family);
    let candidates = routing.candidates(tier, "auto");
    candidates
        .iter()
        .find(|m| writer_family.as_deref().is_some_and(|f| f != m.family))
        .or_else(|| candidates.iter().find(|m| Some(m.name.as_str()) != writer))
        .map(|m| m.name.clone())
}

/// Runs `dry_passes` reviews of one candidate; `max_diff_lines` blocks a
/// diff too large to review without spending one.
pub fn review(
    ticket: &Ticket,
    input: &ReviewInput,
    reviewer: &dyn Agent,
    dry_passes: u32,
    max_diff_lines: Option<usize>,
    spend: &mut ReviewSpend,
    cancel: &Cancel,
) -> Result<ReviewOutcome, EngineError> {
    let lines = input.diff.lines().count();
    if let Some(max) = max_diff_lines.filter(|max| lines > *max) {
        let failure = Failure::new(
            FailureKind::ReviewBlocked,
            format!(
                "the diff has {}, more than `[review] max_diff_lines = {max}`: not reviewed",
                planwright_plan::words::count(lines, "line")
            ),
        )
        .with_evidence("Make a smaller change, or split the ticket.");
        return Ok(ReviewOutcome::Rejected {
            failure,
            verdicts: vec![],
        });
    }
    let mut verdicts = Vec::new();
    for pass in 1..=dry_passes {
        let verdict = match one_pass(ticket, input, reviewer, pass, spend, cancel)? {
            Pass::Verdict(v) => v,
            Pass::Invalid(why) => {
                let failure = Failure::new(
                    FailureKind::ReviewInvalid,
                    format!("the reviewer gave no valid verdict in pass {pass}, twice"),
                )
                .with_evidence(why);
                return Ok(ReviewOutcome::Rejected { failure, verdicts });
            }
            Pass::Unavailable(retry_after) => {
                return Ok(ReviewOutcome::Unavailable { retry_after })
            }
            Pass::Cancelled => return Ok(ReviewOutcome::Cancelled),
        };
        let blocked = verdict.verdict == Decision::Block;
        verdicts.push(verdict);
        if blocked {
            let v = verdicts.last().expect("just pushed");
            let failure = Failure::new(
                FailureKind::ReviewBlocked,
                format!("review pass {pass} of {dry_passes} blocked: {}", v.summary),
            )
            .with_evidence(evidence(v, &input.checks));
            return Ok(ReviewOutcome::Rejected { failure, verdicts });
        }
    }
    Ok(ReviewOutcome::Shipped { verdicts })
}

enum Pass {
    Verdict(Verdict),
    Invalid(String),
    Unavailable(Option<Duration>),
    Cancelled,
}

/// One pass: the reviewer, and once more with the problem when its answer
/// is not a valid verdict.
fn one_pass(
    ticket: &Ticket,
    input: &ReviewInput,
    reviewer: &dyn Agent,
    pass: u32,
    spend: &mut ReviewSpend,
    cancel: &Cancel,
) -> Result<Pass, EngineError> {
    let mut problem: Option<String> = None;
    for try_no in 1..=2 {
        let stem = format!("attempt-{}.review-{pass}.{try_no}", input.attempt);
        let verdict_file = input.verdicts.join(format!("{stem}.{VERDICT_FILE}"));
        // The folder is the reviewer's to write: nothing there is followed.
        planwright_os::beneath::remove(&verdict_file)?;
        let prompt = input.files.join(format!("{stem}.prompt.md"));
        let text = prompt_text(ticket, input, problem.as_deref());
        planwright_os::beneath::write_file(&prompt, text.as_bytes())?;
        let ctx = AttemptContext {
            confine: input.confine.clone(),
            log_limit: Some(planwright_os::process::AGENT_LOG_LIMIT),
            usage_sink: None,
            activity_sink: None,
            ticket: ticket.id.clone(),
            attempt: input.attempt,
            workspace: input.checkout.clone(),
            prompt_file: prompt,
            log: input.files.join(format!("{stem}.log")),
            timeout: input.timeout,
            model: input.model.clone(),
            env: input
                .env
                .iter()
                .cloned()
                .chain([(
                    "PLANWRIGHT_VERDICT_FILE".to_string(),
                    verdict_file.display().to_string(),
                )])
                .collect(),
        };
        let report = reviewer.attempt(&ctx, cancel)?;
        add_spend(spend, &report);
        let answer = match report.outcome {
            AgentOutcome::Cancelled => return Ok(Pass::Cancelled),
            AgentOutcome::Unavailable { retry_after, .. } => {
                return Ok(Pass::Unavailable(retry_after))
            }
            AgentOutcome::Finished => {
                let text = answer(&verdict_file, report.final_message.as_deref())?;
                if let Ok(text) = &text {
                    let record = input.files.join(format!("{stem}.{VERDICT_FILE}"));
                    planwright_os::beneath::write_file(&record, text.as_bytes())?;
                }
                text
            }
            AgentOutcome::Blocked(why) => Err(format!("the reviewer gave up: {why}")),
            AgentOutcome::Failed(why) => Err(format!(
                "the reviewer failed: {}",
                why.lines().next().unwrap_or_default()
            )),
            AgentOutcome::TimedOut => Err("the reviewer ran out of time".to_string()),
        };
        match answer.and_then(|text| verdict::parse(&text, &input.checks)) {
            Ok(v) => return Ok(Pass::Verdict(v)),
            Err(why) => problem = Some(why),
        }
    }
    Ok(Pass::Invalid(problem.unwrap_or_default()))
}

fn add_spend(spend: &mut ReviewSpend, report: &AgentReport) {
    if let Some(u) = report.usage {
        spend.usage += u;
    }
    if let Some((cost, _)) = report.cost {
        spend.cost_usd += cost;
    }
}

/// The verdict file, else the reviewer's final message.
fn answer(
    file: &std::path::Path,
    final_message: Option<&str>,
) -> Result<Result<String, String>, EngineError> {
    use planwright_os::beneath::BeneathError;
    match planwright_os::beneath::read_file(file) {
        Ok(bytes) => Ok(String::from_utf8(bytes)
            .map_err(|_| format!("the verdict `{}` is not UTF-8 text", file.display()))),
        Err(BeneathError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(final_message
                .map(str::to_string)
                .ok_or_else(|| format!("no verdict: `{}` was not written", file.display())))
        }
        // A symlink or a FIFO the reviewer left: no verdict, said so.
        Err(e @ (BeneathError::Kind { .. } | BeneathError::Escapes { .. })) => {
            Ok(Err(format!("no verdict: {e}")))
        }
        Err(e) => Err(e.into()),
    }
}

/// A blocking verdict as evidence for the next attempt.
fn evidence(v: &Verdict, checks: &[ReviewCheck]) -> String {
    let mut out = String::new();
    for f in &v.findings {
        let place = match (&f.file, f.line) {
            (Some(file), Some(line)) => format!("{file}:{line}: "),
            (Some(file), None) => format!("{file}: "),
            _ => String::new(),
        };
        let _ = writeln!(out, "- {} {place}{}", severity_name(f.severity), f.message);
    }
    for (c, cv) in checks.iter().zip(&v.checks) {
        if cv.status == CheckStatus::Unmet {
            let why = cv.evidence.as_deref().unwrap_or("");
            let _ = writeln!(out, "- check {} unmet: {} {why}", c.id, c.statement);
        }
    }
    out
}

fn severity_name(s: FindingSeverity) -> &'static str {
    match s {
        FindingSeverity::Blocker => "blocker",
        FindingSeverity::Major => "major",
        FindingSeverity::Minor => "minor",
        FindingSeverity::Nit => "nit",
    }
}

const MAX_DIFF_IN_PROMPT: usize = 200_000;

/// The reviewer's prompt.
fn prompt_text(ticket: &Ticket, input: &ReviewInput, problem: Option<&str>) -> String {
    let mut p = String::new();
    let _ = writeln!(
        p,
        "# Review ticket {}: {}\n\nYou review another agent's change; you do not change code. Read the \
         ticket, the diff and the code in the current directory, then write your verdict as JSON to \
         the file named by the environment variable `PLANWRIGHT_VERDICT_FILE` (or end your final \
         message with it). Answer `block` when the change does not do what the ticket asks, breaks \
         something, or weakens a test; `ship` otherwise.\n",
        ticket.id, ticket.title
    );
    if let Some(problem) = problem {
        let _ = writeln!(
            p,
            "## Your previous answer was not a valid verdict\n\n```\n{problem}\n```\n"
        );
    }
    let _ = writeln!(p, "## The ticket\n\n{}\n", ticket.body.trim_end());
    let _ = writeln!(p, "## Checks: one entry each, by id\n");
    if input.checks.is_empty() {
        let _ = writeln!(p, "(none: answer with `\"checks\": []`)");
    }
    for c in &input.checks {
        let skip = if c.skip_expected {
            " (skip_expected: answer `not_validated`)"
        } else {
            ""
        };
        let _ = writeln!(p, "- {}: {}{skip}", c.id, c.statement);
    }
    let _ = writeln!(p, "\n## Gates\n");
    for (gate, passed) in &input.gates {
        let _ = writeln!(
            p,
            "- `{gate}`: {}",
            if *passed { "passed" } else { "failed" }
        );
    }
    let diff = if input.diff.len() > MAX_DIFF_IN_PROMPT {
        let mut cut = MAX_DIFF_IN_PROMPT;
        while !input.diff.is_char_boundary(cut) {
            cut -= 1;
        }
        format!(
            "{}\n... (cut; read the files for the rest)",
            &input.diff[..cut]
        )
    } else {
        input.diff.clone()
    };
    let _ = writeln!(p, "\n## The diff\n\n```diff\n{diff}\n```\n");
    let _ = writeln!(
        p,
        "## The verdict's JSON Schema\n\n```json\n{}\n```",
        verdict::SCHEMA.trim_end()
    );
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reviewer_cli_of_one_family_gets_its_own_familys_model() {
        let (routing, families) = (Routing::default(), Families::default());
        let mut t = Ticket::new("T", "b");
        t.tier = Some("mid".into());
        let writer = Some("claude-sonnet-4-6");
        let any = reviewer_model(&routing, &families, &t, writer, None);
        assert_eq!(any.as_deref(), Some("gemini-3.1-pro-low"));
        let claude = reviewer_model(&routing, &families, &t, writer, Some("claude"));
        assert_eq!(claude.as_deref(), Some("claude-sonnet-4-6"));
        let gpt = reviewer_model(&routing, &families, &t, writer, Some("gpt"));
        assert_eq!(gpt.as_deref(), Some("gpt-5.4"));
        t.tier = Some("frontier".into());
        let other = reviewer_model(
            &routing,
            &families,
            &t,
            Some("claude-sonnet-4-6"),
            Some("claude"),
        );
        assert_eq!(other.as_deref(), Some("claude-opus-4-6-thinking"));
    }
}
