//! `planwright report --repo DIR [--format json|md|html]`: a run's report.

use super::status::load;
use crate::error::{exit, CliResult};
use crate::Global;
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
    /// The report's format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Md)]
    pub format: ReportFormat,
}

/// Runs the command.
pub fn run(args: Args, _global: &Global) -> CliResult {
    let r = load(&args.repo, args.run.as_deref())?;
    match args.format {
        ReportFormat::Md => print!("{}", report::markdown(&r)),
        ReportFormat::Html => print!("{}", report::html(&r)),
        ReportFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&r).expect("reports serialize")
        ),
    }
    Ok(exit::OK)
}
