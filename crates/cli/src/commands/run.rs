//! `planwright run PLAN --repo DIR`: execute a plan on a git repository.

use super::{load_plan, Loaded, PlanArgs};
use crate::error::{exit, CliError, CliResult};
use crate::{progress, settings, Global, Output};
use planwright_config::resolve::{self, AgentFlags, RunFlags};
use planwright_config::{Config, RunSettings};
use planwright_engine::agent::{self, Agent, Agents};
use planwright_engine::issues::{LabelReporter, LabelWriter};
use planwright_engine::process::Cancel;
use planwright_engine::EngineError;
use planwright_engine::{deliver, Reporter};
use planwright_engine::{Check, CheckName, CheckStatus};
use planwright_engine::{Prepared, Resume, RunSummary};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

fn agent_help() -> String {
    format!(
        "The agent: {} (default: `[agents]`, one per model family, with `[agent] name` for the tickets none serves; else `[agent] name`, else `cmd` when `--agent-cmd` is given). It runs every ticket: `[agents]` is then not read.",
        agent::agent_names()
    )
}

/// Flags `run` and `preflight` share.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct EngineArgs {
    /// The repository to work in (default: the plan's `repo`, relative to the plan's folder, else the current directory).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// The agent (its names come from the engine's adapter table).
    #[arg(long, value_name = "NAME", help = agent_help())]
    pub agent: Option<String>,
    /// The `cmd` agent's command, split into words like a shell does; placeholders
    /// `{workspace}` (formerly `{worktree}`), `{prompt_file}`, `{ticket}`, `{attempt}`, `{model}`.
    #[arg(long, value_name = "COMMAND")]
    pub agent_cmd: Option<String>,
    /// A gate for every ticket, e.g. `--gate "cargo test"` (repeatable; added to `[gates] run`).
    #[arg(long, value_name = "COMMAND")]
    pub gate: Vec<String>,
    /// The agent's time limit per attempt: `90s`, `30m`, `2h` (default: `[agent] timeout_secs`, else 30m).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub agent_timeout: Option<Duration>,
    /// Each gate's time limit (default: `[run] gate_timeout_secs`, else 10m).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub gate_timeout: Option<Duration>,
    /// The branch tickets merge into (default: `[run] base`, else the plan's `base` where its format has one, else the repository's current branch).
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,
    /// Do not run the plan's and the configured gates once on the base commit before starting (preflight does by default, and reports the time it took).
    #[arg(long)]
    pub no_gate_probe: bool,
    /// Gates that fail on the base commit are a warning, not an error.
    #[arg(long)]
    pub allow_red_base: bool,
}

/// Execute a plan: one workspace per slot, the agent does the work,
/// planwright verifies scope, rails and gates and merges what passes.
///
/// Exit 0 when every ticket merged, 1 when one failed or was blocked (or
/// preflight failed), 2 on usage or I/O errors, 3 when the repository's
/// integrity could not be trusted. A second `run` of the same plan file on
/// the same base branch continues its run, even with the plan edited; another
/// plan file starts a run of its own (`--continue` continues the newest).
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Tickets worked on at once (default: `[run] jobs`, else the number of cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// Attempts per ticket (default: `[run] strikes`, else 2).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub strikes: Option<u32>,
    /// Run every preflight check, print the order tickets would start in, and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Run this merged ticket again (repeatable); its earlier merge no longer counts.
    #[arg(long, value_name = "ID")]
    pub rerun: Vec<String>,
    /// Run again every ticket merged from a definition the plan has changed since.
    #[arg(long)]
    pub rerun_changed: bool,
    /// Start a new run instead of continuing the one on this base branch: only its own merges count.
    #[arg(long, conflicts_with = "continue_run")]
    pub new_run: bool,
    /// Continue the newest run on this base branch even when it is of another plan file (by default a plan file continues only its own run).
    #[arg(long = "continue")]
    pub continue_run: bool,
    /// Let a ticket whose scope names the plan file or planwright.toml itself change it (otherwise that is a rail violation, whatever the scope says).
    #[arg(long)]
    pub allow_config_change: bool,
    /// When `run` prints plain lines (its output is not a terminal, or `--verbose`), how often to add a line per running ticket: `30s` (default), `5m`, `0` for never.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "30s")]
    pub heartbeat: Duration,
    /// When the run ends, deliver what it merged as `planwright deliver` does: push it and open or update its pull request(s) (`[forge]`; docs/forge.md).
    #[arg(long, conflicts_with = "dry_run")]
    pub deliver: bool,
}

/// Parses `90`, `90s`, `30m`, `2h`.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    planwright_config::parse_duration(text)
}

/// The target repository: `--repo`, else the plan's `repo` (relative to the
/// plan's folder), else the current directory.
pub(crate) fn repo_dir(
    engine: &EngineArgs,
    plan_args: &PlanArgs,
    plan: &planwright_plan::Plan,
) -> PathBuf {
    super::plan_repo_dir(
        engine.repo.as_deref(),
        &plan_args.plan,
        plan.repo.as_deref(),
    )
}

/// The agents the flags and configuration name: `--agent` (or
/// `--agent-cmd`) alone, else `[agents]` with `[agent]`, else `[agent]`.
pub(crate) fn agents(args: &EngineArgs, config: &Config) -> Result<Agents, CliError> {
    let flags = AgentFlags {
        name: args.agent.clone(),
        cmd: args.agent_cmd.clone(),
    };
    let spec = resolve::agents(flags, config).map_err(settings::settings_error)?;
    Agents::build(&spec).map_err(|e| CliError::usage(e.to_string()))
}

/// The agent named by `--agent` and `--agent-cmd`, else by `[agent]`.
pub(crate) fn agent_from(
    name: Option<&str>,
    cmd: Option<&str>,
    config: &Config,
) -> Result<Arc<dyn Agent>, CliError> {
    let flags = AgentFlags {
        name: name.map(str::to_string),
        cmd: cmd.map(str::to_string),
    };
    let spec = resolve::agent(flags, config).map_err(settings::settings_error)?;
    agent::from_options(&spec.name, &spec.options)
        .map(Arc::from)
        .map_err(|e| CliError::usage(e.to_string()))
}

/// Run settings: the flags over the configuration over the defaults.
pub(crate) fn settings(args: &Args, config: &Config) -> Result<RunSettings, CliError> {
    let e = &args.engine;
    let flags = RunFlags {
        plan: args.plan.plan.display().to_string(),
        jobs: args.jobs,
        strikes: args.strikes,
        agent_timeout: e.agent_timeout,
        gate_timeout: e.gate_timeout,
        gates: e.gate.clone(),
        allow_config_change: args.allow_config_change,
        base: e.base.clone(),
        no_gate_probe: e.no_gate_probe,
        allow_red_base: e.allow_red_base,
    };
    resolve::run(flags, config, &settings::env()).map_err(settings::settings_error)
}

/// Maps an engine error to the CLI's exit codes.
pub(crate) fn engine_error(e: EngineError) -> CliError {
    match e {
        EngineError::Integrity(_) => CliError::with_code(exit::INTEGRITY, e.to_string()),
        EngineError::Repo { message, hint } => {
            let err = CliError::usage(message);
            match hint {
                Some(h) => err.hint(h),
                None => err,
            }
        }
        EngineError::State(_) => CliError::usage(e.to_string()).hint(
            "another program may hold it; if it is damaged, move `.planwright/` aside to start afresh (its runs are then forgotten)",
        ),
        other => {
            let err = CliError::usage(other.to_string());
            match other.hint() {
                Some(h) => err.hint(h),
                None => err,
            }
        }
    }
}

/// Whether the terminal names a type that can be drawn on: without one
/// (`TERM` unset or `dumb`) the drawn progress shows nothing at all, so
/// plain lines are printed instead.
fn drawable() -> bool {
    std::env::var_os("TERM").is_some_and(|t| !t.is_empty() && t != "dumb")
}

/// The reporters for this output mode. Plain lines come with a heartbeat
/// every `heartbeat` (none when it is zero).
pub(crate) fn reporters(global: &Global, heartbeat: Duration) -> Vec<Box<dyn Reporter>> {
    reporters_with(global, heartbeat, true)
}

/// [`reporters`], whose plain lines leave out the merge queue's own steps
/// unless `queue` or `--verbose` (the demo's first look).
pub(crate) fn reporters_with(
    global: &Global,
    heartbeat: Duration,
    queue: bool,
) -> Vec<Box<dyn Reporter>> {
    let plain: Box<dyn Reporter> = match global.output {
        Output::Json | Output::Sarif | Output::JsonLines => return vec![],
        Output::Human if global.quiet => return vec![],
        Output::Human if global.verbose => {
            Box::new(progress::Plain::verbose(std::io::stdout()).colored(global.color()))
        }
        Output::Human if std::io::stderr().is_terminal() && drawable() => {
            let terminal = match queue {
                true => progress::Terminal::new(),
                false => progress::Terminal::brief(),
            };
            return vec![Box::new(terminal.colored(global.color_stderr()))];
        }
        Output::Human if !queue => {
            Box::new(progress::Plain::brief(std::io::stdout()).colored(global.color()))
        }
        Output::Human => Box::new(progress::Plain::new(std::io::stdout()).colored(global.color())),
    };
    if heartbeat.is_zero() {
        return vec![plain];
    }
    let beat = progress::Heartbeat::start(std::io::stdout(), heartbeat);
    vec![plain, Box::new(beat)]
}

/// Ctrl-C, SIGTERM and SIGHUP stop starting new work and end running
/// agents and gates; a second signal only says what is still stopping:
/// planwright never exits while an attempt's processes may outlive it. A
/// panic cancels the same way before it unwinds.
pub(crate) fn cancel_on_signals() -> Cancel {
    let cancel = Cancel::default();
    let flag = cancel.clone();
    let _ = ctrlc::set_handler(move || {
        if flag.is_cancelled() {
            eprintln!("still stopping: waiting for running agents and gates to end");
        } else {
            eprintln!("stopping: ending running agents and gates");
        }
        flag.cancel();
    });
    let flag = cancel.clone();
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        flag.cancel();
        default_hook(info);
    }));
    cancel
}

/// Prints the summary and picks the exit code, with `extra` keys in front
/// of the JSON summary.
pub(crate) fn finish_with(
    summary: &RunSummary,
    mut extra: serde_json::Map<String, serde_json::Value>,
    global: &Global,
) -> CliResult {
    if global.output == Output::Json {
        let failed: serde_json::Map<String, serde_json::Value> = summary
            .failed
            .iter()
            .map(|(id, f)| {
                (
                    id.clone(),
                    serde_json::json!({"kind": f.kind, "message": f.message}),
                )
            })
            .collect();
        extra.insert("run".into(), summary.run.clone().into());
        extra.insert("merged".into(), serde_json::json!(summary.merged));
        extra.insert("changed".into(), serde_json::json!(summary.changed));
        extra.insert("failed".into(), failed.into());
        extra.insert("blocked".into(), serde_json::json!(summary.blocked));
        extra.insert("held".into(), serde_json::json!(summary.held));
        extra.insert("flaky".into(), serde_json::json!(summary.flaky));
        crate::outln!(
            "{}",
            serde_json::to_string_pretty(&extra).expect("summaries serialize")
        );
    } else {
        // Each line's first word in its state's colour, as `status` paints.
        let color = global.color();
        let word = |w: &str| crate::render::paint(&format!("{w}:"), w, color);
        for (id, f) in &summary.failed {
            let f = planwright_plan::words::inert(&f.to_string()).into_owned();
            crate::outln!("{} {id}: {f}", word("failed"));
        }
        for id in &summary.blocked {
            crate::outln!("{} {id}", word("blocked"));
        }
        for id in &summary.changed {
            crate::outln!(
                "{} {id} was merged from an older definition; `--rerun {id}` runs it again",
                word("changed")
            );
        }
        for (gate, n) in &summary.flaky {
            let gate = planwright_plan::words::inert(gate).into_owned();
            let times = planwright_plan::words::count(*n as usize, "time");
            crate::outln!(
                "{} gate `{gate}` failed, then passed on the same tree, {times}",
                crate::render::paint("flaky:", "rejected", color)
            );
        }
    }
    if let Some(h) = &summary.held {
        eprintln!(
            "note: the merged tickets wait on branch `{}`: {}",
            h.branch,
            planwright_plan::words::inert(&h.reason)
        );
    }
    Ok(if summary.all_merged() {
        exit::OK
    } else {
        exit::INVALID
    })
}

/// Runs the command.
pub(crate) fn run(args: Args, global: &Global) -> CliResult {
    let Loaded {
        plan,
        report,
        config,
        source: config_source,
    } = load_plan(
        &args.plan,
        args.engine.repo.as_deref(),
        args.engine.base.as_deref(),
        global,
    )?;
    let repo_dir = repo_dir(&args.engine, &args.plan, &plan);
    let to_deliver = args.deliver.then(|| plan.clone());
    let to_label = config.respond.labels.any().then(|| plan.clone());
    let mut run_settings = settings(&args, &config)?;
    run_settings.overlaps = Some(report.overlaps);
    run_settings.config_source = config_source;
    let agents = agents(&args.engine, &config)?;
    let resume = Resume {
        new_run: args.new_run,
        continue_run: args.continue_run,
        rerun: args.rerun.clone(),
        rerun_changed: args.rerun_changed,
    };
    let session = planwright_engine::prepare(
        &repo_dir,
        plan,
        run_settings,
        resume,
        &config.commands.allow,
        &agents,
    )
    .map_err(|f| preflight_failed(&f.checks, global))?;
    warn_checks(session.checks(), global);
    if args.dry_run {
        return dry_run(&session, global);
    }
    // Caught before the executor is made: a transport cuts its calls
    // short on it from the start, before any attempt connects.
    let cancel = cancel_on_signals();
    let executor = session.executor(&cancel).map_err(engine_error)?;
    let mut reporters = reporters(global, args.heartbeat);
    let labels = match &to_label {
        Some(plan) => issue_labels(&repo_dir, plan, &config)?,
        None => None,
    };
    let writer = labels.map(|(reporter, writer)| {
        reporters.push(Box::new(reporter));
        writer
    });
    let summary = planwright_engine::run(session, executor, reporters, &cancel);
    // The run dropped its reporters: every label change is queued.
    for warning in writer.map(|w| w.finish()).unwrap_or_default() {
        eprintln!("warning: {warning}");
    }
    let summary = summary.map_err(engine_error)?;
    let delivered = to_deliver.map(|plan| deliver_after(&repo_dir, &summary, &plan, &config));
    let mut extra = serde_json::Map::new();
    if let (Some(Ok(d)), Output::Json) = (&delivered, global.output) {
        extra.insert("delivery".into(), super::deliver::json(d));
    }
    let code = finish_with(&summary, extra, global)?;
    next_step(&summary, &args, &repo_dir, global);
    match delivered {
        Some(Ok(d)) if global.output != Output::Json => super::deliver::print_human(&d),
        Some(Err(e)) if global.output == Output::Json => return Err(e.after_json()),
        Some(Err(e)) => return Err(e),
        _ => {}
    }
    Ok(code)
}

/// `[respond.labels]`: the reporter that writes the labels of the issues
/// `plan`'s tickets were imported from, and its writer; `None` when no
/// ticket was imported from an issue of the forge's repository. The forge
/// is `[forge]`'s, with its token (needed before the run starts).
fn issue_labels(
    repo_dir: &Path,
    plan: &planwright_plan::Plan,
    config: &Config,
) -> Result<Option<(LabelReporter, LabelWriter)>, CliError> {
    let imported = plan
        .tickets
        .iter()
        .any(|t| planwright_engine::issues::ticket_issue(t).is_some());
    if !imported {
        return Ok(None);
    }
    let repo = super::deliver::repo_of(repo_dir)?;
    let (settings, _) = super::deliver::forge_settings(&repo, config)?;
    let forge = deliver::connect_to(&settings).map_err(super::deliver::deliver_error)?;
    Ok(planwright_engine::issues::label_issues(
        &config.respond.labels,
        plan,
        &settings.repository,
        forge,
    ))
}

/// `run --deliver`: the run just ended is delivered as `deliver` would.
fn deliver_after(
    repo_dir: &Path,
    summary: &RunSummary,
    plan: &planwright_plan::Plan,
    config: &Config,
) -> Result<super::deliver::Delivered, CliError> {
    let repo = super::deliver::repo_of(repo_dir)?;
    let report = super::status::load(repo_dir, Some(&summary.run))?;
    let options = super::deliver::Options::default();
    super::deliver::deliver_run(&repo, &report, plan, config, options)
}

/// After a run that did not merge everything, what to do next: where it
/// stands, where the logs are, how to continue and how to run a merged
/// ticket again.
fn next_step(summary: &RunSummary, args: &Args, repo_dir: &Path, global: &Global) {
    let stopped = summary.interrupted || summary.budget.is_some() || summary.disk.is_some();
    if global.quiet || global.output == Output::Json || (summary.all_merged() && !stopped) {
        return;
    }
    let quote = |p: &Path| {
        let text = p.to_string_lossy();
        shlex::try_quote(&text).map_or_else(|_| text.to_string(), |q| q.into_owned())
    };
    let run = format!("planwright run {}", quote(&args.plan.plan));
    // The first failed ticket's log, else the folder of every ticket's.
    let run_dir = repo_dir.join(".planwright/runs").join(&summary.run);
    let logs = match summary.failed.keys().next() {
        Some(ticket) => format!(
            "{}   {ticket}'s whole log",
            run_dir.join(ticket).join("ticket.log").display()
        ),
        None => format!(
            "{}/   each ticket's whole log is its folder's `ticket.log`",
            run_dir.display()
        ),
    };
    crate::outln!("\nnext:");
    crate::outln!(
        "  planwright status --repo {}   where each ticket stands and why",
        quote(repo_dir)
    );
    crate::outln!("  {logs}");
    crate::outln!("  {run}   (with the same options) continues the run: failed and blocked tickets start again with fresh strikes");
    crate::outln!("  {run} --rerun ID   also runs the merged ticket ID again");
}

/// Preflight's warnings (overlapping scopes, say) on stderr, as `warning:`
/// lines: the first few, then how many more `planwright preflight` lists.
fn warn_checks(checks: &[Check], global: &Global) {
    const SHOWN: usize = 5;
    let warnings: Vec<&Check> = checks
        .iter()
        .filter(|c| c.status == CheckStatus::Warning)
        .collect();
    for c in warnings.iter().take(SHOWN) {
        global.warn(format!("{}: {}", c.check, c.message));
    }
    if warnings.len() > SHOWN {
        global.warn(format!(
            "{} more preflight warnings; `planwright preflight` lists every one",
            warnings.len() - SHOWN
        ));
    }
}

/// The error of a failed preflight, its checks printed (human) or folded
/// into the message (JSON output stays one document).
pub(crate) fn preflight_failed(checks: &[Check], global: &Global) -> CliError {
    let mut message = "preflight failed; nothing was started".to_string();
    if global.output == Output::Human {
        super::preflight::print(checks, global);
    } else {
        let errors: Vec<&str> = checks
            .iter()
            .filter(|c| c.status == CheckStatus::Error)
            .map(|c| c.message.as_str())
            .collect();
        message = format!("{message}: {}", errors.join("; "));
    }
    let code = super::preflight::failure_code(checks);
    CliError::with_code(code, message).hint(
        "fix what preflight reports, then run again; `planwright preflight` with the same flags checks without starting",
    )
}

/// Which run a dry run's `run` would continue, or why it would start one.
fn which_run(session: &Prepared) -> String {
    let base = &session.plan().base;
    let outlook = session.outlook();
    match (&outlook.run, &outlook.other) {
        (Some(id), _) => format!("continues run {id} on `{base}`"),
        (None, Some(other)) => format!(
            "starts a new run on `{base}`: run {} there is of another plan (`{}`); `--continue` continues it instead",
            other.id, other.plan_path
        ),
        (None, None) => format!("starts a new run on `{base}`"),
    }
}

fn dry_run(session: &Prepared, global: &Global) -> CliResult {
    let (plan, settings) = (session.plan(), session.settings());
    let order = session.start_order();
    let skipped = session.outlook().skipped().len();
    let routes: Vec<&str> = session
        .checks()
        .iter()
        .filter(|c| c.check == CheckName::Routing)
        .map(|c| c.message.as_str())
        .collect();
    if global.output == Output::Json {
        crate::outln!(
            "{}",
            // `jobs` and `skipped` are the former names of the two counts,
            // written for one release more.
            serde_json::json!({
                "dry_run": true,
                "job_count": settings.jobs,
                "start_order": order,
                "skipped_count": skipped,
                "continues": session.outlook().run,
                "other_run": session.outlook().other.as_ref().map(|r| &r.id),
                "routes": routes,
                "jobs": settings.jobs,
                "skipped": skipped,
            })
        );
        return Ok(exit::OK);
    }
    let count: usize = order.iter().map(Vec::len).sum();
    crate::outln!("{}", which_run(session));
    crate::outln!(
        "dry run: every preflight check passed and nothing is changed; {} to run, up to {} at once, if every ticket passes:",
        crate::render::count(count, "ticket"),
        settings.jobs
    );
    let by_id: std::collections::HashMap<&str, &planwright_plan::model::Ticket> =
        plan.tickets.iter().map(|t| (t.id.as_str(), t)).collect();
    for (i, batch) in order.iter().enumerate() {
        for id in batch {
            let t = by_id[id.as_str()];
            let gates: Vec<String> =
                planwright_engine::verify::ticket_gates(plan, t, &settings.extra_gates)
                    .iter()
                    .map(|g| format!("`{}`", g.command_line()))
                    .collect();
            let after = if t.depends_on.is_empty() {
                String::new()
            } else {
                format!(" after {}", t.depends_on.join(", "))
            };
            crate::outln!(
                "  batch {}: {id}{after}; gates {}",
                i + 1,
                if gates.is_empty() {
                    "none".into()
                } else {
                    gates.join(", ")
                }
            );
        }
    }
    crate::outln!("routes (ticket -> adapter -> model):");
    for route in routes {
        crate::outln!("  {route}");
    }
    Ok(exit::OK)
}
