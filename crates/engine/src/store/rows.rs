//! The rows the store reads and writes, and how each is read from SQLite.

use crate::model::failure::{Failure, FailureKind};
use crate::model::report::{AgentOutcomeKind, CostSource};
use crate::model::ticket::{RunStatus, TicketState};
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ValueRef};
use serde::Serialize;

/// A state the store has a name for, read back by that name.
macro_rules! read_by_name {
    ($($name:ident),*) => {$(
        impl FromSql for $name {
            fn column_result(v: ValueRef<'_>) -> FromSqlResult<Self> {
                let s = v.as_str()?;
                $name::from_name(s).ok_or_else(|| unknown(stringify!($name), s))
            }
        }
    )*};
}

read_by_name!(TicketState, RunStatus, AgentOutcomeKind);

pub(super) fn unknown(what: &str, value: &str) -> FromSqlError {
    FromSqlError::Other(format!("unknown {what} `{value}` (written by a newer planwright?)").into())
}

/// One run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunRow {
    /// The run id.
    pub id: String,
    /// The plan file as last given.
    pub plan_path: String,
    /// The base branch; a run belongs to the repository and this branch.
    pub base: String,
    /// When it started.
    pub started_at: String,
    /// When its last invocation ended.
    pub finished_at: Option<String>,
    /// How it stands.
    pub status: RunStatus,
    /// Started with `--new-run`: only its own merges count as merged.
    pub fresh: bool,
}

impl RunRow {
    /// Run `id` of `plan_path` onto `base`, started at `started_at` and
    /// going on (neither finished nor fresh).
    pub fn running(id: &str, plan_path: &str, base: &str, started_at: &str) -> RunRow {
        RunRow {
            id: id.into(),
            plan_path: plan_path.into(),
            base: base.into(),
            started_at: started_at.into(),
            finished_at: None,
            status: RunStatus::Running,
            fresh: false,
        }
    }
}

/// What [`Store::sync_tickets`] did.
#[derive(Debug)]
pub struct Synced {
    /// Every ticket of the plan, in plan order.
    pub rows: Vec<TicketRow>,
    /// The tickets the run has that the plan no longer has (those removed
    /// now and earlier), kept and marked removed.
    pub removed: Vec<String>,
}

/// One ticket of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TicketRow {
    /// The ticket id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Where it stands.
    pub state: TicketState,
    /// Attempts started so far, in every invocation of the run.
    pub attempt_count: u32,
    /// The last failure, if any.
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
    /// The merged commit a `--rerun` asked to replace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerun_of: Option<String>,
    /// The plan no longer has it: the run keeps it, with its attempts,
    /// but runs it no more (until the plan has it again).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub removed: bool,
}

/// What the agent said about one attempt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentRecord {
    /// `finished`, `blocked`, `failed`, `timed_out`, `cancelled`, `unavailable`
    /// (the agent's; how the attempt ended is its `phase`).
    pub agent_outcome: AgentOutcomeKind,
    /// The model that did the work, as the CLI named it.
    pub model: Option<String>,
    /// Tokens, when reported.
    pub usage: Option<crate::model::report::Usage>,
    /// Cost in US dollars.
    pub cost_usd: Option<f64>,
    /// Where the cost came from.
    pub cost_source: Option<CostSource>,
    /// The agent's final message.
    pub final_message: Option<String>,
    /// The CLI's session id.
    pub session_id: Option<String>,
}

/// One attempt of a ticket.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttemptRow {
    /// 1-based attempt number.
    pub n: u32,
    /// The last phase reached (`workspace`, `agent`, `commit`, `verify`,
    /// `gates`), then how it ended (`verified`, `rejected`, `interrupted`,
    /// `unavailable`).
    pub phase: String,
    /// The base commit it started from.
    pub base_commit: String,
    /// The candidate commit, once made.
    pub candidate: Option<String>,
    /// When it started.
    pub started_at: String,
    /// When it ended.
    pub finished_at: Option<String>,
    /// Why it was rejected, if it was.
    pub failure: Option<Failure>,
    /// What the agent reported, once it ended (its fields sit on the
    /// attempt in JSON, and are absent until the agent has reported).
    #[serde(flatten)]
    pub agent: Option<AgentRecord>,
}

/// One event as stored.
#[derive(Debug, Clone)]
pub struct EventRow<'a> {
    /// Its sequence number in the run.
    pub seq: u64,
    /// Milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// RFC 3339.
    pub at: &'a str,
    /// The ticket it is about.
    pub ticket: Option<&'a str>,
    /// Its name.
    pub kind: &'a str,
    /// Its JSON.
    pub data: &'a str,
}

pub(super) fn failure_from(
    kind: Option<String>,
    message: Option<String>,
    evidence: Option<String>,
    evidence_from: Option<String>,
) -> rusqlite::Result<Option<Failure>> {
    let Some(kind) = kind else { return Ok(None) };
    let kind = FailureKind::from_name(&kind).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            0,
            rusqlite::types::Type::Text,
            Box::new(unknown("failure kind", &kind)),
        )
    })?;
    let mut failure =
        Failure::new(kind, message.unwrap_or_default()).with_evidence(evidence.unwrap_or_default());
    failure.evidence_from = evidence_from;
    Ok(Some(failure))
}

pub(super) const TICKET_COLUMNS: &str =
    "ticket_id, title, state, attempt_count, failure_kind, failure_message, \
    failure_evidence, merge_commit, digest, candidate, verified_on, rerun_of, \
    failure_evidence_from, removed";

pub(super) fn ticket_row(r: &rusqlite::Row) -> rusqlite::Result<TicketRow> {
    ticket_row_from(r, 0)
}

/// A [`TicketRow`] from [`TICKET_COLUMNS`] starting at column `at`.
pub(super) fn ticket_row_from(r: &rusqlite::Row, at: usize) -> rusqlite::Result<TicketRow> {
    Ok(TicketRow {
        id: r.get(at)?,
        title: r.get(at + 1)?,
        state: r.get(at + 2)?,
        attempt_count: r.get(at + 3)?,
        failure: failure_from(
            r.get(at + 4)?,
            r.get(at + 5)?,
            r.get(at + 6)?,
            r.get(at + 12)?,
        )?,
        merge_commit: r.get(at + 7)?,
        digest: r.get(at + 8)?,
        candidate: r.get(at + 9)?,
        verified_on: r.get(at + 10)?,
        rerun_of: r.get(at + 11)?,
        removed: r.get(at + 13)?,
    })
}

pub(super) const RUN_COLUMNS: &str = "id, plan_path, base, started_at, finished_at, status, fresh";

pub(super) fn run_row(r: &rusqlite::Row) -> rusqlite::Result<RunRow> {
    Ok(RunRow {
        id: r.get(0)?,
        plan_path: r.get(1)?,
        base: r.get(2)?,
        started_at: r.get(3)?,
        finished_at: r.get(4)?,
        status: r.get(5)?,
        fresh: r.get(6)?,
    })
}

pub(super) fn attempt_row(r: &rusqlite::Row) -> rusqlite::Result<AttemptRow> {
    let agent_outcome: Option<AgentOutcomeKind> = r.get(9)?;
    let agent = match agent_outcome {
        None => None,
        Some(agent_outcome) => {
            let tokens: [Option<i64>; 4] = [r.get(11)?, r.get(12)?, r.get(13)?, r.get(14)?];
            let usage = tokens[0].map(|_| crate::model::report::Usage {
                input_tokens: tokens[0].unwrap_or(0) as u64,
                output_tokens: tokens[1].unwrap_or(0) as u64,
                cache_read_tokens: tokens[2].unwrap_or(0) as u64,
                cache_write_tokens: tokens[3].unwrap_or(0) as u64,
            });
            let source: Option<String> = r.get(16)?;
            let cost_source = match source.as_deref() {
                None => None,
                Some("reported") => Some(CostSource::Reported),
                Some("computed") => Some(CostSource::Computed),
                Some("estimated") => Some(CostSource::Estimated),
                Some(other) => {
                    return Err(rusqlite::Error::FromSqlConversionFailure(
                        16,
                        rusqlite::types::Type::Text,
                        Box::new(unknown("cost source", other)),
                    ))
                }
            };
            Some(AgentRecord {
                agent_outcome,
                model: r.get(10)?,
                usage,
                cost_usd: r.get(15)?,
                cost_source,
                final_message: r.get(17)?,
                session_id: r.get(18)?,
            })
        }
    };
    Ok(AttemptRow {
        n: r.get(0)?,
        phase: r.get(1)?,
        base_commit: r.get(2)?,
        candidate: r.get(3)?,
        started_at: r.get(4)?,
        finished_at: r.get(5)?,
        failure: failure_from(r.get(6)?, r.get(7)?, r.get(8)?, r.get(19)?)?,
        agent,
    })
}
