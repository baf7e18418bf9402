//! What an attempt of an agent reports, and what attempts have used:
//! the vocabulary the agents, the state store, the budget and the events
//! share.

use serde::{Deserialize, Serialize};
use std::time::Duration;

use super::ticket::named_enum;

/// How an attempt of the agent ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentOutcome {
    /// It finished; the workspace holds its work.
    Finished,
    /// It gave up (`TICKET-BLOCKED: reason`).
    Blocked(String),
    /// It failed (non-zero exit), with the tail of its output. The first
    /// line is read after "the agent" (`exited with exit code 2: ...`).
    Failed(String),
    /// It ran out of time.
    TimedOut,
    /// The run was interrupted.
    Cancelled,
    /// The model could not serve the attempt (rate limit, quota): not the
    /// ticket's fault, so no strike is used; its pool pauses.
    Unavailable {
        /// When the provider said it may be tried again, if it said.
        retry_after: Option<Duration>,
        /// What the CLI reported.
        reason: String,
    },
}

named_enum! {
    /// Which way an attempt of the agent ended, without what it carries
    /// (`agent_reported.outcome`, the store's `agent_outcome`).
    AgentOutcomeKind {
        /// [`AgentOutcome::Finished`].
        Finished = "finished",
        /// [`AgentOutcome::Blocked`].
        Blocked = "blocked",
        /// [`AgentOutcome::Failed`].
        Failed = "failed",
        /// [`AgentOutcome::TimedOut`].
        TimedOut = "timed_out",
        /// [`AgentOutcome::Cancelled`].
        Cancelled = "cancelled",
        /// [`AgentOutcome::Unavailable`].
        Unavailable = "unavailable",
    }
}

impl AgentOutcome {
    /// Which way it ended.
    pub fn kind(&self) -> AgentOutcomeKind {
        match self {
            AgentOutcome::Finished => AgentOutcomeKind::Finished,
            AgentOutcome::Blocked(_) => AgentOutcomeKind::Blocked,
            AgentOutcome::Failed(_) => AgentOutcomeKind::Failed,
            AgentOutcome::TimedOut => AgentOutcomeKind::TimedOut,
            AgentOutcome::Cancelled => AgentOutcomeKind::Cancelled,
            AgentOutcome::Unavailable { .. } => AgentOutcomeKind::Unavailable,
        }
    }
}

impl std::fmt::Display for AgentOutcome {
    /// One line for the agent log: the outcome's name and what it carries.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AgentOutcome::Finished => f.write_str("finished"),
            AgentOutcome::Blocked(reason) => write!(f, "blocked: {reason}"),
            AgentOutcome::Failed(tail) => write!(f, "failed: {tail}"),
            AgentOutcome::TimedOut => f.write_str("timed out"),
            AgentOutcome::Cancelled => f.write_str("cancelled"),
            AgentOutcome::Unavailable {
                retry_after: Some(wait),
                reason,
            } => write!(
                f,
                "unavailable (retry after {} s): {reason}",
                wait.as_secs()
            ),
            AgentOutcome::Unavailable { reason, .. } => write!(f, "unavailable: {reason}"),
        }
    }
}

/// Tokens one attempt used, normalized across CLIs: `input_tokens` counts
/// only input not read from a cache.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Usage {
    /// Input tokens not read from a cache.
    pub input_tokens: u64,
    /// Output tokens (reasoning included where the CLI counts it).
    pub output_tokens: u64,
    /// Input tokens read from a cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to a cache.
    pub cache_write_tokens: u64,
}

impl Usage {
    /// Every token of every kind.
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, o: Usage) {
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
        self.cache_read_tokens += o.cache_read_tokens;
        self.cache_write_tokens += o.cache_write_tokens;
    }
}

/// Where a cost figure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CostSource {
    /// The CLI reported it.
    Reported,
    /// planwright computed it from the price table.
    Computed,
    /// planwright computed it from tokens the agent reported without a
    /// cache split (Gemini CLI's ACP mode): an upper estimate.
    Estimated,
}

impl CostSource {
    /// The name stored, printed and written in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            CostSource::Reported => "reported",
            CostSource::Computed => "computed",
            CostSource::Estimated => "estimated",
        }
    }
}

/// Everything an agent says about one attempt. Only `outcome` decides
/// anything; the rest is for reports and budgets.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentReport {
    /// How it ended.
    pub outcome: AgentOutcome,
    /// The model that did the work, as the CLI named it.
    pub model: Option<String>,
    /// Tokens used, when the CLI reports them.
    pub usage: Option<Usage>,
    /// Cost in US dollars, with where it came from.
    pub cost: Option<(f64, CostSource)>,
    /// The agent's final message.
    pub final_message: Option<String>,
    /// The CLI's session id (to look the session up in the CLI).
    pub session_id: Option<String>,
}

impl AgentReport {
    /// A report that carries only an outcome.
    pub fn outcome(outcome: AgentOutcome) -> AgentReport {
        AgentReport {
            outcome,
            model: None,
            usage: None,
            cost: None,
            final_message: None,
            session_id: None,
        }
    }
}

impl From<AgentOutcome> for AgentReport {
    fn from(outcome: AgentOutcome) -> AgentReport {
        AgentReport::outcome(outcome)
    }
}

/// What has been used.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spent {
    /// US dollars: known costs, and the bound of the attempts without one
    /// (their tokens at their family's highest price,
    /// [`planwright_config::Prices::ceiling`]).
    pub cost_usd: f64,
    /// Tokens of every kind.
    pub tokens: u64,
    /// Attempts with tokens and no cost, counted at that bound.
    pub unpriced: usize,
}

impl Spent {
    /// One attempt's use.
    pub fn of(usage: Option<&Usage>, cost_usd: Option<f64>) -> Spent {
        Spent {
            cost_usd: cost_usd
                .filter(|c| c.is_finite() && *c > 0.0)
                .unwrap_or(0.0),
            tokens: usage.map_or(0, Usage::total),
            unpriced: 0,
        }
    }

    pub(crate) fn add(&mut self, other: Spent) {
        self.cost_usd += other.cost_usd;
        self.tokens = self.tokens.saturating_add(other.tokens);
        self.unpriced += other.unpriced;
    }
}
