//! `planwright report --repo DIR [--format json|md|html]`: a run's report.

use super::status::load;
use crate::error::{exit, CliResult};
use crate::{Global, Output};
use clap::ValueEnum;
use planwright_engine::report;
use std::path::PathBuf;

/// Report formats.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    /// Markdown.
    Md,
    /// A self-contained HTML page.
    Html,
    /// JSON (the same data as `status --output json`).
    Json,
}

/// Print a run's report: every ticket with its state, attempts, failures and commits.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The target git repository.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
    /// The run (default: the newest).
    #[arg(long, value_name = "ID")]
    pub run: Option<String>,
    /// The report's format (default: `json` with `--output json`, else `md`).
    #[arg(long, value_enum)]
    pub format: Option<ReportFormat>,
}

/// Runs the command.
pub fn run(args: Args, global: &Global) -> CliResult {
    let r = load(&args.repo, args.run.as_deref())?;
    let format = args.format.unwrap_or(match global.output {
        Output::Json => ReportFormat::Json,
        Output::Human => ReportFormat::Md,
    });
    match format {
        ReportFormat::Md => print!("{}", report::markdown(&r)),
        ReportFormat::Html => print!(
            "{}",
            super::observe::html_report(&args.repo, args.run.as_deref())?
        ),
        ReportFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&r).expect("reports serialize")
        ),
    }
    Ok(exit::OK)
}
