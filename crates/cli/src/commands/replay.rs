//! `planwright replay --repo DIR --commits RANGE`: a stretch of real
//! history run as a plan, in a scratch clone, with the figures of the run.

use super::run::{cancel_on_signals, engine_error, parse_duration, preflight_failed, reporters};
use crate::error::{exit, CliError, CliResult};
use crate::{settings, Global, Output};
use planwright_config::resolve::{self, AgentFlags, RunFlags};
use planwright_engine::agent::{self, Agents};
use planwright_engine::replay::figures::{self, Figures};
use planwright_engine::replay::{self, AgentTime, Deps, PreparedReplay, ReplayOptions};
use planwright_engine::{Repo, Resume, RunSummary};
use planwright_plan::words::count;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Replay a stretch of a repository's history as a plan: each first-parent
/// commit of the range (merges skipped) is a ticket whose scope is the
/// files it touched and whose body is its message, done by a built-in
/// agent that applies the commit's change with a three-way merge. It runs
/// through the same engine as `run` (sandbox, gates, merge queue) in a
/// scratch clone, so the repository is only read, and prints what the run
/// measured: makespan against the serial sum and the DAG bound, merges per
/// hour, conflicts, gate runs, tokens and dollars per merged ticket, and
/// whether the final tree equals the range's last commit.
///
/// Exit 0 when the replay ran to its end (tickets that failed are part of
/// what it measures), 1 when it stopped early or preflight failed, 2 on
/// bad input.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The repository whose history is replayed (only read; default: the current directory).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
    /// The commits, as git names a range: `BASE..TIP` (`HEAD~50..HEAD`, `v1.2.0..main`).
    #[arg(long, value_name = "RANGE")]
    pub commits: String,
    /// How tickets wait for each other: `none` (all side by side from the range's base), `files` (a commit waits for the last earlier one that touched one of its files) or `chain` (one after another: the baseline).
    #[arg(long, value_name = "MODE", default_value = "files")]
    pub deps: Deps,
    /// How long the agent works on a commit: a duration, a duration per changed line, or both (`2s`, `0.5s/line`, `30s+0.5s/line`).
    #[arg(long, value_name = "TIME", default_value = "30s+0.5s/line")]
    pub agent_time: AgentTime,
    /// Tokens the agent reports per changed line (output tokens, priced as `--model` with `[prices]`).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub tokens_per_line: u64,
    /// The model the tokens are priced as.
    #[arg(long, value_name = "MODEL", default_value = "claude-sonnet-4-6")]
    pub model: String,
    /// A gate for every ticket, e.g. `--gate "npm test"` (repeatable; default: `[gates] run`).
    #[arg(long, value_name = "COMMAND")]
    pub gate: Vec<String>,
    /// Each gate's time limit (default: `[run] gate_timeout_secs`, else 10m).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub gate_timeout: Option<Duration>,
    /// Tickets worked on at once (default: `[run] jobs`, else the number of cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// Attempts per ticket (default: `[run] strikes`, else 2).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub strikes: Option<u32>,
    /// Make the scratch clone, plan and agent folder in this new folder and keep them (default: a temporary folder, removed at the end unless `--keep`).
    #[arg(long, value_name = "DIR")]
    pub into: Option<PathBuf>,
    /// Keep the temporary folder, to look at with `status`, `report` and git.
    #[arg(long)]
    pub keep: bool,
}

/// Runs the command.
pub(crate) fn run(args: Args, global: &Global) -> CliResult {
    let gates = gate_argvs(&args.gate)?;
    let (dir, temp) = match &args.into {
        Some(d) => (made_dir(d)?, None),
        None => {
            let t = tempfile::Builder::new()
                .prefix("planwright-replay-")
                .tempdir()
                .map_err(|e| CliError::usage(format!("cannot create a temporary folder: {e}")))?;
            (t.path().to_path_buf(), Some(t))
        }
    };
    let result = replay_in(&args, gates, &dir, global);
    if let Some(t) = temp.filter(|_| args.keep) {
        let _ = t.keep();
    }
    result
}

/// `--into DIR`: made when missing; it must hold nothing yet.
fn made_dir(dir: &Path) -> Result<PathBuf, CliError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::usage(format!("cannot create `{}`: {e}", dir.display())))?;
    let empty = std::fs::read_dir(dir)
        .map(|mut d| d.next().is_none())
        .unwrap_or(false);
    if !empty {
        return Err(
            CliError::usage(format!("`--into {}` is not empty", dir.display()))
                .hint("name a new folder: replay makes its scratch clone there"),
        );
    }
    std::path::absolute(dir).map_err(|e| CliError::usage(format!("`{}`: {e}", dir.display())))
}

fn gate_argvs(gates: &[String]) -> Result<Vec<Vec<String>>, CliError> {
    gates
        .iter()
        .map(|g| {
            shlex::split(g).filter(|w| !w.is_empty()).ok_or_else(|| {
                CliError::usage(format!("cannot split the gate `{g}` into words"))
                    .hint("give a program and its arguments, e.g. `--gate \"npm test\"`")
            })
        })
        .collect()
}

fn replay_in(args: &Args, gates: Vec<Vec<String>>, dir: &Path, global: &Global) -> CliResult {
    let opts = ReplayOptions {
        range: args.commits.clone(),
        deps: args.deps,
        agent_time: args.agent_time,
        tokens_per_line: args.tokens_per_line,
        model: args.model.clone(),
        gates,
    };
    let made = replay::prepare(&args.repo, dir, &opts).map_err(engine_error)?;
    let human = global.output == Output::Human && !global.quiet;
    if human {
        crate::outln!(
            "replay: {} of `{}` ({} and {} skipped), --deps {}, in `{}`",
            count(made.commits.len(), "commit"),
            args.commits,
            count(made.merges_skipped, "merge"),
            count(made.empty_skipped, "empty commit"),
            args.deps.as_str(),
            made.repo.display()
        );
    }
    let (summary, jobs) = run_plan(args, &made, global)?;
    let scratch = Repo::open(&made.repo).map_err(engine_error)?;
    let target = summary
        .held
        .as_ref()
        .map_or(replay::BRANCH, |h| h.branch.as_str());
    let tip =
        (scratch.branch_tip(target).map_err(engine_error)?).unwrap_or_else(|| made.base.clone());
    let run_dir = scratch.state_dir().join("runs").join(&summary.run);
    let figures = figures::figures(&made, &run_dir, &tip, jobs, args.deps).map_err(engine_error)?;
    figures::write(&run_dir, &figures).map_err(engine_error)?;
    print(&figures, &made, &summary, args, global);
    let stopped = summary.interrupted || summary.budget.is_some() || summary.disk.is_some();
    Ok(if stopped { exit::INVALID } else { exit::OK })
}

/// The replay's plan run through the engine, as `run` runs one.
fn run_plan(
    args: &Args,
    made: &PreparedReplay,
    global: &Global,
) -> Result<(RunSummary, usize), CliError> {
    let text = super::read_file(&made.plan)?;
    let shown = made.plan.display().to_string();
    let report = planwright_plan::validate_text(&shown, text, &planwright_plan::Options::default());
    let plan = report.plan.ok_or_else(|| {
        CliError::usage(format!("the replay's plan `{shown}` is invalid (a bug)"))
    })?;
    let (config, source) =
        settings::load_run_config(global, &made.plan, &made.repo, Some(replay::BRANCH))?;
    let flags = RunFlags {
        plan: shown,
        jobs: args.jobs,
        strikes: args.strikes,
        agent_timeout: None,
        gate_timeout: args.gate_timeout,
        gates: Vec::new(),
        allow_config_change: false,
        base: Some(replay::BRANCH.to_string()),
        no_gate_probe: false,
        allow_red_base: false,
    };
    let mut run_settings =
        resolve::run(flags, &config, &settings::env()).map_err(settings::settings_error)?;
    run_settings.overlaps = Some(report.overlaps);
    run_settings.config_source = source;
    let jobs = run_settings.jobs;
    let name = format!("replay:{}", made.agent_dir.display());
    let spec = resolve::agent(
        AgentFlags {
            name: Some(name.clone()),
            cmd: None,
        },
        &config,
    )
    .map_err(settings::settings_error)?;
    // The replay prices its tokens as `--model`, whatever `[agent] model` says.
    let options = agent::AgentOptions {
        model: None,
        ..spec.options
    };
    let agent = agent::from_options(&name, &options).map_err(engine_error)?;
    let session = planwright_engine::prepare(
        &made.repo,
        plan,
        run_settings,
        Resume::default(),
        &config.commands.allow,
        &Agents::from(Arc::<dyn agent::Agent>::from(agent)),
    )
    .map_err(|f| preflight_failed(&f.checks, global))?;
    let cancel = cancel_on_signals();
    let executor = session.executor(&cancel).map_err(engine_error)?;
    let summary = planwright_engine::run(
        session,
        executor,
        reporters(global, Duration::from_secs(30)),
        &cancel,
    )
    .map_err(engine_error)?;
    Ok((summary, jobs))
}

fn print(f: &Figures, made: &PreparedReplay, summary: &RunSummary, args: &Args, global: &Global) {
    if global.output == Output::Json {
        let mut replay = serde_json::to_value(f).expect("figures serialize");
        let extra = serde_json::json!({
            "range": args.commits,
            "base": made.base,
            "repo": made.repo.display().to_string(),
            "kept": args.keep || args.into.is_some(),
            "merges_skipped": made.merges_skipped,
            "empty_skipped": made.empty_skipped,
            "commits": made.commits,
        });
        if let (Some(r), Some(e)) = (replay.as_object_mut(), extra.as_object()) {
            r.extend(e.clone());
        }
        let failed: serde_json::Map<String, serde_json::Value> = (summary.failed.iter())
            .map(|(id, x)| {
                (
                    id.clone(),
                    serde_json::json!({"kind": x.kind, "message": x.message}),
                )
            })
            .collect();
        let out = serde_json::json!({
            "run": summary.run,
            "merged": summary.merged,
            "failed": failed,
            "blocked": summary.blocked,
            "replay": replay,
        });
        crate::outln!("{}", serde_json::to_string_pretty(&out).expect("json"));
        return;
    }
    if global.quiet {
        return;
    }
    crate::outln!();
    for (i, line) in figures::lines(f).iter().enumerate() {
        let indent = if i == 0 { "" } else { "  " };
        crate::outln!("{indent}{line}");
    }
    if args.keep || args.into.is_some() {
        crate::outln!(
            "\nsee `planwright report --repo {}`; the figures are in its run's `{}`",
            made.repo.display(),
            figures::FIGURES_FILE
        );
    }
}
