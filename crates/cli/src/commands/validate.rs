//! `planwright validate PLAN...`: every error and warning of every file.

use super::{check_file, ReadArgs};
use crate::error::{exit, CliResult};
use crate::{render, Global, Output};
use std::path::PathBuf;

/// Check plan files and report every problem at once.
///
/// Exit 0 when every file is valid (warnings allowed), 1 when one is not,
/// 2 when a file cannot be read.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Plan files (JSON, or YAML for the formats that allow it).
    #[arg(value_name = "PLAN", required = true)]
    pub plans: Vec<PathBuf>,
    #[command(flatten)]
    pub read: ReadArgs,
}

/// Runs the command.
pub fn run(args: Args, global: &Global) -> CliResult {
    let mut reports = Vec::new();
    for path in &args.plans {
        reports.push(check_file(path, &args.read, global)?);
    }
    match global.output {
        Output::Json => println!(
            "{}",
            serde_json::to_string_pretty(&reports).expect("reports serialize")
        ),
        Output::Human => {
            let color = global.color();
            for r in &reports {
                print!("{}", render::file_report(r, color));
            }
        }
    }
    Ok(if reports.iter().all(|r| r.valid) {
        exit::OK
    } else {
        exit::INVALID
    })
}
