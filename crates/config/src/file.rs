//! `planwright.toml`: the run configuration, as pure data.
//!
//! Reading the file from disk is the caller's business; this module parses
//! text, so the plan crate stays free of I/O. Unknown keys are errors, so a
//! typo never silently falls back to a default.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The whole configuration file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Model routing: tier x pool hint -> candidate models, and pool caps.
    #[serde(default)]
    pub routing: Routing,
    /// The codeboost `cmd` allowlist.
    #[serde(default)]
    pub commands: Commands,
    /// standard_v1 settings.
    #[serde(default)]
    pub standard_v1: StandardV1Settings,
    /// `[run]`: how `planwright run` schedules and retries.
    #[serde(default)]
    pub run: RunSettings,
    /// `[gates]`: gates for formats that cannot state them, and their environment.
    #[serde(default)]
    pub gates: GateSettings,
    /// `[worktree]`: how the per-slot worktrees are prepared.
    #[serde(default)]
    pub worktree: WorktreeSettings,
    /// `[agent]`: which agent does the work.
    #[serde(default)]
    pub agent: AgentSettings,
    /// `[review]`: the reviewer that reads every candidate after its gates.
    #[serde(default)]
    pub review: ReviewSettings,
    /// `[counterfactuals]`: what a counterfactual nothing pins does.
    #[serde(default)]
    pub counterfactuals: CounterfactualSettings,
    /// `[prices]`: USD per million tokens per model, for CLIs that report no cost.
    #[serde(default)]
    pub prices: Prices,
    /// `[budget]`: cost and token ceilings per run and per ticket.
    #[serde(default)]
    pub budget: BudgetSettings,
    /// `[sandbox]`: how agents and gates are confined.
    #[serde(default)]
    pub sandbox: SandboxSettings,
    /// `[git]`: repository configuration planwright's git may honour.
    #[serde(default)]
    pub git: GitSettings,
}

/// `[sandbox] mode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    /// Confine agents and gates, or refuse to run.
    #[default]
    Enforce,
    /// Run them unconfined (processes are still contained where possible).
    Off,
}

/// `[sandbox]`: `mode = "enforce"`, `writable = ["~/.npm"]`,
/// `gate_network = false`, `gate_overlay = true`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxSettings {
    /// Enforce (default) or off.
    #[serde(default)]
    pub mode: SandboxMode,
    /// More directories every agent may write (its CLI's state, a package
    /// cache); `~/` is the home directory.
    #[serde(default)]
    pub writable: Vec<String>,
    /// Whether gates may use the network (default: loopback only).
    #[serde(default)]
    pub gate_network: bool,
    /// Whether gates write their checkout through an overlay where the
    /// kernel allows (default), rather than the checkout itself.
    #[serde(default = "yes")]
    pub gate_overlay: bool,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        SandboxSettings {
            mode: SandboxMode::default(),
            writable: Vec::new(),
            gate_network: false,
            gate_overlay: true,
        }
    }
}

fn yes() -> bool {
    true
}

/// `[git]`: `allow_config = ["filter.lfs.clean", "filter.lfs.smudge"]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GitSettings {
    /// Repository configuration keys accepted by name although they run a
    /// program (filters, drivers) or redirect git (includes).
    #[serde(default)]
    pub allow_config: Vec<String>,
}

/// `[run]` settings; each has a command-line flag that wins over it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSettings {
    /// Tickets worked on at once (default: the number of cores).
    #[serde(default)]
    pub jobs: Option<u32>,
    /// Attempts per ticket before it fails (default 2).
    #[serde(default)]
    pub strikes: Option<u32>,
    /// Wall-clock limit of one gate command, in seconds (default 600).
    #[serde(default)]
    pub gate_timeout_secs: Option<u64>,
}

/// `[gates]`: `run = [["cargo", "test"]]`, `env = ["RUST_LOG"]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateSettings {
    /// Gates added to every ticket, as argv (never a shell string).
    #[serde(default)]
    pub run: Vec<Vec<String>>,
    /// Environment variables passed through to gates besides the built-in allowlist.
    #[serde(default)]
    pub env: Vec<String>,
}

/// `[review]`: `agent = "claude"`, `model = "..."`, `max_diff_lines = 2000`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewSettings {
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
pub struct CounterfactualSettings {
    /// Enforce (default) or advisory.
    #[serde(default)]
    pub mode: CounterfactualMode,
}

/// `[worktree]`: `setup = [["npm", "ci"]]`, `pristine = false`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorktreeSettings {
    /// Commands run once in each new worktree slot, as argv.
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
}

impl WorktreeSettings {
    /// Rejects a `copy` or `setup_inputs` path that is absolute, empty or
    /// climbs with `..`: both name files inside the repository.
    fn check(&self) -> Result<(), ConfigError> {
        let keys = [("copy", &self.copy), ("setup_inputs", &self.setup_inputs)];
        for (key, paths) in keys {
            for path in paths.iter() {
                if let Some(why) = outside_repo(path) {
                    return Err(ConfigError {
                        message: format!(
                            "`[worktree] {key}` entry `{path}` {why}: name a file by its path \
                             relative to the repository root, such as `.env` or `config/local.toml`"
                        ),
                    });
                }
            }
        }
        Ok(())
    }
}

/// Why `path` does not name a place inside the repository, if it does not.
fn outside_repo(path: &str) -> Option<&'static str> {
    use std::path::{Component, Path};
    if path.trim().is_empty() {
        return Some("is empty");
    }
    let p = Path::new(path);
    if p.is_absolute() || path.starts_with('~') {
        return Some("is absolute");
    }
    if p.components().any(|c| c == Component::ParentDir) {
        return Some("climbs out with `..`");
    }
    if !p.components().any(|c| matches!(c, Component::Normal(_))) {
        return Some("names the repository itself");
    }
    if p.components()
        .any(|c| c.as_os_str() == ".git" || c.as_os_str() == ".planwright")
    {
        return Some("is inside `.git` or `.planwright`");
    }
    None
}

/// `[agent]`: `name = "cmd"`, `cmd = "my-agent {prompt_file}"`, `timeout_secs = 1800`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSettings {
    /// The agent: `claude`, `codex`, `gemini`, `agy`, `aider`, `opencode`,
    /// `cmd` or `scripted:DIR`.
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
    /// A model for every attempt, overriding the one the routing table chose.
    #[serde(default)]
    pub model: Option<String>,
    /// Extra arguments appended to the CLI's own (an adapter only).
    #[serde(default)]
    pub args: Vec<String>,
    /// The CLI's executable, when it is not the usual name on `PATH`.
    #[serde(default)]
    pub program: Option<String>,
    /// Give each job slot its own CLI state directory (default true).
    #[serde(default)]
    pub isolate: Option<bool>,
    /// The longest pause after the model could not serve an attempt,
    /// whatever reset time its CLI named (default 6h).
    #[serde(default)]
    pub max_pause: Option<DurationSetting>,
    /// Unavailable outcomes in a row after which a ticket fails as
    /// `unavailable` (default 5).
    #[serde(default)]
    pub max_unavailable: Option<u32>,
}

/// A length of time in `planwright.toml`: whole seconds, or a string with
/// a unit (`"90s"`, `"30m"`, `"6h"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "DurationText", into = "DurationText")]
pub struct DurationSetting(pub std::time::Duration);

/// How a [`DurationSetting`] is written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
enum DurationText {
    Seconds(u64),
    Text(String),
}

impl TryFrom<DurationText> for DurationSetting {
    type Error = String;
    fn try_from(t: DurationText) -> Result<DurationSetting, String> {
        match t {
            DurationText::Seconds(n) => Ok(DurationSetting(std::time::Duration::from_secs(n))),
            DurationText::Text(text) => parse_duration(&text).map(DurationSetting),
        }
    }
}

impl From<DurationSetting> for DurationText {
    fn from(s: DurationSetting) -> DurationText {
        DurationText::Seconds(s.0.as_secs())
    }
}

/// Parses `90`, `90s`, `30m`, `2h`: the one reading of a duration, for
/// flags and `planwright.toml` alike.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let t = text.trim();
    let (num, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()));
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not a duration (try 90s, 30m or 2h)"))?;
    let scale = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        _ => return Err(format!("'{text}' has an unknown unit (use s, m or h)")),
    };
    let secs = n
        .checked_mul(scale)
        .ok_or_else(|| format!("'{text}' is too long a duration"))?;
    Ok(std::time::Duration::from_secs(secs))
}

/// What one model costs, in US dollars per million tokens of each kind.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Input not read from a cache.
    pub input: f64,
    /// Output (reasoning included).
    pub output: f64,
    /// Input read from a cache (default: the input price).
    #[serde(default)]
    pub cache_read: Option<f64>,
    /// Input written to a cache (default: the input price).
    #[serde(default)]
    pub cache_write: Option<f64>,
}

impl Price {
    /// The cost of the given token counts, in US dollars.
    pub fn cost(&self, input: u64, output: u64, cache_read: u64, cache_write: u64) -> f64 {
        let per = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        per(input, self.input)
            + per(output, self.output)
            + per(cache_read, self.cache_read.unwrap_or(self.input))
            + per(cache_write, self.cache_write.unwrap_or(self.input))
    }
}

/// `[prices]`: model name -> [`Price`]. Entries in `planwright.toml` are
/// added to the shipped defaults (and replace a default of the same name),
/// so a user names only the models they change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "BTreeMap<String, Price>", into = "BTreeMap<String, Price>")]
pub struct Prices(pub BTreeMap<String, Price>);

impl Default for Prices {
    fn default() -> Self {
        Prices(default_prices())
    }
}

impl From<BTreeMap<String, Price>> for Prices {
    fn from(user: BTreeMap<String, Price>) -> Self {
        let mut all = default_prices();
        all.extend(user);
        Prices(all)
    }
}

impl From<Prices> for BTreeMap<String, Price> {
    fn from(p: Prices) -> Self {
        p.0
    }
}

impl Prices {
    /// The price of `model`: an exact entry, else the longest entry the
    /// model's name starts with, since CLIs report dated or suffixed names
    /// (`claude-sonnet-4-6-20260217`, `gemini-3-flash-preview`).
    /// A `provider/model` name (opencode's) is looked up by its model part.
    pub fn find(&self, model: &str) -> Option<&Price> {
        let model = model.rsplit('/').next().unwrap_or(model);
        if let Some(p) = self.0.get(model) {
            return Some(p);
        }
        self.0
            .iter()
            .filter(|(name, _)| model.starts_with(name.as_str()))
            .max_by_key(|(name, _)| name.len())
            .map(|(_, p)| p)
    }
}

/// The shipped prices, per million tokens: (model, input, output,
/// cache read, cache write). Dated and sourced in docs/agents.md; a model
/// missing here gets no computed cost.
const DEFAULT_PRICES: &[(&str, f64, f64, f64, f64)] = &[
    ("claude-sonnet-4-6", 3.0, 15.0, 0.30, 3.75),
    ("claude-opus-4-6", 5.0, 25.0, 0.50, 6.25),
    ("claude-haiku-4-5", 1.0, 5.0, 0.10, 1.25),
    ("gpt-5.5", 5.0, 30.0, 0.50, 5.0),
    ("gpt-5.4", 2.50, 15.0, 0.25, 2.50),
    ("gpt-5.4-mini", 0.75, 4.52, 0.075, 0.75),
    ("gpt-5.3-codex", 1.75, 14.0, 0.175, 1.75),
    ("gpt-5-codex", 1.25, 10.0, 0.125, 1.25),
    ("gemini-3.1-pro", 2.0, 12.0, 0.20, 2.0),
    ("gemini-3-flash", 0.50, 3.0, 0.05, 0.50),
    ("gemini-2.5-pro", 1.25, 10.0, 0.125, 1.25),
    ("gemini-2.5-flash", 0.30, 2.50, 0.03, 0.30),
    ("gemini-2.5-flash-lite", 0.10, 0.40, 0.01, 0.10),
];

fn default_prices() -> BTreeMap<String, Price> {
    DEFAULT_PRICES
        .iter()
        .map(|&(name, input, output, read, write)| {
            let price = Price {
                input,
                output,
                cache_read: Some(read),
                cache_write: Some(write),
            };
            (name.to_string(), price)
        })
        .collect()
}

/// `[budget]`: ceilings for a whole run, and `[budget.ticket]` for each
/// ticket. Unset means no ceiling.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetSettings {
    /// US dollars one run may spend.
    #[serde(default)]
    pub max_cost_usd: Option<f64>,
    /// Tokens (every kind) one run may use.
    #[serde(default)]
    pub max_tokens: Option<u64>,
    /// Ceilings per ticket, over all its attempts.
    #[serde(default)]
    pub ticket: TicketBudget,
}

/// `[budget.ticket]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TicketBudget {
    /// US dollars one ticket may spend.
    #[serde(default)]
    pub max_cost_usd: Option<f64>,
    /// Tokens one ticket may use.
    #[serde(default)]
    pub max_tokens: Option<u64>,
}

/// Why a configuration file was rejected.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ConfigError {
    /// The parser's message, with line and column.
    pub message: String,
}

impl Config {
    /// Parses the text of a `planwright.toml`.
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|e| ConfigError {
            message: e.to_string(),
        })?;
        config.worktree.check()?;
        Ok(config)
    }
}

/// The codeboost command allowlist: `[commands] allow = [["cargo", "test"]]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Commands {
    /// Approved argv, matched by exact equality.
    #[serde(default)]
    pub allow: Vec<Vec<String>>,
}

/// `[standard_v1]` settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StandardV1Settings {
    /// The implement stage's file cap; the cap advisories need it.
    #[serde(default)]
    pub max_files_changed: Option<u32>,
    /// The planner's prompts render a calibration hint, so a plan must carry
    /// `raw_predicted_runtime_minutes` (an advisory when it does not).
    #[serde(default)]
    pub calibration_hint: bool,
}

/// One model a ticket can be routed to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    /// The model's name as the agent CLI knows it.
    pub name: String,
    /// Its family (`gemini`, `claude`, `gpt`, `gpt-oss`); pool hints select families.
    pub family: String,
    /// The tiers it serves.
    pub tiers: Vec<String>,
    /// The concurrency pool it counts against (see `caps`).
    pub pool: String,
}

/// The routing table. `[routing]` in `planwright.toml` replaces any part it
/// names; a part it leaves out keeps agb's default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Routing {
    /// Candidate models, in order of preference.
    #[serde(default = "default_models")]
    pub models: Vec<Model>,
    /// Pool hint -> the families it accepts. `auto` accepts every family.
    #[serde(default = "default_hints")]
    pub hints: BTreeMap<String, Vec<String>>,
    /// Pool -> how many tickets may use it at once.
    #[serde(default = "default_caps")]
    pub caps: BTreeMap<String, u32>,
}

impl Default for Routing {
    fn default() -> Self {
        Routing {
            models: default_models(),
            hints: default_hints(),
            caps: default_caps(),
        }
    }
}

/// The tiers a ticket may ask for.
pub const TIERS: [&str; 3] = ["cheap", "mid", "frontier"];

/// The tier of a ticket that names none.
pub const DEFAULT_TIER: &str = "mid";

impl Routing {
    /// The models a ticket of `tier` with `pool_hint` may run on.
    pub fn candidates(&self, tier: &str, pool_hint: &str) -> Vec<&Model> {
        let families = self.hints.get(pool_hint);
        self.models
            .iter()
            .filter(|m| m.tiers.iter().any(|t| t == tier))
            .filter(|m| pool_hint == "auto" || families.is_some_and(|f| f.contains(&m.family)))
            .collect()
    }

    /// Whether `hint` is a pool hint this table knows.
    pub fn knows_hint(&self, hint: &str) -> bool {
        hint == "auto" || self.hints.contains_key(hint)
    }

    /// The known pool hints, for error messages.
    pub fn hint_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.hints.keys().map(String::as_str).collect();
        names.push("auto");
        names
    }
}

fn model(name: &str, family: &str, tiers: &[&str], pool: &str) -> Model {
    Model {
        name: name.into(),
        family: family.into(),
        tiers: tiers.iter().map(|t| t.to_string()).collect(),
        pool: pool.into(),
    }
}

/// agb's defaults: cheap is Gemini-only; frontier is gemini-3.1-pro-high,
/// claude-sonnet-4-6 and claude-opus-4-6-thinking. agb's newest table also
/// makes mid Gemini-only, which rejects its own shipped template (ticket T2
/// is mid + claude); the seed's template is the contract, so mid keeps
/// claude-sonnet-4-6 here (see docs/formats/agb.md).
fn default_models() -> Vec<Model> {
    vec![
        model("gemini-3-flash", "gemini", &["cheap"], "gemini-flash"),
        model("gemini-3.1-pro-low", "gemini", &["mid"], "gemini-pro"),
        model("gemini-3.1-pro-high", "gemini", &["frontier"], "gemini-pro"),
        model(
            "claude-sonnet-4-6",
            "claude",
            &["mid", "frontier"],
            "claude",
        ),
        model(
            "claude-opus-4-6-thinking",
            "claude",
            &["frontier"],
            "claude",
        ),
    ]
}

fn default_hints() -> BTreeMap<String, Vec<String>> {
    [
        ("gemini", vec!["gemini"]),
        ("claude", vec!["claude"]),
        ("claude-gpt", vec!["claude", "gpt"]),
        ("gpt-oss", vec!["gpt-oss"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect()
}

fn default_caps() -> BTreeMap<String, u32> {
    [
        ("gemini-flash", 8),
        ("gemini-pro", 4),
        ("claude", 4),
        ("gpt-oss", 2),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn default_table_matches_agb() {
        let r = Routing::default();
        assert!(r.candidates("cheap", "claude").is_empty());
        assert!(!r.candidates("cheap", "gemini").is_empty());
        assert!(
            !r.candidates("mid", "claude").is_empty(),
            "the seed's template uses mid + claude"
        );
        for tier in TIERS {
            assert!(r.candidates(tier, "gpt-oss").is_empty());
        }
        let frontier: Vec<_> = r
            .candidates("frontier", "auto")
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        assert_eq!(
            frontier,
            [
                "gemini-3.1-pro-high",
                "claude-sonnet-4-6",
                "claude-opus-4-6-thinking"
            ]
        );
    }

    #[test]
    fn config_overrides_and_rejects_typos() {
        let c = Config::parse(
            "[[routing.models]]\nname='m'\nfamily='claude'\ntiers=['cheap']\npool='p'\n",
        )
        .unwrap();
        assert_eq!(c.routing.candidates("cheap", "claude").len(), 1);
        assert_eq!(c.routing.caps.get("claude"), Some(&4));
        let err = Config::parse("[routin]\n").unwrap_err();
        assert!(err.message.contains("routin"), "{}", err.message);
        let c = Config::parse(
            "[gates]\nrun=[['cargo','test']]\nenv=['RUST_LOG']\n[run]\njobs=3\n[worktree]\npristine=true\n[agent]\nname='cmd'\ncmd='x {prompt_file}'\n",
        )
        .unwrap();
        assert_eq!(c.gates.run, [["cargo", "test"]]);
        assert_eq!(c.run.jobs, Some(3));
        assert!(c.worktree.pristine);
        assert_eq!(c.agent.cmd.as_deref(), Some("x {prompt_file}"));
        assert_eq!(c.sandbox.mode, SandboxMode::Enforce);
        assert!(c.sandbox.gate_overlay);
        assert!(
            Config::parse("[sandbox]\nmode='enforce'\n")
                .unwrap()
                .sandbox
                .gate_overlay
        );
        let c = Config::parse(
            "[sandbox]\nmode='off'\nwritable=['~/.npm']\ngate_network=true\ngate_overlay=false\n[git]\nallow_config=['filter.lfs.clean']\n[worktree]\nsetup_inputs=['package-lock.json']\n[agent]\nlog_limit_mib=8\n",
        )
        .unwrap();
        assert_eq!(c.sandbox.mode, SandboxMode::Off);
        assert_eq!(c.sandbox.writable, ["~/.npm"]);
        assert!(c.sandbox.gate_network);
        assert!(!c.sandbox.gate_overlay);
        assert_eq!(c.git.allow_config, ["filter.lfs.clean"]);
        assert_eq!(c.worktree.setup_inputs, ["package-lock.json"]);
        assert_eq!(c.agent.log_limit_mib, Some(8));
        assert!(Config::parse("[sandbox]\nmode='on'\n").is_err());
        let err = Config::parse("[gates]\nrn=[]\n").unwrap_err();
        assert!(err.message.contains("rn"), "{}", err.message);
    }

    #[test]
    fn prices_extend_the_defaults_and_match_suffixed_names() {
        let c = Config::parse(
            "[prices.my-model]\ninput=1.0\noutput=2.0\n[prices.claude-sonnet-4-6]\ninput=4.0\noutput=20.0\n",
        )
        .unwrap();
        let mine = c.prices.find("my-model").unwrap();
        assert_eq!(mine.cost(1_000_000, 1_000_000, 1_000_000, 0), 4.0);
        assert_eq!(
            c.prices.find("claude-sonnet-4-6-20260217").unwrap().input,
            4.0
        );
        let flash = c.prices.find("gemini-3-flash-preview").unwrap();
        assert_eq!(flash.cost(2_000_000, 0, 0, 0), 1.0);
        assert!(c.prices.find("gpt-5.4-mini").unwrap().input < 1.0);
        assert!(c.prices.find("unknown").is_none());
        assert_eq!(c.prices.find("openai/gpt-5.4").unwrap().input, 2.5);
        assert!(
            Config::parse("[prices.m]\ninput=1\n").is_err(),
            "output is required"
        );
    }

    #[test]
    fn the_pause_bounds_parse_as_seconds_or_with_a_unit() {
        let c = Config::parse("[agent]\nmax_pause='90m'\nmax_unavailable=3\n").unwrap();
        assert_eq!(
            c.agent.max_pause,
            Some(DurationSetting(Duration::from_secs(5400)))
        );
        assert_eq!(c.agent.max_unavailable, Some(3));
        let c = Config::parse("[agent]\nmax_pause=120\n").unwrap();
        assert_eq!(
            c.agent.max_pause,
            Some(DurationSetting(Duration::from_secs(120)))
        );
        let err = Config::parse("[agent]\nmax_pause='6x'\n").unwrap_err();
        assert!(err.message.contains("unknown unit"), "{}", err.message);
        assert!(parse_duration("99999999999999999999h").is_err());
    }

    #[test]
    fn agent_and_budget_sections_parse() {
        let c = Config::parse(
            "[agent]\nname='codex'\nmodel='gpt-5.4'\nargs=['-c','x=1']\nprogram='/opt/codex'\nisolate=false\n[budget]\nmax_cost_usd=20.5\nmax_tokens=1000\n[budget.ticket]\nmax_cost_usd=2.0\n",
        )
        .unwrap();
        assert_eq!(c.agent.model.as_deref(), Some("gpt-5.4"));
        assert_eq!(c.agent.args, ["-c", "x=1"]);
        assert_eq!(c.agent.isolate, Some(false));
        assert_eq!(c.budget.max_cost_usd, Some(20.5));
        assert_eq!(c.budget.ticket.max_cost_usd, Some(2.0));
        assert_eq!(c.budget.ticket.max_tokens, None);
        assert!(Config::parse("[budget]\nmax_dollars=1\n").is_err());
    }

    #[test]
    fn worktree_copy_takes_paths_inside_the_repository_only() {
        let c = Config::parse("[worktree]\ncopy=['.env','config/local.toml']\n").unwrap();
        assert_eq!(c.worktree.copy, [".env", "config/local.toml"]);
        for (bad, why) in [
            ("/etc/passwd", "is absolute"),
            ("~/.aws/credentials", "is absolute"),
            ("../other/.env", "climbs out with `..`"),
            ("config/../../.env", "climbs out with `..`"),
            (".", "names the repository itself"),
            ("", "is empty"),
            (".git/config", "is inside `.git` or `.planwright`"),
        ] {
            let e = Config::parse(&format!("[worktree]\ncopy=['{bad}']\n")).unwrap_err();
            assert!(
                e.message
                    .contains(&format!("`[worktree] copy` entry `{bad}` {why}"))
                    && e.message.contains("relative to the repository root"),
                "{bad}: {}",
                e.message
            );
        }
        let e = Config::parse("[worktree]\nsetup_inputs=['/tmp/lock']\n").unwrap_err();
        assert!(
            e.message.contains("`[worktree] setup_inputs`"),
            "{}",
            e.message
        );
    }
}
