//! How a run ended.

use crate::error::EngineError;
use crate::model::failure::{Failure, FailureKind};
use crate::store::{Store, TicketState};
use serde::Serialize;
use std::collections::BTreeMap;

/// Merges that wait on the run's branch instead of the base branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Held {
    /// The branch (`planwright/run/<id>`).
    pub branch: String,
    /// Why, and the command that lands them.
    pub reason: String,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunSummary {
    /// The run id.
    pub run: String,
    /// Tickets merged from the plan's current definition.
    pub merged: Vec<String>,
    /// Tickets merged from an older definition and not run again.
    pub changed: Vec<String>,
    /// Tickets out of strikes, with their last failure.
    pub failed: BTreeMap<String, Failure>,
    /// Tickets not started because an ancestor failed.
    pub blocked: Vec<String>,
    /// Merges waiting on the run's branch, if any.
    pub held: Option<Held>,
    /// Whether a signal stopped it early.
    #[serde(skip)]
    pub interrupted: bool,
    /// Why the run's budget stopped it before every ticket ran, if it did
    /// (raising `[budget]` and running again continues it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<String>,
    /// Why free space below `[run] min_free` stopped it before every
    /// ticket ran, if it did (freeing space and running again continues it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk: Option<String>,
    /// Each gate that failed on a candidate in this invocation and passed
    /// when run again on the same tree (`[gates] flaky_retries`), with how
    /// many times.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub flaky: BTreeMap<String, u32>,
}

impl RunSummary {
    /// Whether every ticket is merged (possibly on the run's branch).
    pub fn all_merged(&self) -> bool {
        self.failed.is_empty()
            && self.blocked.is_empty()
            && !self.interrupted
            && self.budget.is_none()
            && self.disk.is_none()
    }
}

pub(super) fn summarize(
    store: &Store,
    run: &str,
    held: Option<Held>,
    interrupted: bool,
    stops: super::coordinator::Stops,
) -> Result<RunSummary, EngineError> {
    let mut s = RunSummary {
        run: run.to_string(),
        merged: vec![],
        changed: vec![],
        failed: BTreeMap::new(),
        blocked: vec![],
        held,
        interrupted,
        budget: stops.budget,
        disk: stops.disk,
        flaky: BTreeMap::new(),
    };
    // What the plan no longer has is no part of this invocation's outcome.
    for t in store.tickets(run)?.into_iter().filter(|t| !t.removed) {
        match t.state {
            TicketState::Merged => s.merged.push(t.id),
            TicketState::Changed => s.changed.push(t.id),
            TicketState::Failed => {
                let f = t
                    .failure
                    .unwrap_or_else(|| Failure::new(FailureKind::AgentFailed, "failed"));
                s.failed.insert(t.id, f);
            }
            TicketState::Blocked => s.blocked.push(t.id),
            _ => {}
        }
    }
    Ok(s)
}
