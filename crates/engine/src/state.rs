//! The state store: `.planwright/state.db` (SQLite, WAL). Every transition
//! is written here before the side effect it announces, so a run stopped at
//! any point can be continued. No SQL lives outside this file.

use crate::failure::{Failure, FailureKind};
use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;
use std::path::Path;
use std::sync::{Arc, Mutex};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    plan_path TEXT NOT NULL,
    plan_digest TEXT NOT NULL,
    base TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tickets (
    run_id TEXT NOT NULL,
    ticket_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    title TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    failure_kind TEXT,
    failure_message TEXT,
    merge_commit TEXT,
    PRIMARY KEY (run_id, ticket_id)
);
CREATE TABLE IF NOT EXISTS attempts (
    run_id TEXT NOT NULL,
    ticket_id TEXT NOT NULL,
    n INTEGER NOT NULL,
    phase TEXT NOT NULL,
    base_commit TEXT NOT NULL,
    candidate TEXT,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    failure_kind TEXT,
    failure_message TEXT,
    evidence TEXT,
    PRIMARY KEY (run_id, ticket_id, n)
);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    at TEXT NOT NULL,
    ticket_id TEXT,
    kind TEXT NOT NULL,
    data TEXT NOT NULL
);
";

/// Where a ticket stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TicketState {
    /// Not started, or waiting for a retry.
    Pending,
    /// An attempt is running.
    Running,
    /// Passed verification; being merged into the base.
    Merging,
    /// On the base branch.
    Merged,
    /// Out of attempts.
    Failed,
    /// An ancestor failed.
    Blocked,
}

impl TicketState {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            TicketState::Pending => "pending",
            TicketState::Running => "running",
            TicketState::Merging => "merging",
            TicketState::Merged => "merged",
            TicketState::Failed => "failed",
            TicketState::Blocked => "blocked",
        }
    }

    fn parse(s: &str) -> TicketState {
        match s {
            "running" => TicketState::Running,
            "merging" => TicketState::Merging,
            "merged" => TicketState::Merged,
            "failed" => TicketState::Failed,
            "blocked" => TicketState::Blocked,
            _ => TicketState::Pending,
        }
    }
}

/// One run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunRow {
    /// The run id.
    pub id: String,
    /// The plan file as given.
    pub plan_path: String,
    /// A digest of the plan's content; a second `run` of the same plan continues this run.
    pub plan_digest: String,
    /// The base branch.
    pub base: String,
    /// When it started.
    pub started_at: String,
    /// When it last finished.
    pub finished_at: Option<String>,
    /// `running`, `finished` or `interrupted`.
    pub status: String,
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
    /// Attempts started so far.
    pub attempts: u32,
    /// The last failure, if any.
    pub failure: Option<Failure>,
    /// The commit on the base branch (once merging or merged).
    pub merge_commit: Option<String>,
}

/// One attempt of a ticket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AttemptRow {
    /// 1-based attempt number.
    pub n: u32,
    /// The last phase reached (`agent`, `commit`, `verify`, `gates`, `done`, ...).
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
}

/// The store; clones share one connection.
#[derive(Clone)]
pub struct Store {
    conn: Arc<Mutex<Connection>>,
}

type Result<T> = std::result::Result<T, rusqlite::Error>;

fn failure_from(
    kind: Option<String>,
    message: Option<String>,
    evidence: Option<String>,
) -> Option<Failure> {
    let kind = FailureKind::from_name(&kind?)?;
    Some(
        Failure::new(kind, message.unwrap_or_default()).with_evidence(evidence.unwrap_or_default()),
    )
}

impl Store {
    /// Opens (creating if needed) the store at `path`.
    pub fn open(path: &Path) -> Result<Store> {
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.execute_batch(SCHEMA)?;
        Ok(Store {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    fn with<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        f(&conn)
    }

    /// The newest run of the plan with this digest.
    pub fn run_for_digest(&self, digest: &str) -> Result<Option<RunRow>> {
        self.query_run("WHERE plan_digest = ?1 ORDER BY rowid DESC LIMIT 1", digest)
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
        let sql = format!(
            "SELECT id, plan_path, plan_digest, base, started_at, finished_at, status FROM runs {clause}"
        );
        self.with(|c| {
            c.query_row(&sql, [arg], |r| {
                Ok(RunRow {
                    id: r.get(0)?,
                    plan_path: r.get(1)?,
                    plan_digest: r.get(2)?,
                    base: r.get(3)?,
                    started_at: r.get(4)?,
                    finished_at: r.get(5)?,
                    status: r.get(6)?,
                })
            })
            .optional()
        })
    }

    /// Records a new run.
    pub fn create_run(&self, run: &RunRow) -> Result<()> {
        self.with(|c| {
            c.execute(
                "INSERT INTO runs (id, plan_path, plan_digest, base, started_at, status) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![run.id, run.plan_path, run.plan_digest, run.base, run.started_at, run.status],
            )
            .map(drop)
        })
    }

    /// Sets a run's status (`running`, `finished`, `interrupted`).
    pub fn set_run_status(&self, run: &str, status: &str, at: Option<&str>) -> Result<()> {
        self.with(|c| {
            c.execute(
                "UPDATE runs SET status = ?2, finished_at = ?3 WHERE id = ?1",
                params![run, status, at],
            )
            .map(drop)
        })
    }

    /// Adds a ticket to a run unless it is there already.
    pub fn ensure_ticket(&self, run: &str, id: &str, position: usize, title: &str) -> Result<()> {
        self.with(|c| {
            c.execute(
                "INSERT OR IGNORE INTO tickets (run_id, ticket_id, position, title, state) VALUES (?1, ?2, ?3, ?4, 'pending')",
                params![run, id, position as i64, title],
            )
            .map(drop)
        })
    }

    /// The tickets of a run, in plan order.
    pub fn tickets(&self, run: &str) -> Result<Vec<TicketRow>> {
        self.with(|c| {
            let mut st = c.prepare(
                "SELECT ticket_id, title, state, attempts, failure_kind, failure_message, merge_commit
                 FROM tickets WHERE run_id = ?1 ORDER BY position",
            )?;
            let rows = st.query_map([run], |r| {
                Ok(TicketRow {
                    id: r.get(0)?,
                    title: r.get(1)?,
                    state: TicketState::parse(&r.get::<_, String>(2)?),
                    attempts: r.get(3)?,
                    failure: failure_from(r.get(4)?, r.get(5)?, None),
                    merge_commit: r.get(6)?,
                })
            })?;
            rows.collect()
        })
    }

    /// Sets a ticket's state and last failure.
    pub fn set_ticket(
        &self,
        run: &str,
        id: &str,
        state: TicketState,
        failure: Option<&Failure>,
    ) -> Result<()> {
        self.with(|c| {
            c.execute(
                "UPDATE tickets SET state = ?3, failure_kind = ?4, failure_message = ?5 WHERE run_id = ?1 AND ticket_id = ?2",
                params![run, id, state.as_str(), failure.map(|f| f.kind.as_str()), failure.map(|f| f.message.as_str())],
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
        // One transaction: the attempt row and the ticket's count agree
        // even when the process stops between the two writes.
        self.with(|c| {
            let tx = c.unchecked_transaction()?;
            tx.execute(
                "INSERT OR REPLACE INTO attempts (run_id, ticket_id, n, phase, base_commit, started_at) VALUES (?1, ?2, ?3, 'starting', ?4, ?5)",
                params![run, id, n, base_commit, at],
            )?;
            tx.execute(
                "UPDATE tickets SET state = 'running', attempts = ?3 WHERE run_id = ?1 AND ticket_id = ?2",
                params![run, id, n],
            )?;
            tx.commit()
        })
    }

    /// Records the phase an attempt is entering.
    pub fn set_phase(&self, run: &str, id: &str, n: u32, phase: &str) -> Result<()> {
        self.with(|c| {
            c.execute(
                "UPDATE attempts SET phase = ?4 WHERE run_id = ?1 AND ticket_id = ?2 AND n = ?3",
                params![run, id, n, phase],
            )
            .map(drop)
        })
    }

    /// Records an attempt's candidate commit.
    pub fn set_candidate(&self, run: &str, id: &str, n: u32, commit: &str) -> Result<()> {
        self.with(|c| {
            c.execute(
                "UPDATE attempts SET candidate = ?4 WHERE run_id = ?1 AND ticket_id = ?2 AND n = ?3",
                params![run, id, n, commit],
            )
            .map(drop)
        })
    }

    /// Records how an attempt ended (`failure` is None when it passed).
    pub fn finish_attempt(
        &self,
        run: &str,
        id: &str,
        n: u32,
        failure: Option<&Failure>,
        at: &str,
    ) -> Result<()> {
        self.with(|c| {
            c.execute(
                "UPDATE attempts SET phase = ?4, finished_at = ?5, failure_kind = ?6, failure_message = ?7, evidence = ?8
                 WHERE run_id = ?1 AND ticket_id = ?2 AND n = ?3",
                params![
                    run, id, n,
                    if failure.is_some() { "rejected" } else { "passed" },
                    at,
                    failure.map(|f| f.kind.as_str()),
                    failure.map(|f| f.message.as_str()),
                    failure.map(|f| f.evidence.as_str()),
                ],
            )
            .map(drop)
        })
    }

    /// Records the commit a ticket is about to land as (before the ref moves).
    pub fn begin_merge(&self, run: &str, id: &str, commit: &str) -> Result<()> {
        self.with(|c| {
            c.execute(
                "UPDATE tickets SET state = 'merging', merge_commit = ?3 WHERE run_id = ?1 AND ticket_id = ?2",
                params![run, id, commit],
            )
            .map(drop)
        })
    }

    /// Records that a ticket is on the base branch as `commit`.
    pub fn mark_merged(&self, run: &str, id: &str, commit: &str) -> Result<()> {
        self.with(|c| {
            c.execute(
                "UPDATE tickets SET state = 'merged', merge_commit = ?3, failure_kind = NULL, failure_message = NULL
                 WHERE run_id = ?1 AND ticket_id = ?2",
                params![run, id, commit],
            )
            .map(drop)
        })
    }

    /// The attempts of a ticket, oldest first.
    pub fn attempts(&self, run: &str, id: &str) -> Result<Vec<AttemptRow>> {
        self.with(|c| {
            let mut st = c.prepare(
                "SELECT n, phase, base_commit, candidate, started_at, finished_at, failure_kind, failure_message, evidence
                 FROM attempts WHERE run_id = ?1 AND ticket_id = ?2 ORDER BY n",
            )?;
            let rows = st.query_map([run, id], |r| {
                Ok(AttemptRow {
                    n: r.get(0)?,
                    phase: r.get(1)?,
                    base_commit: r.get(2)?,
                    candidate: r.get(3)?,
                    started_at: r.get(4)?,
                    finished_at: r.get(5)?,
                    failure: failure_from(r.get(6)?, r.get(7)?, r.get(8)?),
                })
            })?;
            rows.collect()
        })
    }

    /// Appends an event.
    pub fn record_event(
        &self,
        run: &str,
        at: &str,
        ticket: Option<&str>,
        kind: &str,
        data: &str,
    ) -> Result<()> {
        self.with(|c| {
            c.execute(
                "INSERT INTO events (run_id, at, ticket_id, kind, data) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![run, at, ticket, kind, data],
            )
            .map(drop)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transitions_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("state.db")).unwrap();
        let run = RunRow {
            id: "r1".into(),
            plan_path: "plan.json".into(),
            plan_digest: "d".into(),
            base: "main".into(),
            started_at: "t0".into(),
            finished_at: None,
            status: "running".into(),
        };
        store.create_run(&run).unwrap();
        store.ensure_ticket("r1", "T1", 0, "one").unwrap();
        store.ensure_ticket("r1", "T1", 0, "one").unwrap();
        store.start_attempt("r1", "T1", 1, "abc", "t1").unwrap();
        let f = Failure::new(FailureKind::ScopeViolation, "x is outside").with_evidence("x");
        store.finish_attempt("r1", "T1", 1, Some(&f), "t2").unwrap();
        store
            .set_ticket("r1", "T1", TicketState::Pending, Some(&f))
            .unwrap();
        let t = &store.tickets("r1").unwrap()[0];
        assert_eq!((t.state, t.attempts), (TicketState::Pending, 1));
        assert_eq!(
            t.failure.as_ref().unwrap().kind,
            FailureKind::ScopeViolation
        );
        store.begin_merge("r1", "T1", "def").unwrap();
        store.mark_merged("r1", "T1", "def").unwrap();
        let t = &store.tickets("r1").unwrap()[0];
        assert_eq!((t.state, t.failure.clone()), (TicketState::Merged, None));
        assert_eq!(
            store.attempts("r1", "T1").unwrap()[0]
                .failure
                .as_ref()
                .unwrap()
                .evidence,
            "x"
        );
        assert_eq!(store.run_for_digest("d").unwrap().unwrap().id, "r1");
        assert_eq!(store.latest_run().unwrap().unwrap().id, "r1");
    }
}
