//! The state store: `.planwright/state.db` (SQLite, WAL). Every transition
//! is written here before the side effect it announces, so a run stopped at
//! any point can be continued (docs/running.md lists each transition and its
//! recovery rule). The schema carries a version (`PRAGMA user_version`) and
//! is brought forward by migrations; a value the store does not know is an
//! error, never a guess. No SQL lives outside this file.

mod hook;

mod migrations;
mod respond;
mod rows;

pub(crate) use crate::model::ticket::{RunStatus, TicketState};
pub(crate) use respond::{RoundRow, RoundState};
pub use rows::{AgentRecord, AttemptRow, RunRow, TicketRow};
pub(crate) use rows::{EventRow, Synced};

use crate::model::failure::Failure;
use crate::model::report::AgentReport;
use crate::model::ticket::{transition, Step};
use crate::model::Phase;
use hook::AbortHook;
use migrations::migrate;
use rows::{attempt_row, run_row, ticket_row, ticket_row_from, RUN_COLUMNS, TICKET_COLUMNS};
use rusqlite::{params, Connection, OptionalExtension};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// How a transition is committed: the write-ahead log is synced to disk,
/// so a power loss right after cannot undo it.
const TRANSITION_SYNC: &str = "FULL";

/// How the rest (an attempt's phase, the agent's report and spend, the
/// event log, pool pauses) is committed: the log is not synced, so that
/// progress costs no disk flush. A killed process loses none of it (the
/// operating system holds what was written); a power loss can lose what
/// came after the last transition, which the next transition's sync
/// would have made durable, never a transition.
const PROGRESS_SYNC: &str = "NORMAL";

/// The store; clones share one connection.
#[derive(Clone)]
pub struct Store {
    conn: Arc<Mutex<Connection>>,
    hook: Arc<AbortHook>,
}

pub(crate) use crate::error::StoreError;

type Result<T> = std::result::Result<T, StoreError>;

impl Store {
    /// Opens (creating and migrating if needed) the store at `path`.
    ///
    /// With the `crash-hook` feature, `PLANWRIGHT_TEST_ABORT_AT=N` kills
    /// the process at the Nth transition point (see `hook.rs`); the crash
    /// tests use it to stop a run at every transition in turn.
    pub fn open(path: &Path) -> Result<Store> {
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", PROGRESS_SYNC)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        migrate(&conn)?;
        Ok(Store {
            conn: Arc::new(Mutex::new(conn)),
            hook: Arc::new(AbortHook::from_env()),
        })
    }

    fn with<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T> {
        let conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        Ok(f(&conn)?)
    }

    /// Writes one transition, with the test hook's points around it, and
    /// syncs it (and all progress written before it) to disk before its
    /// side effect follows.
    fn transition<E>(&self, f: impl FnOnce(&Connection) -> std::result::Result<(), E>) -> Result<()>
    where
        StoreError: From<E>,
    {
        self.hook.point();
        let conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        conn.pragma_update(None, "synchronous", TRANSITION_SYNC)?;
        // One transaction: a transition is written whole or not at all.
        let written = (|| -> Result<()> {
            let tx = conn.unchecked_transaction()?;
            f(&tx)?;
            Ok(tx.commit()?)
        })();
        conn.pragma_update(None, "synchronous", PROGRESS_SYNC)?;
        written?;
        drop(conn);
        self.hook.point();
        Ok(())
    }

    /// Writes one step of a ticket's state machine: its state becomes what
    /// [`transition`] says, then `write` records the rest with that state.
    /// A ticket the run does not have is left alone.
    fn step(
        &self,
        run: &str,
        id: &str,
        step: Step,
        write: impl FnOnce(&Connection, &str) -> rusqlite::Result<()>,
    ) -> Result<()> {
        self.transition(|c| -> Result<()> {
            let from: Option<TicketState> = c
                .query_row(
                    "SELECT state FROM tickets WHERE run_id = ?1 AND ticket_id = ?2",
                    [run, id],
                    |r| r.get(0),
                )
                .optional()?;
            let Some(from) = from else { return Ok(()) };
            let to = transition(from, step).map_err(|source| StoreError::Illegal {
                ticket: id.to_string(),
                source,
            })?;
            Ok(write(c, to.as_str())?)
        })
    }

    /// The newest run on base branch `base`.
    pub fn run_for_base(&self, base: &str) -> Result<Option<RunRow>> {
        self.query_run("WHERE base = ?1 ORDER BY rowid DESC LIMIT 1", base)
    }

    /// The runs on `base`, newest first.
    pub fn runs_for_base(&self, base: &str) -> Result<Vec<RunRow>> {
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs WHERE base = ?1 ORDER BY rowid DESC");
        self.with(|c| c.prepare(&sql)?.query_map([base], run_row)?.collect())
    }

    /// The plan file `run` is of, as [`Store::set_plan_key`] recorded it.
    pub fn plan_key(&self, run: &str) -> Result<Option<String>> {
        self.with(|c| {
            c.query_row("SELECT plan_key FROM runs WHERE id = ?1", [run], |r| {
                r.get(0)
            })
            .optional()
            .map(Option::flatten)
        })
    }

    /// Records the plan file `run` is of (a canonical path).
    pub fn set_plan_key(&self, run: &str, key: &str) -> Result<()> {
        self.transition(|c| {
            c.execute(
                "UPDATE runs SET plan_key = ?2 WHERE id = ?1",
                params![run, key],
            )
            .map(drop)
        })
    }

    /// A run by id.
    pub fn run(&self, id: &str) -> Result<Option<RunRow>> {
        self.query_run("WHERE id = ?1", id)
    }

    /// The newest run.
    pub fn latest_run(&self) -> Result<Option<RunRow>> {
        self.query_run("WHERE ?1 = ?1 ORDER BY rowid DESC LIMIT 1", "")
    }

    fn query_run(&self, clause: &str, arg: &str) -> Result<Option<RunRow>> {
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs {clause}");
        self.with(|c| c.query_row(&sql, [arg], run_row).optional())
    }

    /// Records a new run.
    pub fn create_run(&self, run: &RunRow) -> Result<()> {
        self.transition(|c| {
            c.execute(
                "INSERT INTO runs (id, plan_path, base, started_at, status, fresh) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![run.id, run.plan_path, run.base, run.started_at, run.status.as_str(), run.fresh],
            )
            .map(drop)
        })
    }

    /// What [`Store::set_run_inputs`] last recorded for `run`.
    pub fn run_inputs(&self, run: &str) -> Result<Option<String>> {
        self.with(|c| {
            c.query_row("SELECT inputs FROM runs WHERE id = ?1", [run], |r| r.get(0))
                .optional()
                .map(Option::flatten)
        })
    }

    /// Records the files that decide `run` (the run's inputs).
    pub fn set_run_inputs(&self, run: &str, inputs: &str) -> Result<()> {
        self.transition(|c| {
            c.execute(
                "UPDATE runs SET inputs = ?2 WHERE id = ?1",
                params![run, inputs],
            )
            .map(drop)
        })
    }

    /// What [`Store::set_run_graph`] last recorded for `run`; None for a run
    /// made before graphs were recorded.
    pub fn run_graph(&self, run: &str) -> Result<Option<String>> {
        self.with(|c| {
            c.query_row("SELECT graph FROM runs WHERE id = ?1", [run], |r| r.get(0))
                .optional()
                .map(Option::flatten)
        })
    }

    /// Whether the gates `gates` (their JSON) passed on tree `tree` in `run`.
    pub fn tree_passed(&self, run: &str, tree: &str, gates: &str) -> Result<bool> {
        self.with(|c| {
            c.query_row(
                "SELECT 1 FROM passed_trees WHERE run = ?1 AND tree = ?2 AND gates = ?3",
                params![run, tree, gates],
                |_| Ok(()),
            )
            .optional()
            .map(|found| found.is_some())
        })
    }

    /// Records that the gates `gates` (their JSON) passed on tree `tree` in `run`.
    pub fn tree_passes(&self, run: &str, tree: &str, gates: &str) -> Result<()> {
        self.transition(|c| {
            c.execute(
                "INSERT OR IGNORE INTO passed_trees (run, tree, gates) VALUES (?1, ?2, ?3)",
                params![run, tree, gates],
            )
            .map(drop)
        })
    }

    /// Records the plan's dependency graph (JSON) for `run`.
    pub fn set_run_graph(&self, run: &str, graph: &str) -> Result<()> {
        self.transition(|c| {
            c.execute(
                "UPDATE runs SET graph = ?2 WHERE id = ?1",
                params![run, graph],
            )
            .map(drop)
        })
    }

    /// Marks a run as being worked on by this invocation, with the plan file given.
    pub fn resume_run(&self, run: &str, plan_path: &str) -> Result<()> {
        self.transition(|c| {
            c.execute(
                "UPDATE runs SET status = 'running', finished_at = NULL, plan_path = ?2 WHERE id = ?1",
                params![run, plan_path],
            )
            .map(drop)
        })
    }

    /// Records how an invocation of a run ended.
    pub fn end_run(&self, run: &str, status: RunStatus, at: &str) -> Result<()> {
        self.transition(|c| {
            c.execute(
                "UPDATE runs SET status = ?2, finished_at = ?3 WHERE id = ?1",
                params![run, status.as_str(), at],
            )
            .map(drop)
        })
    }

    /// Stores the plan's tickets for `run` as (id, title, digest), in plan
    /// order: a new one pending, a known one keeping its state with its
    /// position, title and digest brought up to date (and no longer removed,
    /// if it was); marks the tickets the plan no longer has removed, keeping
    /// their rows and attempts. Returns every ticket's row of the plan, in
    /// plan order, and the ids marked removed. Only what differs is written:
    /// continuing an unchanged plan of 10,000 tickets reads them and writes
    /// nothing.
    pub fn sync_tickets<'t>(
        &self,
        run: &str,
        tickets: impl IntoIterator<Item = (&'t str, &'t str, &'t str)>,
    ) -> Result<Synced> {
        self.with(|c| {
            let tx = c.unchecked_transaction()?;
            let sql = format!("SELECT position, {TICKET_COLUMNS} FROM tickets WHERE run_id = ?1");
            let mut stored: HashMap<String, (i64, TicketRow)> = tx
                .prepare(&sql)?
                .query_map([run], |r| {
                    let row = ticket_row_from(r, 1)?;
                    Ok((row.id.clone(), (r.get(0)?, row)))
                })?
                .collect::<rusqlite::Result<_>>()?;
            // In plan order; `None` for a ticket that is new to the run.
            let mut rows: Vec<(&str, Option<TicketRow>)> = Vec::new();
            {
                let mut upsert = tx.prepare_cached(
                    "INSERT INTO tickets (run_id, ticket_id, position, title, state, digest) VALUES (?1, ?2, ?3, ?4, 'pending', ?5)
                     ON CONFLICT (run_id, ticket_id) DO UPDATE SET position = ?3, title = ?4, digest = ?5, removed = 0",
                )?;
                for (position, (id, title, digest)) in tickets.into_iter().enumerate() {
                    let position = position as i64;
                    let row = stored.remove(id).map(|(p, mut row)| {
                        let same = p == position
                            && !row.removed
                            && row.title == title
                            && row.digest.as_deref() == Some(digest);
                        (row.title, row.digest) = (title.to_string(), Some(digest.to_string()));
                        row.removed = false;
                        (same, row)
                    });
                    if !row.as_ref().is_some_and(|(same, _)| *same) {
                        upsert.execute(params![run, id, position, title, digest])?;
                    }
                    rows.push((id, row.map(|(_, row)| row)));
                }
                // What is left in `stored` is what the plan no longer has:
                // kept, with its attempts, for the run's views.
                let mut mark = tx.prepare_cached(
                    "UPDATE tickets SET removed = 1 WHERE run_id = ?1 AND ticket_id = ?2",
                )?;
                for (id, (_, row)) in &stored {
                    if !row.removed {
                        mark.execute([run, id])?;
                    }
                }
            }
            tx.commit()?;
            let read = format!("SELECT {TICKET_COLUMNS} FROM tickets WHERE run_id = ?1 AND ticket_id = ?2");
            let rows = rows
                .into_iter()
                .map(|(id, row)| match row {
                    Some(row) => Ok(row),
                    None => c.query_row(&read, [run, id], ticket_row),
                })
                .collect::<rusqlite::Result<_>>()?;
            // In the order they had in the plan when last in it.
            let mut removed: Vec<(i64, String)> =
                stored.into_iter().map(|(id, (p, _))| (p, id)).collect();
            removed.sort();
            let removed = removed.into_iter().map(|(_, id)| id).collect();
            Ok(Synced { rows, removed })
        })
    }

    /// The tickets of a run's plan that are merged, changed or verified
    /// (what a continued run takes up without an agent), in plan order.
    pub fn settled_tickets(&self, run: &str) -> Result<Vec<TicketRow>> {
        let sql = format!(
            "SELECT {TICKET_COLUMNS} FROM tickets WHERE run_id = ?1 AND removed = 0 \
             AND state IN ('merged', 'changed', 'verified') ORDER BY position"
        );
        self.with(|c| c.prepare(&sql)?.query_map([run], ticket_row)?.collect())
    }

    /// The tickets of a run that a `--rerun` runs again, with the merged
    /// commit each replaces.
    pub fn reruns(&self, run: &str) -> Result<HashMap<String, String>> {
        self.with(|c| {
            c.prepare("SELECT ticket_id, rerun_of FROM tickets WHERE run_id = ?1 AND rerun_of IS NOT NULL")?
                .query_map([run], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect()
        })
    }

    /// Every ticket a run ever had: its plan's in plan order, then those
    /// the plan no longer has (marked [`TicketRow::removed`]).
    pub fn tickets(&self, run: &str) -> Result<Vec<TicketRow>> {
        let sql = format!(
            "SELECT {TICKET_COLUMNS} FROM tickets WHERE run_id = ?1 ORDER BY removed, position"
        );
        self.with(|c| c.prepare(&sql)?.query_map([run], ticket_row)?.collect())
    }

    /// One ticket of a run.
    pub fn ticket(&self, run: &str, id: &str) -> Result<Option<TicketRow>> {
        let sql =
            format!("SELECT {TICKET_COLUMNS} FROM tickets WHERE run_id = ?1 AND ticket_id = ?2");
        self.with(|c| c.query_row(&sql, [run, id], ticket_row).optional())
    }

    /// Moves a ticket by a step that records nothing else, keeping its
    /// last failure (blocking it; settling it on resume).
    pub fn set_state(&self, run: &str, id: &str, step: Step) -> Result<()> {
        self.step(run, id, step, |c, to| {
            c.execute(
                "UPDATE tickets SET state = ?3 WHERE run_id = ?1 AND ticket_id = ?2",
                params![run, id, to],
            )
            .map(drop)
        })
    }

    /// Records that a ticket is on the base branch as `commit`: `merged`
    /// by this invocation's merger ([`Step::Merge`]), or as git says on
    /// resume ([`Step::Landed`], [`Step::LandedChanged`]).
    pub fn landed(&self, run: &str, id: &str, step: Step, commit: &str) -> Result<()> {
        self.step(run, id, step, |c, to| {
            c.execute(
                "UPDATE tickets SET state = ?3, merge_commit = ?4, candidate = NULL, verified_on = NULL,
                 failure_kind = NULL, failure_message = NULL, failure_evidence = NULL, failure_evidence_from = NULL
                 WHERE run_id = ?1 AND ticket_id = ?2",
                params![run, id, to, commit],
            )
            .map(drop)
        })
    }

    /// Attempt `n` of a ticket run again found nothing to change: it ends
    /// `unchanged` and the ticket stays merged as `commit`, its earlier
    /// merge, which counts again (no rerun is asked any more).
    pub fn unchanged(&self, run: &str, id: &str, n: u32, commit: &str, at: &str) -> Result<()> {
        self.step(run, id, Step::Landed, |c, to| {
            c.execute(
                "UPDATE attempts SET phase = 'unchanged', finished_at = ?4 WHERE run_id = ?1 AND ticket_id = ?2 AND n = ?3",
                params![run, id, n, at],
            )?;
            c.execute(
                "UPDATE tickets SET state = ?3, merge_commit = ?4, rerun_of = NULL, candidate = NULL, verified_on = NULL,
                 failure_kind = NULL, failure_message = NULL, failure_evidence = NULL
                 WHERE run_id = ?1 AND ticket_id = ?2",
                params![run, id, to, commit],
            )
            .map(drop)
        })
    }

    /// Asks for a merged ticket to run again: `commit` no longer counts.
    pub fn request_rerun(&self, run: &str, id: &str, commit: &str) -> Result<()> {
        self.step(run, id, Step::Reopen, |c, to| {
            c.execute(
                "UPDATE tickets SET rerun_of = ?3, state = ?4 WHERE run_id = ?1 AND ticket_id = ?2",
                params![run, id, commit, to],
            )
            .map(drop)
        })
    }

    /// Records that attempt `n` of a ticket starts from `base_commit`.
    pub fn start_attempt(
        &self,
        run: &str,
        id: &str,
        n: u32,
        base_commit: &str,
        at: &str,
    ) -> Result<()> {
        self.step(run, id, Step::Start, |c, to| {
            c.execute(
                "INSERT OR REPLACE INTO attempts (run_id, ticket_id, n, phase, base_commit, started_at) VALUES (?1, ?2, ?3, ?6, ?4, ?5)",
                params![run, id, n, base_commit, at, Phase::Starting.as_str()],
            )?;
            c.execute(
                "UPDATE tickets SET state = ?4, attempt_count = ?3, candidate = NULL, verified_on = NULL
                 WHERE run_id = ?1 AND ticket_id = ?2",
                params![run, id, n, to],
            )
            .map(drop)
        })
    }

    /// Records the phase an attempt is entering (progress, not a transition).
    pub fn set_phase(&self, run: &str, id: &str, n: u32, phase: Phase) -> Result<()> {
        self.with(|c| {
            c.execute(
                "UPDATE attempts SET phase = ?4 WHERE run_id = ?1 AND ticket_id = ?2 AND n = ?3",
                params![run, id, n, phase.as_str()],
            )
            .map(drop)
        })
    }

    /// Records what the agent reported for an attempt.
    pub fn record_agent(&self, run: &str, id: &str, n: u32, r: &AgentReport) -> Result<()> {
        let u = r.usage;
        self.with(|c| {
            c.execute(
                "UPDATE attempts SET agent_outcome = ?4, model = ?5, input_tokens = ?6, output_tokens = ?7,
                 cache_read_tokens = ?8, cache_write_tokens = ?9, cost = ?10, cost_source = ?11,
                 final_message = ?12, session_id = ?13
                 WHERE run_id = ?1 AND ticket_id = ?2 AND n = ?3",
                params![
                    run, id, n,
                    r.outcome.kind().as_str(),
                    r.model,
                    u.map(|u| u.input_tokens as i64),
                    u.map(|u| u.output_tokens as i64),
                    u.map(|u| u.cache_read_tokens as i64),
                    u.map(|u| u.cache_write_tokens as i64),
                    r.cost.map(|c| c.0),
                    r.cost.map(|c| c.1.as_str()),
                    r.final_message,
                    r.session_id,
                ],
            )
            .map(drop)
        })
    }

    /// Adds a reviewer's tokens and cost to attempt `n`'s: a review counts
    /// like the work it reviews.
    pub fn add_review_spend(
        &self,
        run: &str,
        id: &str,
        n: u32,
        usage: &crate::model::report::Usage,
        cost: f64,
    ) -> Result<()> {
        self.with(|c| {
            c.execute(
                "UPDATE attempts SET input_tokens = COALESCE(input_tokens, 0) + ?4,
                 output_tokens = COALESCE(output_tokens, 0) + ?5,
                 cache_read_tokens = COALESCE(cache_read_tokens, 0) + ?6,
                 cache_write_tokens = COALESCE(cache_write_tokens, 0) + ?7,
                 cost = COALESCE(cost, 0) + ?8
                 WHERE run_id = ?1 AND ticket_id = ?2 AND n = ?3",
                params![
                    run,
                    id,
                    n,
                    usage.input_tokens as i64,
                    usage.output_tokens as i64,
                    usage.cache_read_tokens as i64,
                    usage.cache_write_tokens as i64,
                    cost,
                ],
            )
            .map(drop)
        })
    }

    /// Records an attempt's candidate commit, before it is verified.
    pub fn set_candidate(&self, run: &str, id: &str, n: u32, commit: &str) -> Result<()> {
        self.transition(|c| {
            c.execute(
                "UPDATE attempts SET candidate = ?4 WHERE run_id = ?1 AND ticket_id = ?2 AND n = ?3",
                params![run, id, n, commit],
            )
            .map(drop)
        })
    }

    /// Records that attempt `n`'s candidate passed verification on
    /// `verified_on`: the ticket waits to be merged, and no agent runs for
    /// it again unless the merge rejects it.
    pub fn verified(
        &self,
        run: &str,
        id: &str,
        n: u32,
        candidate: &str,
        verified_on: &str,
        at: &str,
    ) -> Result<()> {
        self.step(run, id, Step::Verify, |c, to| {
            c.execute(
                "UPDATE attempts SET phase = 'verified', finished_at = ?4 WHERE run_id = ?1 AND ticket_id = ?2 AND n = ?3",
                params![run, id, n, at],
            )?;
            c.execute(
                "UPDATE tickets SET state = ?5, candidate = ?3, verified_on = ?4,
                 failure_kind = NULL, failure_message = NULL, failure_evidence = NULL, failure_evidence_from = NULL
                 WHERE run_id = ?1 AND ticket_id = ?2",
                params![run, id, candidate, verified_on, to],
            )
            .map(drop)
        })
    }

    /// Records a rejection of attempt `n`: the attempt's failure, and the
    /// ticket `pending` ([`Step::Retry`]: another attempt follows) or
    /// `failed` ([`Step::Fail`]).
    pub fn reject(
        &self,
        run: &str,
        id: &str,
        n: u32,
        f: &Failure,
        step: Step,
        at: &str,
    ) -> Result<()> {
        self.step(run, id, step, |c, then| {
            c.execute(
                "UPDATE attempts SET phase = 'rejected', finished_at = ?4, failure_kind = ?5, failure_message = ?6, evidence = ?7,
                 evidence_from = ?8
                 WHERE run_id = ?1 AND ticket_id = ?2 AND n = ?3",
                params![run, id, n, at, f.kind.as_str(), f.message, f.evidence, f.evidence_from],
            )?;
            c.execute(
                "UPDATE tickets SET state = ?3, candidate = NULL, verified_on = NULL, merge_commit = NULL,
                 failure_kind = ?4, failure_message = ?5, failure_evidence = ?6, failure_evidence_from = ?7
                 WHERE run_id = ?1 AND ticket_id = ?2",
                params![run, id, then, f.kind.as_str(), f.message, f.evidence, f.evidence_from],
            )
            .map(drop)
        })
    }

    /// Fails a ticket between attempts (its budget is used up): no attempt
    /// carries this failure, the ticket does.
    pub fn fail_ticket(&self, run: &str, id: &str, f: &Failure) -> Result<()> {
        self.step(run, id, Step::Fail, |c, to| {
            c.execute(
                "UPDATE tickets SET state = ?6, candidate = NULL, verified_on = NULL, merge_commit = NULL,
                 failure_kind = ?3, failure_message = ?4, failure_evidence = ?5, failure_evidence_from = ?7
                 WHERE run_id = ?1 AND ticket_id = ?2",
                params![run, id, f.kind.as_str(), f.message, f.evidence, to, f.evidence_from],
            )
            .map(drop)
        })
    }

    /// What each attempt of `run` used (every invocation's), by ticket,
    /// for the budget: its cost in dollars, else its tokens priced at
    /// their family's highest rates in `prices` (a model without a price
    /// must not make a budget blind to what it spends), and its tokens.
    pub fn spent(
        &self,
        run: &str,
        prices: &planwright_config::Prices,
    ) -> Result<Vec<(String, crate::model::report::Spent)>> {
        self.with(|c| {
            let mut st = c.prepare(
                "SELECT ticket_id, model, cost, COALESCE(input_tokens, 0),
                        COALESCE(output_tokens, 0), COALESCE(cache_read_tokens, 0),
                        COALESCE(cache_write_tokens, 0)
                 FROM attempts WHERE run_id = ?1",
            )?;
            let rows = st.query_map([run], |r| {
                let model: Option<String> = r.get(1)?;
                let cost: Option<f64> = r.get(2)?;
                let n = |i: usize| r.get::<_, i64>(i).map(|v| v.max(0) as u64);
                let (input, output, read, write) = (n(3)?, n(4)?, n(5)?, n(6)?);
                let tokens = input
                    .saturating_add(output)
                    .saturating_add(read)
                    .saturating_add(write);
                let bound = || {
                    let ceiling = prices.ceiling(model.as_deref())?;
                    Some(ceiling.cost(input, output, read, write))
                };
                let unpriced = cost.is_none() && tokens > 0;
                let cost_usd = match cost {
                    Some(c) => c.max(0.0),
                    None if unpriced => bound().unwrap_or(0.0),
                    None => 0.0,
                };
                let spent = crate::model::report::Spent {
                    cost_usd,
                    tokens,
                    unpriced: usize::from(unpriced),
                };
                Ok((r.get::<_, String>(0)?, spent))
            })?;
            rows.collect()
        })
    }

    /// Records that attempt `n` ended without a verdict (`interrupted`, or
    /// `unavailable`: the model could not serve it); the ticket is pending
    /// again and no strike is used.
    pub fn end_attempt_without_verdict(
        &self,
        run: &str,
        id: &str,
        n: u32,
        how: &str,
        at: &str,
    ) -> Result<()> {
        self.step(run, id, Step::Interrupt, |c, to| {
            c.execute(
                "UPDATE attempts SET phase = ?4, finished_at = ?5 WHERE run_id = ?1 AND ticket_id = ?2 AND n = ?3",
                params![run, id, n, how, at],
            )?;
            c.execute(
                "UPDATE tickets SET state = ?3 WHERE run_id = ?1 AND ticket_id = ?2",
                params![run, id, to],
            )
            .map(drop)
        })
    }

    /// Records the commit a ticket is about to land as (before the ref moves).
    pub fn begin_merge(&self, run: &str, id: &str, commit: &str) -> Result<()> {
        self.step(run, id, Step::BeginMerge, |c, to| {
            c.execute(
                "UPDATE tickets SET state = ?4, merge_commit = ?3 WHERE run_id = ?1 AND ticket_id = ?2",
                params![run, id, commit, to],
            )
            .map(drop)
        })
    }

    /// The attempts of a ticket, oldest first.
    pub fn attempts(&self, run: &str, id: &str) -> Result<Vec<AttemptRow>> {
        self.with(|c| {
            let mut st = c.prepare(
                "SELECT n, phase, base_commit, candidate, started_at, finished_at, failure_kind, failure_message, evidence,
                        agent_outcome, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
                        cost, cost_source, final_message, session_id, evidence_from
                 FROM attempts WHERE run_id = ?1 AND ticket_id = ?2 ORDER BY n",
            )?;
            let rows = st.query_map([run, id], attempt_row)?;
            rows.collect()
        })
    }

    /// Appends a batch of events in one transaction.
    pub fn record_events(&self, run: &str, events: &[EventRow]) -> Result<()> {
        self.with(|c| {
            let tx = c.unchecked_transaction()?;
            for e in events {
                tx.execute(
                    "INSERT INTO events (run_id, at, ticket_id, kind, data, seq, at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![run, e.at, e.ticket, e.kind, e.data, e.seq as i64, e.at_ms as i64],
                )?;
            }
            tx.commit()
        })
    }

    /// Records that `pool` is paused until `until` (seconds since the
    /// epoch), its `strikes`-th pause in a row.
    pub fn save_pause(&self, pool: &str, until: u64, strikes: u32) -> Result<()> {
        self.with(|c| {
            c.execute(
                "INSERT INTO pool_pauses (pool, until_unix, strikes) VALUES (?1, ?2, ?3)
                 ON CONFLICT (pool) DO UPDATE SET until_unix = ?2, strikes = ?3",
                params![pool, until as i64, strikes],
            )
            .map(drop)
        })
    }

    /// Forgets the pause of `pool`: its model answered.
    pub fn clear_pause(&self, pool: &str) -> Result<()> {
        self.with(|c| {
            c.execute("DELETE FROM pool_pauses WHERE pool = ?1", [pool])
                .map(drop)
        })
    }

    /// Every saved pause: pool, until (seconds since the epoch), strikes.
    pub fn pauses(&self) -> Result<Vec<(String, u64, u32)>> {
        self.with(|c| {
            let mut st =
                c.prepare("SELECT pool, until_unix, strikes FROM pool_pauses ORDER BY pool")?;
            let rows = st.query_map([], |r| {
                Ok((r.get(0)?, r.get::<_, i64>(1)?.max(0) as u64, r.get(2)?))
            })?;
            rows.collect()
        })
    }

    /// The highest event sequence number of a run (0 when it has none).
    pub fn last_event_seq(&self, run: &str) -> Result<u64> {
        self.with(|c| {
            c.query_row(
                "SELECT COALESCE(MAX(seq), 0) FROM events WHERE run_id = ?1",
                [run],
                |r| r.get::<_, i64>(0),
            )
        })
        .map(|n| n as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::migrations::MIGRATIONS;
    use super::*;
    use crate::model::FailureKind;

    fn run_row(id: &str) -> RunRow {
        RunRow {
            id: id.into(),
            plan_path: "plan.json".into(),
            base: "main".into(),
            started_at: "t0".into(),
            finished_at: None,
            status: RunStatus::Running,
            fresh: false,
        }
    }

    #[test]
    fn pool_pauses_are_kept_until_cleared() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        let store = Store::open(&path).unwrap();
        store.save_pause("claude", 1000, 1).unwrap();
        store.save_pause("claude", 2000, 2).unwrap();
        store.save_pause("gemini-pro", 500, 1).unwrap();
        drop(store);
        let store = Store::open(&path).unwrap();
        assert_eq!(
            store.pauses().unwrap(),
            [("claude".into(), 2000, 2), ("gemini-pro".into(), 500, 1)]
        );
        store.clear_pause("claude").unwrap();
        assert_eq!(store.pauses().unwrap(), [("gemini-pro".into(), 500, 1)]);
    }

    #[test]
    fn transitions_are_synced_to_disk_and_progress_waits_for_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("state.db")).unwrap();
        let level = |c: &Connection| c.query_row("PRAGMA synchronous", [], |r| r.get::<_, i64>(0));
        let mut during = None;
        store
            .transition(|c| -> Result<()> {
                during = Some(level(c)?);
                Ok(())
            })
            .unwrap();
        // 2 is FULL (the log synced at commit), 1 is NORMAL (not synced).
        assert_eq!(during, Some(2));
        assert_eq!(store.with(level).unwrap(), 1);
    }

    #[test]
    fn transitions_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("state.db")).unwrap();
        store.create_run(&run_row("r1")).unwrap();
        store.sync_tickets("r1", [("T1", "one", "d1")]).unwrap();
        store.sync_tickets("r1", [("T1", "one!", "d2")]).unwrap();
        store.start_attempt("r1", "T1", 1, "abc", "t1").unwrap();
        let f = Failure::new(FailureKind::ScopeViolation, "x is outside").with_evidence("x");
        store.reject("r1", "T1", 1, &f, Step::Retry, "t2").unwrap();
        let t = store.ticket("r1", "T1").unwrap().unwrap();
        assert_eq!((t.state, t.attempt_count), (TicketState::Pending, 1));
        assert_eq!(
            (t.title.as_str(), t.digest.as_deref()),
            ("one!", Some("d2"))
        );
        assert_eq!(t.failure.as_ref().unwrap().evidence, "x");
        store.start_attempt("r1", "T1", 2, "abc", "t3").unwrap();
        store.verified("r1", "T1", 2, "cand", "abc", "t4").unwrap();
        let t = store.ticket("r1", "T1").unwrap().unwrap();
        assert_eq!(
            (t.state, t.candidate.as_deref()),
            (TicketState::Verified, Some("cand"))
        );
        store.begin_merge("r1", "T1", "def").unwrap();
        store.landed("r1", "T1", Step::Merge, "def").unwrap();
        let t = &store.tickets("r1").unwrap()[0];
        assert_eq!((t.state, t.failure.clone()), (TicketState::Merged, None));
        assert_eq!(store.attempts("r1", "T1").unwrap()[1].phase, "verified");
        assert_eq!(store.run_for_base("main").unwrap().unwrap().id, "r1");
        assert_eq!(store.latest_run().unwrap().unwrap().id, "r1");
    }

    #[test]
    fn a_step_the_machine_does_not_allow_is_refused_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("state.db")).unwrap();
        store.create_run(&run_row("r1")).unwrap();
        store.sync_tickets("r1", [("T1", "one", "d1")]).unwrap();
        let err = store.begin_merge("r1", "T1", "def").unwrap_err();
        assert_eq!(
            err.to_string(),
            "ticket T1: a ticket cannot begin_merge from `pending`"
        );
        let t = store.ticket("r1", "T1").unwrap().unwrap();
        assert_eq!((t.state, t.merge_commit), (TicketState::Pending, None));
    }

    #[test]
    fn syncing_tickets_keeps_their_state_and_writes_only_what_differs() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("state.db")).unwrap();
        store.create_run(&run_row("r1")).unwrap();
        let plan = [("A", "a", "da"), ("B", "b", "db"), ("C", "c", "dc")];
        store.sync_tickets("r1", plan).unwrap();
        store.landed("r1", "B", Step::Landed, "m").unwrap();
        let writes = || store.with(|c| Ok(c.total_changes())).unwrap();
        let before = writes();
        let synced = store.sync_tickets("r1", plan).unwrap();
        assert_eq!(writes(), before, "an unchanged plan writes nothing");
        assert!(synced.removed.is_empty());
        let rows = synced.rows;
        assert_eq!(rows[1].state, TicketState::Merged);
        // Reordered, one retitled, one gone, one new.
        let edited = [("B", "b!", "db"), ("A", "a", "da"), ("D", "d", "dd")];
        let synced = store.sync_tickets("r1", edited).unwrap();
        assert_eq!(synced.removed, ["C"]);
        let rows = synced.rows;
        let seen = |rows: &[TicketRow]| -> Vec<(String, String, TicketState)> {
            rows.iter()
                .map(|t| (t.id.clone(), t.title.clone(), t.state))
                .collect()
        };
        let want = vec![
            ("B".into(), "b!".into(), TicketState::Merged),
            ("A".into(), "a".into(), TicketState::Pending),
            ("D".into(), "d".into(), TicketState::Pending),
        ];
        assert_eq!(seen(&rows), want);
        let all = store.tickets("r1").unwrap();
        assert_eq!(seen(&all[..3]), want, "as stored");
        assert_eq!(rows[2].digest.as_deref(), Some("dd"));
        // The removed ticket is kept, marked, after the plan's.
        assert_eq!(all.len(), 4);
        assert_eq!((all[3].id.as_str(), all[3].removed), ("C", true));
        assert!(all[..3].iter().all(|t| !t.removed));
        // Still absent: said again, written no more.
        let before = writes();
        let synced = store.sync_tickets("r1", edited).unwrap();
        assert_eq!((synced.removed, writes()), (vec!["C".to_string()], before));
        // Re-added: back, with the state it had.
        store.landed("r1", "A", Step::Landed, "m2").unwrap();
        let synced = store.sync_tickets("r1", [("C", "c", "dc")]).unwrap();
        assert_eq!(synced.removed, ["B", "A", "D"]);
        let c = &synced.rows[0];
        assert_eq!(
            (c.id.as_str(), c.removed, c.state),
            ("C", false, TicketState::Pending)
        );
        let a = store.ticket("r1", "A").unwrap().unwrap();
        assert_eq!((a.removed, a.state), (true, TicketState::Merged));
        assert!(
            store.settled_tickets("r1").unwrap().is_empty(),
            "removed tickets are not taken up"
        );
    }

    #[test]
    fn unknown_stored_values_are_errors_and_newer_schemas_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        let store = Store::open(&path).unwrap();
        store.create_run(&run_row("r1")).unwrap();
        store.sync_tickets("r1", [("T1", "one", "d")]).unwrap();
        store
            .with(|c| c.execute("UPDATE tickets SET state = 'sleeping'", []))
            .unwrap();
        let err = store.tickets("r1").unwrap_err().to_string();
        assert!(err.contains("unknown TicketState `sleeping`"), "{err}");
        store
            .with(|c| c.pragma_update(None, "user_version", 99))
            .unwrap();
        drop(store);
        let err = Store::open(&path).err().unwrap();
        assert!(matches!(err, StoreError::TooNew { found: 99, .. }), "{err}");
    }

    #[test]
    fn a_store_from_before_versioning_is_migrated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(MIGRATIONS[0]).unwrap();
        conn.execute(
            "INSERT INTO runs VALUES ('r0', 'p.json', 'digest', 'main', 't', NULL, 'finished')",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO tickets (run_id, ticket_id, position, title, state, attempts) VALUES ('r0', 'A', 0, 'a', 'merged', 2)",
            [],
        )
        .unwrap();
        drop(conn);
        let store = Store::open(&path).unwrap();
        let run = store.run("r0").unwrap().unwrap();
        assert_eq!((run.status, run.fresh), (RunStatus::Finished, false));
        let t = store.ticket("r0", "A").unwrap().unwrap();
        assert_eq!((t.state, t.attempt_count), (TicketState::Merged, 2));
    }
}
