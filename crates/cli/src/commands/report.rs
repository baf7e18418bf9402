//! `planwright report --repo DIR [--to md|html|json]`: a run's report.

use super::observe::RunArgs;
use super::status::load;
use crate::error::{exit, CliResult};
use crate::{Global, Output};
use clap::ValueEnum;
use planwright_view::{markdown, RunDocument};
use std::path::PathBuf;

/// Report formats.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReportFormat {
    /// Markdown.
    Md,
    /// A self-contained HTML page.
    Html,
    /// JSON (the same data as `status --output json`).
    Json,
}

/// Print a run's report: every ticket with its state, attempts, failures and commits.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    pub run: RunArgs,
    /// The report's format (default: `json` with `--output json`, else `md`; `--format` until the next release).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub to: Option<ReportFormat>,
    /// Write the report to this file instead of standard output (an HTML
    /// report links the run's logs relative to its folder).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
}

/// Runs the command.
pub(crate) fn run(args: Args, global: &Global) -> CliResult {
    let r = load(&args.run.repo, args.run.id.as_deref())?;
    let format = args.to.unwrap_or(match global.output {
        Output::Json => ReportFormat::Json,
        _ => ReportFormat::Md,
    });
    let text = match format {
        ReportFormat::Md => markdown(&r),
        ReportFormat::Html => super::observe::html_report(
            &args.run.repo,
            args.run.id.as_deref(),
            args.output_file.as_deref(),
        )?,
        ReportFormat::Json => {
            serde_json::to_string_pretty(&RunDocument::new(&r)).expect("reports serialize") + "\n"
        }
    };
    super::write_output(args.output_file.as_deref(), &text)?;
    Ok(exit::OK)
}
