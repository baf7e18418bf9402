//! `planwright status --repo DIR`: where the newest run stands.

use super::run::engine_error;
use crate::error::{exit, CliError, CliResult};
use crate::{Global, Output};
use planwright_engine::repo::Repo;
use planwright_engine::report::{self, RunReport};
use planwright_engine::state::TicketState;
use std::path::PathBuf;

/// Show where a run stands: each ticket's state, attempts, last failure and
/// merged commit. A run whose process is gone shows as `interrupted`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The target git repository.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
    /// The run (default: the newest).
    #[arg(long, value_name = "ID")]
    pub run: Option<String>,
}

/// Loads the report of the chosen run, or explains that there is none.
pub fn load(repo: &std::path::Path, run: Option<&str>) -> Result<RunReport, CliError> {
    let repo = Repo::open(repo).map_err(engine_error)?;
    report::load(&repo, run)
        .map_err(engine_error)?
        .ok_or_else(|| {
            let root = repo.root().display();
            match run {
                Some(r) => CliError::usage(format!("no run `{r}` in `{root}`")).hint(format!(
                    "omit `--run` for the newest run; the ids are the folders of `{root}/.planwright/runs`"
                )),
                None => CliError::usage(format!("no run in `{root}`"))
                    .hint("start one with `planwright run PLAN --repo DIR`"),
            }
        })
}

/// Runs the command.
pub fn run(args: Args, global: &Global) -> CliResult {
    let r = load(&args.repo, args.run.as_deref())?;
    if global.output == Output::Json {
        crate::outln!(
            "{}",
            serde_json::to_string_pretty(&r).expect("reports serialize")
        );
        return Ok(exit::OK);
    }
    crate::outln!(
        "run {} ({}), plan `{}`, base `{}`",
        r.run.id,
        r.run.status.as_str(),
        r.run.plan_path,
        r.run.base
    );
    let width = r
        .tickets
        .iter()
        .map(|t| t.ticket.id.len())
        .max()
        .unwrap_or(2)
        .clamp(6, super::show::MAX_ID_COLUMN);
    crate::outln!(
        "{:width$}  {:8}  {:8}  {:10}  failure",
        "ticket",
        "state",
        "attempts",
        "commit"
    );
    for report in &r.tickets {
        let t = &report.ticket;
        let commit = t
            .merge_commit
            .as_deref()
            .map_or("", |c| &c[..c.len().min(10)]);
        let failure = report::failure_text(report);
        crate::outln!(
            "{:width$}  {:8}  {:8}  {:10}  {failure}",
            t.id,
            t.state.as_str(),
            t.attempt_count,
            commit
        );
    }
    // Why each ticket that did not merge failed, without opening its log.
    let lines = if global.verbose {
        usize::MAX
    } else {
        report::EVIDENCE_LINES
    };
    for t in &r.tickets {
        let why = report::why(t, lines);
        if why.is_empty() || global.quiet {
            continue;
        }
        crate::outln!("\n{}:", t.ticket.id);
        for line in why {
            crate::outln!("  {line}");
        }
    }
    let changed: Vec<&str> = r
        .tickets
        .iter()
        .filter(|t| t.ticket.state == TicketState::Changed)
        .map(|t| t.ticket.id.as_str())
        .collect();
    if !changed.is_empty() {
        crate::outln!(
            "\nchanged: {} merged from an older definition; `planwright run --rerun ID` (or `--rerun-changed`) runs them again",
            changed.join(", ")
        );
    }
    Ok(exit::OK)
}
