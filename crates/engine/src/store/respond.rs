//! `planwright respond`'s records: its rounds on each delivered pull
//! request and what each answered (docs/forge.md, "Responding to reviews").
//!
//! A round is written with everything it answers in one transaction before
//! anything runs, so a comment is never answered twice; its state then
//! moves `started` -> `ran` (the run of its ticket ended) -> `replied`
//! (its one reply is posted). A round found short of `replied` is resumed
//! from where it stopped.

use super::{Result, Store};
use rusqlite::{params, OptionalExtension};

/// How far a round got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoundState {
    /// Recorded; its ticket's run has not ended.
    Started,
    /// Its ticket's run ended; its reply is not posted yet.
    Ran,
    /// Its reply is posted: the round is over.
    Replied,
}

impl RoundState {
    fn name(self) -> &'static str {
        match self {
            RoundState::Started => "started",
            RoundState::Ran => "ran",
            RoundState::Replied => "replied",
        }
    }

    fn parse(s: &str) -> RoundState {
        match s {
            "started" => RoundState::Started,
            "ran" => RoundState::Ran,
            _ => RoundState::Replied,
        }
    }
}

/// One round of `respond` on one pull request.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundRow {
    /// The pull request's number.
    pub pull: u64,
    /// 1-based, per pull request.
    pub round: u32,
    /// The ticket it ran; `None` for a round that ran nothing (a reply
    /// alone: an unknown ticket named, the limit reached).
    pub ticket: Option<String>,
    /// How far it got.
    pub state: RoundState,
    /// The forge's text it gave the ticket's charter (or the reply of a
    /// round that ran nothing).
    pub evidence: String,
    /// What the run had spent (USD) when the round started.
    pub spent_before: f64,
    /// What the round spent, once it ran.
    pub cost_usd: Option<f64>,
    /// The ticket's merged commit when the round started, to tell what
    /// the round changed.
    pub merged_before: Option<String>,
}

fn round_row(r: &rusqlite::Row) -> rusqlite::Result<RoundRow> {
    let state: String = r.get(3)?;
    Ok(RoundRow {
        pull: r.get::<_, i64>(0)? as u64,
        round: r.get::<_, i64>(1)? as u32,
        ticket: r.get(2)?,
        state: RoundState::parse(&state),
        evidence: r.get(4)?,
        spent_before: r.get(5)?,
        cost_usd: r.get(6)?,
        merged_before: r.get(7)?,
    })
}

const ROUND_COLUMNS: &str =
    "pull, round, ticket, state, evidence, spent_before, cost_usd, merged_before";

impl Store {
    /// Every round of `run` on pull request `pull`, oldest first.
    pub fn rounds(&self, run: &str, pull: u64) -> Result<Vec<RoundRow>> {
        let sql = format!(
            "SELECT {ROUND_COLUMNS} FROM respond_rounds WHERE run_id = ?1 AND pull = ?2 ORDER BY round"
        );
        self.with(|c| {
            c.prepare(&sql)?
                .query_map(params![run, pull as i64], round_row)?
                .collect()
        })
    }

    /// The keys of everything answered on pull request `pull` of `run`
    /// (`comment:ID`, `review:ID`, `check:NAME@SHA`).
    pub fn answered(&self, run: &str, pull: u64) -> Result<Vec<String>> {
        self.with(|c| {
            c.prepare("SELECT key FROM respond_answered WHERE run_id = ?1 AND pull = ?2")?
                .query_map(params![run, pull as i64], |r| r.get(0))?
                .collect()
        })
    }

    /// How many things round `round` of pull request `pull` answered.
    pub fn answered_in(&self, run: &str, pull: u64, round: u32) -> Result<usize> {
        self.with(|c| {
            c.query_row(
                "SELECT COUNT(*) FROM respond_answered WHERE run_id = ?1 AND pull = ?2 AND round = ?3",
                params![run, pull as i64, round as i64],
                |r| r.get::<_, i64>(0),
            )
        })
        .map(|n| n as usize)
    }

    /// Records a new round and what it answers, in one transaction.
    pub fn begin_round(&self, run: &str, row: &RoundRow, keys: &[String]) -> Result<()> {
        self.with(|c| {
            let tx = c.unchecked_transaction()?;
            tx.execute(
                &format!("INSERT INTO respond_rounds (run_id, {ROUND_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"),
                params![
                    run,
                    row.pull as i64,
                    row.round as i64,
                    row.ticket,
                    row.state.name(),
                    row.evidence,
                    row.spent_before,
                    row.cost_usd,
                    row.merged_before
                ],
            )?;
            for key in keys {
                tx.execute(
                    "INSERT OR IGNORE INTO respond_answered (run_id, pull, key, round) VALUES (?1, ?2, ?3, ?4)",
                    params![run, row.pull as i64, key, row.round as i64],
                )?;
            }
            tx.commit()
        })
    }

    /// Moves a round on, with what it spent once it ran.
    pub fn round_reached(
        &self,
        run: &str,
        pull: u64,
        round: u32,
        state: RoundState,
        cost_usd: Option<f64>,
    ) -> Result<()> {
        self.with(|c| {
            c.execute(
                "UPDATE respond_rounds SET state = ?4, cost_usd = COALESCE(?5, cost_usd)
                 WHERE run_id = ?1 AND pull = ?2 AND round = ?3",
                params![run, pull as i64, round as i64, state.name(), cost_usd],
            )
            .map(|_| ())
        })
    }

    /// The forge's text of the rounds of `run` that are running `ticket`
    /// (started, not yet ran), oldest first: what its charter shows.
    pub fn round_feedback(&self, run: &str, ticket: &str) -> Result<Vec<String>> {
        self.with(|c| {
            c.prepare(
                "SELECT evidence FROM respond_rounds
                 WHERE run_id = ?1 AND ticket = ?2 AND state = 'started' ORDER BY pull, round",
            )?
            .query_map(params![run, ticket], |r| r.get(0))?
            .collect()
        })
    }

    /// The last round of `run` on `pull`, if any.
    pub fn last_round(&self, run: &str, pull: u64) -> Result<Option<RoundRow>> {
        let sql = format!(
            "SELECT {ROUND_COLUMNS} FROM respond_rounds WHERE run_id = ?1 AND pull = ?2 ORDER BY round DESC LIMIT 1"
        );
        self.with(|c| {
            c.query_row(&sql, params![run, pull as i64], round_row)
                .optional()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_and_what_it_answered_are_kept_and_its_feedback_ends_when_it_ran() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("state.db")).unwrap();
        let row = RoundRow {
            pull: 7,
            round: 1,
            ticket: Some("B".into()),
            state: RoundState::Started,
            evidence: "fix the typo".into(),
            spent_before: 1.5,
            cost_usd: None,
            merged_before: Some("abc".into()),
        };
        let keys = vec!["comment:1".to_string(), "review:2".to_string()];
        store.begin_round("r1", &row, &keys).unwrap();
        assert_eq!(store.answered("r1", 7).unwrap().len(), 2);
        assert!(store.answered("r1", 8).unwrap().is_empty());
        assert_eq!(store.round_feedback("r1", "B").unwrap(), ["fix the typo"]);
        store
            .round_reached("r1", 7, 1, RoundState::Ran, Some(0.25))
            .unwrap();
        assert!(store.round_feedback("r1", "B").unwrap().is_empty());
        let last = store.last_round("r1", 7).unwrap().unwrap();
        assert_eq!((last.state, last.cost_usd), (RoundState::Ran, Some(0.25)));
        assert_eq!(store.rounds("r1", 7).unwrap(), [last]);
    }
}
