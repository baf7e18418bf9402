//! What every CLI adapter shares: running the CLI, feeding its stdout line by
//! line to the adapter's parser as it streams, deciding the outcome, pricing
//! the tokens, preflight, and the per-slot state home.
//!
//! An adapter (one file per CLI) only says how to call its CLI ([`Cli`]) and
//! how to read what it prints ([`StreamParser`]); everything here is written
//! once. The pieces that decide something ([`decide`], [`cost`]) are pure.

use super::limits::{self, Now};
use super::{
    add_attempt_env, agent_env, allowed_names, blocked_reason, record_env, Agent, AgentOptions,
    AgentOutcome, AgentReport, AttemptContext, CostSource, Usage, UsageSink, UsageSoFar,
    BUDGET_ENV,
};
use crate::error::EngineError;
use planwright_config::Prices;
use planwright_os::beneath::Dir;
use planwright_os::process::{self, Cancel, Exit, Finished, LineSink, ProcessError, Spec};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

pub(crate) use super::state::{prepare_state, user_dir, Placing, Seed, StateLayout, Tune};

/// What a parser made of a CLI's output.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Parsed {
    /// The agent's last message.
    pub final_message: Option<String>,
    /// The CLI's session (thread, conversation) id.
    pub session_id: Option<String>,
    /// The model the CLI says it used.
    pub model: Option<String>,
    /// Tokens, normalized (see [`Usage`]).
    pub usage: Option<Usage>,
    /// The same tokens per model, when the CLI splits them (so that each
    /// model is priced at its own rate).
    pub per_model: Vec<(String, Usage)>,
    /// Cost in US dollars, when the CLI reports one.
    pub cost_usd: Option<f64>,
    /// The CLI reported that the attempt failed, with its message.
    pub failure: Option<String>,
    /// The CLI reported a rate limit or an exhausted quota.
    pub limit: Option<Limit>,
    /// The CLI was waiting to retry a call its provider refused when its
    /// output ended: a timeout then is the provider's, not the ticket's.
    pub retrying: Option<Limit>,
    /// The CLI's final record was seen (false: the output was cut short).
    pub complete: bool,
    /// The failure is the provider refusing the key (401, 403): the run
    /// stops rather than spend a strike of every ticket on it.
    pub key_refused: bool,
    /// The CLI's own record of its failure, as it printed it: the
    /// failure's evidence, in place of the output's tail.
    pub evidence: Option<String>,
}

impl Parsed {
    /// The running total for [`StreamParser::so_far`], for parsers that
    /// keep their tokens in a [`Parsed`] as they read.
    pub(crate) fn so_far(&self) -> Option<UsageSoFar> {
        Some(UsageSoFar {
            model: self.model.clone(),
            usage: self.usage?,
        })
    }
}

/// A rate limit or exhausted quota, as the CLI reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Limit {
    /// What the CLI said.
    pub reason: String,
    /// When it lifts, when the CLI said.
    pub retry_after: Option<Duration>,
}

impl Limit {
    /// The limit a CLI's error `message` reports, lifting when the message
    /// says it does.
    pub(crate) fn from_message(message: String, now: Now) -> Limit {
        Limit {
            retry_after: limits::retry_after(&message, now),
            reason: message,
        }
    }
}

/// An incremental parser of one CLI's stdout. It must never panic: text
/// that is not what it expects is skipped (the raw output is in the log).
pub(crate) trait StreamParser: Send {
    /// One line of stdout, as it arrives.
    fn line(&mut self, line: &str);
    /// The tokens reported so far, after the lines read; `None` until the
    /// CLI has reported any, and always for CLIs that report them only at
    /// the end (their total arrives with the attempt's report).
    fn so_far(&self) -> Option<UsageSoFar> {
        None
    }
    /// The file the CLI keeps of its calls ([`Cli::record`]), once it has
    /// exited: its content, or `None` when there is none (missing, not a
    /// regular file, or over [`MAX_RECORD`] bytes). Returns a line for the
    /// attempt's log saying what was taken from it.
    fn record(&mut self, _content: Option<&[u8]>) -> Option<String> {
        None
    }
    /// The end: `output_tail` is the end of stdout and stderr together (some
    /// CLIs put their error object on stderr).
    fn finish(&mut self, output_tail: &str, now: Now) -> Parsed;
    /// Whether the CLI, by the lines read, is retrying its provider's
    /// refusal past planwright's bound on its own retries (a CLI with no
    /// setting for them): planwright then stops it, and the attempt is
    /// `Unavailable` with [`Parsed::retrying`].
    fn gives_up(&self) -> bool {
        false
    }
}

/// The largest record file read (aider writes a few hundred bytes a call).
pub(crate) const MAX_RECORD: u64 = 16 << 20;

/// What an attempt asks of the CLI beyond the context.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Invocation<'a> {
    /// The model for this attempt.
    pub model: Option<&'a str>,
    /// What is left of the budget, for CLIs that can stop themselves.
    pub max_budget_usd: Option<f64>,
}

impl Invocation<'_> {
    /// `FLAG MODEL` when the attempt names a model, else nothing: how
    /// most CLIs are given one.
    pub(crate) fn model_args(&self, flag: &str) -> Vec<String> {
        self.model
            .map(|model| vec![flag.to_string(), model.to_string()])
            .unwrap_or_default()
    }
}

/// One coding-agent CLI, as an adapter describes it. The facts that do not
/// depend on an attempt are constants, so an adapter states each in one line.
pub(crate) trait Cli: Send + Sync + 'static {
    /// The adapter's name (`--agent NAME`).
    const NAME: &'static str;
    /// The executable's usual name on `PATH`.
    const PROGRAM: &'static str = Self::NAME;
    /// How to install it, for the preflight message.
    const INSTALL: &'static str;
    /// The model family (the routing table's) it runs, when it runs only
    /// one; `None` for a CLI that runs any provider's models.
    const FAMILY: Option<&'static str> = None;
    /// Whether the prompt goes to standard input (else it gets `/dev/null`).
    const PROMPT_ON_STDIN: bool = true;
    /// Paths the CLI writes into the workspace for its own use (caches);
    /// removed after the attempt when they were not there before.
    const STRAYS: &'static [&'static str] = &[];
    /// The variables of planwright's environment the CLI needs besides
    /// [`super::BASE_ENV`]: its keys and settings (`ANTHROPIC_*` keeps a
    /// prefix). Nothing else reaches it unless `[agent] env` names it.
    const ENV: &'static [&'static str];
    /// The hosts (`host:port`) its proxy lets it reach by default: the
    /// CLI's model API and sign-in (see docs/security.md, with the date of
    /// the list). `[sandbox] allow` adds more.
    const HOSTS: &'static [&'static str];
    /// The arguments after the program.
    fn args(&self, ctx: &AttemptContext, run: Invocation<'_>) -> Vec<String>;
    /// Variables the CLI needs besides the agent environment.
    fn env(&self) -> Vec<(String, String)> {
        Vec::new()
    }
    /// A fresh parser for one attempt.
    fn parser(&self) -> Box<dyn StreamParser>;
    /// Where its state lives, given the user's environment; `None` when it
    /// cannot be redirected.
    fn state(&self, _var: &dyn Fn(&str) -> Option<String>) -> Option<StateLayout> {
        None
    }
    /// The user's files and folders the CLI reads where they are, besides
    /// those its [`StateLayout`] names (a CLI whose state is not
    /// isolated), given the user's environment.
    fn reads(&self, _var: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
        Vec::new()
    }
    /// The arguments of preflight's probe ([`Agent::probe`]): a command
    /// that starts the CLI without a model call; `confined` when
    /// planwright's sandbox confines its writes.
    fn probe_args(&self, _confined: bool) -> Vec<String> {
        vec!["--version".to_string()]
    }
    /// The endpoints the CLI's own files point it at, `(where, url)`, for
    /// preflight ([`super::setup`]); the environment's are read for every
    /// adapter.
    fn gateways(&self, _var: &dyn Fn(&str) -> Option<String>) -> Vec<(String, String)> {
        Vec::new()
    }
    /// The key variables the CLI's files name, `(where, name)`, for
    /// preflight: each must reach the agent.
    fn key_vars(&self, _var: &dyn Fn(&str) -> Option<String>) -> Vec<(String, String)> {
        Vec::new()
    }
    /// The model the CLI will use when the attempt names none, from its
    /// configuration as the attempt starts (for the report and the cost).
    fn configured_model(&self, _ctx: &AttemptContext) -> Option<String> {
        None
    }
    /// The file in which the CLI records its calls more exactly than it
    /// prints them (aider's analytics log), in a folder planwright made
    /// for the attempt: read after it exits ([`StreamParser::record`]).
    fn record(&self, _ctx: &AttemptContext) -> Option<PathBuf> {
        None
    }
}

/// An [`Agent`] driving a [`Cli`].
pub(crate) struct CliAgent<C: Cli> {
    cli: C,
    opts: AgentOptions,
}

impl<C: Cli> CliAgent<C> {
    /// The adapter `cli` with the user's `[agent]` options.
    pub(crate) fn new(cli: C, opts: AgentOptions) -> CliAgent<C> {
        CliAgent { cli, opts }
    }

    fn program_name(&self) -> String {
        self.opts
            .program
            .clone()
            .unwrap_or_else(|| C::PROGRAM.to_string())
    }

    fn not_installed(&self) -> String {
        format!(
            "the `{}` CLI (`{}`) is not installed or not on PATH; install it with `{}`, or set `[agent] program` to its path",
            C::NAME,
            self.program_name(),
            C::INSTALL
        )
    }

    /// The whole argv of one attempt.
    pub(crate) fn argv(&self, ctx: &AttemptContext) -> Vec<String> {
        let budget = ctx
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == BUDGET_ENV)
            .and_then(|(_, v)| v.parse::<f64>().ok())
            .filter(|b| b.is_finite() && *b >= 0.0);
        let run = Invocation {
            model: self.opts.model.as_deref().or(ctx.model.as_deref()),
            max_budget_usd: budget,
        };
        let mut argv = vec![self.program_name()];
        argv.extend(self.cli.args(ctx, run));
        argv.extend(self.opts.args.iter().cloned());
        argv
    }
}

fn lock(parser: &Mutex<Box<dyn StreamParser>>) -> MutexGuard<'_, Box<dyn StreamParser>> {
    // A poisoned lock means a parser panicked on a line; what it gathered
    // before is still the best there is.
    parser.lock().unwrap_or_else(|e| e.into_inner())
}

impl<C: Cli> Agent for CliAgent<C> {
    fn name(&self) -> &str {
        C::NAME
    }

    fn program(&self) -> Option<String> {
        Some(self.program_name())
    }

    fn hosts(&self) -> &'static [&'static str] {
        C::HOSTS
    }

    fn family(&self) -> Option<&'static str> {
        C::FAMILY
    }

    fn model(&self) -> Option<&str> {
        self.opts.model.as_deref()
    }

    fn env_names(&self) -> Vec<String> {
        allowed_names(C::ENV, &self.opts.env)
    }

    fn setup_problems(&self, proxied: bool) -> Vec<super::setup::SetupProblem> {
        let var = |name: &str| std::env::var(name).ok();
        let keys = self.cli.key_vars(&var);
        super::setup::problems(&self.env_names(), self.cli.gateways(&var), &keys, proxied)
    }

    fn unusable(&self) -> Option<String> {
        let path = std::env::var("PATH").ok();
        process::find_program(&self.program_name(), path.as_deref())
            .is_none()
            .then(|| self.not_installed())
    }

    fn isolate(&self, home: &Path) -> Result<Vec<(String, String)>, EngineError> {
        if !self.opts.isolate {
            return Ok(Vec::new());
        }
        match self.cli.state(&|name| std::env::var(name).ok()) {
            Some(layout) => prepare_state(home, &layout),
            None => Ok(Vec::new()),
        }
    }

    /// A linked credential where the slot home links to it; without
    /// isolation, the folders of the CLI's state (the seeds' own, or
    /// theirs).
    fn reads(&self) -> Vec<PathBuf> {
        let var = |name: &str| std::env::var(name).ok();
        let mut paths = self.cli.reads(&var);
        for seed in self.cli.state(&var).map(|l| l.seeds).unwrap_or_default() {
            if !self.opts.isolate {
                let folder = seed.from.is_dir().then(|| seed.from.clone());
                paths.extend(folder.or_else(|| seed.from.parent().map(Path::to_path_buf)));
            } else if seed.how == Placing::Link {
                paths.push(seed.from);
            }
        }
        paths.retain(|p| p.exists());
        paths
    }

    fn probe(
        &self,
        scratch: &Path,
        confine: Option<&planwright_os::sandbox::Confine>,
    ) -> Result<Option<super::Probed>, String> {
        let ctx = self
            .probe_context(scratch, confine)
            .map_err(|e| e.to_string())?;
        let confined = confine.is_some_and(|c| c.containment.confines_writes());
        let mut env = agent_env(&ctx, &self.env_names());
        env.extend(self.cli.env());
        env.extend(ctx.env.iter().cloned());
        let mut argv = vec![self.program_name()];
        argv.extend(self.cli.probe_args(confined));
        let spec = Spec {
            argv,
            cwd: ctx.workspace.clone(),
            env,
            stdin: None,
            timeout: ctx.timeout,
            grace: Duration::from_secs(2),
            log: Some(ctx.log.clone()),
            lines: None,
            confine: super::reading(ctx.confine.as_ref(), self),
            log_limit: ctx.log_limit,
        };
        let done = match process::run(&spec, &Cancel::default()) {
            Err(ProcessError::NotFound { .. }) => return Err(self.not_installed()),
            other => other.map_err(|e| e.to_string())?,
        };
        if done.success() {
            return Ok(Some(super::Probed {
                said: format!("`{}`", spec.argv.join(" ")),
                offers: None,
            }));
        }
        Err(format!(
            "`{}` exited with {}: {}",
            spec.argv.join(" "),
            done.exit,
            done.output_tail.trim()
        ))
    }

    fn attempt(&self, ctx: &AttemptContext, cancel: &Cancel) -> Result<AgentReport, EngineError> {
        let parser = Arc::new(Mutex::new(self.cli.parser()));
        let feed = Arc::clone(&parser);
        // Set by the run's cancel, or by the parser giving up for the CLI.
        let (stop, _listening) = cancel.child();
        let strays = present(&ctx.workspace, C::STRAYS);
        let configured = self.cli.configured_model(ctx);
        let mut env = agent_env(ctx, &self.env_names());
        env.extend(self.cli.env());
        add_attempt_env(&mut env, ctx);
        record_env(&ctx.log, &env)?;
        let spec = Spec {
            argv: self.argv(ctx),
            cwd: ctx.workspace.clone(),
            env,
            stdin: C::PROMPT_ON_STDIN.then(|| ctx.prompt_file.clone()),
            timeout: ctx.timeout,
            grace: Duration::from_secs(5),
            log: Some(ctx.log.clone()),
            lines: Some(
                feed_lines(
                    feed,
                    ctx.usage_sink.clone(),
                    self.argv_model(ctx),
                    stop.clone(),
                )
                .limit(usize::try_from(self.opts.line_limit).unwrap_or(usize::MAX)),
            ),
            confine: super::reading(ctx.confine.as_ref(), self),
            log_limit: ctx.log_limit,
        };
        let done = match process::run(&spec, &stop) {
            Err(ProcessError::NotFound { .. }) => {
                return Err(EngineError::Settings(self.not_installed()))
            }
            other => other?,
        };
        let gave_up = stop.is_cancelled() && !cancel.is_cancelled();
        remove_strays(&ctx.workspace, C::STRAYS, &strays);
        if let Some(path) = self.cli.record(ctx) {
            let content = read_record(&path);
            if let Some(note) = lock(&parser).record(content.as_deref()) {
                crate::log::append(&ctx.log, &format!("{note}\n"))?;
            }
        }
        let now = Now::system();
        let parsed = lock(&parser).finish(&done.output_tail, now);
        let model = parsed
            .model
            .clone()
            .or_else(|| self.argv_model(ctx).map(str::to_string))
            .or(configured);
        let outcome = match parsed.retrying.clone().filter(|_| gave_up) {
            Some(limit) => {
                crate::log::append(&ctx.log, &format!("planwright: {} {GAVE_UP}\n", C::NAME))?;
                AgentOutcome::Unavailable {
                    retry_after: limit.retry_after,
                    reason: limit.reason,
                }
            }
            None => decide(&done, &parsed),
        };
        if let (true, AgentOutcome::Failed(why)) = (parsed.key_refused, &outcome) {
            return Err(self.key_refused(why));
        }
        let cost = cost(&parsed, model.as_deref(), &self.opts.prices);
        let cut = !parsed.complete && outcome == AgentOutcome::Finished;
        for note in figures_notes(cut, parsed.usage.as_ref(), model.as_deref(), cost) {
            crate::log::append(&ctx.log, &format!("{note}\n"))?;
        }
        Ok(AgentReport {
            outcome,
            cost,
            model,
            usage: parsed.usage,
            final_message: parsed.final_message,
            session_id: parsed.session_id,
        })
    }
}

/// The record file at `path`, read beneath its folder (a symlink the agent
/// left there is not followed), when it is a regular file of at most
/// [`MAX_RECORD`] bytes.
fn read_record(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let dir = Dir::open(path.parent()?).ok()?;
    let file = dir.reader(Path::new(path.file_name()?)).ok()?;
    let mut content = Vec::new();
    file.take(MAX_RECORD + 1).read_to_end(&mut content).ok()?;
    (content.len() as u64 <= MAX_RECORD).then_some(content)
}

/// How long preflight's probe may take: a CLI's start, no model call.
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// The probe's log cap, in bytes.
const PROBE_LOG_LIMIT: u64 = 1 << 20;

/// A probe's attempt of `agent` (named `name` for its slot home): an
/// empty workspace, temporary folder and slot home below `scratch`, all
/// three writable under `confine`.
pub(crate) fn probe_context(
    agent: &dyn Agent,
    name: &str,
    scratch: &Path,
    confine: Option<&planwright_os::sandbox::Confine>,
) -> Result<AttemptContext, EngineError> {
    let (workspace, tmp) = (scratch.join("workspace"), scratch.join("tmp"));
    let homes = scratch.join("homes").join("probe");
    for dir in [&workspace, &tmp, &homes] {
        std::fs::create_dir_all(dir).map_err(|e| EngineError::io(dir, e))?;
    }
    let mut env = vec![("TMPDIR".to_string(), tmp.display().to_string())];
    env.extend(agent.isolate(&homes.join(name))?);
    let confine = confine.cloned().map(|mut c| {
        for dir in [&workspace, &tmp, &homes] {
            c.allow_write(dir.clone());
        }
        // Made by `isolate` when the CLI is lent a folder; a child's
        // view cannot show what does not exist.
        let lent = super::lend::lent_root(&scratch.join("homes"));
        if lent.is_dir() {
            c.policy.readable.push(lent);
        }
        c
    });
    Ok(AttemptContext {
        ticket: "preflight".to_string(),
        attempt: 0,
        prompt_file: scratch.join("probe.prompt.md"),
        log: scratch.join("probe.log"),
        workspace,
        timeout: Some(PROBE_TIMEOUT),
        model: None,
        env,
        confine,
        log_limit: Some(PROBE_LOG_LIMIT),
        usage_sink: None,
        activity_sink: None,
    })
}

/// What the agent log says when planwright stopped a CLI that retried its
/// provider's refusal past the bound ([`StreamParser::gives_up`]).
const GAVE_UP: &str = "retried the provider's refusal past planwright's bound on its own retries: stopped; the provider's trouble, not the ticket's";

/// Feeds each line of stdout to the parser, hands `sink` the running
/// total of tokens whenever the line changed it, and sets `stop` when the
/// parser gives up for the CLI.
fn feed_lines(
    parser: Arc<Mutex<Box<dyn StreamParser>>>,
    sink: Option<UsageSink>,
    model: Option<&str>,
    stop: Cancel,
) -> LineSink {
    let model = model.map(str::to_string);
    let last: Mutex<Option<Usage>> = Mutex::new(None);
    LineSink::new(move |line| {
        let mut parser = lock(&parser);
        parser.line(line);
        if parser.gives_up() {
            stop.cancel();
        }
        let Some(sink) = &sink else { return };
        let Some(mut now) = parser.so_far() else {
            return;
        };
        drop(parser);
        let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
        if *last != Some(now.usage) {
            *last = Some(now.usage);
            now.model = now.model.or_else(|| model.clone());
            sink.report(&now);
        }
    })
}

impl<C: Cli> CliAgent<C> {
    fn probe_context(
        &self,
        scratch: &Path,
        confine: Option<&planwright_os::sandbox::Confine>,
    ) -> Result<AttemptContext, EngineError> {
        probe_context(self, C::NAME, scratch, confine)
    }

    /// The run stops: every attempt with this key would fail the same way.
    fn key_refused(&self, why: &str) -> EngineError {
        let first = why.lines().next().unwrap_or(why);
        EngineError::Settings(format!(
            "agent `{}`: the key is refused by its provider ({first}); no ticket was charged a strike. Check the key the CLI uses ({}, or its login), then `run` again to continue",
            C::NAME,
            C::ENV.iter().map(|e| format!("`{e}`")).collect::<Vec<_>>().join(", ")
        ))
    }

    fn argv_model<'a>(&'a self, ctx: &'a AttemptContext) -> Option<&'a str> {
        self.opts.model.as_deref().or(ctx.model.as_deref())
    }
}

/// How the attempt ended, from how the process ended and what the parser
/// read. A limit the parser found in the CLI's own final error is
/// `Unavailable` (never a failure) when the attempt failed: a limit record
/// in the output of a CLI that exited 0 and reported no failure was not
/// the CLI's verdict. A `TICKET-BLOCKED:` last line (of the final message,
/// else of stdout) gives up; a success exit with output cut short is still
/// finished (the workspace decides), only without usage.
pub(crate) fn decide(done: &Finished, parsed: &Parsed) -> AgentOutcome {
    match (&done.exit, parsed.retrying.clone()) {
        (Exit::TimedOut, Some(limit)) => {
            return AgentOutcome::Unavailable {
                retry_after: limit.retry_after,
                reason: limit.reason,
            }
        }
        (Exit::TimedOut, None) => return AgentOutcome::TimedOut,
        (Exit::Cancelled, _) => return AgentOutcome::Cancelled,
        _ => {}
    }
    let failed = !done.success() || parsed.failure.is_some();
    if let Some(limit) = parsed.limit.clone().filter(|_| failed) {
        return AgentOutcome::Unavailable {
            retry_after: limit.retry_after,
            reason: limit.reason,
        };
    }
    let blocked = parsed
        .final_message
        .as_deref()
        .and_then(blocked_reason)
        .or_else(|| blocked_reason(&done.stdout_tail));
    if let Some(reason) = blocked {
        return AgentOutcome::Blocked(reason);
    }
    if !failed {
        return AgentOutcome::Finished;
    }
    let what = parsed
        .failure
        .clone()
        .unwrap_or_else(|| "the CLI reported no error message".to_string());
    let cut = if parsed.complete {
        ""
    } else {
        " (its output ended before its final record)"
    };
    let evidence = parsed.evidence.as_deref().unwrap_or(&done.output_tail);
    AgentOutcome::Failed(format!(
        "exited with {}{cut}: {what}\n{evidence}",
        done.exit
    ))
}

/// The agent log's lines about figures that are missing, so none is
/// silently wrong: the output was cut short before the CLI's final record
/// (`cut`: no tokens, no cost), or the model has no price.
pub(crate) fn figures_notes(
    cut: bool,
    usage: Option<&Usage>,
    model: Option<&str>,
    cost: Option<(f64, CostSource)>,
) -> Vec<String> {
    let mut notes = Vec::new();
    if cut {
        notes.push(
            "planwright: the output was truncated: it ended before the CLI's final record, so the attempt's tokens and cost are not reported".to_string(),
        );
    }
    if let (Some(_), None) = (usage, cost) {
        notes.push(match model {
            Some(model) => format!(
                "planwright: no price for model `{model}`: the attempt's cost is unknown; add `[prices.{model}]` to planwright.toml"
            ),
            None => "planwright: the CLI named no model, so its tokens cannot be priced: the attempt's cost is unknown".to_string(),
        });
    }
    notes
}

/// The cost: the CLI's own figure when it gave one, else the price table's
/// for the model and tokens, else none.
pub(crate) fn cost(
    parsed: &Parsed,
    model: Option<&str>,
    prices: &Prices,
) -> Option<(f64, CostSource)> {
    if let Some(usd) = parsed.cost_usd.filter(|c| c.is_finite() && *c >= 0.0) {
        return Some((usd, CostSource::Reported));
    }
    let priced = |model: &str, u: &Usage| {
        let p = prices.find(model)?;
        Some(p.cost(
            u.input_tokens,
            u.output_tokens,
            u.cache_read_tokens,
            u.cache_write_tokens,
        ))
    };
    if !parsed.per_model.is_empty() {
        let each: Option<f64> = parsed.per_model.iter().map(|(m, u)| priced(m, u)).sum();
        if let Some(usd) = each {
            return Some((usd, CostSource::Computed));
        }
    }
    let usd = priced(model?, parsed.usage.as_ref()?)?;
    Some((usd, CostSource::Computed))
}

fn present(workspace: &Path, strays: &[&str]) -> Vec<bool> {
    strays
        .iter()
        .map(|s| workspace.join(s).symlink_metadata().is_ok())
        .collect()
}

fn remove_strays(workspace: &Path, strays: &[&str], were_there: &[bool]) {
    for (stray, was) in strays.iter().zip(were_there) {
        let path = workspace.join(stray);
        if !was && path.symlink_metadata().is_ok() {
            // A cache the CLI made for itself; if it cannot be removed, the
            // scope check will name it.
            let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
        }
    }
}

/// The text of a JSON string field, if it is one.
pub(crate) fn text(v: &serde_json::Value, key: &str) -> Option<String> {
    v.get(key)?.as_str().map(str::to_string)
}

/// A JSON number field as a token count (absent, negative or fractional
/// counts are 0: a count never fails an attempt).
pub(crate) fn count(v: &serde_json::Value, key: &str) -> u64 {
    v.get(key).and_then(serde_json::Value::as_u64).unwrap_or(0)
}

/// One line as a JSON object, or `None` (not JSON, or not an object).
pub(crate) fn json_line(line: &str) -> Option<serde_json::Value> {
    let line = line.trim();
    if !line.starts_with('{') {
        return None;
    }
    serde_json::from_str::<serde_json::Value>(line)
        .ok()
        .filter(serde_json::Value::is_object)
}

/// What `parser` makes of a CLI that printed `lines` on stdout and ended
/// with `output_tail`, at `now`: the adapters' parser tests.
#[cfg(test)]
pub(crate) fn parse_output(
    mut parser: impl StreamParser,
    lines: impl IntoIterator<Item = impl AsRef<str>>,
    output_tail: &str,
    now: Now,
) -> Parsed {
    for line in lines {
        parser.line(line.as_ref());
    }
    parser.finish(output_tail, now)
}

/// The start of the Unix epoch, UTC: for parser tests where time does not
/// matter.
#[cfg(test)]
pub(crate) const EPOCH: Now = Now {
    unix: 0,
    utc_offset: 0,
};

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn done(exit: Exit, out: &str) -> Finished {
        Finished {
            exit,
            stdout_tail: out.to_string(),
            stderr_tail: String::new(),
            output_tail: out.to_string(),
            duration: Duration::ZERO,
            limit: None,
        }
    }

    #[test]
    fn outcome_order_limit_blocked_failed_finished() {
        let ok = Parsed {
            complete: true,
            ..Parsed::default()
        };
        assert_eq!(
            decide(&done(Exit::Code(0), ""), &ok),
            AgentOutcome::Finished
        );
        assert_eq!(
            decide(&done(Exit::TimedOut, "quota"), &ok),
            AgentOutcome::TimedOut
        );
        let retrying = Parsed {
            retrying: Some(Limit {
                reason: "retrying API error 429".into(),
                retry_after: Some(Duration::from_secs(9)),
            }),
            ..ok.clone()
        };
        assert_eq!(
            decide(&done(Exit::TimedOut, ""), &retrying),
            AgentOutcome::Unavailable {
                retry_after: Some(Duration::from_secs(9)),
                reason: "retrying API error 429".into()
            },
            "a timeout while the CLI waited to retry a refusal"
        );
        let blocked = Parsed {
            final_message: Some("I looked.\nTICKET-BLOCKED: no spec".into()),
            ..ok.clone()
        };
        assert_eq!(
            decide(&done(Exit::Code(0), ""), &blocked),
            AgentOutcome::Blocked("no spec".into())
        );
        let limited = Parsed {
            failure: Some("API Error: 429".into()),
            limit: Some(Limit {
                reason: "API Error: 429".into(),
                retry_after: Some(Duration::from_secs(30)),
            }),
            ..ok.clone()
        };
        assert_eq!(
            decide(&done(Exit::Code(1), ""), &limited),
            AgentOutcome::Unavailable {
                retry_after: Some(Duration::from_secs(30)),
                reason: "API Error: 429".into()
            }
        );
        // A limit record, but the CLI exited 0 and reported no failure.
        let claimed = Parsed {
            failure: None,
            ..limited
        };
        assert_eq!(
            decide(&done(Exit::Code(0), ""), &claimed),
            AgentOutcome::Finished
        );
        // Limit words in the output of a failed CLI decide nothing.
        let AgentOutcome::Failed(quota) = decide(
            &done(
                Exit::Code(1),
                "work\nError: You have exhausted your daily quota.",
            ),
            &Parsed::default(),
        ) else {
            panic!("a failure whose CLI reported no limit is a failure");
        };
        assert!(quota.contains("exhausted your daily quota"), "{quota}");
        let AgentOutcome::Failed(why) = decide(&done(Exit::Code(2), "boom"), &Parsed::default())
        else {
            panic!("a non-zero exit fails");
        };
        assert!(
            why.contains("exit code 2") && why.contains("ended before") && why.contains("boom"),
            "{why}"
        );
        // Success exit, quota words in the work: not a limit.
        assert_eq!(
            decide(&done(Exit::Code(0), "added a quota check"), &ok),
            AgentOutcome::Finished
        );
    }

    #[test]
    fn a_failures_evidence_is_the_clis_error_record_when_it_printed_one() {
        let recorded = Parsed {
            complete: true,
            failure: Some("API Error: 400 bad request".into()),
            evidence: Some(r#"{"type":"result","is_error":true}"#.into()),
            ..Parsed::default()
        };
        let tail =
            "{\"type\":\"system\",\"subtype\":\"init\"}\n{\"type\":\"result\",\"is_error\":true}";
        assert_eq!(
            decide(&done(Exit::Code(1), tail), &recorded),
            AgentOutcome::Failed(
                "exited with exit code 1: API Error: 400 bad request\n{\"type\":\"result\",\"is_error\":true}"
                    .into()
            )
        );
    }

    #[test]
    fn a_record_is_read_beneath_its_folder_and_bounded() {
        let tmp = tempfile::tempdir().unwrap();
        let log = tmp.path().join("record.jsonl");
        assert_eq!(read_record(&log), None, "missing");
        std::fs::write(&log, "{}\n").unwrap();
        assert_eq!(read_record(&log).as_deref(), Some(&b"{}\n"[..]));
        let planted = tmp.path().join("planted.jsonl");
        symlink(&log, &planted).unwrap();
        assert_eq!(read_record(&planted), None, "a symlink is not followed");
        let huge = tmp.path().join("huge.jsonl");
        let file = std::fs::File::create(&huge).unwrap();
        file.set_len(MAX_RECORD + 1).unwrap();
        assert_eq!(read_record(&huge), None, "over the bound");
    }

    #[test]
    fn cost_reported_beats_computed() {
        let prices = Prices::default();
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 0,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
        };
        let p = Parsed {
            usage: Some(usage),
            ..Parsed::default()
        };
        assert_eq!(
            cost(&p, Some("gpt-5.4"), &prices),
            Some((2.5, CostSource::Computed))
        );
        assert_eq!(cost(&p, Some("no-such-model"), &prices), None);
        let reported = Parsed {
            cost_usd: Some(0.25),
            ..p
        };
        assert_eq!(
            cost(&reported, Some("gpt-5.4"), &prices),
            Some((0.25, CostSource::Reported))
        );
    }
}
