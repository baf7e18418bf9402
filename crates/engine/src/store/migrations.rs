//! The schema and its migrations: a store carries its version
//! (`PRAGMA user_version`) and is brought forward one migration at a time.

use super::{Result, StoreError};
use rusqlite::Connection;

/// Migration `i` brings a store from version `i` to `i + 1`. Version 1 is
/// the schema of stores made before versioning (which report version 0).
pub(super) const MIGRATIONS: [&str; 10] = [
    "
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY, plan_path TEXT NOT NULL, plan_digest TEXT NOT NULL,
    base TEXT NOT NULL, started_at TEXT NOT NULL, finished_at TEXT, status TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tickets (
    run_id TEXT NOT NULL, ticket_id TEXT NOT NULL, position INTEGER NOT NULL,
    title TEXT NOT NULL, state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
    failure_kind TEXT, failure_message TEXT, merge_commit TEXT,
    PRIMARY KEY (run_id, ticket_id));
CREATE TABLE IF NOT EXISTS attempts (
    run_id TEXT NOT NULL, ticket_id TEXT NOT NULL, n INTEGER NOT NULL, phase TEXT NOT NULL,
    base_commit TEXT NOT NULL, candidate TEXT, started_at TEXT NOT NULL, finished_at TEXT,
    failure_kind TEXT, failure_message TEXT, evidence TEXT,
    PRIMARY KEY (run_id, ticket_id, n));
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, at TEXT NOT NULL,
    ticket_id TEXT, kind TEXT NOT NULL, data TEXT NOT NULL);
",
    "
ALTER TABLE runs DROP COLUMN plan_digest;
ALTER TABLE runs ADD COLUMN fresh INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tickets RENAME COLUMN attempts TO attempt_count;
ALTER TABLE tickets ADD COLUMN failure_evidence TEXT;
ALTER TABLE tickets ADD COLUMN digest TEXT;
ALTER TABLE tickets ADD COLUMN rerun_of TEXT;
ALTER TABLE tickets ADD COLUMN candidate TEXT;
ALTER TABLE tickets ADD COLUMN verified_on TEXT;
ALTER TABLE attempts ADD COLUMN agent_outcome TEXT;
ALTER TABLE attempts ADD COLUMN model TEXT;
ALTER TABLE attempts ADD COLUMN input_tokens INTEGER;
ALTER TABLE attempts ADD COLUMN output_tokens INTEGER;
ALTER TABLE attempts ADD COLUMN cache_read_tokens INTEGER;
ALTER TABLE attempts ADD COLUMN cache_write_tokens INTEGER;
ALTER TABLE attempts ADD COLUMN cost REAL;
ALTER TABLE attempts ADD COLUMN cost_source TEXT;
ALTER TABLE attempts ADD COLUMN final_message TEXT;
ALTER TABLE attempts ADD COLUMN session_id TEXT;
ALTER TABLE events ADD COLUMN seq INTEGER;
ALTER TABLE events ADD COLUMN at_ms INTEGER;
",
    // A pool's rate limit is the account's, not a run's: pauses are kept
    // across runs and invocations.
    "
CREATE TABLE pool_pauses (
    pool TEXT PRIMARY KEY, until_unix INTEGER NOT NULL, strikes INTEGER NOT NULL);
",
    // The files that decide a run (its plan and configuration), as
    // `run_inputs::record` writes them.
    "
ALTER TABLE runs ADD COLUMN inputs TEXT;
",
    // The plan's dependency graph as the run last started (a
    // `run::graph::RunGraph`), so views draw it from any folder without
    // re-reading the plan file by the path typed at `run`.
    "
ALTER TABLE runs ADD COLUMN graph TEXT;
",
    // Merged trees whose gates passed in a run, by the gates they passed:
    // written before the target moves, so a resumed run lands a stack
    // already verified without running its gates again.
    "
CREATE TABLE passed_trees (
    run TEXT NOT NULL, tree TEXT NOT NULL, gates TEXT NOT NULL,
    PRIMARY KEY (run, tree, gates));
",
    // Whose changes besides the ticket's were in the tree a failure's
    // evidence came from (`Failure::evidence_from`), for the charter.
    "
ALTER TABLE tickets ADD COLUMN failure_evidence_from TEXT;
ALTER TABLE attempts ADD COLUMN evidence_from TEXT;
",
    // The plan file a run is of, as a canonical path: a run continues
    // only for its own plan (NULL: recorded before, any plan).
    "
ALTER TABLE runs ADD COLUMN plan_key TEXT;
",
    // `planwright respond`: each round on a delivered pull request (the
    // ticket it ran, the forge's text it was given, how far it got, what
    // it spent) and every comment, review and failed check it answered,
    // so that no round repeats and a round cut short resumes.
    "
CREATE TABLE respond_rounds (
    run_id TEXT NOT NULL, pull INTEGER NOT NULL, round INTEGER NOT NULL,
    ticket TEXT, state TEXT NOT NULL, evidence TEXT NOT NULL,
    spent_before REAL NOT NULL, cost_usd REAL, merged_before TEXT,
    PRIMARY KEY (run_id, pull, round));
CREATE TABLE respond_answered (
    run_id TEXT NOT NULL, pull INTEGER NOT NULL, key TEXT NOT NULL,
    round INTEGER NOT NULL,
    PRIMARY KEY (run_id, pull, key));
",
    // A ticket the plan no longer has is marked, not deleted: the run's
    // views keep it, with its attempts, and re-adding it brings it back.
    "
ALTER TABLE tickets ADD COLUMN removed INTEGER NOT NULL DEFAULT 0;
",
];

/// The schema version this build writes.
pub(super) const SCHEMA_VERSION: usize = MIGRATIONS.len();

/// Brings the schema to [`SCHEMA_VERSION`], one migration per transaction.
pub(super) fn migrate(conn: &Connection) -> Result<()> {
    let found: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let found = found as usize;
    if found > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            found,
            known: SCHEMA_VERSION,
        });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(found) {
        let tx = conn.unchecked_transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        tx.commit()?;
    }
    Ok(())
}
