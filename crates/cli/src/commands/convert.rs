//! `planwright convert PLAN --to FORMAT`: rewrite a plan in another format.

use super::{load_plan, PlanArgs};
use crate::error::{exit, CliError, CliResult};
use crate::{settings, Global, Output};
use planwright_plan::formats;
use planwright_plan::{Diagnostic, Format};
use std::path::PathBuf;

/// Convert a plan to another format, with a warning for each thing the
/// target cannot express.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub plan: PlanArgs,
    /// The format to write (agb, codeboost, standard_v1, native).
    #[arg(long, value_name = "FORMAT", value_parser = settings::parse_format)]
    pub to: Format,
    /// Write to this file instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
}

/// Runs the command.
pub fn run(args: Args, global: &Global) -> CliResult {
    let (plan, _) = load_plan(&args.plan, global)?;
    let mut warnings: Vec<Diagnostic> = Vec::new();
    let doc = formats::emit(&plan, args.to, &mut warnings);
    let text = serde_json::to_string_pretty(&doc).expect("documents serialize") + "\n";
    match &args.output_file {
        Some(path) => std::fs::write(path, &text)
            .map_err(|e| CliError::write(&path.display().to_string(), &e))?,
        None => print!("{text}"),
    }
    for w in &warnings {
        match global.output {
            Output::Json => eprintln!(
                "{}",
                serde_json::to_string(w).expect("diagnostics serialize")
            ),
            Output::Human if w.pointer.is_empty() => {
                eprintln!("warning[{}]: {}", w.code, w.message)
            }
            Output::Human => eprintln!("warning[{}]: {} (at {})", w.code, w.message, w.pointer),
        }
    }
    Ok(exit::OK)
}
