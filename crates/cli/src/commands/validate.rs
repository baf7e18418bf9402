//! `planwright validate PLAN...`: every error and warning of every file.

use super::{check_file, Checked, ReadArgs, TreeArgs};
use crate::error::{exit, CliError, CliResult};
use crate::{render, sarif, Global, Output};
use planwright_plan::diag::Diagnostic;
use planwright_plan::report::FileReport;
use std::path::PathBuf;

/// Check plan files and report every problem at once.
///
/// Exit 0 when every file is valid (warnings allowed), 1 when one is not,
/// 2 when a file cannot be read (the other files are still checked).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Plan files: JSON, or YAML when the name ends in `.yaml` or `.yml` (any format); `-` reads standard input.
    #[arg(value_name = "PLAN", required = true)]
    pub plans: Vec<PathBuf>,
    #[command(flatten)]
    pub read: ReadArgs,
    #[command(flatten)]
    pub tree: TreeArgs,
}

/// Runs the command. Each file's report is printed as soon as it is
/// checked (human output and JSON lines), and the parsed plan is never kept
/// past its file, so memory stays flat in the number of files; the JSON
/// array and SARIF outputs keep each file's diagnostics until the end
/// (SARIF also its text, for the ends of regions).
pub fn run(args: Args, global: &Global) -> CliResult {
    let mut kept: Vec<FileReport> = Vec::new();
    let mut checked_any = false;
    let mut all_valid = true;
    let mut failures: Vec<CliError> = Vec::new();
    let color = global.color();
    let mut setup_said = false;
    for path in &args.plans {
        match check_file(
            path,
            &args.read,
            Some(&args.tree),
            args.tree.repo.as_deref(),
            None,
            global,
        ) {
            Ok(mut checked) => {
                let mut found = unjudged(&checked).into_iter().collect::<Vec<_>>();
                if !setup_said {
                    found.extend(no_setup(&checked, path, args.tree.repo.as_deref()));
                    setup_said = found.iter().any(|d| d.code == SETUP_CODE);
                }
                found
                    .into_iter()
                    .for_each(|d| checked.report.add_warning(d));
                let mut report = checked.report;
                checked_any = true;
                all_valid &= report.valid;
                match global.output {
                    Output::Human => crate::out!("{}", render::file_report(&report, global, color)),
                    Output::JsonLines => crate::outln!(
                        "{}",
                        serde_json::to_string(&report).expect("reports serialize")
                    ),
                    Output::Json => {
                        report.plan = None;
                        report.text = String::new();
                        kept.push(report);
                    }
                    Output::Sarif => {
                        report.plan = None;
                        kept.push(report);
                    }
                }
            }
            // One unreadable file must not hide the findings in the others.
            Err(e) if !failures.iter().any(|f| f.message == e.message) => failures.push(e),
            Err(_) => {}
        }
    }
    let last = failures.pop();
    for e in &failures {
        eprintln!("{e}");
    }
    if !checked_any {
        return Err(last.expect("at least one plan was given"));
    }
    match global.output {
        Output::Json => crate::outln!(
            "{}",
            serde_json::to_string_pretty(&kept).expect("reports serialize")
        ),
        Output::Sarif => crate::outln!(
            "{}",
            serde_json::to_string_pretty(&sarif::log(&kept)).expect("SARIF serializes")
        ),
        Output::Human | Output::JsonLines => {}
    }
    if let Some(e) = last {
        return Err(e.after_json());
    }
    Ok(if all_valid { exit::OK } else { exit::INVALID })
}

/// The code of [`no_setup`]'s warning.
const SETUP_CODE: &str = "plan.setup.missing";

/// A lock file at the repository's root and no `[workspace] setup`, as
/// preflight says it: the repository is the one a run of the plan at
/// `path` would work on (`--repo`, the plan's `repo`, else the current
/// folder's).
fn no_setup(
    checked: &Checked,
    path: &std::path::Path,
    repo: Option<&std::path::Path>,
) -> Option<Diagnostic> {
    let plan = checked.report.plan.as_ref()?;
    let setup = planwright_config::resolve::workspace(&checked.config).setup;
    let dir = super::plan_repo_dir(repo, path, plan.repo.as_deref());
    planwright_engine::missing_setup(&dir, &setup).map(|c| warning(SETUP_CODE, c))
}

/// Checks no reviewer will judge, as `preflight` says them (a valid
/// plan's, under the configuration its run would read).
fn unjudged(checked: &Checked) -> Option<Diagnostic> {
    let plan = checked.report.plan.as_ref()?;
    let review = planwright_config::resolve::review(&checked.config);
    planwright_engine::unjudged_checks(plan, &review).map(|c| warning("plan.checks.unjudged", c))
}

/// A preflight check as a warning about the whole file.
fn warning(code: &str, check: planwright_engine::Check) -> Diagnostic {
    let d = Diagnostic::warning(code, "", check.message);
    match check.hint {
        Some(hint) => d.with_hint(hint),
        None => d,
    }
}
