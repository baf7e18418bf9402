//! Why an attempt was rejected: a typed kind, stored and reported by name.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The kinds of rejection, serialized in snake_case (`scope_violation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The attempt changed nothing.
    EmptyDiff,
    /// A path outside the scope, traversal, an escaping symlink, or an
    /// operation the scope does not allow.
    ScopeViolation,
    /// A protected path was changed.
    RailViolation,
    /// A file a gate runs, or a script an npm gate relies on, was changed.
    GateScriptTampering,
    /// A gate exited non-zero.
    GateFailure,
    /// The agent or a gate ran out of time.
    Timeout,
    /// The agent said it gave up (`TICKET-BLOCKED: reason`).
    AgentBlocked,
    /// The agent exited non-zero.
    AgentFailed,
    /// The candidate does not merge onto the current base.
    MergeConflict,
    /// A reviewer blocked the candidate (or its diff was too large to review).
    ReviewBlocked,
    /// The reviewer gave no valid verdict, twice.
    ReviewInvalid,
    /// A counterfactual stayed green: no test pins the control path.
    ControlUnpinned,
    /// A counterfactual could not be judged (its baseline failed, its
    /// mutation did not apply).
    CounterfactualError,
    /// The ticket used up its `[budget.ticket]` cost or tokens.
    Budget,
    /// Its model could not serve it (rate limit, quota) `[agent]
    /// max_unavailable` times in a row.
    Unavailable,
    /// The agent, its set-up or a gate reached `[sandbox] pids` or
    /// `[sandbox] memory`.
    ResourceLimit,
    /// The disk filled up during the attempt or its verification (its
    /// workspace and gate checkout were reset).
    DiskFull,
}

impl FailureKind {
    /// Every kind, for docs and parsing.
    pub const ALL: [FailureKind; 17] = [
        FailureKind::EmptyDiff,
        FailureKind::ScopeViolation,
        FailureKind::RailViolation,
        FailureKind::GateScriptTampering,
        FailureKind::GateFailure,
        FailureKind::Timeout,
        FailureKind::AgentBlocked,
        FailureKind::AgentFailed,
        FailureKind::MergeConflict,
        FailureKind::ReviewBlocked,
        FailureKind::ReviewInvalid,
        FailureKind::ControlUnpinned,
        FailureKind::CounterfactualError,
        FailureKind::Budget,
        FailureKind::Unavailable,
        FailureKind::ResourceLimit,
        FailureKind::DiskFull,
    ];

    /// The stored and printed name.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::EmptyDiff => "empty_diff",
            FailureKind::ScopeViolation => "scope_violation",
            FailureKind::RailViolation => "rail_violation",
            FailureKind::GateScriptTampering => "gate_script_tampering",
            FailureKind::GateFailure => "gate_failure",
            FailureKind::Timeout => "timeout",
            FailureKind::AgentBlocked => "agent_blocked",
            FailureKind::AgentFailed => "agent_failed",
            FailureKind::MergeConflict => "merge_conflict",
            FailureKind::ReviewBlocked => "review_blocked",
            FailureKind::ReviewInvalid => "review_invalid",
            FailureKind::ControlUnpinned => "control_unpinned",
            FailureKind::CounterfactualError => "counterfactual_error",
            FailureKind::Budget => "budget",
            FailureKind::Unavailable => "unavailable",
            FailureKind::ResourceLimit => "resource_limit",
            FailureKind::DiskFull => "disk_full",
        }
    }

    /// Parses a stored name.
    pub fn from_name(name: &str) -> Option<FailureKind> {
        FailureKind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One rejection: its kind, a one-line message, and the evidence fed back to
/// the next attempt (gate output tail, offending paths).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Failure {
    /// The kind.
    pub kind: FailureKind,
    /// One line for people.
    pub message: String,
    /// Longer evidence for the retry's charter.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub evidence: String,
    /// Whose changes besides this ticket's were in the tree that gave the
    /// evidence (the tickets it was merged with), when any were: their
    /// text may be in it, and the charter says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence_from: Option<String>,
}

impl Failure {
    /// A failure without extra evidence.
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Self {
        Failure {
            kind,
            message: message.into(),
            evidence: String::new(),
            evidence_from: None,
        }
    }

    /// Adds evidence.
    pub fn with_evidence(mut self, evidence: impl Into<String>) -> Self {
        self.evidence = evidence.into();
        self
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

/// How a round of gates (or a set-up) ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every gate exited 0.
    Pass,
    /// A gate failed or timed out.
    Fail(Failure),
    /// The run was interrupted.
    Cancelled,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One name per kind: the stored name, the printed name and the JSON name.
    #[test]
    fn names_agree_with_serde() {
        for kind in FailureKind::ALL {
            let json = serde_json::to_value(kind).expect("kinds serialize");
            assert_eq!(json, kind.as_str(), "{kind:?}");
            assert_eq!(FailureKind::from_name(kind.as_str()), Some(kind));
        }
    }
}
