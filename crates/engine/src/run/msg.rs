//! The messages between the coordinator, the attempts and the merge
//! queue: what an attempt reports ([`Msg`], [`AttemptResult`]), what the
//! coordinator sends to be merged ([`MergeJob`]) and how a merge ended
//! ([`MergeOutcome`]), and the route an attempt starts on. The bottom of
//! `run/`: it names no other file of it.

use crate::error::EngineError;
use crate::model::failure::Failure;
use crate::model::Phase;
use std::time::Duration;

/// What the worker threads and the merge queue tell the coordinator.
pub(super) enum Msg {
    /// An attempt entered a phase.
    Phase {
        ticket: String,
        attempt: u32,
        phase: Phase,
    },
    /// An attempt in `slot` ended.
    Done {
        slot: usize,
        ticket: String,
        attempt: u32,
        base: String,
        result: Result<AttemptResult, EngineError>,
    },
    /// The merge queue settled a verified candidate.
    Landed {
        ticket: String,
        attempt: u32,
        result: Result<MergeOutcome, EngineError>,
    },
    /// The run was cancelled: wakes a coordinator waiting out a pause.
    Cancelled,
}

/// How an attempt ended.
pub(super) enum AttemptResult {
    Passed {
        candidate: String,
    },
    Rejected(Failure),
    Cancelled,
    Unavailable {
        retry_after: Option<Duration>,
        reason: String,
    },
    /// The machine of the attempt's slot failed it: the ticket runs again
    /// without a strike, and the slot rests before it serves again.
    Lost(crate::exec::remote::Lost),
}

/// What routing and the budget decided for an attempt about to start.
pub(super) struct Route {
    pub(super) model: Option<String>,
    pub(super) pool: Option<String>,
    pub(super) budget_usd: Option<f64>,
}

/// A verified candidate for the merger thread.
#[derive(Debug, Clone)]
pub(super) struct MergeJob {
    pub(super) ticket: String,
    pub(super) attempt: u32,
    pub(super) candidate: String,
    pub(super) verified_on: String,
}

/// How a merge ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum MergeOutcome {
    /// The target now points at `commit`.
    Merged {
        /// The new tip.
        commit: String,
    },
    /// The candidate does not merge onto the current tip, or its gates fail there.
    Rejected(Failure),
    /// The candidate's gates, which passed on its own candidate, fail on
    /// the merged tree: it breaks them together with what landed since its
    /// verification (or ahead of it in its batch). It is rebuilt on the new
    /// tip, with a strike.
    Combination(Failure),
    /// The run was interrupted during the gates.
    Cancelled,
    /// The disk filled up during the merge (why, as the run says it): the
    /// merge queue stopped; the candidate stays verified, and the next
    /// run merges it.
    DiskFull(String),
}
