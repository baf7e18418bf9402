//! `planwright sweep SPEC`: compile an agb sweep spec into an agb plan.

use super::read_file;
use crate::error::{exit, CliError, CliResult};
use crate::{render, settings, Global, Output};
use planwright_engine::git;
use planwright_plan::formats::sweep;
use planwright_plan::{validate_text, Diagnostic, Document, Format, Severity};
use std::path::{Path, PathBuf};

/// Compile an agb sweep spec (one operation over many targets) into an agb
/// plan: ticket `S<i>` per target, `targetGlob` expanded over the files git
/// tracks in the spec's `repo`.
#[derive(clap::Args, Debug)]
pub struct Args {
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
pub fn run(args: Args, global: &Global) -> CliResult {
    let path = args.spec.display().to_string();
    let text = read_file(&args.spec)?;
    let doc = match Document::parse(&path, text.clone()) {
        Ok(doc) => doc,
        Err(e) => {
            let (line, column) = planwright_plan::doc::line_col(&text, e.span.start);
            let message = format!("`{path}`: {}", e.diagnostic.message);
            return Err(spec_failed(
                &path,
                vec![(e.diagnostic, line, column)],
                message,
                global,
            ));
        }
    };
    let spec = doc.value();
    let tracked = match sweep::target_glob(&spec) {
        Some(_) => Some(list_tracked(&args.spec, &spec, &args.rev)?),
        None => None,
    };
    let mut diagnostics = Vec::new();
    let compiled = sweep::compile(&spec, tracked.as_deref(), &mut diagnostics);
    let located: Vec<_> = diagnostics
        .into_iter()
        .map(|d| {
            let (line, column) = doc.line_col(doc.locate(&d.pointer).start);
            (d, line, column)
        })
        .collect();
    let Some(plan) = compiled else {
        let message = format!("`{path}` is not a valid sweep spec");
        return Err(spec_failed(&path, located, message, global));
    };
    print_spec_diagnostics(&path, &located);
    let text = serde_json::to_string_pretty(&plan).expect("plans serialize") + "\n";
    // The compiled plan must pass the same validation as a hand-written one.
    let (config, _) = settings::load_config(global.config.as_deref(), Some(&args.spec))?;
    let options = settings::options(Some(Format::Agb), args.no_strict_gates, config);
    let name = args
        .output_file
        .as_ref()
        .map_or("<compiled plan>".to_string(), |p| p.display().to_string());
    let report = validate_text(&name, text.clone(), &options);
    if !report.valid {
        let error = CliError::with_code(exit::INVALID, "the compiled plan is not valid")
            .hint("fix the sweep spec's gate, tier, pool_hint or scope templates");
        if global.output == Output::Json {
            println!(
                "{}",
                serde_json::to_string_pretty(&[&report]).expect("reports serialize")
            );
            return Err(error.after_json());
        }
        eprint!("{}", render::file_report(&report, false));
        return Err(error);
    }
    match &args.output_file {
        Some(out) => std::fs::write(out, &text)
            .map_err(|e| CliError::write(&out.display().to_string(), &e))?,
        None => print!("{text}"),
    }
    Ok(exit::OK)
}

/// A finding about the spec with its line and column.
type SpecFinding = (Diagnostic, usize, usize);

fn print_spec_diagnostics(path: &str, found: &[SpecFinding]) {
    for (d, line, col) in found {
        eprintln!(
            "{}[{}]: {} ({path}:{line}:{col})",
            d.severity.as_str(),
            d.code,
            d.message
        );
    }
}

/// The spec is not usable: its findings go to stderr for people, or to
/// stdout as one `validate`-shaped array for programs.
fn spec_failed(path: &str, found: Vec<SpecFinding>, message: String, global: &Global) -> CliError {
    let error = CliError::with_code(exit::INVALID, message);
    if global.output == Output::Human {
        print_spec_diagnostics(path, &found);
        return error;
    }
    let count = |s: Severity| found.iter().filter(|(d, ..)| d.severity == s).count();
    let diagnostics: Vec<serde_json::Value> = found
        .iter()
        .map(|(d, line, column)| {
            let mut v = serde_json::to_value(d).expect("diagnostics serialize");
            v["line"] = (*line).into();
            v["column"] = (*column).into();
            v
        })
        .collect();
    let report = serde_json::json!([{
        "file": path, "format": null, "valid": false,
        "errors": count(Severity::Error), "warnings": count(Severity::Warning),
        "diagnostics": diagnostics,
    }]);
    println!(
        "{}",
        serde_json::to_string_pretty(&report).expect("reports serialize")
    );
    error.after_json()
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
    git::tracked_files(&repo, rev).map_err(|e| {
        CliError::usage(format!(
            "cannot list the files of `{}` at {rev}: {e}",
            repo.display()
        ))
        .hint("`repo` must be a git repository; a relative path is taken from the spec's directory")
    })
}
