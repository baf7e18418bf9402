//! planwright-config: `planwright.toml` (its schema and parse), the
//! defaults, the settings a run works with, and [`resolve`], the one place
//! where flags, the file and the environment meet.
//!
//! This crate is pure, like planwright-plan beneath it: it never starts a
//! process, touches git, reads the clock or the environment. The caller
//! reads the file and the environment and hands them in as data.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod budget;
pub mod defaults;
mod duration;
pub mod file;
pub mod forge;
pub mod kubernetes;
pub mod labels;
mod network;
mod parse;
mod prices;
pub mod resolve;
pub mod respond;
mod settings;
mod size;

pub use budget::{BudgetSettings, TicketBudget};
pub use duration::{parse_duration, DurationSetting};
pub use file::{AgentsEntry, Config, CounterfactualMode, ExecutorKind, RetryFrom, SandboxMode};
pub use forge::{ForgeKind, ForgeSettings, Per, RemoteUrl, Secret};
pub use network::{AgentNetwork, HostPort};
pub use parse::{ConfigError, Deprecation, Parsed, RENAMED};
pub use planwright_plan::routing::{Families, FamilyModels, Model, Routing, DEFAULT_TIER, TIERS};
pub use prices::{Price, Prices};
pub use resolve::{
    gate_from_argv, parse_gate, AgentFlags, Env, RunFlags, SettingsError, ValidationFlags,
};
pub use respond::{Respond, RespondSettings};
pub use size::{parse_size, CountSetting, MinFree, SizeSetting};
#[cfg(test)]
mod tests;

pub use settings::{
    AgentOptions, AgentSpec, AgentsSpec, BaseSource, ChosenBase, ConfigSource, ContainSettings,
    ExecutorSettings, GateSettings, KubernetesSettings, MergeSettings, ReviewSettings, RunSettings,
    WorkerLink, WorkspaceSettings,
};

/// The configuration file's name, wherever it is looked for.
pub const CONFIG_FILE: &str = "planwright.toml";
