//! Agents: the coding-agent CLIs that do a ticket's work, behind one trait.
//! Built in: adapters for `claude`, `codex`, `gemini`, `agy`, `aider`,
//! `opencode` and `copilot` (one file each, sharing [`cli`]), `cmd` (any program, from a
//! template), `acp` (any Agent Client Protocol agent, from a template) and
//! `scripted:DIR` (prepared files and patches per ticket; for
//! tests and the demo) and `replay:DIR` (the changes of real commits, which
//! `planwright replay` prepares).

pub(crate) mod acp;
pub mod activity;
pub(crate) mod agy;
pub(crate) mod aider;
pub(crate) mod claude;
pub(crate) mod cli;
pub(crate) mod cmd;
pub(crate) mod codex;
pub(crate) mod copilot;
pub(crate) mod gemini;
pub(crate) mod lend;
pub(crate) mod limits;
pub(crate) mod opencode;
pub mod replay;
mod roster;
pub(crate) mod scripted;
pub mod setup;
pub(crate) mod state;

pub use activity::{Activity, ActivityKind, ActivitySink};
pub use cmd::CmdAgent;
pub use limits::Now;
pub use roster::Agents;

use crate::error::EngineError;
use planwright_os::process::Cancel;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The variable of [`AttemptContext::env`] that carries the budget left for
/// an attempt, in US dollars; CLIs that can stop themselves at a budget
/// (Claude Code's `--max-budget-usd`) get it.
pub const BUDGET_ENV: &str = "PLANWRIGHT_BUDGET_USD";

/// One built-in adapter of a coding-agent CLI: the row of [`ADAPTERS`]
/// that flag parsing, `--help`, preflight and the docs tests read.
#[derive(Clone, Copy)]
pub struct Adapter {
    /// Its name for `--agent` and `[agent] name`.
    pub name: &'static str,
    /// How to install its CLI.
    pub install: &'static str,
    /// The hosts its proxy lets it reach by default ([`cli::Cli::HOSTS`]).
    pub hosts: &'static [&'static str],
    build: fn(AgentOptions) -> Box<dyn Agent>,
}

impl Adapter {
    const fn of<C: cli::Cli + Default>() -> Adapter {
        Adapter {
            name: C::NAME,
            install: C::INSTALL,
            hosts: C::HOSTS,
            build: |o| Box::new(cli::CliAgent::new(C::default(), o)),
        }
    }

    /// The agent this adapter drives, with the user's `[agent]` options.
    pub fn agent(&self, opts: &AgentOptions) -> Box<dyn Agent> {
        (self.build)(opts.clone())
    }
}

/// The built-in adapters. Adding one is its file and a row here.
pub const ADAPTERS: &[Adapter] = &[
    Adapter::of::<claude::Claude>(),
    Adapter::of::<codex::Codex>(),
    Adapter::of::<gemini::Gemini>(),
    Adapter::of::<agy::Agy>(),
    Adapter::of::<aider::Aider>(),
    Adapter::of::<opencode::Opencode>(),
    Adapter::of::<copilot::Copilot>(),
];

/// The adapter named `name`, if one is built in.
pub fn adapter(name: &str) -> Option<&'static Adapter> {
    ADAPTERS.iter().find(|a| a.name == name)
}

/// Every name `--agent` accepts, ticked and listed (`` `claude`, `codex`,
/// ..., `cmd`, `acp`, `scripted:DIR` or `replay:DIR` ``).
pub fn agent_names() -> String {
    let names: Vec<String> = ADAPTERS.iter().map(|a| format!("`{}`", a.name)).collect();
    format!(
        "{}, `cmd`, `acp`, `scripted:DIR` or `replay:DIR`",
        names.join(", ")
    )
}

/// What an agent gets for one attempt.
#[derive(Debug, Clone)]
pub struct AttemptContext {
    /// The ticket id.
    pub ticket: String,
    /// 1-based attempt number.
    pub attempt: u32,
    /// The workspace to edit (also the working directory).
    pub workspace: PathBuf,
    /// The charter, written to a file.
    pub prompt_file: PathBuf,
    /// Where the agent's whole output goes.
    pub log: PathBuf,
    /// Wall-clock limit.
    pub timeout: Option<Duration>,
    /// The model chosen for this attempt (explicit, or through the routing
    /// table); `None` leaves the CLI's own default.
    pub model: Option<String>,
    /// Variables the executor adds to the agent's environment (for example
    /// the CLI's per-slot state directory), after the agent's own.
    pub env: Vec<(String, String)>,
    /// The sandbox every process of the agent runs in; an adapter that
    /// gives the CLI more to write (its own state directory) adds it with
    /// [`planwright_os::sandbox::Confine::allow_write`].
    pub confine: Option<planwright_os::sandbox::Confine>,
    /// The cap of the agent's log, in bytes.
    pub log_limit: Option<u64>,
    /// Where the agent reports its tokens while it runs, when anyone listens.
    pub usage_sink: Option<UsageSink>,
    /// Where the agent's activity goes while it runs, when anyone listens
    /// (only adapters whose CLI streams it send any: `acp`).
    pub activity_sink: Option<Arc<dyn ActivitySink>>,
}

/// Tokens an attempt's agent has used so far, as its CLI reported them
/// while running (a running total, not an increment).
#[derive(Debug, Clone, PartialEq)]
pub struct UsageSoFar {
    /// The model, as the CLI named it (else the one asked for).
    pub model: Option<String>,
    /// Tokens so far, normalized (see [`Usage`]).
    pub usage: Usage,
}

/// Receives [`UsageSoFar`] each time a running agent's total changes; it is
/// called on the thread reading the agent's output, so it must be quick.
#[derive(Clone)]
pub struct UsageSink(Arc<dyn Fn(&UsageSoFar) + Send + Sync>);

impl UsageSink {
    /// A sink calling `f`.
    pub fn new(f: impl Fn(&UsageSoFar) + Send + Sync + 'static) -> UsageSink {
        UsageSink(Arc::new(f))
    }

    /// Hands over a new running total.
    pub fn report(&self, so_far: &UsageSoFar) {
        (self.0)(so_far);
    }
}

impl std::fmt::Debug for UsageSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UsageSink")
    }
}

pub use crate::model::report::{AgentOutcome, AgentReport, CostSource, Usage};

/// A coding agent.
pub trait Agent: Send + Sync {
    /// Its name for reports.
    fn name(&self) -> &str;
    /// Does one attempt of a ticket in `ctx.workspace`.
    fn attempt(&self, ctx: &AttemptContext, cancel: &Cancel) -> Result<AgentReport, EngineError>;
    /// The program it needs, for preflight (None when it needs none).
    fn program(&self) -> Option<String> {
        None
    }
    /// The model family it runs, when only one (see [`cli::Cli::FAMILY`]):
    /// routing never gives it another family's model.
    fn family(&self) -> Option<&'static str> {
        None
    }
    /// The model it runs whatever routing chose (`[agent] model`), which
    /// preflight checks against its family and prints as each ticket's.
    fn model(&self) -> Option<&str> {
        None
    }
    /// A problem that would stop it from running at all, for preflight.
    fn unusable(&self) -> Option<String> {
        None
    }
    /// The hosts (`host:port`) planwright's proxy lets it reach besides
    /// `[sandbox] allow`: none unless an adapter names its CLI's.
    fn hosts(&self) -> &'static [&'static str] {
        &[]
    }
    /// The names of planwright's environment variables it passes on (its
    /// adapter's, such as `ANTHROPIC_*`, and `[agent] env`); `PREFIX_*`
    /// keeps a prefix. What else it gets is [`agent_env`]'s base.
    fn env_names(&self) -> Vec<String> {
        Vec::new()
    }
    /// Resets `home`, a directory of its own for one job slot, to the seed
    /// of the CLI's state (its copy of the user's settings, links to the
    /// login) before each attempt, with room for its sessions and caches,
    /// and returns the variables that point the CLI there. The default
    /// keeps no state apart.
    fn isolate(&self, _home: &Path) -> Result<Vec<(String, String)>, EngineError> {
        Ok(Vec::new())
    }
    /// The user's files and folders its program reads where they are,
    /// which a confined child's view, hiding the home, binds back
    /// read-only: the logins a slot home links to, its state where it is
    /// not isolated. The default reads nothing of the home.
    fn reads(&self) -> Vec<PathBuf> {
        Vec::new()
    }
    /// For preflight: what in the user's set-up of its CLI fails every
    /// attempt (a gateway at a loopback address when `proxied`, a key
    /// variable its configuration names that it is not given).
    fn setup_problems(&self, proxied: bool) -> Vec<setup::SetupProblem> {
        setup::problems(&self.env_names(), Vec::new(), &[], proxied)
    }
    /// For preflight: starts its program as an attempt would, confined by
    /// `confine` with a fresh CLI home below `scratch`, far enough for it
    /// to make its state and cache folders, without a model call: what
    /// it found (`None`: the default, which has nothing to start). `Err`
    /// holds the program's own words.
    fn probe(
        &self,
        _scratch: &Path,
        _confine: Option<&planwright_os::sandbox::Confine>,
    ) -> Result<Option<Probed>, String> {
        Ok(None)
    }
}

/// What preflight's probe of an agent found ([`Agent::probe`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Probed {
    /// The command it started, in backticks, and what it found.
    pub said: String,
    /// The models it offers a session, when it lists some (an ACP
    /// agent's `session/new`): preflight checks the model every ticket
    /// may be routed to against them.
    pub offers: Option<Vec<String>>,
}

/// The sandbox of a process of `agent` started under `confine`: the
/// same, also reading what the agent reads of the user's home
/// ([`Agent::reads`]).
pub(crate) fn reading(
    confine: Option<&planwright_os::sandbox::Confine>,
    agent: &dyn Agent,
) -> Option<planwright_os::sandbox::Confine> {
    let mut confine = confine.cloned()?;
    confine.policy.readable.extend(agent.reads());
    Some(confine)
}

/// The per-slot CLI state of `agent` under `state_dir` (`.planwright/`):
/// `homes/<slot>/<agent>/`, reset by [`Agent::isolate`] (with all else in
/// `homes/<slot>/`, which the attempt may write). Returns the variables for
/// [`AttemptContext::env`].
pub fn prepare_home(
    state_dir: &Path,
    slot: &str,
    agent: &dyn Agent,
) -> Result<Vec<(String, String)>, EngineError> {
    let home = state_dir.join("homes").join(slot).join(agent.name());
    agent.isolate(&home)
}

/// The `[agent]` settings an agent is built with: resolved by planwright-config.
pub use planwright_config::{AgentOptions, AgentSpec, AgentsSpec};

/// The agent named `name` (`cmd`, `scripted:DIR`), with the `cmd` template.
pub fn from_name(name: &str, cmd_template: Option<&str>) -> Result<Box<dyn Agent>, EngineError> {
    let opts = AgentOptions {
        cmd: cmd_template.map(str::to_string),
        ..AgentOptions::default()
    };
    from_options(name, &opts)
}

/// The agent named `name`, built with `opts`.
pub fn from_options(name: &str, opts: &AgentOptions) -> Result<Box<dyn Agent>, EngineError> {
    if let Some(dir) = name.strip_prefix("scripted:") {
        return Ok(Box::new(scripted::Scripted::new(PathBuf::from(dir))));
    }
    if let Some(dir) = name.strip_prefix("replay:") {
        let (model, prices) = (opts.model.clone(), opts.prices.clone());
        return Ok(Box::new(replay::Replay::new(dir.into(), model, prices)));
    }
    if let Some(adapter) = adapter(name) {
        let opts = AgentOptions {
            program: opts.program.as_deref().map(anchored),
            ..opts.clone()
        };
        return Ok(adapter.agent(&opts));
    }
    match name {
        "cmd" => {
            let template = opts.cmd.as_deref().ok_or_else(|| {
                EngineError::Settings(format!(
                    "the `cmd` agent needs a command: `{} \"PROGRAM ARGS...\"` or `[agent] cmd` in planwright.toml",
                    planwright_plan::Flag::AgentCmd
                ))
            })?;
            let agent = cmd::CmdAgent::new(template)?
                .with_env(opts.env.clone())
                .with_model(opts.model.clone());
            Ok(Box::new(agent))
        }
        "acp" => {
            let template = opts.cmd.as_deref().ok_or_else(|| {
                EngineError::Settings(format!(
                    "the `acp` agent needs the command that starts it: `{} \"gemini --acp\"` or `[agent] cmd` in planwright.toml",
                    planwright_plan::Flag::AgentCmd
                ))
            })?;
            Ok(Box::new(acp::Acp::new(template, opts)?))
        }
        "scripted" => Err(EngineError::Settings(format!(
            "the scripted agent needs its fixture folder: `{} scripted:DIR`",
            planwright_plan::Flag::Agent
        ))),
        other => Err(EngineError::Settings(format!(
            "unknown agent `{other}` (built in: {}; drive any other CLI with `{} cmd {} \"...\"`)",
            agent_names(),
            planwright_plan::Flag::Agent,
            planwright_plan::Flag::AgentCmd
        ))),
    }
}

/// `program` as the agent's process will find it: a relative path with a
/// slash (`./agent.sh`, `bin/agent`) is taken from the directory planwright
/// was started in, as a shell would take it, since the agent itself starts
/// in the ticket's workspace; a bare name is still looked up on `PATH`.
pub fn anchored(program: &str) -> String {
    let relative = program.contains('/') && !Path::new(program).is_absolute();
    match std::env::current_dir() {
        Ok(dir) if relative => dir.join(program).display().to_string(),
        _ => program.to_string(),
    }
}

/// What every agent gets of planwright's environment, whatever its adapter:
/// what any program needs to run (search path, identity, locale, terminal),
/// and what it needs to reach the network where the machine routes it
/// through a proxy or trusts a private certificate authority, and where
/// rustup keeps the toolchains its `cargo` runs (`RUSTUP_HOME`). `HOME` and
/// `TMPDIR` are replaced by the slot's own where planwright sets them.
pub const BASE_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "RUSTUP_HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LC_*",
    "TERM",
    "TZ",
    "TMPDIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
];

/// The environment of an agent's process, by allowlist: from planwright's
/// own, only [`BASE_ENV`] and the names in `allowed` (the adapter's and the
/// user's `[agent] env`; `PREFIX_*` keeps a prefix), then the attempt's
/// `PLANWRIGHT_TICKET`, `PLANWRIGHT_ATTEMPT` and `PLANWRIGHT_PROMPT_FILE`.
/// Everything else (`GITHUB_TOKEN`, `SSH_AUTH_SOCK`, cloud keys, `GIT_*`)
/// is withheld unless named. The attempt's own [`AttemptContext::env`]
/// goes after this.
pub fn agent_env(ctx: &AttemptContext, allowed: &[String]) -> Vec<(String, String)> {
    let names: Vec<String> = BASE_ENV
        .iter()
        .map(|n| n.to_string())
        .chain(allowed.iter().cloned())
        .collect();
    let mut env = planwright_os::process::scrubbed_env(&names);
    // A name the user lists cannot bring planwright's own back: they would
    // point git at the user's repository or forge an attempt's identity.
    env.retain(|(k, _)| !k.starts_with("PLANWRIGHT_") && !k.starts_with("GIT_"));
    env.push(("PLANWRIGHT_TICKET".into(), ctx.ticket.clone()));
    env.push(("PLANWRIGHT_ATTEMPT".into(), ctx.attempt.to_string()));
    env.push((
        "PLANWRIGHT_PROMPT_FILE".into(),
        ctx.prompt_file.display().to_string(),
    ));
    env
}

/// Appends the attempt's own [`AttemptContext::env`] to `env`, the
/// agent's; a package manager's cache variable (see
/// [`crate::caches`]) that `env` already has, because the user named
/// it, keeps the user's value.
pub(crate) fn add_attempt_env(env: &mut Vec<(String, String)>, ctx: &AttemptContext) {
    for (k, v) in &ctx.env {
        if !(crate::caches::is_cache_var(k) && env.iter().any(|(n, _)| n == k)) {
            env.push((k.clone(), v.clone()));
        }
    }
}

/// Writes the names (never the values) of `env`, the agent's whole
/// environment, as the first line of the attempt's log, so a run shows
/// what each attempt was given.
pub(crate) fn record_env(log: &Path, env: &[(String, String)]) -> Result<(), EngineError> {
    let mut names: Vec<&str> = Vec::new();
    for (name, _) in env {
        if !names.contains(&name.as_str()) {
            names.push(name);
        }
    }
    crate::log::append(log, &format!("environment: {}\n", names.join(", ")))?;
    Ok(())
}

/// An adapter's `own` names, then the user's `[agent] env`.
pub(crate) fn allowed_names(own: &[&str], user: &[String]) -> Vec<String> {
    own.iter()
        .map(|n| n.to_string())
        .chain(user.iter().cloned())
        .collect()
}

/// `TICKET-BLOCKED: reason` on the last non-empty line of `output`.
pub fn blocked_reason(output: &str) -> Option<String> {
    let last = output.lines().rev().find(|l| !l.trim().is_empty())?;
    last.trim()
        .strip_prefix("TICKET-BLOCKED:")
        .map(|r| r.trim().to_string())
}
