//! `planwright demo`: a built-in plan run end to end in a temporary repository.

use super::run::{cancel_on_signals, engine_error, finish_with, preflight_failed, reporters_with};
use crate::error::{CliError, CliResult};
use crate::{Global, Output};
use planwright_engine::agent::{self, Agents};
use planwright_engine::{prepare_demo, Resume};
use std::sync::Arc;

/// Run a built-in example plan end to end in a temporary repository with the
/// scripted agent: no network, no model. Two tickets run in parallel, one
/// depends on another behind a rail, and one is rejected once for editing a
/// file outside its scope, then passes.
///
/// The temporary repository is removed at the end unless `--keep`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Keep the temporary repository, to look at with `status`, `report` and git.
    #[arg(long)]
    pub keep: bool,
}

/// Runs the command.
pub(crate) fn run(args: Args, global: &Global) -> CliResult {
    let temp = tempfile::Builder::new()
        .prefix("planwright-demo-")
        .tempdir()
        .map_err(|e| CliError::usage(format!("cannot create a temporary folder: {e}")))?;
    // Dropping `temp` removes the folder, also on an early error return.
    let dir = temp.path().to_path_buf();
    let result = demo(&dir, args.keep, global);
    if args.keep {
        let _ = temp.keep();
    }
    result
}

fn demo(dir: &std::path::Path, keep: bool, global: &Global) -> CliResult {
    let made = prepare_demo(dir).map_err(engine_error)?;
    let text = super::read_file(&made.plan)?;
    let report = planwright_plan::validate_text(
        &made.plan.display().to_string(),
        text,
        &planwright_plan::Options::default(),
    );
    let plan = report
        .plan
        .ok_or_else(|| CliError::usage("the built-in demo plan is invalid (a bug)"))?;
    let agent = agent::from_name(&format!("scripted:{}", made.fixtures.display()), None)
        .map_err(engine_error)?;
    let settings = made.settings();
    let human = global.output == Output::Human && !global.quiet;
    if human {
        crate::outln!(
            "demo: plan `{}`, repository `{}`",
            made.plan.display(),
            made.repo.display()
        );
    }
    let session = planwright_engine::prepare(
        &made.repo,
        plan,
        settings,
        Resume::default(),
        &[],
        &Agents::from(Arc::<dyn agent::Agent>::from(agent)),
    )
    .map_err(|f| preflight_failed(&f.checks, global))?;
    let executor = session.local_executor();
    let summary = planwright_engine::run(
        session,
        executor,
        // The merge queue's own steps are for `--verbose`: the first look
        // is what happened to each ticket.
        reporters_with(global, crate::progress::HEARTBEAT, false),
        &cancel_on_signals(),
    )
    .map_err(engine_error)?;
    if human {
        let log = made.landed().map_err(|e| CliError::usage(e.to_string()))?;
        crate::outln!(
            "\nwhat landed on `main` in `{}`:\n{log}",
            made.repo.display()
        );
        if keep {
            crate::outln!(
                "\nsee `planwright status --repo {0}` and `planwright report --repo {0}`",
                made.repo.display()
            );
        } else {
            crate::outln!("\nthe temporary repository is removed now; pass `--keep` to look at it");
        }
    }
    // A program needs to know where the demo ran as much as a person does.
    let mut place = serde_json::Map::new();
    place.insert("plan".into(), made.plan.display().to_string().into());
    place.insert("repo".into(), made.repo.display().to_string().into());
    place.insert("kept".into(), keep.into());
    finish_with(&summary, place, global)
}
