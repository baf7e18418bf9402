//! `planwright import issues --repo DIR`: a native plan from the forge's
//! open issues (docs/forge.md, "Issues in"). The reading is the engine's
//! (`planwright_engine::issues`); this resolves `[forge]`, writes the plan
//! and prints the reading decisions.

use crate::error::{exit, CliError, CliResult};
use crate::{settings, Global, Output};
use planwright_engine::issues::{self, ImportError, Imported, Selection};
use std::path::PathBuf;

/// Take work in from the forge.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(subcommand)]
    pub what: What,
}

/// What to import.
#[derive(clap::Subcommand, Debug)]
pub(crate) enum What {
    Issues(IssuesArgs),
}

/// Write a native plan with one ticket `issue-N` per open issue of the
/// forge's repository (`[forge]` in planwright.toml; docs/forge.md).
///
/// Edges come from `Depends on #N`, `Blocked by #N` and `Requires #N`
/// lines (any case, lists allowed) and from the forge's own links
/// (blocked-by links, dependencies, sub-issues). A closed blocker is
/// satisfied; an open one outside the selection, or a cycle, is an error
/// naming it. Backticked paths and a `Files:` list become the scope, a
/// task list the checks. Each ticket keeps its issue, so `deliver` writes
/// `Closes #N`.
#[derive(clap::Args, Debug)]
pub(crate) struct IssuesArgs {
    /// The repository whose `[forge]` remote and configuration are used.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
    /// Only issues with this label (repeat: every label).
    #[arg(long, value_name = "NAME")]
    pub label: Vec<String>,
    /// Only issues in this milestone (its title).
    #[arg(long, value_name = "M")]
    pub milestone: Option<String>,
    /// Only these issues (repeat, or list them: `--issue 3 4`).
    #[arg(long, value_name = "N", num_args = 1..)]
    pub issue: Vec<u64>,
    /// The plan file to write.
    #[arg(
        short = 'o',
        long,
        value_name = "FILE",
        required_unless_present = "dry_run"
    )]
    pub output_file: Option<PathBuf>,
    /// Print the plan and every reading decision (which line made which
    /// edge), and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Runs the command.
pub(crate) fn run(args: Args, global: &Global) -> CliResult {
    let What::Issues(args) = args.what;
    let repo = super::observe::open_repo(&args.repo)?;
    let (config, _) =
        settings::load_config(global, Some(&repo.root().join(settings::CONFIG_FILE)))?;
    let (forge_settings, _) = super::deliver::forge_settings(&repo, &config)?;
    let forge = planwright_engine::deliver::connect_to(&forge_settings)
        .map_err(super::deliver::deliver_error)?;
    let selection = Selection {
        labels: args.label.clone(),
        milestone: args.milestone.clone(),
        numbers: args.issue.clone(),
    };
    let base = forge
        .repository_info()
        .map_err(|e| import_error(e.into()))?
        .default_branch;
    let imported = issues::import(forge.as_ref(), &selection, &base).map_err(import_error)?;
    let doc = planwright_plan::formats::native::emit(&imported.plan);
    let text = format!(
        "{}\n",
        serde_json::to_string_pretty(&doc).expect("plans serialize")
    );
    if let (Some(path), false) = (&args.output_file, args.dry_run) {
        super::write_output(Some(path), &text)?;
    }
    print(&imported, &text, &args, global);
    Ok(exit::OK)
}

fn print(imported: &Imported, text: &str, args: &IssuesArgs, global: &Global) {
    if global.output == Output::Json {
        let json = serde_json::json!({
            "dry_run": args.dry_run,
            "written": (!args.dry_run).then_some(args.output_file.as_ref().map(|p| p.display().to_string())),
            "tickets": imported.plan.tickets.len(),
            "decisions": imported.decisions,
            "plan": serde_json::from_str::<serde_json::Value>(text).expect("just written"),
        });
        crate::outln!(
            "{}",
            serde_json::to_string_pretty(&json).expect("serializes")
        );
        return;
    }
    if args.dry_run {
        crate::out!("{text}");
        crate::outln!("\nreading decisions (nothing written):");
    } else if let Some(path) = &args.output_file {
        let n = imported.plan.tickets.len();
        crate::outln!(
            "wrote {}: {}",
            path.display(),
            planwright_plan::words::count(n, "ticket")
        );
    }
    for d in &imported.decisions {
        crate::outln!("  #{}: {}", d.issue, d.text);
    }
}

fn import_error(e: ImportError) -> CliError {
    let code = match e {
        ImportError::Forge(_) => exit::USAGE,
        _ => exit::INVALID,
    };
    let hint = e.hint();
    let error = CliError::with_code(code, e.to_string());
    match hint {
        Some(h) => error.hint(h),
        None => error,
    }
}
