//! One module per command, each with its clap `Args` and one `run` function.

pub mod convert;
pub mod demo;
pub mod graph;
pub mod observe;
pub mod preflight;
pub mod report;
pub mod run;
pub mod schema;
pub mod serve;
pub mod show;
pub mod status;
pub mod sweep;
pub mod validate;
pub mod watch;

use crate::error::{exit, CliError};
use crate::settings;
use crate::{render, Global, Output};
use planwright_plan::report::FileReport;
use planwright_plan::{validate_text, Format, Plan};
use std::path::{Path, PathBuf};

/// How a command that reads one plan reads it.
#[derive(clap::Args, Debug, Clone)]
pub struct PlanArgs {
    /// The plan file: JSON, or YAML when the name ends in `.yaml` or `.yml` (any format).
    #[arg(value_name = "PLAN")]
    pub plan: PathBuf,
    #[command(flatten)]
    pub read: ReadArgs,
}

/// Flags that change how a plan is read.
#[derive(clap::Args, Debug, Clone)]
pub struct ReadArgs {
    /// Read the plan as this format instead of detecting it (agb, codeboost, standard_v1, native).
    #[arg(long, value_name = "FORMAT", value_parser = settings::parse_format)]
    pub format: Option<Format>,
    /// agb: allow gate commands other than `npm test` / `npm run <script>` (also AGB_STRICT_GATES=0).
    #[arg(long)]
    pub no_strict_gates: bool,
    /// codeboost: the issue the plan must be for.
    #[arg(long, value_name = "N")]
    pub issue: Option<u64>,
    /// standard_v1: coerce a bare string into its object where the schema allows it (a warning each).
    #[arg(long)]
    pub coerce: bool,
    /// standard_v1: the implement stage's file cap, for the cap checks (overrides `[standard_v1] max_files_changed`).
    #[arg(long, value_name = "N")]
    pub max_files_changed: Option<u32>,
    /// standard_v1: the planner's prompt rendered a calibration hint, so the plan must carry
    /// `raw_predicted_runtime_minutes` (also `[standard_v1] calibration_hint = true`).
    #[arg(long)]
    pub calibration_hint: bool,
}

/// `validate`'s repository tree: codeboost plans' file operations are
/// checked against it.
#[derive(clap::Args, Debug, Clone)]
pub struct TreeArgs {
    /// codeboost: check the plan's file operations against this repository's tree.
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// codeboost: the revision of `--repo` whose tree is checked.
    #[arg(long, value_name = "REV", default_value = "HEAD", requires = "repo")]
    pub rev: String,
}

/// Reads a file, mapping I/O failures to exit 2.
pub fn read_file(path: &Path) -> Result<String, CliError> {
    if path == Path::new("-") && !path.exists() {
        return Err(
            CliError::usage("`-`: plans are not read from standard input")
                .hint("save the plan to a file and pass its path"),
        );
    }
    let bytes = std::fs::read(path).map_err(|e| CliError::io(&path.display().to_string(), &e))?;
    String::from_utf8(bytes).map_err(|e| {
        CliError::usage(format!(
            "`{}` is not UTF-8 text (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Validates one plan file with the flags and configuration in force.
pub fn check_file(
    path: &Path,
    read: &ReadArgs,
    tree: Option<&TreeArgs>,
    global: &Global,
) -> Result<FileReport, CliError> {
    let text = read_file(path)?;
    let (config, _) = settings::load_config(global.config.as_deref(), Some(path))?;
    let mut options = settings::options(read.format, read.no_strict_gates, config);
    options.issue = read.issue;
    if let Some((repo, rev)) = tree.and_then(|t| Some((t.repo.as_ref()?, &t.rev))) {
        if !repo.is_dir() {
            return Err(CliError::usage(format!(
                "`--repo {}` is not a directory",
                repo.display()
            )));
        }
        let files = planwright_engine::git::tracked_files(repo, rev).map_err(|e| {
            CliError::usage(format!(
                "cannot list the files of `{}` at `{}`: {e}",
                repo.display(),
                rev
            ))
            .hint("`--repo` must be a git repository and `--rev` a revision in it")
        })?;
        options.repo_files = Some(files.into_iter().collect());
    }
    options.coerce = read.coerce;
    options.max_files_changed = read.max_files_changed;
    options.calibration_hint = read.calibration_hint;
    Ok(validate_text(&path.display().to_string(), text, &options))
}

/// Reads a plan that must be valid: an invalid one prints its diagnostics
/// (to stderr for people, stdout for JSON) and ends the command with exit 1.
pub fn load_plan(args: &PlanArgs, global: &Global) -> Result<(Plan, FileReport), CliError> {
    let report = check_file(&args.plan, &args.read, None, global)?;
    match &report.plan {
        Some(plan) => Ok((plan.clone(), report)),
        None => {
            let error = CliError::with_code(
                exit::INVALID,
                format!("`{}` is not a valid plan", report.file),
            )
            .hint(format!(
                "run `planwright validate {}` for details",
                report.file
            ));
            if global.output == Output::Json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&[&report]).expect("reports serialize")
                );
                return Err(error.after_json());
            }
            eprint!("{}", render::file_report(&report, false));
            Err(error)
        }
    }
}
