//! `planwright sweep SPEC`: compile an agb sweep spec into an agb plan.

use super::read_file;
use crate::error::{exit, CliError, CliResult};
use crate::{render, settings, Global, Output};
use planwright_config::ValidationFlags;
use planwright_plan::formats::sweep;
use planwright_plan::formats::Outcome;
use planwright_plan::report::{check_text, FileReport};
use planwright_plan::{validate_text, Document, Format};
use std::path::{Path, PathBuf};

/// Compile an agb sweep spec (one operation over many targets) into an agb
/// plan: ticket `S<i>` per target, `targetGlob` expanded over the files git
/// tracks in the spec's `repo`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The sweep spec (JSON).
    #[arg(value_name = "SPEC")]
    pub spec: PathBuf,
    /// Write the plan to this file instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
    /// The revision whose tracked files `targetGlob` is matched against.
    #[arg(long, default_value = "HEAD")]
    pub rev: String,
    /// Allow gate commands other than `npm test` / `npm run <script>` (also AGB_STRICT_GATES=0).
    #[arg(long)]
    pub no_strict_gates: bool,
}

/// Runs the command.
pub(crate) fn run(args: Args, global: &Global) -> CliResult {
    let path = args.spec.display().to_string();
    let text = read_file(&args.spec)?;
    // The glob needs the repository's files before the spec is compiled; a
    // spec that does not parse is reported by `check_text` below.
    let tracked = match Document::parse(&path, text.clone()).map(|d| d.value()) {
        Ok(spec) if sweep::target_glob(&spec).is_some() => {
            Some(list_tracked(&args.spec, &spec, &args.rev)?)
        }
        _ => None,
    };
    let mut compiled = None;
    let spec_report = check_text(&path, text, |doc, sink| {
        compiled = sweep::compile(&doc.value(), tracked.as_deref(), sink);
        Outcome::default()
    });
    let Some(plan) = compiled.filter(|_| spec_report.valid) else {
        let error =
            CliError::with_code(exit::INVALID, format!("`{path}` is not a valid sweep spec"));
        return Err(report_and(&spec_report, error, global));
    };
    if global.output == Output::Human {
        eprint!(
            "{}",
            render::diagnostics(&spec_report, global, global.color_stderr())
        );
    }
    let text = serde_json::to_string_pretty(&plan).expect("plans serialize") + "\n";
    // The compiled plan must pass the same validation as a hand-written one.
    let (config, _) = settings::load_config(global, Some(&args.spec))?;
    let flags = ValidationFlags {
        format: Some(Format::Agb),
        no_strict_gates: args.no_strict_gates,
        ..ValidationFlags::default()
    };
    let options = settings::options(flags, &config);
    let name = args
        .output_file
        .as_ref()
        .map_or("<compiled plan>".to_string(), |p| p.display().to_string());
    let report = validate_text(&name, text.clone(), &options);
    if !report.valid {
        let error = CliError::with_code(exit::INVALID, "the compiled plan is not valid")
            .hint("fix the sweep spec's gate, tier, pool_hint or scope templates");
        return Err(report_and(&report, error, global));
    }
    match &args.output_file {
        Some(out) => std::fs::write(out, &text)
            .map_err(|e| CliError::write(&out.display().to_string(), &e))?,
        None => crate::out!("{text}"),
    }
    Ok(exit::OK)
}

/// Prints `report` (to stderr for people, as a `validate`-shaped array on
/// stdout for programs) and returns `error` to end the command.
fn report_and(report: &FileReport, error: CliError, global: &Global) -> CliError {
    if global.output == Output::Json {
        crate::outln!(
            "{}",
            serde_json::to_string_pretty(&[report]).expect("reports serialize")
        );
        return error.after_json();
    }
    eprint!(
        "{}",
        render::diagnostics(report, global, global.color_stderr())
    );
    error
}

fn list_tracked(
    spec_path: &Path,
    spec: &serde_json::Value,
    rev: &str,
) -> Result<Vec<String>, CliError> {
    let repo = spec.get("repo").and_then(|v| v.as_str()).unwrap_or(".");
    let repo = match Path::new(repo) {
        p if p.is_absolute() => p.to_path_buf(),
        p => spec_path.parent().unwrap_or(Path::new(".")).join(p),
    };
    planwright_engine::tracked_files(&repo, rev).map_err(|e| {
        CliError::usage(format!(
            "cannot list the files of `{}` at {rev}: {e}",
            repo.display()
        ))
        .hint("`repo` must be a git repository; a relative path is taken from the spec's directory")
    })
}
