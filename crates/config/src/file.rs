//! `planwright.toml`: what the file says, section by section, before any
//! flag or default is applied ([`crate::resolve`] does that).
//!
//! Unknown keys are errors, so a typo never silently falls back to a
//! default. Reading the file from disk is the caller's business.

use crate::budget::BudgetSettings;
use crate::duration::DurationSetting;
use crate::network::{AgentNetwork, HostPort};
use crate::prices::Prices;
use planwright_plan::routing::{FamilyModels, Routing};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::SocketAddr;

/// The whole configuration file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// `[routing]`: tier x pool hint -> candidate models, and model pool caps.
    #[serde(default)]
    pub routing: Routing,
    /// `[families]`: the model each family's CLI gets per tier when a
    /// ticket's pool hint leaves it none of its family (rows it names
    /// replace the default's).
    #[serde(default)]
    pub families: BTreeMap<String, FamilyModels>,
    /// `[agents]`: model family -> the agent that runs its tickets.
    #[serde(default)]
    pub agents: BTreeMap<String, AgentsEntry>,
    /// `[commands]`: the codeboost `cmd` allowlist.
    #[serde(default)]
    pub commands: Commands,
    /// `[standard_v1]`.
    #[serde(default)]
    pub standard_v1: StandardV1,
    /// `[run]`: how `planwright run` schedules and retries.
    #[serde(default)]
    pub run: Run,
    /// `[gates]`: gates for formats that cannot state them, and their environment.
    #[serde(default)]
    pub gates: Gates,
    /// `[merge]`: how the merge queue batches verified candidates.
    #[serde(default)]
    pub merge: Merge,
    /// `[workspace]` (formerly `[worktree]`): how each slot's workspace
    /// and gate checkout are prepared.
    #[serde(default)]
    pub workspace: Workspace,
    /// `[agent]`: which agent does the work.
    #[serde(default)]
    pub agent: Agent,
    /// `[review]`: the reviewer that reads every candidate after its gates.
    #[serde(default)]
    pub review: Review,
    /// `[counterfactuals]`: what a counterfactual nothing pins does.
    #[serde(default)]
    pub counterfactuals: Counterfactuals,
    /// `[prices]`: USD per million tokens per model, for CLIs that report no cost.
    #[serde(default)]
    pub prices: Prices,
    /// `[budget]`: cost and token ceilings per run and per ticket.
    #[serde(default)]
    pub budget: BudgetSettings,
    /// `[sandbox]`: how agents and gates are confined.
    #[serde(default)]
    pub sandbox: Sandbox,
    /// `[git]`: repository configuration planwright's git may honour.
    #[serde(default)]
    pub git: Git,
    /// `[executor]`: where attempts run.
    #[serde(default)]
    pub executor: Executor,
    /// `[forge]`: where `planwright deliver` pushes and opens pull requests.
    #[serde(default)]
    pub forge: Forge,
    /// `[respond]`: how `planwright respond` answers reviews and checks.
    #[serde(default)]
    pub respond: crate::respond::Respond,
}

/// `[forge]`: `kind = "github"`, `remote = "origin"`, `api_url =
/// "https://ghe.example.com/api/v3"`, `repository = "owner/name"`,
/// `token_env = "GITHUB_TOKEN"`, `per = "run"`, `branch =
/// "planwright/{run}"`, `draft = false` (docs/forge.md).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Forge {
    /// `github`, `gitlab` or `forgejo` (`gitea` is `forgejo`); default from
    /// the remote's host.
    #[serde(default)]
    pub kind: Option<crate::forge::ForgeKind>,
    /// The git remote to push to (default `origin`).
    #[serde(default)]
    pub remote: Option<String>,
    /// The API's root (default the public host's).
    #[serde(default)]
    pub api_url: Option<crate::forge::ApiUrl>,
    /// `owner/name` (default: the remote URL's last two path segments).
    #[serde(default)]
    pub repository: Option<crate::forge::RepositoryName>,
    /// The variable holding the token (default per kind).
    #[serde(default)]
    pub token_env: Option<crate::forge::VariableName>,
    /// One pull request per `run` (default) or per `ticket`.
    #[serde(default)]
    pub per: crate::forge::Per,
    /// The remote branch (default `planwright/{run}`, and
    /// `planwright/{run}/{ticket}` for `per = "ticket"`).
    #[serde(default)]
    pub branch: Option<crate::forge::BranchTemplate>,
    /// Open pull requests as drafts (default false).
    #[serde(default)]
    pub draft: bool,
}

/// `[executor] kind`: where attempts run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecutorKind {
    /// In this process, in the repository's own workspaces.
    #[default]
    Local,
    /// In `planwright worker` processes on this machine.
    Process,
    /// In `planwright worker` on other machines, through `ssh`.
    Ssh,
    /// In `planwright worker` in Kubernetes pods, a pod per slot.
    Kubernetes,
}

/// `[executor]`: where attempts run (docs/scaling.md).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Executor {
    /// `local` (default), `process`, `ssh` or `kubernetes`.
    #[serde(default)]
    pub kind: ExecutorKind,
    /// The worker's command line (default: this planwright's `worker`
    /// for `process`, `planwright worker` on the host for `ssh`).
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// `ssh`: the hosts, as `ssh` names them (`build-1`, `user@host`).
    #[serde(default)]
    pub hosts: Vec<String>,
    /// `ssh`: attempts each host runs at once (default 1).
    #[serde(default)]
    pub slots_per_host: Option<u32>,
    /// `ssh`: the `ssh` command line before the host (default `["ssh"]`).
    #[serde(default)]
    pub ssh_command: Option<Vec<String>>,
    /// `[executor.kubernetes]`: the pods of `kind = "kubernetes"`.
    #[serde(default)]
    pub kubernetes: Option<Kubernetes>,
    /// How often the coordinator and its workers say they are there
    /// (default 5 s).
    #[serde(default)]
    pub heartbeat: Option<DurationSetting>,
    /// The silence after which a worker is lost, and a worker ends its
    /// attempt (default 30 s).
    #[serde(default)]
    pub lost_after: Option<DurationSetting>,
    /// Accept workers of another planwright build (same protocol).
    #[serde(default)]
    pub allow_version_skew: bool,
    /// `ssh`: `ServerAliveInterval` (default 15 s; 3 missed end the session).
    #[serde(default)]
    pub ssh_keepalive: Option<DurationSetting>,
    /// How long a slot whose worker was lost rests before a new worker
    /// serves it, doubled with each loss of it in a row (default 10 s).
    #[serde(default)]
    pub lost_backoff: Option<DurationSetting>,
    /// Lost workers at which the run stops (default: twice its slots).
    #[serde(default)]
    pub max_lost: Option<u32>,
}

/// `[executor.kubernetes]`: `image = "registry/planwright-worker:1"`,
/// `namespace = "planwright"`, `resources = { cpu = "2", memory = "4Gi" }`,
/// `node_selector = { pool = "agents" }`, `runtime_class = "gvisor"`,
/// `secrets = ["model-keys"]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Kubernetes {
    /// The pods' image: planwright and the agents' CLIs.
    #[serde(default)]
    pub image: Option<String>,
    /// The namespace of the pods (default: the kubeconfig context's).
    #[serde(default)]
    pub namespace: Option<String>,
    /// What each pod asks for and is held to.
    #[serde(default)]
    pub resources: Option<Resources>,
    /// The labels of the nodes the pods may run on.
    #[serde(default)]
    pub node_selector: std::collections::BTreeMap<String, String>,
    /// The `RuntimeClass` of the pods (`gvisor`, `kata`).
    #[serde(default)]
    pub runtime_class: Option<String>,
    /// Secrets, by name, whose keys become the worker's environment; their
    /// values never enter the pod spec.
    #[serde(default)]
    pub secrets: Vec<String>,
    /// The kubeconfig naming the cluster (default: as kubectl finds it).
    #[serde(default)]
    pub kubeconfig: Option<std::path::PathBuf>,
    /// A pod's YAML whose scheduling fields, labels, annotations and extra
    /// volumes the pods get, under what planwright sets.
    #[serde(default)]
    pub pod_template: Option<std::path::PathBuf>,
}

/// `[executor.kubernetes] resources`: requests that are also limits.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Resources {
    /// CPU, as Kubernetes writes it (`2`, `500m`).
    #[serde(default)]
    pub cpu: Option<String>,
    /// Memory, as Kubernetes writes it (`4Gi`).
    #[serde(default)]
    pub memory: Option<String>,
    /// Scratch disk, as Kubernetes writes it (`20Gi`).
    #[serde(default)]
    pub ephemeral_storage: Option<String>,
}

/// `[sandbox] mode`, and the mode a run is confined in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    /// Confine agents and gates, or refuse to run.
    #[default]
    Enforce,
    /// Run them unconfined (processes are still contained where possible).
    Off,
}

/// `[sandbox]`: `mode = "enforce"`, `writable = ["~/.npm"]`, `readable =
/// ["~/.npmrc"]`,
/// `gate_network = false`, `gate_overlay = true`, `agent_network =
/// "proxy"`, `allow = ["host:port"]`, `hosts = { "name" = "127.0.0.1:PORT" }`,
/// `memory = "4G"`, `pids = 4096`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sandbox {
    /// Enforce (default) or off.
    #[serde(default)]
    pub mode: SandboxMode,
    /// More directories every agent may write (its CLI's state, a package
    /// cache); `~/` is the home directory.
    #[serde(default)]
    pub writable: Vec<String>,
    /// More files and folders every confined process may read where its
    /// view hides them (the home, `/tmp`); `~/` is the home directory.
    #[serde(default)]
    pub readable: Vec<String>,
    /// Whether gates may use the network (default: loopback only).
    #[serde(default)]
    pub gate_network: bool,
    /// Whether gates write their checkout through an overlay where the
    /// kernel allows (default), rather than the checkout itself.
    #[serde(default = "yes")]
    pub gate_overlay: bool,
    /// How agents and set-ups reach the network (default: through
    /// planwright's proxy).
    #[serde(default)]
    pub agent_network: AgentNetwork,
    /// Hosts the proxy lets agents and set-ups reach, besides the
    /// adapter's and the package managers' defaults.
    #[serde(default)]
    pub allow: Vec<HostPort>,
    /// Names the proxy maps to an address (a local model gateway), each
    /// reached whatever its address.
    #[serde(default)]
    pub hosts: BTreeMap<String, SocketAddr>,
    /// Memory of each confined child and all it starts: `"4G"`, `"512M"`
    /// or `"off"` (default 4 GiB).
    #[serde(default)]
    pub memory: Option<crate::size::SizeSetting>,
    /// Processes and threads of each confined child and all it starts,
    /// or `"off"` (default 4096).
    #[serde(default)]
    pub pids: Option<crate::size::CountSetting>,
}

impl Default for Sandbox {
    fn default() -> Self {
        Sandbox {
            mode: SandboxMode::default(),
            writable: Vec::new(),
            readable: Vec::new(),
            gate_network: false,
            gate_overlay: true,
            agent_network: AgentNetwork::default(),
            allow: Vec::new(),
            hosts: BTreeMap::new(),
            memory: None,
            pids: None,
        }
    }
}

fn yes() -> bool {
    true
}

/// `[git]`: `allow_config = ["filter.lfs.clean", "filter.lfs.smudge"]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Git {
    /// Repository configuration keys accepted by name although they run a
    /// program (filters, drivers) or redirect git (includes).
    #[serde(default)]
    pub allow_config: Vec<String>,
}

/// `[run]`; each key has a command-line flag that wins over it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Run {
    /// Slots: tickets worked on at once (default: the number of cores).
    #[serde(default)]
    pub jobs: Option<u32>,
    /// Attempts per ticket before it fails (default 2).
    #[serde(default)]
    pub strikes: Option<u32>,
    /// Wall-clock limit of one gate command, in seconds (default 600).
    #[serde(default)]
    pub gate_timeout_secs: Option<u64>,
    /// Where a retry after a rejected candidate starts (default `candidate`).
    #[serde(default)]
    pub retry_from: RetryFrom,
    /// Free space below which no attempt starts: `"1G"`, `"5%"` or
    /// `"off"` (default: 1 GiB or 5% of the disk, whichever is smaller).
    #[serde(default)]
    pub min_free: Option<crate::size::MinFree>,
    /// The branch tickets merge into (default: the plan's `base` where its
    /// format has one, else the repository's current branch).
    #[serde(default)]
    pub base: Option<String>,
}

/// `[merge]`: `batch = 8`, `wait_secs = 5`, `flaky_retries = 1`,
/// `checkouts = 2`, `max_rebuilds = 2`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Merge {
    /// Verified candidates checked as one stack at most.
    #[serde(default)]
    pub batch: Option<u32>,
    /// The longest a batch waits to fill while other tickets are still in
    /// their own verification, in seconds.
    #[serde(default)]
    pub wait_secs: Option<u64>,
    /// Times a red stack runs again before it is bisected.
    #[serde(default)]
    pub flaky_retries: Option<u32>,
    /// Merge checkouts, so stacks checked at once.
    #[serde(default)]
    pub checkouts: Option<u32>,
    /// New attempts a ticket may have, without a strike, after its
    /// candidate no longer merges textually.
    #[serde(default)]
    pub max_rebuilds: Option<u32>,
}

/// `[run] retry_from`: where the workspace of a retry after a rejected
/// candidate starts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RetryFrom {
    /// From the previous attempt's candidate, carried onto the current
    /// base (from the base when there is none, or it no longer applies).
    #[default]
    Candidate,
    /// From the current base, with the previous work discarded.
    Base,
}

/// One gate of `[gates] run`: `["cargo", "test"]`, or `"cargo test"` as
/// `--gate` takes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum GateCommand {
    /// The program and its arguments.
    Argv(Vec<String>),
    /// A command line, split into words like a shell does.
    Line(String),
}

impl PartialEq<[&str]> for GateCommand {
    fn eq(&self, other: &[&str]) -> bool {
        matches!(self, GateCommand::Argv(argv) if argv.iter().map(String::as_str).eq(other.iter().copied()))
    }
}

/// `[gates]`: `run = [["cargo", "test"]]` (or `run = ["cargo test"]`),
/// `env = ["RUST_LOG"]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gates {
    /// Gates added to every ticket: each as argv, or as one command line
    /// split into words like `--gate` (never run through a shell).
    #[serde(default)]
    pub run: Vec<GateCommand>,
    /// Environment variables passed through to gates besides the built-in allowlist.
    #[serde(default)]
    pub env: Vec<String>,
    /// Times gates that failed in an attempt's own gate checkout run
    /// again on the same tree before the attempt is rejected (default 1).
    #[serde(default)]
    pub flaky_retries: Option<u32>,
}

/// `[review]`: `agent = "claude"`, `model = "..."`, `max_diff_lines = 2000`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Review {
    /// The reviewer: an agent name as `[agent] name` takes; none means no
    /// review passes.
    #[serde(default)]
    pub agent: Option<String>,
    /// The `cmd` reviewer's command.
    #[serde(default)]
    pub cmd: Option<String>,
    /// The reviewer's model (default: one of another family than the
    /// writer's, from the routing table).
    #[serde(default)]
    pub model: Option<String>,
    /// A diff longer than this is blocked without spending a review.
    #[serde(default)]
    pub max_diff_lines: Option<usize>,
    /// Time limit of one review, in seconds (default 600).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

/// `[counterfactuals] mode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CounterfactualMode {
    /// A counterfactual nothing pins fails the ticket (`control_unpinned`).
    #[default]
    Enforce,
    /// It is reported, and the ticket may still merge.
    Advisory,
}

/// `[counterfactuals]`: `mode = "enforce" | "advisory"`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Counterfactuals {
    /// Enforce (default) or advisory.
    #[serde(default)]
    pub mode: CounterfactualMode,
}

/// `[workspace]` (formerly `[worktree]`): `setup = [["npm", "ci"]]`,
/// `pristine = false`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workspace {
    /// Commands run once in each new workspace and gate checkout, as argv.
    #[serde(default)]
    pub setup: Vec<Vec<String>>,
    /// Also delete ignored files (such as `node_modules`) between tickets.
    #[serde(default)]
    pub pristine: bool,
    /// Files whose content keys the set-up's cache (`package-lock.json`).
    #[serde(default)]
    pub setup_inputs: Vec<String>,
    /// Files git ignores (`.env`) copied from the user's checkout into each
    /// agent workspace after every reset, as paths relative to the root.
    #[serde(default)]
    pub copy: Vec<String>,
    /// Variables of planwright's environment the set-up gets besides the
    /// base set (`NPM_TOKEN`, or `PREFIX_*`).
    #[serde(default)]
    pub env: Vec<String>,
}

/// `[agent]`: `name = "cmd"`, `cmd = "my-agent {prompt_file}"`, `timeout_secs = 1800`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Agent {
    /// The agent: `claude`, `codex`, `gemini`, `agy`, `aider`, `opencode`,
    /// `copilot`, `cmd`, `acp` or `scripted:DIR`.
    #[serde(default)]
    pub name: Option<String>,
    /// The `cmd` agent's command template.
    #[serde(default)]
    pub cmd: Option<String>,
    /// Wall-clock limit of one agent attempt, in seconds (default 1800).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    /// The cap of one attempt's agent log, in MiB (default 64).
    #[serde(default)]
    pub log_limit_mib: Option<u64>,
    /// The longest line of an agent's output planwright reads, in KiB
    /// (default 1024); the rest of a longer line is dropped with a note.
    #[serde(default)]
    pub line_limit_kib: Option<u64>,
    /// A model for every attempt, overriding the one the routing table chose.
    #[serde(default)]
    pub model: Option<String>,
    /// Extra arguments appended to the CLI's own (an adapter only).
    #[serde(default)]
    pub args: Vec<String>,
    /// The CLI's executable, when it is not the usual name on `PATH`.
    #[serde(default)]
    pub program: Option<String>,
    /// Give each slot its own CLI state directory (default true).
    #[serde(default)]
    pub isolate: Option<bool>,
    /// The adapter whose per-slot set-up an `acp` agent gets (`"claude"`),
    /// for a program planwright does not know by name.
    #[serde(default)]
    pub state: Option<String>,
    /// The longest pause after the model could not serve an attempt,
    /// whatever reset time its CLI named (default 6h).
    #[serde(default)]
    pub max_pause: Option<DurationSetting>,
    /// Unavailable outcomes in a row after which a ticket fails as
    /// `unavailable` (default 5).
    #[serde(default)]
    pub max_unavailable: Option<u32>,
    /// Variables of planwright's environment the agent gets besides the
    /// base set and its adapter's own (`NAME`, or `PREFIX_*`).
    #[serde(default)]
    pub env: Vec<String>,
}

/// One entry of `[agents]`: `gemini = "gemini"`, or
/// `gemini = { adapter = "acp", cmd = "gemini --acp" }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AgentsEntry {
    /// The agent, as `[agent] name` takes it.
    pub adapter: String,
    /// The command of a `cmd` or `acp` agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmd: Option<String>,
}

/// How an [`AgentsEntry`] may be written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentsTable {
    adapter: String,
    #[serde(default)]
    cmd: Option<String>,
}

impl<'de> Deserialize<'de> for AgentsEntry {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = AgentsEntry;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an agent name (`\"claude\"`) or a table `{ adapter = \"acp\", cmd = \"gemini --acp\" }`")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<AgentsEntry, E> {
                Ok(AgentsEntry {
                    adapter: v.to_string(),
                    cmd: None,
                })
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                m: M,
            ) -> Result<AgentsEntry, M::Error> {
                let t = AgentsTable::deserialize(serde::de::value::MapAccessDeserializer::new(m))?;
                Ok(AgentsEntry {
                    adapter: t.adapter,
                    cmd: t.cmd,
                })
            }
        }
        d.deserialize_any(Visit)
    }
}

/// `[commands]`: the codeboost command allowlist, `allow = [["cargo", "test"]]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Commands {
    /// Approved argv, matched by exact equality.
    #[serde(default)]
    pub allow: Vec<Vec<String>>,
}

/// `[standard_v1]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StandardV1 {
    /// The implement stage's file cap; the cap advisories need it.
    #[serde(default)]
    pub max_files_changed: Option<u32>,
    /// The planner's prompts render a calibration hint, so a plan must carry
    /// `raw_predicted_runtime_minutes` (an advisory when it does not).
    #[serde(default)]
    pub calibration_hint: bool,
}
