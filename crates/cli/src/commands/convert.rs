//! `planwright convert PLAN --to FORMAT`: rewrite a plan in another format.

use super::{load_plan, Loaded, PlanArgs};
use crate::error::{exit, CliError, CliResult};
use crate::{render, settings, Global, Output};
use planwright_config::ValidationFlags;
use planwright_plan::formats::{self, loss};
use planwright_plan::report::FileReport;
use planwright_plan::{validate_text, Diagnostic, Format};
use std::path::PathBuf;

/// Convert a plan to another format, with a warning for each thing the
/// target cannot express.
///
/// The output is read back as the target format; if the target's own
/// validation would reject it, nothing is written and the command exits 1,
/// unless `--force`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    pub plan: PlanArgs,
    /// The format to write (agb, codeboost, standard_v1, native, taskmaster, autoclaude, speckit).
    #[arg(long, value_name = "FORMAT", value_parser = settings::parse_format)]
    pub to: Format,
    /// Write to this file instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
    /// Write the output even when the target format's validation rejects it.
    #[arg(long)]
    pub force: bool,
}

/// Runs the command.
pub(crate) fn run(args: Args, global: &Global) -> CliResult {
    let Loaded { plan, .. } = load_plan(&args.plan, None, None, global)?;
    let mut warnings: Vec<Diagnostic> = Vec::new();
    let text = formats::write(&plan, args.to, &mut warnings);
    let back = read_back(&text, &args, global)?;
    match &back.plan {
        Some(converted) => {
            let lost = loss::losses(&plan, converted, args.to, &warnings);
            warnings.extend(lost);
            // A gate the target's own allowlist would not run (codeboost's
            // `[commands] allow`) is meaning the conversion puts at risk.
            warnings.extend(
                back.diagnostics
                    .iter()
                    .filter(|d| d.diagnostic.code == "codeboost.command.not-allowed")
                    .map(|d| d.diagnostic.clone()),
            );
        }
        None if !args.force => {
            print_warnings(&warnings, global);
            eprint!(
                "{}",
                render::diagnostics(&back, global, global.color_stderr())
            );
            return Err(CliError::with_code(
                exit::INVALID,
                format!(
                    "the {} output would not pass {}'s own validation; nothing was written",
                    args.to, args.to
                ),
            )
            .hint(
                "fix what is listed above in the source plan, or pass `--force` to write it anyway",
            ));
        }
        None => {
            global.warn(format!(
                "the {} output does not pass {}'s own validation (written anyway: `--force`)",
                args.to, args.to
            ));
            eprint!(
                "{}",
                render::diagnostics(&back, global, global.color_stderr())
            );
        }
    }
    match &args.output_file {
        Some(path) => std::fs::write(path, &text)
            .map_err(|e| CliError::write(&path.display().to_string(), &e))?,
        None => crate::out!("{text}"),
    }
    print_warnings(&warnings, global);
    Ok(exit::OK)
}

/// The output as the target format reads it, with the options in force.
fn read_back(text: &str, args: &Args, global: &Global) -> Result<FileReport, CliError> {
    let beside = Some(args.plan.plan.as_path()).filter(|p| !super::is_stdin(p));
    let (config, _) = settings::load_config(global, beside)?;
    let read = &args.plan.read;
    // The output is read back as its target format: only these flags apply.
    let flags = ValidationFlags {
        format: Some(args.to),
        no_strict_gates: read.no_strict_gates,
        max_files_changed: read.max_files_changed,
        ..ValidationFlags::default()
    };
    let options = settings::options(flags, &config);
    let name = args
        .output_file
        .as_ref()
        .map_or(format!("<{} output>", args.to), |p| p.display().to_string());
    Ok(validate_text(&name, text.to_string(), &options))
}

fn print_warnings(warnings: &[Diagnostic], global: &Global) {
    if global.quiet {
        return;
    }
    for w in warnings {
        match global.output {
            Output::Json => eprintln!(
                "{}",
                serde_json::to_string(w).expect("diagnostics serialize")
            ),
            _ if w.pointer.is_empty() => eprintln!("warning[{}]: {}", w.code, w.message),
            _ => eprintln!("warning[{}]: {} (at {})", w.code, w.message, w.pointer),
        }
    }
}
