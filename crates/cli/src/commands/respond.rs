//! `planwright respond --repo DIR [--watch]`: review comments and failed
//! checks on a delivered pull request become a new attempt of the ticket
//! they concern, pushed to the same branch, with one reply. The rounds are
//! the engine's (`planwright_engine::respond`); this reads the run, its
//! plan, `[forge]` and `[respond]`, runs a round's ticket as `run --rerun`
//! would, and prints.

use super::observe::RunArgs;
use super::run::{cancel_on_signals, engine_error, parse_duration, reporters};
use crate::error::{exit, CliError, CliResult};
use crate::{settings, Global, Output};
use planwright_config::resolve::{self, RunFlags};
use planwright_config::{Config, RespondSettings, RunSettings};
use planwright_engine::deliver::{self, Delivery};
use planwright_engine::process::Cancel;
use planwright_engine::respond::{self, Context, Outcome, PullOutcome, RespondError};
use planwright_engine::{EngineError, Repo, Resume, RunSummary, Store};
use planwright_plan::Plan;
use std::path::PathBuf;
use std::time::Duration;

/// Answer review comments, review bodies and failed checks on the pull
/// request(s) `planwright deliver` opened for a run: each round is a new
/// attempt of the ticket the feedback concerns, through the same sandbox,
/// gates, review and merge queue as `run`, pushed to the same branch, with
/// one reply on the pull request (docs/forge.md, "Responding to reviews").
/// With `[forge] per = "ticket"`, each ticket's pull request is answered on
/// its own: a round of that ticket, only its change pushed to its branch.
///
/// One round per pull request each time it runs, and never twice for the
/// same comment; `--watch` repeats until every pull request of the run is
/// merged or closed. Exit 0 when each pull request got its round (whatever
/// the round changed, or a reply saying why none ran), had nothing new, is
/// merged or closed, or is not opened yet (`deliver` opens it); 2 on
/// usage, forge or push errors; 130 on Ctrl-C.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    pub run: RunArgs,
    /// Repeat a round every `--interval` until every pull request of the
    /// run is merged or closed (or Ctrl-C).
    #[arg(long)]
    pub watch: bool,
    /// How long `--watch` waits between rounds: `60s` (default), `5m`.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "60s")]
    pub interval: Duration,
    /// The agent of a round's attempt (as `run --agent`; default:
    /// `[agents]` and `[agent]` as for `run`).
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// The `cmd` agent's command (as `run --agent-cmd`).
    #[arg(long, value_name = "COMMAND")]
    pub agent_cmd: Option<String>,
    /// Do not run the gates once on the base before a round's attempt.
    #[arg(long)]
    pub no_gate_probe: bool,
}

/// Runs the command.
pub(crate) fn run(args: Args, global: &Global) -> CliResult {
    let cancel = cancel_on_signals();
    loop {
        let open = round(&args, global, &cancel)?;
        if !args.watch || open == 0 {
            return Ok(exit::OK);
        }
        if !global.quiet && global.output == Output::Human {
            crate::outln!(
                "waiting {}s for the next round (Ctrl-C stops)",
                args.interval.as_secs()
            );
        }
        if !wait(args.interval, &cancel) {
            return Err(interrupted());
        }
    }
}

fn interrupted() -> CliError {
    CliError::with_code(exit::INTERRUPTED, "stopped by Ctrl-C between rounds")
        .hint("what was answered is kept; `planwright respond` goes on from there")
}

/// Waits `interval`, or until Ctrl-C (then `false`).
fn wait(interval: Duration, cancel: &Cancel) -> bool {
    let end = std::time::Instant::now() + interval;
    while std::time::Instant::now() < end {
        if cancel.is_cancelled() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    !cancel.is_cancelled()
}

/// One round on every pull request of the run; how many are still open.
fn round(args: &Args, global: &Global, cancel: &Cancel) -> Result<usize, CliError> {
    let repo = super::observe::open_repo(&args.run.repo)?;
    if let Some(busy) = planwright_engine::run_lock_holder(&repo).map_err(engine_error)? {
        return Err(engine_error(busy)
            .hint("wait for that run (or round) to end, then run `planwright respond` again"));
    }
    let report = super::status::load(&args.run.repo, args.run.id.as_deref())?;
    let loaded = super::deliver::run_plan(&report, &repo, global)?;
    let (plan, config) = (loaded.plan, loaded.config);
    let (forge_settings, url) = super::deliver::forge_settings(&repo, &config)?;
    let rows = super::status::plan_rows(&report);
    // No run holds the lock (checked above): a run the store still says is
    // going on died (a round's run killed, say), and its round resumes.
    let mut run_row = report.run.clone();
    if run_row.status == planwright_engine::RunStatus::Running {
        run_row.status = planwright_engine::RunStatus::Interrupted;
    }
    let delivery = deliver::prepare(&repo, &run_row, &rows, &plan, forge_settings, url, false)
        .map_err(super::deliver::deliver_error)?;
    let forge = deliver::connect(&delivery).map_err(super::deliver::deliver_error)?;
    let login = forge
        .login()
        .map_err(|e| respond_error(RespondError::from(e)))?;
    let store =
        Store::open(&repo.state_dir().join("state.db")).map_err(|e| engine_error(e.into()))?;
    let respond_settings = RespondSettings::of(&config.respond);
    let mut runner = Runner::new(args, global, &repo, &report.run, &plan, &config, cancel)?;
    let prices = runner.settings.prices.clone();
    let mut open = 0;
    for pull in &delivery.pulls {
        // A round before this one moved the run's branch through a `Repo`
        // of its own: this pull request's round reads the repository anew.
        let repo = super::observe::open_repo(&args.run.repo)?;
        let cx = Context {
            repo: &repo,
            store: &store,
            run: &delivery.run,
            plan: &plan,
            tickets: pull.tickets.clone(),
            other_pulls: others(&delivery, &pull.head),
            settings: &respond_settings,
            forge_settings: &delivery.settings,
            remote_url: &delivery.remote_url,
            forge: forge.as_ref(),
            login: login.clone(),
            now: planwright_engine::clock::unix_now(),
            prices: &prices,
        };
        let outcome = respond::respond_pull(&cx, &pull.head, &mut |id, ceiling| {
            runner.run_ticket(id, ceiling)
        })
        .map_err(respond_error)?;
        if !matches!(outcome, PullOutcome::Ended(_)) {
            open += 1;
        }
        print(&delivery, &pull.head, &outcome, global);
    }
    Ok(open)
}

/// The tickets the run's other pull requests deliver (`per = "ticket"`),
/// each with its pull request's head.
fn others(delivery: &Delivery, head: &str) -> Vec<(String, String)> {
    (delivery.pulls.iter())
        .filter(|p| p.head != head)
        .flat_map(|p| p.tickets.iter().map(|t| (t.clone(), p.head.clone())))
        .collect()
}

/// Runs a round's ticket as `run PLAN --rerun ID` would, continuing the
/// run, with the round's dollar ceiling.
struct Runner<'a> {
    global: &'a Global,
    repo_dir: PathBuf,
    plan: &'a Plan,
    config: &'a Config,
    settings: RunSettings,
    agents: planwright_engine::agent::Agents,
    cancel: &'a Cancel,
}

impl<'a> Runner<'a> {
    fn new(
        args: &Args,
        global: &'a Global,
        repo: &Repo,
        run: &planwright_engine::RunRow,
        plan: &'a Plan,
        config: &'a Config,
        cancel: &'a Cancel,
    ) -> Result<Runner<'a>, CliError> {
        let flags = RunFlags {
            plan: run.plan_path.clone(),
            jobs: None,
            strikes: None,
            agent_timeout: None,
            gate_timeout: None,
            gates: Vec::new(),
            allow_config_change: false,
            base: Some(run.base.clone()),
            no_gate_probe: args.no_gate_probe,
            allow_red_base: false,
        };
        let settings =
            resolve::run(flags, config, &settings::env()).map_err(settings::settings_error)?;
        let engine = super::run::EngineArgs {
            repo: None,
            agent: args.agent.clone(),
            agent_cmd: args.agent_cmd.clone(),
            gate: Vec::new(),
            agent_timeout: None,
            gate_timeout: None,
            base: None,
            no_gate_probe: args.no_gate_probe,
            allow_red_base: false,
        };
        Ok(Runner {
            global,
            repo_dir: repo.root().to_path_buf(),
            plan,
            config,
            settings,
            agents: super::run::agents(&engine, config)?,
            cancel,
        })
    }

    fn run_ticket(&mut self, id: &str, ceiling: Option<f64>) -> Result<RunSummary, EngineError> {
        let mut settings = self.settings.clone();
        if let Some(c) = ceiling {
            let run_cap = settings.budget.max_cost_usd;
            settings.budget.max_cost_usd = Some(run_cap.map_or(c, |m| m.min(c)));
        }
        let resume = Resume {
            new_run: false,
            continue_run: false,
            rerun: vec![id.to_string()],
            rerun_changed: false,
        };
        let session = planwright_engine::prepare(
            &self.repo_dir,
            self.plan.clone(),
            settings,
            resume,
            &self.config.commands.allow,
            &self.agents,
        )
        .map_err(|f| {
            let errors: Vec<&str> = (f.checks.iter())
                .filter(|c| c.status == planwright_engine::CheckStatus::Error)
                .map(|c| c.message.as_str())
                .collect();
            EngineError::Repo {
                message: format!(
                    "the round's run of ticket `{id}` failed its preflight: {}",
                    errors.join("; ")
                ),
                hint: Some("`planwright preflight` with the run's plan says more; fix it, then run `planwright respond` again".into()),
            }
        })?;
        let executor = session.executor(self.cancel)?;
        planwright_engine::run(
            session,
            executor,
            reporters(self.global, Duration::ZERO),
            self.cancel,
        )
    }
}

fn respond_error(e: RespondError) -> CliError {
    let code = match e {
        RespondError::Interrupted(_) => exit::INTERRUPTED,
        _ => exit::USAGE,
    };
    let hint = e.hint();
    let error = match e {
        RespondError::Deliver(d) => return super::deliver::deliver_error(d),
        RespondError::Engine(e) => return engine_error(e),
        other => CliError::with_code(code, other.to_string()),
    };
    match hint {
        Some(h) => error.hint(h),
        None => error,
    }
}

fn print(delivery: &Delivery, head: &str, outcome: &PullOutcome, global: &Global) {
    let noun = deliver::api_kind(delivery.settings.kind).pull_request_noun();
    if global.output == Output::Json {
        crate::outln!("{}", json(head, outcome));
        return;
    }
    if global.quiet {
        return;
    }
    let line = match outcome {
        PullOutcome::Ended(state) => format!("the {noun} of `{head}` is {}: nothing more to answer", state.name()),
        PullOutcome::Nothing => format!("nothing new on the {noun} of `{head}`"),
        PullOutcome::Quiet { until } => format!(
            "new feedback on the {noun} of `{head}`, within the quiet window: its round starts after {}",
            planwright_engine::clock::format_unix(*until)
        ),
        PullOutcome::Replied { round, outcome } => match outcome {
            Outcome::Changed { ticket, commit, files, .. } => format!(
                "round {round} on `{head}`: {ticket} ran again; pushed {} ({}); replied",
                &commit[..commit.len().min(10)],
                planwright_plan::words::count(files.len(), "file")
            ),
            Outcome::Unchanged { ticket, why } => format!(
                "round {round} on `{head}`: nothing changed{}: {}; replied",
                ticket.as_deref().map_or(String::new(), |t| format!(" ({t})")),
                planwright_plan::words::inert(why)
            ),
        },
        PullOutcome::Refused { why } => format!(
            "no round on `{head}`: {}",
            planwright_plan::words::inert(why)
        ),
    };
    crate::outln!("{line}");
}

/// One line of JSON per pull request: `{"head", "outcome", ...}`.
fn json(head: &str, outcome: &PullOutcome) -> serde_json::Value {
    use serde_json::json;
    match outcome {
        PullOutcome::Ended(state) => {
            json!({"head": head, "outcome": "ended", "state": state.name()})
        }
        PullOutcome::Nothing => json!({"head": head, "outcome": "nothing"}),
        PullOutcome::Quiet { until } => json!({"head": head, "outcome": "quiet",
            "until": planwright_engine::clock::format_unix(*until)}),
        PullOutcome::Replied {
            round,
            outcome:
                Outcome::Changed {
                    ticket,
                    commit,
                    commits,
                    files,
                    ..
                },
        } => json!({
            "head": head, "outcome": "changed", "round": round, "ticket": ticket,
            "commit": commit, "commits": commits, "files": files}),
        PullOutcome::Replied {
            round,
            outcome: Outcome::Unchanged { ticket, why },
        } => json!({
            "head": head, "outcome": "unchanged", "round": round, "ticket": ticket, "why": why}),
        PullOutcome::Refused { why } => json!({"head": head, "outcome": "refused", "why": why}),
    }
}
