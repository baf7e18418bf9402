//! The JSON of `report --to json` and `status --output json`: shapes of
//! their own, named in planwright's vocabulary (a count is `*_count`, a
//! plural name is a list), so that the state store's columns can change
//! without changing them. `status` also writes the names it had before,
//! for one release (see `docs/running.md`, "The report's JSON").

use crate::report::{AttemptReport, RunReport, TicketReport};
use crate::view::{CheckResult, ShownState};
use planwright_engine::agent::{CostSource, Usage};
use planwright_engine::Failure;
use planwright_engine::{AgentOutcomeKind, AgentRecord, RunStatus};
use serde::Serialize;
use std::collections::BTreeMap;

/// A run's report, as `report --to json` writes it.
#[derive(Debug, Clone, Serialize)]
pub struct RunDocument {
    /// The run, its totals and its counts.
    pub run: RunJson,
    /// Its tickets, in plan order.
    pub tickets: Vec<TicketJson>,
    /// The model pools paused when the event log ends, by name.
    pub paused_pools: Vec<PausedPoolJson>,
    /// The stacks the merge queue checked, in order (`tickets`, `state`,
    /// `flaky`, `landed`, `culprit`).
    pub merge_queue: Vec<crate::BatchView>,
    /// A `planwright replay` run's figures (docs/replay.md); absent for
    /// other runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<planwright_engine::replay::figures::Figures>,
}

/// Where a run stands, as `status --output json` writes it: the report,
/// then the names `status` wrote before, which go away in the next release.
#[derive(Debug, Clone, Serialize)]
pub struct StatusDocument {
    /// The report.
    #[serde(flatten)]
    pub document: RunDocument,
    /// Deprecated: the run's `*_count` fields.
    pub counts: LegacyCounts,
    /// Deprecated: `paused_pools`, keyed by pool.
    pub paused: BTreeMap<String, LegacyPause>,
}

/// The run.
#[derive(Debug, Clone, Serialize)]
pub struct RunJson {
    /// The run id.
    pub id: String,
    /// The plan file as last given.
    pub plan_path: String,
    /// The base branch.
    pub base: String,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// When its last invocation ended.
    pub finished_at: Option<String>,
    /// `running`, `finished` or `interrupted`.
    pub status: RunStatus,
    /// Started with a new run: only its own merges count as merged.
    pub fresh: bool,
    /// Tokens over every attempt that reported them.
    pub usage: Option<Usage>,
    /// Cost in US dollars over every attempt that reported it.
    pub cost_usd: Option<f64>,
    /// Attempts with tokens but no cost (a model without a price): while
    /// above 0, `cost_usd` is a floor.
    pub unpriced_attempts: usize,
    /// Tickets on the base branch (merged from an older definition too).
    pub merged_count: usize,
    /// Tickets out of attempts.
    pub failed_count: usize,
    /// Tickets behind a failed ancestor.
    pub blocked_count: usize,
    /// Tickets running, verified or merging (none when the run is
    /// `interrupted`).
    pub running_count: usize,
    /// Tickets a run whose process is gone left running, verified or
    /// merging (none unless the run is `interrupted`).
    pub interrupted_count: usize,
    /// Tickets not started, or waiting for a retry.
    pub pending_count: usize,
    /// Tickets the plan no longer has, kept with their attempts (in none
    /// of the counts above).
    pub removed_count: usize,
}

/// One ticket.
#[derive(Debug, Clone, Serialize)]
pub struct TicketJson {
    /// The ticket id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Where it stands: its recorded state, or `interrupted` when the
    /// run's process is gone (see [`ShownState`]).
    pub state: ShownState,
    /// Attempts started, in every invocation of the run.
    pub attempt_count: u32,
    /// The last failure.
    pub failure: Option<Failure>,
    /// The commit on the base branch (once merging or merged).
    pub merge_commit: Option<String>,
    /// The digest of the definition it runs (or ran) from.
    pub digest: Option<String>,
    /// A verified candidate waiting to be merged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidate: Option<String>,
    /// The base commit that candidate was verified on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verified_on: Option<String>,
    /// The merged commit a rerun asked to replace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerun_of: Option<String>,
    /// Tokens over its attempts.
    pub usage: Option<Usage>,
    /// Cost in US dollars over its attempts.
    pub cost_usd: Option<f64>,
    /// Its attempts with tokens but no cost: while above 0, `cost_usd` is
    /// a floor.
    pub unpriced_attempts: usize,
    /// Its attempts, oldest first.
    pub attempts: Vec<AttemptJson>,
    /// Its log, relative to the repository, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// The failed ancestor that blocked it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_by: Option<String>,
    /// The plan no longer has it: the run keeps it, with its attempts and
    /// the state it had, and runs it no more until the plan has it again.
    pub removed: bool,
}

/// One attempt.
#[derive(Debug, Clone, Serialize)]
pub struct AttemptJson {
    /// 1-based attempt number.
    pub n: u32,
    /// The last phase reached, then how it ended.
    pub phase: String,
    /// The base commit it started from.
    pub base_commit: String,
    /// Its candidate commit, once made.
    pub candidate: Option<String>,
    /// When it started.
    pub started_at: String,
    /// When it ended.
    pub finished_at: Option<String>,
    /// Why it was rejected.
    pub failure: Option<Failure>,
    /// The adapter that ran it, when the log says (absent in older logs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    /// The program its adapter started, when it started one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// The model routing chose for it (`model`, below, is the one its CLI
    /// named); absent when the CLI ran its own default or the log predates it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routed_model: Option<String>,
    /// `[executor] kind` it ran under (`local`, `process`, `ssh`,
    /// `kubernetes`); absent when the log predates it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub executor: Option<String>,
    /// The worker's machine (`ssh build-1`, `kubernetes agents/POD`); absent on
    /// this machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
    /// The slot it ran in, from 1; absent when the log predates it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slot: Option<usize>,
    /// What its agent said, once it ended (absent before).
    #[serde(flatten)]
    pub agent: Option<AgentJson>,
    /// Milliseconds from its start until its slot was freed.
    pub duration_ms: Option<u64>,
    /// The counterfactuals of its candidate.
    pub counterfactuals: Vec<CheckResult>,
}

/// What the agent of an attempt said about it.
#[derive(Debug, Clone, Serialize)]
pub struct AgentJson {
    /// `finished`, `blocked`, `failed`, `timed_out`, `cancelled`, `unavailable`.
    pub agent_outcome: AgentOutcomeKind,
    /// The model, as the CLI named it.
    pub model: Option<String>,
    /// Tokens, normalized.
    pub usage: Option<Usage>,
    /// Cost in US dollars.
    pub cost_usd: Option<f64>,
    /// Where the cost came from.
    pub cost_source: Option<CostSource>,
    /// The agent's final message.
    pub final_message: Option<String>,
    /// The CLI's session id.
    pub session_id: Option<String>,
}

/// A model pool that stopped starting attempts for a while.
#[derive(Debug, Clone, Serialize)]
pub struct PausedPoolJson {
    /// The pool.
    pub pool: String,
    /// Why, as the agent said.
    pub reason: String,
    /// Until when (RFC 3339), when known.
    pub until: Option<String>,
}

/// Deprecated: the counts `status` wrote before the run's `*_count` fields.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct LegacyCounts {
    /// `run.merged_count`.
    pub merged: usize,
    /// `run.failed_count`.
    pub failed: usize,
    /// `run.blocked_count`.
    pub blocked: usize,
    /// `run.running_count`.
    pub running: usize,
    /// `run.pending_count`.
    pub pending: usize,
}

/// Deprecated: a paused pool as `status` wrote it before `paused_pools`.
#[derive(Debug, Clone, Serialize)]
pub struct LegacyPause {
    /// Why.
    pub reason: String,
    /// Until when.
    pub until: Option<String>,
}

impl RunDocument {
    /// The document of a run's report.
    pub fn new(r: &RunReport) -> RunDocument {
        let c = r.view.counts();
        let row = &r.run;
        RunDocument {
            run: RunJson {
                id: row.id.clone(),
                plan_path: row.plan_path.clone(),
                base: row.base.clone(),
                started_at: row.started_at.clone(),
                finished_at: row.finished_at.clone(),
                status: row.status,
                fresh: row.fresh,
                usage: r.totals.usage,
                cost_usd: r.totals.cost_usd,
                unpriced_attempts: r.totals.unpriced,
                merged_count: c.merged,
                failed_count: c.failed,
                blocked_count: c.blocked,
                running_count: c.running,
                interrupted_count: c.interrupted,
                pending_count: c.pending,
                removed_count: c.removed,
            },
            tickets: (r.tickets.iter()).map(|t| TicketJson::new(r, t)).collect(),
            paused_pools: (r.view.paused.iter())
                .map(|(pool, p)| PausedPoolJson {
                    pool: pool.clone(),
                    reason: p.reason.clone(),
                    until: p.until.clone(),
                })
                .collect(),
            merge_queue: r.view.batches.clone(),
            replay: r.replay.clone(),
        }
    }
}

impl StatusDocument {
    /// The document of a run's report, with the deprecated names.
    pub fn new(r: &RunReport) -> StatusDocument {
        let document = RunDocument::new(r);
        let run = &document.run;
        let counts = LegacyCounts {
            merged: run.merged_count,
            failed: run.failed_count,
            blocked: run.blocked_count,
            running: run.running_count,
            pending: run.pending_count,
        };
        let paused = (document.paused_pools.iter())
            .map(|p| {
                let (reason, until) = (p.reason.clone(), p.until.clone());
                (p.pool.clone(), LegacyPause { reason, until })
            })
            .collect();
        StatusDocument {
            document,
            counts,
            paused,
        }
    }
}

impl TicketJson {
    fn new(r: &RunReport, t: &TicketReport) -> TicketJson {
        let row = &t.ticket;
        TicketJson {
            id: row.id.clone(),
            title: row.title.clone(),
            state: r.shown_state(row),
            attempt_count: row.attempt_count,
            failure: row.failure.clone(),
            merge_commit: row.merge_commit.clone(),
            digest: row.digest.clone(),
            candidate: row.candidate.clone(),
            verified_on: row.verified_on.clone(),
            rerun_of: row.rerun_of.clone(),
            usage: t.totals.usage,
            cost_usd: t.totals.cost_usd,
            unpriced_attempts: t.totals.unpriced,
            attempts: t.attempts.iter().map(AttemptJson::new).collect(),
            log: t.log.clone(),
            blocked_by: t.blocked_by.clone(),
            removed: row.removed,
        }
    }
}

impl AttemptJson {
    fn new(a: &AttemptReport) -> AttemptJson {
        let row = &a.attempt;
        AttemptJson {
            n: row.n,
            phase: row.phase.clone(),
            base_commit: row.base_commit.clone(),
            candidate: row.candidate.clone(),
            started_at: row.started_at.clone(),
            finished_at: row.finished_at.clone(),
            failure: row.failure.clone(),
            adapter: a.ran_by.as_ref().map(|b| b.adapter.clone()),
            program: a.ran_by.as_ref().and_then(|b| b.program.clone()),
            routed_model: a.ran_by.as_ref().and_then(|b| b.model.clone()),
            executor: a.ran_at.as_ref().map(|p| p.executor.clone()),
            worker: a.ran_at.as_ref().and_then(|p| p.worker.clone()),
            slot: a.ran_at.as_ref().map(|p| p.slot),
            agent: row.agent.as_ref().map(AgentJson::new),
            duration_ms: a.duration_ms,
            counterfactuals: a.counterfactuals.clone(),
        }
    }
}

impl AgentJson {
    fn new(g: &AgentRecord) -> AgentJson {
        AgentJson {
            agent_outcome: g.agent_outcome,
            model: g.model.clone(),
            usage: g.usage,
            cost_usd: g.cost_usd,
            cost_source: g.cost_source,
            final_message: g.final_message.clone(),
            session_id: g.session_id.clone(),
        }
    }
}

#[cfg(test)]
mod tests;
