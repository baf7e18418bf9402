//! What a run is configured with, and the engine's defaults.

use crate::exec::workspace::PoolSettings;
use crate::sandbox::ContainSettings;
use crate::verify::gates::GateSettings;
use planwright_plan::config::{BudgetSettings, Routing};
use planwright_plan::model::Gate;
use planwright_plan::overlap::Overlap;
use std::path::PathBuf;
use std::time::Duration;

/// The engine's defaults; front ends override them from flags and files.
pub mod defaults {
    use std::time::Duration;
    /// Rejected attempts a ticket may have in one invocation.
    pub const STRIKES: u32 = 2;
    /// The agent's wall-clock limit per attempt.
    pub const AGENT_TIMEOUT: Duration = Duration::from_secs(30 * 60);
    /// Each gate's wall-clock limit.
    pub const GATE_TIMEOUT: Duration = Duration::from_secs(10 * 60);
    /// Each workspace set-up command's limit.
    pub const SETUP_TIMEOUT: Duration = Duration::from_secs(30 * 60);
    /// The longest pause after the model could not serve an attempt
    /// (`[agent] max_pause`).
    pub const MAX_PAUSE: Duration = Duration::from_secs(6 * 3600);
    /// Unavailable outcomes in a row after which a ticket fails
    /// (`[agent] max_unavailable`).
    pub const MAX_UNAVAILABLE: u32 = 5;
}

/// Everything a run is configured with.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// The plan file as given (for the record).
    pub plan_path: String,
    /// The configuration file the settings came from, if any.
    pub config_path: Option<PathBuf>,
    /// `--allow-config-change`: a ticket whose scope names the plan or
    /// configuration file itself may change it.
    pub allow_config_change: bool,
    /// Slots: attempts worked on at once.
    pub jobs: usize,
    /// Rejected attempts a ticket may have in one invocation.
    pub strikes: u32,
    /// The longest pause of a pool or ticket whose model could not serve it.
    pub max_pause: Duration,
    /// Unavailable outcomes in a row after which a ticket fails, in one
    /// invocation.
    pub max_unavailable: u32,
    /// The agent's wall-clock limit per attempt.
    pub agent_timeout: Option<Duration>,
    /// Gates added to every ticket (from `[gates] run` and `--gate`).
    pub extra_gates: Vec<Gate>,
    /// How gates run.
    pub gates: GateSettings,
    /// How workspaces and gate checkouts are prepared.
    pub pool: PoolSettings,
    /// The sandbox, the accepted git config and the agent's log cap.
    pub contain: ContainSettings,
    /// Model pools and caps.
    pub routing: Routing,
    /// Review passes and counterfactuals, after the gates.
    pub beyond: crate::verify::beyond_gates::Settings,
    /// Ceilings on cost and tokens, for the run and each ticket.
    pub budget: BudgetSettings,
    /// The plan's overlap forecast when the caller already made it
    /// (validation does, for its warnings): preflight filters it rather
    /// than forecasting a large plan again. `None`: preflight makes it.
    pub overlaps: Option<Vec<Overlap>>,
}

impl RunSettings {
    /// The defaults: one slot per core, [`defaults`] for the rest.
    pub fn new(plan_path: impl Into<String>) -> RunSettings {
        RunSettings {
            plan_path: plan_path.into(),
            config_path: None,
            allow_config_change: false,
            jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
            strikes: defaults::STRIKES,
            max_pause: defaults::MAX_PAUSE,
            max_unavailable: defaults::MAX_UNAVAILABLE,
            agent_timeout: Some(defaults::AGENT_TIMEOUT),
            extra_gates: vec![],
            gates: GateSettings {
                env: vec![],
                timeout: Some(defaults::GATE_TIMEOUT),
            },
            pool: PoolSettings {
                setup: vec![],
                setup_inputs: vec![],
                pristine: false,
                setup_timeout: Some(defaults::SETUP_TIMEOUT),
                copy: vec![],
            },
            contain: ContainSettings::default(),
            routing: Routing::default(),
            beyond: Default::default(),
            budget: BudgetSettings::default(),
            overlaps: None,
        }
    }
}
