//! `draft`: an agent writes a plan from a spec, planwright validates it with
//! every check the format has (and, given a repository, the scope-operation
//! checks of preflight), and the findings go back to the agent for a
//! corrected version, up to a number of rounds. Only a valid plan comes out.

use crate::agent::{Agent, AgentOutcome, AttemptContext};
use crate::error::EngineError;
use planwright_os::process::Cancel;
use planwright_plan::report::FileReport;
use planwright_plan::{validate_text, Format, Options};
use std::collections::HashSet;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The file the agent writes its plan to, in its working directory.
pub(crate) const PLAN_FILE: &str = "plan.json";

/// How many repository paths the prompt lists at most; beyond that the
/// agent is told how many were left out.
pub(crate) const MAX_LISTED_FILES: usize = 2000;

/// What a draft starts from.
#[derive(Debug, Clone)]
pub struct DraftInput {
    /// The spec, as written by the user.
    pub spec: String,
    /// The format the plan must be in.
    pub format: Format,
    /// Validation options (`format` is forced to [`DraftInput::format`]).
    pub options: Options,
    /// The tracked files of the repository the plan will run on, if known.
    pub repo_files: Option<Vec<String>>,
    /// Rounds of write-validate-correct at most (at least 1).
    pub rounds: u32,
    /// A folder of its own: the agent works in `work/`, prompts and logs
    /// go beside it.
    pub dir: PathBuf,
    /// The agent's wall-clock limit per round.
    pub timeout: Option<Duration>,
    /// The model to ask for, if any.
    pub model: Option<String>,
}

/// What happened in one round, for progress output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DraftEvent {
    /// The agent was asked for a plan.
    Asked {
        /// 1-based round.
        round: u32,
    },
    /// Its plan was checked.
    Checked {
        /// 1-based round.
        round: u32,
        /// Errors found (0: the plan is valid).
        errors: usize,
    },
}

/// How a draft ended.
#[derive(Debug, Clone)]
pub struct Drafted {
    /// The valid plan's text, when a round produced one.
    pub plan: Option<String>,
    /// The validation of the last round's plan (None when no round produced
    /// a file at all).
    pub report: Option<FileReport>,
    /// The last round's scope operations that contradict the repository.
    pub repo_problems: Vec<String>,
    /// The last round's problems as the agent was told them.
    pub findings: String,
    /// Rounds used.
    pub rounds: u32,
}

/// Runs the write-validate-correct loop with `agent`.
pub fn draft(
    input: &DraftInput,
    agent: &dyn Agent,
    progress: &mut dyn FnMut(DraftEvent),
    cancel: &Cancel,
) -> Result<Drafted, EngineError> {
    let work = input.dir.join("work");
    std::fs::create_dir_all(&work).map_err(|e| EngineError::io(&work, e))?;
    let mut options = input.options.clone();
    options.format = Some(input.format);
    let mut findings = String::new();
    let mut report = None;
    let mut repo_problems = Vec::new();
    let rounds = input.rounds.max(1);
    for round in 1..=rounds {
        progress(DraftEvent::Asked { round });
        let prompt = input.dir.join(format!("round-{round}.prompt.md"));
        let text = prompt_text(input, round, &findings);
        std::fs::write(&prompt, text).map_err(|e| EngineError::io(&prompt, e))?;
        let ctx = AttemptContext {
            confine: None,
            log_limit: Some(planwright_os::process::AGENT_LOG_LIMIT),
            usage_sink: None,
            activity_sink: None,
            ticket: "draft".into(),
            attempt: round,
            workspace: work.clone(),
            prompt_file: prompt,
            log: input.dir.join(format!("round-{round}.agent.log")),
            timeout: input.timeout,
            model: input.model.clone(),
            env: vec![(
                "PLANWRIGHT_PLAN_FILE".into(),
                work.join(PLAN_FILE).display().to_string(),
            )],
        };
        let agent_report = agent.attempt(&ctx, cancel)?;
        let written = match agent_report.outcome {
            AgentOutcome::Cancelled => break,
            AgentOutcome::Finished => read_plan(&work, agent_report.final_message.as_deref())?,
            other => {
                findings = format!("the agent did not finish: {}\n", outcome_words(&other));
                progress(DraftEvent::Checked { round, errors: 1 });
                continue;
            }
        };
        let Some(text) = written else {
            findings = format!(
                "no plan: the file `{PLAN_FILE}` was not written in the working directory\n"
            );
            progress(DraftEvent::Checked { round, errors: 1 });
            continue;
        };
        let name = work.join(PLAN_FILE).display().to_string();
        let (checked, problems) = check(&name, &text, &options, input.repo_files.as_deref());
        let errors = checked.errors + problems.len();
        progress(DraftEvent::Checked { round, errors });
        findings = render_findings(&checked, &problems);
        report = Some(checked);
        repo_problems = problems;
        if errors == 0 {
            return Ok(Drafted {
                plan: Some(text),
                report,
                repo_problems,
                findings,
                rounds: round,
            });
        }
    }
    Ok(Drafted {
        plan: None,
        report,
        repo_problems,
        findings,
        rounds,
    })
}

fn outcome_words(outcome: &AgentOutcome) -> String {
    match outcome {
        AgentOutcome::Finished => "it finished".into(),
        AgentOutcome::Blocked(why) => format!("it gave up: {why}"),
        AgentOutcome::Failed(why) => format!("it failed: {}", why.lines().next().unwrap_or("")),
        AgentOutcome::TimedOut => "it ran out of time".into(),
        AgentOutcome::Cancelled => "it was interrupted".into(),
        AgentOutcome::Unavailable { reason, .. } => format!("its model was unavailable: {reason}"),
    }
}

/// The plan the agent wrote: `plan.json` in its folder, else the last
/// fenced block of its final message.
fn read_plan(work: &Path, final_message: Option<&str>) -> Result<Option<String>, EngineError> {
    let file = work.join(PLAN_FILE);
    match std::fs::read_to_string(&file) {
        Ok(text) => return Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(EngineError::io(&file, e)),
    }
    Ok(final_message.and_then(last_fenced_block))
}

/// The content of the last ```` ``` ```` block of `text`.
fn last_fenced_block(text: &str) -> Option<String> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            match current.take() {
                Some(lines) => blocks.push(lines.join("\n")),
                None => current = Some(Vec::new()),
            }
        } else if let Some(lines) = &mut current {
            lines.push(line);
        }
    }
    blocks.pop()
}

/// Validates the plan and, given the repository's files, checks its scope
/// operations against them the way preflight does.
fn check(
    name: &str,
    text: &str,
    options: &Options,
    repo_files: Option<&[String]>,
) -> (FileReport, Vec<String>) {
    let report = validate_text(name, text.to_string(), options);
    let mut problems = Vec::new();
    if let (Some(plan), Some(files)) = (&report.plan, repo_files) {
        let base: HashSet<String> = files.iter().cloned().collect();
        let mut checks = Vec::new();
        crate::run::preflight::check_scope_ops(
            plan,
            &planwright_plan::graph::TicketGraph::new(plan),
            &base,
            &HashSet::new(),
            &Default::default(),
            &mut checks,
        );
        problems = checks
            .into_iter()
            .filter(|c| c.status == crate::model::CheckStatus::Error)
            .map(|c| match c.hint {
                Some(hint) => format!("{} (hint: {hint})", c.message),
                None => c.message,
            })
            .collect();
    }
    (report, problems)
}

/// The findings as plain text with pointers and positions, for the agent.
fn render_findings(report: &FileReport, problems: &[String]) -> String {
    let mut out = String::new();
    for d in &report.diagnostics {
        let diag = &d.diagnostic;
        let _ = writeln!(
            out,
            "{} {} at `{}` (line {}, column {}): {}",
            diag.severity.as_str(),
            diag.code,
            diag.pointer,
            d.line,
            d.column,
            diag.message
        );
        if let Some(hint) = &diag.hint {
            let _ = writeln!(out, "  hint: {hint}");
        }
    }
    for p in problems {
        let _ = writeln!(out, "error scope-ops against the repository: {p}");
    }
    out
}

/// The prompt of one round.
fn prompt_text(input: &DraftInput, round: u32, findings: &str) -> String {
    let mut p = String::new();
    let format = input.format.name();
    let _ = writeln!(
        p,
        "# Write a {format} plan\n\nWrite a plan in the `{format}` format for the spec below, as JSON, \
         to the file `{PLAN_FILE}` in your current directory (also named by the environment variable \
         `PLANWRIGHT_PLAN_FILE`). Write nothing else. Each ticket's scope must name real paths of the \
         repository, or new files it creates. planwright validates the file and, if it finds problems, \
         asks you again with them.\n"
    );
    if round > 1 && !findings.is_empty() {
        let _ = writeln!(
            p,
            "## Problems in your previous plan (round {})\n\nThe file `{PLAN_FILE}` still holds it. \
             Fix every error and write the whole plan again.\n\n```\n{findings}```\n",
            round - 1
        );
    }
    let _ = writeln!(p, "## The spec\n\n{}\n", input.spec.trim_end());
    let _ = writeln!(p, "## The format\n\n{}\n", format_guide(input.format));
    if let Some(files) = &input.repo_files {
        let _ = writeln!(p, "## The repository's tracked files\n\n```");
        for f in files.iter().take(MAX_LISTED_FILES) {
            let _ = writeln!(p, "{f}");
        }
        let _ = writeln!(p, "```");
        if files.len() > MAX_LISTED_FILES {
            let _ = writeln!(p, "({} more not listed)", files.len() - MAX_LISTED_FILES);
        }
    }
    p
}

/// What the agent is told about the format: its JSON Schema where it has
/// one, else agb's own example plan.
fn format_guide(format: Format) -> String {
    match planwright_plan::formats::schema(format) {
        Some(schema) => format!(
            "The plan must validate against this JSON Schema:\n\n```json\n{}\n```",
            serde_json::to_string_pretty(&schema).expect("schemas serialize")
        ),
        None => format!(
            "An agb plan has top-level `tickets` (each with `id`, `title`, `body`, `scope`, `rails`, \
             `tier`, `poolHint`) and `gate`, with `edges` for dependencies. An example:\n\n```json\n{}\n```",
            AGB_EXAMPLE.trim_end()
        ),
    }
}

const AGB_EXAMPLE: &str = include_str!("../../../examples/agb/plan.example.json");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_fenced_block_is_the_plan() {
        let text = "first\n```json\n{\"a\": 1}\n```\nthen\n```\n{\"b\": 2}\n```\n";
        assert_eq!(last_fenced_block(text).as_deref(), Some("{\"b\": 2}"));
        assert_eq!(last_fenced_block("no block"), None);
        // An unclosed block is not a plan.
        assert_eq!(last_fenced_block("```\n{}"), None);
    }

    #[test]
    fn the_prompt_carries_the_findings_only_after_the_first_round() {
        let input = DraftInput {
            spec: "Add a greeting.".into(),
            format: Format::Native,
            options: Options::default(),
            repo_files: Some(vec!["src/lib.rs".into()]),
            rounds: 3,
            dir: PathBuf::from("/nowhere"),
            timeout: None,
            model: None,
        };
        let first = prompt_text(&input, 1, "error x at `/a`: bad\n");
        assert!(first.contains("Add a greeting."));
        assert!(first.contains("src/lib.rs"));
        assert!(first.contains("\"$schema\"") || first.contains("\"properties\""));
        assert!(!first.contains("bad"));
        let second = prompt_text(&input, 2, "error x at `/a`: bad\n");
        assert!(second.contains("round 1"));
        assert!(second.contains("error x at `/a`: bad"));
    }
}
