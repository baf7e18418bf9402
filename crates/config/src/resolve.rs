//! Where flags, `planwright.toml` and the environment meet: one function
//! per area, and the only place that says which wins (a flag over the
//! file over the default).
//!
//! Each function takes apart its flags and its sections without `..`, so a
//! flag or key added later that nothing resolves does not compile.

use crate::budget::BudgetSettings;
use crate::defaults;
use crate::file::{self, Config, CounterfactualMode};
use crate::settings::{
    AgentOptions, AgentSpec, AgentsSpec, BaseSource, ChosenBase, ContainSettings, ExecutorSettings,
    GateSettings, MergeSettings, ReviewSettings, RunSettings, WorkerLink, WorkspaceSettings,
};
use planwright_plan::formats::StandardV1Defaults;
use planwright_plan::model::Gate;
use planwright_plan::{Format, Options};
use std::path::PathBuf;
use std::time::Duration;

/// What settings read of the machine and the environment, read by the
/// caller (this crate reads nothing).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    /// `HOME`: where `~/` in `[sandbox] writable` points.
    pub home: Option<PathBuf>,
    /// `XDG_CACHE_HOME`, where set and not empty: the user's cache folder
    /// (else `~/.cache`), which holds the gate checkouts.
    pub cache_home: Option<PathBuf>,
    /// `AGB_STRICT_GATES`: `0` turns agb's strict gate rule off.
    pub agb_strict_gates: Option<String>,
    /// The cores there are to work on: one slot per core by default.
    pub cores: Option<usize>,
    /// The forge token variables that are set, by name
    /// ([`crate::forge::token_variables`] says which to read).
    pub tokens: std::collections::BTreeMap<String, crate::forge::Secret>,
}

/// Why settings could not be resolved. Each names the source of the
/// value; the front end words what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// A value of `planwright.toml` is out of its range.
    #[error("`[{section}] {key} = {value}` in planwright.toml: it must be {bound}")]
    OutOfRange {
        /// The section.
        section: &'static str,
        /// The key.
        key: &'static str,
        /// The value, as it reads in the file (with its unit).
        value: String,
        /// What it must be ("at least 1").
        bound: &'static str,
    },
    /// A gate given as one command line cannot be split into words.
    #[error("cannot split `{0}` into words (unbalanced quote?)")]
    Unsplittable(String),
    /// Neither the front end nor `[agent]` names an agent.
    #[error("no agent given")]
    NoAgent,
    /// `[executor]` cannot work as written.
    #[error("`[executor]` in planwright.toml: {0}")]
    Executor(String),
    /// `--base` or `[run] base` is not a branch name git accepts.
    #[error("{given} `{name}` is not a valid branch name: {why}")]
    BadBase {
        /// `--base`, or `[run] base` in planwright.toml.
        given: String,
        /// The name as given.
        name: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// `[forge]` cannot work with the remote as written.
    #[error("`[forge]` in planwright.toml: {0}")]
    Forge(String),
}

/// The flags of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFlags {
    /// The plan file as given.
    pub plan: String,
    /// Slots, over `[run] jobs`.
    pub jobs: Option<u32>,
    /// Attempts per ticket, over `[run] strikes`.
    pub strikes: Option<u32>,
    /// The agent's limit, over `[agent] timeout_secs`.
    pub agent_timeout: Option<Duration>,
    /// Each gate's limit, over `[run] gate_timeout_secs`.
    pub gate_timeout: Option<Duration>,
    /// Gates for every ticket as command lines, after `[gates] run`.
    pub gates: Vec<String>,
    /// A ticket may change the plan or configuration file it names.
    pub allow_config_change: bool,
    /// The base branch, over `[run] base`.
    pub base: Option<String>,
    /// Do not run the shared gates on the base in preflight.
    pub no_gate_probe: bool,
    /// Gates that fail on the base are a warning, not an error.
    pub allow_red_base: bool,
}

/// The flags that name the agent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentFlags {
    /// The agent, over `[agent] name`.
    pub name: Option<String>,
    /// The `cmd` agent's template, over `[agent] cmd`.
    pub cmd: Option<String>,
}

/// The flags of reading a plan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValidationFlags {
    /// Read the plan as this format instead of detecting it.
    pub format: Option<Format>,
    /// agb's strict gate rule off (as `AGB_STRICT_GATES=0`).
    pub no_strict_gates: bool,
    /// codeboost: the issue the plan must be for.
    pub issue: Option<u64>,
    /// standard_v1: coerce bare strings into objects.
    pub coerce: bool,
    /// standard_v1: the file cap, over `[standard_v1] max_files_changed`.
    pub max_files_changed: Option<u32>,
    /// standard_v1: a calibration hint was rendered (or
    /// `[standard_v1] calibration_hint`).
    pub calibration_hint: bool,
    /// taskmaster: the tag to read.
    pub tag: Option<String>,
}

/// A run's settings: [`RunFlags`] over `file` over [`defaults`].
pub fn run(flags: RunFlags, file: &Config, env: &Env) -> Result<RunSettings, SettingsError> {
    let RunFlags {
        plan,
        jobs,
        strikes,
        agent_timeout,
        gate_timeout,
        gates: flag_gates,
        allow_config_change,
        base: flag_base,
        no_gate_probe,
        allow_red_base,
    } = flags;
    let file::Run {
        jobs: file_jobs,
        strikes: file_strikes,
        gate_timeout_secs: _,
        retry_from,
        min_free,
        base: _,
    } = &file.run;
    let base = base(flag_base, file)?;
    at_least_one("run", "jobs", *file_jobs)?;
    at_least_one("run", "strikes", *file_strikes)?;
    let merge = merge(&file.merge)?;
    let (max_pause, max_unavailable) = pause_bounds(&file.agent)?;
    let cores = env.cores.unwrap_or(defaults::JOBS);
    let agent_timeout = Some(
        agent_timeout
            .or(file.agent.timeout_secs.map(Duration::from_secs))
            .unwrap_or(defaults::AGENT_TIMEOUT),
    );
    let mut executor = executor(&file.executor)?;
    if let ExecutorSettings::Kubernetes(k) = &mut executor {
        k.agent_timeout = agent_timeout;
    }
    // Remote slots are the hosts', not this machine's cores.
    let cores = executor.slots().unwrap_or(cores);
    Ok(RunSettings {
        plan_path: plan,
        config_source: None,
        allow_config_change,
        jobs: jobs.or(*file_jobs).map_or(cores, |j| j as usize),
        strikes: strikes.or(*file_strikes).unwrap_or(defaults::STRIKES),
        retry_from: *retry_from,
        min_free: min_free.unwrap_or(defaults::MIN_FREE),
        max_pause,
        max_unavailable,
        agent_timeout,
        extra_gates: extra_gates(flag_gates, file)?,
        gates: gates(gate_timeout, file),
        merge,
        workspace: workspace(file),
        contain: sandbox(file, env),
        routing: file.routing.clone(),
        families: families(file),
        beyond: review(file),
        budget: budget(file),
        prices: file.prices.clone(),
        overlaps: None,
        executor,
        worker_link: worker_link(&file.executor)?,
        base,
        gate_probe: !no_gate_probe,
        allow_red_base,
    })
}

/// The base branch: `--base` (`flag`) over `[run] base`, else `None` (the
/// plan's, else the repository's current branch, which the engine reads).
pub fn base(flag: Option<String>, file: &Config) -> Result<Option<ChosenBase>, SettingsError> {
    let chosen = match (flag, &file.run.base) {
        (Some(name), _) => (name, BaseSource::Flag),
        (None, Some(name)) => (name.clone(), BaseSource::File),
        (None, None) => return Ok(None),
    };
    let (name, source) = chosen;
    if let Some(why) = planwright_plan::refname::ref_name_problem(&name) {
        let given = match source {
            BaseSource::Flag => format!("`{}`", planwright_plan::Flag::Base),
            _ => "`[run] base` in planwright.toml".to_string(),
        };
        return Err(SettingsError::BadBase { given, name, why });
    }
    Ok(Some(ChosenBase { name, source }))
}

/// `[executor]`, checked: `ssh` needs hosts, and never a `ssh` command
/// that turns host-key checks off; `kubernetes` needs its table.
pub fn executor(file: &file::Executor) -> Result<ExecutorSettings, SettingsError> {
    let file::Executor {
        kind,
        command,
        hosts,
        slots_per_host,
        ssh_command,
        kubernetes,
        heartbeat: _,
        lost_after: _,
        allow_version_skew: _,
        lost_backoff: _,
        max_lost: _,
        ssh_keepalive,
    } = file;
    let bad = |why: String| Err(SettingsError::Executor(why));
    if *kind != file::ExecutorKind::Kubernetes && kubernetes.is_some() {
        return bad("`[executor.kubernetes]` is for `kind = \"kubernetes\"`".into());
    }
    if *kind != file::ExecutorKind::Ssh
        && (!hosts.is_empty()
            || slots_per_host.is_some()
            || ssh_command.is_some()
            || ssh_keepalive.is_some())
    {
        return bad(
            "`hosts`, `slots_per_host`, `ssh_command` and `ssh_keepalive` are for `kind = \"ssh\"`"
                .into(),
        );
    }
    if command.as_ref().is_some_and(|c| c.is_empty()) {
        return bad("`command` is empty; leave it out for planwright's own worker".into());
    }
    Ok(match kind {
        file::ExecutorKind::Local if command.is_some() => {
            return bad(
                "`command` is for `kind = \"process\"`, `\"ssh\"` or `\"kubernetes\"`".into(),
            )
        }
        file::ExecutorKind::Local => ExecutorSettings::Local,
        file::ExecutorKind::Process => ExecutorSettings::Process {
            command: command.clone().unwrap_or_default(),
        },
        file::ExecutorKind::Kubernetes => ExecutorSettings::Kubernetes(crate::kubernetes::resolve(
            kubernetes.as_ref(),
            command.as_ref(),
        )?),
        file::ExecutorKind::Ssh => {
            if hosts.is_empty() {
                return bad("`kind = \"ssh\"` needs `hosts = [\"build-1\", ...]`".into());
            }
            at_least_one("executor", "slots_per_host", *slots_per_host)?;
            let ssh = ssh_command.clone().unwrap_or_else(|| vec!["ssh".into()]);
            if ssh.is_empty() {
                return bad("`ssh_command` is empty; leave it out for `ssh`".into());
            }
            if let Some(option) = unchecked_host_keys(&ssh) {
                return bad(format!(
                    "`ssh_command` turns host-key checks off (`{option}`); add the hosts' keys to your known hosts instead"
                ));
            }
            ExecutorSettings::Ssh {
                hosts: hosts.clone(),
                slots_per_host: slots_per_host.unwrap_or(1) as usize,
                ssh,
                command: command
                    .clone()
                    .unwrap_or_else(|| vec!["planwright".into(), "worker".into()]),
                keepalive: match ssh_keepalive {
                    Some(k) if k.0.as_secs() == 0 => {
                        return bad("`ssh_keepalive` is 0; give at least `1s`".into())
                    }
                    Some(k) => k.0,
                    None => defaults::SSH_KEEPALIVE,
                },
            }
        }
    })
}

/// `[executor]` `heartbeat`, `lost_after`, `allow_version_skew`,
/// `lost_backoff` and `max_lost`: a worker is lost after at least two
/// heartbeats of silence.
pub fn worker_link(file: &file::Executor) -> Result<WorkerLink, SettingsError> {
    let heartbeat = file.heartbeat.map_or(defaults::HEARTBEAT, |d| d.0);
    let lost_after = file.lost_after.map_or(defaults::LOST_AFTER, |d| d.0);
    if heartbeat.is_zero() {
        return Err(SettingsError::Executor(
            "`heartbeat` is 0; give at least `1s`".into(),
        ));
    }
    if lost_after < heartbeat * 2 {
        return Err(SettingsError::Executor(format!(
            "`lost_after` ({}s) is shorter than two heartbeats ({}s each); make it at least `{}s`",
            lost_after.as_secs(),
            heartbeat.as_secs(),
            heartbeat.as_secs() * 2
        )));
    }
    if file.max_lost == Some(0) {
        return Err(SettingsError::Executor(
            "`max_lost` is 0; give at least 1 (the run stops at that many lost workers)".into(),
        ));
    }
    Ok(WorkerLink {
        heartbeat,
        lost_after,
        allow_version_skew: file.allow_version_skew,
        lost_backoff: file.lost_backoff.map_or(defaults::LOST_BACKOFF, |d| d.0),
        max_lost: file.max_lost,
    })
}

/// The option of `ssh` that would accept any host key, if one is there.
fn unchecked_host_keys(ssh: &[String]) -> Option<String> {
    for arg in ssh {
        let flat: String = arg
            .to_ascii_lowercase()
            .chars()
            .map(|c| {
                if c == '=' || c.is_whitespace() {
                    ' '
                } else {
                    c
                }
            })
            .collect();
        let words: Vec<&str> = flat.split_whitespace().collect();
        let off = words.windows(2).any(|w| {
            (w[0].ends_with("stricthostkeychecking") && matches!(w[1], "no" | "off"))
                || (w[0].ends_with("userknownhostsfile") && w[1] == "/dev/null")
        });
        if off {
            return Some(arg.clone());
        }
    }
    None
}

/// `[merge]` over the defaults.
fn merge(file: &file::Merge) -> Result<MergeSettings, SettingsError> {
    at_least_one("merge", "batch", file.batch)?;
    at_least_one("merge", "checkouts", file.checkouts)?;
    let d = MergeSettings::default();
    Ok(MergeSettings {
        batch: file.batch.map_or(d.batch, |b| b as usize),
        wait: file.wait_secs.map_or(d.wait, Duration::from_secs),
        flaky_retries: file.flaky_retries.unwrap_or(d.flaky_retries),
        checkouts: file.checkouts.map_or(d.checkouts, |c| c as usize),
        max_rebuilds: file.max_rebuilds.unwrap_or(d.max_rebuilds),
    })
}

fn at_least_one(
    section: &'static str,
    key: &'static str,
    v: Option<u32>,
) -> Result<(), SettingsError> {
    match v {
        Some(0) => Err(SettingsError::OutOfRange {
            section,
            key,
            value: "0".into(),
            bound: "at least 1",
        }),
        _ => Ok(()),
    }
}

/// `[agent] max_pause` and `max_unavailable`, over the defaults.
fn pause_bounds(agent: &file::Agent) -> Result<(Duration, u32), SettingsError> {
    let max_pause = agent.max_pause.map_or(defaults::MAX_PAUSE, |s| s.0);
    if max_pause.is_zero() || max_pause > defaults::LONGEST_MAX_PAUSE {
        return Err(SettingsError::OutOfRange {
            section: "agent",
            key: "max_pause",
            value: format!("{}s", max_pause.as_secs()),
            bound: "at least 1s and at most 168h",
        });
    }
    let max_unavailable = agent.max_unavailable.unwrap_or(defaults::MAX_UNAVAILABLE);
    at_least_one("agent", "max_unavailable", Some(max_unavailable))?;
    Ok((max_pause, max_unavailable))
}

/// Gates for every ticket: `[gates] run`, then `flag_gates` (command
/// lines, split like a shell splits words).
pub fn extra_gates(flag_gates: Vec<String>, file: &Config) -> Result<Vec<Gate>, SettingsError> {
    let mut gates: Vec<Gate> = Vec::new();
    for g in &file.gates.run {
        match g {
            file::GateCommand::Argv(argv) if argv.is_empty() => {}
            file::GateCommand::Argv(argv) => gates.push(gate_from_argv(argv)),
            file::GateCommand::Line(line) => gates
                .push(parse_gate(line).ok_or_else(|| SettingsError::Unsplittable(line.clone()))?),
        }
    }
    for g in flag_gates {
        gates.push(parse_gate(&g).ok_or(SettingsError::Unsplittable(g))?);
    }
    Ok(gates)
}

/// How gates run: `timeout` over `[run] gate_timeout_secs` over the default.
pub fn gates(timeout: Option<Duration>, file: &Config) -> GateSettings {
    let file::Gates {
        run: _,
        env,
        flaky_retries,
    } = &file.gates;
    let timeout = timeout
        .or(file.run.gate_timeout_secs.map(Duration::from_secs))
        .unwrap_or(defaults::GATE_TIMEOUT);
    GateSettings {
        env: env.clone(),
        timeout: Some(timeout),
        flaky_retries: flaky_retries.unwrap_or(defaults::GATE_FLAKY_RETRIES),
    }
}

/// `[workspace]` (formerly `[worktree]`).
pub fn workspace(file: &Config) -> WorkspaceSettings {
    let file::Workspace {
        setup,
        pristine,
        setup_inputs,
        copy,
        env,
    } = &file.workspace;
    WorkspaceSettings {
        setup: setup.clone(),
        setup_inputs: setup_inputs.clone(),
        pristine: *pristine,
        setup_timeout: Some(defaults::SETUP_TIMEOUT),
        copy: copy.clone(),
        env: env.clone(),
    }
}

/// Where gate checkouts live: `planwright/checkouts` in the user's cache
/// folder, outside every repository, so that nothing a tool finds by
/// walking up from a checkout (Node's `node_modules`, a Cargo workspace, a
/// pytest `rootdir`) is the user's own; none without a cache folder or a
/// home. A relative one is ignored, as the XDG specification says.
fn checkouts_home(env: &Env) -> Option<PathBuf> {
    let cache = env
        .cache_home
        .clone()
        .filter(|c| c.is_absolute())
        .or_else(|| {
            let home = env.home.as_ref().filter(|h| h.is_absolute())?;
            Some(home.join(".cache"))
        })?;
    Some(cache.join("planwright").join("checkouts"))
}

/// `[sandbox]`, `[git] allow_config` and `[agent] log_limit_mib`; `~/` in
/// `writable` and `readable` is `env.home`.
pub fn sandbox(file: &Config, env: &Env) -> ContainSettings {
    let file::Sandbox {
        mode,
        writable,
        readable,
        gate_network,
        gate_overlay,
        agent_network,
        allow,
        hosts,
        memory,
        pids,
    } = &file.sandbox;
    let file::Git { allow_config } = &file.git;
    let expand = |d: &String| match (d.strip_prefix("~/"), &env.home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(d),
    };
    let log_limit = file
        .agent
        .log_limit_mib
        .map_or(defaults::AGENT_LOG_LIMIT, |m| {
            m.saturating_mul(defaults::MIB)
        });
    ContainSettings {
        mode: *mode,
        writable: writable.iter().map(expand).collect(),
        readable: readable.iter().map(expand).collect(),
        gate_network: *gate_network,
        gate_overlay: *gate_overlay,
        allow_config: allow_config.clone(),
        agent_log_limit: Some(log_limit),
        agent_network: *agent_network,
        allow: allow.clone(),
        hosts: hosts
            .iter()
            .map(|(name, addr)| (name.trim_end_matches('.').to_ascii_lowercase(), *addr))
            .collect(),
        memory: memory.map_or(Some(defaults::MEMORY), |m| m.0),
        pids: pids.map_or(Some(defaults::PIDS), |p| p.0),
        checkouts: checkouts_home(env),
    }
}

/// The agent that does the work: `flags` over `[agent]`; a template alone
/// selects the `cmd` agent.
pub fn agent(flags: AgentFlags, file: &Config) -> Result<AgentSpec, SettingsError> {
    let AgentFlags { name, cmd } = flags;
    let file::Agent {
        name: file_name,
        cmd: file_cmd,
        model,
        args,
        program,
        isolate,
        state,
        timeout_secs: _,
        log_limit_mib: _,
        line_limit_kib,
        max_pause: _,
        max_unavailable: _,
        env,
    } = &file.agent;
    let template = cmd.or_else(|| file_cmd.clone());
    let name = name
        .or_else(|| file_name.clone())
        .or_else(|| template.as_ref().map(|_| defaults::TEMPLATE_AGENT.into()))
        .ok_or(SettingsError::NoAgent)?;
    Ok(AgentSpec {
        name,
        options: AgentOptions {
            cmd: template,
            model: model.clone(),
            args: args.clone(),
            program: program.clone(),
            isolate: isolate.unwrap_or(defaults::ISOLATE),
            prices: file.prices.clone(),
            env: env.clone(),
            line_limit: line_limit(*line_limit_kib),
            state: state.clone(),
        },
    })
}

/// `[agent] line_limit_kib` in bytes, the default when unset.
fn line_limit(kib: Option<u64>) -> u64 {
    kib.map_or(defaults::AGENT_LINE_LIMIT, |k| {
        k.saturating_mul(defaults::KIB).max(1)
    })
}

/// The family table: the default's rows, with those `[families]` names
/// in their place.
pub fn families(file: &Config) -> planwright_plan::routing::Families {
    planwright_plan::routing::Families::default().with(&file.families)
}

/// The agents of a run: the one `--agent` or `--agent-cmd` names alone
/// (they take precedence over `[agents]`); else `[agents]`'s, one per
/// family, with `[agent]`'s (when it names one) for the tickets no entry
/// serves; else `[agent]`'s alone. An entry gets `[agent]`'s `isolate`,
/// `env` and `[prices]`, never its `model`, `args` or `program`, which are
/// one CLI's.
pub fn agents(flags: AgentFlags, file: &Config) -> Result<AgentsSpec, SettingsError> {
    let flagged = flags.name.is_some() || flags.cmd.is_some();
    if flagged || file.agents.is_empty() {
        return Ok(AgentsSpec {
            run: Some(agent(flags, file)?),
            by_family: Vec::new(),
        });
    }
    let run = match agent(flags, file) {
        Ok(spec) => Some(spec),
        Err(SettingsError::NoAgent) => None,
        Err(e) => return Err(e),
    };
    let by_family = file
        .agents
        .iter()
        .map(|(family, entry)| {
            let spec = AgentSpec {
                name: entry.adapter.clone(),
                options: AgentOptions {
                    cmd: entry.cmd.clone(),
                    isolate: file.agent.isolate.unwrap_or(defaults::ISOLATE),
                    prices: file.prices.clone(),
                    env: file.agent.env.clone(),
                    line_limit: line_limit(file.agent.line_limit_kib),
                    ..AgentOptions::default()
                },
            };
            (family.clone(), spec)
        })
        .collect();
    Ok(AgentsSpec { run, by_family })
}

/// `[review]` and `[counterfactuals]`. The reviewer is an agent of its own,
/// built only from `[review]` (never the writer's `[agent]`).
pub fn review(file: &Config) -> ReviewSettings {
    let file::Review {
        agent,
        cmd,
        model,
        max_diff_lines,
        timeout_secs,
    } = &file.review;
    let file::Counterfactuals { mode } = &file.counterfactuals;
    let reviewer = match (agent, cmd) {
        (None, None) => None,
        (name, cmd) => Some(AgentSpec {
            name: name
                .clone()
                .unwrap_or_else(|| defaults::TEMPLATE_AGENT.into()),
            options: AgentOptions {
                cmd: cmd.clone(),
                model: model.clone(),
                prices: file.prices.clone(),
                line_limit: line_limit(file.agent.line_limit_kib),
                ..AgentOptions::default()
            },
        }),
    };
    ReviewSettings {
        reviewer,
        model: model.clone(),
        max_diff_lines: *max_diff_lines,
        timeout: Some(timeout_secs.map_or(defaults::REVIEW_TIMEOUT, Duration::from_secs)),
        counterfactuals_advisory: *mode == CounterfactualMode::Advisory,
    }
}

/// `[budget]`, as written.
pub fn budget(file: &Config) -> BudgetSettings {
    file.budget.clone()
}

/// What validating a plan takes into account besides the document:
/// `flags` and `env`, `[routing]`, `[commands]` and `[standard_v1]`.
/// The caller adds what is not a setting (the syntax, the repository's
/// files, how many overlaps to show).
pub fn validation(flags: ValidationFlags, file: &Config, env: &Env) -> Options {
    let ValidationFlags {
        format,
        no_strict_gates,
        issue,
        coerce,
        max_files_changed,
        calibration_hint,
        tag,
    } = flags;
    let file::StandardV1 {
        max_files_changed: file_cap,
        calibration_hint: file_hint,
    } = &file.standard_v1;
    let strict_env = env.agb_strict_gates.as_deref().is_none_or(|v| v != "0");
    Options {
        format,
        strict_gates: !no_strict_gates && strict_env,
        routing: file.routing.clone(),
        allowed_commands: file.commands.allow.clone(),
        issue,
        coerce,
        max_files_changed,
        calibration_hint,
        standard_v1: StandardV1Defaults {
            max_files_changed: *file_cap,
            calibration_hint: *file_hint,
        },
        tag,
        ..Options::default()
    }
}

/// Splits a gate given as one command line (`cargo test -q`) into a gate,
/// like a shell splits words.
pub fn parse_gate(text: &str) -> Option<Gate> {
    let argv = shlex::split(text).filter(|a| !a.is_empty())?;
    Some(Gate {
        name: text.to_string(),
        argv,
    })
}

/// A gate from a configured argv.
pub fn gate_from_argv(argv: &[String]) -> Gate {
    Gate {
        name: argv.join(" "),
        argv: argv.to_vec(),
    }
}
