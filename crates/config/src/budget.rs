//! `[budget]`: ceilings on cost and tokens. What the file says is what the
//! run is held to, so one type serves as both.

use serde::{Deserialize, Serialize};

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
