//! The settings a run works with, every flag, file value and default
//! already applied ([`crate::resolve`] makes them). The engine takes these
//! types as they are.

use crate::budget::BudgetSettings;
use crate::defaults;
use crate::file::SandboxMode;
use crate::network::{AgentNetwork, HostPort};
use crate::prices::Prices;
use planwright_plan::model::Gate;
use planwright_plan::overlap::Overlap;
use planwright_plan::routing::{Families, Routing};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Where a run's `planwright.toml` was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigSource {
    /// A file on disk: `--config`, or the one found beside the plan or in
    /// the current directory.
    File(PathBuf),
    /// [`CONFIG_FILE`](crate::CONFIG_FILE) at the repository's root, as the
    /// base commit `commit` holds it (never the working tree).
    Base {
        /// The base commit it was read from.
        commit: String,
    },
}

/// Where the base branch a run merges into was named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaseSource {
    /// `--base`.
    Flag,
    /// `[run] base` in `planwright.toml`.
    File,
    /// The plan's own `base` (agb and native plans).
    Plan,
    /// The branch the repository's checkout is on.
    CurrentBranch,
}

/// The base branch a flag or the file names: the run's, over the plan's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChosenBase {
    /// The branch.
    pub name: String,
    /// Where it was named.
    pub source: BaseSource,
}

/// Everything a run is configured with.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// The plan file as given (for the record).
    pub plan_path: String,
    /// Where the settings' `planwright.toml` came from, if there is one.
    pub config_source: Option<ConfigSource>,
    /// A ticket whose scope names the plan or configuration file itself may
    /// change it.
    pub allow_config_change: bool,
    /// Slots: attempts worked on at once.
    pub jobs: usize,
    /// Rejected attempts a ticket may have in one invocation.
    pub strikes: u32,
    /// Where a retry after a rejected candidate starts (`[run] retry_from`).
    pub retry_from: crate::RetryFrom,
    /// Free space below which no attempt starts (`[run] min_free`).
    pub min_free: crate::MinFree,
    /// The longest pause of a model pool or ticket whose model could not
    /// serve it.
    pub max_pause: Duration,
    /// Unavailable outcomes in a row after which a ticket fails, in one
    /// invocation.
    pub max_unavailable: u32,
    /// The agent's wall-clock limit per attempt.
    pub agent_timeout: Option<Duration>,
    /// Gates added to every ticket (`[gates] run`, then the command line's).
    pub extra_gates: Vec<Gate>,
    /// How gates run.
    pub gates: GateSettings,
    /// How the merge queue batches (`[merge]`).
    pub merge: MergeSettings,
    /// How workspaces and gate checkouts are prepared (`[workspace]`).
    pub workspace: WorkspaceSettings,
    /// The sandbox, the accepted git config and the agent's log cap.
    pub contain: ContainSettings,
    /// Model pools and caps.
    pub routing: Routing,
    /// The model each family's CLI gets per tier when a ticket's pool hint
    /// leaves it none (planwright's own table; validation never reads it).
    pub families: Families,
    /// Review passes and counterfactuals, after the gates.
    pub beyond: ReviewSettings,
    /// Ceilings on cost and tokens, for the run and each ticket.
    pub budget: BudgetSettings,
    /// `[prices]`: what the budget counts an attempt with no cost at
    /// ([`Prices::ceiling`]).
    pub prices: Prices,
    /// The plan's overlap forecast when the caller already made it
    /// (validation does, for its warnings): preflight filters it rather
    /// than forecasting a large plan again. `None`: preflight makes it.
    pub overlaps: Option<Vec<Overlap>>,
    /// Where attempts run (`[executor]`).
    pub executor: ExecutorSettings,
    /// The base branch `--base` or `[run] base` names; `None`: the plan's
    /// where its format has one, else the repository's current branch.
    pub base: Option<ChosenBase>,
    /// Preflight runs the plan's and the configured gates once on the base
    /// commit (front ends turn it on; `--no-gate-probe` off).
    pub gate_probe: bool,
    /// Gates that fail on the base commit are a warning (`--allow-red-base`).
    pub allow_red_base: bool,
    /// How the coordinator and its workers keep in touch (`[executor]`).
    pub worker_link: WorkerLink,
}

/// How a coordinator and its workers keep in touch (`[executor]`
/// `heartbeat`, `lost_after`, `allow_version_skew`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkerLink {
    /// How often each side sends a heartbeat.
    pub heartbeat: Duration,
    /// The silence after which a worker is lost (and a worker ends its
    /// attempt and exits).
    pub lost_after: Duration,
    /// Whether a worker of another build of planwright (the same
    /// protocol) is accepted.
    pub allow_version_skew: bool,
    /// How long a slot whose worker was lost rests, doubled with each
    /// loss of it in a row.
    pub lost_backoff: Duration,
    /// Lost workers at which a run stops; `None`: twice its slots.
    pub max_lost: Option<u32>,
}

impl Default for WorkerLink {
    fn default() -> WorkerLink {
        WorkerLink {
            heartbeat: defaults::HEARTBEAT,
            lost_after: defaults::LOST_AFTER,
            allow_version_skew: false,
            lost_backoff: defaults::LOST_BACKOFF,
            max_lost: None,
        }
    }
}

/// Where attempts run (`[executor]`, resolved).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ExecutorSettings {
    /// In this process.
    #[default]
    Local,
    /// In `planwright worker` processes on this machine.
    Process {
        /// The worker's command line; empty: this planwright's `worker`.
        command: Vec<String>,
    },
    /// In `planwright worker` on other machines, through `ssh`.
    Ssh {
        /// The hosts.
        hosts: Vec<String>,
        /// Attempts each host runs at once.
        slots_per_host: usize,
        /// The `ssh` command line before the host.
        ssh: Vec<String>,
        /// The worker's command line on the host.
        command: Vec<String>,
        /// `ssh`'s `ServerAliveInterval`.
        keepalive: Duration,
    },
    /// In `planwright worker` in Kubernetes pods, a pod per slot.
    Kubernetes(KubernetesSettings),
}

/// `[executor.kubernetes]`, resolved: every name checked against
/// Kubernetes' rules for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubernetesSettings {
    /// The pods' image.
    pub image: String,
    /// Their namespace; `None`: the kubeconfig context's.
    pub namespace: Option<String>,
    /// What each pod asks for and is held to, as (resource, quantity):
    /// `cpu`, `memory`, `ephemeral-storage`.
    pub resources: Vec<(String, String)>,
    /// Node labels the pods need.
    pub node_selector: std::collections::BTreeMap<String, String>,
    /// Their `RuntimeClass`.
    pub runtime_class: Option<String>,
    /// Secrets whose keys become the worker's environment.
    pub secrets: Vec<String>,
    /// The worker's command line in the pod.
    pub command: Vec<String>,
    /// The run's agent limit, which the pods' deadline counts from.
    pub agent_timeout: Option<Duration>,
    /// The kubeconfig; `None`: `KUBECONFIG`, `~/.kube/config`, or the
    /// account of the pod planwright runs in.
    pub kubeconfig: Option<PathBuf>,
    /// The user's pod template (YAML), read and checked when the pods'
    /// transport is made.
    pub pod_template: Option<PathBuf>,
}

impl ExecutorSettings {
    /// The attempts it can run at once, when it is not this machine's.
    pub fn slots(&self) -> Option<usize> {
        match self {
            ExecutorSettings::Ssh {
                hosts,
                slots_per_host,
                ..
            } => Some(hosts.len() * slots_per_host),
            _ => None,
        }
    }
}

/// The merge queue's settings (`[merge]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeSettings {
    /// Verified candidates checked as one stack at most (1: one at a time).
    pub batch: usize,
    /// The longest a batch waits to fill while tickets are still in their
    /// own verification.
    pub wait: Duration,
    /// Times a red stack runs again before it is bisected.
    pub flaky_retries: u32,
    /// Merge checkouts: how many stacks are checked at once.
    pub checkouts: usize,
    /// New attempts without a strike after a textual merge conflict.
    pub max_rebuilds: u32,
}

impl Default for MergeSettings {
    fn default() -> MergeSettings {
        MergeSettings {
            batch: defaults::MERGE_BATCH,
            wait: defaults::MERGE_WAIT,
            flaky_retries: defaults::FLAKY_RETRIES,
            checkouts: defaults::MERGE_CHECKOUTS,
            max_rebuilds: defaults::MAX_REBUILDS,
        }
    }
}

impl RunSettings {
    /// The defaults ([`defaults`]), with [`defaults::JOBS`] slots: a front
    /// end that knows the machine resolves the number of slots from its
    /// cores ([`crate::resolve::run`]).
    pub fn new(plan_path: impl Into<String>) -> RunSettings {
        RunSettings {
            plan_path: plan_path.into(),
            config_source: None,
            allow_config_change: false,
            jobs: defaults::JOBS,
            strikes: defaults::STRIKES,
            retry_from: crate::RetryFrom::default(),
            min_free: defaults::MIN_FREE,
            max_pause: defaults::MAX_PAUSE,
            max_unavailable: defaults::MAX_UNAVAILABLE,
            agent_timeout: Some(defaults::AGENT_TIMEOUT),
            extra_gates: vec![],
            gates: GateSettings {
                env: vec![],
                timeout: Some(defaults::GATE_TIMEOUT),
                flaky_retries: defaults::GATE_FLAKY_RETRIES,
            },
            merge: MergeSettings::default(),
            workspace: WorkspaceSettings {
                setup: vec![],
                setup_inputs: vec![],
                pristine: false,
                setup_timeout: Some(defaults::SETUP_TIMEOUT),
                copy: vec![],
                env: vec![],
            },
            contain: ContainSettings::default(),
            routing: Routing::default(),
            families: Families::default(),
            beyond: ReviewSettings::default(),
            budget: BudgetSettings::default(),
            prices: Prices::default(),
            overlaps: None,
            executor: ExecutorSettings::Local,
            worker_link: WorkerLink::default(),
            base: None,
            gate_probe: false,
            allow_red_base: false,
        }
    }
}

/// How gates run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GateSettings {
    /// Variables passed through besides the built-in allowlist (`[gates] env`).
    pub env: Vec<String>,
    /// Wall-clock limit of each gate.
    pub timeout: Option<Duration>,
    /// Times the gates of a candidate that failed in its attempt's own
    /// gate checkout run again on the same tree before the attempt is
    /// rejected (`[gates] flaky_retries`).
    pub flaky_retries: u32,
}

/// `[workspace]`: how workspaces and gate checkouts are prepared.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkspaceSettings {
    /// The project's set-up step, run by planwright in each workspace and
    /// gate checkout (`[workspace] setup`, e.g. `npm ci`).
    pub setup: Vec<Vec<String>>,
    /// Files whose content keys the set-up cache (`[workspace]
    /// setup_inputs`, e.g. `package-lock.json`): set-up runs again when one
    /// changes.
    pub setup_inputs: Vec<String>,
    /// Also remove ignored files (such as an agent's `node_modules`) from a
    /// workspace between tickets.
    pub pristine: bool,
    /// Time limit of each set-up command.
    pub setup_timeout: Option<Duration>,
    /// Files git ignores (`[workspace] copy`, e.g. `.env`) copied from the
    /// user's checkout into each agent workspace after every reset.
    pub copy: Vec<String>,
    /// Variables passed to the set-up besides the base set (`[workspace]
    /// env`; `PREFIX_*` keeps every name with that prefix).
    pub env: Vec<String>,
}

/// What `[sandbox]`, `[git] allow_config` and `[agent] log_limit_mib` set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainSettings {
    /// Enforce or off.
    pub mode: SandboxMode,
    /// More directories every agent may write (`[sandbox] writable`), `~/`
    /// already expanded.
    pub writable: Vec<PathBuf>,
    /// More files and folders every confined process may read where its
    /// view hides them (`[sandbox] readable`), `~/` already expanded.
    pub readable: Vec<PathBuf>,
    /// Whether gates may use the network (`[sandbox] gate_network`).
    pub gate_network: bool,
    /// Whether gates write their checkout through an overlay where the
    /// kernel allows (`[sandbox] gate_overlay`).
    pub gate_overlay: bool,
    /// Repository configuration keys accepted although they run programs.
    pub allow_config: Vec<String>,
    /// The cap of an agent's log per attempt, in bytes.
    pub agent_log_limit: Option<u64>,
    /// How agents and set-ups reach the network (`[sandbox] agent_network`).
    pub agent_network: AgentNetwork,
    /// More hosts they may reach through the proxy (`[sandbox] allow`).
    pub allow: Vec<HostPort>,
    /// Names mapped to an address (`[sandbox] hosts`), in lower case.
    pub hosts: Vec<(String, SocketAddr)>,
    /// Bytes of memory of each confined child (`[sandbox] memory`).
    pub memory: Option<u64>,
    /// Processes and threads of each confined child (`[sandbox] pids`).
    pub pids: Option<u64>,
    /// The folder holding the gate checkouts of every repository, one
    /// folder each (`$XDG_CACHE_HOME/planwright/checkouts`); without one,
    /// they live in the repository's `.planwright/checkouts`.
    pub checkouts: Option<PathBuf>,
}

impl Default for ContainSettings {
    fn default() -> Self {
        ContainSettings {
            mode: SandboxMode::Enforce,
            writable: Vec::new(),
            readable: Vec::new(),
            gate_network: false,
            gate_overlay: true,
            allow_config: Vec::new(),
            agent_log_limit: Some(defaults::AGENT_LOG_LIMIT),
            agent_network: AgentNetwork::Proxy,
            allow: Vec::new(),
            hosts: Vec::new(),
            memory: Some(defaults::MEMORY),
            pids: Some(defaults::PIDS),
            checkouts: None,
        }
    }
}

/// The `[agent]` settings an agent is built with (sent to a worker as
/// they are, so serializable).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentOptions {
    /// The `cmd` agent's template.
    pub cmd: Option<String>,
    /// A model for every attempt, over the routed one.
    pub model: Option<String>,
    /// Arguments appended to an adapter's own.
    pub args: Vec<String>,
    /// The CLI's executable, instead of its usual name.
    pub program: Option<String>,
    /// Whether each slot gets its own CLI state.
    pub isolate: bool,
    /// Prices for CLIs that report no cost.
    pub prices: Prices,
    /// Variables passed through besides the base set and the adapter's
    /// own (`[agent] env`; `PREFIX_*` keeps every name with that prefix).
    pub env: Vec<String>,
    /// The longest line of the agent's output read, in bytes (`[agent]
    /// line_limit_kib`).
    #[serde(default = "default_line_limit")]
    pub line_limit: u64,
    /// The adapter whose per-slot set-up an `acp` agent gets (`[agent]
    /// state`); `None`: the one its program is known as, if any.
    #[serde(default)]
    pub state: Option<String>,
}

fn default_line_limit() -> u64 {
    defaults::AGENT_LINE_LIMIT
}

impl Default for AgentOptions {
    fn default() -> Self {
        AgentOptions {
            cmd: None,
            model: None,
            args: Vec::new(),
            program: None,
            isolate: defaults::ISOLATE,
            prices: Prices::default(),
            env: Vec::new(),
            line_limit: defaults::AGENT_LINE_LIMIT,
            state: None,
        }
    }
}

/// An agent as settings name it: the engine's adapter registry builds it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSpec {
    /// `claude`, `codex`, ..., `cmd` or `scripted:DIR`.
    pub name: String,
    /// What it is built with.
    pub options: AgentOptions,
}

impl AgentSpec {
    /// The `cmd` agent running `template`.
    pub fn cmd(template: impl Into<String>) -> AgentSpec {
        AgentSpec {
            name: defaults::TEMPLATE_AGENT.into(),
            options: AgentOptions {
                cmd: Some(template.into()),
                ..AgentOptions::default()
            },
        }
    }
}

/// The agents of a run ([`crate::resolve::agents`]).
#[derive(Debug, Clone, PartialEq)]
pub struct AgentsSpec {
    /// The run's agent: the tickets no `[agents]` entry serves go to it.
    pub run: Option<AgentSpec>,
    /// `[agents]`: family -> its agent, in the order of the families' names.
    pub by_family: Vec<(String, AgentSpec)>,
}

/// How review passes and counterfactuals run (`[review]`,
/// `[counterfactuals]`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReviewSettings {
    /// The reviewer; none means no review passes.
    pub reviewer: Option<AgentSpec>,
    /// Its model (default: another family's, from the routing table).
    pub model: Option<String>,
    /// A diff longer than this is blocked without a review.
    pub max_diff_lines: Option<usize>,
    /// One review's time limit.
    pub timeout: Option<Duration>,
    /// A counterfactual nothing pins is reported, not a failure.
    pub counterfactuals_advisory: bool,
}
