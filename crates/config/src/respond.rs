//! `[respond]`: how `planwright respond` answers reviews and failed checks
//! on a delivered pull request (docs/forge.md, "Responding to reviews").
//! Every value is checked as the file is read; [`RespondSettings::of`]
//! fills in the defaults.

use crate::duration::DurationSetting;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The quiet window by default: a reviewer's burst of comments within two
/// minutes is one round.
pub const DEFAULT_QUIET: Duration = Duration::from_secs(120);
/// Rounds per pull request by default.
pub const DEFAULT_ROUNDS: u32 = 3;

/// `[respond]` as the file says it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Respond {
    /// How long the newest comment must be old before a round starts
    /// (default `"2m"`).
    #[serde(default)]
    pub quiet: Option<DurationSetting>,
    /// Rounds per pull request (default 3); then one reply says the limit
    /// was reached.
    #[serde(default)]
    pub rounds: Option<u32>,
    /// Logins whose comments are answered (bots included only when
    /// listed); empty: every user with write permission.
    #[serde(default)]
    pub authors: Vec<String>,
    /// US dollars one round may spend (its attempts).
    #[serde(default)]
    pub max_cost_usd: Option<f64>,
    /// US dollars all rounds of one pull request may spend together.
    #[serde(default)]
    pub pull_max_cost_usd: Option<f64>,
    /// `[respond.labels]`: the labels written on imported issues as their
    /// tickets run and fail (none by default).
    #[serde(default)]
    pub labels: crate::labels::IssueLabels,
}

/// `[respond]` with its defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct RespondSettings {
    /// The quiet window.
    pub quiet: Duration,
    /// Rounds per pull request.
    pub rounds: u32,
    /// The allowlist of authors; empty: users with write permission.
    pub authors: Vec<String>,
    /// The cost cap of one round.
    pub max_cost_usd: Option<f64>,
    /// The cost cap of all rounds of one pull request.
    pub pull_max_cost_usd: Option<f64>,
}

impl RespondSettings {
    /// The settings `file` gives, defaults filled in.
    pub fn of(file: &Respond) -> RespondSettings {
        RespondSettings {
            quiet: file.quiet.map_or(DEFAULT_QUIET, |d| d.0),
            rounds: file.rounds.unwrap_or(DEFAULT_ROUNDS),
            authors: file.authors.clone(),
            max_cost_usd: file.max_cost_usd,
            pull_max_cost_usd: file.pull_max_cost_usd,
        }
    }
}

impl Default for RespondSettings {
    fn default() -> RespondSettings {
        RespondSettings::of(&Respond::default())
    }
}
