//! `planwright status --repo DIR`: where the newest run stands.

use super::run::engine_error;
use crate::error::{exit, CliError, CliResult};
use crate::{Global, Output};
use planwright_engine::repo::Repo;
use planwright_engine::report::{self, RunReport};
use planwright_engine::view::RunView;
use std::path::PathBuf;

/// Show where a run stands: each ticket's state, attempts, last failure and
/// merged commit.
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
        .ok_or_else(|| super::observe::no_run(&repo, run))
}

/// Runs the command.
///
/// Every figure comes from the run's view (its event log), like `watch`,
/// `serve` and the HTML report; `--output json` adds the state store's
/// rows with every attempt.
pub fn run(args: Args, global: &Global) -> CliResult {
    let (view, _) = super::observe::load_view(&args.repo, args.run.as_deref())?;
    let counts = view.counts();
    if global.output == Output::Json {
        let r = load(&args.repo, args.run.as_deref())?;
        let mut json = serde_json::to_value(&r).expect("reports serialize");
        json["counts"] = serde_json::to_value(counts).expect("counts serialize");
        println!(
            "{}",
            serde_json::to_string_pretty(&json).expect("reports serialize")
        );
        return Ok(exit::OK);
    }
    let r = &view.run;
    println!(
        "run {} ({}), plan `{}`, base `{}`",
        r.id, r.status, r.plan_path, r.base
    );
    println!("{}", counts_line(&view));
    let width = view
        .tickets
        .iter()
        .map(|t| t.id.len())
        .max()
        .unwrap_or(2)
        .clamp(6, super::show::MAX_ID_COLUMN);
    println!(
        "{:width$}  {:8}  {:8}  {:10}  failure",
        "ticket", "state", "attempts", "commit"
    );
    for t in &view.tickets {
        let commit = t
            .merged_commit
            .as_deref()
            .map_or("", |c| &c[..c.len().min(10)]);
        let failure = t.failure.as_ref().map_or(String::new(), |f| f.to_string());
        println!(
            "{:width$}  {:8}  {:8}  {:10}  {failure}",
            t.id,
            t.state.as_str(),
            t.attempts.len(),
            commit
        );
    }
    Ok(exit::OK)
}

/// `3 tickets: 1 merged, 1 failed, 1 blocked, 0 running, 0 pending`.
pub fn counts_line(view: &RunView) -> String {
    let c = view.counts();
    format!(
        "{} tickets: {} merged, {} failed, {} blocked, {} running, {} pending",
        view.tickets.len(),
        c.merged,
        c.failed,
        c.blocked,
        c.running,
        c.pending
    )
}
