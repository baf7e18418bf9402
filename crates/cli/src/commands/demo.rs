//! `planwright demo`: a built-in plan run end to end in a temporary repository.

use super::run::{cancel_on_signals, engine_error, finish_with, preflight_failed, reporters};
use crate::error::{CliError, CliResult};
use crate::{Global, Output};
use planwright_engine::agent;
use planwright_engine::demo;
use planwright_engine::git::Git;
use planwright_engine::run::{self as engine_run, Resume};
use std::sync::Arc;

/// Run a built-in example plan end to end in a temporary repository with the
/// scripted agent: no network, no model. Two tickets run in parallel, one
/// depends on another behind a rail, and one is rejected once for editing a
/// file outside its scope, then passes.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs the command.
pub fn run(_args: Args, global: &Global) -> CliResult {
    let dir = tempfile::Builder::new()
        .prefix("planwright-demo-")
        .tempdir()
        .map_err(|e| CliError::usage(format!("cannot create a temporary folder: {e}")))?
        .keep();
    let made = demo::prepare(&dir).map_err(engine_error)?;
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
    let human = global.output == Output::Human;
    if human {
        println!(
            "demo: plan `{}`, repository `{}`",
            made.plan.display(),
            made.repo.display()
        );
    }
    let session = engine_run::prepare(
        &made.repo,
        plan,
        settings,
        Resume::default(),
        &[],
        agent.as_ref(),
    )
    .map_err(|f| preflight_failed(&f.checks, global))?;
    let executor = session.local_executor(Arc::from(agent));
    let summary = engine_run::run(session, executor, reporters(global), &cancel_on_signals())
        .map_err(engine_error)?;
    if human {
        let log = Git::new(&made.repo)
            .args(["log", "--oneline", "main"])
            .text()
            .map_err(|e| CliError::usage(e.to_string()))?;
        println!(
            "\nwhat landed on `main` in `{}`:\n{log}",
            made.repo.display()
        );
        println!(
            "\nsee `planwright status --repo {0}` and `planwright report --repo {0}`",
            made.repo.display()
        );
    }
    // A program needs to know where the demo ran as much as a person does.
    let mut place = serde_json::Map::new();
    place.insert("plan".into(), made.plan.display().to_string().into());
    place.insert("repo".into(), made.repo.display().to_string().into());
    finish_with(&summary, place, global)
}
